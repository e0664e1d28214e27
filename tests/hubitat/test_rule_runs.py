"""A rule run reports the entities it changed, whether run by its button or hub_call_rule."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway.catalog.store import GatewayCatalog
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.results import result_data

from .conftest import Sim, entity_id


def _ctx(user: Any) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


def _goodnight_lights(hass: HomeAssistant, sim: Sim) -> set[str]:
    """The on/off entities of the devices Goodnight turns off, each turned on first."""
    found: set[str] = set()
    registry = er.async_get(hass)
    for device_id, command, _ in sim.hub.rules[101].actions:
        device = sim.hub.devices[device_id]
        if command != "off" or "switch" not in device.attributes:
            continue
        if not device.selected or device.disabled:  # the hub runs nothing on a disabled one
            continue
        sim.hub.set_attribute(device_id, "switch", "on")
        for platform in ("light", "switch"):
            unique_id = f"{sim.hub.hub_id}_{device_id}_{platform}"
            if (found_id := registry.async_get_entity_id(platform, DOMAIN, unique_id)) and (
                registry.async_get(found_id).disabled_by is None
            ):
                found.add(found_id)
    return found


@pytest.mark.usefixtures("runtime")
async def test_hub_call_rule_lists_what_the_rule_changed(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """Goodnight turns lights off and locks: the answer names them, with their new states."""
    turned_off = _goodnight_lights(hass, sim)
    await GatewayCatalog.get(hass).exposed_backends()[0].runtime.coordinator.async_refresh()
    gateway = GatewayCatalog.get(hass).exposed_backends()[0].gateway_name
    result = await GatewayHandler(hass).call_tool(
        _ctx(hass_admin_user),
        gateway,
        {"tool": "hub_call_rule", "args": {"ruleId": 101, "action": "actions"}},
    )
    assert result["isError"] is False, result
    changes = result["content"][-1]["text"]
    assert changes.startswith("Entities whose state changed in Home Assistant within 2 s")
    assert result_data(result)  # the hub's own answer is still first
    reported = {line.split(":", 1)[0] for line in changes.splitlines()[1:]}
    assert turned_off
    assert turned_off <= reported
    assert all(hass.states.get(light).state == "off" for light in turned_off)


@pytest.mark.usefixtures("runtime")
async def test_rule_button_through_set_state_lists_what_changed(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """Pressing a rule's "Run rule" button through set_state answers with what changed."""
    turned_off = _goodnight_lights(hass, sim)
    await GatewayCatalog.get(hass).exposed_backends()[0].runtime.coordinator.async_refresh()
    button = entity_id(hass, sim, "rule_101_run", "button")
    result = await async_set_state(
        hass, _ctx(hass_admin_user), {"updates": [{"entity_id": button, "state": "pressed"}]}
    )
    (item,) = result["results"]
    assert item["status"] == "done"
    assert item["changed"], item["changed_note"]
    assert all(change["entity_id"] != button for change in item["changed"])
    changed = {change["entity_id"]: change["state"] for change in item["changed"]}
    assert turned_off
    assert dict.fromkeys(turned_off, "off").items() <= changed.items()
