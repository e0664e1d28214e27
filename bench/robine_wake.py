"""Robine Wake backend: request rate at default settings and ringing-detection latency.

usage: .venv/bin/python bench/robine_wake.py [RINGS] [--interval S] [--scheduled K]

Runs a real Home Assistant core (the test harness's instance, on the real clock) with the
integration set up against the simulated clock on 127.0.0.1 (default rate limit 120/min, clock
running in real time). The simulated clock is made to ring RINGS times at random moments; for
each ring the latency is the time from the ring until Home Assistant's session sensor shows
`ringing`. After each ring the person on the clock presses dismiss, HA sees `idle`, and a random
pause of up to one interval follows so rings fall at random phases of the poll cycle.

Prints the requests the integration sent per minute (HTTP requests counted by the simulator,
after setup, and over the whole run including setup) and the latency p50 / p95 / max in ms.
Then K alarms are set on the clock for the next full minute (at least 15 s ahead, as a person
would set them); their latency is measured from the minute, when the clock starts ringing. These
rings were announced by the clock (next_occurrence), so the integration reads the clock just after
them instead of waiting for the next poll.
Figures are what one run measured on this machine; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
import random
import statistics
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp.test_utils import TestServer
from homeassistant import loader
from homeassistant.core import Event, EventStateChangedData, callback
from homeassistant.helpers.event import async_track_state_change_event
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from custom_components.mcp_gateway.backends.robine_wake.const import (
    CONF_SCAN_INTERVAL,
    DEFAULT_SCAN_INTERVAL,
    KIND as ROBINE_WAKE_KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators.base import STATS
from simulators.robine_wake import ROBINE, create_app

SESSION = "sensor.bedroom_clock_session"


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


async def run(rings: int, interval: float, scheduled: int) -> None:
    """Set up HA against the simulator and measure."""
    app = create_app(command_delay=0, device_id="rw-bench", starter_alarms=False)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    device = server.app[ROBINE]
    stats = server.app[STATS]
    # Rung on demand only (trigger works on disabled alarms), so it never rings by itself.
    alarm_id = device.add_alarm(label="Bench", time="12:00", enabled=False)["id"]
    rng = random.Random(7)
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
        seen: asyncio.Queue[tuple[str, float]] = asyncio.Queue()

        @callback
        def _changed(event: Event[EventStateChangedData]) -> None:
            state = event.data["new_state"]
            if state is not None:
                seen.put_nowait((state.state, time.time()))

        entry = MockConfigEntry(
            domain=DOMAIN,
            title="Bedroom clock",
            unique_id="rw-bench",
            data={CONF_BACKEND: ROBINE_WAKE_KIND, "url": str(server.make_url("/mcp"))},
            options={CONF_SCAN_INTERVAL: interval},
        )
        started = time.monotonic()
        stats.reset()
        entry.add_to_hass(hass)
        await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
        async_track_state_change_event(hass, [SESSION], _changed)
        setup_requests = stats.http_requests
        steady_start = time.monotonic()
        latencies: list[float] = []
        for _ in range(rings):
            await asyncio.sleep(rng.uniform(0, interval))
            device.trigger(alarm_id)
            rang = time.time()
            latencies.append((await _wait_for(seen, "ringing") - rang) * 1000)
            device.press_dismiss()
            await _wait_for(seen, "idle")
        announced: list[float] = []
        for index in range(scheduled):
            # The simulated clock runs on real time here, like an NTP-synced clock and HA.
            ring = (datetime.now(UTC) + timedelta(seconds=15)).replace(
                second=0, microsecond=0
            ) + timedelta(minutes=1)
            local = ring.astimezone(device.tz).strftime("%H:%M")
            device.add_alarm(label=f"Bench {index}", time=local)  # one-shot: the next HH:MM
            announced.append((await _wait_for(seen, "ringing") - ring.timestamp()) * 1000)
            device.press_dismiss()
            await _wait_for(seen, "idle")
        minutes = (time.monotonic() - started) / 60
        steady_minutes = (time.monotonic() - steady_start) / 60
        requests = stats.http_requests
        tools = dict(stats.tools)
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()
        await hass.async_stop(force=True)
    await server.close()
    print(f"poll interval: {interval:g} s, run: {minutes:.2f} min, rings: {rings}")
    steady = (requests - setup_requests) / steady_minutes
    print(
        f"requests/min: {steady:.1f} after setup, {requests / minutes:.1f} including the "
        f"{setup_requests} of setup (device limit 120); tool calls: {tools}"
    )
    print(f"ringing-detection latency ms, rung on demand: {_summary(latencies)}")
    if announced:
        print(f"ringing-detection latency ms, scheduled alarms: {_summary(announced)}")


def _summary(values: list[float]) -> str:
    return (
        f"n {len(values)}, p50 {statistics.median(values):.0f}, "
        f"p95 {percentile(values, 0.95):.0f}, max {max(values):.0f}"
    )


async def _wait_for(seen: asyncio.Queue[tuple[str, float]], wanted: str) -> float:
    while True:
        state, at = await seen.get()
        if state == wanted:
            return at


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rings", nargs="?", type=int, default=20)
    parser.add_argument("--interval", type=float, default=DEFAULT_SCAN_INTERVAL)
    parser.add_argument("--scheduled", type=int, default=3, help="alarms set for a minute")
    args = parser.parse_args()
    asyncio.run(run(args.rings, args.interval, args.scheduled))


if __name__ == "__main__":
    main()
