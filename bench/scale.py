"""Benchmark: how the gateway's costs grow with entities, backend entries and hub size.

    .venv/bin/python -m bench.scale [--rounds 200] [--soak 60] [--full-soak] [--floor-slice 50]

Prints the scale table of docs/PERFORMANCE.md, each row measured in one Home Assistant (in this
process, simulators on 127.0.0.1) and, where two things are compared, interleaved (A, B, A, B,
…) so that the load of a shared machine weighs on both alike. The machine load (/proc/loadavg)
is printed first and last.

1. `get_state` of one entity with the gateway exposing ~100, ~1,000 and ~5,000 entities (one
   Hubitat hub of each size is loaded; the gateway exposes one of them per call, in turn).
2. `tools/list` bytes with one entry of each backend, then 3 Hubitat + 2 Homecast + 3 Robine
   Wake entries; every backend tool is checked to be reachable through the listed tools.
3. The event loop while a 5,000-device hub is added: the longest stall and the time until
   every entity exists; memory per 1,000 devices (RSS growth, and where tracemalloc sees it
   for a 1,000-device hub: our package, Home Assistant, the rest). Beside it the floor
   (`bench/floor.py`): the same devices and entities as plain HA entities, then as HA's
   `CoordinatorEntity`s of one `DataUpdateCoordinator` (as most polling integrations write
   them), which shows how much of the loop's stall (CPython's full garbage collections) any
   integration adding them brings; then our hub once more. For each: the longest stall, the
   stall outside full collections, each full collection, a full collection of the heap the
   setup left, and the tracked objects before and after (per entity).
   Each starts on a heap without the others: every one is removed, and the registries' memory
   of its removed entities and devices dropped, before the next is added. What differs: the
   first hub is added to a fresh heap, the floors and the second hub to one that has held and
   freed the hubs before them (the second hub is there to show what that changes); the floors
   have no backend data or hub connection, and HA creates their devices from the entities'
   DeviceInfo (ours registers them first, then links them to their hub).
4. Polling that hub while ~100 device attributes change per second: loop lag p99 and max, and
   memory before and after (a bounded soak by default; `--full-soak` runs the full hour).
5. Tool results: bytes of a 1,000-entity `get_state` (now vs text + structuredContent), and
   the paging estimate's cost against encoding the page.
6. `set_state` turning 20 lights on and off against one light (medians, interleaved), with the
   hub round trips per call.
7. (`--sections 5`) A 1-entity `get_state` every 10 ms, timed from when it was due (so its wait
   for the event loop counts, as a request's would): 3 s before a 5,000-device hub is added,
   while it is added (its first sweep: inventory, entities derived and registered), 3 s after.
"""

from __future__ import annotations

import argparse
from array import array
import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
import contextlib
import functools
import gc
import json
import logging
import os
from pathlib import Path
import statistics
import sys
import time
import tracemalloc
from typing import Any, Final

# Our package first: the test plugin ships its own `custom_components` namespace.
import custom_components.mcp_gateway  # isort: skip

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestServer
from homeassistant import loader
from homeassistant.auth.models import User
from homeassistant.const import CONF_SCAN_INTERVAL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_test_home_assistant,
)

from bench import hubitat_simulator, load
from bench.floor import DOMAIN as FLOOR, Layout, add_floor, describe, forget_removed, layout_of
from custom_components.mcp_gateway.backends.homecast.const import (
    AUTH_TOKEN,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    KIND as HOMECAST_KIND,
)
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_TOKEN,
    CONF_URL,
    KIND as HUBITAT_KIND,
)
from custom_components.mcp_gateway.backends.robine_wake.const import (
    CONF_URL as ROBINE_URL,
    KIND as ROBINE_WAKE_KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.gateway.catalog.store import ExposedBackend, GatewayCatalog
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools import get_state
from custom_components.mcp_gateway.mcp.server import RequestContext
from custom_components.mcp_gateway.mcp.types import CallToolResult, Tool
from simulators.base import STATS, SimClock
from simulators.homecast import HOMECAST, create_app as homecast_app
from simulators.hubitat import HUB, create_app as hubitat_app, mcp_path
from simulators.robine_wake import create_app as robine_app

PACKAGE = str(Path(custom_components.mcp_gateway.__file__).parent)
# Entities per simulated Hubitat device is ~2.3: these give ~100, ~1,000 and ~5,000.
STATE_SIZES = (44, 430, 2150)
BIG_HUB = 5000


def tracked_objects() -> int:
    """Objects the garbage collector tracks (what a full collection walks), after one."""
    gc.collect()
    return len(gc.get_objects())


def rss_mib() -> float:
    """Resident memory of this process."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class LagHistogram:
    """Loop lags in 0.1 ms bins, and the largest exactly: memory that stays the same however
    long the soak (a list of every tick's lag grew by ~46 MiB an hour and was read as a leak).
    """

    BIN_MS: Final = 0.1
    BINS: Final = 100_000  # up to 10 s; a longer lag counts in the last bin (its max is exact)

    def __init__(self) -> None:
        self.counts = array("l", bytes(8 * self.BINS))
        self.largest = 0.0

    def add(self, lag: float) -> None:
        ms = lag * 1000
        self.counts[min(self.BINS - 1, int(ms / self.BIN_MS))] += 1
        self.largest = max(self.largest, ms)

    def merged(self, other: LagHistogram) -> LagHistogram:
        out = LagHistogram()
        out.counts = array("l", (a + b for a, b in zip(self.counts, other.counts, strict=True)))
        out.largest = max(self.largest, other.largest)
        return out

    def pct(self, q: float) -> float:
        """The q-quantile in ms (upper edge of its bin); q = 1 is the exact largest."""
        total = sum(self.counts)
        if q >= 1.0 or not total:
            return self.largest
        rank, seen = q * (total - 1), 0
        for index, count in enumerate(self.counts):
            seen += count
            if seen > rank:
                return min(self.largest, (index + 1) * self.BIN_MS)
        return self.largest


class LoopMonitor:
    """How late the loop wakes a task that asks to sleep `tick` seconds: its stalls.

    CPython's full garbage collections (whole heap, every object of Home Assistant) stall
    the loop too, in whatever code allocates at that moment; their time is counted apart so
    that what remains is the stall of the code itself.
    """

    def __init__(self, tick: float = 0.005) -> None:
        self.tick = tick
        self.lags = LagHistogram()
        self.lags_outside_gc = LagHistogram()
        self.full_collections: list[float] = []
        self._task: asyncio.Task[None] | None = None
        self._gc_started = 0.0
        self._gc_spent = 0.0
        self._tick_started = 0.0

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
            return
        spent = time.perf_counter() - self._gc_started
        self._gc_spent += spent
        if info["generation"] == 2:
            self.full_collections.append(spent)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(max(0.0, self._tick_started + self.tick - time.perf_counter()))
            self._record()

    def _record(self) -> None:
        """The lag of the tick that began at `_tick_started`; the next begins now."""
        now = time.perf_counter()
        lag = max(0.0, now - self._tick_started - self.tick)
        self.lags.add(lag)
        self.lags_outside_gc.add(max(0.0, lag - self._gc_spent))
        self._tick_started, self._gc_spent = now, 0.0

    def __enter__(self) -> LoopMonitor:
        # The first tick begins here, not when the task first runs: a setup that holds the
        # loop from the start until its end would otherwise never be seen.
        self._tick_started, self._gc_spent = time.perf_counter(), 0.0
        gc.callbacks.append(self._on_gc)
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        gc.callbacks.remove(self._on_gc)
        # A tick overdue when watching ends (the loop held until then) counts too.
        if time.perf_counter() - self._tick_started > self.tick:
            self._record()

    def pct(self, q: float, lags: LagHistogram | None = None) -> float:
        return (self.lags if lags is None else lags).pct(q)


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[TestServer]:
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        yield server
    finally:
        await server.close()


async def add_entry(
    hass: HomeAssistant, title: str, unique_id: str, data: dict[str, Any], **options: Any
) -> MockConfigEntry:
    """Set up an entry and wait until every entity exists (slices included)."""
    entry = MockConfigEntry(
        domain=DOMAIN, title=title, unique_id=unique_id, data=data, options=options
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id), title
    await hass.async_block_till_done(wait_background_tasks=True)
    return entry


def first_text(result: CallToolResult) -> str:
    """The text of a result's first part: the gateway's own results are one text part."""
    part = result["content"][0]
    assert part["type"] == "text", part
    return part["text"]


def hubitat_data(server: TestServer) -> dict[str, Any]:
    return {
        CONF_BACKEND: HUBITAT_KIND,
        CONF_URL: str(server.make_url(mcp_path("42"))),
        CONF_TOKEN: "sim-token",
    }


def entity_count(hass: HomeAssistant, entry: MockConfigEntry) -> int:
    return len(er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id))


def withheld(results: dict[str, Any]) -> str:
    """The hub row's note of entities HA's cap left waiting (none on HA 2025.4)."""
    count = results.get("withheld", 0)
    return f"; {count:,} more wait under HA's cap of enabled entities per entry" if count else ""


def ctx(user: User) -> RequestContext:
    return RequestContext("2025-11-25", "bench", user, 1)


async def timed(call: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


def only_exposing(hass: HomeAssistant) -> list[str | None]:
    """Make the gateway expose one entry (by id) or, with None, all: returns the switch."""
    catalog = GatewayCatalog.get(hass)
    every = catalog.exposed_backends
    chosen: list[str | None] = [None]

    def exposed() -> list[ExposedBackend]:
        return [b for b in every() if chosen[0] is None or b.entry.entry_id == chosen[0]]

    catalog.exposed_backends = exposed  # type: ignore[method-assign]
    return chosen


# --- 1 ------------------------------------------------------------------------------------


async def state_reads(hass: HomeAssistant, user: User, rounds: int) -> list[tuple[int, float]]:
    """Median get_state time of one entity per exposed hub size, sizes interleaved."""
    handler = GatewayHandler(hass)
    async with contextlib.AsyncExitStack() as stack:
        hubs = []
        for n, devices in enumerate(STATE_SIZES):
            server = await stack.enter_async_context(
                serve(hubitat_app(devices=devices, hub_id=f"state-{n}", command_delay=0))
            )
            entry = await add_entry(hass, f"State {n}", f"state-{n}", hubitat_data(server))
            some = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
            enabled = sorted(e.entity_id for e in some if e.disabled_by is None)
            target = enabled[len(enabled) // 2]
            answer = await handler.call_tool(ctx(user), "get_state", {"entity_ids": [target]})
            assert json.loads(first_text(answer))["count"] == 1, (n, target, answer)
            hubs.append((entry, target, entity_count(hass, entry)))
        chosen = only_exposing(hass)
        times: list[list[float]] = [[] for _ in hubs]
        for round_ in range(rounds + 10):
            for index, (entry, target, _) in enumerate(hubs):
                chosen[0] = entry.entry_id
                spent = await timed(
                    functools.partial(
                        handler.call_tool, ctx(user), "get_state", {"entity_ids": [target]}
                    )
                )
                if round_ >= 10:  # warm-up rounds
                    times[index].append(spent)
        chosen[0] = None
        for entry, _, _ in hubs:
            await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
    return [
        (count, statistics.median(spent) * 1000)
        for (_, _, count), spent in zip(hubs, times, strict=True)
    ]


# --- 2 ------------------------------------------------------------------------------------


def list_bytes(tools: list[Tool]) -> int:
    """The tools/list response as the gateway sends it (compact JSON-RPC)."""
    body = {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}}
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


async def tools_list(hass: HomeAssistant, user: User) -> dict[str, Any]:
    """tools/list bytes with 1+1+1 and 3+2+3 entries; every backend tool still reachable."""
    handler = GatewayHandler(hass)
    clock = SimClock()
    results: dict[str, Any] = {}
    async with contextlib.AsyncExitStack() as stack:
        hubitats = [
            await stack.enter_async_context(
                serve(hubitat_app(devices=24, hub_id=f"list-{n}", command_delay=0))
            )
            for n in range(3)
        ]
        homecasts = [
            await stack.enter_async_context(serve(homecast_app(seed=n + 1, write_delay=0)))
            for n in range(2)
        ]
        robines = [
            await stack.enter_async_context(
                serve(robine_app(clock=clock, command_delay=0, device_id=f"rw-00000000000{n}"))
            )
            for n in range(3)
        ]
        plan: list[tuple[str, str, dict[str, Any]]] = []
        for n, server in enumerate(hubitats):
            plan.append((f"Hub {n + 1}", server.app[HUB].hub_id, hubitat_data(server)))
        for n, server in enumerate(homecasts):
            homes = [home.uuid.lower() for home in server.app[HOMECAST].homes]
            data = {
                CONF_BACKEND: HOMECAST_KIND,
                "url": str(server.make_url("/mcp")),
                CONF_AUTH_TYPE: AUTH_TOKEN,
                CONF_ACCESS_TOKEN: "hc_test_token",
                CONF_HOMES: homes,
            }
            plan.append((f"Homecast {n + 1}", min(homes), data))
        for n, server in enumerate(robines):
            data = {CONF_BACKEND: ROBINE_WAKE_KIND, ROBINE_URL: str(server.make_url("/mcp"))}
            plan.append((f"Clock {n + 1}", f"rw-00000000000{n}", data))
        first = [plan[0], plan[3], plan[5]]
        rest = [item for item in plan if item not in first]
        entries = [await add_entry(hass, *item) for item in first]
        results["one_each"] = list_bytes(await handler.list_tools(ctx(user)))
        entries += [await add_entry(hass, *item) for item in rest]
        tools = await handler.list_tools(ctx(user))
        results["eight"] = list_bytes(tools)
        results["listed"] = [tool["name"] for tool in tools]
        # Every tool of every entry, through what tools/list shows.
        reachable = missing = 0
        listed = {tool["name"] for tool in tools}
        for entry in entries:
            runtime = entry.runtime_data
            own = {tool["name"] for tool in await runtime.async_list_tools()}
            backend = next(
                b
                for b in GatewayCatalog.get(hass).exposed_backends()
                if b.entry.entry_id == entry.entry_id
            )
            name = backend.kind if backend.kind in listed else backend.gateway_name
            args: dict[str, Any] = {"entry": backend.gateway_name} if name == backend.kind else {}
            result = await handler.call_tool(ctx(user), name, args)
            catalog = json.loads(first_text(result))
            found = {tool["name"] for tool in catalog.get("tools", [])}
            reachable += len(own & found)
            missing += len(own - found)
        results["reachable"], results["missing"] = reachable, missing
        for entry in entries:
            await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
    return results


# --- 3, 4 ---------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def external_hub(devices: int, seed: int) -> AsyncIterator[tuple[str, str]]:
    """A simulated hub in its own process; yields its base URL and hub id (the seed's,
    whatever the size)."""
    hub_id = hubitat_app(devices=1, seed=seed)[HUB].hub_id
    flags = ("--devices", str(devices), "--command-delay", "0", "--seed", str(seed))
    # A 5,000-device hub takes a while to generate.
    async with hubitat_simulator(*flags, seconds=60, pause=0.1) as port:
        yield f"http://127.0.0.1:{port}", hub_id


def external_data(base: str) -> dict[str, Any]:
    return {
        CONF_BACKEND: HUBITAT_KIND,
        CONF_URL: f"{base}{mcp_path('42')}",
        CONF_TOKEN: "sim-token",
    }


async def big_hub(hass: HomeAssistant, soak: float) -> dict[str, Any]:
    """Add a 5,000-device hub watching the loop; then poll it under changes (the soak)."""
    results: dict[str, Any] = {}
    async with external_hub(BIG_HUB, 1) as (base, hub_id), aiohttp.ClientSession() as session:
        objects = tracked_objects()
        before = rss_mib()
        entry, added = await watched_setup(
            hass,
            lambda: add_entry(
                hass, "Big hub", hub_id, external_data(base), **{CONF_SCAN_INTERVAL: 5}
            ),
            objects,
        )
        results |= added
        results["layout"] = layout_of(hass, entry.entry_id)
        results["mib_per_1000"] = (rss_mib() - before) / (BIG_HUB / 1000)

        async def churn() -> None:
            # ~100 changes per second, as a busy 5,000-device home might make.
            while True:
                async with session.post(
                    f"{base}/_sim/hubitat/activity", json={"count": 10}
                ) as reply:
                    reply.raise_for_status()
                await asyncio.sleep(0.1)

        async def soak_for(seconds: float) -> LoopMonitor:
            with LoopMonitor() as monitor:
                await asyncio.sleep(seconds)
            return monitor

        changer = asyncio.get_running_loop().create_task(churn())
        polls = entry.runtime_data.client.stats.requests
        # The first part settles caches; growth is measured over the rest.
        first = await soak_for(min(30.0, soak / 3))
        gc.collect()
        soak_start = rss_mib()
        # RSS alone cannot tell a leak from memory the allocator keeps: the live Python blocks
        # and the objects the collector tracks can.
        blocks_start, objects_start = sys.getallocatedblocks(), len(gc.get_objects())
        rest = await soak_for(soak - min(30.0, soak / 3))
        changer.cancel()
        gc.collect()
        lags = LoopMonitor()
        lags.lags = first.lags.merged(rest.lags)
        lags.lags_outside_gc = first.lags_outside_gc.merged(rest.lags_outside_gc)
        results["soak_gc_ms"] = [
            round(spent * 1000) for spent in first.full_collections + rest.full_collections
        ]
        results["lag_code_max_ms"] = lags.pct(1.0, lags.lags_outside_gc)
        results["soak_s"] = soak
        results["requests"] = entry.runtime_data.client.stats.requests - polls
        results["lag_p99_ms"] = lags.pct(0.99)
        results["lag_max_ms"] = lags.pct(1.0)
        results["soak_growth_mib"] = rss_mib() - soak_start
        results["soak_blocks"] = sys.getallocatedblocks() - blocks_start
        results["soak_objects"] = len(gc.get_objects()) - objects_start
        await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
        forget_removed(hass)
    return results


async def watched_setup(
    hass: HomeAssistant, add: Callable[[], Awaitable[MockConfigEntry]], objects: int
) -> tuple[MockConfigEntry, dict[str, Any]]:
    """Set up an entry watching the loop: its stalls, full collections and tracked objects.

    `objects` is the count before (taken by the caller before anything else it measures).
    """
    start = time.perf_counter()
    with LoopMonitor() as monitor:
        entry = await add()
    results: dict[str, Any] = {"setup_s": time.perf_counter() - start}
    results["stall_max_ms"] = monitor.pct(1.0)
    results["stall_p99_ms"] = monitor.pct(0.99)
    results["stall_code_ms"] = monitor.pct(1.0, monitor.lags_outside_gc)
    results["gc_ms"] = [round(spent * 1000) for spent in monitor.full_collections]
    results["entities"] = entity_count(hass, entry)
    # HA 2026.x's cap on an entry's enabled entities: what our publisher holds back (the floor
    # has no publisher; it is built from what ours registered).
    publisher = getattr(getattr(entry, "runtime_data", None), "publisher", None)
    results["withheld"] = publisher.withheld if publisher is not None else 0
    results["objects_before"] = objects
    results["objects_after"] = tracked_objects()
    # What the next full collection costs at least: one of the heap as the setup left it (the
    # collections during setup fall where the collector's thresholds put them, on smaller
    # heaps; their number and sizes vary).
    start = time.perf_counter()
    gc.collect()
    results["gc_after_ms"] = (time.perf_counter() - start) * 1000
    results["objects_per_entity"] = (results["objects_after"] - objects) / results["entities"]
    return entry, results


class Reader:
    """Reads one entity every `every` seconds, as an assistant's calls arrive: each read's
    latency counts from when it was due (its sleep's end) to its answer, so the time it waited
    for the event loop is in it, as a request's would be."""

    def __init__(self, handler: GatewayHandler, user: User, entity_id: str) -> None:
        self._call = functools.partial(
            handler.call_tool, ctx(user), "get_state", {"entity_ids": [entity_id]}
        )
        self.latencies: list[float] = []
        # The read itself, without the wait for the loop.
        self.own: list[float] = []

    async def run(self, every: float = 0.01) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + every
            await asyncio.sleep(every)
            began = loop.time()
            answer = await self._call()
            assert json.loads(first_text(answer))["count"] == 1, answer
            self.latencies.append(loop.time() - due)
            self.own.append(loop.time() - began)

    @contextlib.asynccontextmanager
    async def reading(self) -> AsyncIterator[Reader]:
        task = asyncio.get_running_loop().create_task(self.run())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def ms(self, q: float, *, own: bool = False) -> float:
        ordered = sorted(self.own if own else self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def reads_during_sweep(hass: HomeAssistant, user: User) -> dict[str, Any]:
    """A 1-entity get_state of a small hub's entity, every 10 ms: for 3 s before, while a
    5,000-device hub is added (its first sweep: inventory, entities derived and registered),
    and for 3 s after."""
    handler = GatewayHandler(hass)
    async with (
        serve(hubitat_app(devices=44, hub_id="reader", command_delay=0)) as small,
        external_hub(BIG_HUB, 1) as (base, hub_id),
    ):
        entry = await add_entry(hass, "Reader", "reader", hubitat_data(small))
        # One the read returns (an entity id an earlier section's hub took is suffixed).
        listed = await handler.call_tool(ctx(user), "get_state", {"backend": "Reader"})
        target = json.loads(first_text(listed))["entities"][0]["entity_id"]
        before, during, after = (Reader(handler, user, target) for _ in range(3))
        async with before.reading():
            await asyncio.sleep(3)
        began = time.perf_counter()
        async with during.reading():
            big = await add_entry(hass, "Big hub", hub_id, external_data(base))
        added_s = time.perf_counter() - began
        async with after.reading():
            await asyncio.sleep(3)
        results = {
            "added_s": added_s,
            "entities": entity_count(hass, big),
            "before": before,
            "during": during,
            "after": after,
        }
        for each in (big, entry):
            await hass.config_entries.async_remove(each.entry_id)
        await hass.async_block_till_done()
        forget_removed(hass)
    return results


async def hub_again(hass: HomeAssistant) -> dict[str, Any]:
    """The 5,000-device hub added once more after the floors, on a heap that has held and
    freed as much as theirs had (the first run's heap was fresh), then removed."""
    async with external_hub(BIG_HUB, 1) as (base, hub_id):
        objects = tracked_objects()
        entry, results = await watched_setup(
            hass, lambda: add_entry(hass, "Big hub", hub_id, external_data(base)), objects
        )
        await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
        forget_removed(hass)
    return results


async def floor(
    hass: HomeAssistant, layout: Layout, slice_size: int, *, coordinated: bool = False
) -> dict[str, Any]:
    """The same devices and entities as plain HA entities (bench/floor.py), watched alike."""
    _, results = await watched_setup(
        hass,
        lambda: add_floor(hass, layout, slice_size, coordinated=coordinated),
        tracked_objects(),
    )
    results["layout"] = describe(layout)
    for entry in hass.config_entries.async_entries(FLOOR):
        await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()
    forget_removed(hass)
    return results


async def memory_split(hass: HomeAssistant) -> dict[str, float]:
    """Where a 1,000-device hub's memory goes, by tracemalloc (MiB): ours, HA, the rest."""
    async with external_hub(1000, 2) as (base, hub_id):
        gc.collect()
        tracemalloc.start()
        base_snapshot = tracemalloc.take_snapshot()
        entry = await add_entry(hass, "Mem hub", hub_id, external_data(base))
        gc.collect()
        after = tracemalloc.take_snapshot()
        tracemalloc.stop()
        split: dict[str, float] = {"ours": 0.0, "home assistant": 0.0, "other": 0.0}
        for stat in after.compare_to(base_snapshot, "filename"):
            name = stat.traceback[0].filename
            if name.startswith(PACKAGE):
                key = "ours"
                own = name.removeprefix(PACKAGE + "/")
                split[own] = split.get(own, 0.0) + stat.size_diff / 2**20
            elif "/homeassistant/" in name:
                key = "home assistant"
            else:
                key = "other"
            split[key] += stat.size_diff / 2**20
        await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
    return split


# --- 5, 6 ---------------------------------------------------------------------------------


async def results_and_lights(hass: HomeAssistant, user: User, repeats: int) -> dict[str, Any]:
    """Result encoding of a 1,000-entity page, and 20 lights against one."""
    out: dict[str, Any] = {}
    handler = GatewayHandler(hass)
    app = hubitat_app(devices=440, hub_id="lights", command_delay=0)
    async with serve(app) as server:
        entry = await add_entry(hass, "Lights hub", "lights", hubitat_data(server))
        result = await handler.call_tool(ctx(user), "get_state", {"limit": 1000})
        text = first_text(result)
        data = json.loads(text)
        old = {
            "content": [{"type": "text", "text": json.dumps(data, ensure_ascii=False)}],
            "structuredContent": data,
            "isError": False,
        }
        out["page_count"] = data["count"]
        out["bytes_now"] = len(json.dumps(result, separators=(",", ":")).encode())
        out["bytes_before"] = len(json.dumps(old, separators=(",", ":")).encode())
        items = data["entities"]
        estimate = encode = 0.0
        for _ in range(20):
            start = time.perf_counter()
            # What get_state spends on it: one item in SIZE_SAMPLE measured.
            sample = get_state.SIZE_SAMPLE
            sum(get_state._estimated_size(item) for item in items[::sample])
            estimate += time.perf_counter() - start
            start = time.perf_counter()
            json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            encode += time.perf_counter() - start
        out["estimate_ms"], out["encode_ms"] = estimate / 20 * 1000, encode / 20 * 1000

        lights = sorted(
            e.entity_id
            for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
            if e.entity_id.startswith("light.")
        )[:20]
        assert len(lights) == 20, len(lights)
        stats = app[STATS]

        def updates(ids: list[str], state: str) -> dict[str, Any]:
            return {"updates": [{"entity_id": eid, "state": state} for eid in ids]}

        one: list[float] = []
        twenty: list[float] = []
        trips = 0
        for round_ in range(repeats + 3):
            for state in ("on", "off"):
                spent_one = await timed(
                    functools.partial(
                        handler.call_tool, ctx(user), "set_state", updates(lights[:1], state)
                    )
                )
                stats.reset()
                spent_twenty = await timed(
                    functools.partial(
                        handler.call_tool, ctx(user), "set_state", updates(lights, state)
                    )
                )
                trips = max(trips, stats.tools["hub_manage_devices"])
                if round_ >= 3:
                    one.append(spent_one)
                    twenty.append(spent_twenty)
        out["one_ms"] = statistics.median(one) * 1000
        out["twenty_ms"] = statistics.median(twenty) * 1000
        out["trips"] = trips
        await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
    return out


def _top_files(split: dict[str, float]) -> str:
    """Our three files holding the most, e.g. `backends/hubitat/api.py 1.2`."""
    files = sorted(
        ((size, name) for name, size in split.items() if name.endswith(".py")), reverse=True
    )
    return ", ".join(f"{name} {size:.1f}" for size, name in files[:3])


async def main(options: argparse.Namespace) -> None:
    print(f"machine load at start: {load()}")
    soak = 3600.0 if options.full_soak else options.soak
    sections = set(options.sections)
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # let HA load our integration
        user = await hass.auth.async_create_user("bench", group_ids=["system-admin"])
        print("| what | measured | goal |")
        print("|---|---|---|")
        if "1" in sections:
            reads = await state_reads(hass, user, options.rounds)
            counts = " → ".join(f"{count:,}" for count, _ in reads)
            times = " → ".join(f"{ms * 1000:.0f}" for _, ms in reads)
            ratio = reads[-1][1] / reads[0][1]
            print(
                f"| get_state of one entity, {counts} entities | {times} µs (median,"
                f" interleaved, in-process call); {ratio:.2f}x | ≤ 1.5x |"
            )
        if "2" in sections:
            listing = await tools_list(hass, user)
            print(
                "| tools/list, 1 entry of each backend → 3 Hubitat + 2 Homecast + 3 Robine"
                f" Wake | {listing['one_each']:,} → {listing['eight']:,} bytes;"
                f" {listing['reachable']} backend tools reachable, {listing['missing']} not"
                " | ≤ 12,288 bytes, all reachable |"
            )
        if "3" in sections:
            hub = await big_hub(hass, soak)
            base = await floor(hass, hub["layout"], options.floor_slice)
            polled = await floor(hass, hub["layout"], options.floor_slice, coordinated=True)
            again = await hub_again(hass)
            print(
                f"| HA event loop while a {BIG_HUB:,}-device hub is added ({hub['entities']:,}"
                f" entities{withheld(hub)}, {hub['setup_s']:.1f} s) | longest stall"
                f" {hub['stall_max_ms']:.0f} ms, p99 {hub['stall_p99_ms']:.0f} ms; outside"
                f" CPython's full garbage collections {hub['stall_code_ms']:.0f} ms (the"
                f" collections: {hub['gc_ms']} ms); tracked objects {hub['objects_before']:,}"
                f" → {hub['objects_after']:,}, {hub['objects_per_entity']:.1f} per entity, a full"
                f" collection of them {hub['gc_after_ms']:.0f} ms | ≤ 250 ms |"
            )
            how = (
                f"slices of {options.floor_slice}"
                if options.floor_slice > 0
                else "one async_add_entities per platform"
            )
            print(
                f"| floor: the same as plain HA entities ({base['layout']}; {how};"
                f" {base['setup_s']:.1f} s) | longest stall {base['stall_max_ms']:.0f} ms, p99"
                f" {base['stall_p99_ms']:.0f} ms; outside full collections"
                f" {base['stall_code_ms']:.0f} ms (the collections: {base['gc_ms']} ms);"
                f" tracked objects {base['objects_before']:,} → {base['objects_after']:,},"
                f" {base['objects_per_entity']:.1f} per entity, a full collection of them"
                f" {base['gc_after_ms']:.0f} ms | what any integration brings |"
            )
            print(
                "| floor with HA's DataUpdateCoordinator (the same entities as"
                f" CoordinatorEntitys, as most polling integrations write them;"
                f" {polled['setup_s']:.1f} s) | longest stall {polled['stall_max_ms']:.0f} ms,"
                f" outside full collections {polled['stall_code_ms']:.0f} ms (the collections:"
                f" {polled['gc_ms']} ms); tracked objects {polled['objects_before']:,} →"
                f" {polled['objects_after']:,}, {polled['objects_per_entity']:.1f} per entity, a"
                f" full collection of them {polled['gc_after_ms']:.0f} ms | what a polling"
                " integration brings |"
            )
            print(
                f"| the same hub again after the floors (a heap that held and freed as much as"
                f" theirs) | longest stall {again['stall_max_ms']:.0f} ms, outside full"
                f" collections {again['stall_code_ms']:.0f} ms (the collections:"
                f" {again['gc_ms']} ms); tracked objects {again['objects_before']:,} →"
                f" {again['objects_after']:,}, {again['objects_per_entity']:.1f} per entity, a"
                f" full collection of them {again['gc_after_ms']:.0f} ms | ≤ 250 ms |"
            )
            print(
                f"| polling it, ~100 changes/s, {hub['soak_s']:.0f} s ({hub['requests']} MCP"
                f" requests) | loop lag p99 {hub['lag_p99_ms']:.1f} ms, max"
                f" {hub['lag_max_ms']:.1f} ms ({hub['lag_code_max_ms']:.1f} ms outside full"
                f" collections: {hub['soak_gc_ms']} ms) | keep (was p99 10-14, max 41) |"
            )
            split = await memory_split(hass)
            print(
                f"| memory | {hub['mib_per_1000']:.1f} MiB RSS per 1,000 devices; of a"
                f" 1,000-device hub tracemalloc sees {split['ours']:.1f} MiB in our package,"
                f" ({_top_files(split)}),"
                f" {split['home assistant']:.1f} MiB in Home Assistant, {split['other']:.1f} MiB"
                f" elsewhere; growth over the soak after warm-up {hub['soak_growth_mib']:+.1f}"
                f" MiB RSS, {hub['soak_blocks']:+,} live Python blocks,"
                f" {hub['soak_objects']:+,} objects the collector tracks | say where; no growth |"
            )
        if "5" in sections:
            sweep = await reads_during_sweep(hass, user)
            steady = sweep["before"].ms(0.5)
            print(
                f"| 1-entity get_state every 10 ms while a {BIG_HUB:,}-device hub is added"
                f" ({sweep['entities']:,} entities, all there after {sweep['added_s']:.1f} s)"
                f" | median"
                f" {sweep['during'].ms(0.5):.2f} ms, p90 {sweep['during'].ms(0.9):.1f} ms,"
                f" max {sweep['during'].ms(1.0):.0f} ms ({len(sweep['during'].latencies)}"
                f" reads); steady {sweep['before'].ms(0.5):.2f} ms before,"
                f" {sweep['after'].ms(0.5):.2f} ms after; median"
                f" {sweep['during'].ms(0.5) / steady:.1f}x steady; the read itself"
                f" {sweep['during'].ms(0.5, own=True):.2f} ms | ≤ 3x steady |"
            )
        if "4" in sections:
            shaped = await results_and_lights(hass, user, options.repeats)
            print(
                f"| tool results, get_state page of {shaped['page_count']} entities |"
                f" {shaped['bytes_now']:,} bytes (was {shaped['bytes_before']:,} as text +"
                f" structuredContent); paging estimate {shaped['estimate_ms']:.2f} ms vs"
                f" encoding {shaped['encode_ms']:.2f} ms | one encoding; estimate cheap |"
            )
            light_ratio = shaped["twenty_ms"] / shaped["one_ms"]
            print(
                f"| 20 lights in one set_state vs one light | {shaped['trips']} hub request;"
                f" {shaped['one_ms']:.1f} → {shaped['twenty_ms']:.1f} ms, {light_ratio:.2f}x"
                " | ≤ 1.5x |"
            )
        await hass.async_stop(force=True)
    if "3" in sections:
        print(
            f"\nstall goal (≤ 250 ms while the {BIG_HUB:,}-device hub is added,"
            f" {hub['entities']:,} entities):"
        )
        for name, run in (
            ("ours", hub),
            ("ours again, after the floors", again),
            ("floor (plain HA entities, same count)", base),
            ("floor with HA's coordinator", polled),
        ):
            print(
                f"  {name}: stall {run['stall_max_ms']:.0f} ms ({run['stall_code_ms']:.0f} ms"
                f" outside full collections), full GC {max(run['gc_ms'], default=0)} ms"
                f" (of the heap after: {run['gc_after_ms']:.0f} ms),"
                f" {run['objects_per_entity']:.1f} tracked objects per entity"
            )
    print(f"machine load at end: {load()}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="get_state calls per size")
    parser.add_argument("--repeats", type=int, default=30, help="on/off pairs per light case")
    parser.add_argument("--soak", type=float, default=60.0, help="soak seconds (default 60)")
    parser.add_argument("--full-soak", action="store_true", help="soak for the full hour")
    parser.add_argument(
        "--floor-slice",
        type=int,
        default=50,
        help="the floor adds its entities in slices of this many per platform, as ours does"
        " (default 50); 0: in one async_add_entities per platform",
    )
    parser.add_argument(
        "--sections",
        default="12345",
        help="which to run: 1 get_state, 2 tools/list, 3 big hub + soak + memory, 4 results"
        " and lights, 5 reads while a big hub is added (default all)",
    )
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(parser.parse_args()))
