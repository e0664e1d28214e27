"""Homecast's words for values, said once: what get_state and the live-update socket call each
characteristic, their value tables, and the ids device keys are made of.

get_state (homecast-web `src/server/local-rest.ts` getState) reports each accessory's values
under simplified names (`on`, `heat_target`, `locked`), older servers under some raw HomeKit
names; the socket broadcasts the relay's characteristic names with raw HomeKit values
(`characteristic_update`), which `simplify` turns into what a read would have shown. api.py
reads with `normalize`, push with `simplify`: both end in the same keys and values.
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import Any, Final

# Older servers report these raw HomeKit names; we store the current vocabulary only.
_LEGACY_RENAMES: Final = {
    "rotation_speed": "speed",
    "target_position": "target",
}
# Raw HomeKit spellings some servers pass through for keys we know by another name. The
# community server's CHAR_TO_SIMPLE (local-rest.ts) simplifies contact_state itself; the HAP
# spellings of the thermostat keys are what the relay's CharacteristicMapper calls
# heating_cooling_* / temperature_units.
_ALIASES: Final = {
    "contact_state": "contact",
    "current_relative_humidity": "relative_humidity",
    "current_heating_cooling_state": "heating_cooling_current",
    "target_heating_cooling_state": "heating_cooling_target",
    "temperature_display_units": "temperature_units",
}
# The heater-cooler's states by number (local-rest.ts formatValue; older servers sent numbers).
HVAC_MODES: Final = {0: "auto", 1: "heat", 2: "cool"}
HVAC_STATES: Final = {0: "inactive", 1: "idle", 2: "heating", 3: "cooling"}
_ALARM_STATES: Final = {0: "home", 1: "away", 2: "night", 3: "off", 4: "triggered"}
_ALARM_TARGETS: Final = {0: "home", 1: "away", 2: "night", 3: "off"}
# The value key an event (doorbell / button) reports a press with.
EVENT_KEY: Final = "programmable_switch_event"
# HomeKit's ProgrammableSwitchEvent. The relay's CharacteristicMapper has no name for it, so it
# would arrive by this raw UUID; the relay does not observe it today (HomeKitManager.swift
# keyCharacteristicTypes), so no edition broadcasts presses. Taken as a press if one ever does.
_INPUT_EVENT_UUID: Final = "00000073-0000-1000-8000-0026bb765291"
# A string value longer than this is no characteristic value get_state shows.
MAX_TEXT: Final = 256

# local-rest.ts CHAR_TO_SIMPLE ("matches cloud server"): relay names to get_state keys.
_CHAR_TO_SIMPLE: Final = {
    "on": "on",
    "power_state": "on",
    "active": "active",
    "status_active": "status_active",
    "brightness": "brightness",
    "hue": "hue",
    "saturation": "saturation",
    "color_temperature": "color_temp",
    "current_temperature": "current_temp",
    "heating_threshold": "heat_target",
    "cooling_threshold": "cool_target",
    "target_temperature": "target_temp",
    "lock_current_state": "locked",
    "lock_target_state": "lock_target",
    "security_system_current_state": "alarm_state",
    "security_system_target_state": "alarm_target",
    "motion_detected": "motion",
    "contact_state": "contact",
    "battery_level": "battery",
    "status_low_battery": "low_battery",
    "volume": "volume",
    "mute": "mute",
}
_UUID_TO_SIMPLE: Final = {
    "000000b1-0000-1000-8000-0026bb765291": "hvac_state",
    "000000b2-0000-1000-8000-0026bb765291": "hvac_mode",
}
_SKIP_CHARS: Final = frozenset(
    {
        "name",
        "manufacturer",
        "model",
        "serial_number",
        "firmware_revision",
        "hardware_revision",
        "identify",
    }
)


# -- ids ------------------------------------------------------------------------------------


def uuid_tail(value: str) -> str:
    """The last four hex digits of a UUID or of a slug key (lowercase)."""
    return value.replace("-", "")[-4:].lower()


def slug_tail(key: str) -> str:
    """The UUID tail a Homecast slug ends with (`bedroom_1_air_conditioner_7f60` → `7f60`)."""
    return key.rsplit("_", 1)[-1].lower()


def device_key(home_uuid: str, uid: str) -> str:
    """An accessory's device key: its home's UUID tail + its uid within the home."""
    return f"{uuid_tail(home_uuid)}_{uid}"


# -- values as get_state reports them -------------------------------------------------------


def normalize(values: Mapping[str, Any]) -> tuple[dict[str, Any], bool, dict[str, str]]:
    """Values in the current vocabulary, whether the older one was used, and aliases read."""
    out: dict[str, Any] = {}
    legacy = False
    wire: dict[str, str] = {}
    for key, value in values.items():
        if key in _ALIASES:
            out[_ALIASES[key]] = value
            wire[_ALIASES[key]] = key
        elif key == "target_heater_cooler_state":
            legacy = True
            out["hvac_mode"] = HVAC_MODES.get(value, value)
        elif key == "current_heater_cooler_state":
            legacy = True
            out["hvac_state"] = HVAC_STATES.get(value, value)
        elif key in _LEGACY_RENAMES:
            legacy = True
            out[_LEGACY_RENAMES[key]] = value
        else:
            out[key] = value
    return out, legacy, wire


def normalize_keys(keys: Any) -> frozenset[str]:
    """`_settable`'s keys in the current vocabulary."""
    if not isinstance(keys, list):
        return frozenset()
    renames = {**_LEGACY_RENAMES, **_ALIASES, "target_heater_cooler_state": "hvac_mode"}
    return frozenset(renames.get(str(k), str(k)) for k in keys)


def normalize_options(raw: Any) -> dict[str, list[Any]]:
    """`_options` (key → allowed values) in the current vocabulary."""
    options: dict[str, list[Any]] = {}
    if not isinstance(raw, Mapping):
        return options
    for raw_key, allowed in raw.items():
        if not isinstance(allowed, list):
            continue
        key = str(raw_key)
        if key == "target_heater_cooler_state":
            # The older form lists ints; the current names are what we write.
            options.setdefault("hvac_mode", [HVAC_MODES.get(v, v) for v in allowed])
        else:
            options[_LEGACY_RENAMES.get(key) or _ALIASES.get(key, key)] = list(allowed)
    return options


# -- broadcast values as get_state would have shown them ------------------------------------


def _simple_name(char_type: str) -> str | None:
    """local-rest.ts getSimpleName: the get_state key of a relay characteristic name."""
    if char_type in _CHAR_TO_SIMPLE:
        return _CHAR_TO_SIMPLE[char_type]
    if char_type.lower() in _UUID_TO_SIMPLE:
        return _UUID_TO_SIMPLE[char_type.lower()]
    if char_type in _SKIP_CHARS:
        return None
    if "-" in char_type and len(char_type) > 20:
        return None
    return char_type


def _enum(states: Mapping[int, str], value: Any) -> Any:
    try:
        return states.get(int(value), f"unknown_{value}")
    except (TypeError, ValueError):
        return f"unknown_{value}"


def _format(value: Any, name: str) -> Any:
    """local-rest.ts formatValue: a raw HomeKit value as get_state reports it."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    try:
        if name == "alarm_state":
            return _enum(_ALARM_STATES, value)
        if name == "alarm_target":
            return _enum(_ALARM_TARGETS, value)
        if name == "hvac_state":
            return _enum(HVAC_STATES, value)
        if name == "hvac_mode":
            return _enum(HVAC_MODES, value)
        if name == "locked":
            return value == 1 or value is True
        if name in ("on", "active", "motion", "mute", "low_battery"):
            return bool(value)
        if name in ("brightness", "battery", "volume"):
            return round(float(value))
        if "temp" in name or name in ("heat_target", "cool_target"):
            return round(float(value) * 10) / 10
    except (TypeError, ValueError, OverflowError):
        return None
    return value


def simplify(char_type: str, value: Any) -> tuple[str, Any] | None:
    """(our value key, value) for a broadcast characteristic; None: get_state never shows it."""
    name = _simple_name(char_type)
    if name is None:
        return None
    formatted = _format(value, name)
    if not _scalar(formatted):
        return None
    values, _, _ = normalize({name: formatted})
    return next(iter(values.items()))


def is_press(char_type: str) -> bool:
    """Whether a broadcast characteristic is a stateless switch's press."""
    return char_type == EVENT_KEY or char_type.lower() == _INPUT_EVENT_UUID


def _scalar(value: Any) -> bool:
    """A value get_state could show for one characteristic (never a structure or a tome)."""
    if isinstance(value, bool | int | str):
        return not isinstance(value, str) or len(value) <= MAX_TEXT
    return isinstance(value, float) and math.isfinite(value)
