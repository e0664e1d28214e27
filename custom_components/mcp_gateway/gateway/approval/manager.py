"""A person approves sensitive calls before they run: the approval core.

The model supplies every argument of a call, `confirm: true` included, so a prompt injection
passes every check a model can answer. Unlocking, disarming, opening a garage and destructive
backend tools therefore wait for a person: in the AI app (MCP elicitation), on an approver's
phone (the mobile app's actionable notifications) or in Home Assistant's UI (a repair issue),
whichever answers first. One approval runs one call once: it is bound to the user, the tool
and the exact arguments, consumed on use, and lives in memory only, so a restart forgets it
and nothing runs. A time limit ends in "expired", which counts as declined.

This module keeps the approvals and their decisions, and tells the channels; how one call
waits for its answer is the gate's (gate.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
import logging
import secrets
from typing import Any, Final, Protocol

from homeassistant.auth.models import User
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import CALLBACK_TYPE, Context, Event, HomeAssistant, callback
from homeassistant.helpers.event import async_call_later
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN
from ...core.settings import GatewaySettings, gateway_settings
from ...framework.base import ToolTier
from ...permissions.policy import may_use_tier, user_display_name
from ...permissions.visibility import can_control_entity
from .in_app import in_app_allowed
from .rules import call_key
from .texts import client_label

_LOGGER = logging.getLogger(__name__)

DATA_APPROVALS: HassKey[ApprovalManager] = HassKey(f"{DOMAIN}_approvals")

# Fired when a call asks for approval and when it is decided; logbook.py describes it.
EVENT_APPROVAL: Final = f"{DOMAIN}_approval"
ATTR_APPROVAL_ID: Final = "approval_id"
ATTR_OUTCOME: Final = "outcome"
ATTR_DECIDED_BY: Final = "decided_by"
ATTR_CHANNEL: Final = "channel"


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

    def open_users(self) -> list[str]:
        """The user of each open approval (one entry per approval)."""
        return [pending.user_id for pending in self._by_id.values() if pending.open]

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
            client_name=client_label(client_name),
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

    def forget(self, pending: Pending) -> None:
        """Drop an ended approval once a caller was told its outcome."""
        self._by_id.pop(pending.id, None)

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
