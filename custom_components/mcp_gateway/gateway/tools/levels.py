"""Entities' levels (brightness, position, setpoint…) as every gateway answer shows them:
named and scaled as set_state takes them, each unit said once per answer."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from homeassistant.core import State


def _number(value: Any) -> float | int:
    number = float(value)
    return int(number) if number.is_integer() else number


# An entity's levels as every gateway answer shows them: named and scaled as set_state takes
# them (HA's light attribute `brightness` is 0-255, set_state's brightness_pct is percent), each
# with its unit said once per answer (level_units). HA attribute → (level name, conversion).
_LEVELS: Final[Mapping[str, tuple[str, Callable[[Any], Any]]]] = {
    "brightness": ("brightness_pct", lambda value: round(float(value) * 100 / 255)),
    "color_temp_kelvin": ("color_temp_kelvin", int),
    "hs_color": ("hs_color", lambda value: [round(float(part), 1) for part in value]),
    "percentage": ("percentage", lambda value: round(float(value))),
    "current_position": ("position", lambda value: round(float(value))),
    "current_tilt_position": ("tilt_position", lambda value: round(float(value))),
    "temperature": ("temperature", _number),
    "target_temp_low": ("target_temp_low", _number),
    "target_temp_high": ("target_temp_high", _number),
    "current_temperature": ("current_temperature", _number),
    "humidity": ("humidity", lambda value: round(float(value))),
    "current_humidity": ("current_humidity", lambda value: round(float(value))),
}
# Attributes shown through a level instead (or not at all: mireds, the old unit of colour
# temperature, beside the kelvin that set_state takes).
RAW_LEVEL_ATTRIBUTES: Final = frozenset({*_LEVELS, "color_temp", "min_mireds", "max_mireds"})
# Temperatures are in Home Assistant's unit system (climate entities convert to it).
_TEMPERATURES: Final = frozenset(
    {"temperature", "target_temp_low", "target_temp_high", "current_temperature"}
)
LEVEL_NAMES: Final = frozenset(name for name, _ in _LEVELS.values())
LEVEL_UNITS: Final[Mapping[str, str]] = {
    "brightness_pct": "%",
    "color_temp_kelvin": "K",
    "hs_color": "[hue °, saturation %]",
    "percentage": "%",
    "position": "%",
    "tilt_position": "%",
    "humidity": "%",
    "current_humidity": "%",
}


def entity_levels(state: State) -> dict[str, Any]:
    """The entity's levels (brightness, position, setpoint…) as set_state takes them.

    Only what the state reports: a light that is off has no brightness, and a value HA holds
    in another shape is left out rather than guessed.
    """
    levels: dict[str, Any] = {}
    for attribute, (name, convert) in _LEVELS.items():
        if (value := state.attributes.get(attribute)) is None:
            continue
        if name in _TEMPERATURES and state.domain != "climate":
            continue  # another domain's attribute of that name is no setpoint
        try:
            levels[name] = convert(value)
        except (TypeError, ValueError):
            continue
    return levels


def level_of(attribute: str) -> str | None:
    """The level HA's attribute is shown as (`brightness` → `brightness_pct`), if any."""
    found = _LEVELS.get(attribute)
    return found[0] if found is not None else None


def level_units(names: Iterable[str], temperature_unit: str) -> dict[str, str]:
    """The unit of each level among `names` (said once per answer)."""
    units: dict[str, str] = {}
    for name in names:
        if name in _TEMPERATURES:
            units[name] = temperature_unit
        elif (unit := LEVEL_UNITS.get(name)) is not None:
            units[name] = unit
    return units
