"""One Home Assistant with all three backends, each on its simulator.

The security matrix and the gateway's end-to-end tests start the same home: a hub of 24
devices, a Homecast account of two homes and a clock at Monday 6 am. The backends' own
start helpers (`tests/<backend>/sim.py`) do each part, as in their own suites.
"""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.homecast import sim as homecast
from tests.hubitat import sim as hubitat
from tests.robine_wake import sim as robine_wake
from tests.simulation import LoopbackServers


@dataclass(frozen=True, slots=True)
class Simulators:
    """The three running simulators."""

    hubitat: hubitat.Sim
    homecast: homecast.Sim
    robine_wake: robine_wake.Sim


@dataclass(frozen=True, slots=True)
class Entries:
    """The three backends' config entries, set up."""

    hubitat: MockConfigEntry
    homecast: MockConfigEntry
    robine_wake: MockConfigEntry


async def start_simulators(servers: LoopbackServers) -> Simulators:
    """The three simulators on 127.0.0.1 (closed with `servers`); the clock names its device."""
    return Simulators(
        hubitat=await hubitat.start(servers),
        homecast=await homecast.start(servers),
        robine_wake=await robine_wake.start(servers, device_id=robine_wake.DEVICE_ID),
    )


async def setup_entries(
    hass: HomeAssistant, sims: Simulators, *, homecast_homes: list[str] | None = None
) -> Entries:
    """An entry per simulator, set up; Homecast follows `homecast_homes` (default: all)."""
    entries = Entries(
        hubitat=hubitat.make_entry(sims.hubitat),
        homecast=homecast.token_entry(sims.homecast, homes=homecast_homes),
        robine_wake=robine_wake.make_entry(sims.robine_wake),
    )
    await hubitat.setup_entry(hass, entries.hubitat)
    await homecast.setup_entry(hass, entries.homecast)
    await robine_wake.setup_entry(hass, entries.robine_wake)
    return entries
