"""Attacks by a read-only user against a real Home Assistant: does HA stay responsive and bounded?

usage: .venv/bin/python -m bench.attack [--devices N] [--seconds S] [--keep]

Starts a real Home Assistant (loopback, demo/ha.py) with the gateway at its default settings
and a simulated Hubitat hub of N devices (so `get_state` answers are large), creates a
read-only user, and runs as that user:
- batch: a 1,000-item `get_state` batch without MCP-Protocol-Version, then the
  largest batches the gateway takes (20 items), back to back from 4 connections for S seconds;
- rate: single `get_state` calls as fast as 8 connections can send them for S seconds (the
  owner's calls in between must keep working);
- sse: 300 x 512 KiB messages posted to an HTTP+SSE session whose stream is never read,
  then the stream closed.
Throughout, the owner's authenticated `GET /api/` is timed every 100 ms (must stay < 1 s) and
HA's resident memory is sampled (it must come back to its baseline once sessions close).
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

from bench.gateway import simulator
from demo.ha import HomeAssistantProcess

LATENCY_BOUND = 1.0  # seconds, for HA's own GET /api/ under attack
# Memory "back to baseline": within this much of the baseline once the attack is over (the
# Python allocator keeps some freed arenas; an unbounded queue would keep +190 MiB).
MEMORY_SLACK_MIB = 25.0
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


async def settle_memory(pid: int, seconds: float = 10.0) -> float:
    """HA's memory after the attack, once its sessions had time to close."""
    await asyncio.sleep(seconds)  # a process we do not control: give it time to free
    return rss_mib(pid)


async def main(devices: int, seconds: float, keep: bool) -> int:
    async with (
        simulator(devices) as sim_url,
        HomeAssistantProcess(name="MCP attack", gateway_options={}, keep=keep) as ha,
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
        results: list[tuple[str, Probe]] = []
        results.append(await probed(ha, lambda: batch_attack(url, token, seconds)))
        await asyncio.sleep(61)  # the attacker's rate budget refills between attacks
        results.append(await probed(ha, lambda: rate_attack(url, token, owner, seconds)))
        await asyncio.sleep(61)
        results.append(await probed(ha, lambda: sse_attack(ha.base_url, token)))
        after = await settle_memory(pid)
        ok = True
        for report, probe in results:
            worst = max(probe.latencies or [0.0])
            verdict = "ok  " if worst < LATENCY_BOUND and not probe.failures else "FAIL"
            ok &= verdict == "ok  "
            print(f"{verdict} {report}\n       {probe.summary()}")
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
    arguments = parser.parse_args()
    sys.exit(asyncio.run(main(arguments.devices, arguments.seconds, arguments.keep)))
