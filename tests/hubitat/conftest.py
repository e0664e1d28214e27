"""Fixtures of the Hubitat backend tests: the simulated hub on 127.0.0.1 and entries for it."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from aiohttp.test_utils import TestServer
from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from tests.simulation import (
    LoopbackServers,
    SimServer,
    first_device,
    hubitat_entry,
    registry_entity_id,
    setup_entry as _setup_entry,
)
from tests.simulators.hubitat import HUB, TOOLS, Hub, create_app, mcp_path

TOKEN = "sim-token"


class Sim(SimServer):
    """A running simulated hub: its URL, state, fault switches and counters."""

    def __init__(self, server: TestServer, app_id: str) -> None:
        super().__init__(server, mcp_path(app_id))
        self.app_id = app_id

    @property
    def hub(self) -> Hub:
        return self.app[HUB]

    @property
    def tools(self) -> Any:
        return self.app[TOOLS]


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulator on 127.0.0.1 (the HA plugin refuses any other host)."""


type SimFactory = Callable[..., Coroutine[Any, Any, Sim]]


@pytest.fixture
def sim_factory(loopback_servers: LoopbackServers) -> SimFactory:
    """Start simulated hubs with options (closed after the test)."""

    async def start(**options: Any) -> Sim:
        options.setdefault("command_delay", 0)
        options.setdefault("hub_id", "hub-0001")
        options.setdefault("devices", 24)
        server = await loopback_servers.start(create_app(**options))
        return Sim(server, str(options.get("app_id", "42")))

    return start


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default hub: 24 devices of every kind, commands taking effect at once."""
    return await sim_factory()


def make_entry(
    sim: Sim, *, token: str = TOKEN, unique_id: str | None = None, **options: Any
) -> MockConfigEntry:
    """An entry for the simulated hub."""
    return hubitat_entry(sim.url, token, unique_id=unique_id or sim.hub.hub_id, options=options)


async def setup_entry(hass: HomeAssistant, entry: MockConfigEntry) -> HubitatRuntime:
    """Add and set up an entry, waiting for its platforms."""
    await _setup_entry(hass, entry)
    return entry.runtime_data


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


def entity_id(hass: HomeAssistant, sim: Sim, key: str, platform: str) -> str:
    """The entity id of one of the hub's entities, by its key (`<device id>_<kind>` …)."""
    return registry_entity_id(hass, platform, f"{sim.hub.hub_id}_{key}")


def first(sim: Sim, kind: str) -> Any:
    """The first visible simulated device of a kind."""
    return first_device(sim.hub, kind)
