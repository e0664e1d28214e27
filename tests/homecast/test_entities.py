"""Every platform of the Homecast backend against the simulator: states and actions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import random
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.alarm_control_panel import AlarmControlPanelState
from homeassistant.components.climate import HVACAction, HVACMode
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE, Platform
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)
from syrupy.assertion import SnapshotAssertion

from custom_components.mcp_gateway.backends.homecast.const import PLATFORMS
from custom_components.mcp_gateway.backends.homecast.runtime import HomecastRuntime
from simulators.homecast import tools as sim_tools
from simulators.homecast.model import Virtual, add_virtual
from tests.simulation import snapshot_one_platform

from .conftest import (
    Sim,
    SimFactory,
    device_of,
    entity_id,
    home_entity_id,
    home_tail,
    setup_entry,
    token_entry,
)

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


async def _loaded(hass: HomeAssistant, sim: Sim, **data: Any) -> MockConfigEntry:
    entry = token_entry(sim, **data)
    await setup_entry(hass, entry)
    return entry


async def _poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """One polling interval passes."""
    freezer.tick(timedelta(seconds=30))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


async def _call(hass: HomeAssistant, domain: str, service: str, target: str, **data: Any) -> None:
    await hass.services.async_call(domain, service, {ATTR_ENTITY_ID: target, **data}, blocking=True)


def _extra_virtuals(sim: Sim) -> None:
    """Virtual types the generated homes lack: timer, date, an adjustable text, read-only ones."""
    home = sim.state.homes[0]
    rng = random.Random(5)
    add_virtual(rng, home, "Laundry Timer", Virtual("timer", duration=600))
    add_virtual(rng, home, "Next Visit", Virtual("date"), initial="2026-12-24T18:00:00+00:00")
    add_virtual(rng, home, "Status Text", Virtual("text"), initial="All good")
    add_virtual(rng, home, "Locked Flag", Virtual("switch", controllable=False))
    add_virtual(rng, home, "Fixed Mode", Virtual("mode", options=["A", "B"], controllable=False))
    add_virtual(
        rng, home, "Fixed Date", Virtual("date", controllable=False), initial="2026-01-01T00:00:00"
    )


# --- snapshots ------------------------------------------------------------------------------


@pytest.mark.usefixtures("entity_registry_enabled_by_default")
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("vocabulary", ["current", "legacy"])
async def test_entity_snapshot(  # noqa: PLR0917 - pytest fixtures
    hass: HomeAssistant,
    sim_factory: SimFactory,
    entity_registry: er.EntityRegistry,
    snapshot: SnapshotAssertion,
    freezer: FrozenDateTimeFactory,
    vocabulary: str,
    platform: Platform,
) -> None:
    """All entities and states of one home, platform by platform, in both vocabularies."""
    freezer.move_to(NOW)
    sim = await sim_factory(homes=1, vocabulary=vocabulary)
    _extra_virtuals(sim)
    entry = token_entry(sim, entry_id="01HOMECASTSNAPSHOT")
    await snapshot_one_platform(
        hass, entity_registry, snapshot, entry, runtime_class=HomecastRuntime, platform=platform
    )


async def test_both_vocabularies_give_the_same_states(hass: HomeAssistant, sim: Sim) -> None:
    """An older server's raw names map onto the same HA states as the current names."""
    entry = await _loaded(hass, sim)
    registry = er.async_get(hass)

    def states() -> dict[str, Any]:
        out = {}
        for ent in er.async_entries_for_config_entry(registry, entry.entry_id):
            state = hass.states.get(ent.entity_id)
            if state is not None and "battery" not in ent.unique_id:
                out[ent.entity_id] = (state.state, dict(state.attributes))
        return out

    current = states()
    sim.state.vocabulary = "legacy"
    await entry.runtime_data.coordinator.async_refresh()
    legacy = states()
    home = entry.runtime_data.coordinator.data.homes[sim.home_uuids()[0]]
    assert any(acc.legacy for acc in home.accessories.values())
    assert any(key.startswith("climate.") for key in legacy)
    assert legacy == current
    # Older servers report no battery level: those sensors go away.
    lock = device_of(sim, "lock")
    with pytest.raises(AssertionError, match="no entity"):
        entity_id(hass, entry, sim, lock, "battery")


# --- lights, switches -----------------------------------------------------------------------


async def test_light(hass: HomeAssistant, sim: Sim) -> None:
    """Brightness 0-255 ↔ 0-100, hs and mireds, off."""
    entry = await _loaded(hass, sim)
    color = device_of(sim, "light", hue=None)
    white = device_of(sim, "light", color_temp=None)
    color_id = entity_id(hass, entry, sim, color, "light")
    white_id = entity_id(hass, entry, sim, white, "light")

    await _call(hass, "light", "turn_on", color_id, brightness=128, hs_color=(200, 60))
    values = sim.state.values(sim.state.homes[0].slug, color.slug)
    assert values["on"] is True
    assert values["brightness"] == 50
    assert (values["hue"], values["saturation"]) == (200, 60)
    state = hass.states.get(color_id)
    assert state.state == "on"
    assert state.attributes["brightness"] == 128
    assert state.attributes["hs_color"] == (200, 60)

    await _call(hass, "light", "turn_on", white_id, color_temp_kelvin=2700)
    assert sim.state.values(sim.state.homes[0].slug, white.slug)["color_temp"] == 370
    assert hass.states.get(white_id).attributes["color_temp_kelvin"] == 2703

    await _call(hass, "light", "turn_off", color_id)
    assert sim.state.values(sim.state.homes[0].slug, color.slug)["on"] is False
    assert hass.states.get(color_id).state == "off"


async def test_device_models_read_as_words(hass: HomeAssistant, sim: Sim) -> None:
    """Homecast's type slugs become readable models: "Climate", "Light sensor", "Accessory"."""
    entry = await _loaded(hass, sim)
    models = {
        device.model
        for device in dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    }
    assert "Light" in models
    for model in models:
        assert model, models
        assert model[0].isupper(), models
        assert "_" not in model, models
        assert model.casefold() != "other", models


async def test_switch_outlet_and_speaker(hass: HomeAssistant, sim: Sim) -> None:
    """Switches, outlets and speakers write on, off, mute and volume."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    for kind, suffix in (("switch", "switch"), ("outlet", "outlet")):
        acc = device_of(sim, kind)
        target = entity_id(hass, entry, sim, acc, suffix)
        await _call(hass, "switch", "turn_off", target)
        assert sim.state.values(home, acc.slug)["on"] is False
        await _call(hass, "switch", "turn_on", target)
        assert sim.state.values(home, acc.slug)["on"] is True
        assert hass.states.get(target).state == "on"
    speaker = device_of(sim, "speaker")
    await _call(
        hass, "number", "set_value", entity_id(hass, entry, sim, speaker, "volume"), value=30
    )
    await _call(hass, "switch", "turn_on", entity_id(hass, entry, sim, speaker, "mute"))
    assert sim.state.values(home, speaker.slug) == {"volume": 30, "mute": True}


# --- climate --------------------------------------------------------------------------------


async def test_heater_cooler(hass: HomeAssistant, sim: Sim) -> None:
    """Off is active=false; cool mode writes cool_target; auto writes the range."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    ac = device_of(sim, "climate", hvac_mode=None)
    target = entity_id(hass, entry, sim, ac, "climate")
    state = hass.states.get(target)
    assert state.state == HVACMode.COOL
    assert state.attributes["hvac_modes"] == [
        HVACMode.OFF,
        HVACMode.HEAT_COOL,
        HVACMode.HEAT,
        HVACMode.COOL,
    ]
    assert state.attributes["temperature"] == 22.0

    await _call(hass, "climate", "set_temperature", target, temperature=20.5)
    assert sim.state.values(home, ac.slug)["cool_target"] == 20.5

    await _call(hass, "climate", "set_hvac_mode", target, hvac_mode=HVACMode.OFF)
    assert sim.state.values(home, ac.slug)["active"] is False
    state = hass.states.get(target)
    assert state.state == HVACMode.OFF

    await _call(hass, "climate", "set_hvac_mode", target, hvac_mode=HVACMode.HEAT)
    values = sim.state.values(home, ac.slug)
    assert (values["active"], values["hvac_mode"]) == (True, "heat")
    await _call(hass, "climate", "set_temperature", target, temperature=18)
    assert sim.state.values(home, ac.slug)["heat_target"] == 18.0

    await _call(
        hass,
        "climate",
        "set_temperature",
        target,
        hvac_mode=HVACMode.HEAT_COOL,
        target_temp_low=17,
        target_temp_high=25,
    )
    values = sim.state.values(home, ac.slug)
    assert (values["hvac_mode"], values["heat_target"], values["cool_target"]) == (
        "auto",
        17.0,
        25.0,
    )
    state = hass.states.get(target)
    assert (state.attributes["target_temp_low"], state.attributes["target_temp_high"]) == (17, 25)
    with pytest.raises(ServiceValidationError):
        await _call(hass, "climate", "set_temperature", target, temperature=21)


async def test_heater_cooler_action_and_humidity(hass: HomeAssistant, sim: Sim) -> None:
    """A heater-cooler shows its action and the humidity it reports."""
    entry = await _loaded(hass, sim)
    ac = device_of(sim, "climate", hvac_mode=None)
    state = hass.states.get(entity_id(hass, entry, sim, ac, "climate"))
    expected = {"cooling": HVACAction.COOLING, "idle": HVACAction.IDLE}[ac.values["hvac_state"]]
    assert state.attributes["hvac_action"] == expected
    assert state.attributes["current_humidity"] == ac.values["relative_humidity"]
    humidity = hass.states.get(entity_id(hass, entry, sim, ac, "humidity"))
    assert float(humidity.state) == ac.values["relative_humidity"]


async def test_thermostat_keys_the_server_does_not_declare(hass: HomeAssistant, sim: Sim) -> None:
    """set_state's schema (as Homecast documents it) has no heating_cooling_target: not sent."""
    home = sim.state.homes[0].slug
    stat = device_of(sim, "climate", heating_cooling_target=None)
    entry = await _loaded(hass, sim)
    target = entity_id(hass, entry, sim, stat, "climate")
    sim.stats.reset()
    with pytest.raises(HomeAssistantError, match="takes no heating_cooling_target"):
        await _call(hass, "climate", "set_hvac_mode", target, hvac_mode=HVACMode.OFF)
    assert sim.stats.tools["set_state"] == 0
    assert sim.state.values(home, stat.slug)["heating_cooling_target"] != 0


async def test_thermostat(hass: HomeAssistant, sim: Sim, monkeypatch: pytest.MonkeyPatch) -> None:
    """Raw HomeKit thermostat characteristics: heating_cooling_target and target_temp.

    Written where the server's set_state schema declares them.
    """
    declared = sim_tools.TOOLS_BY_NAME["set_state"].schema["properties"]["updates"]["items"]
    monkeypatch.setitem(declared["properties"], "heating_cooling_target", {"type": "integer"})
    monkeypatch.setitem(declared["properties"], "target_temp", {"type": "number"})
    home = sim.state.homes[0].slug
    stat = device_of(sim, "climate", heating_cooling_target=None)
    # One that lists its valid values, cooling among them: HA 2026 refuses a mode the entity
    # does not offer (2025.4 only warns), and without `_options` it offers only off and heat.
    stat.options["heating_cooling_target"] = [0, 1, 2, 3]
    entry = await _loaded(hass, sim)
    target = entity_id(hass, entry, sim, stat, "climate")
    state = hass.states.get(target)
    assert state.state == HVACMode.HEAT
    assert state.attributes["hvac_modes"] == [
        HVACMode.OFF,
        HVACMode.HEAT,
        HVACMode.COOL,
        HVACMode.HEAT_COOL,
    ]
    assert state.attributes["hvac_action"] == HVACAction.HEATING
    await _call(hass, "climate", "set_hvac_mode", target, hvac_mode=HVACMode.COOL)
    assert sim.state.values(home, stat.slug)["heating_cooling_target"] == 2
    await _call(hass, "climate", "set_temperature", target, temperature=23)
    assert sim.state.values(home, stat.slug)["target_temp"] == 23.0
    await _call(hass, "climate", "set_temperature", target, temperature=19, hvac_mode=HVACMode.OFF)
    values = sim.state.values(home, stat.slug)
    assert (values["target_temp"], values["heating_cooling_target"]) == (19.0, 0)
    assert hass.states.get(target).attributes["hvac_action"] == HVACAction.OFF


# --- lock, alarm, cover, fan, valve ---------------------------------------------------------


async def test_lock_and_alarm(hass: HomeAssistant, sim: Sim) -> None:
    """Locks lock and unlock; alarm panels arm and disarm."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    lock = device_of(sim, "lock")
    lock_id = entity_id(hass, entry, sim, lock, "lock")
    assert hass.states.get(lock_id).state == "locked"
    await _call(hass, "lock", "unlock", lock_id)
    assert sim.state.values(home, lock.slug)["lock_target"] is False
    assert hass.states.get(lock_id).state == "unlocked"
    await _call(hass, "lock", "lock", lock_id)
    assert sim.state.values(home, lock.slug)["locked"] is True

    alarm = device_of(sim, "alarm")
    alarm_id = entity_id(hass, entry, sim, alarm, "alarm")
    for service, value, ha_state in (
        ("alarm_arm_away", "away", AlarmControlPanelState.ARMED_AWAY),
        ("alarm_arm_home", "home", AlarmControlPanelState.ARMED_HOME),
        ("alarm_arm_night", "night", AlarmControlPanelState.ARMED_NIGHT),
        ("alarm_disarm", "off", AlarmControlPanelState.DISARMED),
    ):
        await _call(hass, "alarm_control_panel", service, alarm_id)
        assert sim.state.values(home, alarm.slug)["alarm_target"] == value
        await entry.runtime_data.coordinator.async_refresh()
        assert hass.states.get(alarm_id).state == ha_state


async def test_alarm_transitions(hass: HomeAssistant, sim: Sim) -> None:
    """A target ahead of the state shows arming/disarming; triggered wins."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    alarm = device_of(sim, "alarm")
    alarm_id = entity_id(hass, entry, sim, alarm, "alarm")
    coordinator = entry.runtime_data.coordinator
    for values, expected in (
        ({"alarm_state": "off", "alarm_target": "away"}, AlarmControlPanelState.ARMING),
        ({"alarm_state": "away", "alarm_target": "off"}, AlarmControlPanelState.DISARMING),
        ({"alarm_state": "triggered", "alarm_target": "away"}, AlarmControlPanelState.TRIGGERED),
    ):
        sim.state.accessory(home, alarm.slug).values.update(values)
        await coordinator.async_refresh()
        assert hass.states.get(alarm_id).state == expected


async def test_cover_fan_valve(hass: HomeAssistant, sim: Sim) -> None:
    """Covers, fans and valves write their targets and show their states."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    blind = device_of(sim, "blind")
    cover_id = entity_id(hass, entry, sim, blind, "cover")
    await _call(hass, "cover", "set_cover_position", cover_id, position=40)
    assert sim.state.values(home, blind.slug)["target"] == 40
    await _call(hass, "cover", "close_cover", cover_id)
    assert sim.state.values(home, blind.slug)["target"] == 0
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(cover_id).state == "closed"
    await _call(hass, "cover", "open_cover", cover_id)
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(cover_id).attributes["current_position"] == 100
    sim.state.accessory(home, blind.slug).values["position_state"] = 0
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(cover_id).state == "closing"

    fan = device_of(sim, "fan")
    fan_id = entity_id(hass, entry, sim, fan, "fan")
    await _call(hass, "fan", "turn_on", fan_id, percentage=75)
    assert sim.state.values(home, fan.slug) == {"active": True, "speed": 75}
    await _call(hass, "fan", "set_percentage", fan_id, percentage=0)
    assert sim.state.values(home, fan.slug)["active"] is False
    await _call(hass, "fan", "set_percentage", fan_id, percentage=20)
    assert sim.state.values(home, fan.slug) == {"active": True, "speed": 20}
    await _call(hass, "fan", "turn_off", fan_id)
    assert hass.states.get(fan_id).state == "off"

    valve = device_of(sim, "valve")
    valve_id = entity_id(hass, entry, sim, valve, "valve")
    await _call(hass, "valve", "open_valve", valve_id)
    assert sim.state.values(home, valve.slug)["active"] is True
    assert hass.states.get(valve_id).state == "open"
    await _call(hass, "valve", "close_valve", valve_id)
    assert sim.state.values(home, valve.slug)["in_use"] == 0


# --- sensors, events ------------------------------------------------------------------------


async def test_sensors_follow_polls(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """Motion, contact, temperature change in the simulator and show after one poll."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    motion = device_of(sim, "motion")
    contact = device_of(sim, "contact")
    temp = device_of(sim, "temperature")
    sim.state.external_change(home, motion.slug, motion=True)
    sim.state.external_change(home, contact.slug, contact=1, low_battery=True)
    sim.state.external_change(home, temp.slug, current_temp=12.3)
    await _poll(hass, freezer)
    assert hass.states.get(entity_id(hass, entry, sim, motion, "motion")).state == "on"
    assert hass.states.get(entity_id(hass, entry, sim, contact, "contact")).state == "on"
    assert hass.states.get(entity_id(hass, entry, sim, contact, "low_battery")).state == "on"
    assert hass.states.get(entity_id(hass, entry, sim, temp, "temperature")).state == "12.3"


async def test_doorbell_and_button_events(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A press seen by a poll fires once with its type; no press, no event."""
    freezer.move_to(NOW)
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    bell = device_of(sim, "doorbell")
    button = device_of(sim, "button")
    bell_id = entity_id(hass, entry, sim, bell, "doorbell")
    button_id = entity_id(hass, entry, sim, button, "button")
    assert hass.states.get(bell_id).state == "unknown"

    sim.state.press(home, bell.slug, 0)
    sim.state.press(home, button.slug, 2)
    await _poll(hass, freezer)
    bell_state = hass.states.get(bell_id)
    # A doorbell's single press is a ring (HA's doorbell event type); a button's stays a press.
    assert bell_state.attributes["event_type"] == "ring"
    fired_at = bell_state.state
    assert hass.states.get(button_id).attributes["event_type"] == "long_press"

    await _poll(hass, freezer)  # nothing pressed: nothing fires again
    assert hass.states.get(bell_id).state == fired_at

    sim.state.press(home, bell.slug, 1)
    await _poll(hass, freezer)
    assert hass.states.get(bell_id).attributes["event_type"] == "double_press"
    assert hass.states.get(bell_id).state != fired_at


# --- virtual accessories --------------------------------------------------------------------


async def test_virtual_accessories(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """Mode, number, counter, switch, timer, text and date are native entities.

    They come as get_state sends them: type "other" (a switch: "switch") with their value
    key and no definition, so a mode offers the options it has been seen in.
    """
    _extra_virtuals(sim)
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]

    def virt(name: str) -> Any:
        return next(a for a in home.virtuals() if a.name == name)

    mode = virt("House Mode")
    mode_id = entity_id(hass, entry, sim, mode, "virtual_mode")
    assert hass.states.get(mode_id).attributes["options"] == ["Home"]
    sim.state.external_change(home.slug, mode.slug, virtual_mode="Night")
    await _poll(hass, freezer)
    assert hass.states.get(mode_id).state == "Night"
    assert hass.states.get(mode_id).attributes["options"] == ["Home", "Night"]
    await _call(hass, "select", "select_option", mode_id, option="Home")
    assert mode.values["virtual_mode"] == "Home"

    number = virt("Target Humidity")
    number_id = entity_id(hass, entry, sim, number, "virtual_number")
    assert float(hass.states.get(number_id).state) == 55  # no limits in get_state: a box
    await _call(hass, "number", "set_value", number_id, value=60)
    assert number.values["virtual_number"] == 60

    counter = virt("Visit Counter")
    inc = entity_id(hass, entry, sim, counter, "virtual_count_increment")
    await _call(hass, "button", "press", inc)
    await _call(hass, "button", "press", inc)
    assert counter.values["virtual_count"] == 2
    assert hass.states.get(entity_id(hass, entry, sim, counter, "virtual_count")).state == "2"
    await _call(
        hass, "button", "press", entity_id(hass, entry, sim, counter, "virtual_count_reset")
    )
    assert counter.values["virtual_count"] == 0

    guest = virt("Guest Switch")
    await _call(hass, "switch", "turn_on", entity_id(hass, entry, sim, guest, "switch"))
    assert guest.values["on"] is True

    timer = virt("Laundry Timer")
    timer_id = entity_id(hass, entry, sim, timer, "virtual_timer")
    await _call(hass, "switch", "turn_on", timer_id)
    assert timer.values["virtual_timer"] == "active"
    await _call(hass, "switch", "turn_off", timer_id)
    assert timer.values["virtual_timer"] == "idle"

    text = virt("Status Text")
    text_id = entity_id(hass, entry, sim, text, "virtual_text")
    assert hass.states.get(text_id).state == "All good"
    await _call(hass, "text", "set_value", text_id, value="Away till Friday")
    assert text.values["virtual_text"] == "Away till Friday"

    date = virt("Next Visit")
    date_id = entity_id(hass, entry, sim, date, "virtual_datetime")
    assert hass.states.get(date_id).state == "2026-12-24T18:00:00+00:00"
    # fixed date: a value written and read back, never compared with the clock
    await _call(hass, "datetime", "set_value", date_id, datetime="2027-01-02T10:30:00+00:00")
    assert date.values["virtual_datetime"] == "2027-01-02T10:30:00+00:00"

    # Not adjustable here: read-only entities, no controls.
    assert (
        hass.states.get(entity_id(hass, entry, sim, virt("Locked Flag"), "virtual_state")).state
        == "off"
    )
    assert (
        hass.states.get(entity_id(hass, entry, sim, virt("Fixed Mode"), "virtual_value")).state
        == "A"
    )
    assert (
        hass.states.get(entity_id(hass, entry, sim, virt("Away Note"), "virtual_value")).state == ""
    )
    fixed_date = hass.states.get(entity_id(hass, entry, sim, virt("Fixed Date"), "virtual_value"))
    assert fixed_date.state == "2026-01-01T00:00:00+00:00"


async def test_virtual_write_refused(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A value the relay refuses is an HA error naming the reason."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]
    mode = next(a for a in home.virtuals() if a.name == "House Mode")
    sim.state.external_change(home.slug, mode.slug, virtual_mode="Night")
    await _poll(hass, freezer)  # "Night" seen: offered from now on
    mode.virtual.options = ["Home", "Away"]  # changed behind our back: "Night" is gone
    with pytest.raises(HomeAssistantError, match="INVALID_VALUE"):
        await _call(
            hass,
            "select",
            "select_option",
            entity_id(hass, entry, sim, mode, "virtual_mode"),
            option="Night",
        )


# --- scenes and automations -----------------------------------------------------------------


async def test_scene_runs(hass: HomeAssistant, sim: Sim) -> None:
    """Activating a scene applies its actions."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]
    movie = home.find_scene("Movie Time")
    light = home.find(movie.actions[0]["accessory"])
    scene_id = home_entity_id(hass, entry, "scene", f"home_{home_tail(sim)}_scene_movie_time")
    await _call(hass, "scene", "turn_on", scene_id)
    assert light.values["on"] is True
    assert light.values["brightness"] == 20


async def test_automation_switches(hass: HomeAssistant, sim: Sim) -> None:
    """Both engines: enable/disable, and the definition as attributes."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]
    tail = home_tail(sim)
    homekit = home.automations[0]
    homecast = home.hc_automations[0]
    hk_id = home_entity_id(hass, entry, "switch", f"home_{tail}_automation_{homekit['id'].lower()}")
    hc_id = home_entity_id(
        hass, entry, "switch", f"home_{tail}_hc_automation_{homecast['id'].lower()}"
    )
    hk_state = hass.states.get(hk_id)
    assert hk_state.state == "on"
    assert hk_state.attributes["engine"] == "homekit"
    assert hk_state.attributes["trigger"] == homekit["trigger"]
    hc_state = hass.states.get(hc_id)
    assert hc_state.attributes["engine"] == "homecast"
    assert hc_state.attributes["triggers"] == homecast["triggers"]
    assert hc_state.attributes["mode"] == "restart"

    await _call(hass, "switch", "turn_off", hk_id)
    await _call(hass, "switch", "turn_off", hc_id)
    assert home.automations[0]["enabled"] is False
    assert home.hc_automations[0]["enabled"] is False
    assert hass.states.get(hk_id).state == "off"
    await _call(hass, "switch", "turn_on", hc_id)
    assert home.hc_automations[0]["enabled"] is True


async def test_view_only_homekit_automations(hass: HomeAssistant, sim: Sim) -> None:
    """A home whose relay may not edit HomeKit automations says so; enabling fails clearly."""
    sim.state.homes[0].view_only = True
    entry = await _loaded(hass, sim)
    tail = home_tail(sim)
    automation = sim.state.homes[0].automations[0]
    target = home_entity_id(
        hass, entry, "switch", f"home_{tail}_automation_{automation['id'].lower()}"
    )
    assert hass.states.get(target).attributes["read_only"] is True
    with pytest.raises(HomeAssistantError, match="INSUFFICIENT_HOMEKIT_PRIVILEGES"):
        await _call(hass, "switch", "turn_off", target)


# --- availability of single accessories -----------------------------------------------------


async def test_accessory_without_values(hass: HomeAssistant, sim: Sim) -> None:
    """An accessory HomeKit has no value for comes back empty: its entities are unavailable.

    (An accessory that stops answering keeps HomeKit's cached values: see test_failures.)
    """
    entry = await _loaded(hass, sim)
    lamp = device_of(sim, "light")
    lamp_id = entity_id(hass, entry, sim, lamp, "light")
    values = dict(lamp.values)
    lamp.values.clear()
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(lamp_id).state == STATE_UNAVAILABLE
    lamp.values.update(values)
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(lamp_id).state in ("on", "off")


async def test_optimistic_state_while_the_relay_is_slow(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The relay applies writes later: HA shows the expected state at once, the poll confirms."""
    sim = await sim_factory(write_delay=30)
    entry = await _loaded(hass, sim)
    acc = device_of(sim, "switch")
    target = entity_id(hass, entry, sim, acc, "switch")
    acc.values["on"] = False
    await entry.runtime_data.coordinator.async_refresh()
    await _call(hass, "switch", "turn_on", target)
    assert sim.state.pending_writes == 1
    assert acc.values["on"] is False
    assert hass.states.get(target).state == "on"
    sim.state.flush()
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(target).state == "on"
