"""The words of Homecast's live-update WebSocket, said once: message types, close codes, and
each broadcast characteristic as get_state shows it.

Messages (homecast-web `src/server/websocket.ts`, `local-broadcast.ts`, `local-server.ts`):
`characteristic_update {accessoryId, homeId, characteristicType, value}` with the relay's
characteristic names and raw HomeKit values, `service_group_update`, `reachability_update`,
`relay_status_update`, server `ping`, `reconnect`, `redirect {target}`. Each value is simplified
the way get_state simplifies (`local-rest.ts` getSimpleName / formatValue).
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import Any, Final
import uuid

# get_state's own renaming (aliases, older names), so a pushed value lands under the same key.
from .api import EVENT_KEY, _normalize as normalize_values

# Message types.
CHARACTERISTIC: Final = "characteristic_update"
GROUP: Final = "service_group_update"
REACHABILITY: Final = "reachability_update"
RELAY_STATUS: Final = "relay_status_update"
PING: Final = "ping"
RECONNECT: Final = "reconnect"
REDIRECT: Final = "redirect"
AUTH_REQUIRED: Final = "auth_required"
SUBSCRIPTION_INVALIDATED: Final = "subscription_invalidated"
RESPONSE: Final = "response"
# Error codes of a refused credential in a response.
REFUSALS: Final = frozenset({"AUTH_REQUIRED", "AUTH_FAILED", "UNAUTHORIZED"})
# Close code of the cloud socket for a refused credential (websocket.ts onclose: 4001).
CLOSE_AUTH_FAILED: Final = 4001
# A string value longer than this is no characteristic value get_state shows.
MAX_TEXT: Final = 256

# homecast-web src/server/local-rest.ts CHAR_TO_SIMPLE ("matches cloud server").
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
# HomeKit's ProgrammableSwitchEvent. The relay's CharacteristicMapper has no name for it, so it
# would arrive by this raw UUID; the relay does not observe it today (HomeKitManager.swift
# keyCharacteristicTypes), so no edition broadcasts presses. Taken as a press if one ever does.
_INPUT_EVENT_UUID: Final = "00000073-0000-1000-8000-0026bb765291"

_ALARM_STATES: Final = {0: "home", 1: "away", 2: "night", 3: "off", 4: "triggered"}
_ALARM_TARGETS: Final = {0: "home", 1: "away", 2: "night", 3: "off"}
_HVAC_STATES: Final = {0: "inactive", 1: "idle", 2: "heating", 3: "cooling"}
_HVAC_MODES: Final = {0: "auto", 1: "heat", 2: "cool"}


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
            return _enum(_HVAC_STATES, value)
        if name == "hvac_mode":
            return _enum(_HVAC_MODES, value)
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
    values, _, _ = normalize_values({name: formatted})
    return next(iter(values.items()))


def is_press(char_type: str) -> bool:
    """Whether a broadcast characteristic is a stateless switch's press."""
    return char_type == EVENT_KEY or char_type.lower() == _INPUT_EVENT_UUID


def _scalar(value: Any) -> bool:
    """A value get_state could show for one characteristic (never a structure or a tome)."""
    if isinstance(value, bool | int | str):
        return not isinstance(value, str) or len(value) <= MAX_TEXT
    return isinstance(value, float) and math.isfinite(value)


def error_code(message: Mapping[str, Any]) -> str:
    """The code of a response's error."""
    error = message.get("error")
    if isinstance(error, Mapping):
        return str(error.get("code") or "error")
    return "error"


def subscribe_request(homes: list[str], ttl: int) -> dict[str, Any]:
    """A subscribe request for these homes (pyhomecast subscribe)."""
    return {
        "id": str(uuid.uuid4()),
        "type": "request",
        "action": "subscribe",
        "payload": {"scopes": [{"type": "home", "id": home} for home in homes], "ttl": ttl},
    }
