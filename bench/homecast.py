"""Homecast backend: setup time and poll cost for 300 accessories, and write coalescing.

usage: .venv/bin/python bench/homecast.py [--homes 3] [--per-home 100] [--polls 20]

Runs a real Home Assistant core (the test harness's instance, real clock) with one Homecast
entry against the simulator on 127.0.0.1 (SSE answers and MCP sessions, no write delay).
Measures, in one run on this machine (nothing is asserted):
- setup time: from `async_setup` of the entry until its entities exist, and how many entities;
- poll cost: POLLS coordinator refreshes (get_state + both automation lists), wall time per
  poll (median / max), HTTP requests, tool calls and bytes per poll, and the share of a poll
  spent in our own code (parsing get_state and deriving entity specs);
- coalescing: 10 lights switched by 10 simultaneous HA actions (separate service calls started
  together) and by one action naming 10 lights; counts set_state calls for each.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
import statistics
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp.test_utils import TestServer
from homeassistant import loader
from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from custom_components.mcp_gateway.backends.homecast.api import parse_state
from custom_components.mcp_gateway.backends.homecast.const import (
    AUTH_TOKEN,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    KIND as HOMECAST_KIND,
)
from custom_components.mcp_gateway.backends.homecast.entities import derive_specs
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators.base import STATS
from simulators.homecast import HOMECAST, create_app

TOKEN = "hc_bench"


async def run(homes: int, per_home: int, polls: int) -> None:
    """Set up HA against the simulator and measure."""
    server = TestServer(
        create_app(homes=homes, accessories_per_home=per_home, write_delay=0, token=TOKEN),
        host="127.0.0.1",
    )
    await server.start_server()
    sim = server.app[HOMECAST]
    stats = server.app[STATS]
    accessories = sum(len(h.all_accessories()) for h in sim.homes)
    uuids = [h.uuid.lower() for h in sim.homes]
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
        entry = MockConfigEntry(
            domain=DOMAIN,
            title="Homecast bench",
            unique_id=min(uuids),
            data={
                CONF_BACKEND: HOMECAST_KIND,
                "url": str(server.make_url("/mcp")),
                CONF_AUTH_TYPE: AUTH_TOKEN,
                CONF_ACCESS_TOKEN: TOKEN,
                CONF_HOMES: uuids,
            },
        )
        entry.add_to_hass(hass)
        stats.reset()
        started = time.perf_counter()
        await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
        setup_s = time.perf_counter() - started
        setup_requests = stats.http_requests
        entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        runtime = entry.runtime_data
        coordinator = runtime.coordinator

        # --- polls
        stats.reset()
        received_before = runtime.client.stats.bytes_received
        durations: list[float] = []
        for _ in range(polls):
            begin = time.perf_counter()
            await coordinator.async_refresh()
            await hass.async_block_till_done()
            durations.append((time.perf_counter() - begin) * 1000)
        poll_requests = stats.http_requests / polls
        # Counted by our client: SSE answers are bodies the simulator's counter does not see.
        poll_bytes = (runtime.client.stats.bytes_received - received_before) / polls
        poll_tools = {name: count / polls for name, count in stats.tools.items()}
        # Our own share: parse one get_state answer and derive the specs, timed alone.
        raw = await runtime.api.async_get_state_raw()
        begin = time.perf_counter()
        for _ in range(polls):
            parse_state(raw, set(uuids))
        parse_ms = (time.perf_counter() - begin) * 1000 / polls
        begin = time.perf_counter()
        for _ in range(polls):
            derive_specs(coordinator)
        derive_ms = (time.perf_counter() - begin) * 1000 / polls

        # --- coalescing
        home = sim.homes[0]
        lights = [a for a in home.devices() if a.kind == "light"][:10]
        tail = home.uuid.replace("-", "")[-4:].lower()
        registry = er.async_get(hass)
        targets = [
            registry.async_get_entity_id(
                "light", DOMAIN, f"{entry.unique_id}_{tail}_{acc.slug[-4:]}_light"
            )
            for acc in lights
        ]
        stats.reset()
        await asyncio.gather(
            *(
                hass.services.async_call(
                    "light", "turn_on", {ATTR_ENTITY_ID: target}, blocking=True
                )
                for target in targets
            )
        )
        separate_calls = stats.tools["set_state"]
        on_after_separate = sum(bool(acc.values.get("on")) for acc in lights)
        stats.reset()
        await hass.services.async_call(
            "light", "turn_off", {ATTR_ENTITY_ID: targets}, blocking=True
        )
        single_calls = stats.tools["set_state"]
        off_after_single = sum(not acc.values.get("on") for acc in lights)

        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()
        await hass.async_stop(force=True)
    await server.close()

    print(f"homes: {homes}, accessories: {accessories} (incl. groups and virtual ones)")
    print(
        f"setup: {setup_s * 1000:.0f} ms to {len(entities)} entities, "
        f"{setup_requests} HTTP requests"
    )
    print(
        f"poll ({polls}x): median {statistics.median(durations):.1f} ms, max "
        f"{max(durations):.1f} ms; per poll {poll_requests:.1f} HTTP requests, "
        f"{poll_bytes / 1024:.1f} KiB received, tool calls {poll_tools}"
    )
    print(
        f"our share of a poll: parse get_state {parse_ms:.2f} ms + derive specs "
        f"{derive_ms:.2f} ms = {(parse_ms + derive_ms) / statistics.median(durations):.0%} "
        "of the median poll"
    )
    print(
        f"10 simultaneous HA actions -> {separate_calls} set_state call(s) "
        f"({on_after_separate}/10 lights on); one action on 10 lights -> {single_calls} "
        f"set_state call(s) ({off_after_single}/10 off)"
    )


def main() -> None:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", type=int, default=3)
    parser.add_argument("--per-home", type=int, default=100)
    parser.add_argument("--polls", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(run(args.homes, args.per_home, args.polls))


if __name__ == "__main__":
    main()
