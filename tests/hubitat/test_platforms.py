"""Every platform of a simulated hub, as syrupy snapshots of entity entries and states."""

from __future__ import annotations

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from syrupy.assertion import SnapshotAssertion

from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from tests.registry import area_name, device_of
from tests.simulation import snapshot_one_platform

from .conftest import Sim, make_entry, setup_entry


# Noisy entities are disabled by default; snapshots show them all.
@pytest.mark.usefixtures("entity_registry_enabled_by_default")
@pytest.mark.parametrize("platform", HubitatRuntime.platforms)
async def test_platform_snapshot(
    hass: HomeAssistant,
    entity_registry: er.EntityRegistry,
    snapshot: SnapshotAssertion,
    sim: Sim,
    platform: Platform,
) -> None:
    """Each platform's entities and states, from a 24-device hub with rules, modes and HSM."""
    await snapshot_one_platform(
        hass,
        entity_registry,
        snapshot,
        make_entry(sim),
        runtime_class=HubitatRuntime,
        platform=platform,
    )


async def test_devices_rooms_and_hub(
    hass: HomeAssistant, device_registry: dr.DeviceRegistry, sim: Sim
) -> None:
    """Rooms become suggested areas; every device hangs off the hub device."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    hub = device_of(hass, ("mcp_gateway", f"{sim.hub.hub_id}_hub"))
    assert hub is not None
    assert hub.manufacturer == "Hubitat"
    assert hub.model == "C-8 Pro"
    assert hub.configuration_url == sim.url.split("/apps/")[0]
    for device in sim.hub.visible_devices():
        entry_device = device_of(hass, ("mcp_gateway", f"{sim.hub.hub_id}_{device.id}"))
        assert entry_device is not None, device.label
        assert entry_device.name == device.display
        assert entry_device.via_device_id == hub.id
        room = sim.hub.room_of(device)
        if room is not None:
            assert area_name(hass, entry_device) == room.name
