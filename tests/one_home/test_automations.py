"""Automations a user writes in YAML, each across two backends, fired end to end.

A trigger is injected into one simulator as a person or sensor would cause it; HA notices it
by its normal polling (time moved with `freezer`), the automation runs, and its action must
arrive in another simulator. Before the injection the target must not have changed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from homeassistant.components.alarm_control_panel import AlarmControlPanelState
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml import parse_yaml
import pytest

from .conftest import MONDAY_6AM, OneHome

# A ticking clock: loop timers (Hubitat's write batching) expire; `advance` makes the jumps.
pytestmark = pytest.mark.freeze_time(MONDAY_6AM, tick=True)


async def _automations(hass: HomeAssistant, text: str) -> None:
    """Set up automations from YAML text, the way they sit in automations.yaml."""
    config = parse_yaml(text)
    assert isinstance(config, list)
    assert await async_setup_component(hass, "automation", {"automation": config})
    await hass.async_block_till_done()


def _homecast_light(home: OneHome) -> tuple[Any, Any, str]:
    """A plain Homecast light (no group, not virtual), its home and its entity id."""
    sim_home = home.homecast.homes[0]
    light = next(acc for acc in sim_home.devices() if acc.kind == "light")
    return sim_home, light, _homecast_entity(home, sim_home, light, "light", "light")


def _homecast_entity(home: OneHome, sim_home: Any, acc: Any, platform: str, suffix: str) -> str:
    """Homecast keys are the home's UUID tail, the accessory's key tail and the entity kind."""
    tail = sim_home.uuid.replace("-", "")[-4:].lower()
    key = f"{tail}_{acc.slug.rsplit('_', 1)[-1]}_{suffix}"
    return home.entity_id(platform, home.homecast_entry, key)


async def test_hubitat_motion_turns_on_homecast_light(one_home: OneHome) -> None:
    """Motion in the hallway (Hubitat) turns on a lamp (Homecast)."""
    home = one_home
    hass = home.hass
    sensor = home.hubitat_device("motion")
    sim_home, light, light_id = _homecast_light(home)
    motion_id = home.entity_id("binary_sensor", home.hubitat_entry, f"{sensor.id}_motion")
    # A quiet house: no motion, the lamp off (changed on the devices, read by HA's polls).
    home.hub.set_attribute(sensor.id, "motion", "inactive")
    home.homecast.external_change(sim_home.slug, light.slug, on=False)
    await home.advance()
    assert hass.states.get(motion_id).state == STATE_OFF
    assert hass.states.get(light_id).state == STATE_OFF

    await _automations(
        hass,
        f"""
- id: hallway_motion_light
  alias: Hallway motion turns on the lamp
  triggers:
    - trigger: state
      entity_id: {motion_id}
      from: "off"
      to: "on"
  actions:
    - action: light.turn_on
      target:
        entity_id: {light_id}
""",
    )
    await home.advance()  # a poll without motion: nothing happens
    assert light.values["on"] is False

    home.hub.set_attribute(sensor.id, "motion", "active")
    assert light.values["on"] is False  # HA has not polled the hub yet
    assert hass.states.get(motion_id).state == STATE_OFF

    await home.advance()
    assert hass.states.get(motion_id).state == STATE_ON
    assert light.values["on"] is True
    assert hass.states.get(light_id).state == STATE_ON


async def test_robine_ringing_opens_shade_and_disarms_hsm(one_home: OneHome) -> None:
    """The weekday alarm rings at 06:45: the bedroom shade opens and HSM is disarmed."""
    home = one_home
    hass = home.hass
    hub = home.hub
    shade = home.hubitat_device("shade")
    shade_id = home.entity_id("cover", home.hubitat_entry, f"{shade.id}_shade")
    hsm_id = home.entity_id("alarm_control_panel", home.hubitat_entry, "hub_hsm")
    wake_id = home.entity_id("event", home.robine_entry, "wake_session")
    # Night: the shade is closed and HSM armed at the keypad, as a person would leave it.
    hub.set_attribute(shade.id, "windowShade", "closed")
    hub.set_attribute(shade.id, "position", 0)
    hub.arm_hsm("armNight")
    await home.advance()
    assert hub.hsm_status == "armedNight"
    assert hass.states.get(shade_id).state == "closed"
    assert hass.states.get(hsm_id).state == AlarmControlPanelState.ARMED_NIGHT

    await _automations(
        hass,
        f"""
- id: good_morning
  alias: Good morning when the alarm rings
  triggers:
    - trigger: state
      entity_id: {wake_id}
      not_from: unavailable
  conditions:
    - condition: state
      entity_id: {wake_id}
      attribute: event_type
      state: ringing
  actions:
    - action: cover.open_cover
      target:
        entity_id: {shade_id}
    - action: alarm_control_panel.alarm_disarm
      target:
        entity_id: {hsm_id}
""",
    )
    # Until 06:44:30 Berlin: polls of all three backends, no alarm rings yet.
    await home.advance_to(MONDAY_6AM + timedelta(minutes=44, seconds=30))
    assert home.robine.active_session is None
    assert hass.states.get(wake_id).state == STATE_UNKNOWN  # no event has fired
    assert shade.value("windowShade") == "closed"
    assert hub.hsm_status == "armedNight"

    await home.advance(60)  # 06:45:30: the clock rang at 06:45
    assert home.robine.active_session is not None
    assert home.robine.active_session.state == "ringing"
    assert hass.states.get(wake_id).attributes["event_type"] == "ringing"
    assert shade.value("windowShade") == "open"
    assert hub.hsm_status == "disarmed"
    assert hass.states.get(hsm_id).state == AlarmControlPanelState.DISARMED
    # HA shows the shade travelling until its next poll reads where the hub says it ended.
    await home.advance()
    assert hass.states.get(shade_id).state == "open"
    assert hass.states.get(hsm_id).state == AlarmControlPanelState.DISARMED


async def test_homecast_mode_drives_hubitat_switch(one_home: OneHome) -> None:
    """Setting the House Mode (Homecast virtual accessory) to Away turns a switch on (Hubitat)."""
    home = one_home
    hass = home.hass
    sim_home = home.homecast.homes[0]
    mode = next(acc for acc in sim_home.virtuals() if acc.name == "House Mode")
    mode_id = _homecast_entity(home, sim_home, mode, "select", "virtual_mode")
    switch = home.hubitat_device("switch")
    switch_id = home.entity_id("switch", home.hubitat_entry, f"{switch.id}_switch")
    home.hub.set_attribute(switch.id, "switch", "off")
    await home.advance()
    assert hass.states.get(mode_id).state == "Home"
    assert hass.states.get(switch_id).state == STATE_OFF

    await _automations(
        hass,
        f"""
- id: away_mode_switch
  alias: Away mode turns on the presence simulation switch
  triggers:
    - trigger: state
      entity_id: {mode_id}
      to: Away
  actions:
    - action: switch.turn_on
      target:
        entity_id: {switch_id}
""",
    )
    # Another mode change is not Away: the switch stays off.
    home.homecast.external_change(sim_home.slug, mode.slug, virtual_mode="Night")
    await home.advance()
    assert hass.states.get(mode_id).state == "Night"
    assert switch.value("switch") == "off"

    home.homecast.external_change(sim_home.slug, mode.slug, virtual_mode="Away")
    assert switch.value("switch") == "off"  # HA has not polled Homecast yet
    await home.advance()
    assert hass.states.get(mode_id).state == "Away"
    assert switch.value("switch") == "on"
    assert hass.states.get(switch_id).state == STATE_ON
