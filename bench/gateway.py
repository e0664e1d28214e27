"""Benchmark: MCP Gateway vs Home Assistant core's `mcp_server`, and gateway vs direct backend.

usage: .venv/bin/python -m bench.gateway [--devices N] [--requests N] [--keep]
       scripts/ha-run .venv-current/bin/python -m bench.gateway   (the current HA release)

One real Home Assistant (started here, on loopback) serves both MCP servers; the same owner's
token and the same official Python SDK (1.x, in the venv) talk to each: our gateway over
Streamable HTTP at /api/mcp_gateway (and SSE), core's `mcp_server` over what it offers: SSE
only in 2025.4 (/mcp_server/sse), Streamable HTTP for the Assist API (/api/mcp/assist) in
later releases. HA runs with core mcp_server's own pins (core_venv_python). A simulated
Hubitat hub provides the entities (exposed to Assist, so core's `GetLiveContext` reads the same
ones our `get_state` reads) and the backend tools.

Measured interleaved (A, B, A, B, … one call of each case per round, each case on its own
connection), so the load of a shared machine weighs on every case alike; the machine load
(/proc/loadavg) is printed before and after:
- `tools/list`, ours vs core's, and ours over SSE too, so that one ratio is always on core's
  transport, like with like (target: ours at least 3x core's throughput);
- a state read over every entity: our `get_state` (Streamable HTTP and SSE) vs core's
  `GetLiveContext` (SSE in 2025.4, Streamable HTTP at /api/mcp/assist in later releases);
- a backend tool call (`hub_get_device`: the simulator runs `--flat`, so the gateway sends the
  hub the same flat call the other paths make, though in 2026-07-28's form where the SDK here
  speaks 2025-06-18; `bench.gateway_steps --legacy-hub` shows what that weighs) through the
  gateway, straight to the simulator,
  and through `bench/relay`, a bare HA view that only relays the bytes: what
  any MCP proxy inside HA pays (HA's HTTP stack, a second HTTP hop) before doing anything of
  its own. The gateway's own
  work per call is the median of the paired differences gateway - relay (same round); target:
  the gateway's added time at most 1.25x the bare relay's.
  The same again with the simulator answering after a set delay (`--backend-latency`, ms),
  as a hub or cloud relay on a real network does: the ratio a user sees.
Needs `aiohttp_sse` (in both targets' requirements); what core's mcp_server pins beyond the venv
(its `mcp`, conversation's packages, the frontend without scripts/setup --demo) goes into the
benchmark's own venv for that HA release, made on first use.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
import importlib.metadata
import json
import os
from pathlib import Path
import statistics
import subprocess
import sys
import sysconfig
import time
from typing import Any

import aiohttp
import homeassistant.components
from homeassistant.const import __version__ as HA_VERSION
from mcp import ClientSession, types
from mcp.client.sse import sse_client

# The SDK of HA 2026.10 deprecates this name for one taking an httpx client; 1.12 (HA 2025.4's
# peer) has only this one, which both keep working.
from mcp.client.streamable_http import (  # type: ignore[deprecated, unused-ignore]
    streamablehttp_client,
)
from yarl import URL

from bench import hubitat_simulator, load
from custom_components.mcp_gateway.core.settings import CONF_RATE_LIMIT, MAX_RATE_LIMIT
from demo.ha import HomeAssistantProcess

RELAY = Path(__file__).parent / "relay"

SIM_TOKEN = "bench-token"
# Core's mcp_server is written against its manifest's exact `mcp` pin (1.5.0 in HA 2025.4,
# 1.28.1 in 2026.10), and newer or older SDKs changed the session internals it uses; the
# conversation integration it depends on needs its own packages too, which our test venvs may
# lack. HA runs from a small venv per HA release that holds those and borrows every other
# package from the main venv. Other pins the main venv meets at another version (anyio) are
# left as they are, and pip may add a newer dependency the `mcp` pin asks for.
CORE_REQUIREMENTS_OF = ("mcp_server", "conversation")
HA_COMPONENTS = Path(homeassistant.components.__file__).parent
BENCH_HOME = Path(
    os.environ.get("MCP_GATEWAY_BENCH_HOME", Path.home() / ".cache" / "mcp-gateway-bench")
)


def core_requirements() -> list[str]:
    """What core's mcp_server needs beyond the main venv: its `mcp` pin (always: the SDK
    version decides that server's behaviour) and every pinned package not installed at all."""
    wanted: list[str] = []
    for domain in CORE_REQUIREMENTS_OF:
        manifest = json.loads((HA_COMPONENTS / domain / "manifest.json").read_text())
        for requirement in manifest.get("requirements", []):
            name = requirement.split("==")[0]
            if name == "mcp" or not _installed(name):
                wanted.append(requirement)
    if not _installed("home-assistant-frontend"):
        # Core's mcp_server pulls in the frontend; without scripts/setup --demo the main venv
        # lacks it, so this venv gets the release's own pin of it.
        manifest = json.loads((HA_COMPONENTS / "frontend" / "manifest.json").read_text())
        wanted += [r for r in manifest["requirements"] if r.startswith("home-assistant-frontend")]
    return wanted


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def core_venv_python() -> str:
    """The interpreter for HA with core mcp_server's own pins (created on first use)."""
    venv = BENCH_HOME / f"core-ha-{HA_VERSION}"
    python = venv / "bin" / "python"
    if not python.exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # Rewritten on every run, resolved: the venv that created it may have been a worktree's
    # symlink since removed, or another checkout's. Written before installing, so that pip
    # counts the main venv's packages as there and adds only what is missing.
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(target, "_main_venv.pth").write_text(f"{site}\n")
    done = venv / ".installed"
    wanted = "\n".join(core_requirements())
    if not done.exists() or done.read_text() != wanted:
        pip = (str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check")
        subprocess.run([*pip, *wanted.split()], check=True)
        done.write_text(wanted)
    return str(python)


SIM_APP_ID = "42"


@dataclass
class Stats:
    """Latencies of one measured operation."""

    name: str
    latencies: list[float]
    total: float

    @property
    def rps(self) -> float:
        return len(self.latencies) / self.total

    def pct(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000

    def line(self) -> str:
        return (
            f"{self.name:<44} {self.rps:8.1f} req/s   p50 {self.pct(0.5):7.2f} ms"
            f"   p99 {self.pct(0.99):7.2f} ms"
        )


async def interleaved(
    cases: list[tuple[str, Callable[[], Awaitable[Any]]]], requests: int, warmup: int = 10
) -> list[Stats]:
    """`requests` rounds, each calling every case once in turn, after warm-up rounds."""
    for _ in range(warmup):
        for _, call in cases:
            await call()
    latencies: list[list[float]] = [[] for _ in cases]
    for _ in range(requests):
        for index, (_, call) in enumerate(cases):
            began = time.perf_counter()
            await call()
            latencies[index].append(time.perf_counter() - began)
    return [
        Stats(name, spent, sum(spent)) for (name, _), spent in zip(cases, latencies, strict=True)
    ]


def paired_median(mine: Stats, base: Stats) -> float:
    """Median of per-round differences (ms): what one case adds over the other, same load."""
    return (
        statistics.median(a - b for a, b in zip(mine.latencies, base.latencies, strict=True)) * 1000
    )


def text_of(result: types.CallToolResult) -> str:
    """The text of a result's first content block (every server here answers in text)."""
    first = result.content[0]
    if not isinstance(first, types.TextContent):
        raise TypeError(f"expected text, got {first.type}")
    return first.text


async def tools_call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    """One `tools/call` request and its answer, nothing more.

    The SDK's `call_tool` also validates results against output schemas, listing the tools
    again first whenever the name is not among those its last `tools/list` (first page only)
    returned: client-side work and requests that differ by path. Sending the request itself
    compares like with like.
    """
    request = types.ClientRequest(
        types.CallToolRequest(
            method="tools/call",
            params=types.CallToolRequestParams(name=name, arguments=arguments),
        )
    )
    result = await session.send_request(request, types.CallToolResult)
    if result.isError:
        raise RuntimeError(f"{name} failed: {result.content}")
    return result


@asynccontextmanager
async def streamable(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        streamablehttp_client(url, headers=headers) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def sse(url: str, token: str) -> AsyncIterator[ClientSession]:
    async with (
        sse_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def simulator(devices: int) -> AsyncIterator[str]:
    """The Hubitat simulator in its own process; yields its MCP URL (with the token)."""
    flags = ("--devices", str(devices), "--token", SIM_TOKEN, "--app-id", SIM_APP_ID)
    # --flat: the same tool names directly and through the (flattening) gateway.
    async with hubitat_simulator(*flags, "--flat") as port:
        yield f"http://127.0.0.1:{port}/apps/api/{SIM_APP_ID}/mcp?access_token={SIM_TOKEN}"


async def set_latency(sim_url: str, seconds: float) -> None:
    """Make the simulator answer every request after `seconds` (its fault switch)."""
    faults = str(URL(sim_url).with_path("/_sim/faults").with_query(None))
    async with (
        aiohttp.ClientSession() as session,
        session.post(faults, json={"latency": seconds}) as response,
    ):
        response.raise_for_status()


async def prepare(ha: HomeAssistantProcess, sim_url: str) -> list[str]:
    """The Hubitat entry, its entities exposed to Assist (only they), core's mcp_server entry."""
    await ha.config_flow_steps("mcp_gateway", {"next_step_id": "hubitat"}, {"url": sim_url})
    registry: list[dict[str, Any]] = []
    for _ in range(300):
        registry = await ha.websocket_command({"type": "config/entity_registry/list"})
        ours = [e["entity_id"] for e in registry if e["platform"] == "mcp_gateway"]
        states = {s["entity_id"] for s in await ha.api("GET", "/api/states")}
        if ours and set(ours) <= states:
            break
        await asyncio.sleep(0.1)  # entities appear as the first poll lands
    states = await ha.api("GET", "/api/states")
    others = [s["entity_id"] for s in states if s["entity_id"] not in ours]
    commands: list[dict[str, Any]] = [
        {
            "type": "homeassistant/expose_entity",
            "assistants": ["conversation"],
            "entity_ids": ours,
            "should_expose": True,
        }
    ]
    if others:
        commands.append(
            {
                "type": "homeassistant/expose_entity",
                "assistants": ["conversation"],
                "entity_ids": others,
                "should_expose": False,
            }
        )
    await ha.websocket_commands(*commands)
    await add_core_mcp_server(ha)
    return ours


async def add_core_mcp_server(ha: HomeAssistantProcess) -> None:
    """Core's mcp_server entry, serving the Assist API alone.

    HA 2025.4's form asks which LLM API to serve; 2026.10's asks nothing and serves every API
    (each also at its own URL, core_url; tools named `<API>__<tool>`) until its options say.
    """
    flows = "/api/config/config_entries/flow"
    form = await ha.api("POST", flows, json={"handler": "mcp_server"})
    fields = {field["name"] for field in form.get("data_schema", [])}
    answer = {"llm_hass_api": "assist"} if "llm_hass_api" in fields else {}
    done = await ha.api("POST", f"{flows}/{form['flow_id']}", json=answer)
    if done.get("type") != "create_entry":
        raise RuntimeError(f"core's mcp_server flow did not finish: {done}")
    if answer:
        return
    # Serving every LLM API would include this integration's own (MCP Gateway): its options
    # limit it to Assist, like the 2025.4 entry. Unticking "all" shows the API picker first.
    options = "/api/config/config_entries/options/flow"
    step = await ha.api("POST", options, json={"handler": done["result"]["entry_id"]})
    for values in (
        {"all_llm_apis": False, "require_admin": True},
        {"all_llm_apis": False, "llm_hass_api": ["assist"], "require_admin": True},
    ):
        step = await ha.api("POST", f"{options}/{step['flow_id']}", json=values)
        if step.get("type") == "create_entry":
            return
    raise RuntimeError(f"core's mcp_server options did not take Assist alone: {step}")


def core_tool_name(names: Iterable[str], tool: str) -> str | None:
    """Core's name for one of its tools: `GetLiveContext` in 2025.4, and namespaced by the
    LLM API that offers it (`homeassistant__GetLiveContext`) in later releases."""
    return next((name for name in names if name == tool or name.endswith(f"__{tool}")), None)


async def core_url(ha: HomeAssistantProcess) -> tuple[str, bool]:
    """Core's MCP endpoint for the Assist API and whether it speaks Streamable HTTP.

    Current releases (2026.10) serve Streamable HTTP per LLM API at /api/mcp/<API id>; HA
    2025.4 has only the SSE endpoint, and no route there (404).
    """
    streamable_url = f"{ha.base_url}/api/mcp/assist"
    headers = {"Authorization": f"Bearer {ha.token}"}
    async with (
        aiohttp.ClientSession() as session,
        session.get(streamable_url, headers=headers) as probe,
    ):
        if probe.status != 404:
            return streamable_url, True
    return f"{ha.base_url}/mcp_server/sse", False


async def run(args: argparse.Namespace) -> int:
    # -P: the repository (our working directory) must not shadow the config dir's custom_components.
    ha_command = (core_venv_python(), "-P", "-m", "homeassistant")
    async with (
        simulator(args.devices) as sim_url,
        HomeAssistantProcess(
            name="MCP bench",
            extra_yaml=f"conversation:\nbench_relay:\n  url: {json.dumps(sim_url)}\n",
            extra_components={"bench_relay": RELAY},
            command=ha_command,
            # The highest per-user rate limit the settings allow: the bench measures speed,
            # and its thousands of calls a minute would otherwise meet the default 120.
            gateway_options={
                "allowed_origins": ["http://localhost:*"],
                CONF_RATE_LIMIT: MAX_RATE_LIMIT,
            },
            keep=args.keep,
        ) as ha,
    ):
        print(f"machine load at start: {load()}")
        entities = await prepare(ha, sim_url)
        print(
            f"Home Assistant {ha.base_url}: {len(entities)} gateway entities, all exposed to Assist"
        )
        core_endpoint, core_streams = await core_url(ha)
        core_transport = "Streamable HTTP" if core_streams else "SSE"
        print(f"core's mcp_server: {core_endpoint} ({core_transport})")
        results: list[tuple[Stats, Stats]] = []
        async with (
            streamable(f"{ha.base_url}/api/mcp_gateway", ha.token) as ours,
            (streamable if core_streams else sse)(core_endpoint, ha.token) as core,
            sse(f"{ha.base_url}/api/mcp_gateway/sse", ha.token) as ours_sse,
            streamable(sim_url, None) as direct,
            streamable(f"{ha.base_url}/api/bench_relay", ha.token) as relay,
        ):
            our_tools = (await ours.list_tools()).tools
            core_tools = (await core.list_tools()).tools
            gateway_tool = next(t.name for t in our_tools if t.name.startswith("hubitat"))
            sizes = {
                "ours": len(json.dumps([t.model_dump(exclude_none=True) for t in our_tools])),
                "core": len(json.dumps([t.model_dump(exclude_none=True) for t in core_tools])),
            }
            state_ours = await ours.call_tool("get_state", {})
            live_context = core_tool_name([t.name for t in core_tools], "GetLiveContext")
            if live_context is None:
                raise RuntimeError("core's mcp_server offers no GetLiveContext")
            state_core = await core.call_tool(live_context, {})
            if state_ours.isError or state_core.isError:
                raise RuntimeError("a state read failed")
            device = json.loads(text_of(await direct.call_tool("hub_list_devices", {})))["devices"][
                0
            ]["id"]
            get_direct = {"deviceId": str(device)}
            through_gateway = {"tool": "hub_get_device", "args": get_direct}

            n = args.requests
            listing = await interleaved(
                [
                    ("tools/list  gateway (Streamable HTTP)", ours.list_tools),
                    (f"tools/list  core mcp_server ({core_transport})", core.list_tools),
                    ("tools/list  gateway (SSE)", ours_sse.list_tools),
                ],
                n,
            )
            reads = await interleaved(
                [
                    ("state read  gateway get_state", lambda: ours.call_tool("get_state", {})),
                    (
                        f"state read  core GetLiveContext ({core_transport})",
                        lambda: core.call_tool(live_context, {}),
                    ),
                    (
                        "state read  gateway get_state (SSE)",
                        lambda: ours_sse.call_tool("get_state", {}),
                    ),
                ],
                n,
            )
            hop, via, straight, relayed = await interleaved(
                [
                    ("ping through HA's HTTP stack (gateway)", ours.send_ping),
                    (
                        "hub_get_device through the gateway",
                        lambda: tools_call(ours, gateway_tool, through_gateway),
                    ),
                    (
                        "hub_get_device straight to the simulator",
                        lambda: tools_call(direct, "hub_get_device", get_direct),
                    ),
                    (
                        "hub_get_device through a bare HA relay",
                        lambda: tools_call(relay, "hub_get_device", get_direct),
                    ),
                ],
                n,
            )
            slow: dict[float, list[Stats]] = {}
            for delay in args.backend_latency:
                await set_latency(sim_url, delay / 1000)
                calls = max(20, n // 4)
                slow[delay] = await interleaved(
                    [
                        (
                            f"  the same through the gateway, {delay:g} ms hub",
                            lambda: tools_call(ours, gateway_tool, through_gateway),
                        ),
                        (
                            f"  the same through the relay, {delay:g} ms hub",
                            lambda: tools_call(relay, "hub_get_device", get_direct),
                        ),
                        (
                            f"  the same straight, {delay:g} ms hub",
                            lambda: tools_call(direct, "hub_get_device", get_direct),
                        ),
                    ],
                    calls,
                    warmup=3,
                )
            await set_latency(sim_url, 0.0)
        results = [(listing[0], listing[1]), (reads[0], reads[1])]
        # Like with like: ours over the transport core speaks (core 2025.4 has only SSE).
        like_core = 0 if core_streams else 2
        print(f"tools/list JSON: ours {sizes['ours']} bytes, core {sizes['core']} bytes")
        print(
            f"state read text: ours {len(text_of(state_ours))} chars,"
            f" core {len(text_of(state_core))} chars"
        )
        missed: list[str] = []
        for mine, theirs in results:
            print(mine.line())
            print(theirs.line())
            ratio = mine.rps / theirs.rps
            print(f"{'':<44} gateway/core throughput {ratio:.2f}x")
            if ratio < 3.0:
                missed.append(f"{mine.name.split()[0]} throughput >= 3x core")
        for rows in (listing, reads):
            print(rows[2].line())
            like = rows[like_core].rps / rows[1].rps
            print(f"{'':<44} gateway/core on core's transport ({core_transport}): {like:.2f}x")
        print(hop.line())
        print(via.line())
        print(straight.line())
        print(relayed.line())
        own = paired_median(via, relayed)
        gateway_added = paired_median(via, straight)
        relay_added = paired_median(relayed, straight)
        print(
            f"{'':<44} added per call (median of paired differences): gateway"
            f" {gateway_added:.2f} ms, bare relay {relay_added:.2f} ms, gateway's own work"
            f" {own:.2f} ms"
        )
        added_ratio = gateway_added / relay_added
        latency_ratio = via.pct(0.5) / relayed.pct(0.5)
        print(
            f"{'':<44} gateway/relay: added time {added_ratio:.2f}x,"
            f" p50 latency {latency_ratio:.2f}x (target added time <= 1.25x)"
        )
        print(
            f"{'':<44} gateway/direct p50 latency ratio {via.pct(0.5) / straight.pct(0.5):.2f};"
            f" bare relay/direct {relayed.pct(0.5) / straight.pct(0.5):.2f}"
        )
        if added_ratio > 1.25:
            missed.append("gateway added time <= 1.25x the bare relay's")
        for delay, (via_slow, relay_slow, straight_slow) in slow.items():
            print(via_slow.line())
            print(relay_slow.line())
            print(straight_slow.line())
            print(
                f"{'':<44} with a {delay:g} ms backend: gateway/direct p50"
                f" {via_slow.pct(0.5) / straight_slow.pct(0.5):.2f}, gateway/relay p50"
                f" {via_slow.pct(0.5) / relay_slow.pct(0.5):.2f}"
            )
        print(f"machine load at end: {load()}")
        print("all targets met" if not missed else f"targets missed: {'; '.join(missed)}")
        return 1 if missed and args.strict else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", type=int, default=207, help="simulated Hubitat devices")
    parser.add_argument("--requests", type=int, default=200, help="measured calls per case")
    parser.add_argument(
        "--backend-latency",
        type=lambda text: [float(part) for part in text.split(",") if part],
        default=[5.0, 20.0],
        help="comma-separated simulated hub delays (ms) for the extra ratio rows; '' for none",
    )
    parser.add_argument("--keep", action="store_true", help="keep HA's config dir")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
