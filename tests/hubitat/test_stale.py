"""get_state marks a device silent for longer than its kind normally goes, or never heard from.

The mark says since when, and that the hub holds nothing newer; a device that just has not
changed is not marked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.backends.hubitat.coordinator import QUIET_SILENCE
from custom_components.mcp_gateway.core.localtime import local_iso
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state

from .conftest import Sim, SimFactory, entity_id, first, make_entry, poll, setup_entry


@dataclass(frozen=True)
class _Caller:
    user: MockUser
    client_name: str = "pytest-client"


async def test_marks_follow_how_long_each_kind_normally_goes(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """A battery sensor silent for three days is marked with its last word; a plug idle for
    three days (it speaks when it changes) is not; nor is the hub's own mode."""
    silent, idle = first(sim, "contact"), first(sim, "switch")
    heard = sim.hub.now() - timedelta(days=3)
    silent.last_activity = heard
    idle.last_activity = heard
    await setup_entry(hass, make_entry(sim))
    door = entity_id(hass, sim, f"{silent.id}_contact", "binary_sensor")
    plug = entity_id(hass, sim, f"{idle.id}_switch", "switch")
    mode = entity_id(hass, sim, "hub_mode", "select")

    result = await async_get_state(
        hass, _Caller(hass_admin_user), {"entity_ids": [door, plug, mode]}
    )
    items = {item["entity_id"]: item for item in result["entities"]}
    stale = items[door]["stale"]
    assert stale["since"] == local_iso(heard.replace(microsecond=0))
    assert "nothing newer" in stale["note"]
    assert "checks in within 2 days" in stale["note"]
    for other in (plug, mode):
        assert "stale" not in items[other]


async def test_the_mark_follows_the_clock_and_the_devices_word_read_after_read(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, hass_admin_user: MockUser
) -> None:
    """Reads keep what they learned of a device's silence, never past a change: a battery
    sensor quiet for 47 hours is not marked, two hours later (nothing new from the hub) it
    is, and once the hub hears from it (its battery, not the door's state) it is not."""
    device = first(sim, "contact")
    heard = sim.hub.now() - timedelta(hours=47)
    device.last_activity = heard
    await setup_entry(hass, make_entry(sim))
    door = entity_id(hass, sim, f"{device.id}_contact", "binary_sensor")
    caller = _Caller(hass_admin_user)

    async def door_item() -> dict[str, object]:
        result = await async_get_state(hass, caller, {"entity_ids": [door]})
        item: dict[str, object] = result["entities"][0]
        return item

    assert "stale" not in await door_item()
    assert "stale" not in await door_item()
    door_state = hass.states.get(door)
    freezer.tick(timedelta(hours=2))
    marked = await door_item()
    assert hass.states.get(door) is door_state  # no poll: only the clock moved
    assert marked["stale"] == {
        "since": local_iso(heard.replace(microsecond=0)),
        "note": marked["stale"]["note"],  # type: ignore[index]
    }
    assert "stale" in await door_item()

    battery = device.attributes["battery"].value
    assert sim.hub.set_attribute(device.id, "battery", battery - 1) is not None
    await poll(hass, freezer)
    assert hass.states.get(door) is door_state  # the door's state is the same object
    assert "stale" not in await door_item()


async def test_a_quiet_device_silent_for_weeks_is_marked(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """A mains device past its (long) usual silence is marked too."""
    plug_device = first(sim, "switch")
    plug_device.last_activity = sim.hub.now() - QUIET_SILENCE - timedelta(hours=1)
    await setup_entry(hass, make_entry(sim))
    plug = entity_id(hass, sim, f"{plug_device.id}_switch", "switch")
    result = await async_get_state(hass, _Caller(hass_admin_user), {"entity_ids": [plug]})
    (item,) = result["entities"]
    assert "7 days" in item["stale"]["note"]


async def test_the_demo_hub_marks_few_and_the_never_heard_sensor(
    hass: HomeAssistant, sim_factory: SimFactory, hass_admin_user: MockUser
) -> None:
    """The demo's hub (its simulator options): at most 15 % of its entities marked, the
    garage motion sensor the hub never heard from among them, saying so."""
    # As demo/home.py starts it.
    sim = await sim_factory(
        devices=40,
        seed=7,
        hub_name="Home Hub",
        custom_rule_engine=True,
        command_delay=0.1,
        hub_id=None,
    )
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    ids = [
        entity.entity_id
        for entity in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if hass.states.get(entity.entity_id) is not None  # not the disabled diagnostics
    ]
    result = await async_get_state(hass, _Caller(hass_admin_user), {"entity_ids": ids})
    entities = result["entities"]
    assert len(entities) == len(ids) > 60
    marked = [item for item in entities if "stale" in item]
    share = len(marked) / len(entities)
    print(f"demo hub: {len(marked)} of {len(entities)} entities marked stale")
    assert 0 < share <= 0.15, (len(marked), len(entities))
    never = next(device for device in sim.hub.devices.values() if device.last_activity is None)
    assert never.label == "Garage Motion Sensor"
    motion = entity_id(hass, sim, f"{never.id}_motion", "binary_sensor")
    item = next(item for item in entities if item["entity_id"] == motion)
    assert item["state"] == "unknown"
    assert item["stale"]["since"] is None
    assert "never heard" in item["stale"]["note"]


@pytest.mark.parametrize(("same", "queued"), [(False, False), (True, False), (True, True)])
async def test_a_thermostat_written_to_is_no_longer_marked(
    hass: HomeAssistant,
    sim_factory: SimFactory,
    hass_admin_user: MockUser,
    same: bool,
    queued: bool,
) -> None:
    """A thermostat silent past its usual time is marked; its answer to a setpoint command
    renews its lastActivity at the hub, even when the setpoint was already what it had (the
    device still answers, though the hub logs no event), and the read after it clears the mark.
    `queued`: the device answers only after the write was confirmed from what the hub held."""
    sim = await sim_factory(command_delay=None if queued else 0)
    device = first(sim, "thermostat")
    device.last_activity = sim.hub.now() - timedelta(days=3)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    climate = entity_id(hass, sim, f"{device.id}_thermostat", "climate")
    caller = _Caller(hass_admin_user)
    result = await async_get_state(hass, caller, {"entity_ids": [climate]})
    assert "stale" in result["entities"][0]
    heat = device.value("heatingSetpoint")
    # The setpoint it already has is given in °C (the hub's is °F).
    wanted = round((heat - 32) * 5 / 9, 1) if same else (25 if heat != 77 else 24)
    wrote = await async_set_state(
        hass, caller, {"updates": [{"entity_id": climate, "temperature": wanted}]}
    )
    assert wrote["results"][0]["status"] == "done", wrote
    if queued:
        assert sim.hub.now() - device.last_activity > timedelta(days=2)
        assert sim.hub.apply_pending() == 1  # the device answers
        await entry.runtime_data.coordinator.async_read_changes()  # the next read
    assert sim.hub.now() - device.last_activity < timedelta(minutes=1)
    if same:
        assert device.value("heatingSetpoint") == heat  # no change, so no event logged
    result = await async_get_state(hass, caller, {"entity_ids": [climate]})
    assert "stale" not in result["entities"][0], result
