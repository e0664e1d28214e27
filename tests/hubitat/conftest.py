"""Fixtures of the Hubitat backend tests: the simulated hub on 127.0.0.1 and entries for it.

The helpers live in `sim.py` (tests elsewhere start the same hub); they are re-exported here
for this folder's tests.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import timedelta
from functools import partial
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from tests.simulation import LoopbackServers

from .sim import (
    TOKEN as TOKEN,
    Sim as Sim,
    entity_id as entity_id,
    first as first,
    make_entry as make_entry,
    setup_entry as setup_entry,
    start,
)


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulator on 127.0.0.1 (the HA plugin refuses any other host)."""


type SimFactory = Callable[..., Coroutine[Any, Any, Sim]]


@pytest.fixture
def sim_factory(loopback_servers: LoopbackServers) -> SimFactory:
    """Start simulated hubs with options (closed after the test)."""
    return partial(start, loopback_servers)


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default hub: 24 devices of every kind, commands taking effect at once."""
    return await sim_factory()


@pytest.fixture
async def runtime(hass: HomeAssistant, sim: Sim) -> HubitatRuntime:
    """The default hub's entry, set up."""
    return await setup_entry(hass, make_entry(sim))


async def poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory, seconds: float = 15) -> None:
    """Let the poll interval pass (the hub's clock follows the frozen one)."""
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    # Interval refreshes run as background tasks.
    await hass.async_block_till_done(wait_background_tasks=True)


@pytest.fixture
async def ha_url(hass: HomeAssistant, hass_client_no_auth: ClientSessionGenerator) -> str:
    """HA's HTTP app listening on 127.0.0.1, set as its internal URL (what the hub calls)."""
    # Everything that registers routes, before the HTTP app starts (its router then freezes).
    assert await async_setup_component(hass, DOMAIN, {})
    client = await hass_client_no_auth()
    url = str(client.make_url("/")).rstrip("/")
    await hass.config.async_update(internal_url=url)
    return url
