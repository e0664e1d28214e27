"""Benchmark: where the gateway's own time goes on a backend tool call, step by step.

    .venv/bin/python -m bench.gateway_steps [--calls 3000] [--legacy-hub]

`bench.gateway` measures the gateway against a bare relay across processes, as a client sees
it. This one looks inside, in one process, where every step can be timed where it runs: one
Home Assistant (HTTP on aiohttp's test server), the Hubitat simulator on 127.0.0.1 listing its
tools flat (`--flat`), and the same `hub_get_device` sent three ways, interleaved (A, B, C, A,
B, C, …): through the gateway, through `bench/relay` (a view that only forwards the bytes),
straight to the simulator. It prints their medians, what each adds over the direct call and
the ratio (the figure `bench.gateway` judges), then a second series of gateway calls with the
steps of the path timed: each step's time is what its function took minus the next step's.
Timing adds ~1 µs a step; the differences are what compares.

The gateway's client speaks 2026-07-28 to the hub (as to the real Hubitat app, which offers
it); the relay and the direct call carry this benchmark's 2025-06-18 requests. `--legacy-hub`
has the gateway's client speak 2025-06-18 too, for the same request at the hub on every path.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable
import contextlib
import contextvars
from dataclasses import dataclass
import functools
import inspect
import json
import logging
import statistics
import time
from typing import Any

# Our package first: the test plugin ships its own `custom_components` namespace.
import aiohttp
from aiohttp.test_utils import TestServer
from homeassistant import loader
from homeassistant.auth.const import GROUP_ID_ADMIN
from homeassistant.auth.models import TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import (
    async_test_home_assistant,
)

from bench import load
from bench.relay import RelayView
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.settings import CONF_RATE_LIMIT, MAX_RATE_LIMIT
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.http.view import McpGatewayView
from custom_components.mcp_gateway.mcp.client import McpClient
from custom_components.mcp_gateway.mcp.server import McpServer
from demo.ha import free_port
from simulators.hubitat import HUB, create_app, mcp_path
from tests.hubitat.sim import hubitat_entry
from tests.simulation import gateway_entry, setup_entry

SIM_TOKEN = "bench-token"
PROTOCOL = "2025-06-18"


@dataclass(frozen=True)
class Step:
    """A public method on the gateway path, timed where it runs."""

    label: str
    owner: type
    name: str


# Outermost first: each step's own time is its method's minus the next one's. Only public
# methods (the view's `post` is what Home Assistant calls): the gateway's inner steps are timed
# together, so renaming or regrouping its private helpers cannot silently change a figure, and
# a step the path no longer takes fails the run (every step must run once a call).
STEPS = (
    Step("admission, body decoding, answer encoding (the view)", McpGatewayView, "post"),
    Step("the MCP server layer", McpServer, "handle_http"),
    Step(
        "the gateway tool: entry, arguments, catalog, authorization, deadline",
        GatewayHandler,
        "call_tool",
    ),
    Step("the backend runtime (Hubitat)", HubitatRuntime, "async_call_tool"),
    Step("the MCP client, its hop included", McpClient, "call_tool"),
)
HOP = "the same exchange straight from aiohttp (the direct call)"
RELAY = Step("for comparison: the bare relay's whole view, its hop included", RelayView, "post")


class StepTimer:
    """Wraps each step's method to add its time and count its calls while `active`.

    The views' handlers are taken when the views are registered, so the wrappers go in before
    Home Assistant sets anything up; inactive, each costs one plain call.
    """

    def __init__(self) -> None:
        self.active = False
        self.spent: dict[str, float] = {}
        self.counts: dict[str, int] = {}
        self.calls = 0
        # Set while a request's outermost step runs, in that request's task only: the
        # entry's own polls (the same client methods, other tasks) are not counted.
        self._in_request: contextvars.ContextVar[bool] = contextvars.ContextVar(
            "in_request", default=False
        )

    def install(self, steps: tuple[Step, ...], outermost: tuple[Step, ...]) -> None:
        for step in steps:
            self.spent[step.label] = 0.0
            self.counts[step.label] = 0
            original = getattr(step.owner, step.name)
            setattr(step.owner, step.name, self._wrapped(step, original, step in outermost))

    def _wrapped(
        self, step: Step, original: Callable[..., Awaitable[Any]], outermost: bool
    ) -> Callable[..., Awaitable[Any]]:
        if not inspect.iscoroutinefunction(original):
            raise TypeError(f"{step.owner.__name__}.{step.name} is no longer a coroutine")
        spent, counts, label, in_request = self.spent, self.counts, step.label, self._in_request

        @functools.wraps(original)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.active or not (outermost or in_request.get()):
                return await original(*args, **kwargs)
            counts[label] += 1
            token = in_request.set(True) if outermost else None
            began = time.perf_counter()
            try:
                return await original(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - began
                if token is not None:
                    in_request.reset(token)

        return timed

    async def add(self, label: str, call: Callable[[], Awaitable[None]]) -> None:
        """Time a call of the benchmark's own (the direct hop) as a step."""
        self.counts[label] = self.counts.get(label, 0) + 1
        began = time.perf_counter()
        await call()
        self.spent[label] = self.spent.get(label, 0.0) + time.perf_counter() - began

    def check(self) -> None:
        """Every step ran once a call: otherwise the path changed and the figures mislead."""
        strays = {label: n for label, n in self.counts.items() if n != self.calls}
        if strays:
            raise RuntimeError(f"steps not run once in each of {self.calls} calls: {strays}")

    def per_call(self, label: str) -> float:
        return self.spent[label] / self.calls * 1e6


def call_body(name: str, arguments: dict[str, Any]) -> bytes:
    request = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(request).encode()


async def setup(hass: HomeAssistant, sim_url: str) -> str:
    """HTTP, the gateway (rate limit at its maximum), the Hubitat entry, the relay; a token."""
    assert await async_setup_component(hass, "http", {"http": {"server_port": free_port()}})
    gateway_entry({CONF_RATE_LIMIT: MAX_RATE_LIMIT}).add_to_hass(hass)
    await setup_entry(hass, hubitat_entry(sim_url, SIM_TOKEN, unique_id="hub-bench"))
    await hass.async_block_till_done(wait_background_tasks=True)  # every slice of entities
    hass.http.register_view(RelayView(f"{sim_url}?access_token={SIM_TOKEN}"))
    user = await hass.auth.async_create_user("bench", group_ids=[GROUP_ID_ADMIN])
    refresh = await hass.auth.async_create_refresh_token(
        user, client_name="bench", token_type=TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN
    )
    return hass.auth.async_create_access_token(refresh)


async def run(calls: int, legacy_hub: bool, devices: int = 207, warmup: int = 100) -> None:
    print(f"machine load at start: {load()}")
    print(f"the gateway's client speaks {'2025-06-18' if legacy_hub else '2026-07-28'} to the hub")
    # A hub app from before 2026-07-28 has the gateway's client fall back as it would.
    sim_app = create_app(
        devices=devices, hub_id="hub-bench", token=SIM_TOKEN, gateways=False, modern=not legacy_hub
    )
    async with (
        async_test_home_assistant() as hass,
        contextlib.AsyncExitStack() as stack,
    ):
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)  # let HA load our integration
        timer = StepTimer()
        timer.install((*STEPS, RELAY), outermost=(STEPS[0], RELAY))
        sim = TestServer(sim_app, host="127.0.0.1")
        await sim.start_server()
        stack.push_async_callback(sim.close)
        sim_url = str(sim.make_url(mcp_path("42")))
        token = await setup(hass, sim_url)
        ha = TestServer(hass.http.app, host="127.0.0.1")
        await ha.start_server()
        stack.push_async_callback(ha.close)
        session = await stack.enter_async_context(aiohttp.ClientSession())
        device = str(min(sim_app[HUB].devices))
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
        }
        authorized = {**headers, "Authorization": f"Bearer {token}"}
        listing = await session.post(
            ha.make_url("/api/mcp_gateway"),
            data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            headers=authorized,
        )
        tools = (await listing.json())["result"]["tools"]
        gateway_tool = next(tool["name"] for tool in tools if tool["name"].startswith("hubitat"))
        direct_call = {"deviceId": device}
        via = call_body(gateway_tool, {"tool": "hub_get_device", "args": direct_call})
        flat = call_body("hub_get_device", direct_call)

        def poster(url: Any, body: bytes, sent: dict[str, str]) -> Callable[[], Awaitable[None]]:
            async def post() -> None:
                async with session.post(url, data=body, headers=sent) as reply:
                    answer = await reply.read()
                if reply.status != 200 or b'"error"' in answer or b'"isError":true' in answer:
                    raise RuntimeError(f"{url}: {reply.status} {answer[:200]!r}")

            return post

        cases = {
            "through the gateway": poster(ha.make_url("/api/mcp_gateway"), via, authorized),
            "through the bare relay": poster(ha.make_url("/api/bench_relay"), flat, authorized),
            "straight to the simulator": poster(
                f"{sim_url}?access_token={SIM_TOKEN}", flat, headers
            ),
        }
        spent: dict[str, list[float]] = {name: [] for name in cases}
        for round_no in range(calls + warmup):
            for name, call in cases.items():
                began = time.perf_counter()
                await call()
                if round_no >= warmup:
                    spent[name].append(time.perf_counter() - began)
        gateway, relay, direct = spent.values()

        def added(path: list[float]) -> float:
            return statistics.median(a - b for a, b in zip(path, direct, strict=True)) * 1e6

        for name, times in spent.items():
            print(f"{name:<28} median {statistics.median(times) * 1e6:7.1f} µs")
        own = statistics.median(a - b for a, b in zip(gateway, relay, strict=True)) * 1e6
        print(
            f"added over the direct call: gateway {added(gateway):.1f} µs, bare relay"
            f" {added(relay):.1f} µs: {added(gateway) / added(relay):.2f}x; the gateway's own"
            f" work (median of gateway - relay) {own:.1f} µs"
        )
        timer.active, timer.calls = True, calls
        for _ in range(calls):
            await cases["through the gateway"]()
            await cases["through the bare relay"]()
            await timer.add(HOP, cases["straight to the simulator"])
        timer.active = False
        timer.check()
        print(f"\nsteps of {calls:,} gateway calls (µs a call, timed where they run):")
        for step, inner in zip(STEPS, (*STEPS[1:], None), strict=True):
            own_time = timer.per_call(step.label) - (timer.per_call(inner.label) if inner else 0)
            print(f"  {step.label:<70} {own_time:6.1f}")
        print(f"    {'of it: ' + HOP:<68} {timer.per_call(HOP):6.1f}")
        print(f"  {RELAY.label:<70} {timer.per_call(RELAY.label):6.1f}")
        print(f"machine load at end: {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000, help="measured calls per case")
    parser.add_argument("--devices", type=int, default=207, help="simulated Hubitat devices")
    parser.add_argument("--warmup", type=int, default=100, help="unmeasured first rounds")
    parser.add_argument(
        "--legacy-hub", action="store_true", help="the gateway's client speaks 2025-06-18"
    )
    logging.disable(logging.WARNING)  # HA's custom-integration notice, nothing measured
    options = parser.parse_args()
    asyncio.run(run(options.calls, options.legacy_hub, options.devices, options.warmup))


if __name__ == "__main__":
    main()
