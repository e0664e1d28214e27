"""The gate every path runs once its targets are resolved and weighed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ...backends.base import ToolTier
from ...core.settings import gateway_settings
from .manager import approval_manager
from .rules import ApprovalReason, approval_applies
from .texts import GateRefusal

if TYPE_CHECKING:
    from ...mcp.server import RequestContext


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
