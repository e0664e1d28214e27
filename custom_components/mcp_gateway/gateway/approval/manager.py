"""A person approves sensitive calls before they run: the approval core.

The model supplies every argument of a call, `confirm: true` included, so a prompt injection
passes every check a model can answer. Unlocking, disarming, opening a garage and destructive
backend tools therefore wait for a person: in the AI app (MCP elicitation), on an approver's
phone (the mobile app's actionable notifications) or in Home Assistant's UI (a repair issue),
whichever answers first. One approval runs one call once: it is bound to the user, the tool
and the exact arguments, consumed on use, and lives in memory only, so a restart forgets it
and nothing runs. A time limit ends in "expired", which counts as declined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
import hashlib
import json
import logging
import secrets
from typing import TYPE_CHECKING, Any, Final, Protocol

from homeassistant.auth.models import User
from homeassistant.const import ATTR_DEVICE_CLASS, EVENT_HOMEASSISTANT_STOP
from homeassistant.core import CALLBACK_TYPE, Context, Event, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey

from ...backends.base import ToolClass, ToolTier
from ...core.const import DOMAIN
from ...core.settings import GatewaySettings, gateway_settings
from ...mcp.elicitation import ElicitationUnsupportedError
from ...mcp.types import ElicitRequestedSchema
from ...permissions.policy import can_control_entity, may_use_tier, user_display_name
from ..finding.selection import candidate_entities, readable_entities
from .in_app import in_app_allowed

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

_LOGGER = logging.getLogger(__name__)

DATA_APPROVALS: HassKey[ApprovalManager] = HassKey(f"{DOMAIN}_approvals")

# Fired when a call asks for approval and when it is decided; logbook.py describes it.
EVENT_APPROVAL: Final = f"{DOMAIN}_approval"
ATTR_APPROVAL_ID: Final = "approval_id"
ATTR_OUTCOME: Final = "outcome"
ATTR_DECIDED_BY: Final = "decided_by"
ATTR_CHANNEL: Final = "channel"

# How long a call without a prompt in the client holds its request open before it answers
# "waiting for approval": well within the 60 s most MCP clients give a request.
HOLD_SECONDS: Final = 20.0

# Covers that let people in: opening them is sensitive.
SENSITIVE_COVER_CLASSES: Final = frozenset({"garage", "gate", "door"})
# Backend tools that change these entities need approval, unless the call's command is safe.
SENSITIVE_DOMAINS: Final = frozenset({"lock", "alarm_control_panel"})
# Commands (Hubitat's device commands, HSM arm commands) that only make a home safer.
_SAFE_COMMANDS: Final = frozenset({"lock", "close", "armaway", "armhome", "armnight", "refresh"})


class Outcome(StrEnum):
    """Where one approval stands."""

    PENDING = "pending"
    APPROVED = "approved"
    DECLINED = "declined"
    EXPIRED = "expired"  # the time limit passed: as declined, never run
    USED = "used"  # approved, and consumed by the one call it was for


class Channel(StrEnum):
    """Where a person answered."""

    CLIENT = "client"  # MCP elicitation, in the AI app
    PHONE = "phone"  # the mobile app's actionable notification
    UI = "ui"  # Home Assistant's own UI (the repair issue)


@dataclass(slots=True)
class Pending:
    """One call waiting for, or holding, a person's approval."""

    id: str
    key: str
    user_id: str
    user_name: str
    client_name: str
    tool: str
    summary: str
    entity_ids: tuple[str, ...]
    tier: ToolTier
    created: datetime
    deadline: datetime
    outcome: Outcome = Outcome.PENDING
    decided_by: str | None = None
    decided_by_name: str | None = None
    channel: Channel | None = None
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    # What the approvers are shown after the summary (an automation's exact config).
    details: str = ""
    _expiry: CALLBACK_TYPE | None = None

    @property
    def open(self) -> bool:
        """Still waiting for a person."""
        return self.outcome is Outcome.PENDING


class ApprovalChannel(Protocol):
    """A way to reach approvers (phone, UI): told when a request opens and when it ends."""

    async def async_open(self, pending: Pending) -> None:
        """Ask the approvers."""

    async def async_close(self, pending: Pending) -> None:
        """Withdraw the question (decided, expired or used)."""


# The client's prompt for one approval: True approve, False decline, None no answer.
type ClientPrompt = Callable[[Pending], Awaitable[bool | None]]


def call_key(user_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """What binds an approval to one call: the user, the tool and the exact arguments."""
    canonical = json.dumps(
        [user_id, tool, arguments], sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def approval_manager(hass: HomeAssistant) -> ApprovalManager:
    """The one manager of this Home Assistant run (in memory: a restart forgets everything)."""
    if (manager := hass.data.get(DATA_APPROVALS)) is None:
        manager = hass.data[DATA_APPROVALS] = ApprovalManager(hass)
        hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, manager.async_clear)
    return manager


class ApprovalManager:
    """Open approvals, their decisions, and the channels that ask people."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        self._by_id: dict[str, Pending] = {}
        self.channels: list[ApprovalChannel] = []
        # Refresh tokens that have called the gateway: an AI app holds one, and whoever holds
        # it (a model making its own HTTP calls, say) must not approve in a person's place.
        self._caller_tokens: set[str] = set()

    # --- who calls ---------------------------------------------------------------------------

    def note_caller_token(self, token_id: str | None) -> None:
        """Remember a refresh token that called the gateway."""
        if token_id:
            self._caller_tokens.add(token_id)

    def is_caller_token(self, token_id: str) -> bool:
        """Whether this refresh token has called the gateway since Home Assistant started."""
        return token_id in self._caller_tokens

    def caller_tokens(self) -> frozenset[str]:
        """The refresh tokens that have called the gateway since Home Assistant started."""
        return frozenset(self._caller_tokens)

    # --- requests ----------------------------------------------------------------------------

    def get(self, approval_id: str) -> Pending | None:
        """An approval by its id (None once it has ended)."""
        return self._by_id.get(approval_id)

    def find(self, user_id: str, key: str) -> Pending | None:
        """The approval of exactly this call: open, approved and unused, or ended and not yet
        told to a caller."""
        self._prune()
        for pending in self._by_id.values():
            if pending.user_id == user_id and pending.key == key:
                return pending
        return None

    async def async_request(
        self,
        user: User,
        client_name: str | None,
        *,
        tool: str,
        arguments: Mapping[str, Any],
        summary: str,
        entity_ids: Sequence[str] = (),
        tier: ToolTier = ToolTier.CONTROL,
        details: str = "",
    ) -> Pending:
        """The live approval of this call, else a new one with its approvers asked."""
        key = call_key(user.id, tool, arguments)
        if (existing := self.find(user.id, key)) is not None:
            return existing
        timeout = gateway_settings(self.hass).approval_timeout
        now = dt_util.utcnow()
        pending = Pending(
            id=secrets.token_urlsafe(16),
            key=key,
            user_id=user.id,
            user_name=user_display_name(user),
            client_name=client_name or "unknown client",
            tool=tool,
            summary=summary,
            entity_ids=tuple(entity_ids),
            tier=tier,
            created=now,
            deadline=now + timedelta(seconds=timeout),
            details=details,
        )
        self._by_id[pending.id] = pending
        pending._expiry = async_call_later(self.hass, timeout, self._expire_cb(pending))
        self._fire(pending, Outcome.PENDING)
        for channel in self.channels:
            try:
                await channel.async_open(pending)
            except Exception:  # one broken channel must not keep the others from asking
                _LOGGER.exception("Could not ask for approval through %s", channel)
        return pending

    # --- decisions ---------------------------------------------------------------------------

    async def async_may_decide(self, pending: Pending, user: User | None, channel: Channel) -> bool:
        """Whether this user's answer through this channel counts.

        An approver must be one the settings name (none named: any active administrator)
        and may use the call's tier and control every entity it acts on. In the AI app only
        the caller answers (elicitation reaches them alone), and only as such an approver,
        for a request the settings allow there (in_app.py).
        """
        if user is None or not user.is_active or user.system_generated:
            return False
        settings = gateway_settings(self.hass)
        if channel is Channel.CLIENT and (
            user.id != pending.user_id
            or not in_app_allowed(settings, pending.tool, pending.entity_ids)
        ):
            return False
        if user.id not in await async_approver_ids(self.hass, settings):
            return False
        if not may_use_tier(user, pending.tier):
            return False
        return all(can_control_entity(user, entity_id) for entity_id in pending.entity_ids)

    async def async_decide(
        self, approval_id: str, approved: bool, *, user_id: str | None, channel: Channel
    ) -> bool:
        """Record a person's answer; False (and a warning in the log) when it does not count:
        an unknown or ended approval, or someone without the right to decide it."""
        pending = self._by_id.get(approval_id)
        if pending is None or not pending.open:
            _LOGGER.warning(
                "Ignored an approval answer through %s for %s: no such open approval",
                channel,
                "an unknown request" if pending is None else pending.summary,
            )
            return False
        user = None if user_id is None else await self.hass.auth.async_get_user(user_id)
        if not await self.async_may_decide(pending, user, channel):
            _LOGGER.warning(
                "Ignored an approval answer through %s for %s from %s, who may not approve it",
                channel,
                pending.summary,
                user_display_name(user) if user is not None else user_id or "nobody",
            )
            return False
        assert user is not None
        pending.decided_by = user.id
        pending.decided_by_name = user_display_name(user)
        pending.channel = channel
        if approved:
            pending.outcome = Outcome.APPROVED
            # An approval not used within another time limit ends unused.
            self._cancel_expiry(pending)
            timeout = gateway_settings(self.hass).approval_timeout
            pending.deadline = dt_util.utcnow() + timedelta(seconds=timeout)
            pending._expiry = async_call_later(self.hass, timeout, self._expire_cb(pending))
            self._fire(pending, Outcome.APPROVED)
            pending.decided.set()
            await self._close_channels(pending)
        else:
            await self._end(pending, Outcome.DECLINED)
        return True

    async def async_wait(self, pending: Pending, seconds: float) -> Outcome:
        """The outcome after at most `seconds` (PENDING if nobody answered yet)."""
        if pending.open:
            remaining = (pending.deadline - dt_util.utcnow()).total_seconds()
            try:
                async with asyncio.timeout(max(0.0, min(seconds, remaining))):
                    await pending.decided.wait()
            except TimeoutError:
                pass
        if pending.open and dt_util.utcnow() >= pending.deadline:
            await self._end(pending, Outcome.EXPIRED)
        return pending.outcome

    async def async_consume(self, pending: Pending) -> bool:
        """Turn an approval into the one run it allows; False if it is not approved (any more)."""
        if pending.outcome is not Outcome.APPROVED or dt_util.utcnow() >= pending.deadline:
            if pending.outcome is Outcome.APPROVED:
                await self._end(pending, Outcome.EXPIRED)
            return False
        pending.outcome = Outcome.USED
        self._cancel_expiry(pending)
        self._by_id.pop(pending.id, None)
        return True

    async def async_gate(
        self,
        ctx: RequestContext,
        user: User,
        *,
        tool: str,
        arguments: Mapping[str, Any],
        reason: ApprovalReason,
        tier: ToolTier,
    ) -> GateRefusal | None:
        """Wait for a person's answer to this call: None to run it (the approval is used up),
        else why not (declined, expired, still waiting, used by another call).

        A client that can prompt its user is asked at once, beside the phone and the UI, and
        the request is held until the time limit; otherwise the request is held for
        HOLD_SECONDS at most and then answers "waiting", and the same call made again finds
        the same approval.
        """
        pending = await self.async_request(
            user,
            ctx.client_name,
            tool=tool,
            arguments=arguments,
            summary=reason.summary,
            entity_ids=reason.entity_ids,
            tier=tier,
        )
        started = self.hass.loop.time()
        asking: asyncio.Task[None] | None = None
        if (
            pending.open
            and (prompt := client_prompt(ctx)) is not None
            # Asked only when the answer would count (in_app.py).
            and await self.async_may_decide(pending, user, Channel.CLIENT)
        ):
            asking = self.hass.async_create_task(
                self._ask_client(prompt, pending, user.id), eager_start=True
            )
        try:
            if asking is not None:
                # Held while the client shows the question; a client that cannot, or a
                # person who dismissed it, leaves the rest of the short hold to the others.
                await self._until_answer_or(pending, asking)
            hold = HOLD_SECONDS - (self.hass.loop.time() - started)
            outcome = await self.async_wait(pending, hold if pending.open else 0.0)
        finally:
            if asking is not None and not asking.done():
                asking.cancel()
        if outcome is Outcome.APPROVED:
            if await self.async_consume(pending):
                return None
            outcome = pending.outcome
        if outcome in (Outcome.DECLINED, Outcome.EXPIRED):
            # Told once; the same call made again asks again.
            self._by_id.pop(pending.id, None)
        return _refusal(pending, outcome)

    async def _until_answer_or(self, pending: Pending, asking: asyncio.Task[None]) -> None:
        """Wait until a decision, the client's prompt ends, or the time limit."""
        decided = self.hass.async_create_task(pending.decided.wait(), eager_start=True)
        remaining = max(0.0, (pending.deadline - dt_util.utcnow()).total_seconds())
        try:
            await asyncio.wait(
                (decided, asking), timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            decided.cancel()

    async def _ask_client(self, prompt: ClientPrompt, pending: Pending, user_id: str) -> None:
        try:
            answer = await prompt(pending)
        except Exception:  # the client's prompt failing leaves the other channels
            _LOGGER.debug("The client's approval prompt failed", exc_info=True)
            return
        if answer is not None:
            await self.async_decide(pending.id, answer, user_id=user_id, channel=Channel.CLIENT)

    def _prune(self) -> None:
        """Forget ended approvals nobody asked about within a time limit after their end."""
        cutoff = dt_util.utcnow() - timedelta(seconds=gateway_settings(self.hass).approval_timeout)
        for approval_id, pending in list(self._by_id.items()):
            if pending.outcome in (Outcome.DECLINED, Outcome.EXPIRED) and pending.deadline < cutoff:
                del self._by_id[approval_id]

    # --- internals ---------------------------------------------------------------------------

    def _expire_cb(self, pending: Pending) -> Callable[[datetime], None]:
        @callback
        def _expire(_now: datetime) -> None:
            pending._expiry = None
            if pending.outcome in (Outcome.PENDING, Outcome.APPROVED):
                self.hass.async_create_task(self._end(pending, Outcome.EXPIRED), eager_start=True)

        return _expire

    def _cancel_expiry(self, pending: Pending) -> None:
        if pending._expiry is not None:
            pending._expiry()
            pending._expiry = None

    async def _end(self, pending: Pending, outcome: Outcome) -> None:
        was_open = pending.open
        pending.outcome = outcome
        self._cancel_expiry(pending)
        self._fire(pending, outcome)
        pending.decided.set()
        # An ended approval stays until a caller learns its outcome, or a time limit passes
        # (_prune).
        if was_open:
            await self._close_channels(pending)

    async def _close_channels(self, pending: Pending) -> None:
        for channel in self.channels:
            try:
                await channel.async_close(pending)
            except Exception:
                _LOGGER.exception("Could not withdraw an approval request from %s", channel)

    @callback
    def _fire(self, pending: Pending, outcome: Outcome) -> None:
        """One logbook line: asked (by whom, through which client), then the decision."""
        data: dict[str, Any] = {
            ATTR_APPROVAL_ID: pending.id,
            ATTR_OUTCOME: str(outcome),
            "user_name": pending.user_name,
            "client_name": pending.client_name,
            "summary": pending.summary,
        }
        if pending.decided_by_name is not None and outcome is not Outcome.PENDING:
            data[ATTR_DECIDED_BY] = pending.decided_by_name
        if pending.channel is not None and outcome is not Outcome.PENDING:
            data[ATTR_CHANNEL] = str(pending.channel)
        if len(pending.entity_ids) == 1:
            data["entity_id"] = pending.entity_ids[0]
        user_id = pending.user_id if outcome is Outcome.PENDING else pending.decided_by
        self.hass.bus.async_fire(EVENT_APPROVAL, data, context=Context(user_id=user_id))

    @callback
    def async_clear(self, _event: Event | None = None) -> None:
        """Forget every approval (Home Assistant stops): nothing approved survives."""
        for pending in list(self._by_id.values()):
            self._cancel_expiry(pending)
            if pending.outcome in (Outcome.PENDING, Outcome.APPROVED):
                pending.outcome = Outcome.EXPIRED
                pending.decided.set()
        self._by_id.clear()


async def async_approver_ids(hass: HomeAssistant, settings: GatewaySettings) -> set[str]:
    """The users asked to approve: those the settings name, else every administrator."""
    users = await hass.auth.async_get_users()
    active = {user.id: user for user in users if user.is_active and not user.system_generated}
    if settings.approvers:
        return {user_id for user_id in settings.approvers if user_id in active}
    return {user.id for user in active.values() if user.is_admin}


@dataclass(frozen=True, slots=True)
class GateRefusal:
    """Why a gated call did not run: a message for the AI, a code and details."""

    message: str
    code: str
    details: dict[str, Any]


def _refusal(pending: Pending, outcome: Outcome) -> GateRefusal:
    details: dict[str, Any] = {"approval_id": pending.id, "approval": str(outcome)}
    if outcome is Outcome.PENDING:
        details["expires_at"] = dt_util.as_local(pending.deadline).isoformat(timespec="seconds")
        return GateRefusal(
            f"Waiting for a person to approve: {pending.summary}. Nothing has run yet. Tell "
            "the user it needs their approval (on their phone's Home Assistant app, or in "
            "Home Assistant under Settings → Repairs), then call the same tool again with the "
            "same arguments: it runs once approved, before the approval expires.",
            "approval_pending",
            details,
        )
    if outcome is Outcome.DECLINED:
        details["declined_by"] = pending.decided_by_name
        return GateRefusal(
            f"{pending.decided_by_name or 'A person'} declined: {pending.summary}. Nothing was "
            "done. Do not try again unless the user asks for it.",
            "approval_declined",
            details,
        )
    if outcome is Outcome.USED:
        return GateRefusal(
            f"The approval of {pending.summary} was used by an identical call already; "
            "nothing more was done. A new run needs a new approval.",
            "approval_used",
            details,
        )
    return GateRefusal(
        f"Nobody approved {pending.summary} in time, so it was declined. Nothing was done.",
        "approval_expired",
        details,
    )


# --- what needs approval ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ApprovalReason:
    """Why a call waits for a person, in one phrase for them."""

    summary: str
    entity_ids: tuple[str, ...] = ()


def approval_applies(settings: GatewaySettings, user: User) -> bool:
    """Approval is on, and this user's calls are not exempt from it."""
    return settings.approval and user.id not in settings.approval_exempt_users


def sensitive_update(
    hass: HomeAssistant, settings: GatewaySettings, update: Mapping[str, Any]
) -> bool:
    """Whether one set_state update needs a person: unlocking or opening a lock, disarming
    an alarm, opening a garage door, gate or door, or any change of an entity the settings
    name."""
    entity_id = update.get("entity_id")
    if not isinstance(entity_id, str):
        return False
    if entity_id in settings.approval_entities:
        return True
    domain = entity_id.split(".", 1)[0]
    wanted = update.get("state")
    if domain == "lock":
        return wanted in ("unlocked", "open")
    if domain == "alarm_control_panel":
        return wanted == "disarmed"
    if domain == "cover":
        state = hass.states.get(entity_id)
        device_class = state.attributes.get(ATTR_DEVICE_CLASS) if state is not None else None
        if device_class not in SENSITIVE_COVER_CLASSES:
            return False
        position = update.get("position")
        return wanted == "open" or (
            isinstance(position, int | float) and not isinstance(position, bool) and position > 0
        )
    return False


def sensitive_backend_call(
    hass: HomeAssistant,
    settings: GatewaySettings,
    *,
    name: str,
    tool_class: ToolClass,
    arguments: Mapping[str, Any],
    entity_ids: Iterable[str],
) -> bool:
    """Whether a backend tool call needs a person: destructive tools, tools the settings
    name, disarming Hubitat's HSM, and control of a lock, alarm panel or entity the settings
    name unless its command only makes the home safer (lock, close, arm)."""
    if tool_class.destructive or name in settings.approval_tools:
        return True
    if tool_class.tier is ToolTier.READ:
        return False
    command = _command(arguments)
    if name == "hub_set_hsm":
        return command is None or command.startswith("disarm")
    for entity_id in entity_ids:
        if entity_id in settings.approval_entities:
            return True
        domain = entity_id.split(".", 1)[0]
        if command in _SAFE_COMMANDS:
            continue
        if domain in SENSITIVE_DOMAINS:
            return True
        if domain == "cover":
            state = hass.states.get(entity_id)
            if state is not None and state.attributes.get(ATTR_DEVICE_CLASS) in (
                SENSITIVE_COVER_CLASSES
            ):
                return True
    return False


def set_state_reason(
    hass: HomeAssistant, user: User, settings: GatewaySettings, arguments: Mapping[str, Any]
) -> ApprovalReason | None:
    """The set_state updates that need a person, among those set_state would attempt for
    this user (one they may not control or see fails without asking anyone)."""
    updates = [u for u in arguments.get("updates", ()) if isinstance(u, Mapping)]
    wanted = [u.get("entity_id") for u in updates if isinstance(u.get("entity_id"), str)]
    known = {
        ref.entity_id
        for ref in readable_entities(hass, user, candidate_entities(hass, {"entity_ids": wanted}))
    }
    sensitive = [
        update
        for update in updates
        if update.get("entity_id") in known
        and can_control_entity(user, update["entity_id"])
        and sensitive_update(hass, settings, update)
    ]
    if not sensitive:
        return None
    return ApprovalReason(
        "; ".join(_describe_update(hass, update) for update in sensitive),
        tuple(dict.fromkeys(update["entity_id"] for update in sensitive)),
    )


def _describe_update(hass: HomeAssistant, update: Mapping[str, Any]) -> str:
    entity_id: str = update["entity_id"]
    state = hass.states.get(entity_id)
    name = state.name if state is not None else entity_id
    change = ", ".join(
        f"{key}={value}"
        for key, value in update.items()
        if key not in ("entity_id", "code", "state") and value != ""
    )
    wanted = update.get("state")
    text = f"{name} → {wanted}" if wanted else name
    return f"{text} ({change})" if change else text


def backend_call_reason(
    title: str, name: str, arguments: Mapping[str, Any], entity_ids: Sequence[str], devices: str
) -> ApprovalReason:
    """A backend call in one line: the backend, the tool, its command, what it acts on."""
    command = _command(arguments)
    return ApprovalReason(
        f"{title}: {name}{f' ({command})' if command else ''}{devices}", tuple(entity_ids)
    )


def _command(arguments: Mapping[str, Any]) -> str | None:
    """The command a backend call gives, lower case (Hubitat: command, armCommand)."""
    for key in ("command", "armCommand"):
        if isinstance(value := arguments.get(key), str):
            return value.strip().lower()
    return None


# --- the client's own prompt (MCP elicitation) --------------------------------------------


APPROVE_SCHEMA: Final[ElicitRequestedSchema] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Allow this action to run once.",
            "default": False,
        }
    },
    "required": ["approve"],
}


def prompt_message(pending: Pending) -> str:
    """What the person at the AI app is asked."""
    seconds = max(0, int((pending.deadline - dt_util.utcnow()).total_seconds()))
    details = f"\n\n{pending.details}\n\n" if pending.details else " "
    return (
        f"Home Assistant asks you to approve: {pending.summary}.{details}Requested by "
        f"{pending.user_name} through {pending.client_name}. Without an answer within "
        f"{seconds} s it is declined."
    )


class ClientAnswer(StrEnum):
    """What the person at the AI app answered, if anything."""

    ACCEPT = "accept"  # approved: the form accepted with the box ticked
    DECLINE = "decline"  # refused, or the form sent without the box ticked
    CANCEL = "cancel"  # dismissed, or no answer within the time limit
    UNSUPPORTED = "unsupported"  # the client cannot show the question: other channels


async def async_ask_in_client(
    ctx: RequestContext,
    message: str,
    *,
    timeout: float,  # noqa: ASYNC109 - the approval's remaining time
) -> ClientAnswer:
    """Ask the person at the AI app (MCP elicitation), in whichever protocol era the call
    came: the client shows `message` and an Approve box, the person accepts or declines."""
    if ctx.elicit is None:
        return ClientAnswer.UNSUPPORTED
    try:
        result = await ctx.elicit(message, APPROVE_SCHEMA, timeout=max(timeout, 0.0))
    except ElicitationUnsupportedError:
        return ClientAnswer.UNSUPPORTED
    if result.accepted:
        # A client that sends forms back with their defaults cannot approve by itself.
        approved = result.content.get("approve") is True
        return ClientAnswer.ACCEPT if approved else ClientAnswer.DECLINE
    if result.action == "decline" and result.answered:
        return ClientAnswer.DECLINE
    return ClientAnswer.CANCEL


def client_prompt(ctx: RequestContext) -> ClientPrompt | None:
    """The client's own prompt for approvals, when it declared elicitation (else None)."""
    if ctx.elicit is None:
        return None

    async def prompt(pending: Pending) -> bool | None:
        remaining = (pending.deadline - dt_util.utcnow()).total_seconds()
        answer = await async_ask_in_client(ctx, prompt_message(pending), timeout=remaining)
        if answer is ClientAnswer.ACCEPT:
            return True
        if answer is ClientAnswer.DECLINE:
            return False
        # Dismissed, unanswered or unsupported: the phone and HA's UI may still decide.
        return None

    return prompt
