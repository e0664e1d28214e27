"""Benchmarks of the Hubitat backend against the simulated hub, measured side by side in one run.

    .venv/bin/python -m bench.hubitat [--cycles 100] [--repeats 30] [--sizes 100 1000]

1. An idle poll cycle (nothing changed on the hub) at 100 and at 1,000 devices: bytes on the
   wire and CPU time per cycle, and their ratio (target <= 1.2). The periodic sweep (device ids,
   rules, modes, hub facts every 5 minutes) is O(devices) and is reported apart, amortised.
2. One HA action turning on 20 lights: MCP round trips (target 1) and wall time relative to a
   one-light action (target <= 1.5x).
3. Setup time of an entry with 1,000 devices of realistic size (first refresh and entity
   creation); the inventory pages shrink from 50 when the hub finds a page too large.

The simulator runs in the same process on 127.0.0.1, so CPU figures include its share.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator
import contextlib
import logging
import statistics
import time
from typing import Any
from unittest.mock import patch

# Our package first: the test plugin ships its own `custom_components` namespace.
import custom_components.mcp_gateway  # noqa: F401  # isort: skip

from aiohttp.test_utils import TestServer
from homeassistant import loader
from homeassistant.components.light import DOMAIN as LIGHT_DOMAIN
from homeassistant.const import ATTR_ENTITY_ID, SERVICE_TURN_OFF, SERVICE_TURN_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_TOKEN,
    CONF_URL,
    KIND as HUBITAT_KIND,
    SWEEP_INTERVAL,
)
from custom_components.mcp_gateway.backends.hubitat.coordinator import (
    _SECOND_COMPLETE as SECOND_COMPLETE,
)
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators.base import STATS
from simulators.hubitat import HUB, create_app, mcp_path

TOKEN = "sim-token"


@contextlib.asynccontextmanager
async def hub_entry(
    hass: HomeAssistant, devices: int
) -> AsyncIterator[tuple[Any, HubitatRuntime, float, float]]:
    """One Hubitat entry on a fresh simulated hub (unloaded afterwards).

    Yields the app, the runtime, the setup time and the KB the setup received.
    """
    # Devices as real drivers report them (2-4 KB for thermostats, RGBW bulbs, Z-Wave devices).
    app = create_app(
        devices=devices, hub_id=f"bench-{devices}", command_delay=0, realistic_devices=True
    )
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        if True:
            entry = MockConfigEntry(
                domain=DOMAIN,
                title="Bench hub",
                unique_id=app[HUB].hub_id,
                data={
                    CONF_BACKEND: HUBITAT_KIND,
                    CONF_URL: str(server.make_url(mcp_path())),
                    CONF_TOKEN: TOKEN,
                },
            )
            entry.add_to_hass(hass)
            start = time.perf_counter()
            assert await hass.config_entries.async_setup(entry.entry_id)
            await hass.async_block_till_done()
            setup_s = time.perf_counter() - start
            setup_kb = entry.runtime_data.client.stats.bytes_received / 1000
            yield app, entry.runtime_data, setup_s, setup_kb
            await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_block_till_done()
    finally:
        await server.close()


async def sweeping_refresh(runtime: HubitatRuntime) -> None:
    """A poll made when the coordinator's own schedule says a sweep is due.

    The wall clock (which the schedule reads) is moved a sweep interval on for that poll
    alone; the loop's clock and the monotonic bookmark timing stay real.
    """
    later = dt_util.utcnow() + SWEEP_INTERVAL
    with patch.object(dt_util, "utcnow", lambda: later):
        await runtime.coordinator.async_refresh()


async def idle_cycles(
    hass: HomeAssistant, sizes: tuple[int, ...], cycles: int
) -> list[dict[str, float]]:
    """Bytes and CPU of idle polls (and of one sweep) per hub size.

    Every hub is loaded at once and their polls alternate, so the sizes are measured side by
    side under the same heap and garbage-collector conditions.
    """
    async with contextlib.AsyncExitStack() as stack:
        hubs = [await stack.enter_async_context(hub_entry(hass, size)) for size in sizes]
        runtimes = [runtime for _, runtime, _, _ in hubs]
        for runtime in runtimes:
            await runtime.coordinator.async_refresh()  # warm up: connections, caches
        # Idle means the newest activity's second is long over (real polls are 15 s apart):
        # a listing made after it completes the bookmark, later ones list nothing.
        await asyncio.sleep(SECOND_COMPLETE + 0.1)
        for runtime in runtimes:
            await runtime.coordinator.async_refresh()
        cpu = [0.0] * len(sizes)
        wire = [
            runtime.client.stats.bytes_sent + runtime.client.stats.bytes_received
            for runtime in runtimes
        ]
        requests = [runtime.client.stats.requests for runtime in runtimes]
        for _ in range(cycles):
            for index, runtime in enumerate(runtimes):
                start = time.process_time()
                await runtime.coordinator.async_refresh()
                cpu[index] += time.process_time() - start
        results = []
        for index, (_, runtime, setup_s, setup_kb) in enumerate(hubs):
            coordinator = runtime.coordinator
            stats = runtime.client.stats
            assert coordinator.last_update_success
            bytes_per = (stats.bytes_sent + stats.bytes_received - wire[index]) / cycles
            requests_per = (stats.requests - requests[index]) / cycles
            sweep_bytes = stats.bytes_sent + stats.bytes_received
            sweep_cpu = time.process_time()
            await sweeping_refresh(runtime)
            sweep_cpu = time.process_time() - sweep_cpu
            sweep_bytes = stats.bytes_sent + stats.bytes_received - sweep_bytes
            registry = er.async_get(hass)
            entities = len(er.async_entries_for_config_entry(registry, runtime.entry.entry_id))
            results.append(
                {
                    "bytes": bytes_per,
                    "cpu_ms": cpu[index] / cycles * 1000,
                    "requests": requests_per,
                    "sweep_bytes": sweep_bytes,
                    "sweep_cpu_ms": sweep_cpu * 1000,
                    "setup_s": setup_s,
                    "entities": entities,
                    "page": runtime.api.page_limit,
                    "inventory_kb": setup_kb,
                }
            )
        return results


async def light_actions(hass: HomeAssistant, repeats: int) -> dict[str, float]:
    """Round trips and wall time of a 20-light action against a 1-light action."""
    async with hub_entry(hass, 40) as (app, runtime, _, _):
        hub = app[HUB]
        dimmers = [hub.pair_device("dimmer", f"Bench Dimmer {n}", "Den") for n in range(20)]
        await sweeping_refresh(runtime)
        await hass.async_block_till_done()
        registry = er.async_get(hass)
        found = [
            registry.async_get_entity_id("light", DOMAIN, f"{hub.hub_id}_{d.id}_light")
            for d in dimmers
        ]
        lights = [entity_id for entity_id in found if entity_id is not None]
        assert len(lights) == len(dimmers), "the paired dimmers did not become lights"
        stats = app[STATS]

        async def action(entities: list[str], service: str) -> tuple[float, int]:
            stats.reset()
            start = time.perf_counter()
            await hass.services.async_call(
                LIGHT_DOMAIN, service, {ATTR_ENTITY_ID: entities}, blocking=True
            )
            return time.perf_counter() - start, stats.tools["hub_manage_devices"]

        one: list[float] = []
        twenty: list[float] = []
        trips_one: list[int] = []
        trips_twenty: list[int] = []
        for _ in range(repeats):
            # Side by side, alternating, so drift affects both alike.
            for service in (SERVICE_TURN_ON, SERVICE_TURN_OFF):
                wall, trips = await action(lights[:1], service)
                one.append(wall)
                trips_one.append(trips)
                wall, trips = await action(lights, service)
                twenty.append(wall)
                trips_twenty.append(trips)
        assert all(d.value("switch") == "off" for d in dimmers)
        return {
            "one_ms": statistics.median(one) * 1000,
            "twenty_ms": statistics.median(twenty) * 1000,
            "trips_one": max(trips_one),
            "trips_twenty": max(trips_twenty),
        }


async def run(cycles: int, repeats: int, sizes: tuple[int, int] = (100, 1000)) -> None:
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # let HA load our integration
        small, large = await idle_cycles(hass, sizes, cycles)
        actions = await light_actions(hass, repeats)
        await hass.async_stop(force=True)

    def ratio(key: str) -> float:
        return large[key] / small[key] if small[key] else float("inf")

    print(f"1. Idle poll cycle (average of {cycles} cycles, the two hubs alternating)")
    names = tuple(f"{size:,} devices" for size in sizes)
    print(f"   {'':24}{names[0]:>14}{names[1]:>16}{'ratio':>8}")
    for label, key, digits in (
        ("bytes per cycle", "bytes", 0),
        ("CPU ms per cycle", "cpu_ms", 2),
        ("MCP requests per cycle", "requests", 1),
    ):
        row = f"{small[key]:>14.{digits}f}{large[key]:>16.{digits}f}{ratio(key):>8.2f}"
        print(f"   {label:24}{row}")
    print(
        f"   sweep (every 5 min)     {small['sweep_bytes']:>14.0f}{large['sweep_bytes']:>16.0f}"
        f"{large['sweep_bytes'] / small['sweep_bytes']:>8.2f}  bytes"
    )
    print(
        f"   sweep CPU ms            {small['sweep_cpu_ms']:>14.2f}{large['sweep_cpu_ms']:>16.2f}"
    )
    verdict = "ok" if max(ratio("bytes"), ratio("cpu_ms")) <= 1.2 else "OVER 1.2"
    print(f"   target ratio <= 1.2: {verdict}")
    print("2. One HA action on 20 lights vs on 1 light (medians)")
    print(
        f"   MCP round trips: 1 light {actions['trips_one']}, 20 lights {actions['trips_twenty']}"
        f" ({'ok' if actions['trips_twenty'] == 1 else 'NOT 1'})"
    )
    wall_ratio = actions["twenty_ms"] / actions["one_ms"]
    print(
        f"   wall time: 1 light {actions['one_ms']:.1f} ms,"
        f" 20 lights {actions['twenty_ms']:.1f} ms,"
        f" ratio {wall_ratio:.2f} ({'ok' if wall_ratio <= 1.5 else 'OVER 1.5'})"
    )
    print("3. Setup of an entry (devices of realistic size, 2-4 KB for the large kinds)")
    for label, result in zip(names, (small, large), strict=True):
        print(
            f"   {label}: {result['setup_s']:.2f} s ({result['entities']} entities;"
            f" inventory {result['inventory_kb']:.0f} KB in pages of {result['page']:.0f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=100, help="idle polls measured per size")
    parser.add_argument("--repeats", type=int, default=30, help="on/off pairs per action size")
    parser.add_argument(
        "--sizes", type=int, nargs=2, default=(100, 1000), help="the two hubs' device counts"
    )
    options = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    small, large = options.sizes
    asyncio.run(run(options.cycles, options.repeats, (small, large)))


if __name__ == "__main__":
    main()
