"""The entity index: built once, kept current from registry events, reads touch what they return."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.finding.index import EntityIndex
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.permissions import visibility

from .conftest import Ctx, add_fake_entry

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"


def _ids(result: dict[str, Any]) -> list[str]:
    return [item["entity_id"] for item in result["entities"]]


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every permission check the tools make."""
    checked: list[str] = []
    real = visibility.can_read_entity

    def counting(user: Any, entity_id: str) -> bool:
        checked.append(entity_id)
        return real(user, entity_id)

    monkeypatch.setattr(visibility, "can_read_entity", counting)
    return checked


async def test_filtered_reads_check_only_what_they_return(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One entity asked, one permission check; a domain filter checks only that domain."""
    checked = _count_reads(monkeypatch)
    ctx = Ctx(user=hass_admin_user)
    assert _ids(await async_get_state(hass, ctx, {"entity_ids": [PLUG]})) == [PLUG]
    assert checked == [PLUG]
    checked.clear()
    assert _ids(await async_get_state(hass, ctx, {"domain": ["light"]})) == [LAMP]
    assert checked == [LAMP]
    checked.clear()
    result = await async_set_state(hass, ctx, {"updates": [{"entity_id": PLUG, "state": "on"}]})
    assert result["updated"] == 1
    assert checked == [PLUG]


async def test_the_permission_check_stays_per_entity(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """Narrowing by the index does not skip HA's read permission."""
    hass_user.mock_policy({"entities": {"entity_ids": {PLUG: True}}})
    ctx = Ctx(user=hass_user)
    assert _ids(await async_get_state(hass, ctx, {"entity_ids": [PLUG, LAMP]})) == [PLUG]
    assert _ids(await async_get_state(hass, ctx, {"domain": ["light"]})) == []


async def test_index_follows_the_registries(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Renames, area moves of a device, disabling and removal show at the next read."""
    ctx = Ctx(user=hass_admin_user)
    index = EntityIndex.get(hass)
    assert [e.entity_id for e in index.entities([fake_entry.entry_id], entity_ids=[PLUG])] == [PLUG]
    entities = er.async_get(hass)
    devices = dr.async_get(hass)

    entities.async_update_entity(PLUG, new_entity_id="switch.coffee")
    assert index.entities([fake_entry.entry_id], entity_ids=[PLUG]) == []
    assert _ids(await async_get_state(hass, ctx, {"entity_ids": ["switch.coffee", PLUG]})) == [
        "switch.coffee"
    ]

    # The lamp has no area of its own: it moves with its device.
    garage = ar.async_get(hass).async_create("Garage")
    lamp = entities.async_get(LAMP)
    assert lamp is not None
    assert lamp.device_id is not None
    assert lamp.area_id is None
    devices.async_update_device(lamp.device_id, area_id=garage.id)
    assert _ids(await async_get_state(hass, ctx, {"area": "Garage"})) == [LAMP]
    # Its own area wins over the device's. (HA 2026.x gives an entity an area of its own only
    # with a name of its own, so the user names it too; 2025.4 takes either way.)
    attic = ar.async_get(hass).async_create("Attic")
    entities.async_update_entity(LAMP, name="Reading light", area_id=attic.id)
    assert _ids(await async_get_state(hass, ctx, {"area": "Attic"})) == [LAMP]
    assert _ids(await async_get_state(hass, ctx, {"area": "Garage"})) == []

    entities.async_update_entity(THERMO, disabled_by=er.RegistryEntryDisabler.USER)
    assert THERMO not in _ids(await async_get_state(hass, ctx, {}))
    entities.async_update_entity(THERMO, disabled_by=None)
    assert THERMO in _ids(await async_get_state(hass, ctx, {}))

    entities.async_remove("switch.coffee")
    assert _ids(await async_get_state(hass, ctx, {"domain": ["switch"]})) == []
    # Other integrations' entities never enter the index.
    entities.async_get_or_create("light", "other", "x1", suggested_object_id="foreign")
    assert _ids(await async_get_state(hass, ctx, {"domain": ["light"]})) == [LAMP]


async def test_index_covers_entries_added_later(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Entities of an entry set up after the index was built are found, in id order."""
    ctx = Ctx(user=hass_admin_user)
    assert len(_ids(await async_get_state(hass, ctx, {}))) == 3
    second = await add_fake_entry(hass, "Barn", unique_id="hub-2")
    ids = _ids(await async_get_state(hass, ctx, {}))
    assert len(ids) == 6
    assert ids == sorted(ids)
    await hass.config_entries.async_remove(second.entry_id)
    await hass.async_block_till_done()
    assert len(_ids(await async_get_state(hass, ctx, {}))) == 3
