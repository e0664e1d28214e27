"""get_state keeps what it derived of each entity between reads: never past a change.

An entity's marks (name, state as shown, unit, levels) follow its State object, HA's time zone,
and the whole-home list of entities follows the index (registry changes).
"""

from __future__ import annotations

from typing import Any

from homeassistant.const import ATTR_DEVICE_CLASS, ATTR_FRIENDLY_NAME
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.finding.index import EntityIndex
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state

from .conftest import Ctx

LAMP, THERMO = "light.desk_lamp", "sensor.hall_thermometer"


def _item(result: dict[str, Any], entity_id: str) -> dict[str, Any]:
    return next(item for item in result["entities"] if item["entity_id"] == entity_id)


async def test_a_state_change_shows_in_the_next_read(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Name, state, unit and levels are read again once HA has a new State for the entity."""
    ctx = Ctx(user=hass_admin_user)
    hass.states.async_set(LAMP, "on", {ATTR_FRIENDLY_NAME: "Desk lamp", "brightness": 255})
    first = _item(await async_get_state(hass, ctx, {}), LAMP)
    assert (first["name"], first["state"], first["brightness_pct"]) == ("Desk lamp", "on", 100)
    again = _item(await async_get_state(hass, ctx, {}), LAMP)
    assert again == first

    hass.states.async_set(LAMP, "on", {ATTR_FRIENDLY_NAME: "Reading lamp", "brightness": 128})
    changed = _item(await async_get_state(hass, ctx, {"entity_ids": [LAMP]}), LAMP)
    assert (changed["name"], changed["brightness_pct"]) == ("Reading lamp", 50)
    hass.states.async_set(LAMP, "off", {ATTR_FRIENDLY_NAME: "Reading lamp"})
    off = _item(await async_get_state(hass, ctx, {}), LAMP)
    assert off["state"] == "off"
    assert "brightness_pct" not in off
    # A page that asks other fields reads the same marks in its own order.
    fields = await async_get_state(
        hass, ctx, {"entity_ids": [LAMP], "fields": ["state", "name", "domain"]}
    )
    assert list(_item(fields, LAMP)) == ["entity_id", "state", "name", "domain"]


async def test_times_follow_home_assistants_zone(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A timestamp state is shown in HA's zone: a new zone shows at the next read."""
    ctx = Ctx(user=hass_admin_user)
    await hass.config.async_update(time_zone="UTC")
    # fixed date: a timestamp state shown in a zone, never compared with the clock
    hass.states.async_set(THERMO, "2026-01-05T10:00:00+00:00", {ATTR_DEVICE_CLASS: "timestamp"})
    shown = _item(await async_get_state(hass, ctx, {"entity_ids": [THERMO]}), THERMO)
    assert shown["state"] == "2026-01-05T10:00:00+00:00"
    await hass.config.async_update(time_zone="Europe/Berlin")
    shown = _item(await async_get_state(hass, ctx, {"entity_ids": [THERMO]}), THERMO)
    assert shown["state"] == "2026-01-05T11:00:00+01:00"


async def test_the_whole_home_follows_the_registries(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """The unfiltered read's entities are built once per index change: an area, a disabled
    entity and a new unique id all show at the next read."""
    ctx = Ctx(user=hass_admin_user)
    entities = er.async_get(hass)
    before = await async_get_state(hass, ctx, {})
    assert _item(before, LAMP)["area"] == "Office"  # its device's
    study = ar.async_get(hass).async_create("Study")
    entities.async_update_entity(LAMP, name="Desk lamp", area_id=study.id)
    assert _item(await async_get_state(hass, ctx, {}), LAMP)["area"] == "Study"
    entities.async_update_entity(THERMO, disabled_by=er.RegistryEntryDisabler.USER)
    assert THERMO not in {
        item["entity_id"] for item in (await async_get_state(hass, ctx, {}))["entities"]
    }
    entry = entities.async_get(LAMP)
    assert entry is not None
    entities.async_update_entity(LAMP, new_unique_id=f"{entry.unique_id}_moved")
    indexed = EntityIndex.get(hass).entities([fake_entry.entry_id], entity_ids=[LAMP])
    assert [entity.unique_id for entity in indexed] == [f"{entry.unique_id}_moved"]


async def test_a_renamed_area_shows_in_the_next_read(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """An entity's item is kept while its State is the same, but not past a new name of its
    area (the State stays the same object)."""
    ctx = Ctx(user=hass_admin_user)
    state = hass.states.get(LAMP)
    assert _item(await async_get_state(hass, ctx, {}), LAMP)["area"] == "Office"
    areas = ar.async_get(hass)
    office = areas.async_get_area_by_name("Office")
    assert office is not None
    areas.async_update(office.id, name="Back office")
    assert _item(await async_get_state(hass, ctx, {}), LAMP)["area"] == "Back office"
    assert hass.states.get(LAMP) is state
    # Handed-out items are copies: changing one changes no later answer.
    _item(await async_get_state(hass, ctx, {}), LAMP)["name"] = "changed"
    assert _item(await async_get_state(hass, ctx, {}), LAMP)["name"] != "changed"
