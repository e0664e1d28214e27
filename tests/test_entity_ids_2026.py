"""Entity ids on HA 2026.x, which builds new ones as area + device + entity name.

HA 2026's entity registry (`_async_generate_entity_id`, its settings' `entity_id_parts`: area,
parent device, device, entity by default) puts a device's area before its name. A device named
after its room ("George Street Kitchen Desk Lamp" in the Kitchen) then read
light.kitchen_george_street_kitchen_desk_lamp. On such an HA the integration names the device
without its room (and home); unique ids stay as they were. HA 2025.4 has no such settings: the
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
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.entity import area_leads_entity_ids, without_area
from custom_components.mcp_gateway.backends.homecast.const import SERVER_COMMUNITY
from demo.home import HOMECAST_STATE
from tests.homecast.sim import Sim as HomecastSim, setup_entry, start as homecast_start, token_entry
from tests.hubitat.sim import make_entry as hub_entry, setup_entry as hub_setup, start as hub_start
from tests.simulation import LoopbackServers


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulators on 127.0.0.1."""


@pytest.fixture
async def homecast_demo(loopback_servers: LoopbackServers) -> HomecastSim:
    """The demo's Homecast: two homes on a community server."""
    return await homecast_start(loopback_servers, state_file=HOMECAST_STATE, community=True)


def _as_2026(hass: HomeAssistant) -> None:
    """The registry settings HA 2026 has (entity_id_parts None: its default parts)."""
    er.async_get(hass).settings = SimpleNamespace(entity_id_parts=None)  # type: ignore[attr-defined]
    assert area_leads_entity_ids(hass)


def _ids_2026(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, tuple[str, str | None]]:
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


def _area_twice(object_id: str, area: str | None) -> bool:
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


@pytest.mark.parametrize("area_first", [False, True])
async def test_homecast_ids_name_the_room_once(
    hass: HomeAssistant, homecast_demo: HomecastSim, area_first: bool
) -> None:
    """The demo's two Homecast homes: on HA 2026 no id repeats its area; unique ids are
    the same on either HA."""
    if area_first:
        _as_2026(hass)
    entry = token_entry(homecast_demo, server=SERVER_COMMUNITY)
    await setup_entry(hass, entry)
    built = _ids_2026(hass, entry)
    twice = sorted(oid for oid, area in built.values() if _area_twice(oid, area))
    if area_first:
        assert twice == []
        assert "kitchen_desk_lamp" in {oid for oid, _ in built.values()}
    else:
        # What 2026 would have built from the names made for 2025.4.
        assert len(twice) > len(built) // 2


async def test_homecast_unique_ids_do_not_depend_on_the_names(
    hass: HomeAssistant, homecast_demo: HomecastSim
) -> None:
    """The same accessories, named either way, keep their unique ids."""
    entry = token_entry(homecast_demo, server=SERVER_COMMUNITY)
    await setup_entry(hass, entry)
    before = set(_ids_2026(hass, entry))
    _as_2026(hass)
    await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert set(_ids_2026(hass, entry)) == before


async def test_hubitat_ids_name_the_room_once(
    hass: HomeAssistant, loopback_servers: LoopbackServers
) -> None:
    """The demo hub's labels start with their room ("Garage Garage Door"): on HA 2026 the
    device is named without it (cover.garage_door), and no id repeats its area."""
    _as_2026(hass)
    sim = await hub_start(loopback_servers, devices=40, seed=7, hub_name="Home Hub", hub_id=None)
    entry = hub_entry(sim)
    await hub_setup(hass, entry)
    built = _ids_2026(hass, entry)
    twice = sorted(oid for oid, area in built.values() if _area_twice(oid, area))
    assert twice == []
    assert "garage_door" in {oid for oid, _ in built.values()}
