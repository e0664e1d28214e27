"""Entity ids on HA 2026.6 and later, which builds a new one as area + device + entity name.

HA's entity registry (`_async_generate_entity_id`, its settings' `entity_id_parts`: area,
parent device, device, entity by default) puts a device's area before its name, so a device
named after its room reads the room twice. Devices the integration names leave the room out
there; HA 2025.4 has no such settings and keeps the names it had.
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from awesomeversion import AwesomeVersion
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import __version__ as HA_VERSION
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
from homeassistant.util import slugify

from custom_components.mcp_gateway.framework.entity import (
    AREA_FIRST_RELEASE,
    area_leads_entity_ids,
    without_area,
)


def test_without_area() -> None:
    """The room's words go only from the start, as often as they lead, never all of it."""
    assert without_area("Kitchen", "Kitchen Desk Lamp") == "Desk Lamp"
    assert without_area("Bedroom 1", "bedroom 1 Window Sensor") == "Window Sensor"
    assert without_area("Living Room", "Living Room Lights") == "Lights"
    assert without_area("Kitchen", "Kitchen") == "Kitchen"
    assert without_area("Garage", "Garage Garage Door") == "Door"
    assert without_area("Kitchen", "Desk Lamp") == "Desk Lamp"
    assert without_area("Kitchen", "Kitchenette Lamp") == "Kitchenette Lamp"
    assert without_area("Bedroom 1", "Bedroom 2 Lamp") == "Bedroom 2 Lamp"
    assert without_area(None, "Desk Lamp") == "Desk Lamp"
    assert without_area("Rob's Flat", "Robs Flat Lamp") == "Robs Flat Lamp"
    assert without_area("Rob's Flat", "Rob's flat Lamp") == "Lamp"
    assert without_area("Living Room", "Living-Room Lights") == "Lights"
    assert without_area("The Den", "The Den Lamp") == "Lamp"
    assert without_area("Café", "Cafe Lamp") == "Lamp"
    assert without_area("Kitchen", "Kitchens Lamp") == "Kitchens Lamp"
    assert without_area("Bedroom 1", "Bedroom 1") == "Bedroom 1"


def test_area_leads_on_the_releases_that_prefix_it(hass: HomeAssistant) -> None:
    """2025.4 builds ids from device and entity names; from 2026.6 the area leads, unless
    the user's registry settings leave it out."""
    registry = er.async_get(hass)
    area_first = AwesomeVersion(HA_VERSION) >= AREA_FIRST_RELEASE
    assert area_leads_entity_ids(hass) is area_first
    original = getattr(registry, "settings", None)
    try:
        registry.settings = SimpleNamespace(entity_id_parts=("device", "entity"))  # type: ignore[attr-defined]
        assert not area_leads_entity_ids(hass)
        registry.settings = SimpleNamespace(entity_id_parts=("area", "device", "entity"))  # type: ignore[attr-defined]
        assert area_leads_entity_ids(hass)
        registry.settings = SimpleNamespace(entity_id_parts=None)  # type: ignore[attr-defined]
        assert area_leads_entity_ids(hass)
    finally:
        if original is None:
            del registry.settings  # type: ignore[attr-defined]
        else:
            registry.settings = original  # type: ignore[attr-defined]


def as_area_first(hass: HomeAssistant) -> None:
    """HA 2025.4's registry given the settings 2026 has (entity_id_parts None: its default
    parts), so the integration names devices as it does there; 2026 has them already."""
    registry = er.async_get(hass)
    if not hasattr(registry, "settings"):
        registry.settings = SimpleNamespace(entity_id_parts=None)  # type: ignore[attr-defined]
    assert area_leads_entity_ids(hass)


def ids_area_first(hass: HomeAssistant, entry: ConfigEntry) -> dict[str, tuple[str, str]]:
    """Unique id -> (the object id of a new entity built area first, the area's slug or ''):
    HA's own on a release that builds them so, else built as it would (area, then the
    friendly name, which joins device and entity name)."""
    areas, devices = ar.async_get(hass), dr.async_get(hass)
    area_first = AwesomeVersion(HA_VERSION) >= AREA_FIRST_RELEASE
    built: dict[str, tuple[str, str]] = {}
    for entity in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id):
        if (state := hass.states.get(entity.entity_id)) is None:
            continue
        device = devices.async_get(entity.device_id) if entity.device_id else None
        area_id = entity.area_id or (device.area_id if device else None)
        area = areas.async_get_area(area_id) if area_id else None
        if area_first:
            object_id = entity.entity_id.split(".", 1)[1]
        else:
            object_id = slugify(" ".join(p for p in (area.name if area else None, state.name) if p))
        built[entity.unique_id] = (object_id, slugify(area.name) if area else "")
    return built


def area_twice(object_id: str, area: str) -> bool:
    """Whether an id names its area again after it (`kitchen_george_street_kitchen_lamp`)."""
    return bool(area) and f"_{area}_" in f"_{object_id.removeprefix(area)}_"


def doubled_words(object_id: str) -> list[str]:
    """The words an id holds more than once."""
    return sorted(word for word, count in Counter(object_id.split("_")).items() if count > 1)


def test_area_twice() -> None:
    assert area_twice("kitchen_george_street_kitchen_desk_lamp", "kitchen")
    assert area_twice("garage_garage_door", "garage")
    assert not area_twice("kitchen_george_street_desk_lamp", "kitchen")
    assert not area_twice("kitchen_kitchenette_lamp", "kitchen")
    assert not area_twice("desk_lamp", "")
    assert doubled_words("bedroom_1_smoke_alarm_smoke") == ["smoke"]
