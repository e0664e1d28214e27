"""The integration against what the real app (4.0.2) does where earlier guesses were wrong.

Each test names the behaviour of the app's source that the simulator follows.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.config_entries import SOURCE_USER
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.backends.hubitat.api import parse_device
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_TOKEN,
    CONF_URL,
    ISSUE_LOCATION_EVENTS,
    KIND as HUBITAT_KIND,
    SWEEP_INTERVAL,
)
from custom_components.mcp_gateway.backends.hubitat.coordinator import _merge
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.errors import McpRpcError
from custom_components.mcp_gateway.mcp.server import RequestContext
from simulators.hubitat import BEST_PRACTICE_KEY
from tests.results import result_data

from .conftest import TOKEN, Sim, SimFactory, entity_id, first, make_entry, poll, setup_entry

GATEWAY = "hubitat_home_hub"
RULE = {"name": "Porch", "definition": {}}


def _ctx(user: Any) -> RequestContext:
    return RequestContext("2026-07-28", "pytest", user, 1)


async def _user(hass: HomeAssistant, policy: dict[str, Any]) -> MockUser:
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    user = MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)
    user.mock_policy(policy)
    return user


# ---------------------------------------------------------------- 2026-07-28 round trips


async def test_multi_round_trip_writes_complete(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime
) -> None:
    """hub_set_rule first answers input_required and leases a write slot (handleToolsCall).

    The client finishes it with the caller's own arguments: the hub runs the write once and
    frees the slot, so two such calls do not leave every light waiting out a 3-minute lease.
    """
    assert runtime.client.protocol_version == "2026-07-28"
    result = await runtime.async_call_tool("hub_set_rule", {**RULE, "confirm": True})
    assert result.is_error is False
    assert result.data["success"] is True
    driver = {"type": "driver", "id": "7", "confirm": True}
    result = await runtime.async_call_tool("hub_delete_item", driver)
    assert result.data["success"] is True
    assert [name for name, _ in sim.hub.admin_calls] == ["hub_set_rule", "hub_delete_item"]
    assert sim.tools.active_writes() == []
    plug = first(sim, "switch")
    target = "off" if plug.value("switch") == "on" else "on"
    await hass.services.async_call(
        "switch",
        f"turn_{target}",
        {"entity_id": entity_id(hass, sim, f"{plug.id}_switch", "switch")},
        blocking=True,
    )
    assert plug.value("switch") == target


async def test_multi_round_trip_refusal_frees_the_slot(sim: Sim, runtime: HubitatRuntime) -> None:
    """Without the hub's own confirm the continuation is refused, and the lease abandoned."""
    with pytest.raises(McpRpcError) as err:
        await runtime.async_call_tool("hub_set_rule", RULE)
    assert err.value.code == -32602
    assert "confirm" in err.value.message
    assert sim.tools.active_writes() == []


@pytest.mark.preapproved(
    "tests the confirm step the hub schema asks for, not who approves the call"
)
async def test_gateway_confirms_destructive_hub_tools(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime, hass_admin_user: MockUser
) -> None:
    """A tool whose hub schema takes `confirm` needs the AI's explicit confirm at the gateway."""
    handler = GatewayHandler(hass)
    call = {"tool": "hub_set_rule", "args": {**RULE, "confirm": True}}
    refused = await handler.call_tool(_ctx(hass_admin_user), GATEWAY, call)
    assert result_data(refused)["error"]["code"] == "confirmation_required"
    assert sim.hub.admin_calls == []
    done = await handler.call_tool(_ctx(hass_admin_user), GATEWAY, {**call, "confirm": True})
    assert done["isError"] is False, done
    assert result_data(done)["success"] is True
    assert sim.tools.active_writes() == []
    # Deleting a mode is destructive (toolManageMode asks confirm for it).
    delete = {"tool": "hub_manage_mode", "args": {"action": "delete", "mode": "Away"}}
    refused = await handler.call_tool(_ctx(hass_admin_user), GATEWAY, delete)
    assert result_data(refused)["error"]["code"] == "confirmation_required"
    assert sim.hub.mode_by("Away") is not None


# ---------------------------------------------------------------- permissions


async def test_mode_and_hsm_need_control_of_their_entities(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Mode activation and hub_set_hsm act on the mode select and the HSM panel."""
    mode = entity_id(hass, sim, "hub_mode", "select")
    hsm = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    handler = GatewayHandler(hass)
    activate = {"tool": "hub_manage_mode", "args": {"action": "activate", "mode": "Night"}}
    arm = {"tool": "hub_set_hsm", "args": {"armCommand": "armAway"}}
    reader = await _user(hass, {"entities": {"entity_ids": {mode: {"read": True}}}})
    for call in (activate, arm):
        denied = await handler.call_tool(_ctx(reader), GATEWAY, call)
        assert result_data(denied)["error"]["code"] == "forbidden", denied
    assert sim.hub.mode_name == "Day"
    allowed = {"entities": {"entity_ids": {mode: {"control": True}, hsm: {"control": True}}}}
    controller = await _user(hass, allowed)
    done = await handler.call_tool(_ctx(controller), GATEWAY, activate)
    assert done["isError"] is False, done
    assert sim.hub.mode_name == "Night"
    done = await handler.call_tool(_ctx(controller), GATEWAY, arm)
    assert done["isError"] is False, done
    # Creating a mode stays the administrators'.
    create = {"tool": "hub_manage_mode", "args": {"action": "create", "name": "Party"}}
    denied = await handler.call_tool(_ctx(controller), GATEWAY, create)
    assert result_data(denied)["error"]["code"] == "forbidden"


# ---------------------------------------------------------------- location events


async def test_location_events_failing_keeps_the_hub(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """Location events answer {success: false} with Hub Security on (toolGetDeviceHistory).

    Setup and polls go on: devices update, mode and HSM are read directly, and a repair issue
    explains the setting; it clears once the hub reads its events again.
    """
    sim = await sim_factory(hub_security_blocks=True)
    runtime = await setup_entry(hass, make_entry(sim))
    issue_id = f"{ISSUE_LOCATION_EVENTS}_{runtime.entry.entry_id}"
    issue = ir.async_get(hass).async_get_issue(DOMAIN, issue_id)
    assert issue is not None
    assert issue.translation_key == ISSUE_LOCATION_EVENTS
    assert runtime.coordinator.location_events_ok is False
    mode = entity_id(hass, sim, "hub_mode", "select")
    hsm = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    plug = first(sim, "switch")
    plug_entity = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    target = "off" if plug.value("switch") == "on" else "on"
    sim.hub.set_mode("Night")
    sim.hub.set_hsm_status("armedAway")
    sim.hub.set_attribute(plug.id, "switch", target)
    await poll(hass, freezer)
    assert hass.states.get(mode).state == "Night"
    assert hass.states.get(hsm).state == "armed_away"
    assert hass.states.get(plug_entity).state == target
    sim.hub.hub_security_blocks = False
    await poll(hass, freezer, SWEEP_INTERVAL.total_seconds())
    assert runtime.coordinator.location_events_ok is True
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None
    sim.hub.set_mode("Away")
    await poll(hass, freezer)
    assert hass.states.get(mode).state == "Away"


# ---------------------------------------------------------------- shapes


async def test_hub_without_zigbee_id(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """zigbeeId null or "unavailable" (toolGetHubInfo) identifies nothing: no shared id.

    The entry goes without a unique id (its entities use the entry id, which cannot collide
    with another hub's); the same endpoint is not added twice.
    """
    first_hub = await sim_factory(zigbee_id="unavailable")
    second_hub = await sim_factory(zigbee_id=None, app_id="43")
    created = []
    for hub_sim in (first_hub, second_hub):
        flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
        flow = await hass.config_entries.flow.async_configure(
            flow["flow_id"], {"next_step_id": HUBITAT_KIND}
        )
        result = await hass.config_entries.flow.async_configure(
            flow["flow_id"], {CONF_URL: hub_sim.url, CONF_TOKEN: TOKEN}
        )
        assert result["type"] is FlowResultType.CREATE_ENTRY
        assert result["result"].unique_id is None
        created.append(result["result"])
    await hass.async_block_till_done()
    registry = er.async_get(hass)
    for entry in created:
        assert entry.runtime_data.coordinator.last_update_success
        assert registry.async_get_entity_id("select", DOMAIN, f"{entry.entry_id}_hub_mode")
    flow = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    flow = await hass.config_entries.flow.async_configure(
        flow["flow_id"], {"next_step_id": HUBITAT_KIND}
    )
    again = await hass.config_entries.flow.async_configure(
        flow["flow_id"], {CONF_URL: first_hub.url, CONF_TOKEN: TOKEN}
    )
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"


async def test_existing_placeholder_entry_keeps_working(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """An entry made when "unavailable" was taken for an id still loads (no false other-hub)."""
    sim = await sim_factory(zigbee_id="unavailable")
    runtime = await setup_entry(hass, make_entry(sim, unique_id="unavailable"))
    assert runtime.coordinator.last_update_success
    assert runtime.coordinator.data.hub.id is None


async def test_hub_info_is_flat(hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime) -> None:
    """Health figures sit at the top of hub_get_info, as strings."""
    temperature = entity_id(hass, sim, "hub_hub_temperature", "sensor")
    assert float(hass.states.get(temperature).state) == 41.3
    hub = runtime.coordinator.data.hub
    assert hub.app_version == hub.raw["mcpServerVersion"]


def test_device_reading_keeps_listing_facts() -> None:
    """hub_get_device has no lastActivity, disabled or parentDeviceId (toolGetDevice)."""
    listed = parse_device(
        {"id": "5", "name": "Strip", "disabled": True, "parentDeviceId": "2", "lastActivity": "x"}
    )
    fresh = parse_device({"id": "5", "name": "Strip", "label": "Strip"}, listing=False)
    merged, moved = _merge(listed, fresh)
    assert moved
    assert (merged.disabled, merged.parent_id, merged.last_activity) == (True, "2", "x")
    assert merged.label == "Strip"
    assert listed.label is None  # the record a snapshot holds is replaced, not changed


async def test_write_cap_refusal_is_readable(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime
) -> None:
    """_writeCapacityRefusalLocked's isError result becomes a translated message."""
    key = {"bestPracticeKey": BEST_PRACTICE_KEY}
    for name in ("A", "B"):  # another MCP client's two leased writes
        await sim.tools.call_modern("hub_set_rule", {"name": name, "confirm": True, **key}, None)
    plug = first(sim, "switch")
    with pytest.raises(HomeAssistantError) as err:
        await hass.services.async_call(
            "switch",
            "toggle",
            {"entity_id": entity_id(hass, sim, f"{plug.id}_switch", "switch")},
            blocking=True,
        )
    assert err.value.translation_key == "hubitat_busy"
    assert err.value.translation_placeholders == {"limit": "2", "active": "2"}
    assert "{" not in str(err.value)


async def test_changed_since_round_trips_the_newest_activity(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime, freezer: FrozenDateTimeFactory
) -> None:
    """changedSince is at-or-after (toolListDevices) and lastActivity whole seconds.

    The newest activity is the bookmark, so activity later in its second is still listed;
    once a listing made after that second ended has shown it, idle polls list nothing.
    """
    newest = max(d.last_activity for d in sim.hub.visible_devices() if d.last_activity is not None)
    second = int(newest.timestamp()) * 1000
    assert runtime.coordinator.changed_since == str(second)
    await poll(hass, freezer)
    assert runtime.coordinator.changed_since == str(second + 1000)
    # A change seen by a refresh, and another later in the same second: both arrive.
    now = dt_util.utcnow()
    freezer.move_to(now.replace(microsecond=0) + timedelta(seconds=1, milliseconds=100))
    plug, lamp = first(sim, "switch"), first(sim, "outlet")
    sim.hub.set_attribute(plug.id, "switch", "off" if plug.value("switch") == "on" else "on")
    await runtime.coordinator.async_refresh()
    freezer.tick(0.5)
    sim.hub.set_attribute(lamp.id, "switch", "off" if lamp.value("switch") == "on" else "on")
    assert plug.last_activity.replace(microsecond=0) == lamp.last_activity.replace(microsecond=0)
    await poll(hass, freezer)
    for device in (plug, lamp):
        state = hass.states.get(entity_id(hass, sim, f"{device.id}_switch", "switch"))
        assert state.state == device.value("switch")


async def test_hub_without_hsm_has_no_panel(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """hub_get_hsm_status answers status null without HSM (toolGetHsmStatus): no panel."""
    sim = await sim_factory(has_hsm=False)
    runtime = await setup_entry(hass, make_entry(sim))
    assert runtime.coordinator.data.hsm_supported is False
    registry = er.async_get(hass)
    uid = f"{sim.hub.hub_id}_hub_hsm"
    assert registry.async_get_entity_id("alarm_control_panel", DOMAIN, uid) is None
    # HSM installed later: the next sweep finds it and the panel appears.
    sim.hub.hsm_status = "disarmed"
    await poll(hass, freezer, SWEEP_INTERVAL.total_seconds() + 1)
    assert runtime.coordinator.data.hsm_supported is True
    assert registry.async_get_entity_id("alarm_control_panel", DOMAIN, uid) is not None


# ---------------------------------------------------------------- large hubs


async def test_inventory_pages_shrink_when_too_large(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """Results over 120,000 bytes become response_too_large (the app's size guard).

    Real thermostats are 4 KB each in a detailed listing (more on the wire, escaped inside
    the result's text), so 50 of them do not fit: the inventory halves its page until they
    do, and keeps that size.
    """
    sim = await sim_factory(realistic_devices=True)
    for n in range(40):
        sim.hub.pair_device("thermostat", f"Thermostat {n}", "Office")
    runtime = await setup_entry(hass, make_entry(sim))
    assert runtime.coordinator.last_update_success
    assert len(runtime.coordinator.data.devices) == len(sim.hub.visible_devices())
    assert runtime.api.page_limit < 50
    thermostat = next(d for d in sim.hub.visible_devices() if d.label == "Thermostat 39")
    assert entity_id(hass, sim, f"{thermostat.id}_thermostat", "climate")
