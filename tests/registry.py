"""Registry look-ups that read the same on every Home Assistant release we support.

HA 2026.x puts a device's area into new entity ids (`switch.kitchen_kitchen_plug`), makes device
identifiers per config entry (deprecating `async_get_device`) and drops
`DeviceEntry.suggested_area`; these helpers use only public registry APIs that 2025.4 has too.
"""

from __future__ import annotations

from awesomeversion import AwesomeVersion
from homeassistant.const import Platform, __version__ as HA_VERSION
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)

from custom_components.mcp_gateway.core.const import DOMAIN

# From HA 2026.6 a new entity id begins with its device's area: devices the integration names
# leave out the room their name starts with.
AREA_FIRST = AwesomeVersion(HA_VERSION) >= AwesomeVersion("2026.6")


def in_room(room: str, name: str) -> str:
    """The device name of an accessory named `name` in `room` on this release: without the
    room it starts with where the area begins entity ids (the integration's `without_area`)."""
    if AREA_FIRST and name.casefold().startswith(f"{room.casefold()} "):
        return name[len(room) + 1 :]
    return name


def entity_id_of(hass: HomeAssistant, platform: Platform | str, unique_id: str) -> str:
    """The entity id HA gave our entity with this unique id (fails when there is none)."""
    entity_id = er.async_get(hass).async_get_entity_id(str(platform), DOMAIN, unique_id)
    assert entity_id is not None, f"no {platform} entity with unique id {unique_id}"
    return entity_id


def device_of(hass: HomeAssistant, identifier: tuple[str, str]) -> dr.DeviceEntry | None:
    """Our device with this identifier, or None."""
    # Through our entries: iterating `devices` yields ids in 2025.4 and entries in 2026.x, where
    # its mapping look-ups and async_get_device are deprecated.
    registry = dr.async_get(hass)
    for entry in hass.config_entries.async_entries(DOMAIN):
        for device in dr.async_entries_for_config_entry(registry, entry.entry_id):
            if identifier in device.identifiers:
                return device
    return None


def area_name(hass: HomeAssistant, device: dr.DeviceEntry) -> str | None:
    """The name of the area a device is in (where its suggested area put it), or None."""
    if device.area_id is None:
        return None
    area = ar.async_get(hass).async_get_area(device.area_id)
    return area.name if area is not None else None


def pin_entity_id(
    hass: HomeAssistant, entry_id: str, platform: Platform | str, unique_id: str, object_id: str
) -> str:
    """Register our entity ahead with this object id, so its entity id is the same everywhere."""
    entry = er.async_get(hass).async_get_or_create(
        str(platform),
        DOMAIN,
        unique_id,
        config_entry=hass.config_entries.async_get_entry(entry_id),
        suggested_object_id=object_id,
    )
    return entry.entity_id
