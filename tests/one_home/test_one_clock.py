"""One clock: every instant the gateway returns is in Home Assistant's zone, with its offset.

The hub writes its own zone (America/Chicago, -06:00, event dates as -0600), Homecast writes
UTC ("Z"), the clock writes Europe/Berlin; Home Assistant here is US/Pacific (-08:00). Every
read tool each backend offers that needs no argument, the HA-level tools, list_backends and
the context resource are called over the real simulators, and every instant in their answers
must read -08:00.
"""

from __future__ import annotations

from datetime import timedelta
import json
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.core.localtime import ISO_INSTANT
from custom_components.mcp_gateway.core.settings import CONF_EXPOSED_ONLY
from custom_components.mcp_gateway.framework.base import ToolTier
from custom_components.mcp_gateway.gateway.catalog.store import GatewayCatalog
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools.resources import CONTEXT_URI
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.simulation import gateway_entry

from .conftest import MONDAY_6AM, OneHome

pytestmark = pytest.mark.freeze_time(MONDAY_6AM, tick=True)
PACIFIC = ("-08:00", "-07:00")  # HA's zone in tests (US/Pacific), winter or summer


def _foreign(text: str) -> list[str]:
    """The instants in `text` that are not in HA's zone."""
    return [m.group(0) for m in ISO_INSTANT.finditer(text) if not m.group(0).endswith(PACIFIC)]


def _text(result: dict[str, Any]) -> str:
    parts = [part.get("text", "") for part in result.get("content", [])]
    if result.get("structuredContent") is not None:
        parts.append(json.dumps(result["structuredContent"]))
    return "\n".join(parts)


async def test_every_instant_reads_in_home_assistants_zone(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """Backend reads, HA-level tools, list_backends and the context resource: one clock."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    # A little life first: hub events, a ringing alarm, polls of everything.
    device = one_home.hubitat_device("motion")
    one_home.hub.set_attribute(device.id, "motion", "active")
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=50))
    ctx = RequestContext("2025-11-25", "pytest", hass_admin_user, 1)
    handler = GatewayHandler(hass)
    seen: dict[str, list[str]] = {}
    instants = 0

    async def check(label: str, name: str, args: dict[str, Any]) -> None:
        nonlocal instants
        result = await handler.call_tool(ctx, name, args)
        text = _text(result)
        instants += len(ISO_INSTANT.findall(text))
        if bad := _foreign(text):
            seen[label] = bad[:3]

    catalog = GatewayCatalog.get(hass)
    for backend in catalog.exposed_backends():
        backend_catalog = await catalog.async_backend_catalog(backend)
        assert backend_catalog is not None
        for tool in backend_catalog.tools.values():
            if tool.tool_class.tier is not ToolTier.READ:
                continue
            if tool.input_schema.get("required"):
                continue
            await check(
                f"{backend.gateway_name}/{tool.name}",
                backend.gateway_name,
                {"tool": tool.name, "args": {}},
            )
    hub_gateway = next(b.gateway_name for b in catalog.exposed_backends() if b.kind == "hubitat")
    await check(
        "hub device events",
        hub_gateway,
        {"tool": "hub_list_device_events", "args": {"deviceId": str(device.id)}},
    )
    await check(
        "hub device", hub_gateway, {"tool": "hub_get_device", "args": {"deviceId": str(device.id)}}
    )
    for core in ("get_state", "list_backends"):
        await check(
            core,
            core,
            {"fields": ["entity_id", "state", "last_changed", "attributes"]}
            if core == "get_state"
            else {},
        )
    await check("get_history", "get_history", {"hours": 1, "domain": ["sensor"]})
    for uri in (CONTEXT_URI,):
        resource = await handler.read_resource(ctx, uri)
        text = json.dumps(resource)
        instants += len(ISO_INSTANT.findall(text))
        if bad := _foreign(text):
            seen[uri] = bad[:3]
    assert instants > 50
    assert not seen, json.dumps(seen, indent=1)
