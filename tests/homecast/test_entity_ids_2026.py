"""Homecast entity ids where HA begins them with the area (2026.6 and later).

The integration names an accessory's device (its home first, with several homes): there it
leaves out the room the accessory's name starts with, so light.kitchen_george_street_desk_lamp
rather than light.kitchen_george_street_kitchen_desk_lamp. Unique ids never depend on names,
and the gateway finds an accessory by its room and name, its home, room and name, or its
name as HomeKit has it, on either release.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.backends.homecast.const import CONF_SERVER, SERVER_COMMUNITY
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state
from custom_components.mcp_gateway.mcp.server import RequestContext
from demo.home import HOMECAST_STATE
from tests.framework.test_entity_ids_2026 import area_twice, as_area_first, ids_area_first
from tests.registry import AREA_FIRST

from .conftest import Sim, SimFactory, setup_entry, token_entry


@pytest.fixture
async def homecast_demo(sim_factory: SimFactory) -> Sim:
    """The demo's Homecast: two homes on a community server."""
    return await sim_factory(state_file=HOMECAST_STATE, community=True)


async def _loaded(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    return entry


async def test_ids_name_the_room_once(hass: HomeAssistant, homecast_demo: Sim) -> None:
    """Where the area leads (HA's own ids on 2026, built as 2026 builds them on 2025.4 with
    its settings given), no id of the demo's two homes repeats its room; the home stays in
    the twins' ids, so neither gets a `_2`."""
    as_area_first(hass)
    entry = await _loaded(hass, homecast_demo)
    built = ids_area_first(hass, entry)
    assert len(built) > 100
    assert [oid for oid, area in built.values() if area_twice(oid, area)] == []
    object_ids = {oid for oid, _ in built.values()}
    assert {"kitchen_george_street_desk_lamp", "kitchen_rob_s_flat_desk_lamp"} <= object_ids
    assert not [oid for oid in object_ids if oid.endswith("_2")]


async def test_rooms_read_twice_without_it(hass: HomeAssistant, homecast_demo: Sim) -> None:
    """The same accessories named as for 2025.4 would repeat the room in most 2026 ids: what
    the names above prevent. On 2026 itself every device is named without its room."""
    entry = await _loaded(hass, homecast_demo)
    built = ids_area_first(hass, entry)
    twice = [oid for oid, area in built.values() if area_twice(oid, area)]
    if AREA_FIRST:
        assert twice == []
    else:
        assert len(twice) > len(built) // 2
        assert "kitchen_george_street_kitchen_desk_lamp" in twice


async def test_unique_ids_do_not_depend_on_the_names(
    hass: HomeAssistant, homecast_demo: Sim
) -> None:
    """Named either way, the accessories keep their unique ids and entity ids: an existing
    entity never moves, only new ones are built from the new names."""
    entry = await _loaded(hass, homecast_demo)
    registry = er.async_get(hass)
    before = {
        e.unique_id: e.entity_id
        for e in er.async_entries_for_config_entry(registry, entry.entry_id)
    }
    names_before = {
        d.id: d.name for d in dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    }
    as_area_first(hass)
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    after = {
        e.unique_id: e.entity_id
        for e in er.async_entries_for_config_entry(registry, entry.entry_id)
    }
    assert after == before
    names_after = {
        d.id: d.name for d in dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    }
    assert set(names_after) == set(names_before)
    if not AREA_FIRST:  # renamed by the reload: the room left out
        assert names_after != names_before


@pytest.mark.parametrize("area_first", [False, True])
@pytest.mark.parametrize(
    ("args", "homes"),
    [
        ({"name": "kitchen hall motion"}, {"George Street", "Rob's Flat"}),
        ({"name": "kitchen hall motion", "home": "Rob's Flat"}, {"Rob's Flat"}),
        ({"name": "george street kitchen hall motion"}, {"George Street"}),
        ({"name": "hall motion", "area": "kitchen"}, {"George Street", "Rob's Flat"}),
        ({"name": "Kitchen Hall Motion", "home": "george street"}, {"George Street"}),
    ],
)
async def test_found_by_room_home_and_name(  # noqa: PLR0917 - pytest fixtures
    hass: HomeAssistant,
    homecast_demo: Sim,
    hass_admin_user: MockUser,
    area_first: bool,
    args: dict[str, Any],
    homes: set[str],
) -> None:
    """ "kitchen hall motion", with or without the home's name, finds the accessory HomeKit
    calls "Kitchen Hall Motion" whether its device is named with the room or not."""
    if area_first:
        as_area_first(hass)
    await _loaded(hass, homecast_demo)
    result = await async_get_state(
        hass,
        RequestContext("2025-11-25", "pytest", hass_admin_user, 1),
        {**args, "domain": ["binary_sensor"]},
    )
    found = result["entities"]
    motion = [e for e in found if e["entity_id"].endswith("hall_motion")]
    # A home filter has the home said once, for all.
    assert {e.get("home", result.get("home")) for e in motion} == homes, found
    assert all("hall_motion" in e["entity_id"] for e in found), found
