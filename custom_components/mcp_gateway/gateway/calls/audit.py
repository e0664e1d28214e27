"""A backend write's record: its answer noted where HA sees its devices offline, and its
logbook line (reads leave none)."""

from __future__ import annotations

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ...framework.base import ToolTier
from ...mcp.server import RequestContext
from ...mcp.types import CallToolResult
from ...permissions.policy import async_record_write
from ..catalog.store import ExposedBackend
from .authorize import AuthorizedCall
from .replies import note_unavailable


def record(
    hass: HomeAssistant,
    ctx: RequestContext,
    user: User,
    backend: ExposedBackend,
    call: AuthorizedCall,
    *,
    result: CallToolResult,
) -> CallToolResult:
    """A write's result, noted where HA sees its devices offline, and its logbook line."""
    if call.tool_class.tier is ToolTier.READ:
        return result
    result = note_unavailable(hass, result, call.entity_ids)
    # Arguments stay out of the logbook: they may hold codes or file contents.
    async_record_write(
        hass,
        user=user,
        client_name=ctx.client_name,
        tool=call.what,
        summary=f"{backend.entry.title}: {call.name}{call.phrase}",
        success=not result.get("isError", False),
        backend=backend.gateway_name,
        entity_id=call.logbook_entity,
    )
    return result
