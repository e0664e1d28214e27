"""The simulated Robine Wake clock, started on 127.0.0.1, and entries for it.

Plain helpers (no fixtures), so that tests beyond this folder start the same clock without
importing this folder's conftest.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aiohttp.test_utils import TestServer
from freezegun.api import FrozenDateTimeFactory
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.robine_wake.const import (
    CONF_PASSWORD,
    KIND as ROBINE_WAKE_KIND,
    address_uid,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators.base import SimClock
from simulators.robine_wake import ROBINE, RobineWake, create_app
from tests.backend_sims import SimulatedBackend
from tests.simulation import (
    LoopbackServers,
    SimServer,
    advance_clocks,
    setup_entry as setup_entry,
    sim_clock,
)

# Monday 30 November 2026, 05:00 UTC = 06:00 in Berlin: the weekday alarm rings at 06:45.
MONDAY_6AM = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
DEVICE_ID = "rw-0123456789ab"
PASSWORD = "correct horse"


class Sim(SimServer):
    """A running simulated clock: URL, device state, fault switches, counters."""

    def __init__(self, server: TestServer, clock: SimClock) -> None:
        super().__init__(server)
        self.clock = clock

    @property
    def device(self) -> RobineWake:
        return self.app[ROBINE]

    def alarm_id(self, label: str) -> str:
        return next(a.id for a in self.device.alarms.values() if a.label == label)


async def start(servers: LoopbackServers, **options: Any) -> Sim:
    """A simulated clock with options (`now`: its start time, else MONDAY_6AM); by default as
    50-002 has it: no device id, three starter alarms, no password, Berlin time."""
    clock = sim_clock(options.pop("now", MONDAY_6AM))
    options.setdefault("command_delay", 0)
    server = await servers.start(create_app(clock=clock, **options))
    return Sim(server, clock)


def robine_wake_entry(
    url: str,
    unique_id: str,
    *,
    password: str | None = None,
    options: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """An entry for a (simulated) Robine Wake clock."""
    data: dict[str, Any] = {CONF_BACKEND: ROBINE_WAKE_KIND, CONF_URL: url}
    if password is not None:
        data[CONF_PASSWORD] = password
    return MockConfigEntry(
        domain=DOMAIN,
        title="Bedroom clock",
        unique_id=unique_id,
        data=data,
        options=options or {},
    )


def make_entry(
    sim: Sim, *, password: str | None = None, options: dict[str, Any] | None = None
) -> MockConfigEntry:
    """An entry for the simulated clock (identified by its id if it names one, else its address)."""
    unique_id = sim.device.device_id or address_uid(sim.url)
    return robine_wake_entry(sim.url, unique_id, password=password, options=options)


async def advance(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim, seconds: float
) -> None:
    """Let `seconds` pass on the clock and in HA; due polls run."""
    await advance_clocks(hass, freezer, sim.clock, seconds)


async def _start_named(servers: LoopbackServers) -> Sim:
    """The clock as a home of every backend has it: naming its device."""
    return await start(servers, device_id=DEVICE_ID)


BACKEND = SimulatedBackend(start=_start_named, entry=make_entry, setup=setup_entry)
