"""Polling: incremental reads, dynamic and stale devices, events, faults and recovery."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
import logging
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState
from homeassistant.const import STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.update_coordinator import UpdateFailed
import pytest

from custom_components.mcp_gateway.backends.hubitat import const
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.mcp.errors import McpTimeoutError
from simulators.hubitat.hub import Mode
from tests.registry import area_name, device_of

from .conftest import Sim, entity_id, first, make_entry, poll, setup_entry


async def test_idle_poll_reads_only_changes(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """An idle poll is two reads: devices changed since the bookmark, location events since."""
    sim.stats.reset()
    await poll(hass, freezer)
    assert dict(sim.stats.tools) == {"hub_read_devices": 2}
    idle_bytes = sim.stats.bytes_out
    sim.stats.reset()
    # A full inventory costs far more than an idle poll.
    await runtime.api.list_devices()
    assert sim.stats.bytes_out > 5 * idle_bytes
    assert runtime.coordinator.full_inventories == 1


async def test_change_on_the_hub_shows_after_a_poll(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A sensor that reports on the hub is read by the next incremental poll."""
    sensor = first(sim, "water")
    moisture = entity_id(hass, sim, f"{sensor.id}_water", "binary_sensor")
    new = "dry" if sensor.value("water") == "wet" else "wet"
    sim.hub.set_attribute(sensor.id, "water", new)
    assert hass.states.get(moisture).state == ("off" if new == "wet" else "on")
    await poll(hass, freezer)
    assert hass.states.get(moisture).state == ("on" if new == "wet" else "off")


async def test_new_device_appears_without_reload(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A device paired on the hub reports at once: the next poll adds its entities."""
    device = sim.hub.pair_device("dimmer", "Porch Dimmer", "Porch")
    await poll(hass, freezer)
    light = entity_id(hass, sim, f"{device.id}_light", "light")
    assert hass.states.get(light).state in ("on", "off")
    entry = device_of(hass, (DOMAIN, f"{sim.hub.hub_id}_{device.id}"))
    assert entry is not None
    assert area_name(hass, entry) == "Porch"


async def test_silent_new_device_found_by_the_sweep(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A device that never reports (a virtual one) is found by the periodic id listing."""
    device = sim.hub.create_virtual("Virtual Switch", "Virtual Porch")
    device.last_activity = None
    await poll(hass, freezer)
    uid = f"{sim.hub.hub_id}_{device.id}_switch"
    entities = er.async_get(hass)
    assert entities.async_get_entity_id("switch", DOMAIN, uid) is None
    await poll(hass, freezer, const.SWEEP_INTERVAL.total_seconds())
    assert entities.async_get_entity_id("switch", DOMAIN, uid) is not None


async def test_removed_device_leaves_ha(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A device gone from the hub is removed with its entities at the next sweep."""
    plug = first(sim, "outlet")
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    identifier = (DOMAIN, f"{sim.hub.hub_id}_{plug.id}")
    sim.hub.remove_device(plug.id)
    await poll(hass, freezer, const.SWEEP_INTERVAL.total_seconds())
    assert er.async_get(hass).async_get(switch) is None
    assert hass.states.get(switch) is None
    assert device_of(hass, identifier) is None
    assert plug.id not in {int(i) for i in runtime.coordinator.data.devices}


async def test_new_rule_and_mode_list_come_with_the_sweep(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Rules and the set of modes are re-read by the sweep."""
    sim.hub.rules.pop(104)
    await poll(hass, freezer, const.SWEEP_INTERVAL.total_seconds())
    registry = er.async_get(hass)
    assert registry.async_get_entity_id("switch", DOMAIN, f"{sim.hub.hub_id}_rule_104") is None
    assert registry.async_get_entity_id("switch", DOMAIN, f"{sim.hub.hub_id}_rule_101")


async def test_button_presses_fire_events(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """pushed/held/doubleTapped on the hub fire the matching button's event entity once."""
    remote = first(sim, "button")
    button_2 = entity_id(hass, sim, f"{remote.id}_button_2", "event")
    button_1 = entity_id(hass, sim, f"{remote.id}_button_1", "event")
    sim.hub.set_attribute(remote.id, "held", 2)
    await poll(hass, freezer)
    state = hass.states.get(button_2)
    assert state.attributes["event_type"] == "held"
    assert state.attributes["button"] == 2
    assert hass.states.get(button_1).state == "unknown"
    fired_at = state.state

    # The same event seen again by an overlapping poll does not fire twice.
    await poll(hass, freezer)
    assert hass.states.get(button_2).state == fired_at

    sim.hub.set_attribute(remote.id, "doubleTapped", 2)
    await poll(hass, freezer)
    state = hass.states.get(button_2)
    assert state.attributes["event_type"] == "double_tapped"
    assert state.state != fired_at


async def test_mode_and_hsm_follow_location_events(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Mode and HSM changes made on the hub arrive through the location event stream."""
    mode = entity_id(hass, sim, "hub_mode", "select")
    hsm = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    sim.hub.set_mode("Away")
    sim.hub.set_hsm_status("armedHome")
    sim.stats.reset()
    await poll(hass, freezer)
    assert hass.states.get(mode).state == "Away"
    assert hass.states.get(hsm).state == "armed_home"
    assert sim.stats.tools["hub_list_modes"] == 1
    assert sim.stats.tools["hub_get_hsm_status"] == 1

    sim.hub.trigger_hsm_alert("intrusion")
    await poll(hass, freezer)
    assert hass.states.get(hsm).state == "triggered"


async def test_unavailable_then_back_logged_once(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    sim: Sim,
    runtime: HubitatRuntime,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Hub offline: entities unavailable, one log line; back: available, one log line."""
    mode = entity_id(hass, sim, "hub_mode", "select")
    caplog.set_level(logging.INFO)
    sim.faults.offline = True
    for _ in range(3):
        await poll(hass, freezer)
    assert hass.states.get(mode).state == STATE_UNAVAILABLE
    assert caplog.text.count("Error fetching") == 1

    sim.faults.offline = False
    sim.hub.set_mode("Evening")
    await poll(hass, freezer)
    await poll(hass, freezer)
    assert hass.states.get(mode).state == "Evening"
    assert caplog.text.count("data recovered") == 1


async def test_malformed_replies_make_entities_unavailable(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A reply that is not JSON: unavailable until the hub answers properly again."""
    mode = entity_id(hass, sim, "hub_mode", "select")
    sim.faults.malformed = True
    await poll(hass, freezer)
    assert hass.states.get(mode).state == STATE_UNAVAILABLE
    sim.faults.malformed = False
    await poll(hass, freezer)
    assert hass.states.get(mode).state != STATE_UNAVAILABLE


async def test_wrong_shape_is_a_failed_update(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Valid MCP with a result of the wrong shape (no devices list) fails what it feeds: the
    devices go unavailable, the mode (another read) does not."""
    mode = entity_id(hass, sim, "hub_mode", "select")
    switch = entity_id(hass, sim, f"{first(sim, 'switch').id}_switch", "switch")

    async def broken(args: dict) -> dict:
        return {"unexpected": True}

    with patch.dict(sim.tools._handlers, {"list_devices": broken}):
        await poll(hass, freezer)
        assert hass.states.get(switch).state == STATE_UNAVAILABLE
        assert hass.states.get(mode).state == "Day"
    await poll(hass, freezer)
    assert hass.states.get(switch).state != STATE_UNAVAILABLE


async def test_timeouts_make_entities_unavailable(hass: HomeAssistant, sim: Sim) -> None:
    """A hub that stops answering: the request times out and entities go unavailable.

    Real time here (a 0.5 s request timeout): a frozen clock would never let it expire, and
    the setup's and the recovery's requests must each finish within it on a loaded machine
    too (50 ms did not, once, under a parallel run).
    """
    with patch.object(const, "REQUEST_TIMEOUT", 0.5):
        runtime = await setup_entry(hass, make_entry(sim))
    mode = entity_id(hass, sim, "hub_mode", "select")
    sim.faults.hang = True
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    assert isinstance(runtime.coordinator.last_exception, UpdateFailed)
    assert "timed out" in str(runtime.coordinator.last_exception).lower() or isinstance(
        runtime.coordinator.last_exception.__cause__, McpTimeoutError
    )
    assert hass.states.get(mode).state == STATE_UNAVAILABLE
    sim.faults.hang = False
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    assert hass.states.get(mode).state != STATE_UNAVAILABLE


async def test_revoked_token_starts_reauth(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A 401 while polling starts the reauth flow."""
    sim.faults.revoked = True
    await poll(hass, freezer)
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [flow["context"]["source"] for flow in flows] == [SOURCE_REAUTH]
    assert flows[0]["step_id"] == "hubitat_reauth"


async def test_setup_retries_while_offline(hass: HomeAssistant, sim: Sim) -> None:
    """Unreachable at start: HA retries the entry later."""
    sim.faults.offline = True
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY


async def test_setup_with_refused_token_asks_for_a_new_one(hass: HomeAssistant, sim: Sim) -> None:
    """A token the hub refuses at start: setup fails and reauth begins."""
    entry = make_entry(sim, token="wrong")
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_ERROR
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [flow["context"]["source"] for flow in flows] == [SOURCE_REAUTH]


async def test_unload(hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime) -> None:
    """Unloading removes the entities' states and closes the write queue."""
    entry = runtime.entry
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.NOT_LOADED
    with pytest.raises(RuntimeError):
        await runtime.async_command("1", "on", [], {})


async def test_a_poll_rewrites_only_changed_devices(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Entities of devices that did not change are not written again by a poll."""
    water = first(sim, "water")
    plug = first(sim, "outlet")
    moisture = entity_id(hass, sim, f"{water.id}_water", "binary_sensor")
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    before = hass.states.get(switch).last_reported
    sim.hub.set_attribute(water.id, "water", "dry" if water.value("water") == "wet" else "wet")
    await poll(hass, freezer)
    assert hass.states.get(moisture).last_reported > before
    assert hass.states.get(switch).last_reported == before


async def test_renamed_device_and_new_mode_follow(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A label changed on the hub renames the HA device; a new mode becomes an option."""
    plug = first(sim, "outlet")
    plug.label = "Aquarium Pump"
    sim.hub.set_attribute(plug.id, "power", 12.5)
    sim.hub.modes.append(Mode(9, "Party"))
    await poll(hass, freezer, const.SWEEP_INTERVAL.total_seconds())
    entry = device_of(hass, (DOMAIN, f"{sim.hub.hub_id}_{plug.id}"))
    assert entry is not None
    assert entry.name == "Aquarium Pump"
    mode = entity_id(hass, sim, "hub_mode", "select")
    assert "Party" in hass.states.get(mode).attributes["options"]


async def test_many_new_devices_take_one_inventory(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """More than a handful of silent new devices: one paged inventory, not a call each."""
    created = []
    for n in range(12):
        device = sim.hub.create_virtual("Virtual Switch", f"Virtual {n}")
        device.last_activity = None
        created.append(device)
    sim.stats.reset()
    await poll(hass, freezer, const.SWEEP_INTERVAL.total_seconds())
    assert runtime.coordinator.full_inventories == 2
    assert {str(d.id) for d in created} <= set(runtime.coordinator.data.devices)


async def test_hub_without_hsm_has_no_alarm_panel(hass: HomeAssistant, sim: Sim) -> None:
    """HSM is an optional hub app: when its tool fails there is no alarm panel."""

    async def no_hsm(args: dict) -> dict:
        return {"success": False, "error": "HSM is not installed"}

    with patch.dict(sim.tools._handlers, {"get_hsm_status": no_hsm}):
        runtime = await setup_entry(hass, make_entry(sim))
    assert runtime.coordinator.data.hsm_supported is False
    registry = er.async_get(hass)
    assert (
        registry.async_get_entity_id("alarm_control_panel", DOMAIN, f"{sim.hub.hub_id}_hub_hsm")
        is None
    )


async def test_no_activity_bookmark_reads_the_whole_list(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Without any activity time seen yet, a poll falls back to the full listing."""
    plug = first(sim, "outlet")
    power = entity_id(hass, sim, f"{plug.id}_power", "sensor")
    # A value the hub changed without activity: only a full listing can show it.
    plug.attributes["power"].value = 7.5
    await poll(hass, freezer)
    assert hass.states.get(power).state != "7.5"  # the incremental poll does not list it
    runtime.coordinator._newest_activity = None
    await poll(hass, freezer)
    assert hass.states.get(power).state == "7.5"
    assert runtime.coordinator.changed_since is not None


async def test_another_hub_at_the_address_is_refused(hass: HomeAssistant, sim: Sim) -> None:
    """The address now reaches a different hub: setup fails instead of mixing devices."""
    entry = make_entry(sim, unique_id="the-old-hub")
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert sim.hub.hub_id in (entry.reason or "")


async def test_device_disabled_on_the_hub_is_unavailable(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A device its owner disabled on the hub: every entity of it unavailable, and back."""
    plug = first(sim, "outlet")
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    registry = er.async_get(hass)
    device_id = registry.async_get(switch).device_id
    entities = [
        entry.entity_id
        for entry in er.async_entries_for_device(registry, device_id)
        if hass.states.get(entry.entity_id) is not None
    ]
    assert len(entities) > 1  # the switch and its power/energy sensors
    plug.disabled = True
    sim.hub.set_attribute(plug.id, "power", 1.5)
    await poll(hass, freezer)
    assert {hass.states.get(e).state for e in entities} == {STATE_UNAVAILABLE}
    plug.disabled = False
    sim.hub.set_attribute(plug.id, "power", 2.5)
    await poll(hass, freezer)
    assert STATE_UNAVAILABLE not in {hass.states.get(e).state for e in entities}


async def test_entities_listen_with_their_device_as_context(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Entities register through the public listener context: their device key."""
    plug = first(sim, "outlet")
    contexts = set(runtime.coordinator.async_contexts())
    assert {str(plug.id), const.HUB_DEVICE_KEY} <= contexts
    runtime.coordinator.mark(str(plug.id))
    runtime.coordinator.async_update_listeners()
    assert runtime.coordinator.changed_devices() == frozenset({str(plug.id)})


async def test_coordinator_data_is_the_state_in_snapshots(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A poll makes a new `data` snapshot holding the hub's state; the old one is untouched.

    Unchanged device records are shared between snapshots, and a poll that changed nothing
    keeps the snapshot it had.
    """
    coordinator = runtime.coordinator
    plug = first(sim, "outlet")
    water = first(sim, "water")
    plug_id, water_id = str(plug.id), str(water.id)
    before = coordinator.data
    old_power = before.devices[plug_id].attr("power")
    sim.hub.set_attribute(plug.id, "power", 123.5)
    await poll(hass, freezer)
    after = coordinator.data
    assert after is not before
    assert after.devices[plug_id].attr("power") == 123.5
    assert before.devices[plug_id].attr("power") == old_power != 123.5
    assert after.devices[water_id] is before.devices[water_id]
    assert after.changed == frozenset({plug_id})
    assert after.modes == before.modes
    assert after.hub is before.hub
    with pytest.raises(FrozenInstanceError):
        after.devices[plug_id].label = "changed in place"  # type: ignore[misc]
    await poll(hass, freezer)
    await poll(hass, freezer)
    assert coordinator.data is after
