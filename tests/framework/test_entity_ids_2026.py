"""Entity ids on HA 2026.x, which builds new ones as area + device + entity name.

HA 2026's entity registry (`_async_generate_entity_id`, its settings' `entity_id_parts`: area,
parent device, device, entity by default) puts a device's area before its name. A device named
after its room then read its room twice in its id. On such an HA the integration names the
device without its room; unique ids stay as they were. HA 2025.4 has no such settings: the
registry is given them here, as 2026 has them, and each id is built as 2026 builds it.
"""

from __future__ import annotations

from types import SimpleNamespace

from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
from homeassistant.util import slugify
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.entity import area_leads_entity_ids, without_area


def as_2026(hass: HomeAssistant) -> None:
    """The registry settings HA 2026 has (entity_id_parts None: its default parts)."""
    er.async_get(hass).settings = SimpleNamespace(entity_id_parts=None)  # type: ignore[attr-defined]
    assert area_leads_entity_ids(hass)


def ids_2026(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, tuple[str, str | None]]:
    """Unique id -> (the id HA 2026 builds for a new entity: area, device and entity name,
    as its friendly name joins the last two; the area)."""
    areas, devices = ar.async_get(hass), dr.async_get(hass)
    built: dict[str, tuple[str, str | None]] = {}
    for entity in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id):
        if (state := hass.states.get(entity.entity_id)) is None:
            continue
        device = devices.async_get(entity.device_id) if entity.device_id else None
        area = areas.async_get_area(device.area_id) if device and device.area_id else None
        name = " ".join(part for part in (area.name if area else None, state.name) if part)
        built[entity.unique_id] = (slugify(name), slugify(area.name) if area else None)
    return built


def area_twice(object_id: str, area: str | None) -> bool:
    """Whether an id names its area again after it."""
    return area is not None and f"{area}_" in object_id[len(area) + 1 :] + "_"


def test_without_area() -> None:
    """The room's words go only from the start, never all of the name."""
    assert without_area("Kitchen", "Kitchen Desk Lamp") == "Desk Lamp"
    assert without_area("Bedroom 1", "bedroom 1 Window Sensor") == "Window Sensor"
    assert without_area("Kitchen", "Kitchen") == "Kitchen"
    assert without_area("Garage", "Garage Garage Door") == "Door"
    assert without_area("Kitchen", "Desk Lamp") == "Desk Lamp"
    assert without_area(None, "Desk Lamp") == "Desk Lamp"


def test_2025_builds_no_area_into_ids(hass: HomeAssistant) -> None:
    """HA 2025.4's registry has no settings: names stay as they were."""
    assert not area_leads_entity_ids(hass)
