"""Hubitat entity ids on HA 2026.x, which builds new ones as area + device + entity name.

HA 2026's entity registry (`_async_generate_entity_id`, its settings' `entity_id_parts`: area,
parent device, device, entity by default) puts a device's area before its name. A device named
after its room then read its room twice in its id. On such an HA the integration names the
device without its room; unique ids stay as they were. HA 2025.4 has no such settings: the
registry is given them here, as 2026 has them, and each id is built as 2026 builds it.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant

from tests.framework.test_entity_ids_2026 import area_twice, as_2026, ids_2026

from .conftest import SimFactory, make_entry, setup_entry


async def test_hubitat_ids_name_the_room_once(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """The demo hub's labels start with their room ("Garage Garage Door"): on HA 2026 the
    device is named without it (cover.garage_door), and no id repeats its area."""
    as_2026(hass)
    # As demo/home.py starts it.
    sim = await sim_factory(devices=40, seed=7, hub_name="Home Hub", hub_id=None)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    built = ids_2026(hass, entry)
    twice = sorted(oid for oid, area in built.values() if area_twice(oid, area))
    assert twice == []
    assert "garage_door" in {oid for oid, _ in built.values()}
