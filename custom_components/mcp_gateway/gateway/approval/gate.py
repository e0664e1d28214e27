"""The gate every path runs once its targets are resolved and weighed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import HomeAssistantError

from ...backends.base import BackendRuntime, ToolClass, ToolTier
from ...core.const import DOMAIN
from ...core.settings import gateway_settings
from ...mcp.server import LEGACY_VERSIONS, RequestContext
from ...permissions.policy import addressed_entities
from .manager import approval_manager
from .rules import (
    ApprovalReason,
    approval_applies,
    backend_reason,
    call_effect,
    unmapped_devices,
)
from .texts import GateRefusal


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
    """The gate every path runs once its targets are resolved and found sensitive: None to
    run (approved by a person, or approval off for this user), else why not."""
    if not approval_applies(gateway_settings(hass), user):
        return None
    return await approval_manager(hass).async_gate(
        ctx, user, tool=tool, arguments=arguments, reason=reason, tier=tier
    )


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
    changes, stored, effect = call_effect(hass, runtime, tool, arguments, addressed)
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
    refusal = await async_approve(
        hass, ctx, user, tool=action, arguments=arguments, reason=reason, tier=tool_class.tier
    )
    if refusal is not None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="action_approval",
            translation_placeholders={"action": action, "message": refusal.message},
        )
