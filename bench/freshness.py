"""Freshness: from a change on a backend to Home Assistant's `state_changed`, push beside poll.

    .venv/bin/python -m bench.freshness [--changes 20] [--clocks 4] [--idle 180] [--seed 7]

One real Home Assistant core (the test harness's instance, on the real clock) runs every entry
at once, each against its own simulator on 127.0.0.1, so push and poll are measured side by side
under the same load:

- Hubitat: one hub whose app's rule engine calls the entry's webhook (push, as the set-up's
  consent creates it) and one hub without it (polling every 15 s, the default). A motion sensor,
  a switch and a button change on both hubs at the same random moment.
- Homecast: a community server with its live-update WebSocket (push) and one without (polling
  every 30 s, the default); a motion sensor and a light change at the same random moment on both.
  Button presses are not measured: no Homecast edition broadcasts them (backends/homecast/
  push.py), so they reach HA by the cloud's polling alone.
- Robine Wake: CLOCKS clocks (no push in its spec) with an alarm due at the same minute; the
  latency of the ring is from the minute, that of the dismissal (pressed on the clock at a random
  moment after the ring) from the press.

Each change waits a random pause of up to one poll interval, so changes fall at random phases of
the poll cycle. Then each Hubitat hub is left alone for IDLE seconds and its MCP tool calls are
counted: the load an idle entry puts on the hub, push against poll.
Prints p50 / p95 / max in ms per series and the idle calls per minute. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
import random
import statistics
import time
from typing import Any

# Our package first: the test plugin ships its own `custom_components` namespace.
import custom_components.mcp_gateway  # noqa: F401  # isort: skip

from aiohttp.test_utils import TestServer
from homeassistant import loader
from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, State, callback
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import async_test_home_assistant

from bench import load
from custom_components.mcp_gateway.backends.homecast.const import CONF_SERVER, SERVER_COMMUNITY
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_PUSH,
    DEFAULT_SCAN_INTERVAL as HUBITAT_POLL,
)
from custom_components.mcp_gateway.backends.robine_wake.const import DEFAULT_SCAN_INTERVAL
from simulators.homecast import create_app as homecast_app
from simulators.robine_wake import ROBINE, create_app as robine_app
from tests.homecast.sim import Sim as HomecastServer, device_of, entity_id, token_entry
from tests.hubitat.sim import Sim as HubitatServer, first, make_entry, start as start_hub
from tests.robine_wake.sim import robine_wake_entry
from tests.simulation import LoopbackServers, setup_entry

HOMECAST_POLL = 30.0
# Hubitat tool calls per idle minute, by mode (filled by `hubitat`).
IDLE_CALLS: dict[str, float] = {}
IDLE_TOOLS: dict[str, dict[str, int]] = {}


def percentile(values: list[float], share: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


@dataclass
class Series:
    """Latencies (ms) of one backend, one kind of change, one mode."""

    backend: str
    change: str
    mode: str
    latencies: list[float] = field(default_factory=list)

    def row(self) -> str:
        values = self.latencies
        if not values:
            return f"| {self.backend} | {self.change} | {self.mode} | 0 | - | - | - |"
        return (
            f"| {self.backend} | {self.change} | {self.mode} | {len(values)} | "
            f"{statistics.median(values):.0f} | {percentile(values, 0.95):.0f} | "
            f"{max(values):.0f} |"
        )


class StateWatch:
    """Resolves waiters when an entity's new state satisfies their test."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._waiters: list[tuple[str, Callable[[State], bool], asyncio.Future[float]]] = []
        hass.bus.async_listen(EVENT_STATE_CHANGED, self._changed)

    @callback
    def _changed(self, event: Event[EventStateChangedData]) -> None:
        state = event.data["new_state"]
        if state is None:
            return
        now = time.perf_counter()
        for waiter in list(self._waiters):
            entity, test, future = waiter
            if entity == state.entity_id and not future.done() and test(state):
                future.set_result(now)
                self._waiters.remove(waiter)

    def expect(self, entity: str, test: Callable[[State], bool]) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiters.append((entity, test, future))
        return future


async def _latency(future: asyncio.Future[float], since: float, limit: float) -> float | None:
    """Milliseconds from `since` until the future resolved, None past `limit` seconds."""
    try:
        at = await asyncio.wait_for(future, limit)
    except TimeoutError:
        return None
    return (at - since) * 1000


def _is(value: str) -> Callable[[State], bool]:
    return lambda state: state.state == value


def _any_new(old: str | None) -> Callable[[State], bool]:
    """An event entity fired: its state (the time of the last event) moved on."""
    return lambda state: state.state not in (old, "unavailable", "unknown")


# ----------------------------------------------------------------------------- Hubitat


async def _serve_http(hass: HomeAssistant) -> None:
    """HA's HTTP app on a loopback port, as its internal URL: where the hub's rules call."""
    # Everything that registers routes first: the router freezes when the app starts.
    assert await async_setup_component(hass, "http", {})
    assert await async_setup_component(hass, "webhook", {})
    assert await async_setup_component(hass, "mcp_gateway", {})
    server = TestServer(hass.http.app, host="127.0.0.1")
    await server.start_server()
    await hass.config.async_update(internal_url=str(server.make_url("/")).rstrip("/"))


def _hub_entity(hass: HomeAssistant, entry_id: str, prefix: str, platform: str) -> str:
    """The entity of a platform whose unique id starts with `prefix` (a device's entities)."""
    for item in er.async_entries_for_config_entry(er.async_get(hass), entry_id):
        if item.unique_id.startswith(prefix) and item.domain == platform:
            return item.entity_id
    raise LookupError(prefix)


_HUB_CHANGES = (
    ("motion", "motion", "binary_sensor"),
    ("switch", "switch", "switch"),
    ("button", "button", "event"),
)


async def hubitat(
    hass: HomeAssistant,
    servers: LoopbackServers,
    watch: StateWatch,
    rng: random.Random,
    *,
    changes: int,
    idle: float,
) -> list[Series]:
    """Motion, switch and button changes on a pushing and a polled hub, then idle calls."""
    hubs: dict[str, tuple[HubitatServer, Any]] = {}
    choices: tuple[tuple[str, str, dict[str, Any]], ...] = (
        ("push", "fresh-push", {CONF_PUSH: True}),
        ("poll", "fresh-poll", {}),
    )
    for mode, hub_id, options in choices:
        sim = await start_hub(
            servers, hub_id=hub_id, custom_rule_engine=mode == "push", command_delay=0
        )
        entry = make_entry(sim, **options)
        await setup_entry(hass, entry)
        hubs[mode] = (sim, entry)
    push = hubs["push"][1].runtime_data.push
    await _until(lambda: push.mode == "push")
    series = {
        (kind, mode): Series("Hubitat", kind, mode) for kind, _, _ in _HUB_CHANGES for mode in hubs
    }
    for index in range(changes):
        kind, device_kind, platform = _HUB_CHANGES[index % len(_HUB_CHANGES)]
        await asyncio.sleep(rng.uniform(0, HUBITAT_POLL))
        waits: dict[str, tuple[HubitatServer, Any, str, Any, asyncio.Future[float]]] = {}
        for mode, (sim, entry) in hubs.items():
            device = first(sim, device_kind)
            target = _hub_entity(hass, entry.entry_id, f"{sim.hub.hub_id}_{device.id}_", platform)
            if kind == "motion":
                value = "inactive" if device.value("motion") == "active" else "active"
                test = _is("on" if value == "active" else "off")
            elif kind == "switch":
                value = "off" if device.value("switch") == "on" else "on"
                test = _is(value)
            else:
                state = hass.states.get(target)
                test = _any_new(state.state if state else None)
            waits[mode] = (
                sim,
                device,
                kind,
                value if kind != "button" else 1,
                watch.expect(target, test),
            )
        started = time.perf_counter()
        for sim, device, attribute, value, _ in waits.values():
            sim.hub.set_attribute(
                device.id, "pushed" if attribute == "button" else attribute, value
            )
        for mode, (*_, future) in waits.items():
            latency = await _latency(future, started, HUBITAT_POLL * 2)
            if latency is not None:
                series[(kind, mode)].latencies.append(latency)
    # Idle: nothing happens on either hub; count the MCP tool calls each entry makes.
    for sim, _ in hubs.values():
        sim.stats.reset()
    await asyncio.sleep(idle)
    for mode, (sim, _) in hubs.items():
        IDLE_CALLS[mode] = sum(sim.stats.tools.values()) / (idle / 60)
        IDLE_TOOLS[mode] = dict(sim.stats.tools)
    return list(series.values())


# ----------------------------------------------------------------------------- Homecast


async def homecast(
    hass: HomeAssistant,
    servers: LoopbackServers,
    watch: StateWatch,
    changes: int,
    rng: random.Random,
) -> list[Series]:
    """Motion and light changes on a pushing and a polled community server, side by side."""
    pushed = HomecastServer(
        await servers.start(homecast_app(write_delay=0, community=True, seed=1))
    )
    polled = HomecastServer(
        await servers.start(homecast_app(write_delay=0, community=True, push=False, seed=2))
    )
    entries = {}
    for mode, sim in (("push", pushed), ("poll", polled)):
        data: dict[str, Any] = {CONF_SERVER: SERVER_COMMUNITY}
        entry = token_entry(sim, **data)
        entry.add_to_hass(hass)
        await hass.config_entries.async_setup(entry.entry_id)
        entries[mode] = (entry, sim)
    await hass.async_block_till_done()
    await _until(lambda: entries["push"][0].runtime_data.push.status.mode == "push")
    series = {
        (kind, mode): Series("Homecast", kind, mode)
        for kind in ("motion", "switch")
        for mode in ("push", "poll")
    }
    for index in range(changes):
        kind = ("motion", "switch")[index % 2]
        await asyncio.sleep(rng.uniform(0, HOMECAST_POLL))
        waits = {}
        for mode, (entry, sim) in entries.items():
            acc = device_of(sim, "motion" if kind == "motion" else "light")
            key = "motion" if kind == "motion" else "on"
            target = not acc.values.get(key)
            platform = "motion" if kind == "motion" else "light"
            waits[mode] = (
                sim,
                acc,
                {key: target},
                watch.expect(
                    entity_id(hass, entry, sim, acc, platform), _is("on" if target else "off")
                ),
            )
        started = time.perf_counter()
        for sim, acc, values, _ in waits.values():
            sim.state.external_change(sim.state.homes[0].uuid, acc.slug, **values)
        for mode, (_, _, _, future) in waits.items():
            latency = await _latency(future, started, HOMECAST_POLL * 2)
            if latency is not None:
                series[(kind, mode)].latencies.append(latency)
    return list(series.values())


# ----------------------------------------------------------------------------- Robine Wake


async def robine_wake(
    hass: HomeAssistant,
    servers: LoopbackServers,
    watch: StateWatch,
    rng: random.Random,
    *,
    rings: int,
    clocks: int,
) -> list[Series]:
    """Rings of alarms due at the same minute on CLOCKS clocks, then dismissals on the clock."""
    devices = []
    sessions = []
    for number in range(clocks):
        server = await servers.start(
            robine_app(command_delay=0, device_id=f"rw-fresh-{number}", starter_alarms=False)
        )
        entry = robine_wake_entry(str(server.make_url("/mcp")), f"rw-fresh-{number}")
        await setup_entry(hass, entry)
        devices.append(server.app[ROBINE])
        sessions.append(_session_entity(hass, entry.entry_id))
    ring = Series("Robine Wake", "ring (alarm due)", f"poll {DEFAULT_SCAN_INTERVAL} s")
    dismiss = Series("Robine Wake", "dismiss on the clock", f"poll {DEFAULT_SCAN_INTERVAL} s")
    while len(ring.latencies) < rings:
        # An alarm for the next full minute at least 15 s ahead, as a person would set it.
        due = (datetime.now(UTC) + timedelta(seconds=15)).replace(second=0, microsecond=0)
        due += timedelta(minutes=1)
        waits = []
        for device, session in zip(devices, sessions, strict=True):
            device.add_alarm(label="Fresh", time=due.astimezone(device.tz).strftime("%H:%M"))
            waits.append(watch.expect(session, _is("ringing")))
        until_due = due.timestamp() - time.time()
        started = time.perf_counter() + until_due
        for future in waits:
            latency = await _latency(future, started, until_due + 30)
            if latency is not None:
                ring.latencies.append(latency)
        presses = []
        for device, session in zip(devices, sessions, strict=True):
            presses.append(_press_dismiss(device, watch.expect(session, _is("idle")), rng))
        dismiss.latencies.extend(x for x in await asyncio.gather(*presses) if x is not None)
    return [ring, dismiss]


async def _press_dismiss(
    device: Any, idle: asyncio.Future[float], rng: random.Random
) -> float | None:
    await asyncio.sleep(rng.uniform(0, DEFAULT_SCAN_INTERVAL))
    started = time.perf_counter()
    device.press_dismiss()
    return await _latency(idle, started, 30)


def _session_entity(hass: HomeAssistant, entry_id: str) -> str:
    for item in er.async_entries_for_config_entry(er.async_get(hass), entry_id):
        if item.domain == "sensor" and item.unique_id.endswith("_session_state"):
            return item.entity_id
    raise LookupError("no session sensor")


# ----------------------------------------------------------------------------- running


async def _until(test: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not test():
        if time.monotonic() > deadline:
            raise TimeoutError("the push channel did not come up")
        await asyncio.sleep(0.05)


async def run(changes: int, clocks: int, idle: float, seed: int) -> None:
    rng = random.Random(seed)
    print(f"load before: {load()}")
    servers = LoopbackServers()
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS, None)
        watch = StateWatch(hass)
        await _serve_http(hass)
        try:
            results = await asyncio.gather(
                homecast(hass, servers, watch, changes, random.Random(rng.random())),
                robine_wake(
                    hass, servers, watch, random.Random(rng.random()), rings=changes, clocks=clocks
                ),
                hubitat(
                    hass, servers, watch, random.Random(rng.random()), changes=changes, idle=idle
                ),
            )
        finally:
            for entry in hass.config_entries.async_entries():
                await hass.config_entries.async_unload(entry.entry_id)
            await hass.async_block_till_done()
            await hass.async_stop(force=True)
            await servers.close()
    print(f"load after: {load()}")
    print("| backend | change | mode | n | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|---|---|")
    for group in results:
        for series in group:
            print(series.row())
        # Every change of a backend in one row per mode: at least CHANGES of them.
        modes = dict.fromkeys(series.mode for series in group)
        if len({series.change for series in group}) > 1 and group[0].backend != "Robine Wake":
            for mode in modes:
                merged = Series(group[0].backend, "all changes", mode)
                for series in group:
                    if series.mode == mode:
                        merged.latencies.extend(series.latencies)
                print(merged.row())
    print(
        "Hubitat tool calls per idle minute: "
        + ", ".join(f"{mode} {calls:.1f}" for mode, calls in IDLE_CALLS.items())
    )
    for mode, tools in IDLE_TOOLS.items():
        print(f"  {mode}: {tools}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20)
    parser.add_argument("--clocks", type=int, default=4)
    parser.add_argument("--idle", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    asyncio.run(run(args.changes, args.clocks, args.idle, args.seed))


if __name__ == "__main__":
    main()
