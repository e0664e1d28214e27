"""The gate every path runs once its targets are resolved and weighed: one call waits for
a person's answer.

Approval on and the user not exempt, a sensitive call opens (or finds) its approval in the
manager, within the limits of open approvals, and waits: a client that can prompt its user
is asked at once, beside the phone and the UI, and the request is held until the time limit;
otherwise it is held for HOLD_SECONDS at most and then answers "waiting", and the same call
made again finds the same approval. An approval that comes runs the call once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
import logging
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import HomeAssistantError
from homeassistant.util import dt as dt_util

from ...core.const import DOMAIN
from ...core.settings import gateway_settings
from ...framework.base import BackendRuntime, ToolClass, ToolTier
from ...mcp.server import LEGACY_VERSIONS, RequestContext
from ...permissions.policy import addressed_entities
from .manager import ApprovalManager, Channel, Outcome, Pending, approval_manager
from .prompt import ClientPrompt, client_prompt
from .rules import (
    ApprovalReason,
    approval_applies,
    backend_reason,
    call_effect,
    call_key,
    too_busy,
    unmapped_devices,
)
from .texts import GateRefusal, refusal

_LOGGER = logging.getLogger(__name__)

# How long a call without a prompt in the client holds its request open before it answers
# "waiting for approval": well within the 60 s most MCP clients give a request.
HOLD_SECONDS: Final = 20.0


@dataclass(frozen=True, slots=True)
class Passed:
    """A call the gate lets run, and who approved it (None: approval is off for its user)."""

    approved_by: str | None = None


async def async_gate(
    hass: HomeAssistant,
    ctx: RequestContext,
    user: User,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    reason: ApprovalReason,
    tier: ToolTier,
    details: str = "",
) -> Passed | GateRefusal:
    """The gate every path runs once its targets are resolved and found sensitive: Passed
    to run (approved by a person, or approval off for this user), else why not. `details`
    follow the summary for the approvers (an automation's exact config)."""
    if not approval_applies(gateway_settings(hass), user):
        return Passed()
    return await async_hold(
        approval_manager(hass),
        ctx,
        user,
        tool=tool,
        arguments=arguments,
        reason=reason,
        tier=tier,
        details=details,
    )


async def async_approve(
    hass: HomeAssistant,
    ctx: RequestContext,
    user: User,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    reason: ApprovalReason,
    tier: ToolTier,
) -> GateRefusal | None:
    """async_gate for a path that needs only why a call may not run (None: it may)."""
    answer = await async_gate(
        hass, ctx, user, tool=tool, arguments=arguments, reason=reason, tier=tier
    )
    return answer if isinstance(answer, GateRefusal) else None


async def async_action_gate(
    call: ServiceCall,
    user: User,
    runtime: BackendRuntime,
    tool: str,
    arguments: Mapping[str, Any],
) -> None:
    """An integration action's backend call, weighed as the gateway weighs it: a sensitive
    change or stored action (a scene that unlocks) waits for a person (HomeAssistantError
    while it waits, or once declined)."""
    hass = call.hass
    tool_class = runtime.call_class(runtime.tool_class({"name": tool}), tool, arguments)
    addressed = addressed_entities(hass, runtime, tool, arguments)
    changes, stored, effect = call_effect(
        hass, runtime, tool, arguments, addressed, tier=tool_class.tier
    )
    reason = backend_reason(
        hass,
        gateway_settings(hass),
        title=runtime.entry.title,
        name=tool,
        # An action is a person's own form (deleting asks in HA's UI): only what lets people
        # in, now or stored for later, waits for another person.
        tool_class=ToolClass(tool_class.tier),
        changes=changes,
        stored=stored,
        effect=effect,
        unmapped=unmapped_devices(runtime, tool, arguments, addressed),
    )
    if reason is None:
        return
    action = f"{DOMAIN}.{call.service}"
    ctx = RequestContext(
        protocol_version=LEGACY_VERSIONS[0], client_name=action, user=user, request_id=None
    )
    refused = await async_approve(
        hass, ctx, user, tool=action, arguments=arguments, reason=reason, tier=tool_class.tier
    )
    if refused is not None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="action_approval",
            translation_placeholders={"action": action, "message": refused.message},
        )


async def async_hold(
    manager: ApprovalManager,
    ctx: RequestContext,
    user: User,
    *,
    tool: str,
    arguments: Mapping[str, Any],
    reason: ApprovalReason,
    tier: ToolTier,
    details: str = "",
) -> Passed | GateRefusal:
    """Wait for a person's answer to this call: Passed to run it (the approval is used up),
    else why not (declined, expired, still waiting, used by another call, too many open)."""
    hass = manager.hass
    key = call_key(user.id, tool, arguments)
    if manager.find(user.id, key) is None and (busy := too_busy(manager.open_users(), user)):
        return busy
    pending = await manager.async_request(
        user,
        ctx.client_name,
        tool=tool,
        arguments=arguments,
        summary=reason.summary,
        entity_ids=reason.entity_ids,
        tier=tier,
        details=details,
    )
    started = hass.loop.time()
    asking: asyncio.Task[None] | None = None
    if (
        pending.open
        and (prompt := client_prompt(ctx)) is not None
        # Asked only when the answer would count (in_app.py).
        and await manager.async_may_decide(pending, user, Channel.CLIENT)
    ):
        asking = hass.async_create_task(
            _ask_client(manager, prompt, pending, user.id), eager_start=True
        )
    try:
        if asking is not None:
            # Held while the client shows the question; a client that cannot, or a
            # person who dismissed it, leaves the rest of the short hold to the others.
            await _until_answer_or(hass, pending, asking)
        hold = HOLD_SECONDS - (hass.loop.time() - started)
        outcome = await manager.async_wait(pending, hold if pending.open else 0.0)
    finally:
        if asking is not None and not asking.done():
            asking.cancel()
    if outcome is Outcome.APPROVED:
        if await manager.async_consume(pending):
            return Passed(pending.decided_by_name)
        outcome = pending.outcome
    if outcome in (Outcome.DECLINED, Outcome.EXPIRED):
        # Told once; the same call made again asks again.
        manager.forget(pending)
    return refusal(
        str(outcome),
        pending.summary,
        {"approval_id": pending.id, "approval": str(outcome)},
        pending.deadline,
        pending.decided_by_name,
    )


async def _until_answer_or(
    hass: HomeAssistant, pending: Pending, asking: asyncio.Task[None]
) -> None:
    """Wait until a decision, the client's prompt ends, or the time limit."""
    decided = hass.async_create_task(pending.decided.wait(), eager_start=True)
    remaining = max(0.0, (pending.deadline - dt_util.utcnow()).total_seconds())
    try:
        await asyncio.wait(
            (decided, asking), timeout=remaining, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        decided.cancel()


async def _ask_client(
    manager: ApprovalManager, prompt: ClientPrompt, pending: Pending, user_id: str
) -> None:
    try:
        answer = await prompt(pending)
    except Exception:  # the client's prompt failing leaves the other channels
        _LOGGER.debug("The client's approval prompt failed", exc_info=True)
        return
    if answer is not None:
        await manager.async_decide(pending.id, answer, user_id=user_id, channel=Channel.CLIENT)
