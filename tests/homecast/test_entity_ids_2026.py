"""Homecast entity ids on HA 2026.x, which builds new ones as area + device + entity name.

HA 2026's entity registry (`_async_generate_entity_id`, its settings' `entity_id_parts`: area,
parent device, device, entity by default) puts a device's area before its name. A device named
after its room then read its room twice in its id. On such an HA the integration names the
device without its room; unique ids stay as they were. HA 2025.4 has no such settings: the
registry is given them here, as 2026 has them, and each id is built as 2026 builds it.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest

from custom_components.mcp_gateway.backends.homecast.const import SERVER_COMMUNITY
from demo.home import HOMECAST_STATE
from tests.framework.test_entity_ids_2026 import area_twice, as_2026, ids_2026

from .conftest import Sim, SimFactory, setup_entry, token_entry


@pytest.fixture
async def homecast_demo(sim_factory: SimFactory) -> Sim:
    """The demo's Homecast: two homes on a community server."""
    return await sim_factory(state_file=HOMECAST_STATE, community=True)


@pytest.mark.parametrize("area_first", [False, True])
async def test_homecast_ids_name_the_room_once(
    hass: HomeAssistant, homecast_demo: Sim, area_first: bool
) -> None:
    """The demo's two Homecast homes: on HA 2026 no id repeats its area; unique ids are
    the same on either HA."""
    if area_first:
        as_2026(hass)
    entry = token_entry(homecast_demo, server=SERVER_COMMUNITY)
    await setup_entry(hass, entry)
    built = ids_2026(hass, entry)
    twice = sorted(oid for oid, area in built.values() if area_twice(oid, area))
    if area_first:
        assert twice == []
        assert "kitchen_george_street_desk_lamp" in {oid for oid, _ in built.values()}
        assert "kitchen_rob_s_flat_desk_lamp" in {oid for oid, _ in built.values()}
    else:
        # What 2026 would have built from the names made for 2025.4.
        assert len(twice) > len(built) // 2


async def test_homecast_unique_ids_do_not_depend_on_the_names(
    hass: HomeAssistant, homecast_demo: Sim
) -> None:
    """The same accessories, named either way, keep their unique ids."""
    entry = token_entry(homecast_demo, server=SERVER_COMMUNITY)
    await setup_entry(hass, entry)
    before = set(ids_2026(hass, entry))
    as_2026(hass)
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert set(ids_2026(hass, entry)) == before
