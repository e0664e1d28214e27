"""HA actions reach the simulated hub as device commands, and the UI shows them at once."""

from __future__ import annotations

from typing import Any

from homeassistant.components.alarm_control_panel import (
    DOMAIN as ALARM_DOMAIN,
    SERVICE_ALARM_ARM_AWAY,
    SERVICE_ALARM_DISARM,
)
from homeassistant.components.climate import (
    ATTR_FAN_MODE,
    ATTR_HVAC_MODE,
    ATTR_TARGET_TEMP_HIGH,
    ATTR_TARGET_TEMP_LOW,
    DOMAIN as CLIMATE_DOMAIN,
    SERVICE_SET_FAN_MODE,
    SERVICE_SET_HVAC_MODE,
    SERVICE_SET_TEMPERATURE,
    HVACMode,
)
from homeassistant.components.cover import ATTR_POSITION, DOMAIN as COVER_DOMAIN
from homeassistant.components.fan import ATTR_PERCENTAGE, DOMAIN as FAN_DOMAIN
from homeassistant.components.light import (
    ATTR_BRIGHTNESS,
    ATTR_COLOR_TEMP_KELVIN,
    ATTR_HS_COLOR,
    ATTR_TRANSITION,
    DOMAIN as LIGHT_DOMAIN,
)
from homeassistant.components.lock import DOMAIN as LOCK_DOMAIN
from homeassistant.components.select import ATTR_OPTION, DOMAIN as SELECT_DOMAIN
from homeassistant.components.switch import DOMAIN as SWITCH_DOMAIN
from homeassistant.components.valve import DOMAIN as VALVE_DOMAIN
from homeassistant.const import (
    ATTR_ENTITY_ID,
    ATTR_TEMPERATURE,
    SERVICE_CLOSE_COVER,
    SERVICE_CLOSE_VALVE,
    SERVICE_LOCK,
    SERVICE_OPEN_COVER,
    SERVICE_OPEN_VALVE,
    SERVICE_SELECT_OPTION,
    SERVICE_SET_COVER_POSITION,
    SERVICE_STOP_COVER,
    SERVICE_TURN_OFF,
    SERVICE_TURN_ON,
    SERVICE_UNLOCK,
)
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
import pytest

from .conftest import Sim, entity_id, first


async def _call(hass: HomeAssistant, domain: str, service: str, target: str, **data: Any) -> None:
    await hass.services.async_call(domain, service, {ATTR_ENTITY_ID: target, **data}, blocking=True)


@pytest.mark.usefixtures("runtime")
async def test_rule_entities_say_what_they_do(hass: HomeAssistant, sim: Sim) -> None:
    """A rule's switch enables it and its button runs it: their names say so."""
    switch = hass.states.get(entity_id(hass, sim, "rule_101", "switch"))
    button = hass.states.get(entity_id(hass, sim, "rule_101_run", "button"))
    assert switch.attributes["friendly_name"] == "Goodnight Rule enabled"
    assert button.attributes["friendly_name"] == "Goodnight Run rule"


@pytest.mark.usefixtures("runtime")
async def test_light_commands(hass: HomeAssistant, sim: Sim) -> None:
    """on, setLevel (with duration), setColor (hue 0-100), setColorTemperature, off."""
    bulb = first(sim, "color_light")
    light = entity_id(hass, sim, f"{bulb.id}_light", "light")

    await _call(hass, LIGHT_DOMAIN, SERVICE_TURN_ON, light, **{ATTR_BRIGHTNESS: 128})
    assert bulb.value("level") == 50
    assert bulb.value("switch") == "on"
    assert hass.states.get(light).attributes[ATTR_BRIGHTNESS] == 128

    await _call(hass, LIGHT_DOMAIN, SERVICE_TURN_ON, light, **{ATTR_HS_COLOR: (180, 40)})
    assert (bulb.value("hue"), bulb.value("saturation")) == (50, 40)
    assert bulb.value("colorMode") == "RGB"
    assert hass.states.get(light).attributes["color_mode"] == "hs"

    await _call(hass, LIGHT_DOMAIN, SERVICE_TURN_ON, light, **{ATTR_COLOR_TEMP_KELVIN: 3000})
    assert bulb.value("colorTemperature") == 3000
    assert hass.states.get(light).attributes["color_mode"] == "color_temp"

    await _call(
        hass, LIGHT_DOMAIN, SERVICE_TURN_ON, light, **{ATTR_BRIGHTNESS: 255, ATTR_TRANSITION: 2}
    )
    assert bulb.value("level") == 100

    await _call(hass, LIGHT_DOMAIN, SERVICE_TURN_OFF, light)
    assert bulb.value("switch") == "off"
    assert hass.states.get(light).state == "off"

    await _call(hass, LIGHT_DOMAIN, SERVICE_TURN_ON, light)
    assert bulb.value("switch") == "on"


@pytest.mark.usefixtures("runtime")
async def test_switch_lock_valve(hass: HomeAssistant, sim: Sim) -> None:
    """Switches, locks and valves take their one-word commands."""
    plug = first(sim, "outlet")
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    target = "off" if plug.value("switch") == "on" else "on"
    await _call(hass, SWITCH_DOMAIN, f"turn_{target}", switch)
    assert plug.value("switch") == target
    assert hass.states.get(switch).state == target

    door_lock = first(sim, "lock")
    lock = entity_id(hass, sim, f"{door_lock.id}_lock", "lock")
    await _call(hass, LOCK_DOMAIN, SERVICE_UNLOCK, lock)
    assert door_lock.value("lock") == "unlocked"
    assert hass.states.get(lock).state == "unlocked"
    await _call(hass, LOCK_DOMAIN, SERVICE_LOCK, lock)
    assert door_lock.value("lock") == "locked"

    water = first(sim, "valve")
    valve = entity_id(hass, sim, f"{water.id}_valve", "valve")
    await _call(hass, VALVE_DOMAIN, SERVICE_CLOSE_VALVE, valve)
    assert water.value("valve") == "closed"
    assert hass.states.get(valve).state == "closed"
    await _call(hass, VALVE_DOMAIN, SERVICE_OPEN_VALVE, valve)
    assert water.value("valve") == "open"


@pytest.mark.usefixtures("runtime")
async def test_covers(hass: HomeAssistant, sim: Sim) -> None:
    """Shades: open/close/position/stop; garage doors open and close."""
    shade_device = first(sim, "shade")
    shade = entity_id(hass, sim, f"{shade_device.id}_shade", "cover")
    await _call(hass, COVER_DOMAIN, SERVICE_SET_COVER_POSITION, shade, **{ATTR_POSITION: 30})
    assert shade_device.value("position") == 30
    assert hass.states.get(shade).attributes["current_position"] == 30
    await _call(hass, COVER_DOMAIN, SERVICE_CLOSE_COVER, shade)
    assert shade_device.value("windowShade") == "closed"
    await _call(hass, COVER_DOMAIN, SERVICE_OPEN_COVER, shade)
    assert shade_device.value("windowShade") == "open"
    await _call(hass, COVER_DOMAIN, SERVICE_STOP_COVER, shade)

    garage = first(sim, "garage")
    door = entity_id(hass, sim, f"{garage.id}_garage_door", "cover")
    await _call(hass, COVER_DOMAIN, SERVICE_OPEN_COVER, door)
    assert garage.value("door") == "open"
    await _call(hass, COVER_DOMAIN, SERVICE_CLOSE_COVER, door)
    assert garage.value("door") == "closed"
    # Until the next poll the UI shows the expected movement.
    assert hass.states.get(door).state == "closing"


@pytest.mark.usefixtures("runtime")
async def test_fan(hass: HomeAssistant, sim: Sim) -> None:
    """Percentages map onto the five named speeds."""
    fan_device = first(sim, "fan")
    fan = entity_id(hass, sim, f"{fan_device.id}_fan", "fan")
    await _call(hass, FAN_DOMAIN, SERVICE_TURN_ON, fan, **{ATTR_PERCENTAGE: 100})
    assert fan_device.value("speed") == "high"
    assert hass.states.get(fan).attributes[ATTR_PERCENTAGE] == 100
    await _call(hass, FAN_DOMAIN, "set_percentage", fan, **{ATTR_PERCENTAGE: 20})
    assert fan_device.value("speed") == "low"
    await _call(hass, FAN_DOMAIN, SERVICE_TURN_OFF, fan)
    assert fan_device.value("switch") == "off"
    assert hass.states.get(fan).state == "off"
    await _call(hass, FAN_DOMAIN, SERVICE_TURN_ON, fan)
    assert fan_device.value("switch") == "on"
    await _call(hass, FAN_DOMAIN, "set_percentage", fan, **{ATTR_PERCENTAGE: 0})
    assert fan_device.value("switch") == "off"


@pytest.mark.usefixtures("runtime")
async def test_climate(hass: HomeAssistant, sim: Sim) -> None:
    """Modes, setpoints (HA's °C become the hub's °F) and fan modes."""
    thermostat = first(sim, "thermostat")
    climate = entity_id(hass, sim, f"{thermostat.id}_thermostat", "climate")

    await _call(hass, CLIMATE_DOMAIN, SERVICE_SET_HVAC_MODE, climate, **{ATTR_HVAC_MODE: "cool"})
    assert thermostat.value("thermostatMode") == "cool"
    await _call(hass, CLIMATE_DOMAIN, SERVICE_SET_TEMPERATURE, climate, **{ATTR_TEMPERATURE: 25})
    assert thermostat.value("coolingSetpoint") == 77
    assert hass.states.get(climate).attributes[ATTR_TEMPERATURE] == 25

    await _call(hass, CLIMATE_DOMAIN, SERVICE_SET_HVAC_MODE, climate, **{ATTR_HVAC_MODE: "heat"})
    await _call(hass, CLIMATE_DOMAIN, SERVICE_SET_TEMPERATURE, climate, **{ATTR_TEMPERATURE: 20})
    assert thermostat.value("heatingSetpoint") == 68

    await _call(
        hass,
        CLIMATE_DOMAIN,
        SERVICE_SET_TEMPERATURE,
        climate,
        **{ATTR_HVAC_MODE: HVACMode.HEAT_COOL, ATTR_TARGET_TEMP_LOW: 18, ATTR_TARGET_TEMP_HIGH: 26},
    )
    assert thermostat.value("thermostatMode") == "auto"
    assert thermostat.value("heatingSetpoint") == 64.4
    assert thermostat.value("coolingSetpoint") == 78.8
    state = hass.states.get(climate)
    assert state.state == "heat_cool"
    assert state.attributes[ATTR_TARGET_TEMP_LOW] == 18

    await _call(hass, CLIMATE_DOMAIN, SERVICE_SET_FAN_MODE, climate, **{ATTR_FAN_MODE: "on"})
    assert thermostat.value("thermostatFanMode") == "on"

    await _call(hass, CLIMATE_DOMAIN, SERVICE_SET_HVAC_MODE, climate, **{ATTR_HVAC_MODE: "off"})
    assert thermostat.value("thermostatMode") == "off"


@pytest.mark.usefixtures("runtime")
async def test_mode_hsm_and_rules(hass: HomeAssistant, sim: Sim) -> None:
    """The hub's mode select, HSM panel, and the per-rule switch and button."""
    mode = entity_id(hass, sim, "hub_mode", "select")
    await _call(hass, SELECT_DOMAIN, SERVICE_SELECT_OPTION, mode, **{ATTR_OPTION: "Night"})
    assert sim.hub.mode_name == "Night"
    assert hass.states.get(mode).state == "Night"
    with pytest.raises(ServiceValidationError):
        await _call(hass, SELECT_DOMAIN, SERVICE_SELECT_OPTION, mode, **{ATTR_OPTION: "Party"})

    hsm = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    await _call(hass, ALARM_DOMAIN, SERVICE_ALARM_ARM_AWAY, hsm)
    # The hub answers before HSM acts: "arming" until it reports, never "armed" early.
    assert hass.states.get(hsm).state == "arming"
    assert sim.hub.hsm_status in ("armingAway", "armedAway")
    await _call(hass, ALARM_DOMAIN, SERVICE_ALARM_DISARM, hsm)
    assert hass.states.get(hsm).state == "disarmed"

    goodnight = sim.hub.rules[101]
    rule_switch = entity_id(hass, sim, "rule_101", "switch")
    await _call(hass, SWITCH_DOMAIN, SERVICE_TURN_OFF, rule_switch)
    assert goodnight.paused is True
    assert hass.states.get(rule_switch).state == "off"
    # The app hands the action to Rule Machine and answers success; a paused rule ignores it.
    runs = goodnight.run_count
    await hass.services.async_call(
        "button",
        "press",
        {ATTR_ENTITY_ID: entity_id(hass, sim, "rule_101_run", "button")},
        blocking=True,
    )
    assert goodnight.run_count == runs
    await _call(hass, SWITCH_DOMAIN, SERVICE_TURN_ON, rule_switch)
    assert goodnight.paused is False
    # The button sends action "actions" (runRuleAct); the app refuses the "runActions" we
    # used to send with -32602 on every hub (mcp-native-rules-lib.groovy hub_call_rule enum).
    await hass.services.async_call(
        "button",
        "press",
        {ATTR_ENTITY_ID: entity_id(hass, sim, "rule_101_run", "button")},
        blocking=True,
    )
    assert goodnight.run_count == runs + 1


@pytest.mark.usefixtures("runtime")
async def test_command_refused_by_driver(hass: HomeAssistant, sim: Sim) -> None:
    """A device whose driver throws: the action fails with a HomeAssistantError."""
    plug = first(sim, "outlet")
    sim.hub.break_device(plug.id)
    switch = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    with pytest.raises(HomeAssistantError, match="did not respond"):
        await _call(hass, SWITCH_DOMAIN, SERVICE_TURN_ON, switch)
