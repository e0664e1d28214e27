"""Fixtures of the Robine Wake backend tests: the simulator on 127.0.0.1 and entries for it.

Two clocks run in these tests: the simulator's SimClock (when alarms ring) and Home
Assistant's (when the coordinator polls, driven by `freezer`). `advance` moves both.
The helpers live in `sim.py` (tests elsewhere start the same clock); they are re-exported
here for this folder's tests.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.simulation import LoopbackServers

from .sim import (
    DEVICE_ID as DEVICE_ID,
    MONDAY_6AM,
    PASSWORD as PASSWORD,
    Sim as Sim,
    advance as advance,
    make_entry as make_entry,
    setup_entry as setup_entry,
    start,
)

type SimFactory = Callable[..., Coroutine[Any, Any, Sim]]


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulator on 127.0.0.1 (the HA plugin refuses any other host)."""


@pytest.fixture
def sim_factory(loopback_servers: LoopbackServers) -> SimFactory:
    """Start simulated clocks with options (closed after the test)."""
    return partial(start, loopback_servers)


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default clock, as 50-002 has it: no device id, three starter alarms, no password,
    Berlin time."""
    return await sim_factory()


@pytest.fixture
async def entry(hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory) -> MockConfigEntry:
    """The default clock's entry, set up at the simulator's start time."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    return entry


@pytest.fixture
def frozen(freezer: FrozenDateTimeFactory) -> FrozenDateTimeFactory:
    """HA's clock at the simulator's start time."""
    freezer.move_to(MONDAY_6AM)
    return freezer
