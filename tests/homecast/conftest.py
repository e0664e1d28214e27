"""Fixtures of the Homecast backend tests: the simulator on 127.0.0.1 and entries pointing at it.

The helpers live in `sim.py` (tests elsewhere start the same account); they are re-exported
here for this folder's tests.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.simulation import LoopbackServers

from .scripted import ScriptedServer
from .sim import (
    TOKEN as TOKEN,
    Sim as Sim,
    device_of as device_of,
    entity_id as entity_id,
    fired_events as fired_events,
    home_entity_id as home_entity_id,
    home_tail as home_tail,
    setup_entry as setup_entry,
    start,
    token_entry as token_entry,
)


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulator on 127.0.0.1 (the HA plugin refuses any other host)."""


type SimFactory = Callable[..., Coroutine[Any, Any, Sim]]


@pytest.fixture
def sim_factory(loopback_servers: LoopbackServers) -> SimFactory:
    """Start simulators with options (closed after the test)."""
    return partial(start, loopback_servers)


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default simulator: two homes of 24 accessories, current vocabulary, SSE sessions."""
    return await sim_factory()


@pytest.fixture
async def scripted(loopback_servers: LoopbackServers) -> ScriptedServer:
    """A cloud-style socket at /ws (and /health) that plays one script per connection."""
    server = ScriptedServer()
    running = await loopback_servers.start(server.app)
    server.origin = str(running.make_url("/")).rstrip("/")
    return server


@pytest.fixture
async def polled(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    """A polling entry on the simulator (the module's `sim`): the data scripted pushes land on."""
    configured = token_entry(sim)
    await setup_entry(hass, configured)
    return configured
