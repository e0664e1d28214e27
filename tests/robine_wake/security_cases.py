"""The Robine Wake clock's rows of the security matrix (tests/security/), which collects them
per registered backend."""

from __future__ import annotations

from typing import Any

# One read every reading user may make, as the gateway tool's arguments.
READ: dict[str, Any] = {"tool": "get_state", "args": {}}
# An integration action that reads the backend (name, data), if the backend has one.
ACTION_READ: tuple[str, dict[str, Any]] | None = (
    "preview_alarm",
    {"label": "Big", "time": "07:00"},
)


def refusal(caller: str, tool: str) -> str | None:
    """The error code a call of `tool` with empty arguments gives `caller` beyond what its
    tier and the tool's flags decide (None: nothing more)."""
    # Every clock tool but the sound list reads or changes the clock, of which the policy
    # user may use nothing.
    if caller == "policy" and tool != "list_sounds":
        return "forbidden"
    return None
