"""What approvers and callers are told about an approval, in people's words.

Devices are named as the approver knows them (Home Assistant's names), each change says the
command or the state asked for, and every item of a batch is said. The client's name is the
client's own claim: it is cleaned of markup, links and control characters, shortened, and
always shown quoted as the name the app gave itself, never as the gateway's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import re
from typing import Any, Final
import unicodedata

from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

# The most of a client's own name an approver is shown.
CLIENT_NAME_CHARS: Final = 40
# Links and what looks like one (scheme://…, www.…, a bare domain with a path).
_LINK: Final = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*://\S*|www\.\S*|\S+\.[a-z]{2,}/\S*)")
# Markdown and HTML punctuation: emphasis, headings, links, images, code, quotes, tables.
_MARKUP: Final = re.compile(r"[*`#>\[\]()!|~<>{}\\]|_{2,}")
_SPACES: Final = re.compile(r"\s+")


def client_label(name: str | None) -> str:
    """The client's self-chosen name as an approver sees it: quoted, marked as its own."""
    clean = clean_client_name(name)
    if not clean:
        return "an app that gave no name"
    return f"“{clean}” (the app's own name for itself)"


def clean_client_name(name: str | None) -> str:
    """The name without links, markup or control characters, on one line, shortened."""
    if not name:
        return ""
    text = "".join(
        " " if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") else char for char in name
    )
    text = _LINK.sub(" ", text)
    text = _MARKUP.sub(" ", text).replace("“", "").replace("”", "").replace('"', "")
    text = _SPACES.sub(" ", text).strip()
    if len(text) > CLIENT_NAME_CHARS:
        text = text[: CLIENT_NAME_CHARS - 1].rstrip() + "…"
    return text


def entity_name(hass: HomeAssistant, entity_id: str) -> str:
    """An entity as people know it in Home Assistant: its name, else its id."""
    state = hass.states.get(entity_id)
    if state is None:
        return entity_id
    return str(state.attributes.get(ATTR_FRIENDLY_NAME) or entity_id)


def describe_update(hass: HomeAssistant, update: Mapping[str, Any]) -> str:
    """One set_state update: "Front Door → unlocked", with any other field it sets."""
    entity_id: str = update["entity_id"]
    name = entity_name(hass, entity_id)
    change = ", ".join(
        f"{key}={value}"
        for key, value in update.items()
        if key not in ("entity_id", "code", "state", "name", "home") and value != ""
    )
    wanted = update.get("state")
    text = f"{name} → {wanted}" if wanted else name
    return f"{text} ({change})" if change else text


def prompt_message(
    summary: str, user_name: str, client: str, seconds: int, details: str = ""
) -> str:
    """What the person at the AI app is asked; details (an automation's exact config) follow
    the summary."""
    between = f"\n\n{details}\n\n" if details else " "
    return (
        f"Home Assistant asks you to approve: {summary}.{between}Requested by {user_name} "
        f"through {client}. Without an answer within {seconds} s it is declined."
    )


@dataclass(frozen=True, slots=True)
class GateRefusal:
    """Why a gated call did not run: a message for the AI, a code and details."""

    message: str
    code: str
    details: dict[str, Any]


def refusal(
    outcome: str, summary: str, details: dict[str, Any], deadline: Any, by: str | None
) -> GateRefusal:
    """Why a gated call did not run, by the approval's outcome (pending, declined, used,
    expired)."""
    if outcome == "pending":
        return pending_refusal(summary, details, deadline)
    if outcome == "declined":
        return declined_refusal(summary, details, by)
    if outcome == "used":
        return used_refusal(summary, details)
    return expired_refusal(summary, details)


def pending_refusal(summary: str, details: dict[str, Any], deadline: Any) -> GateRefusal:
    """The call waits for a person."""
    details["expires_at"] = dt_util.as_local(deadline).isoformat(timespec="seconds")
    return GateRefusal(
        f"Waiting for a person to approve: {summary}. Nothing has run yet. Tell "
        "the user it needs their approval (on their phone's Home Assistant app, or in "
        "Home Assistant under Settings → Repairs), then call the same tool again with the "
        "same arguments: it runs once approved, before the approval expires.",
        "approval_pending",
        details,
    )


def declined_refusal(summary: str, details: dict[str, Any], by: str | None) -> GateRefusal:
    """A person declined."""
    details["declined_by"] = by
    return GateRefusal(
        f"{by or 'A person'} declined: {summary}. Nothing was done. Do not try again unless "
        "the user asks for it.",
        "approval_declined",
        details,
    )


def used_refusal(summary: str, details: dict[str, Any]) -> GateRefusal:
    """The approval ran an identical call already."""
    return GateRefusal(
        f"The approval of {summary} was used by an identical call already; nothing more was "
        "done. A new run needs a new approval.",
        "approval_used",
        details,
    )


def expired_refusal(summary: str, details: dict[str, Any]) -> GateRefusal:
    """Nobody answered in time."""
    return GateRefusal(
        f"Nobody approved {summary} in time, so it was declined. Nothing was done.",
        "approval_expired",
        details,
    )


def too_many_refusal(open_count: int, cap: int) -> GateRefusal:
    """The caller has as many approvals open as it may."""
    return GateRefusal(
        f"{open_count} approvals of this user already wait for a person (at most {cap} at "
        "once); nothing was done and no one was asked. Wait for those to be decided or to "
        "expire, then try again.",
        "approval_busy",
        {"open": open_count, "limit": cap},
    )
