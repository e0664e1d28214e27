"""Fixtures of the Robine Wake backend tests: the simulator on 127.0.0.1 and entries for it.

Two clocks run in these tests: the simulator's SimClock (when alarms ring) and Home
Assistant's (when the coordinator polls, driven by `freezer`). `Sim.advance` moves both.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer
from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.backends.robine_wake.const import CONF_PASSWORD, CONF_URL
from custom_components.mcp_gateway.const import BACKEND_ROBINE_WAKE, CONF_BACKEND, DOMAIN
from tests.simulators.base import FAULTS, STATS, Faults, SimClock, Stats
from tests.simulators.robine_wake import ROBINE, RobineWake, create_app

# Monday 30 November 2026, 05:00 UTC = 06:00 in Berlin: the weekday alarm rings at 06:45.
MONDAY_6AM = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
DEVICE_ID = "rw-0123456789ab"
PASSWORD = "correct horse"


class Sim:
    """A running simulated clock: URL, device state, fault switches, counters."""

    def __init__(self, server: TestServer, clock: SimClock) -> None:
        self.server = server
        self.clock = clock
        self.app: web.Application = server.app  # type: ignore[assignment]

    @property
    def url(self) -> str:
        return str(self.server.make_url("/mcp"))

    @property
    def device(self) -> RobineWake:
        return self.app[ROBINE]

    @property
    def faults(self) -> Faults:
        return self.app[FAULTS]

    @property
    def stats(self) -> Stats:
        return self.app[STATS]

    def alarm_id(self, label: str) -> str:
        return next(a.id for a in self.device.alarms.values() if a.label == label)


type SimFactory = Callable[..., Coroutine[Any, Any, Sim]]


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulator on 127.0.0.1 (the HA plugin refuses any other host)."""


@pytest.fixture
async def sim_factory() -> AsyncGenerator[SimFactory]:
    """Start simulated clocks with options (closed after the test)."""
    servers: list[TestServer] = []

    async def start(**options: Any) -> Sim:
        clock = SimClock()
        clock.set(options.pop("now", MONDAY_6AM))
        options.setdefault("command_delay", 0)
        options.setdefault("device_id", DEVICE_ID)
        server = TestServer(create_app(clock=clock, **options), host="127.0.0.1")
        await server.start_server()
        servers.append(server)
        return Sim(server, clock)

    yield start
    for server in servers:
        await server.close()


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default clock: three starter alarms, no password, Berlin time."""
    return await sim_factory()


@pytest.fixture
def frozen(freezer: FrozenDateTimeFactory) -> FrozenDateTimeFactory:
    """HA's clock at the simulator's start time."""
    freezer.move_to(MONDAY_6AM)
    return freezer


def make_entry(
    sim: Sim, *, password: str | None = None, options: dict[str, Any] | None = None
) -> MockConfigEntry:
    """An entry for the simulated clock."""
    data: dict[str, Any] = {CONF_BACKEND: BACKEND_ROBINE_WAKE, CONF_URL: sim.url}
    if password is not None:
        data[CONF_PASSWORD] = password
    return MockConfigEntry(
        domain=DOMAIN,
        title="Bedroom clock",
        unique_id=sim.device.device_id,
        data=data,
        options=options or {},
    )


async def setup_entry(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Add and set up an entry, waiting for its platforms."""
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def advance(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, seconds: float
) -> None:
    """Let `seconds` pass on the clock and in HA; due polls run."""
    sim.clock.advance(seconds)
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    # Polls run as background tasks of the entry.
    await hass.async_block_till_done(wait_background_tasks=True)
