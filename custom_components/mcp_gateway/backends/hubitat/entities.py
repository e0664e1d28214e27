"""Hubitat devices, modes, HSM and rules as entity specs.

The descriptions are module constants; each binds to its native object (a HubitatDevice, a
ButtonView, a rule, or the coordinator's `HubitatData` snapshot for hub-wide state) through
`EntitySpec.source`, which reads the coordinator's current `data`.
Commands go through the runtime's write coalescer and apply their expected effect at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
import dataclasses
from dataclasses import dataclass
import functools
import json
from typing import TYPE_CHECKING, Any, Final

from homeassistant.components.alarm_control_panel.const import (
    AlarmControlPanelEntityFeature,
    AlarmControlPanelState,
)
from homeassistant.components.binary_sensor import BinarySensorDeviceClass
from homeassistant.components.climate.const import HVACAction, HVACMode
from homeassistant.components.cover import CoverDeviceClass
from homeassistant.components.event import EventDeviceClass
from homeassistant.components.light.const import ColorMode
from homeassistant.components.sensor import SensorDeviceClass, SensorStateClass
from homeassistant.components.valve import ValveDeviceClass
from homeassistant.const import (
    LIGHT_LUX,
    PERCENTAGE,
    EntityCategory,
    Platform,
    UnitOfElectricCurrent,
    UnitOfElectricPotential,
    UnitOfEnergy,
    UnitOfInformation,
    UnitOfPower,
    UnitOfTemperature,
)
from homeassistant.util.percentage import (
    ordered_list_item_to_percentage,
    percentage_to_ordered_list_item,
)
from yarl import URL

from ...core.const import PARTS_PER_MILLION
from ...framework.entity import DeviceSpec, EntitySpec
from ...platforms.alarm_control_panel import GatewayAlarmDescription
from ...platforms.binary_sensor import GatewayBinarySensorDescription
from ...platforms.button import GatewayButtonDescription
from ...platforms.climate import ClimateTarget, GatewayClimateDescription
from ...platforms.cover import GatewayCoverDescription
from ...platforms.event import EventOccurrence, GatewayEventDescription
from ...platforms.fan import GatewayFanDescription
from ...platforms.light import GatewayLightDescription, LightCommand
from ...platforms.lock import GatewayLockDescription
from ...platforms.select import GatewaySelectDescription
from ...platforms.sensor import GatewaySensorDescription
from ...platforms.switch import GatewaySwitchDescription
from ...platforms.valve import GatewayValveDescription
from .api import HubInfo, HubitatDevice, HubitatRule
from .const import HUB_DEVICE_KEY, rule_device_key
from .coordinator import (
    BUTTON_CAPABILITIES,
    FEED_DEVICES,
    FEED_HSM,
    FEED_HUB,
    FEED_MODES,
    FEED_RULES,
    HSM_KEY,
    MODE_KEY,
    HubitatCoordinator,
    HubitatData,
)

if TYPE_CHECKING:
    from .runtime import HubitatRuntime


# ---------------------------------------------------------------------------------------------
# Small readers
# ---------------------------------------------------------------------------------------------


def _num(value: Any) -> float | None:
    """A number from an attribute (the hub reports numbers, or strings of them)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _int(value: Any) -> int | None:
    number = _num(value)
    return None if number is None else round(number)


def _str_list(value: Any) -> list[str] | None:
    """A list attribute; the hub often reports one as a JSON string."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, list):
        return [str(item) for item in value]
    return None


def _temperature_unit(device: HubitatDevice) -> str:
    return (
        UnitOfTemperature.CELSIUS
        if (device.temperature_scale or "F").upper().startswith("C")
        else UnitOfTemperature.FAHRENHEIT
    )


def _enabled(device: HubitatDevice) -> bool:
    """A device disabled on the hub takes no commands and reports nothing: unavailable."""
    return not device.disabled


def _button_enabled(view: ButtonView) -> bool:
    return _enabled(view.device)


async def _send(
    runtime: HubitatRuntime,
    device: HubitatDevice,
    command: str,
    *parameters: Any,
    expect: dict[str, Any] | None = None,
) -> None:
    """One device command through the coalescer; on success show its expected effect."""
    await runtime.async_command(device.id, command, [_param(p) for p in parameters], expect or {})


def _param(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


# ---------------------------------------------------------------------------------------------
# Switches and lights
# ---------------------------------------------------------------------------------------------


def _is_on(device: HubitatDevice) -> bool | None:
    switch = device.attr("switch")
    return None if switch is None else switch == "on"


async def _set_switch(runtime: HubitatRuntime, device: HubitatDevice, on: bool) -> None:
    await _send(runtime, device, "on" if on else "off", expect={"switch": "on" if on else "off"})


SWITCH: Final = GatewaySwitchDescription[HubitatDevice](
    key="switch", name=None, is_on_fn=_is_on, set_fn=_set_switch
)


def _color_modes(device: HubitatDevice) -> set[ColorMode]:
    modes: set[ColorMode] = set()
    if device.has("ColorControl"):
        modes.add(ColorMode.HS)
    if device.has("ColorTemperature"):
        modes.add(ColorMode.COLOR_TEMP)
    if not modes and (device.has("SwitchLevel") or "level" in device.attributes):
        modes.add(ColorMode.BRIGHTNESS)
    return modes or {ColorMode.ONOFF}


def _color_mode(device: HubitatDevice) -> ColorMode:
    modes = _color_modes(device)
    if len(modes) == 1:
        return next(iter(modes))
    if device.attr("colorMode") == "CT":
        return ColorMode.COLOR_TEMP
    return ColorMode.HS


def _brightness(device: HubitatDevice) -> int | None:
    level = _num(device.attr("level"))
    return None if level is None else round(max(0.0, min(level, 100.0)) * 255 / 100)


def _hs(device: HubitatDevice) -> tuple[float, float] | None:
    hue, saturation = _num(device.attr("hue")), _num(device.attr("saturation"))
    if hue is None or saturation is None:
        return None
    # Hubitat's hue runs 0-100.
    return (round(hue * 3.6, 1), saturation)


def _kelvin(device: HubitatDevice) -> int | None:
    return _int(device.attr("colorTemperature"))


async def _light_on(runtime: HubitatRuntime, device: HubitatDevice, cmd: LightCommand) -> None:
    level = None if cmd.brightness is None else max(1, round(cmd.brightness * 100 / 255))
    duration = [] if cmd.transition is None else [round(cmd.transition)]
    if cmd.hs_color is not None:
        hue, saturation = cmd.hs_color
        target_level = level or _int(device.attr("level")) or 100
        color = {"hue": round(hue / 3.6), "saturation": round(saturation), "level": target_level}
        await _send(
            runtime,
            device,
            "setColor",
            color,
            expect={
                "switch": "on",
                "hue": color["hue"],
                "saturation": color["saturation"],
                "level": target_level,
                "colorMode": "RGB",
            },
        )
    elif cmd.color_temp_kelvin is not None:
        params: list[Any] = [cmd.color_temp_kelvin]
        expect: dict[str, Any] = {
            "switch": "on",
            "colorTemperature": cmd.color_temp_kelvin,
            "colorMode": "CT",
        }
        if level is not None:
            params.append(level)
            expect["level"] = level
        await _send(runtime, device, "setColorTemperature", *params, expect=expect)
    elif "setLevel" in device.commands and (level is not None or duration):
        target = level if level is not None else (_int(device.attr("level")) or 100)
        await _send(
            runtime, device, "setLevel", target, *duration, expect={"switch": "on", "level": target}
        )
    else:
        await _send(runtime, device, "on", expect={"switch": "on"})


async def _light_off(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    await _send(runtime, device, "off", expect={"switch": "off"})


LIGHT: Final = GatewayLightDescription[HubitatDevice](
    key="light",
    name=None,
    is_on_fn=_is_on,
    brightness_fn=_brightness,
    hs_color_fn=_hs,
    color_temp_kelvin_fn=_kelvin,
    color_mode_fn=_color_mode,
    supported_color_modes_fn=_color_modes,
    min_color_temp_kelvin=2000,
    max_color_temp_kelvin=6500,
    supports_transition=True,
    turn_on_fn=_light_on,
    turn_off_fn=_light_off,
)

# ---------------------------------------------------------------------------------------------
# Fans
# ---------------------------------------------------------------------------------------------

FAN_SPEEDS: Final = ["low", "medium-low", "medium", "medium-high", "high"]


def _fan_on(device: HubitatDevice) -> bool | None:
    speed = device.attr("speed")
    if speed is not None:
        return speed not in ("off",)
    return _is_on(device)


def _fan_percentage(device: HubitatDevice) -> int | None:
    speed = device.attr("speed")
    if speed == "off":
        return 0
    if speed in FAN_SPEEDS:
        return ordered_list_item_to_percentage(FAN_SPEEDS, speed)
    return None


async def _fan_turn_on(runtime: HubitatRuntime, device: HubitatDevice, pct: int | None) -> None:
    if pct is not None:
        await _fan_set_percentage(runtime, device, pct)
    elif "on" in device.commands:
        await _send(runtime, device, "on", expect={"switch": "on", "speed": "on"})
    else:
        await _send(runtime, device, "setSpeed", "on", expect={"speed": "on"})


async def _fan_turn_off(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    if "off" in device.commands:
        await _send(runtime, device, "off", expect={"switch": "off", "speed": "off"})
    else:
        await _send(runtime, device, "setSpeed", "off", expect={"speed": "off"})


async def _fan_set_percentage(runtime: HubitatRuntime, device: HubitatDevice, pct: int) -> None:
    if pct <= 0:
        await _fan_turn_off(runtime, device)
        return
    speed = percentage_to_ordered_list_item(FAN_SPEEDS, pct)
    await _send(runtime, device, "setSpeed", speed, expect={"speed": speed, "switch": "on"})


FAN: Final = GatewayFanDescription[HubitatDevice](
    key="fan",
    name=None,
    is_on_fn=_fan_on,
    percentage_fn=_fan_percentage,
    speed_count=len(FAN_SPEEDS),
    turn_on_fn=_fan_turn_on,
    turn_off_fn=_fan_turn_off,
    set_percentage_fn=_fan_set_percentage,
)

# ---------------------------------------------------------------------------------------------
# Covers, locks, valves
# ---------------------------------------------------------------------------------------------


_SHADE_STATES: Final = frozenset({"closed", "open", "partially open", "opening", "closing"})


def _shade_closed(device: HubitatDevice) -> bool | None:
    state = device.attr("windowShade")
    if isinstance(state, str) and state in _SHADE_STATES:
        return state == "closed"
    position = _int(device.attr("position"))
    return None if position is None else position == 0


async def _cover_open(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    await _send(runtime, device, "open", expect=_moving(device, "opening"))


async def _cover_close(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    await _send(runtime, device, "close", expect=_moving(device, "closing"))


def _moving(device: HubitatDevice, state: str) -> dict[str, Any]:
    attribute = "door" if "door" in device.attributes else "windowShade"
    return {attribute: state}


async def _shade_stop(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    await _send(runtime, device, "stopPositionChange")


async def _shade_position(runtime: HubitatRuntime, device: HubitatDevice, position: int) -> None:
    await _send(runtime, device, "setPosition", position, expect={"position": position})


SHADE: Final = GatewayCoverDescription[HubitatDevice](
    key="shade",
    name=None,
    device_class=CoverDeviceClass.SHADE,
    is_closed_fn=_shade_closed,
    position_fn=lambda d: _int(d.attr("position")),
    is_opening_fn=lambda d: d.attr("windowShade") == "opening",
    is_closing_fn=lambda d: d.attr("windowShade") == "closing",
    open_fn=_cover_open,
    close_fn=_cover_close,
    stop_fn=_shade_stop,
    set_position_fn=_shade_position,
)


def _door_closed(device: HubitatDevice) -> bool | None:
    door = device.attr("door")
    return None if door in (None, "unknown") else door == "closed"


GARAGE_DOOR: Final = GatewayCoverDescription[HubitatDevice](
    key="garage_door",
    name=None,
    device_class=CoverDeviceClass.GARAGE,
    is_closed_fn=_door_closed,
    is_opening_fn=lambda d: d.attr("door") == "opening",
    is_closing_fn=lambda d: d.attr("door") == "closing",
    open_fn=_cover_open,
    close_fn=_cover_close,
)

DOOR: Final = GatewayCoverDescription[HubitatDevice](
    key="door",
    name=None,
    device_class=CoverDeviceClass.DOOR,
    is_closed_fn=_door_closed,
    is_opening_fn=lambda d: d.attr("door") == "opening",
    is_closing_fn=lambda d: d.attr("door") == "closing",
    open_fn=_cover_open,
    close_fn=_cover_close,
)


def _is_locked(device: HubitatDevice) -> bool | None:
    lock = device.attr("lock")
    if lock == "locked":
        return True
    if isinstance(lock, str) and lock.startswith("unlocked"):
        return False
    return None


async def _set_locked(runtime: HubitatRuntime, device: HubitatDevice, locked: bool) -> None:
    state = "locked" if locked else "unlocked"
    await _send(runtime, device, "lock" if locked else "unlock", expect={"lock": state})


LOCK: Final = GatewayLockDescription[HubitatDevice](
    key="lock",
    name=None,
    is_locked_fn=_is_locked,
    is_jammed_fn=lambda d: d.attr("lock") == "jammed" or None,
    set_locked_fn=_set_locked,
)


async def _valve_open(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    await _send(runtime, device, "open", expect={"valve": "open"})


async def _valve_close(runtime: HubitatRuntime, device: HubitatDevice) -> None:
    await _send(runtime, device, "close", expect={"valve": "closed"})


VALVE: Final = GatewayValveDescription[HubitatDevice](
    key="valve",
    name=None,
    device_class=ValveDeviceClass.WATER,
    is_closed_fn=lambda d: None if d.attr("valve") is None else d.attr("valve") == "closed",
    open_fn=_valve_open,
    close_fn=_valve_close,
)

# ---------------------------------------------------------------------------------------------
# Thermostats
# ---------------------------------------------------------------------------------------------

HVAC_FROM_HUB: Final = {
    "off": HVACMode.OFF,
    "heat": HVACMode.HEAT,
    "emergency heat": HVACMode.HEAT,
    "cool": HVACMode.COOL,
    "auto": HVACMode.HEAT_COOL,
}
HVAC_TO_HUB: Final = {
    HVACMode.OFF: "off",
    HVACMode.HEAT: "heat",
    HVACMode.COOL: "cool",
    HVACMode.HEAT_COOL: "auto",
}
ACTION_FROM_HUB: Final = {
    "heating": HVACAction.HEATING,
    "pending heat": HVACAction.PREHEATING,
    "cooling": HVACAction.COOLING,
    "pending cool": HVACAction.COOLING,
    "idle": HVACAction.IDLE,
    "fan only": HVACAction.FAN,
    "vent economizer": HVACAction.FAN,
}


def _hvac_mode(device: HubitatDevice) -> HVACMode | None:
    return HVAC_FROM_HUB.get(str(device.attr("thermostatMode")))


def _hvac_modes(device: HubitatDevice) -> list[HVACMode]:
    listed = _str_list(device.attr("supportedThermostatModes")) or list(HVAC_TO_HUB.values())
    modes: list[HVACMode] = []
    for name in listed:
        mode = HVAC_FROM_HUB.get(name)
        if mode is not None and mode not in modes:
            modes.append(mode)
    return modes or [HVACMode.OFF]


def _target(device: HubitatDevice) -> float | None:
    mode = device.attr("thermostatMode")
    if mode in ("cool",):
        return _num(device.attr("coolingSetpoint"))
    if mode in ("heat", "emergency heat"):
        return _num(device.attr("heatingSetpoint"))
    if mode == "auto":
        return None
    return _num(device.attr("thermostatSetpoint"))


def _range(attribute: str) -> Callable[[HubitatDevice], float | None]:
    def read(device: HubitatDevice) -> float | None:
        if device.attr("thermostatMode") != "auto":
            return None
        return _num(device.attr(attribute))

    return read


async def _set_hvac_mode(runtime: HubitatRuntime, device: HubitatDevice, mode: HVACMode) -> None:
    if mode not in HVAC_TO_HUB:
        raise ValueError(f"unsupported HVAC mode {mode}")
    hub_mode = HVAC_TO_HUB[mode]
    await _send(runtime, device, "setThermostatMode", hub_mode, expect={"thermostatMode": hub_mode})


async def _set_temperature(
    runtime: HubitatRuntime, device: HubitatDevice, target: ClimateTarget
) -> None:
    sends = []
    if target.hvac_mode is not None:
        await _set_hvac_mode(runtime, device, target.hvac_mode)
    if target.target_temp_low is not None:
        sends.append(("setHeatingSetpoint", "heatingSetpoint", target.target_temp_low))
    if target.target_temp_high is not None:
        sends.append(("setCoolingSetpoint", "coolingSetpoint", target.target_temp_high))
    if target.temperature is not None:
        if device.attr("thermostatMode") == "cool":
            sends.append(("setCoolingSetpoint", "coolingSetpoint", target.temperature))
        else:
            sends.append(("setHeatingSetpoint", "heatingSetpoint", target.temperature))
    if not sends:
        raise ValueError("no temperature given")
    # Sent together, so the coalescer puts them in one batch.
    await asyncio.gather(
        *(
            _send(runtime, device, command, value, expect={attribute: value})
            for command, attribute, value in sends
        )
    )


async def _set_fan_mode(runtime: HubitatRuntime, device: HubitatDevice, mode: str) -> None:
    await _send(runtime, device, "setThermostatFanMode", mode, expect={"thermostatFanMode": mode})


CLIMATE: Final = GatewayClimateDescription[HubitatDevice](
    key="thermostat",
    name=None,
    hvac_mode_fn=_hvac_mode,
    hvac_modes_fn=_hvac_modes,
    hvac_action_fn=lambda d: ACTION_FROM_HUB.get(str(d.attr("thermostatOperatingState"))),
    current_temperature_fn=lambda d: _num(d.attr("temperature")),
    target_temperature_fn=_target,
    target_temperature_low_fn=_range("heatingSetpoint"),
    target_temperature_high_fn=_range("coolingSetpoint"),
    current_humidity_fn=lambda d: _num(d.attr("humidity")),
    fan_mode_fn=lambda d: d.attr("thermostatFanMode"),
    fan_modes_fn=lambda d: (
        _str_list(d.attr("supportedThermostatFanModes")) or ["auto", "on", "circulate"]
    ),
    temperature_unit_fn=_temperature_unit,
    set_hvac_mode_fn=_set_hvac_mode,
    set_temperature_fn=_set_temperature,
    set_fan_mode_fn=_set_fan_mode,
)

# ---------------------------------------------------------------------------------------------
# Alarm panels: security keypads and HSM
# ---------------------------------------------------------------------------------------------

KEYPAD_STATES: Final = {
    "disarmed": AlarmControlPanelState.DISARMED,
    "armed home": AlarmControlPanelState.ARMED_HOME,
    "armed away": AlarmControlPanelState.ARMED_AWAY,
    "armed night": AlarmControlPanelState.ARMED_NIGHT,
}
KEYPAD_COMMANDS: Final = {
    AlarmControlPanelState.DISARMED: ("disarm", "disarmed"),
    AlarmControlPanelState.ARMED_HOME: ("armHome", "armed home"),
    AlarmControlPanelState.ARMED_AWAY: ("armAway", "armed away"),
    AlarmControlPanelState.ARMED_NIGHT: ("armNight", "armed night"),
}
_ARM_FEATURES: Final = (
    AlarmControlPanelEntityFeature.ARM_HOME
    | AlarmControlPanelEntityFeature.ARM_AWAY
    | AlarmControlPanelEntityFeature.ARM_NIGHT
)


async def _set_keypad(
    runtime: HubitatRuntime, device: HubitatDevice, state: AlarmControlPanelState
) -> None:
    if state not in KEYPAD_COMMANDS:
        raise ValueError(f"unsupported alarm state {state}")
    command, value = KEYPAD_COMMANDS[state]
    await _send(runtime, device, command, expect={"securityKeypad": value})


KEYPAD: Final = GatewayAlarmDescription[HubitatDevice](
    key="keypad",
    name=None,
    state_fn=lambda d: KEYPAD_STATES.get(str(d.attr("securityKeypad"))),
    supported_features=_ARM_FEATURES,
    set_state_fn=_set_keypad,
)

HSM_STATES: Final = {
    "disarmed": AlarmControlPanelState.DISARMED,
    "allDisarmed": AlarmControlPanelState.DISARMED,
    "armedAway": AlarmControlPanelState.ARMED_AWAY,
    "armedHome": AlarmControlPanelState.ARMED_HOME,
    "armedNight": AlarmControlPanelState.ARMED_NIGHT,
    "armingAway": AlarmControlPanelState.ARMING,
    "armingHome": AlarmControlPanelState.ARMING,
    "armingNight": AlarmControlPanelState.ARMING,
}
# The command, and the status shown until the hub reports: the app answers before HSM acts
# (mcp-system-lib.groovy toolSetHsm sends a location event), and arming passes through its
# exit delay, so an arm command shows "arming", never "armed" before the hub says so.
HSM_COMMANDS: Final = {
    AlarmControlPanelState.DISARMED: ("disarm", "disarmed"),
    AlarmControlPanelState.ARMED_HOME: ("armHome", "armingHome"),
    AlarmControlPanelState.ARMED_AWAY: ("armAway", "armingAway"),
    AlarmControlPanelState.ARMED_NIGHT: ("armNight", "armingNight"),
}


# hsmAlert values that mean HSM is sounding (smoke and water whatever the arm state). The
# alert read is the hub's last one (libraries/mcp-system-lib.groovy toolGetHsmStatus reads
# location.hsmAlert), so "cancel", "cancelRuleAlerts" and anything else are no alarm.
HSM_ALARMS: Final = frozenset({"smoke", "water"})
HSM_INTRUSIONS: Final = frozenset({"intrusion", "intrusion-home", "intrusion-night"})
# An intrusion counting its entry delay down: the alarm is pending.
HSM_ENTRY_DELAYS: Final = frozenset({f"{alert}-delay" for alert in HSM_INTRUSIONS})


def _hsm_state(data: HubitatData) -> AlarmControlPanelState | None:
    alert, state = data.hsm.alert, HSM_STATES.get(str(data.hsm.status))
    if alert in HSM_ALARMS:
        return AlarmControlPanelState.TRIGGERED
    # A last intrusion alert outlives the disarm that ended it only if no "cancel" followed.
    armed = state not in (None, AlarmControlPanelState.DISARMED)
    if armed and alert in HSM_INTRUSIONS:
        return AlarmControlPanelState.TRIGGERED
    if armed and alert in HSM_ENTRY_DELAYS:
        return AlarmControlPanelState.PENDING
    return state


async def _set_hsm(
    runtime: HubitatRuntime, _data: HubitatData, state: AlarmControlPanelState
) -> None:
    if state not in HSM_COMMANDS:
        raise ValueError(f"unsupported alarm state {state}")
    command, status = HSM_COMMANDS[state]
    await runtime.async_set_hsm(command, status)


HSM: Final = GatewayAlarmDescription[HubitatData](
    key="hsm",
    translation_key="hsm",
    state_fn=_hsm_state,
    supported_features=_ARM_FEATURES,
    set_state_fn=_set_hsm,
    attributes_fn=lambda data: {"status": data.hsm.status, "alert": data.hsm.alert},
)

# ---------------------------------------------------------------------------------------------
# Hub-wide: mode, diagnostics
# ---------------------------------------------------------------------------------------------

MODE: Final = GatewaySelectDescription[HubitatData](
    key="mode",
    translation_key="hub_mode",
    current_option_fn=lambda data: data.modes.current,
    options_fn=lambda data: list(data.modes.names),
    select_fn=lambda runtime, _data, option: runtime.async_set_mode(option),
)


def _health(name: str) -> Callable[[HubitatData], float | None]:
    """A health figure of hub_get_info (flat; strings, or "unavailable" when unreadable)."""

    def read(data: HubitatData) -> float | None:
        return _num(data.hub.raw.get(name))

    return read


HUB_SENSORS: Final = (
    GatewaySensorDescription[HubitatData](
        key="hub_temperature",
        translation_key="hub_temperature",
        device_class=SensorDeviceClass.TEMPERATURE,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=UnitOfTemperature.CELSIUS,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=_health("internalTempCelsius"),
    ),
    GatewaySensorDescription[HubitatData](
        key="free_memory",
        translation_key="free_memory",
        device_class=SensorDeviceClass.DATA_SIZE,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=UnitOfInformation.KILOBYTES,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_health("freeMemoryKB"),
    ),
    GatewaySensorDescription[HubitatData](
        key="database_size",
        translation_key="database_size",
        device_class=SensorDeviceClass.DATA_SIZE,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=UnitOfInformation.KILOBYTES,
        entity_category=EntityCategory.DIAGNOSTIC,
        entity_registry_enabled_default=False,
        value_fn=_health("databaseSizeKB"),
    ),
)

# ---------------------------------------------------------------------------------------------
# Rules
# ---------------------------------------------------------------------------------------------

# The switch enables or pauses the rule, the button runs it: their names say so, where the
# rule's name alone (its device's) would read as "run it" to a person or a model.
RULE_SWITCH: Final = GatewaySwitchDescription[HubitatRule](
    key="rule",
    translation_key="rule_enabled",
    # Unknown while the hub cannot tell whether the rule is paused.
    is_on_fn=lambda rule: None if rule.paused is None else not rule.paused,
    set_fn=lambda runtime, rule, on: runtime.async_set_rule_paused(rule.id, not on),
    attributes_fn=lambda rule: {"rule_id": rule.id, "type": rule.type},
)
RULE_RUN: Final = GatewayButtonDescription[HubitatRule](
    key="run",
    translation_key="run_rule",
    press_fn=lambda runtime, rule: runtime.async_run_rule(rule.id),
)

# ---------------------------------------------------------------------------------------------
# Sensors and binary sensors, by attribute
# ---------------------------------------------------------------------------------------------


def _measure(attribute: str) -> Callable[[HubitatDevice], float | None]:
    return lambda device: _num(device.attr(attribute))


SENSORS: Final = (
    GatewaySensorDescription[HubitatDevice](
        key="battery",
        device_class=SensorDeviceClass.BATTERY,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=PERCENTAGE,
        entity_category=EntityCategory.DIAGNOSTIC,
        value_fn=_measure("battery"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="temperature",
        device_class=SensorDeviceClass.TEMPERATURE,
        state_class=SensorStateClass.MEASUREMENT,
        value_fn=_measure("temperature"),
        unit_fn=_temperature_unit,
    ),
    GatewaySensorDescription[HubitatDevice](
        key="humidity",
        device_class=SensorDeviceClass.HUMIDITY,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=PERCENTAGE,
        value_fn=_measure("humidity"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="illuminance",
        device_class=SensorDeviceClass.ILLUMINANCE,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=LIGHT_LUX,
        value_fn=_measure("illuminance"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="power",
        device_class=SensorDeviceClass.POWER,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=UnitOfPower.WATT,
        value_fn=_measure("power"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="energy",
        device_class=SensorDeviceClass.ENERGY,
        state_class=SensorStateClass.TOTAL_INCREASING,
        native_unit_of_measurement=UnitOfEnergy.KILO_WATT_HOUR,
        value_fn=_measure("energy"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="voltage",
        device_class=SensorDeviceClass.VOLTAGE,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=UnitOfElectricPotential.VOLT,
        entity_registry_enabled_default=False,
        value_fn=_measure("voltage"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="amperage",
        device_class=SensorDeviceClass.CURRENT,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=UnitOfElectricCurrent.AMPERE,
        entity_registry_enabled_default=False,
        value_fn=_measure("amperage"),
    ),
    GatewaySensorDescription[HubitatDevice](
        key="carbonDioxide",
        device_class=SensorDeviceClass.CO2,
        state_class=SensorStateClass.MEASUREMENT,
        native_unit_of_measurement=PARTS_PER_MILLION,
        value_fn=_measure("carbonDioxide"),
    ),
)


def _state_is(attribute: str, on_value: str) -> Callable[[HubitatDevice], bool | None]:
    def read(device: HubitatDevice) -> bool | None:
        value = device.attr(attribute)
        return None if value is None else value == on_value

    return read


BINARY_SENSORS: Final = (
    GatewayBinarySensorDescription[HubitatDevice](
        key="contact",
        device_class=BinarySensorDeviceClass.OPENING,
        is_on_fn=_state_is("contact", "open"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="motion",
        device_class=BinarySensorDeviceClass.MOTION,
        is_on_fn=_state_is("motion", "active"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="water",
        device_class=BinarySensorDeviceClass.MOISTURE,
        is_on_fn=_state_is("water", "wet"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="presence",
        device_class=BinarySensorDeviceClass.PRESENCE,
        is_on_fn=_state_is("presence", "present"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="smoke",
        device_class=BinarySensorDeviceClass.SMOKE,
        is_on_fn=_state_is("smoke", "detected"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="carbonMonoxide",
        device_class=BinarySensorDeviceClass.CO,
        is_on_fn=_state_is("carbonMonoxide", "detected"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="acceleration",
        device_class=BinarySensorDeviceClass.VIBRATION,
        entity_registry_enabled_default=False,
        is_on_fn=_state_is("acceleration", "active"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="tamper",
        device_class=BinarySensorDeviceClass.TAMPER,
        entity_category=EntityCategory.DIAGNOSTIC,
        is_on_fn=_state_is("tamper", "detected"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="sound",
        device_class=BinarySensorDeviceClass.SOUND,
        is_on_fn=_state_is("sound", "detected"),
    ),
    GatewayBinarySensorDescription[HubitatDevice](
        key="shock",
        device_class=BinarySensorDeviceClass.VIBRATION,
        is_on_fn=_state_is("shock", "detected"),
    ),
)

# ---------------------------------------------------------------------------------------------
# Buttons
# ---------------------------------------------------------------------------------------------

BUTTON_EVENT_TYPES: Final = {
    "pushed": "pushed",
    "held": "held",
    "doubleTapped": "double_tapped",
    "released": "released",
}


@dataclass(frozen=True, slots=True)
class ButtonView:
    """One button of a (possibly multi-button) device."""

    device: HubitatDevice
    number: int


def _button_events(view: ButtonView) -> list[EventOccurrence]:
    number = str(view.number)
    return [
        EventOccurrence(event.marker, BUTTON_EVENT_TYPES[event.name], {"button": view.number})
        for event in view.device.events
        if event.name in BUTTON_EVENT_TYPES and event.value == number
    ]


BUTTON_EVENT: Final = GatewayEventDescription[ButtonView](
    key="button",
    translation_key="hubitat_button",
    device_class=EventDeviceClass.BUTTON,
    event_types=list(BUTTON_EVENT_TYPES.values()),
    events_fn=_button_events,
)


@functools.lru_cache(maxsize=64)
def button_event(number: int) -> GatewayEventDescription[ButtonView]:
    """The description of a device's button `number`: its name ("Button {number}") is a
    translation, so the number is a placeholder. One per number, shared by every device."""
    return dataclasses.replace(BUTTON_EVENT, translation_placeholders={"number": str(number)})


# ---------------------------------------------------------------------------------------------
# Deriving specs
# ---------------------------------------------------------------------------------------------

_LIGHTISH: Final = ("ColorControl", "ColorTemperature", "SwitchLevel", "Light", "ColorMode")


def primary(
    device: HubitatDevice, as_switch: set[str], as_light: set[str]
) -> tuple[Platform, Any] | None:
    """The platform and description of a device's main entity, if it has one."""
    if device.has("Thermostat"):
        return Platform.CLIMATE, CLIMATE
    if device.has("FanControl"):
        return Platform.FAN, FAN
    if device.has("WindowShade", "WindowBlind"):
        return Platform.COVER, SHADE
    if device.has("GarageDoorControl"):
        return Platform.COVER, GARAGE_DOOR
    if device.has("DoorControl"):
        return Platform.COVER, DOOR
    if device.has("Lock"):
        return Platform.LOCK, LOCK
    if device.has("Valve"):
        return Platform.VALVE, VALVE
    if device.has("SecurityKeypad"):
        return Platform.ALARM_CONTROL_PANEL, KEYPAD
    switchable = device.has("Switch") or "switch" in device.attributes
    if not switchable:
        return None
    lightish = device.has(*_LIGHTISH)
    if (lightish and device.id not in as_switch) or (not lightish and device.id in as_light):
        return Platform.LIGHT, LIGHT
    return Platform.SWITCH, SWITCH


def is_light_capable(device: HubitatDevice) -> bool:
    """Whether the hub's capabilities make the device a light by default (for the options)."""
    return primary(device, set(), set()) == (Platform.LIGHT, LIGHT)


def is_plain_switch(device: HubitatDevice) -> bool:
    """Whether the device is a switch by default (the options can make it a light)."""
    return primary(device, set(), set()) == (Platform.SWITCH, SWITCH)


def hub_device(hub: HubInfo, url: str) -> DeviceSpec:
    """The hub itself: parent of every device."""
    endpoint = URL(url)
    local = endpoint.host and endpoint.host != "cloud.hubitat.com"
    name = hub.name or "Hubitat hub"
    return DeviceSpec(
        key=HUB_DEVICE_KEY,
        name=name,
        # The hub reports no location name of its own (get_hub_info: its name): its devices
        # are in the home the hub is named for.
        home=name,
        manufacturer="Hubitat",
        model=hub.model,
        sw_version=hub.firmware,
        configuration_url=f"{endpoint.scheme}://{endpoint.authority}" if local else None,
    )


def device_spec(device: HubitatDevice, hub: DeviceSpec) -> DeviceSpec:
    """A Hubitat device in HA's registry; rooms become suggested areas."""
    return DeviceSpec(
        key=device.id,
        name=device.display_name,
        manufacturer="Hubitat" if device.type_name is None else None,
        model=device.type_name or device.name or None,
        suggested_area=device.room,
        via=hub,
        home=hub.home,
    )


# The app's event history (hub_list_device_events), offered by get_history where HA's
# recorder holds less than asked: which Hubitat attribute each entity shows.
EVENTS_TOOL: Final = "hub_list_device_events"
# Hub-wide entities: location events (no deviceId) of these names.
LOCATION_ATTRIBUTES: Final[Mapping[str, str]] = {"hub_mode": "mode", HSM_KEY: "hsmStatus"}
# A device's main entity: the attribute its state follows (others read all its events).
_MAIN_ATTRIBUTES: Final[Mapping[str, str]] = {
    "switch": "switch",
    "light": "switch",
    "fan": "switch",
    "lock": "lock",
    "valve": "valve",
    "garage_door": "door",
    "door": "door",
    "shade": "windowShade",
}


def history_attribute(platform: Platform, key: str) -> str | None:
    """The attribute whose events are an entity's history (sensors are named after theirs)."""
    if platform in (Platform.SENSOR, Platform.BINARY_SENSOR):
        return key
    return _MAIN_ATTRIBUTES.get(key)


def derive_specs(
    coordinator: HubitatCoordinator, url: str, as_switch: set[str], as_light: set[str]
) -> Iterator[EntitySpec]:
    """Every entity the hub's current data calls for; sources read `coordinator.data`."""
    data = coordinator.data
    hub = hub_device(data.hub, url)

    def spec(
        platform: Platform,
        key: str,
        device: DeviceSpec,
        description: Any,
        source: Callable[[], Any],
        *,
        name: str | None = None,
        available_fn: Callable[[Any], bool] | None = None,
    ) -> EntitySpec:
        return EntitySpec(
            platform=platform,
            key=key,
            device=device,
            description=description,
            coordinator=coordinator,
            source=source,
            name=name,
            available_fn=available_fn,
        )

    # A source is None (its entities unavailable) while the read that feeds it fails.
    def hub_source() -> HubitatData | None:
        return None if FEED_HUB in coordinator.data.failed else coordinator.data

    def mode_source() -> HubitatData | None:
        return None if FEED_MODES in coordinator.data.failed else coordinator.data

    def hsm_source() -> HubitatData | None:
        data = coordinator.data
        return data if data.hsm_supported and FEED_HSM not in data.failed else None

    yield spec(Platform.SELECT, MODE_KEY, hub, MODE, mode_source)
    if data.hsm_supported:
        yield spec(Platform.ALARM_CONTROL_PANEL, HSM_KEY, hub, HSM, hsm_source)
    for description in HUB_SENSORS:
        yield spec(Platform.SENSOR, f"hub_{description.key}", hub, description, hub_source)

    for device in data.devices.values():
        yield from _device_specs(coordinator, device, hub, (as_switch, as_light), spec)

    for rule in data.rules.values():
        yield from _rule_specs(coordinator, rule, hub, spec)


def _device_specs(
    coordinator: HubitatCoordinator,
    device: HubitatDevice,
    hub: DeviceSpec,
    overrides: tuple[set[str], set[str]],
    spec: Callable[..., EntitySpec],
) -> Iterator[EntitySpec]:
    as_switch, as_light = overrides
    device_id = device.id
    info = device_spec(device, hub)
    source = _DeviceSource(coordinator, device_id)
    main = primary(device, as_switch, as_light)
    if main is not None:
        platform, description = main
        # The key names the platform so a light<->switch override makes a fresh entity.
        yield spec(
            platform,
            f"{device_id}_{description.key}",
            info,
            description,
            source,
            available_fn=_enabled,
        )
    for description in SENSORS:
        if description.key in device.attributes:
            yield spec(
                Platform.SENSOR,
                f"{device_id}_{description.key}",
                info,
                description,
                source,
                available_fn=_enabled,
            )
    for description in BINARY_SENSORS:
        if description.key in device.attributes:
            yield spec(
                Platform.BINARY_SENSOR,
                f"{device_id}_{description.key}",
                info,
                description,
                source,
                available_fn=_enabled,
            )
    if device.capabilities & BUTTON_CAPABILITIES:
        count = _int(device.attr("numberOfButtons")) or 1
        for number in range(1, max(1, min(count, 50)) + 1):
            yield spec(
                Platform.EVENT,
                f"{device_id}_button_{number}",
                info,
                button_event(number),
                _ButtonSource(coordinator, device_id, number),
                available_fn=_button_enabled,
            )


# The sources of device and button entities are objects, not closures: a 5,000-device hub has
# one per device and button, and a closure is four or five objects (function, its cells and
# their tuple) that every full garbage collection walks, a slotted instance one. Compared by
# identity, as the closures were.
@dataclass(frozen=True, slots=True, eq=False)
class _DeviceSource:
    """A device's current record, or None once the hub no longer has it."""

    coordinator: HubitatCoordinator
    device_id: str

    def __call__(self) -> HubitatDevice | None:
        data = self.coordinator.data
        return None if FEED_DEVICES in data.failed else data.devices.get(self.device_id)


@dataclass(frozen=True, slots=True, eq=False)
class _ButtonSource:
    """One button of a device, or None once the hub no longer has the device."""

    coordinator: HubitatCoordinator
    device_id: str
    number: int

    def __call__(self) -> ButtonView | None:
        data = self.coordinator.data
        device = data.devices.get(self.device_id)
        if device is None or device.events_failed or FEED_DEVICES in data.failed:
            return None
        return ButtonView(device, self.number)


def _rule_specs(
    coordinator: HubitatCoordinator,
    rule: HubitatRule,
    hub: DeviceSpec,
    spec: Callable[..., EntitySpec],
) -> Iterator[EntitySpec]:
    rule_id = rule.id
    info = DeviceSpec(
        key=rule_device_key(rule_id),
        name=rule.name,
        manufacturer="Hubitat",
        model=rule.type,
        via=hub,
        home=hub.home,
    )

    def source() -> HubitatRule | None:
        data = coordinator.data
        return None if FEED_RULES in data.failed else data.rules.get(rule_id)

    yield spec(Platform.SWITCH, f"rule_{rule_id}", info, RULE_SWITCH, source)
    yield spec(Platform.BUTTON, f"rule_{rule_id}_run", info, RULE_RUN, source)
