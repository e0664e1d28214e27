"""Fixtures of the Hubitat backend tests: the simulated hub on 127.0.0.1 and entries for it."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.hubitat.const import CONF_TOKEN, CONF_URL
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.const import BACKEND_HUBITAT, CONF_BACKEND, DOMAIN
from tests.simulators.base import FAULTS, STATS, Faults, Stats
from tests.simulators.hubitat import HUB, TOOLS, Hub, create_app, mcp_path

TOKEN = "sim-token"


class Sim:
    """A running simulated hub: its URL, state, fault switches and counters."""

    def __init__(self, server: TestServer, app_id: str) -> None:
        self.server = server
        self.app: web.Application = server.app  # type: ignore[assignment]
        self.app_id = app_id

    @property
    def url(self) -> str:
        return str(self.server.make_url(mcp_path(self.app_id)))

    @property
    def hub(self) -> Hub:
        return self.app[HUB]

    @property
    def tools(self) -> Any:
        return self.app[TOOLS]

    @property
    def faults(self) -> Faults:
        return self.app[FAULTS]

    @property
    def stats(self) -> Stats:
        return self.app[STATS]


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulator on 127.0.0.1 (the HA plugin refuses any other host)."""


type SimFactory = Callable[..., Coroutine[Any, Any, Sim]]


@pytest.fixture
async def sim_factory() -> AsyncGenerator[SimFactory]:
    """Start simulated hubs with options (closed after the test)."""
    servers: list[TestServer] = []

    async def start(**options: Any) -> Sim:
        options.setdefault("command_delay", 0)
        options.setdefault("hub_id", "hub-0001")
        options.setdefault("devices", 24)
        server = TestServer(create_app(**options), host="127.0.0.1")
        await server.start_server()
        servers.append(server)
        return Sim(server, str(options.get("app_id", "42")))

    yield start
    for server in servers:
        await server.close()


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default hub: 24 devices of every kind, commands taking effect at once."""
    return await sim_factory()


def make_entry(
    sim: Sim, *, token: str = TOKEN, unique_id: str | None = None, **options: Any
) -> MockConfigEntry:
    """An entry for the simulated hub."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="Home Hub",
        unique_id=unique_id or sim.hub.hub_id,
        data={CONF_BACKEND: BACKEND_HUBITAT, CONF_URL: sim.url, CONF_TOKEN: token},
        options=options,
    )


async def setup_entry(hass: HomeAssistant, entry: MockConfigEntry) -> HubitatRuntime:
    """Add and set up an entry, waiting for its platforms."""
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry.runtime_data


def entity_id(hass: HomeAssistant, sim: Sim, key: str, platform: str) -> str:
    """The entity id of one of the hub's entities, by its key (`<device id>_<kind>` …)."""
    from homeassistant.helpers import entity_registry as er

    found = er.async_get(hass).async_get_entity_id(platform, DOMAIN, f"{sim.hub.hub_id}_{key}")
    assert found is not None, key
    return found


def first(sim: Sim, kind: str) -> Any:
    """The first visible simulated device of a kind."""
    devices = sorted(sim.hub.find(kind=kind), key=lambda d: d.id)
    assert devices, kind
    return devices[0]
