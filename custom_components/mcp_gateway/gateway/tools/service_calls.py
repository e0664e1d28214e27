"""set_state's vocabulary, and the Home Assistant service calls each update means.

One update names an entity and what it should become (a state, a brightness, a position, a
value…); the builder of the entity's domain turns it into service calls, and anything the
vocabulary cannot say for that domain is refused with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
import re
from typing import Any, Final

# The update vocabulary set_state offers: one object per entity, whatever its domain.
UPDATE_PROPERTIES: Final[dict[str, Any]] = {
    "entity_id": {"type": "string"},
    "state": {
        "type": "string",
        "description": (
            "on/off; open/closed/stop (cover, valve); locked/unlocked/open (lock); disarmed, "
            "armed_home/away/night/vacation (alarm); an HVAC mode (climate); pressed (button); "
            "on (scene)."
        ),
    },
    # The name and range say it is a percentage.
    "brightness_pct": {"type": "number", "minimum": 0, "maximum": 100},
    "color_temp_kelvin": {"type": "integer", "minimum": 1000, "maximum": 12000},
    "hs_color": {
        "type": "array",
        "items": {"type": "number"},
        "minItems": 2,
        "maxItems": 2,
        "description": "[hue 0-360, saturation 0-100].",
    },
    "transition": {"type": "number", "minimum": 0, "maximum": 3600},
    "position": {
        "type": "integer",
        "minimum": 0,
        "maximum": 100,
        "description": "Percent.",
    },
    "percentage": {
        "type": "integer",
        "minimum": 0,
        "maximum": 100,
        "description": "Fan speed, percent.",
    },
    "temperature": {
        "type": "number",
        "description": "In get_state's unit.",
    },
    "target_temp_low": {"type": "number"},
    "target_temp_high": {"type": "number"},
    "hvac_mode": {"type": "string"},
    "fan_mode": {"type": "string"},
    "value": {
        "type": "string",
        "description": "A select option, number, text, ISO datetime or time (HH:MM), as text.",
    },
    "code": {"type": "string", "description": "Alarm or lock code, when one is needed."},
}


type ServiceCall = tuple[str, str, dict[str, Any]]
# Turns (state, the other fields) into service calls, popping the fields it used.
type Builder = Callable[[str | None, dict[str, Any]], list[ServiceCall]]

_ALARM_SERVICES: Final = {
    "disarmed": "alarm_disarm",
    "armed_home": "alarm_arm_home",
    "armed_away": "alarm_arm_away",
    "armed_night": "alarm_arm_night",
    "armed_vacation": "alarm_arm_vacation",
    "armed_custom_bypass": "alarm_arm_custom_bypass",
    "triggered": "alarm_trigger",
}
_READ_ONLY_DOMAINS: Final = frozenset({"sensor", "binary_sensor", "event"})
_TIME_OF_DAY: Final = re.compile(r"([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?")


class BadUpdate(ValueError):
    """An update the vocabulary cannot express for that entity."""


def service_calls(domain: str, update: Mapping[str, Any]) -> list[ServiceCall]:
    """Translate one update of the shared vocabulary into the HA service calls it means."""
    # "" is how a client that must fill every property leaves one out.
    fields = {key: value for key, value in update.items() if key != "entity_id" and value != ""}
    if not fields:
        raise BadUpdate("nothing to change: give a state or a value")
    if domain in _READ_ONLY_DOMAINS:
        raise BadUpdate(f"a {domain} entity is read-only")
    builder = _BUILDERS.get(domain)
    if builder is None:
        raise BadUpdate(f"entities of domain {domain} cannot be set through set_state")
    state = fields.pop("state", None)
    calls = builder(state, fields)
    if fields:
        raise BadUpdate(f"{', '.join(sorted(fields))} do not apply to a {domain} entity")
    return calls


def _take(fields: dict[str, Any], *names: str) -> dict[str, Any]:
    """Pop the named fields that are present (what is left over is reported as not applying)."""
    return {name: fields.pop(name) for name in names if name in fields}


def _expect(state: str | None, allowed: Iterable[str], domain: str) -> None:
    if state is not None and state not in allowed:
        raise BadUpdate(f"state of a {domain} must be one of {', '.join(allowed)}")


def _on_off(domain: str) -> Builder:
    def build(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
        _expect(state, ("on", "off"), domain)
        if state is None:
            raise BadUpdate("give state on or off")
        return [(domain, f"turn_{state}", {})]

    return build


def _light(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("on", "off"), "light")
    data = _take(fields, "brightness_pct", "color_temp_kelvin", "hs_color", "transition")
    if state == "off":
        extra = set(data) - {"transition"}
        if extra:
            raise BadUpdate(f"{', '.join(sorted(extra))} cannot be set while turning off")
        return [("light", "turn_off", data)]
    if state is None and not data:
        raise BadUpdate("give state on/off or a light setting")
    return [("light", "turn_on", data)]


def _fan(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("on", "off"), "fan")
    data = _take(fields, "percentage")
    if state == "off":
        if data:
            raise BadUpdate("percentage cannot be set while turning off")
        return [("fan", "turn_off", {})]
    if state == "on":
        return [("fan", "turn_on", data)]
    if not data:
        raise BadUpdate("give state on/off or a percentage")
    return [("fan", "set_percentage", data)]


def _opening(domain: str) -> Builder:
    def build(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
        _expect(state, ("open", "closed", "stop"), domain)
        calls: list[ServiceCall] = []
        if state is not None:
            service = {"open": "open", "closed": "close", "stop": "stop"}[state]
            calls.append((domain, f"{service}_{domain}", {}))
        if "position" in fields:
            calls.append((domain, f"set_{domain}_position", {"position": fields.pop("position")}))
        if not calls:
            raise BadUpdate("give state open/closed/stop or a position")
        return calls

    return build


def _lock(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("locked", "unlocked", "open"), "lock")
    if state is None:
        raise BadUpdate("give state locked, unlocked or open")
    service = {"locked": "lock", "unlocked": "unlock", "open": "open"}[state]
    return [("lock", service, _take(fields, "code"))]


def _climate(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    calls: list[ServiceCall] = []
    hvac_mode = fields.pop("hvac_mode", None)
    if state in ("on", "off") and hvac_mode is None:
        calls.append(("climate", f"turn_{state}", {}))
    elif state is not None:
        hvac_mode = hvac_mode or state
    temperatures = _take(fields, "temperature", "target_temp_low", "target_temp_high")
    if temperatures:
        # One call sets mode and target together, as a thermostat's own panel does.
        if hvac_mode is not None:
            temperatures["hvac_mode"] = hvac_mode
        calls.append(("climate", "set_temperature", temperatures))
    elif hvac_mode is not None:
        calls.append(("climate", "set_hvac_mode", {"hvac_mode": hvac_mode}))
    if "fan_mode" in fields:
        calls.append(("climate", "set_fan_mode", {"fan_mode": fields.pop("fan_mode")}))
    if not calls:
        raise BadUpdate("give a state/hvac_mode, a temperature or a fan_mode")
    return calls


def _alarm(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, tuple(_ALARM_SERVICES), "alarm_control_panel")
    if state is None:
        raise BadUpdate(f"give a state: {', '.join(_ALARM_SERVICES)}")
    return [("alarm_control_panel", _ALARM_SERVICES[state], _take(fields, "code"))]


def _valued(domain: str, service: str, key: str) -> Builder:
    def build(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
        value = fields.pop("value", state)
        if value is None:
            raise BadUpdate("give a value")
        if domain == "number" and isinstance(value, str):
            try:
                value = float(value)
            except ValueError as err:
                raise BadUpdate("value of a number must be numeric") from err
        if domain == "text":
            value = str(value)
        if domain == "time":
            value = _time_of_day(value)
        return [(domain, service, {key: value})]

    return build


def _time_of_day(value: Any) -> str:
    """A time entity's value as HA's time.set_value takes it: HH:MM or HH:MM:SS."""
    text = str(value)
    if not _TIME_OF_DAY.fullmatch(text):
        raise BadUpdate("value of a time must be HH:MM or HH:MM:SS (24-hour)")
    return text


def _press(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("pressed", "press"), "button")
    return [("button", "press", {})]


def _scene(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("on", "activated"), "scene")
    return [("scene", "turn_on", {})]


_BUILDERS: Final[dict[str, Builder]] = {
    "light": _light,
    "switch": _on_off("switch"),
    "fan": _fan,
    "cover": _opening("cover"),
    "valve": _opening("valve"),
    "lock": _lock,
    "climate": _climate,
    "alarm_control_panel": _alarm,
    "select": _valued("select", "select_option", "option"),
    "number": _valued("number", "set_value", "value"),
    "text": _valued("text", "set_value", "value"),
    "datetime": _valued("datetime", "set_value", "datetime"),
    "time": _valued("time", "set_value", "time"),
    "button": _press,
    "scene": _scene,
}
