"""Optimistic command effects never outlive a poll that reads the hub disagreeing with them."""

from __future__ import annotations

from datetime import timedelta

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from tests.simulators.hubitat.devices import Device

from .conftest import Sim, entity_id, first, make_entry, setup_entry


async def poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory, seconds: float = 15) -> None:
    """Let the poll interval pass (the hub's clock follows the frozen one)."""
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


@pytest.fixture
async def runtime(hass: HomeAssistant, sim: Sim) -> HubitatRuntime:
    return await setup_entry(hass, make_entry(sim))


async def _closed_shade(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> tuple[Device, str]:
    shade = first(sim, "shade")
    cover = entity_id(hass, sim, f"{shade.id}_shade", "cover")
    sim.hub.set_attribute(shade.id, "windowShade", "closed")
    sim.hub.set_attribute(shade.id, "position", 0)
    await poll(hass, freezer)
    assert hass.states.get(cover).state == "closed"
    return shade, cover


async def test_device_gone_before_it_could_be_confirmed(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    sim: Sim,
    runtime: HubitatRuntime,
) -> None:
    """A commanded device removed from the hub does not fail the poll that reads it."""
    shade, _cover = await _closed_shade(hass, freezer, sim)
    runtime.coordinator.apply(str(shade.id), windowShade="opening")
    sim.hub.remove_device(shade.id)
    await poll(hass, freezer)
    assert runtime.coordinator.last_update_success
