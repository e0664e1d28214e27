"""list_backends: every exposed backend entry's health, and what of it the caller may use."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

from homeassistant.core import HomeAssistant

from ..catalog.gateway_tool import listed_names
from ..catalog.store import GatewayCatalog
from ..finding import homes
from .state_items import jsonable

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

_LOGGER = logging.getLogger(__name__)

LIST_BACKENDS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {},
    "required": [],
    "additionalProperties": False,
}


async def async_list_backends(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Health of every exposed entry, and how many of its tools this caller may use."""
    catalog = GatewayCatalog.get(hass)
    backends = []
    visible = await catalog.async_visible(ctx.user)
    listed = listed_names([backend for backend, _, _ in visible])
    several = homes.several_homes(hass)
    for backend, backend_catalog, tools in visible:
        # The tool tools/list shows for it, and the entry to pass when its kind is one tool.
        tool_name, entry = listed[backend.gateway_name]
        item: dict[str, Any] = {"gateway_tool": tool_name}
        if entry is not None:
            item["entry"] = entry
        item |= {
            "title": backend.entry.title,
            "backend": backend.kind,
            "state": backend.entry.state.value,
            "tools": len(tools),
        }
        if (runtime := backend.runtime) is not None:
            try:
                health = runtime.health()
            except Exception:  # a broken health hook must not hide the others
                _LOGGER.exception("Health of %s failed", backend.gateway_name)
                item["available"] = False
            else:
                item["available"] = health.available
                item["protocol_version"] = health.protocol_version
                if health.latency_ms is not None:
                    item["latency_ms"] = round(health.latency_ms, 1)
                if health.details:
                    item["details"] = jsonable(health.details)
        else:
            item["available"] = False
        if several:
            # Which homes its entities are in: the names get_state's home filter takes.
            item["homes"] = homes.known_homes(hass, [backend])
        if backend_catalog is None:
            item["catalog"] = "unknown"
        backends.append(item)
    return {"backends": backends}
