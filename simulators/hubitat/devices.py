"""Device kinds of the simulated hub: capabilities, attributes, commands and what commands do."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
import json
import random
from typing import Any

# A stage of a command's effect: after `factor` x the command delay, set these attributes.
Stage = tuple[float, dict[str, Any]]
Effect = Callable[["Device", list[Any]], list[Stage]]


class CommandFailed(Exception):
    """The driver rejected the call (wrong arguments): a runtime failure, not a validation one."""


@dataclass
class Attribute:
    name: str
    data_type: str  # NUMBER, ENUM, STRING, JSON_OBJECT as the hub reports them
    value: Any
    unit: str | None = None
    date: datetime | None = None


@dataclass
class Event:
    name: str
    value: str  # hub events carry string values
    unit: str | None
    description: str
    date: datetime
    is_state_change: bool = True


@dataclass
class Device:
    id: int
    name: str
    label: str
    kind: str
    driver: str
    capabilities: list[str]
    attributes: dict[str, Attribute]
    commands: dict[str, tuple[tuple[str, str], ...] | None]  # (name, type) of each argument
    dni: str
    room_id: int | None = None
    disabled: bool = False
    selected: bool = True  # chosen in the MCP app; unselected devices are invisible
    parent_id: int | None = None
    mcp_managed: bool = False
    driver_namespace: str = "hubitat"
    broken: bool = False  # a command raises inside the driver
    last_activity: datetime | None = None
    events: deque[Event] = field(default_factory=lambda: deque(maxlen=500))
    tags: list[str] = field(default_factory=list)
    data_values: dict[str, str] = field(default_factory=dict)
    preferences: dict[str, Any] = field(default_factory=dict)

    @property
    def display(self) -> str:
        """The label, else the name: what upstream messages call the device."""
        return self.label or self.name

    def value(self, attribute: str) -> Any:
        """The current value of an attribute (the platform's device.currentValue), None when
        unknown.
        """
        attr = self.attributes.get(attribute)
        return None if attr is None else attr.value


@dataclass(frozen=True)
class Kind:
    """A device kind: the driver, its capabilities, attribute types and initial values."""

    key: str
    driver: str
    noun: str  # used to build labels
    capabilities: tuple[str, ...]
    attributes: tuple[tuple[str, str, str | None], ...]  # (name, dataType, unit)
    commands: tuple[tuple[str, tuple[tuple[str, str], ...] | None], ...]
    initial: Callable[[random.Random], dict[str, Any]]
    protocol: str = "zigbee"


def _n(value: Any) -> float | int:
    """Hub-side conversion of a parameter to a number (the driver would throw otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            value = float(str(value))
        except ValueError as err:
            raise CommandFailed(f"cannot convert '{value}' to a number") from err
    return int(value) if float(value).is_integer() else round(float(value), 2)


def _clamp(value: float, low: float, high: float) -> int:
    return int(max(low, min(high, value)))


# ---- effects ----


def _switch(state: str) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        changes: dict[str, Any] = {"switch": state}
        if "power" in device.attributes:
            changes["power"] = 0 if state == "off" else 60 + device.id % 40
        if "speed" in device.attributes:
            changes["speed"] = "off" if state == "off" else "medium"
        return [(1.0, changes)]

    return effect


def _set_level(device: Device, params: list[Any]) -> list[Stage]:
    if not params:
        raise CommandFailed("setLevel needs a level")
    level = _clamp(_n(params[0]), 0, 100)
    changes: dict[str, Any] = {"level": level}
    if "switch" in device.attributes:
        changes["switch"] = "on" if level > 0 else "off"
    if "windowShade" in device.attributes:
        return _position(device, [level])
    return [(1.0, changes)]


def _set_color(device: Device, params: list[Any]) -> list[Stage]:
    if not params or not isinstance(params[0], dict):
        raise CommandFailed("setColor needs a map {hue, saturation, level}")
    color = params[0]
    changes: dict[str, Any] = {"colorMode": "RGB", "switch": "on"}
    for key in ("hue", "saturation", "level"):
        if key in color:
            changes[key] = _clamp(_n(color[key]), 0, 100)
    return [(1.0, changes)]


def _set_ct(device: Device, params: list[Any]) -> list[Stage]:
    if not params:
        raise CommandFailed("setColorTemperature needs a kelvin value")
    changes: dict[str, Any] = {
        "colorTemperature": _clamp(_n(params[0]), 2000, 6500),
        "colorMode": "CT",
        "switch": "on",
    }
    if len(params) > 1 and params[1] is not None:
        changes["level"] = _clamp(_n(params[1]), 0, 100)
    return [(1.0, changes)]


def _set(attribute: str, value: Any) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        return [(1.0, {attribute: value})]

    return effect


def _travel(attribute: str, moving: str, final: str, position: int | None) -> Effect:
    """Covers and doors move: first the moving state, the end state a few delays later."""

    def effect(device: Device, params: list[Any]) -> list[Stage]:
        end: dict[str, Any] = {attribute: final}
        if position is not None and "position" in device.attributes:
            end["position"] = position
            end["level"] = position
        if "contact" in device.attributes:
            end["contact"] = "closed" if final == "closed" else "open"
        return [(1.0, {attribute: moving}), (4.0, end)]

    return effect


def _position(device: Device, params: list[Any]) -> list[Stage]:
    if not params:
        raise CommandFailed("setPosition needs a position")
    target = _clamp(_n(params[0]), 0, 100)
    current = device.value("position") or 0
    final = "open" if target == 100 else "closed" if target == 0 else "partially open"
    moving = "opening" if target > current else "closing"
    return [
        (1.0, {"windowShade": moving}),
        (4.0, {"windowShade": final, "position": target, "level": target}),
    ]


FAN_SPEEDS = ("low", "medium-low", "medium", "medium-high", "high", "on", "off", "auto")


def _set_speed(device: Device, params: list[Any]) -> list[Stage]:
    if not params or str(params[0]) not in FAN_SPEEDS:
        raise CommandFailed(f"setSpeed needs one of {', '.join(FAN_SPEEDS)}")
    speed = str(params[0])
    return [(1.0, {"speed": speed, "switch": "off" if speed == "off" else "on"})]


THERMOSTAT_MODES = ("auto", "cool", "heat", "off", "emergency heat")


def _thermostat_mode(mode: str | None) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        target = mode or (str(params[0]) if params else "")
        if target not in THERMOSTAT_MODES:
            raise CommandFailed(f"unsupported thermostat mode '{target}'")
        temp = device.value("temperature") or 70
        operating = "idle"
        if target == "heat" and temp < (device.value("heatingSetpoint") or 68):
            operating = "heating"
        elif target == "cool" and temp > (device.value("coolingSetpoint") or 76):
            operating = "cooling"
        return [(1.0, {"thermostatMode": target}), (2.0, {"thermostatOperatingState": operating})]

    return effect


def _fan_mode(mode: str | None) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        target = mode or (str(params[0]) if params else "")
        if target not in ("auto", "on", "circulate"):
            raise CommandFailed(f"unsupported fan mode '{target}'")
        return [(1.0, {"thermostatFanMode": target})]

    return effect


def _setpoint(attribute: str) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        if not params:
            raise CommandFailed(f"{attribute} needs a temperature")
        value = _n(params[0])
        changes = {attribute: value}
        mode = device.value("thermostatMode")
        if (mode == "heat" and attribute == "heatingSetpoint") or (
            mode == "cool" and attribute == "coolingSetpoint"
        ):
            changes["thermostatSetpoint"] = value
        return [(1.0, changes)]

    return effect


def _button(event: str) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        if not params:
            raise CommandFailed(f"{event} needs a button number")
        number = _n(params[0])
        if not 1 <= number <= (device.value("numberOfButtons") or 1):
            raise CommandFailed(f"button {number} does not exist")
        return [(1.0, {event: int(number)})]

    return effect


def _percent(attribute: str) -> Effect:
    def effect(device: Device, params: list[Any]) -> list[Stage]:
        if not params:
            raise CommandFailed(f"{attribute} needs a value")
        return [(1.0, {attribute: _clamp(_n(params[0]), 0, 100), "colorMode": "RGB"})]

    return effect


def _refresh(device: Device, params: list[Any]) -> list[Stage]:
    return []


def _no_op(device: Device, params: list[Any]) -> list[Stage]:
    return []


EFFECTS: dict[str, Effect] = {
    "on": _switch("on"),
    "off": _switch("off"),
    "setLevel": _set_level,
    "setColor": _set_color,
    "setColorTemperature": _set_ct,
    "setHue": _percent("hue"),
    "setSaturation": _percent("saturation"),
    "lock": _set("lock", "locked"),
    "unlock": _set("lock", "unlocked"),
    "setPosition": _position,
    "setSpeed": _set_speed,
    "cycleSpeed": lambda d, p: [(1.0, {"speed": "high" if d.value("speed") != "high" else "low"})],
    "setThermostatMode": _thermostat_mode(None),
    "auto": _thermostat_mode("auto"),
    "heat": _thermostat_mode("heat"),
    "cool": _thermostat_mode("cool"),
    "emergencyHeat": _thermostat_mode("emergency heat"),
    "setThermostatFanMode": _fan_mode(None),
    "fanAuto": _fan_mode("auto"),
    "fanOn": _fan_mode("on"),
    "fanCirculate": _fan_mode("circulate"),
    "setHeatingSetpoint": _setpoint("heatingSetpoint"),
    "setCoolingSetpoint": _setpoint("coolingSetpoint"),
    "push": _button("pushed"),
    "hold": _button("held"),
    "doubleTap": _button("doubleTapped"),
    "release": _button("released"),
    "refresh": _refresh,
    "configure": _no_op,
    "startLevelChange": _no_op,
    "stopLevelChange": _no_op,
    "stopPositionChange": _no_op,
    "startPositionChange": _no_op,
    "arrived": _set("presence", "present"),
    "departed": _set("presence", "not present"),
}

# Context-dependent effects: the same command name means different things per kind.
KIND_EFFECTS: dict[tuple[str, str], Effect] = {
    ("shade", "open"): _travel("windowShade", "opening", "open", 100),
    ("shade", "close"): _travel("windowShade", "closing", "closed", 0),
    ("garage", "open"): _travel("door", "opening", "open", None),
    ("garage", "close"): _travel("door", "closing", "closed", None),
    ("valve", "open"): _set("valve", "open"),
    ("valve", "close"): _set("valve", "closed"),
    ("thermostat", "off"): _thermostat_mode("off"),
    ("contact", "open"): _set("contact", "open"),
    ("contact", "close"): _set("contact", "closed"),
    ("motion", "active"): _set("motion", "active"),
    ("motion", "inactive"): _set("motion", "inactive"),
}


def effect_for(device: Device, command: str) -> Effect:
    """Hub platform model, no upstream function: what a driver does with a command, as attribute
    changes.
    """
    return KIND_EFFECTS.get((device.kind, command)) or EFFECTS.get(command, _no_op)


# ---- kinds ----

NUM, ENUM, STR, JSON = "NUMBER", "ENUM", "STRING", "JSON_OBJECT"
LEVEL_ARGS = (("level", NUM), ("duration", NUM))
_ONOFF = (("on", None), ("off", None))
_REFRESH = (("refresh", None),)


def _onoff(rng: random.Random) -> str:
    return rng.choice(["on", "off", "off"])


def _battery(rng: random.Random) -> int:
    return rng.randint(35, 100)


def _temp(rng: random.Random) -> float:
    return round(rng.uniform(64.0, 76.0), 1)


KINDS: dict[str, Kind] = {
    k.key: k
    for k in (
        Kind(
            "color_light",
            "Generic Zigbee RGBW Light",
            "Color Bulb",
            (
                "Actuator",
                "ChangeLevel",
                "ColorControl",
                "ColorMode",
                "ColorTemperature",
                "Light",
                "Refresh",
                "Switch",
                "SwitchLevel",
            ),
            (
                ("switch", ENUM, None),
                ("level", NUM, "%"),
                ("hue", NUM, None),
                ("saturation", NUM, None),
                ("colorTemperature", NUM, "°K"),
                ("colorMode", ENUM, None),
                ("colorName", STR, None),
            ),
            (
                *_ONOFF,
                ("setLevel", LEVEL_ARGS),
                ("setColor", (("colorMap", "COLOR_MAP"),)),
                ("setHue", (("hue", NUM),)),
                ("setSaturation", (("saturation", NUM),)),
                (
                    "setColorTemperature",
                    (("colorTemperature", NUM), ("level", NUM), ("transitionTime", NUM)),
                ),
                ("startLevelChange", (("direction", ENUM),)),
                ("stopLevelChange", None),
                *_REFRESH,
            ),
            lambda r: {
                "switch": _onoff(r),
                "level": r.choice([20, 50, 80, 100]),
                "hue": r.randint(0, 100),
                "saturation": r.randint(0, 100),
                "colorTemperature": r.choice([2700, 3000, 4000]),
                "colorMode": "CT",
                "colorName": "Soft White",
            },
        ),
        Kind(
            "ct_light",
            "Generic Zigbee CT Bulb",
            "Bulb",
            (
                "Actuator",
                "ChangeLevel",
                "ColorTemperature",
                "Light",
                "Refresh",
                "Switch",
                "SwitchLevel",
            ),
            (
                ("switch", ENUM, None),
                ("level", NUM, "%"),
                ("colorTemperature", NUM, "°K"),
                ("colorName", STR, None),
            ),
            (
                *_ONOFF,
                ("setLevel", LEVEL_ARGS),
                (
                    "setColorTemperature",
                    (("colorTemperature", NUM), ("level", NUM), ("transitionTime", NUM)),
                ),
                ("startLevelChange", (("direction", ENUM),)),
                ("stopLevelChange", None),
                *_REFRESH,
            ),
            lambda r: {
                "switch": _onoff(r),
                "level": r.choice([10, 40, 70, 100]),
                "colorTemperature": r.choice([2700, 3500, 5000]),
                "colorName": "Daylight",
            },
        ),
        Kind(
            "dimmer",
            "Generic Z-Wave Plus Dimmer",
            "Dimmer",
            ("Actuator", "ChangeLevel", "Refresh", "Switch", "SwitchLevel"),
            (("switch", ENUM, None), ("level", NUM, "%")),
            (
                *_ONOFF,
                ("setLevel", LEVEL_ARGS),
                ("startLevelChange", (("direction", ENUM),)),
                ("stopLevelChange", None),
                *_REFRESH,
            ),
            lambda r: {"switch": _onoff(r), "level": r.choice([30, 60, 99])},
            "zwave",
        ),
        Kind(
            "switch",
            "Generic Z-Wave Plus Switch",
            "Switch",
            ("Actuator", "Refresh", "Switch"),
            (("switch", ENUM, None),),
            (*_ONOFF, *_REFRESH),
            lambda r: {"switch": _onoff(r)},
            "zwave",
        ),
        Kind(
            "outlet",
            "Generic Zigbee Outlet",
            "Outlet",
            (
                "Actuator",
                "EnergyMeter",
                "Outlet",
                "PowerMeter",
                "Refresh",
                "Switch",
                "VoltageMeasurement",
            ),
            (
                ("switch", ENUM, None),
                ("power", NUM, "W"),
                ("energy", NUM, "kWh"),
                ("voltage", NUM, "V"),
            ),
            (*_ONOFF, *_REFRESH),
            lambda r: {
                "switch": "on",
                "power": round(r.uniform(2, 140), 1),
                "energy": round(r.uniform(1, 300), 2),
                "voltage": round(r.uniform(118, 122), 1),
            },
        ),
        Kind(
            "contact",
            "Generic Zigbee Contact Sensor",
            "Door Sensor",
            ("Battery", "ContactSensor", "Sensor", "TemperatureMeasurement"),
            (("contact", ENUM, None), ("battery", NUM, "%"), ("temperature", NUM, "°F")),
            (("configure", None),),
            lambda r: (
                {"contact": r.choice(["closed", "closed", "open"]), "battery": _battery(r)}
                | {"temperature": _temp(r)}
            ),
        ),
        Kind(
            "motion",
            "Generic Zigbee Motion Sensor",
            "Motion Sensor",
            (
                "Battery",
                "IlluminanceMeasurement",
                "MotionSensor",
                "Sensor",
                "TemperatureMeasurement",
            ),
            (
                ("motion", ENUM, None),
                ("battery", NUM, "%"),
                ("temperature", NUM, "°F"),
                ("illuminance", NUM, "lux"),
            ),
            (("configure", None), *_REFRESH),
            lambda r: {
                "motion": r.choice(["inactive", "inactive", "active"]),
                "battery": _battery(r),
                "temperature": _temp(r),
                "illuminance": r.randint(0, 800),
            },
        ),
        Kind(
            "water",
            "Generic Zigbee Moisture Sensor",
            "Leak Sensor",
            ("Battery", "Sensor", "WaterSensor"),
            (("water", ENUM, None), ("battery", NUM, "%")),
            (("configure", None),),
            lambda r: {"water": "dry", "battery": _battery(r)},
        ),
        Kind(
            "presence",
            "Mobile App Device",
            "Phone",
            ("PresenceSensor", "Sensor"),
            (("presence", ENUM, None),),
            (("arrived", None), ("departed", None)),
            lambda r: {"presence": r.choice(["present", "not present"])},
            "cloud",
        ),
        Kind(
            "smoke",
            "Generic Z-Wave Smoke/CO Detector",
            "Smoke Detector",
            ("Battery", "CarbonMonoxideDetector", "Sensor", "SmokeDetector"),
            (("smoke", ENUM, None), ("carbonMonoxide", ENUM, None), ("battery", NUM, "%")),
            (*_REFRESH,),
            lambda r: {"smoke": "clear", "carbonMonoxide": "clear", "battery": _battery(r)},
            "zwave",
        ),
        Kind(
            "climate_sensor",
            "Generic Zigbee Temperature/Humidity Sensor",
            "Climate Sensor",
            ("Battery", "RelativeHumidityMeasurement", "Sensor", "TemperatureMeasurement"),
            (("temperature", NUM, "°F"), ("humidity", NUM, "%rh"), ("battery", NUM, "%")),
            (("configure", None), *_REFRESH),
            lambda r: {
                "temperature": _temp(r),
                "humidity": r.randint(30, 60),
                "battery": _battery(r),
            },
        ),
        Kind(
            "illuminance",
            "Generic Zigbee Illuminance Sensor",
            "Light Sensor",
            ("Battery", "IlluminanceMeasurement", "Sensor"),
            (("illuminance", NUM, "lux"), ("battery", NUM, "%")),
            (("configure", None),),
            lambda r: {"illuminance": r.randint(0, 2000), "battery": _battery(r)},
        ),
        Kind(
            "lock",
            "Generic Z-Wave Lock",
            "Lock",
            ("Actuator", "Battery", "Lock", "LockCodes", "Refresh"),
            (("lock", ENUM, None), ("battery", NUM, "%"), ("lastCodeName", STR, None)),
            (("lock", None), ("unlock", None), *_REFRESH),
            lambda r: {"lock": "locked", "battery": _battery(r), "lastCodeName": "Owner"},
            "zwave",
        ),
        Kind(
            "shade",
            "Generic Zigbee Window Shade",
            "Shade",
            # SwitchLevel on a shade is common and trips light/cover classification.
            ("Actuator", "Battery", "Refresh", "SwitchLevel", "WindowShade"),
            (
                ("windowShade", ENUM, None),
                ("position", NUM, "%"),
                ("level", NUM, "%"),
                ("battery", NUM, "%"),
            ),
            (
                ("open", None),
                ("close", None),
                ("setPosition", (("position", NUM),)),
                ("setLevel", LEVEL_ARGS),
                ("startPositionChange", (("direction", ENUM),)),
                ("stopPositionChange", None),
                *_REFRESH,
            ),
            lambda r: {
                "windowShade": "open",
                "position": 100,
                "level": 100,
                "battery": _battery(r),
            },
        ),
        Kind(
            "garage",
            "Generic Z-Wave Garage Door Opener",
            "Garage Door",
            ("Actuator", "ContactSensor", "DoorControl", "GarageDoorControl", "Refresh"),
            (("door", ENUM, None), ("contact", ENUM, None)),
            (("open", None), ("close", None), *_REFRESH),
            lambda r: {"door": "closed", "contact": "closed"},
            "zwave",
        ),
        Kind(
            "fan",
            "Generic Zigbee Fan Controller",
            "Fan",
            ("Actuator", "FanControl", "Refresh", "Switch"),
            (("speed", ENUM, None), ("switch", ENUM, None), ("supportedFanSpeeds", JSON, None)),
            (
                *_ONOFF,
                ("setSpeed", (("fanspeed", ENUM),)),
                ("cycleSpeed", None),
                *_REFRESH,
            ),
            lambda r: {
                "speed": "off",
                "switch": "off",
                "supportedFanSpeeds": json.dumps(["low", "medium", "high", "on", "off", "auto"]),
            },
        ),
        Kind(
            "thermostat",
            "Generic Z-Wave Thermostat",
            "Thermostat",
            (
                "Actuator",
                "RelativeHumidityMeasurement",
                "Refresh",
                "Sensor",
                "TemperatureMeasurement",
                "Thermostat",
                "ThermostatCoolingSetpoint",
                "ThermostatFanMode",
                "ThermostatHeatingSetpoint",
                "ThermostatMode",
                "ThermostatOperatingState",
            ),
            (
                ("temperature", NUM, "°F"),
                ("humidity", NUM, "%rh"),
                ("thermostatMode", ENUM, None),
                ("thermostatFanMode", ENUM, None),
                ("thermostatOperatingState", ENUM, None),
                ("heatingSetpoint", NUM, "°F"),
                ("coolingSetpoint", NUM, "°F"),
                ("thermostatSetpoint", NUM, "°F"),
                # JSON strings inside string attributes, as real drivers report them.
                ("supportedThermostatModes", JSON, None),
                ("supportedThermostatFanModes", JSON, None),
            ),
            (
                ("auto", None),
                ("cool", None),
                ("heat", None),
                ("off", None),
                ("emergencyHeat", None),
                ("fanAuto", None),
                ("fanCirculate", None),
                ("fanOn", None),
                ("setThermostatMode", (("thermostatmode", ENUM),)),
                ("setThermostatFanMode", (("fanmode", ENUM),)),
                ("setHeatingSetpoint", (("temperature", NUM),)),
                ("setCoolingSetpoint", (("temperature", NUM),)),
                *_REFRESH,
            ),
            lambda r: {
                "temperature": _temp(r),
                "humidity": r.randint(30, 50),
                "thermostatMode": "heat",
                "thermostatFanMode": "auto",
                "thermostatOperatingState": "idle",
                "heatingSetpoint": 68,
                "coolingSetpoint": 76,
                "thermostatSetpoint": 68,
                "supportedThermostatModes": json.dumps(["auto", "cool", "heat", "off"]),
                "supportedThermostatFanModes": json.dumps(["auto", "circulate", "on"]),
            },
            "zwave",
        ),
        Kind(
            "valve",
            "Generic Zigbee Water Valve",
            "Water Valve",
            ("Actuator", "Refresh", "Valve"),
            (("valve", ENUM, None),),
            (("open", None), ("close", None), *_REFRESH),
            lambda r: {"valve": "open"},
        ),
        Kind(
            "button",
            "Generic Zigbee 4-Button Remote",
            "Remote",
            (
                "Battery",
                "DoubleTapableButton",
                "HoldableButton",
                "PushableButton",
                "ReleasableButton",
                "Sensor",
            ),
            (
                ("numberOfButtons", NUM, None),
                ("pushed", NUM, None),
                ("held", NUM, None),
                ("doubleTapped", NUM, None),
                ("released", NUM, None),
                ("battery", NUM, "%"),
            ),
            (
                ("push", (("buttonNumber", NUM),)),
                ("hold", (("buttonNumber", NUM),)),
                ("doubleTap", (("buttonNumber", NUM),)),
                ("release", (("buttonNumber", NUM),)),
                ("configure", None),
            ),
            lambda r: {"numberOfButtons": 4, "battery": _battery(r)},
        ),
    )
}

# Built-in virtual drivers the MCP app can create, mapped to the kind they behave like.
VIRTUAL_KINDS: dict[str, str] = {
    "Virtual Switch": "switch",
    "Virtual Button": "button",
    "Virtual Contact Sensor": "contact",
    "Virtual Motion Sensor": "motion",
    "Virtual Presence": "presence",
    "Virtual Lock": "lock",
    "Virtual Temperature Sensor": "climate_sensor",
    "Virtual Humidity Sensor": "climate_sensor",
    "Virtual Dimmer": "dimmer",
    "Virtual RGBW Light": "color_light",
    "Virtual Shade": "shade",
    "Virtual Garage Door Opener": "garage",
    "Virtual Water Sensor": "water",
    "Virtual Omni Sensor": "motion",
    "Virtual Fan Controller": "fan",
}

# How often each kind appears after the first one of each (a typical home).
WEIGHTS: dict[str, int] = {
    "color_light": 4,
    "ct_light": 5,
    "dimmer": 5,
    "switch": 5,
    "outlet": 4,
    "contact": 6,
    "motion": 5,
    "water": 2,
    "presence": 1,
    "smoke": 1,
    "climate_sensor": 3,
    "illuminance": 1,
    "lock": 1,
    "shade": 2,
    "garage": 1,
    "fan": 1,
    "thermostat": 1,
    "valve": 1,
    "button": 2,
}

ROOMS = (
    "Living Room",
    "Kitchen",
    "Master Bedroom",
    "Office",
    "Garage",
    "Hallway",
    "Basement",
    "Front Porch",
    "Bathroom",
    "Guest Bedroom",
    "Dining Room",
    "Laundry",
)


# ---- what real drivers add (realistic=True) ----
# Community and built-in drivers expose far more than the capability minimum: health and
# radio figures, driver/firmware facts, effect lists, supported-mode lists, schedules and
# configuration maps (as JSON strings), plus configure/initialize/effect commands. A thermostat,
# an RGBW bulb or a Z-Wave dimmer is then 2-4 KB in hub_list_devices(format="detailed"). None
# of these names maps to an entity, so the entities stay those of the minimal kinds.
_EFFECTS = [
    "Fireplace", "Storm", "Deep Forest", "Lava", "Sunrise", "Sunset", "Party", "Candle",
    "Aurora", "Ocean", "Rainbow", "Strobe", "Police", "Romance", "Spring", "Summer", "Autumn",
    "Winter", "Christmas", "Halloween", "Valentine", "Reading", "Relax", "Energize",
    "Concentrate", "Nightlight", "Colorloop", "Breathe", "Blink", "Okay",
]  # fmt: skip
_EXTRA_CAPABILITIES = ("Configuration", "HealthCheck", "Initialize", "Refresh", "SignalStrength")
_EXTRA_COMMANDS: tuple[tuple[str, tuple[tuple[str, str], ...] | None], ...] = (
    ("configure", None),
    ("initialize", None),
    ("ping", None),
    ("updateFirmware", None),
    ("resetStatistics", None),
)
_KIND_EXTRAS: dict[str, tuple[tuple[str, ...], dict[str, Any], tuple[str, ...]]] = {
    "color_light": (
        ("Bulb", "LightEffects", "ColorMode"),
        {
            "lightEffects": json.dumps(dict(enumerate(_EFFECTS, 1))),
            "effectName": "None",
            "RGB": "#FFE4B5",
            "color": json.dumps({"hue": 11, "saturation": 29, "level": 80}),
            "colorPresets": json.dumps(
                [
                    {"name": n, "hue": i * 3 % 100, "saturation": 80}
                    for i, n in enumerate(_EFFECTS[:16])
                ]
            ),
        },
        ("setEffect", "setNextEffect", "setPreviousEffect", "flash", "presetLevel", "setRGB"),
    ),
    "ct_light": (
        ("Bulb",),
        {
            "colorPresets": json.dumps(
                [{"name": n, "ct": 2000 + i * 150} for i, n in enumerate(_EFFECTS)]
            )
        },
        ("flash", "presetLevel"),
    ),
    "thermostat": (
        ("ThermostatMode", "ThermostatFanMode", "ThermostatSetpoint", "ThermostatSchedule"),
        {
            "supportedThermostatModes": json.dumps(
                ["auto", "cool", "heat", "off", "emergency heat"]
            ),
            "supportedThermostatFanModes": json.dumps(["auto", "circulate", "on"]),
            "schedule": json.dumps(
                {
                    day: [
                        {"time": f"{h:02d}:00", "heat": 68 + h % 3, "cool": 76} for h in (6, 17, 22)
                    ]
                    for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
                }
            ),
            "lastRunningMode": "heat",
            "equipmentStatus": "idle",
        },
        (
            "setSchedule",
            "setSupportedThermostatModes",
            "setSupportedThermostatFanModes",
            "holdOn",
            "resume",
        ),
    ),
}
_ZWAVE_EXTRAS: dict[str, Any] = {
    "zwaveSecurePairingComplete": "true",
    "zwaveSecurity": "S2 Authenticated",
    "configuration": json.dumps({str(n): {"value": n * 7 % 100, "size": 1} for n in range(1, 31)}),
}


def _realistic(device: Device, kind: Kind, rng: random.Random, when: datetime | None) -> None:
    """Give a device what a real driver reports besides its capability minimum."""
    extra: dict[str, Any] = {
        "healthStatus": "online",
        "driverVersion": f"{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}",
        "firmwareVersion": f"{rng.randint(1, 9)}.{rng.randint(0, 99):02d}",
        "rssi": -rng.randint(40, 90),
        "lqi": rng.randint(100, 255),
        "deviceModel": f"{kind.noun.replace(' ', '')}-{rng.getrandbits(24):06X}",
        "manufacturerName": kind.driver.split()[1] if " " in kind.driver else kind.driver,
        "lastCheckin": (when or datetime.now()).isoformat(timespec="seconds"),
    }
    capabilities, attributes, commands = _KIND_EXTRAS.get(kind.key, ((), {}, ()))
    extra.update(attributes)
    if kind.protocol == "zwave":
        extra.update(_ZWAVE_EXTRAS)
    for name, value in extra.items():
        dtype = "NUMBER" if isinstance(value, int) else "STRING"
        device.attributes.setdefault(name, Attribute(name, dtype, value, None, when))
    for capability in (*_EXTRA_CAPABILITIES, *capabilities):
        if capability not in device.capabilities:
            device.capabilities.append(capability)
    for command, args in (*_EXTRA_COMMANDS, *((c, None) for c in commands)):
        device.commands.setdefault(command, args)


def build_device(
    kind_key: str,
    device_id: int,
    label: str,
    rng: random.Random,
    *,
    room_id: int | None = None,
    when: datetime | None = None,
    realistic: bool = False,
) -> Device:
    """A device of a kind with its initial attribute values (dated `when`).

    realistic: also what real drivers report (2-4 KB for thermostats, bulbs, Z-Wave devices).

    Hub platform model, no upstream function: a paired device and its driver's attributes and
    commands.
    """
    kind = KINDS[kind_key]
    initial = kind.initial(rng)
    attributes = {
        name: Attribute(name, dtype, initial.get(name), unit, when if name in initial else None)
        for name, dtype, unit in kind.attributes
    }
    prefix = {"zwave": "", "zigbee": "", "cloud": "mobile-"}[kind.protocol]
    dni = (
        f"{prefix}{device_id:02X}"
        if kind.protocol == "zwave"
        else f"{prefix}{rng.getrandbits(16):04X}"
    )
    device = Device(
        id=device_id,
        name=kind.driver,
        label=label,
        kind=kind_key,
        driver=kind.driver,
        capabilities=list(kind.capabilities),
        attributes=attributes,
        commands=dict(kind.commands),
        dni=dni,
        room_id=room_id,
        last_activity=when,
    )
    if realistic:
        _realistic(device, kind, rng, when)
    return device
