"""One home: a Hubitat hub, a Homecast account and a Robine Wake clock, all set up in one HA.

The three simulators share one SimClock, and HA's clock (`freezer`) moves with it, so a
scheduled alarm, a hub event time and HA's poll timers all agree on what time it is.

Tests using `one_home` mark themselves `freeze_time(MONDAY_6AM, tick=True)`: Hubitat batches
writes on a loop timer of a few milliseconds, and a clock that does not tick at all would never
let it expire (the event loop's time is the frozen one). `advance` still makes the jumps.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from simulators.base import SimClock
from simulators.homecast import HOMECAST, HomecastSim, create_app as homecast_app
from simulators.hubitat import HUB, Hub, create_app as hubitat_app, mcp_path
from simulators.robine_wake import ROBINE, RobineWake, create_app as robine_app
from tests.homecast.sim import homecast_token_entry
from tests.hubitat.sim import first_device, hubitat_entry
from tests.robine_wake.sim import robine_wake_entry
from tests.simulation import (
    LoopbackServers,
    advance_clocks,
    registry_entity_id,
    setup_entry,
    sim_clock,
)

# Monday 30 November 2026, 05:00 UTC = 06:00 in Berlin; the clock's weekday alarm rings at 06:45.
MONDAY_6AM = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
HUBITAT_TOKEN = "one-home-hub-token"
HOMECAST_TOKEN = "hc_one_home_token"
ROBINE_ID = "rw-00aa11bb22cc"
# The longest default poll interval of the three (Homecast): one step lets every backend poll.
POLL_STEP = 30.0


@dataclass
class OneHome:
    """The running simulators and the loaded entries of one home."""

    hass: HomeAssistant
    freezer: FrozenDateTimeFactory
    clock: SimClock
    hub: Hub
    homecast: HomecastSim
    robine: RobineWake
    hubitat_entry: MockConfigEntry
    homecast_entry: MockConfigEntry
    robine_entry: MockConfigEntry

    async def advance(self, seconds: float = POLL_STEP) -> None:
        """Let time pass for the simulators and HA alike; the polls that fall due run."""
        await advance_clocks(self.hass, self.freezer, self.clock, seconds)

    async def advance_to(self, when: datetime, step: float = 300.0) -> None:
        """Let time pass until `when`, in steps no longer than `step` (a poll each)."""
        while (left := (when - self.clock.now()).total_seconds()) > 0:
            await self.advance(min(left, step))

    def entity_id(self, platform: str, entry: MockConfigEntry, key: str) -> str:
        """The entity id a user would see, found by the entity's unique id."""
        return registry_entity_id(self.hass, platform, f"{entry.unique_id}_{key}")

    def hubitat_device(self, kind: str) -> Any:
        """The first visible simulated Hubitat device of a kind."""
        return first_device(self.hub, kind)


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulators on 127.0.0.1 (the HA plugin refuses any other host)."""


@pytest.fixture
async def one_home(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, loopback_servers: LoopbackServers
) -> AsyncGenerator[OneHome]:
    """All three backends running against their simulators in one HA, entries loaded."""
    freezer.move_to(MONDAY_6AM)
    clock = sim_clock(MONDAY_6AM)
    # Commands take effect at once, so an action's result is visible when the service returns.
    hub_server = await loopback_servers.start(
        hubitat_app(clock=clock, token=HUBITAT_TOKEN, hub_id="hub-one-home", command_delay=0)
    )
    homecast_server = await loopback_servers.start(
        homecast_app(clock=clock, token=HOMECAST_TOKEN, write_delay=0)
    )
    robine_server = await loopback_servers.start(
        robine_app(clock=clock, device_id=ROBINE_ID, command_delay=0)
    )
    hub: Hub = hub_server.app[HUB]
    homecast: HomecastSim = homecast_server.app[HOMECAST]
    robine: RobineWake = robine_server.app[ROBINE]
    homes = [home.uuid.lower() for home in homecast.homes]

    hubitat = hubitat_entry(
        str(hub_server.make_url(mcp_path("42"))), HUBITAT_TOKEN, unique_id=hub.hub_id
    )
    homecast_entry = homecast_token_entry(
        str(homecast_server.make_url("/mcp")), HOMECAST_TOKEN, homes
    )
    robine_entry = robine_wake_entry(str(robine_server.make_url("/mcp")), robine.device_id)
    entries = (hubitat, homecast_entry, robine_entry)
    home = OneHome(hass, freezer, clock, hub, homecast, robine, *entries)
    for entry in entries:
        await setup_entry(hass, entry)
        assert entry.state is ConfigEntryState.LOADED, entry.title
    yield home
    # Unload while the simulators still answer, so sessions close cleanly.
    for entry in entries:
        await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
