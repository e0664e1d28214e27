"""The simulated Hubitat hub, started on 127.0.0.1, and entries for it.

Plain helpers (no fixtures), so that tests beyond this folder start the same hub without
importing this folder's conftest.
"""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestServer
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.hubitat.const import CONF_TOKEN, KIND as HUBITAT_KIND
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators.hubitat import HUB, TOOLS, Hub, create_app, mcp_path
from tests.backend_sims import SimulatedBackend
from tests.simulation import (
    LoopbackServers,
    SimServer,
    registry_entity_id,
    setup_entry as _setup_entry,
)

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


async def start(servers: LoopbackServers, **options: Any) -> Sim:
    """A simulated hub with options; by default 24 devices of every kind, commands taking
    effect at once."""
    options.setdefault("command_delay", 0)
    options.setdefault("hub_id", "hub-0001")
    options.setdefault("devices", 24)
    server = await servers.start(create_app(**options))
    return Sim(server, str(options.get("app_id", "42")))


def hubitat_entry(
    url: str, token: str, *, unique_id: str, options: dict[str, Any] | None = None
) -> MockConfigEntry:
    """An entry for a (simulated) Hubitat hub."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="Home Hub",
        unique_id=unique_id,
        data={CONF_BACKEND: HUBITAT_KIND, CONF_URL: url, CONF_TOKEN: token},
        options=options or {},
    )


def first_device(hub: Any, kind: str) -> Any:
    """The first visible device of a kind on a simulated Hubitat hub (lowest id)."""
    devices = sorted(hub.find(kind=kind), key=lambda d: d.id)
    assert devices, kind
    return devices[0]


def make_entry(
    sim: Sim, *, token: str = TOKEN, unique_id: str | None = None, **options: Any
) -> MockConfigEntry:
    """An entry for the simulated hub."""
    return hubitat_entry(sim.url, token, unique_id=unique_id or sim.hub.hub_id, options=options)


async def setup_entry(hass: HomeAssistant, entry: MockConfigEntry) -> HubitatRuntime:
    """Add and set up an entry, waiting for its platforms."""
    await _setup_entry(hass, entry)
    return entry.runtime_data


def entity_id(hass: HomeAssistant, sim: Sim, key: str, platform: str) -> str:
    """The entity id of one of the hub's entities, by its key (`<device id>_<kind>` …)."""
    return registry_entity_id(hass, platform, f"{sim.hub.hub_id}_{key}")


def first(sim: Sim, kind: str) -> Any:
    """The first visible simulated device of a kind."""
    return first_device(sim.hub, kind)


BACKEND = SimulatedBackend(start=start, entry=make_entry, setup=setup_entry)
