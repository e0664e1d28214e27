"""The demo's entity ids name each room once on Home Assistant 2026.6 and later, which begins a
new entity id with the device's area.

The demo is set up as `scripts/demo` sets it up (its simulators, its entries through the config
flows). On a release that builds ids so, they are HA's own; on 2025.4 the registry is given
2026's settings and each id is built as 2026 builds it (area, then the friendly name).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.mcp_gateway.core.const import DOMAIN
from demo.__main__ import add_backends
from demo.home import DemoHome, demo_home
from tests.framework.test_entity_ids_2026 import area_twice, as_area_first, ids_area_first
from tests.test_readme_ids import _InProcessHA


@pytest.fixture
async def demo(socket_enabled: None) -> AsyncIterator[DemoHome]:
    """The demo's simulators on loopback (no background activity during the test)."""
    async with demo_home(activity_every=3600) as home:
        yield home


async def test_demo_ids_name_each_room_once(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, demo: DemoHome, tmp_path: Path
) -> None:
    """No entity id of the demo's three backends repeats its area: devices the integration
    names leave the room out there, and no demo hub label starts with its room."""
    as_area_first(hass)
    assert await async_setup_component(hass, "config", {})
    assert await async_setup_component(hass, DOMAIN, {})
    entries = await add_backends(_InProcessHA(await hass_client(), tmp_path), demo)
    assert [entry["type"] for entry in entries] == ["create_entry"] * 3
    await hass.async_block_till_done()
    built: dict[str, tuple[str, str]] = {}
    for entry in hass.config_entries.async_entries(DOMAIN):
        built.update(ids_area_first(hass, entry))
    assert len(built) > 200
    assert sorted(oid for oid, area in built.values() if area_twice(oid, area)) == []
    for entry in hass.config_entries.async_entries(DOMAIN):
        await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
