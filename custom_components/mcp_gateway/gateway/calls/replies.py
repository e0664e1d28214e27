"""What a backend call's answer and audit line add in people's words: the devices the call
addressed, by name, and a note where HA sees the device a backend says it acted on offline."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from homeassistant.const import ATTR_FRIENDLY_NAME, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import device_registry as dr, entity_registry as er

from ...mcp.types import CallToolResult

# Logbook lines name at most this many devices, then "and N more".
LOGBOOK_NAMES: Final = 4


def devices_phrase(
    hass: HomeAssistant, groups: Iterable[Sequence[str]], subject: str | None = None
) -> str:
    """ " on Kitchen lamp, Hall light and 3 more": what a call addressed, by name.

    Each group is the entities of one device, named once by the device (a clock's 21
    entities are one clock), or one entity, named by itself; `subject` is what the backend
    calls the thing acted on where no entity says it (a rule, an alarm), named first.
    """
    names: list[str] = [subject] if subject else []
    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    for group in groups:
        if not group:
            continue
        name: str | None = None
        if len(group) > 1 and (entry := entities.async_get(group[0])) and entry.device_id:
            device = devices.async_get(entry.device_id)
            name = (device.name_by_user or device.name) if device else None
        if name is None:
            state = hass.states.get(group[0])
            name = str(state.attributes.get(ATTR_FRIENDLY_NAME) or group[0]) if state else group[0]
        if name not in names:
            names.append(name)
    if not names:
        return ""
    shown = names[:LOGBOOK_NAMES]
    if len(names) > len(shown):
        return f" on {', '.join(shown)} and {len(names) - len(shown)} more"
    if len(shown) > 1:
        return f" on {', '.join(shown[:-1])} and {shown[-1]}"
    return f" on {shown[0]}"


def note_unavailable(
    hass: HomeAssistant, result: CallToolResult, entity_ids: Sequence[str]
) -> CallToolResult:
    """A backend's "ok" for a device HA sees offline is no proof it acted: say so.

    A device is offline when every entity of it the call addressed that HA runs is
    unavailable; an entity disabled (by default or by the user) has no state and says
    nothing, nor does one unavailable while its device's others report. The note goes into
    structuredContent and the text the model reads, next to the backend's own answer (which
    stays as it was).
    """
    if result.get("isError"):
        return result
    offline = _offline_names(hass, entity_ids)
    if not offline:
        return result
    note = (
        f"{', '.join(offline)} {'is' if len(offline) == 1 else 'are'} unavailable in Home "
        "Assistant (offline or unreachable): the backend may have accepted this without the "
        "device acting. Check with get_state."
    )
    annotated = result.copy()
    annotated["content"] = [*result.get("content", ()), {"type": "text", "text": note}]
    if isinstance(structured := result.get("structuredContent"), dict):
        annotated["structuredContent"] = {**structured, "gateway_note": note}
    return annotated


def _offline_names(hass: HomeAssistant, entity_ids: Sequence[str]) -> list[str]:
    """The devices (or lone entities) among these that HA sees offline, by name."""
    entities = er.async_get(hass)
    groups: dict[str, list[State]] = {}
    for entity_id in entity_ids:
        entry = entities.async_get(entity_id)
        if entry is not None and entry.disabled_by is not None:
            continue
        if (state := hass.states.get(entity_id)) is None:
            continue  # not running in HA: nothing to judge by
        device = entry.device_id if entry is not None else None
        groups.setdefault(device or f"entity:{entity_id}", []).append(state)
    devices = dr.async_get(hass)
    names: list[str] = []
    for key, states in groups.items():
        if any(state.state != STATE_UNAVAILABLE for state in states):
            continue
        device_entry = None if key.startswith("entity:") else devices.async_get(key)
        if len(states) > 1 and device_entry is not None:
            name = device_entry.name_by_user or device_entry.name or states[0].entity_id
        else:
            name = str(states[0].attributes.get(ATTR_FRIENDLY_NAME) or states[0].entity_id)
        if name not in names:
            names.append(name)
    return names
