"""Attacks by a read-only user against a real Home Assistant: does HA stay responsive and bounded?

usage: .venv/bin/python -m bench.attack [--devices N] [--seconds S] [--only A,B] [--keep]

Starts a real Home Assistant (loopback, demo/ha.py) with the gateway at its default settings
and a simulated Hubitat hub of N devices (so `get_state` answers are large), creates a
read-only user, and runs as that user:
- batch: a 1,000-item `get_state` batch without MCP-Protocol-Version, then the
  largest batches the gateway takes (20 items), back to back from 4 connections for S seconds;
- rate: single `get_state` calls as fast as 8 connections can send them for S seconds (the
  owner's calls in between must keep working);
- sse: 300 x 512 KiB messages posted to an HTTP+SSE session whose stream is never read,
  then the stream closed;
- llm: 300 tool calls through HA's LLM tool path (the "MCP Gateway" LLM API, as a conversation
  agent calls it; bench/llm_door) from 8 connections: past the per-user limit (120 a minute),
  every call must be refused as rate_limited;
- huge: the hub (a spoofed one on a plain-HTTP LAN) answers every tools/call with a 50 MiB
  result, twice through the gateway: each must be refused (answer_too_large) after reading at
  most the cap, and HA's memory must come back within 10 MiB of what it was before.
Throughout, the owner's authenticated `GET /api/` is timed every 100 ms (must stay < 1 s) and
HA's resident memory is sampled (it must come back to its baseline once sessions close). Each
attack's line shows HA's memory before it and after it settled.
Prints the figures and the verdicts; exits non-zero when a bound is broken.
Needs the frontend (scripts/setup --demo).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
import contextlib
from dataclasses import dataclass, field
import json
from pathlib import Path
import sys
import time
from typing import Any

import aiohttp
from yarl import URL

from bench.gateway import simulator
from demo.ha import HomeAssistantProcess

LATENCY_BOUND = 1.0  # seconds, for HA's own GET /api/ under attack
# Memory "back to baseline": within this much of the baseline once the attack is over (the
# Python allocator keeps some freed arenas; an unbounded queue would keep +190 MiB).
MEMORY_SLACK_MIB = 25.0
# The huge-answer attack: what the hub answers, and how close HA's memory must come back.
HUGE_ANSWER_BYTES = 50 * 1024 * 1024
HUGE_MEMORY_SLACK_MIB = 10.0
LLM_CALLS = 300
DEFAULT_RATE_LIMIT = 120  # per user and minute, the gateway's default
LLM_DOOR = Path(__file__).parent / "llm_door"
ATTACKS = ("batch", "rate", "sse", "llm", "huge")
PROBE_INTERVAL = 0.1
LEGACY_HEADERS = {"Accept": "application/json", "Content-Type": "application/json"}
READ_ONLY_GROUP = "system-read-only"


@dataclass
class Probe:
    """HA's own latency and memory, sampled while an attack runs."""

    base_url: str
    token: str
    pid: int
    latencies: list[float] = field(default_factory=list)
    memory: list[float] = field(default_factory=list)
    failures: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        timeout = aiohttp.ClientTimeout(total=10)
        async with aiohttp.ClientSession(headers=headers, timeout=timeout) as session:
            while not stop.is_set():
                began = time.perf_counter()
                try:
                    async with session.get(f"{self.base_url}/api/") as response:
                        await response.read()
                        if response.status != 200:
                            self.failures += 1
                except (aiohttp.ClientError, TimeoutError):
                    self.failures += 1
                self.latencies.append(time.perf_counter() - began)
                self.memory.append(rss_mib(self.pid))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), PROBE_INTERVAL)

    def summary(self) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p50 = ordered[len(ordered) // 2] * 1000
        worst = ordered[-1] * 1000
        return (
            f"GET /api/: {len(self.latencies)} probes, p50 {p50:.1f} ms, max {worst:.1f} ms, "
            f"{self.failures} failed; HA memory peak {max(self.memory or [0]):.1f} MiB"
        )


def rss_mib(pid: int) -> float:
    """Resident memory of a process (Linux), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def probed(
    ha: HomeAssistantProcess, attack: Callable[[], Awaitable[str]]
) -> tuple[str, Probe]:
    """Run an attack while probing HA; the attack's own report and the probe."""
    assert ha.process is not None
    probe = Probe(ha.base_url, str(ha.access_token or ha.long_lived_token), ha.process.pid)
    stop = asyncio.Event()
    task = asyncio.create_task(probe.run(stop))
    try:
        report = await attack()
    finally:
        stop.set()
        await task
    return report, probe


async def read_only_token(ha: HomeAssistantProcess) -> str:
    """A read-only user with a password, logged in through HA's login flow: its token."""
    user = await ha.websocket_command(
        {"type": "config/auth/create", "name": "Attacker", "group_ids": [READ_ONLY_GROUP]}
    )
    user_id = user["user"]["id"]
    await ha.websocket_command(
        {
            "type": "config/auth_provider/homeassistant/create",
            "user_id": user_id,
            "username": "attacker",
            "password": "attacker-password",
        }
    )
    async with aiohttp.ClientSession() as session:
        flow = await _json(
            session.post(
                f"{ha.base_url}/auth/login_flow",
                json={
                    "client_id": ha.client_id,
                    "handler": ["homeassistant", None],
                    "redirect_uri": f"{ha.client_id}/",
                },
            )
        )
        done = await _json(
            session.post(
                f"{ha.base_url}/auth/login_flow/{flow['flow_id']}",
                json={
                    "client_id": ha.client_id,
                    "username": "attacker",
                    "password": "attacker-password",
                },
            )
        )
        tokens = await _json(
            session.post(
                f"{ha.base_url}/auth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": done["result"],
                    "client_id": ha.client_id,
                },
            )
        )
    return str(tokens["access_token"])


async def _json(request: Any) -> Any:
    async with request as response:
        text = await response.text()
        if response.status >= 400:
            raise RuntimeError(f"{response.url}: HTTP {response.status}: {text[:200]}")
        return json.loads(text)


def _call(request_id: int, name: str = "get_state") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}},
    }


@contextlib.asynccontextmanager
async def attacker(token: str) -> AsyncIterator[aiohttp.ClientSession]:
    headers = {"Authorization": f"Bearer {token}", **LEGACY_HEADERS}
    async with aiohttp.ClientSession(
        headers=headers, timeout=aiohttp.ClientTimeout(total=120)
    ) as session:
        yield session


async def batch_attack(url: str, token: str, seconds: float) -> str:
    statuses: Counter[int] = Counter()
    reply_bytes: list[int] = []
    async with attacker(token) as session:
        async with session.post(url, json=[_call(i) for i in range(1000)]) as response:
            await response.read()
            statuses[response.status] += 1
        deadline = time.monotonic() + seconds

        async def worker() -> None:
            while time.monotonic() < deadline:
                async with session.post(url, json=[_call(i) for i in range(20)]) as response:
                    body = await response.read()
                    statuses[response.status] += 1
                    reply_bytes.append(len(body))
                    if response.status == 429:
                        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))

        await asyncio.gather(*(worker() for _ in range(4)))
    return (
        f"batch: HTTP statuses {dict(sorted(statuses.items()))}, largest reply "
        f"{max(reply_bytes or [0]) / 1024:.0f} KiB"
    )


async def rate_attack(url: str, token: str, owner: str, seconds: float) -> str:
    statuses: Counter[int] = Counter()
    owner_statuses: Counter[int] = Counter()
    deadline = time.monotonic() + seconds
    async with attacker(token) as session, attacker(owner) as owner_session:

        async def worker() -> None:
            while time.monotonic() < deadline:
                async with session.post(url, json=_call(1)) as response:
                    await response.read()
                    statuses[response.status] += 1

        async def owner_calls() -> None:
            while time.monotonic() < deadline:
                async with owner_session.post(url, json=_call(1, "list_backends")) as response:
                    await response.read()
                    owner_statuses[response.status] += 1
                await asyncio.sleep(1)

        await asyncio.gather(*(worker() for _ in range(8)), owner_calls())
    return (
        f"rate: attacker statuses {dict(sorted(statuses.items()))} in {seconds:.0f} s; "
        f"owner statuses meanwhile {dict(sorted(owner_statuses.items()))}"
    )


async def sse_attack(base_url: str, token: str) -> str:
    statuses: Counter[int] = Counter()
    pad = "x" * 512 * 1024
    async with attacker(token) as session:
        stream = await session.get(f"{base_url}/api/mcp_gateway/sse")
        line = b""
        while not line.startswith(b"data: "):
            line = await stream.content.readline()
        endpoint = base_url + line[len(b"data: ") :].strip().decode()
        for number in range(300):
            message = {"jsonrpc": "2.0", "id": number, "method": "ping", "params": {"pad": pad}}
            async with session.post(endpoint, json=message) as response:
                await response.read()
                statuses[response.status] += 1
        stream.close()
    return f"sse: 300 x 512 KiB posts to an unread session: HTTP {dict(sorted(statuses.items()))}"


async def llm_flood(base_url: str, token: str) -> tuple[str, bool]:
    """LLM_CALLS get_state calls through HA's LLM tool path as fast as 8 connections go."""
    outcomes: Counter[str] = Counter()
    pending = iter(range(LLM_CALLS))
    began = time.monotonic()
    async with attacker(token) as session:

        async def worker() -> None:
            for _ in pending:
                body = {"tool": "get_state", "args": {"entity_ids": ["sun.sun"]}}
                async with session.post(f"{base_url}/api/bench_llm_door", json=body) as response:
                    answer = await response.json()
                error = answer.get("error") if isinstance(answer, dict) else None
                code = error.get("code") if isinstance(error, dict) else None
                outcomes[str(code or "answered")] += 1

        await asyncio.gather(*(worker() for _ in range(8)))
    elapsed = time.monotonic() - began
    # What the limit lets through in that time: the full bucket, plus what refilled meanwhile.
    allowed = DEFAULT_RATE_LIMIT + int(elapsed * DEFAULT_RATE_LIMIT / 60) + 1
    passed = LLM_CALLS - outcomes["rate_limited"]
    ok = passed <= allowed and outcomes["rate_limited"] > 0
    report = (
        f"llm: {LLM_CALLS} calls through HA's LLM API in {elapsed:.2f} s: "
        f"{dict(sorted(outcomes.items()))} ({passed} ran; the limit allows {allowed})"
    )
    return report, ok


async def set_faults(sim_url: str, faults: dict[str, Any]) -> None:
    """Flip the hub simulator's fault switches (its /_sim/faults control path)."""
    control = str(URL(sim_url).with_path("/_sim/faults").with_query(None))
    async with aiohttp.ClientSession() as session, session.post(control, json=faults) as response:
        response.raise_for_status()


async def huge_answer_attack(url: str, token: str, sim_url: str) -> tuple[str, bool]:
    """Two rounds of a 50 MiB hub answer through the gateway."""
    async with attacker(token) as session:

        async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            message = _call(1, name)
            message["params"]["arguments"] = arguments
            async with session.post(url, json=message) as response:
                answer = await response.json()
            result: dict[str, Any] = answer["result"]
            return result

        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        async with session.post(url, json=listing) as response:
            tools = (await response.json())["result"]["tools"]
        hub = next(tool["name"] for tool in tools if tool["name"].startswith("hubitat"))
        read = {"tool": "hub_get_info", "args": {}}
        await call(hub, read)  # the hub's catalog, while it behaves
        await set_faults(sim_url, {"huge_answer": HUGE_ANSWER_BYTES})
        codes: list[str] = []
        try:
            for _ in range(2):
                result = await call(hub, read)
                text = result["content"][0]["text"] if result.get("content") else ""
                try:
                    codes.append(str(json.loads(text)["error"]["code"]))
                except (ValueError, KeyError, TypeError):
                    codes.append("answered" if not result.get("isError") else "error")
        finally:
            await set_faults(sim_url, {"huge_answer": 0})
    ok = codes == ["answer_too_large"] * 2
    return f"huge: two {HUGE_ANSWER_BYTES >> 20} MiB hub answers through the gateway: {codes}", ok


async def settle_memory(pid: int, seconds: float = 10.0) -> float:
    """HA's memory after the attack, once its sessions had time to close."""
    await asyncio.sleep(seconds)  # a process we do not control: give it time to free
    return rss_mib(pid)


async def main(devices: int, seconds: float, keep: bool, only: tuple[str, ...]) -> int:
    async with (
        simulator(devices) as sim_url,
        HomeAssistantProcess(
            name="MCP attack",
            gateway_options={},
            extra_yaml="bench_llm_door:\n",
            extra_components={"bench_llm_door": LLM_DOOR},
            keep=keep,
        ) as ha,
    ):
        assert ha.process is not None
        await ha.config_flow_steps("mcp_gateway", {"next_step_id": "hubitat"}, {"url": sim_url})
        await asyncio.sleep(5)  # the hub's entities appear with its first poll
        token = await read_only_token(ha)
        owner = str(ha.access_token or ha.long_lived_token)
        url = f"{ha.base_url}/api/mcp_gateway"
        pid = ha.process.pid
        baseline = await settle_memory(pid, 2)
        print(f"== HA at {ha.base_url} (log {ha.log}); memory baseline {baseline:.1f} MiB")

        async def plain(attack: Callable[[], Awaitable[str]]) -> tuple[str, bool]:
            return await attack(), True

        runs: dict[str, Callable[[], Awaitable[tuple[str, bool]]]] = {
            "batch": lambda: plain(lambda: batch_attack(url, token, seconds)),
            "rate": lambda: plain(lambda: rate_attack(url, token, owner, seconds)),
            "sse": lambda: plain(lambda: sse_attack(ha.base_url, token)),
            "llm": lambda: llm_flood(ha.base_url, token),
            "huge": lambda: huge_answer_attack(url, token, sim_url),
        }
        ok = True
        for number, name in enumerate(only):
            if number:
                await asyncio.sleep(61)  # the attacker's rate budget refills between attacks
            before = await settle_memory(pid, 2)
            outcome: list[bool] = []

            async def attack(name: str = name, outcome: list[bool] = outcome) -> str:
                report, passed = await runs[name]()
                outcome.append(passed)
                return report

            report, probe = await probed(ha, attack)
            after = await settle_memory(pid)
            worst = max(probe.latencies or [0.0])
            passed = outcome[0] and worst < LATENCY_BOUND and not probe.failures
            memory = f"HA memory {before:.1f} MiB before, {after:.1f} MiB after"
            if name == "huge":
                grown = after - before
                passed &= grown <= HUGE_MEMORY_SLACK_MIB
                memory += f" ({grown:+.1f} MiB; bound +{HUGE_MEMORY_SLACK_MIB:.0f} MiB)"
            ok &= passed
            print(f"{'ok  ' if passed else 'FAIL'} {report}\n       {probe.summary()}; {memory}")
        after = await settle_memory(pid)
        grown = after - baseline
        verdict = "ok  " if grown <= MEMORY_SLACK_MIB else "FAIL"
        ok &= verdict == "ok  "
        print(
            f"{verdict} memory: baseline {baseline:.1f} MiB, after the attacks "
            f"{after:.1f} MiB ({grown:+.1f} MiB; bound +{MEMORY_SLACK_MIB:.0f} MiB)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument(
        "--only", default=",".join(ATTACKS), help=f"attacks to run, of {', '.join(ATTACKS)}"
    )
    arguments = parser.parse_args()
    chosen = tuple(name for name in arguments.only.split(",") if name)
    if unknown := set(chosen) - set(ATTACKS):
        parser.error(f"unknown attacks: {', '.join(sorted(unknown))}")
    sys.exit(asyncio.run(main(arguments.devices, arguments.seconds, arguments.keep, chosen)))
