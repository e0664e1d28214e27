"""Homecast accessories, scenes and automations as entity specs.

Keys come from UUID tails, never from names: an accessory is `<home tail>_<accessory tail>`
(the tail of its slug, which is the tail of its HomeKit UUID), so a rename in the Home app keeps
every entity. Scenes are the exception: Homecast gives them no id at all, so their keys come
from their names and scenes.py carries an entity over a rename. Descriptions are module-level
constants; their callables read `Accessory` values in the current vocabulary (the API
normalises the older one) and write with set_state keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.components.alarm_control_panel.const import (
    AlarmControlPanelEntityFeature,
    AlarmControlPanelState,
)
from homeassistant.components.binary_sensor import BinarySensorDeviceClass
from homeassistant.components.climate.const import HVACAction, HVACMode
from homeassistant.components.cover import CoverDeviceClass
from homeassistant.components.event import EventDeviceClass
from homeassistant.components.light.const import ColorMode
from homeassistant.components.number import NumberMode
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
    UnitOfPower,
    UnitOfPressure,
    UnitOfTemperature,
)
from homeassistant.util import dt as dt_util

from ...core.const import MICROGRAMS_PER_CUBIC_METER, PARTS_PER_MILLION
from ...core.words import words
from ...framework.entity import (
    DeviceSpec,
    EntitySpec,
    GatewayEntityDescription,
    area_leads_entity_ids,
    without_area,
)
from ...platforms.alarm_control_panel import GatewayAlarmDescription
from ...platforms.binary_sensor import GatewayBinarySensorDescription
from ...platforms.button import GatewayButtonDescription
from ...platforms.climate import ClimateTarget, GatewayClimateDescription
from ...platforms.cover import GatewayCoverDescription
from ...platforms.datetime import GatewayDateTimeDescription
from ...platforms.event import EventOccurrence, GatewayEventDescription
from ...platforms.fan import GatewayFanDescription
from ...platforms.light import GatewayLightDescription, LightCommand
from ...platforms.lock import GatewayLockDescription
from ...platforms.number import GatewayNumberDescription
from ...platforms.scene import GatewaySceneDescription
from ...platforms.select import GatewaySelectDescription
from ...platforms.sensor import GatewaySensorDescription
from ...platforms.switch import GatewaySwitchDescription
from ...platforms.text import GatewayTextDescription
from ...platforms.valve import GatewayValveDescription
from .api import NO_ROOM, Accessory, Home, HomecastState, accessory_device_key
from .const import CONF_SERVER, SERVER_COMMUNITY
from .scenes import home_device_key, scene_key
from .vocabulary import EVENT_KEY

if TYPE_CHECKING:
    from .coordinator import HomecastCoordinator
    from .runtime import HomecastRuntime

MANUFACTURER = "Apple HomeKit (via Homecast)"


# ---------------------------------------------------------------------------------------------
# Writes


async def _write(
    runtime: HomecastRuntime,
    acc: Accessory,
    props: dict[str, Any],
    expect: dict[str, Any] | None = None,
) -> None:
    """set_state for one accessory (coalesced), then show the expected values at once.

    `expect` holds read-only values that follow from the write (a lock's current state).
    """
    await runtime.api.async_set(acc, props)
    runtime.coordinator.expect_write(acc, {**props, **(expect or {})})


def _reachable(acc: Accessory) -> bool:
    return acc.reachable


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    return None


# ---------------------------------------------------------------------------------------------
# Light


def _light_modes(acc: Accessory) -> set[ColorMode]:
    hs = acc.has("hue") or "hue" in acc.settable
    ct = acc.has("color_temp") or "color_temp" in acc.settable
    if hs and ct:
        return {ColorMode.HS, ColorMode.COLOR_TEMP}
    if hs:
        return {ColorMode.HS}
    if ct:
        return {ColorMode.COLOR_TEMP}
    if acc.has("brightness"):
        return {ColorMode.BRIGHTNESS}
    return {ColorMode.ONOFF}


def _light_mode(acc: Accessory) -> ColorMode:
    modes = _light_modes(acc)
    if len(modes) == 1:
        return next(iter(modes))
    # HomeKit keeps both; a white (unsaturated) colour means the light is in white mode.
    return ColorMode.COLOR_TEMP if (_num(acc.get("saturation")) or 0) == 0 else ColorMode.HS


def _light_brightness(acc: Accessory) -> int | None:
    value = _num(acc.get("brightness"))
    return None if value is None else round(value * 255 / 100)


def _light_hs(acc: Accessory) -> tuple[float, float] | None:
    hue, sat = _num(acc.get("hue")), _num(acc.get("saturation"))
    return None if hue is None or sat is None else (hue, sat)


def _light_kelvin(acc: Accessory) -> int | None:
    mireds = _num(acc.get("color_temp"))
    return round(1_000_000 / mireds) if mireds else None


async def _light_on(runtime: HomecastRuntime, acc: Accessory, command: LightCommand) -> None:
    props: dict[str, Any] = {"on": True}
    if command.brightness is not None:
        props["brightness"] = max(1, round(command.brightness * 100 / 255))
    if command.hs_color is not None:
        props["hue"] = round(command.hs_color[0])
        props["saturation"] = round(command.hs_color[1])
    if command.color_temp_kelvin is not None:
        props["color_temp"] = min(500, max(140, round(1_000_000 / command.color_temp_kelvin)))
    await _write(runtime, acc, props)


LIGHT = GatewayLightDescription[Accessory](
    key="light",
    name=None,
    is_on_fn=lambda acc: _bool(acc.get("on")),
    brightness_fn=_light_brightness,
    hs_color_fn=_light_hs,
    color_temp_kelvin_fn=_light_kelvin,
    color_mode_fn=_light_mode,
    supported_color_modes_fn=_light_modes,
    min_color_temp_kelvin=2000,  # 500 mireds
    max_color_temp_kelvin=7143,  # 140 mireds
    turn_on_fn=_light_on,
    turn_off_fn=lambda runtime, acc: _write(runtime, acc, {"on": False}),
)


# ---------------------------------------------------------------------------------------------
# Switches


def _on_switch(key: str = "switch", **kwargs: Any) -> GatewaySwitchDescription[Accessory]:
    return GatewaySwitchDescription[Accessory](
        key=key,
        is_on_fn=lambda acc: _bool(acc.get("on")),
        set_fn=lambda runtime, acc, on: _write(runtime, acc, {"on": on}),
        **kwargs,
    )


SWITCH = _on_switch(name=None)
OUTLET = _on_switch("outlet", name=None, device_class=None)
MUTE = GatewaySwitchDescription[Accessory](
    key="mute",
    translation_key="mute",
    is_on_fn=lambda acc: _bool(acc.get("mute")),
    set_fn=lambda runtime, acc, on: _write(runtime, acc, {"mute": on}),
)
VOLUME = GatewayNumberDescription[Accessory](
    key="volume",
    translation_key="volume",
    native_min_value=0,
    native_max_value=100,
    native_step=1,
    native_unit_of_measurement=PERCENTAGE,
    value_fn=lambda acc: _num(acc.get("volume")),
    set_fn=lambda runtime, acc, value: _write(runtime, acc, {"volume": round(value)}),
)


# ---------------------------------------------------------------------------------------------
# Climate: heater-coolers (active + hvac_mode + heat/cool targets) and thermostats (raw names)

_HC_MODES = {"auto": HVACMode.HEAT_COOL, "heat": HVACMode.HEAT, "cool": HVACMode.COOL}
_HC_WRITE = {mode: name for name, mode in _HC_MODES.items()}
_HC_ACTIONS = {
    "inactive": HVACAction.OFF,
    "idle": HVACAction.IDLE,
    "heating": HVACAction.HEATING,
    "cooling": HVACAction.COOLING,
}


def _hc_modes(acc: Accessory) -> list[HVACMode]:
    names = acc.options.get("hvac_mode") or _threshold_modes(acc, "auto", "heat", "cool")
    return [HVACMode.OFF, *(_HC_MODES[n] for n in names if n in _HC_MODES)]


def _threshold_modes[T](acc: Accessory, both: T, heat: T, cool: T) -> list[T]:
    """The modes an accessory without `_options` can take, from the setpoints it has.

    get_state carries no valid values (src/server/local-rest.ts simplifyAccessory), but HomeKit
    only gives a service the heating threshold when it heats and the cooling threshold when it
    cools, and both when it can do either (auto).
    """
    has_heat, has_cool = acc.has("heat_target"), acc.has("cool_target")
    modes = [heat] if has_heat else []
    if has_cool:
        modes.append(cool)
    if has_heat and has_cool:
        modes.append(both)
    return modes


def _hc_active(acc: Accessory) -> bool:
    active = acc.get("active")
    return _bool(active) is not False if active is not None else True


def _hc_mode(acc: Accessory) -> HVACMode | None:
    if not _hc_active(acc):
        return HVACMode.OFF
    return _HC_MODES.get(str(acc.get("hvac_mode")))


def _hc_target(acc: Accessory) -> float | None:
    """The single setpoint of heat or cool mode (auto uses the range)."""
    mode = acc.get("hvac_mode")
    if mode == "heat" or (mode != "auto" and not acc.has("cool_target")):
        return _num(acc.get("heat_target"))
    if mode == "cool" or not acc.has("heat_target"):
        return _num(acc.get("cool_target"))
    return None


def _hc_range(key: str) -> Callable[[Accessory], float | None]:
    def read(acc: Accessory) -> float | None:
        return _num(acc.get(key)) if acc.get("hvac_mode") == "auto" else None

    return read


async def _hc_set_mode(runtime: HomecastRuntime, acc: Accessory, mode: HVACMode) -> None:
    if mode == HVACMode.OFF:
        await _write(runtime, acc, {"active": False})
        return
    if mode not in _HC_WRITE:
        raise ValueError(f"{acc.name} has no {mode} mode")
    await _write(runtime, acc, {"active": True, "hvac_mode": _HC_WRITE[mode]})


async def _hc_set_temp(runtime: HomecastRuntime, acc: Accessory, target: ClimateTarget) -> None:
    props: dict[str, Any] = {}
    mode_name = acc.get("hvac_mode")
    if target.hvac_mode is not None:
        if target.hvac_mode == HVACMode.OFF:
            props["active"] = False
        elif target.hvac_mode in _HC_WRITE:
            mode_name = _HC_WRITE[target.hvac_mode]
            props |= {"active": True, "hvac_mode": mode_name}
    if target.temperature is not None:
        if mode_name == "cool" or (mode_name != "heat" and not acc.has("heat_target")):
            props["cool_target"] = round(target.temperature, 1)
        elif mode_name == "heat" or not acc.has("cool_target"):
            props["heat_target"] = round(target.temperature, 1)
        else:
            raise ValueError("In auto mode set a low and a high target temperature")
    if target.target_temp_low is not None:
        props["heat_target"] = round(target.target_temp_low, 1)
    if target.target_temp_high is not None:
        props["cool_target"] = round(target.target_temp_high, 1)
    if props:
        await _write(runtime, acc, props)


# Fan speed of an air conditioner (its rotation_speed, `speed` when simplified) as fan modes.
_FAN_MODES = {"low": 33, "medium": 66, "high": 100}


def _fan_mode(acc: Accessory) -> str | None:
    speed = _num(acc.get("speed"))
    if speed is None:
        return None
    return min(_FAN_MODES, key=lambda mode: abs(_FAN_MODES[mode] - speed))


async def _set_fan_mode(runtime: HomecastRuntime, acc: Accessory, mode: str) -> None:
    if mode not in _FAN_MODES:
        raise ValueError(f"{acc.name} has no fan mode {mode}")
    await _write(runtime, acc, {"speed": _FAN_MODES[mode]})


HEATER_COOLER = GatewayClimateDescription[Accessory](
    key="climate",
    name=None,
    hvac_mode_fn=_hc_mode,
    hvac_modes_fn=_hc_modes,
    hvac_action_fn=lambda acc: _HC_ACTIONS.get(str(acc.get("hvac_state"))),
    current_temperature_fn=lambda acc: _num(acc.get("current_temp")),
    target_temperature_fn=_hc_target,
    target_temperature_low_fn=_hc_range("heat_target"),
    target_temperature_high_fn=_hc_range("cool_target"),
    current_humidity_fn=lambda acc: _num(acc.get("relative_humidity")),
    min_temp=10,
    max_temp=35,
    target_temperature_step=0.5,
    set_hvac_mode_fn=_hc_set_mode,
    set_temperature_fn=_hc_set_temp,
)
HEATER_COOLER_FAN = dataclasses.replace(
    HEATER_COOLER,
    fan_mode_fn=_fan_mode,
    fan_modes_fn=lambda acc: list(_FAN_MODES),
    set_fan_mode_fn=_set_fan_mode,
)

# HomeKit TargetHeatingCoolingState / CurrentHeatingCoolingState.
_TS_MODES = {0: HVACMode.OFF, 1: HVACMode.HEAT, 2: HVACMode.COOL, 3: HVACMode.HEAT_COOL}
_TS_WRITE = {mode: value for value, mode in _TS_MODES.items()}
_TS_ACTIONS = {1: HVACAction.HEATING, 2: HVACAction.COOLING}


def _ts_modes(acc: Accessory) -> list[HVACMode]:
    allowed = acc.options.get("heating_cooling_target")
    if not allowed:
        # Without `_options`: off, heat (what a thermostat's single target is for), and cool or
        # auto only when it has the thresholds that come with them, plus the mode it is in.
        allowed = [0, *(_threshold_modes(acc, 3, 1, 2) or [1])]
        if (current := acc.get("heating_cooling_target")) in _TS_MODES and current not in allowed:
            allowed.append(current)
    return [_TS_MODES[v] for v in allowed if v in _TS_MODES]


def _ts_action(acc: Accessory) -> HVACAction | None:
    current = acc.get("heating_cooling_current")
    if current is None:
        return None
    if acc.get("heating_cooling_target") == 0:
        return HVACAction.OFF
    return _TS_ACTIONS.get(current, HVACAction.IDLE)


async def _ts_set_mode(runtime: HomecastRuntime, acc: Accessory, mode: HVACMode) -> None:
    await _write(runtime, acc, {"heating_cooling_target": _TS_WRITE[mode]})


async def _ts_set_temp(runtime: HomecastRuntime, acc: Accessory, target: ClimateTarget) -> None:
    props: dict[str, Any] = {}
    if target.hvac_mode is not None:
        props["heating_cooling_target"] = _TS_WRITE[target.hvac_mode]
    if target.temperature is not None:
        props["target_temp"] = round(target.temperature, 1)
    if props:
        await _write(runtime, acc, props)


THERMOSTAT = GatewayClimateDescription[Accessory](
    key="climate",
    name=None,
    hvac_mode_fn=lambda acc: _TS_MODES.get(acc.get("heating_cooling_target")),
    hvac_modes_fn=_ts_modes,
    hvac_action_fn=_ts_action,
    current_temperature_fn=lambda acc: _num(acc.get("current_temp")),
    target_temperature_fn=lambda acc: _num(acc.get("target_temp")),
    current_humidity_fn=lambda acc: _num(acc.get("relative_humidity")),
    # HomeKit values are always Celsius; temperature_units is only the display preference.
    min_temp=10,
    max_temp=38,
    target_temperature_step=0.5,
    set_hvac_mode_fn=_ts_set_mode,
    set_temperature_fn=_ts_set_temp,
)


# ---------------------------------------------------------------------------------------------
# Lock, alarm


def _locked(acc: Accessory) -> bool | None:
    value = acc.get("locked")
    if isinstance(value, bool):
        return value
    # Raw LockCurrentState: 0 unsecured, 1 secured, 2 jammed, 3 unknown.
    return {0: False, 1: True}.get(value) if isinstance(value, int) else None


LOCK = GatewayLockDescription[Accessory](
    key="lock",
    name=None,
    is_locked_fn=_locked,
    is_jammed_fn=lambda acc: acc.get("locked") == 2 and not isinstance(acc.get("locked"), bool),
    set_locked_fn=lambda runtime, acc, locked: _write(
        runtime, acc, {"lock_target": locked}, {"locked": locked}
    ),
)

_ALARM_STATES = {
    "home": AlarmControlPanelState.ARMED_HOME,
    "away": AlarmControlPanelState.ARMED_AWAY,
    "night": AlarmControlPanelState.ARMED_NIGHT,
    "off": AlarmControlPanelState.DISARMED,
    "triggered": AlarmControlPanelState.TRIGGERED,
    # Raw SecuritySystemCurrentState, should a server send numbers.
    0: AlarmControlPanelState.ARMED_HOME,
    1: AlarmControlPanelState.ARMED_AWAY,
    2: AlarmControlPanelState.ARMED_NIGHT,
    3: AlarmControlPanelState.DISARMED,
    4: AlarmControlPanelState.TRIGGERED,
}
_ALARM_WRITE = {
    AlarmControlPanelState.ARMED_HOME: "home",
    AlarmControlPanelState.ARMED_AWAY: "away",
    AlarmControlPanelState.ARMED_NIGHT: "night",
    AlarmControlPanelState.DISARMED: "off",
}


def _alarm_state(acc: Accessory) -> AlarmControlPanelState | None:
    current = _ALARM_STATES.get(acc.get("alarm_state"))
    target = _ALARM_STATES.get(acc.get("alarm_target"))
    if current is AlarmControlPanelState.TRIGGERED or target is None or target == current:
        return current
    # The target moved ahead of the state: the system is on its way there.
    if target is AlarmControlPanelState.DISARMED:
        return AlarmControlPanelState.DISARMING
    return AlarmControlPanelState.ARMING


async def _alarm_set(
    runtime: HomecastRuntime, acc: Accessory, state: AlarmControlPanelState
) -> None:
    if state not in _ALARM_WRITE:
        raise ValueError(f"{acc.name} cannot be set to {state}")
    await _write(runtime, acc, {"alarm_target": _ALARM_WRITE[state]})


ALARM = GatewayAlarmDescription[Accessory](
    key="alarm",
    name=None,
    state_fn=_alarm_state,
    supported_features=AlarmControlPanelEntityFeature.ARM_HOME
    | AlarmControlPanelEntityFeature.ARM_AWAY
    | AlarmControlPanelEntityFeature.ARM_NIGHT,
    set_state_fn=_alarm_set,
)


# ---------------------------------------------------------------------------------------------
# Cover, fan, valve


def _cover_position(acc: Accessory) -> int | None:
    value = _num(acc.get("current_position"))
    if value is None:
        value = _num(acc.get("target"))
    return None if value is None else round(value)


def _cover_closed(acc: Accessory) -> bool | None:
    position = _cover_position(acc)
    return None if position is None else position == 0


COVER = GatewayCoverDescription[Accessory](
    key="cover",
    name=None,
    device_class=CoverDeviceClass.BLIND,
    is_closed_fn=_cover_closed,
    position_fn=_cover_position,
    # Raw PositionState: 0 going down (closing), 1 going up (opening), 2 stopped.
    is_opening_fn=lambda acc: acc.get("position_state") == 1,
    is_closing_fn=lambda acc: acc.get("position_state") == 0,
    open_fn=lambda runtime, acc: _write(runtime, acc, {"target": 100}),
    close_fn=lambda runtime, acc: _write(runtime, acc, {"target": 0}),
    set_position_fn=lambda runtime, acc, position: _write(runtime, acc, {"target": position}),
)


def _power_key(acc: Accessory) -> str:
    """Fans use `active`; older fan services only have `on`."""
    return "active" if acc.has("active") or "active" in acc.settable else "on"


async def _fan_on(runtime: HomecastRuntime, acc: Accessory, percentage: int | None) -> None:
    props: dict[str, Any] = {_power_key(acc): True}
    if percentage is not None:
        props["speed"] = percentage
    await _write(runtime, acc, props)


async def _fan_speed(runtime: HomecastRuntime, acc: Accessory, percentage: int) -> None:
    if percentage == 0:
        await _write(runtime, acc, {_power_key(acc): False})
        return
    await _write(runtime, acc, {_power_key(acc): True, "speed": percentage})


FAN = GatewayFanDescription[Accessory](
    key="fan",
    name=None,
    is_on_fn=lambda acc: _bool(acc.get(_power_key(acc))),
    percentage_fn=lambda acc: None if _num(acc.get("speed")) is None else round(acc.get("speed")),
    turn_on_fn=_fan_on,
    turn_off_fn=lambda runtime, acc: _write(runtime, acc, {_power_key(acc): False}),
    set_percentage_fn=_fan_speed,
)

VALVE = GatewayValveDescription[Accessory](
    key="valve",
    name=None,
    device_class=ValveDeviceClass.WATER,
    is_closed_fn=lambda acc: None if _bool(acc.get("active")) is None else not acc.get("active"),
    open_fn=lambda runtime, acc: _write(runtime, acc, {"active": True}),
    close_fn=lambda runtime, acc: _write(runtime, acc, {"active": False}),
)


# ---------------------------------------------------------------------------------------------
# Sensors and binary sensors (by the values an accessory reports)

TEMPERATURE = GatewaySensorDescription[Accessory](
    key="temperature",
    device_class=SensorDeviceClass.TEMPERATURE,
    state_class=SensorStateClass.MEASUREMENT,
    native_unit_of_measurement=UnitOfTemperature.CELSIUS,
    value_fn=lambda acc: _num(acc.get("current_temp")),
)
HUMIDITY = GatewaySensorDescription[Accessory](
    key="humidity",
    device_class=SensorDeviceClass.HUMIDITY,
    state_class=SensorStateClass.MEASUREMENT,
    native_unit_of_measurement=PERCENTAGE,
    value_fn=lambda acc: _num(acc.get("relative_humidity")),
)
ILLUMINANCE = GatewaySensorDescription[Accessory](
    key="illuminance",
    device_class=SensorDeviceClass.ILLUMINANCE,
    state_class=SensorStateClass.MEASUREMENT,
    native_unit_of_measurement=LIGHT_LUX,
    value_fn=lambda acc: _num(acc.get("current_ambient_light_level")),
)
BATTERY = GatewaySensorDescription[Accessory](
    key="battery",
    device_class=SensorDeviceClass.BATTERY,
    state_class=SensorStateClass.MEASUREMENT,
    native_unit_of_measurement=PERCENTAGE,
    entity_category=EntityCategory.DIAGNOSTIC,
    value_fn=lambda acc: _num(acc.get("battery")),
)
MOTION = GatewayBinarySensorDescription[Accessory](
    key="motion",
    device_class=BinarySensorDeviceClass.MOTION,
    is_on_fn=lambda acc: _bool(acc.get("motion")),
)
CONTACT = GatewayBinarySensorDescription[Accessory](
    key="contact",
    device_class=BinarySensorDeviceClass.OPENING,
    # HomeKit ContactSensorState: 0 = contact detected (closed).
    is_on_fn=lambda acc: _bool(acc.get("contact")),
)
OCCUPANCY = GatewayBinarySensorDescription[Accessory](
    key="occupancy",
    device_class=BinarySensorDeviceClass.OCCUPANCY,
    is_on_fn=lambda acc: _bool(acc.get("occupancy_detected")),
)
LOW_BATTERY = GatewayBinarySensorDescription[Accessory](
    key="low_battery",
    device_class=BinarySensorDeviceClass.BATTERY,
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda acc: _bool(acc.get("low_battery")),
)
OUTLET_IN_USE = GatewayBinarySensorDescription[Accessory](
    key="outlet_in_use",
    translation_key="outlet_in_use",
    device_class=BinarySensorDeviceClass.POWER,
    # Follows the switch state on most plugs: noise unless the plug measures load.
    entity_registry_enabled_default=False,
    is_on_fn=lambda acc: _bool(acc.get("outlet_in_use")),
)


def _flag(key: str) -> Callable[[Accessory], bool | None]:
    return lambda acc: _bool(acc.get(key))


def _reading(key: str) -> Callable[[Accessory], float | None]:
    return lambda acc: _num(acc.get(key))


def _door_open(acc: Accessory) -> bool | None:
    # CurrentDoorState: 0 open, 1 closed, 2 opening, 3 closing, 4 stopped (not closed).
    value = _int(acc.get("current_door_state"))
    return None if value is None else value != 1


# HomeKit AirQuality 0-5 (homecast-web src/components/automations/characteristics.ts).
_AIR_QUALITY = ("unknown", "excellent", "good", "fair", "inferior", "poor")


def _air_quality(acc: Accessory) -> str | None:
    value = _int(acc.get("air_quality"))
    return _AIR_QUALITY[value] if value is not None and 0 <= value < len(_AIR_QUALITY) else None


def _measure(
    key: str, device_class: SensorDeviceClass, unit: str, **kwargs: Any
) -> GatewaySensorDescription[Accessory]:
    return GatewaySensorDescription[Accessory](
        key=key,
        device_class=device_class,
        state_class=kwargs.pop("state_class", SensorStateClass.MEASUREMENT),
        native_unit_of_measurement=unit,
        value_fn=_reading(key),
        **kwargs,
    )


# Characteristics get_state passes through under their raw relay names (getSimpleName in
# src/server/local-rest.ts keeps every name outside CHAR_TO_SIMPLE): the boolean, enum and
# unit tables of src/components/automations/characteristics.ts list the ones that matter.
# Accessories carrying them are mostly of type "other" (getDeviceType has no leak, smoke,
# carbon monoxide, occupancy, humidity or air-quality type).
RAW_EXTRAS: tuple[tuple[str, Platform, GatewayEntityDescription[Accessory]], ...] = (
    (
        "leak_detected",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="leak_detected",
            device_class=BinarySensorDeviceClass.MOISTURE,
            is_on_fn=_flag("leak_detected"),
        ),
    ),
    (
        "smoke_detected",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="smoke_detected",
            device_class=BinarySensorDeviceClass.SMOKE,
            is_on_fn=_flag("smoke_detected"),
        ),
    ),
    (
        "carbon_monoxide_detected",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="carbon_monoxide_detected",
            device_class=BinarySensorDeviceClass.CO,
            is_on_fn=_flag("carbon_monoxide_detected"),
        ),
    ),
    (
        "carbon_dioxide_detected",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="carbon_dioxide_detected",
            translation_key="carbon_dioxide_detected",
            device_class=BinarySensorDeviceClass.PROBLEM,
            is_on_fn=_flag("carbon_dioxide_detected"),
        ),
    ),
    (
        "obstruction_detected",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="obstruction_detected",
            translation_key="obstruction_detected",
            device_class=BinarySensorDeviceClass.PROBLEM,
            is_on_fn=_flag("obstruction_detected"),
        ),
    ),
    (
        "current_door_state",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="current_door_state",
            device_class=BinarySensorDeviceClass.GARAGE_DOOR,
            is_on_fn=_door_open,
        ),
    ),
    (
        "status_fault",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="status_fault",
            device_class=BinarySensorDeviceClass.PROBLEM,
            entity_category=EntityCategory.DIAGNOSTIC,
            is_on_fn=_flag("status_fault"),
        ),
    ),
    (
        "status_tampered",
        Platform.BINARY_SENSOR,
        GatewayBinarySensorDescription[Accessory](
            key="status_tampered",
            device_class=BinarySensorDeviceClass.TAMPER,
            entity_category=EntityCategory.DIAGNOSTIC,
            is_on_fn=_flag("status_tampered"),
        ),
    ),
    (
        "air_quality",
        Platform.SENSOR,
        GatewaySensorDescription[Accessory](
            key="air_quality",
            translation_key="air_quality",
            device_class=SensorDeviceClass.ENUM,
            options=list(_AIR_QUALITY),
            value_fn=_air_quality,
        ),
    ),
    (
        "carbon_dioxide_level",
        Platform.SENSOR,
        _measure("carbon_dioxide_level", SensorDeviceClass.CO2, PARTS_PER_MILLION),
    ),
    (
        "carbon_monoxide_level",
        Platform.SENSOR,
        _measure("carbon_monoxide_level", SensorDeviceClass.CO, PARTS_PER_MILLION),
    ),
    (
        "pm2_5_density",
        Platform.SENSOR,
        _measure("pm2_5_density", SensorDeviceClass.PM25, MICROGRAMS_PER_CUBIC_METER),
    ),
    (
        "pm10_density",
        Platform.SENSOR,
        _measure("pm10_density", SensorDeviceClass.PM10, MICROGRAMS_PER_CUBIC_METER),
    ),
    (
        "voc_density",
        Platform.SENSOR,
        _measure(
            "voc_density",
            SensorDeviceClass.VOLATILE_ORGANIC_COMPOUNDS,
            MICROGRAMS_PER_CUBIC_METER,
        ),
    ),
    (
        "eve_energy_watt",
        Platform.SENSOR,
        _measure("eve_energy_watt", SensorDeviceClass.POWER, UnitOfPower.WATT),
    ),
    (
        "eve_energy_kwh",
        Platform.SENSOR,
        _measure(
            "eve_energy_kwh",
            SensorDeviceClass.ENERGY,
            UnitOfEnergy.KILO_WATT_HOUR,
            state_class=SensorStateClass.TOTAL_INCREASING,
        ),
    ),
    (
        "eve_voltage",
        Platform.SENSOR,
        _measure("eve_voltage", SensorDeviceClass.VOLTAGE, UnitOfElectricPotential.VOLT),
    ),
    (
        "eve_ampere",
        Platform.SENSOR,
        _measure("eve_ampere", SensorDeviceClass.CURRENT, UnitOfElectricCurrent.AMPERE),
    ),
    (
        "eve_air_pressure",
        Platform.SENSOR,
        _measure("eve_air_pressure", SensorDeviceClass.ATMOSPHERIC_PRESSURE, UnitOfPressure.HPA),
    ),
)

# Stateless programmable switch events: 0 single, 1 double, 2 long press.
_PRESS_TYPES = {0: "single_press", 1: "double_press", 2: "long_press"}
# A doorbell's single press is its ring: HA wants doorbell event entities to offer "ring"
# (event/__init__.py async_internal_added_to_hass warns until 2027.4), as core's
# homekit_controller/event.py DOORBELL_EVENT_VALUES maps HomeKit's single press.
_DOORBELL_TYPES = {**_PRESS_TYPES, 0: "ring"}


def _press_reader(types: dict[int, str]) -> Callable[[Accessory], list[EventOccurrence]]:
    def presses(acc: Accessory) -> list[EventOccurrence]:
        return [
            EventOccurrence(marker=e.marker, event_type=types[e.value])
            for e in acc.events
            if e.value in types
        ]

    return presses


DOORBELL = GatewayEventDescription[Accessory](
    key="doorbell",
    translation_key="doorbell",
    device_class=EventDeviceClass.DOORBELL,
    event_types=list(_DOORBELL_TYPES.values()),
    events_fn=_press_reader(_DOORBELL_TYPES),
)
BUTTON_EVENT = GatewayEventDescription[Accessory](
    key="button",
    translation_key="button",
    device_class=EventDeviceClass.BUTTON,
    event_types=list(_PRESS_TYPES.values()),
    events_fn=_press_reader(_PRESS_TYPES),
)

# The community server never reports a press, polled or pushed: the relay names HomeKit's
# ProgrammableSwitchEvent by its raw UUID, local-rest.ts getSimpleName drops UUID-like names,
# and the relay does not observe it (HomeKitManager.swift keyCharacteristicTypes). An event
# entity there could never fire, so community entries get none.
_PRESS_EVENTS = (DOORBELL, BUTTON_EVENT)


# ---------------------------------------------------------------------------------------------
# Virtual accessories


def _parse_datetime(value: Any) -> datetime | None:
    # A date alone ("2026-12-03") is a day, not an instant: only a value with a time is one.
    if not isinstance(value, str) or len(value) <= len("2026-12-03"):
        return None
    parsed = dt_util.parse_datetime(value)
    if parsed is None:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt_util.UTC)


async def _counter_add(runtime: HomecastRuntime, acc: Accessory) -> None:
    # set_state sets the count (it does not add); get_state carries no step, so by one.
    current = acc.get("virtual_count")
    count = current if isinstance(current, int) and not isinstance(current, bool) else 0
    await _write(runtime, acc, {"virtual_count": count + 1})


V_MODE = GatewaySelectDescription[Accessory](
    key="virtual_mode",
    name=None,
    current_option_fn=lambda acc: (
        None if acc.get("virtual_mode") is None else str(acc.get("virtual_mode"))
    ),
    # get_state lists no options: the API offers the ones it has seen (api.ModeMemory).
    options_fn=lambda acc: [str(o) for o in acc.options.get("virtual_mode", [])],
    select_fn=lambda runtime, acc, option: _write(runtime, acc, {"virtual_mode": option}),
)
V_NUMBER = GatewayNumberDescription[Accessory](
    key="virtual_number",
    name=None,
    # get_state carries no limits; the server refuses a value outside the definition's.
    mode=NumberMode.BOX,
    native_min_value=-1_000_000,
    native_max_value=1_000_000,
    native_step=0.001,
    value_fn=lambda acc: _num(acc.get("virtual_number")),
    set_fn=lambda runtime, acc, value: _write(
        runtime, acc, {"virtual_number": int(value) if float(value).is_integer() else value}
    ),
)
V_COUNTER = GatewaySensorDescription[Accessory](
    key="virtual_count",
    name=None,
    state_class=SensorStateClass.MEASUREMENT,
    value_fn=lambda acc: _int(acc.get("virtual_count")),
)
V_COUNTER_INCREMENT = GatewayButtonDescription[Accessory](
    key="virtual_count_increment",
    translation_key="counter_increment",
    press_fn=_counter_add,
)
V_COUNTER_RESET = GatewayButtonDescription[Accessory](
    key="virtual_count_reset",
    translation_key="counter_reset",
    press_fn=lambda runtime, acc: _write(runtime, acc, {"virtual_count": 0}),
)
V_TIMER = GatewaySwitchDescription[Accessory](
    key="virtual_timer",
    name=None,
    is_on_fn=lambda acc: acc.get("virtual_timer") == "active",
    # "active" starts the timer; anything else cancels it.
    set_fn=lambda runtime, acc, on: _write(
        runtime, acc, {"virtual_timer": "active" if on else "idle"}
    ),
)
V_TEXT = GatewayTextDescription[Accessory](
    key="virtual_text",
    name=None,
    value_fn=lambda acc: None if acc.get("virtual_text") is None else str(acc.get("virtual_text")),
    set_fn=lambda runtime, acc, value: _write(runtime, acc, {"virtual_text": value}),
)
# A date-only or time-only value (or an unset one, "") is no instant: shown and set as text.
V_DATE_TEXT = GatewayTextDescription[Accessory](
    key="virtual_datetime_text",
    name=None,
    value_fn=lambda acc: (
        None if acc.get("virtual_datetime") is None else str(acc.get("virtual_datetime"))
    ),
    set_fn=lambda runtime, acc, value: _write(runtime, acc, {"virtual_datetime": value}),
)
V_DATE = GatewayDateTimeDescription[Accessory](
    key="virtual_datetime",
    name=None,
    value_fn=lambda acc: _parse_datetime(acc.get("virtual_datetime")),
    set_fn=lambda runtime, acc, value: _write(
        runtime, acc, {"virtual_datetime": value.isoformat(timespec="seconds")}
    ),
)


def _virtual_value_fn(acc: Accessory) -> Any:
    return _virtual_value(acc)


# Read-only forms of virtual accessories a person may not change ("Adjustable here" off).
V_READONLY_ON = GatewayBinarySensorDescription[Accessory](
    key="virtual_state",
    name=None,
    is_on_fn=lambda acc: _bool(acc.get("on")) or acc.get("virtual_timer") == "active",
)
V_READONLY = GatewaySensorDescription[Accessory](
    key="virtual_value",
    name=None,
    value_fn=_virtual_value_fn,
)
V_READONLY_TIME = GatewaySensorDescription[Accessory](
    key="virtual_value",
    name=None,
    device_class=SensorDeviceClass.TIMESTAMP,
    value_fn=lambda acc: _parse_datetime(acc.get("virtual_datetime")),
)


def _virtual_value(acc: Accessory) -> Any:
    for key in (
        "virtual_mode",
        "virtual_number",
        "virtual_count",
        "virtual_text",
        "virtual_datetime",
    ):
        if acc.has(key):
            value = acc.get(key)
            return value if isinstance(value, int | float | str) else None
    return None


# ---------------------------------------------------------------------------------------------
# Scenes and automations (entities of the home device)


@dataclass(frozen=True, slots=True)
class SceneRef:
    """A scene of a home (scenes are known by name only)."""

    home: Home
    name: str


@dataclass(frozen=True, slots=True)
class AutomationRef:
    """An automation of one of the two engines."""

    home: Home
    engine: str  # "homekit" or "homecast"
    data: dict[str, Any]


async def _run_scene(runtime: HomecastRuntime, ref: SceneRef) -> None:
    await runtime.api.async_run_scene(ref.home.key, ref.name)
    # What the scene changed shows at once, as after the backend's own run_scene tool.
    await runtime.coordinator.async_request_refresh()


SCENE = GatewaySceneDescription[SceneRef](key="scene", activate_fn=_run_scene)

_HOMEKIT_ATTRS = ("trigger", "actions", "editable", "last_fired")
_HOMECAST_ATTRS = (
    "mode",
    "description",
    "triggers",
    "conditions",
    "actions",
    "last_triggered",
    "trigger_count",
    "editable_via_mcp",
)


def _automation_attrs(ref: AutomationRef) -> Mapping[str, Any]:
    names = _HOMEKIT_ATTRS if ref.engine == "homekit" else _HOMECAST_ATTRS
    attrs = {"engine": ref.engine, "automation_id": ref.data.get("id")}
    attrs |= {name: ref.data[name] for name in names if name in ref.data}
    if ref.engine == "homekit" and ref.home.view_only:
        attrs["read_only"] = True
    return attrs


async def _automation_enable(runtime: HomecastRuntime, ref: AutomationRef, on: bool) -> None:
    if ref.engine == "homekit":
        await runtime.api.async_update_automation(ref.home.key, str(ref.data["id"]), on)
    else:
        await runtime.api.async_update_hc_automation(ref.home.key, str(ref.data["id"]), on)
    ref.data["enabled"] = on


AUTOMATION = GatewaySwitchDescription[AutomationRef](
    key="automation",
    entity_category=EntityCategory.CONFIG,
    is_on_fn=lambda ref: ref.data.get("enabled") is not False,
    attributes_fn=_automation_attrs,
    set_fn=_automation_enable,
)


# ---------------------------------------------------------------------------------------------
# Deriving the specs


@dataclass(frozen=True, slots=True)
class AccessoryEntity:
    """An entity an accessory gets when `has_fn` says it supports it (as core's peblar/tedee)."""

    platform: Platform
    description: GatewayEntityDescription[Accessory]
    has_fn: Callable[[Accessory], bool]


def _of_type(kind: str) -> Callable[[Accessory], bool]:
    return lambda acc: acc.type == kind


def _has(key: str) -> Callable[[Accessory], bool]:
    return lambda acc: acc.has(key)


def _read_only_on(acc: Accessory) -> bool:
    # A virtual switch with "Adjustable here" off: get_state lists `on` unsettable.
    return acc.has("on") and "on" not in acc.settable


def _thermostat(acc: Accessory) -> bool:
    return acc.type == "climate" and (acc.has("heating_cooling_target") or acc.has("target_temp"))


def _heater_cooler(acc: Accessory, fan: bool) -> bool:
    return acc.type == "climate" and not _thermostat(acc) and acc.has("speed") == fan


# The accessory's own control entities, by the type get_state gives it.
MAIN_ENTITIES: tuple[AccessoryEntity, ...] = (
    AccessoryEntity(Platform.LIGHT, LIGHT, _of_type("light")),
    AccessoryEntity(
        Platform.BINARY_SENSOR,
        V_READONLY_ON,
        lambda acc: acc.type == "switch" and _read_only_on(acc),
    ),
    AccessoryEntity(
        Platform.SWITCH, SWITCH, lambda acc: acc.type == "switch" and not _read_only_on(acc)
    ),
    AccessoryEntity(Platform.SWITCH, OUTLET, _of_type("outlet")),
    AccessoryEntity(Platform.CLIMATE, THERMOSTAT, _thermostat),
    AccessoryEntity(Platform.CLIMATE, HEATER_COOLER_FAN, lambda acc: _heater_cooler(acc, True)),
    AccessoryEntity(Platform.CLIMATE, HEATER_COOLER, lambda acc: _heater_cooler(acc, False)),
    AccessoryEntity(Platform.LOCK, LOCK, _of_type("lock")),
    AccessoryEntity(Platform.ALARM_CONTROL_PANEL, ALARM, _of_type("alarm")),
    AccessoryEntity(Platform.COVER, COVER, _of_type("blind")),
    AccessoryEntity(Platform.FAN, FAN, _of_type("fan")),
    AccessoryEntity(Platform.VALVE, VALVE, _of_type("valve")),
    AccessoryEntity(Platform.NUMBER, VOLUME, _of_type("speaker")),
    AccessoryEntity(Platform.SWITCH, MUTE, _of_type("speaker")),
    AccessoryEntity(Platform.EVENT, DOORBELL, _of_type("doorbell")),
    AccessoryEntity(Platform.EVENT, BUTTON_EVENT, _of_type("button")),
)


def _instant(acc: Accessory) -> bool:
    """A date accessory whose value is a full date and time (else it is edited as text)."""
    info = acc.virtual
    return (
        info is not None
        and info.kind == "date"
        and _parse_datetime(acc.get("virtual_datetime")) is not None
    )


def _virtual_kind(kind: str, *, controllable: bool = True) -> Callable[[Accessory], bool]:
    def has(acc: Accessory) -> bool:
        info = acc.virtual
        return info is not None and info.kind == kind and info.controllable == controllable

    return has


def _virtual_read_only(instant: bool) -> Callable[[Accessory], bool]:
    def has(acc: Accessory) -> bool:
        info = acc.virtual
        return (
            info is not None
            and not info.controllable
            and info.kind != "timer"
            and _instant(acc) == instant
        )

    return has


# Virtual accessories, by the value key get_state reports; no `_settable` means people may not
# change it.
VIRTUAL_ENTITIES: tuple[AccessoryEntity, ...] = (
    AccessoryEntity(
        Platform.BINARY_SENSOR, V_READONLY_ON, _virtual_kind("timer", controllable=False)
    ),
    AccessoryEntity(Platform.SENSOR, V_READONLY_TIME, _virtual_read_only(instant=True)),
    AccessoryEntity(Platform.SENSOR, V_READONLY, _virtual_read_only(instant=False)),
    AccessoryEntity(
        Platform.TEXT, V_DATE_TEXT, lambda acc: _virtual_kind("date")(acc) and not _instant(acc)
    ),
    AccessoryEntity(Platform.SELECT, V_MODE, _virtual_kind("mode")),
    AccessoryEntity(Platform.NUMBER, V_NUMBER, _virtual_kind("number")),
    AccessoryEntity(Platform.SENSOR, V_COUNTER, _virtual_kind("counter")),
    AccessoryEntity(Platform.BUTTON, V_COUNTER_INCREMENT, _virtual_kind("counter")),
    AccessoryEntity(Platform.BUTTON, V_COUNTER_RESET, _virtual_kind("counter")),
    AccessoryEntity(Platform.SWITCH, V_TIMER, _virtual_kind("timer")),
    AccessoryEntity(Platform.TEXT, V_TEXT, _virtual_kind("text")),
    AccessoryEntity(
        Platform.DATETIME, V_DATE, lambda acc: _virtual_kind("date")(acc) and _instant(acc)
    ),
)

# Sensors that follow from the values an accessory reports, whatever its type.
EXTRA_ENTITIES: tuple[AccessoryEntity, ...] = (
    AccessoryEntity(
        Platform.SENSOR, TEMPERATURE, lambda acc: acc.has("current_temp") and acc.type != "climate"
    ),
    AccessoryEntity(Platform.SENSOR, HUMIDITY, _has("relative_humidity")),
    AccessoryEntity(Platform.SENSOR, ILLUMINANCE, _has("current_ambient_light_level")),
    AccessoryEntity(Platform.SENSOR, BATTERY, _has("battery")),
    AccessoryEntity(Platform.BINARY_SENSOR, MOTION, _has("motion")),
    AccessoryEntity(Platform.BINARY_SENSOR, CONTACT, _has("contact")),
    AccessoryEntity(Platform.BINARY_SENSOR, OCCUPANCY, _has("occupancy_detected")),
    AccessoryEntity(Platform.BINARY_SENSOR, LOW_BATTERY, _has("low_battery")),
    AccessoryEntity(Platform.BINARY_SENSOR, OUTLET_IN_USE, _has("outlet_in_use")),
    *(
        AccessoryEntity(platform, description, _has(key))
        for key, platform, description in RAW_EXTRAS
    ),
)


def _main(acc: Accessory) -> list[tuple[Platform, GatewayEntityDescription[Accessory]]]:
    """The accessory's own control entities: a virtual accessory's by its kind, else by type."""
    table = VIRTUAL_ENTITIES if acc.virtual is not None else MAIN_ENTITIES
    return [(entity.platform, entity.description) for entity in table if entity.has_fn(acc)]


def _extras(acc: Accessory) -> list[tuple[Platform, GatewayEntityDescription[Accessory]]]:
    """Sensors that follow from the values an accessory reports (none for virtual ones)."""
    if acc.virtual is not None:
        return []
    return [
        (entity.platform, entity.description) for entity in EXTRA_ENTITIES if entity.has_fn(acc)
    ]


def _live_home(coordinator: HomecastCoordinator, home_uuid: str) -> Home | None:
    """The home as last polled, or None while it is gone (its entities are unavailable)."""
    data: HomecastState | None = coordinator.data
    home = data.homes.get(home_uuid) if data is not None else None
    return None if home is None or home.missing else home


def _accessory_source(
    coordinator: HomecastCoordinator, home_uuid: str, uid: str
) -> Callable[[], Accessory | None]:
    def source() -> Accessory | None:
        home = _live_home(coordinator, home_uuid)
        return home.accessories.get(uid) if home is not None else None

    return source


def _scene_source(
    coordinator: HomecastCoordinator, home_uuid: str, name: str
) -> Callable[[], SceneRef | None]:
    def source() -> SceneRef | None:
        home = _live_home(coordinator, home_uuid)
        if home is None or name not in home.scenes:
            return None
        return SceneRef(home, name)

    return source


def _automation_source(
    coordinator: HomecastCoordinator, home_uuid: str, engine: str, automation_id: str
) -> Callable[[], AutomationRef | None]:
    def source() -> AutomationRef | None:
        home = _live_home(coordinator, home_uuid)
        if home is None:
            return None
        items = home.automations if engine == "homekit" else home.hc_automations
        for item in items:
            if str(item.get("id")) == automation_id:
                return AutomationRef(home, engine, item)
        return None

    return source


def derive_specs(coordinator: HomecastCoordinator) -> list[EntitySpec]:
    """Every entity the current data calls for."""
    specs: list[EntitySpec] = []
    data: HomecastState | None = coordinator.data
    if data is None:
        return specs
    community = coordinator.config_entry.data.get(CONF_SERVER) == SERVER_COMMUNITY
    # Two homes often hold the same accessories ("Kitchen Desk Lamp" in each): their devices,
    # and so the entities named after them, carry the home's name.
    several = len(data.homes) > 1
    # Where HA begins entity ids with the area (the room), the device is named without the
    # room its name starts with, as Apple's Home app shows it in its room: "George Street Desk
    # Lamp" in the Kitchen gives light.kitchen_george_street_desk_lamp, not
    # light.kitchen_george_street_kitchen_desk_lamp. The gateway finds it by the room's words
    # all the same (its area's name is among an entity's words).
    area_first = area_leads_entity_ids(coordinator.hass)
    for home_uuid, home in data.homes.items():
        home_device = DeviceSpec(
            key=home_device_key(home),
            name=home.name,
            manufacturer="Homecast",
            model="HomeKit home",
            home=home.name,
        )
        for acc in home.accessories.values():
            device = DeviceSpec(
                key=accessory_device_key(home, acc),
                name=_device_name(home, acc, several=several, area_first=area_first),
                manufacturer="Homecast" if acc.virtual is not None else MANUFACTURER,
                model=_model(acc),
                # A virtual accessory without a room is listed under "unknown_0000".
                suggested_area=None if acc.room_key == NO_ROOM else acc.room_name,
                via=home_device,
                home=home.name,
            )
            source = _accessory_source(coordinator, home_uuid, acc.uid)
            for platform, description in (*_main(acc), *_extras(acc)):
                if community and description in _PRESS_EVENTS:
                    continue
                specs.append(
                    EntitySpec(
                        platform=platform,
                        key=f"{device.key}_{description.key}",
                        device=device,
                        description=description,
                        coordinator=coordinator,
                        source=source,
                        available_fn=_reachable,
                    )
                )
        for name in home.scenes:
            specs.append(
                EntitySpec(
                    platform=Platform.SCENE,
                    key=scene_key(home, name),
                    device=home_device,
                    description=SCENE,
                    coordinator=coordinator,
                    source=_scene_source(coordinator, home_uuid, name),
                    name=name,
                )
            )
        for engine, items in (("homekit", home.automations), ("homecast", home.hc_automations)):
            prefix = "automation" if engine == "homekit" else "hc_automation"
            for item in items:
                automation_id = str(item["id"])
                specs.append(
                    EntitySpec(
                        platform=Platform.SWITCH,
                        key=f"{home_device.key}_{prefix}_{automation_id.lower()}",
                        device=home_device,
                        description=AUTOMATION,
                        coordinator=coordinator,
                        source=_automation_source(coordinator, home_uuid, engine, automation_id),
                        name=str(item.get("name") or automation_id),
                    )
                )
    # Two scene names can slug alike ("Movie time" / "Movie Time!"): keep the first.
    seen: set[tuple[Platform, str]] = set()
    unique: list[EntitySpec] = []
    for spec in specs:
        if (spec.platform, spec.key) not in seen:
            seen.add((spec.platform, spec.key))
            unique.append(spec)
    return unique


def _device_name(home: Home, acc: Accessory, *, several: bool, area_first: bool) -> str:
    """An accessory's device name: without its room where HA begins entity ids with the room
    (its area), with its home first in an account of several homes."""
    name = acc.name
    if area_first and acc.room_key != NO_ROOM:
        name = without_area(acc.room_name, name)
    return home_named(home.name, name) if several else name


def home_named(home: str, name: str) -> str:
    """An accessory's device name in an account of several homes: the home first, as HA
    puts a device's name before its entities' ("Rob's Flat Kitchen Desk Lamp"), unless the
    name already says it."""
    if words(home) and _contains(words(name), words(home)):
        return name
    return f"{home} {name}"


def _contains(words: list[str], part: list[str]) -> bool:
    size = len(part)
    return any(words[i : i + size] == part for i in range(len(words) - size + 1))


def _model(acc: Accessory) -> str:
    """A readable model from Homecast's type slug ("light_sensor" -> "Light sensor"); "other",
    its word for an accessory of no simpler kind, reads "Accessory"."""
    if acc.virtual is not None:
        return f"Virtual {acc.virtual.kind.replace('_', ' ')}"
    kind = "accessory" if acc.type == "other" else acc.type.replace("_", " ")
    return f"{kind.capitalize()} group" if acc.group else kind.capitalize()


# The event key (vocabulary.py) and the device key (api.py), re-exported for tests.
__all__ = ["EVENT_KEY", "accessory_device_key", "derive_specs"]
