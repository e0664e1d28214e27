"""Smoke check: a real `hass` with the demo's three simulators, used as an MCP client would.

`python -m demo.smoke` (scripts/smoke runs it on the current HA release): starts the demo home and
a throw-away Home Assistant, adds the three backends through their config flows, then over the
gateway's HTTP endpoint: initialize, tools/list, get_state, set_state (a switch, read back), and
one backend tool call. Prints each step; exits non-zero on the first failure. Also fails when
HA's log has an error (a traceback through our code included) or a deprecation warning that
names mcp_gateway.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import shutil
import sys
import time
from typing import Any

import aiohttp

from .__main__ import add_backends
from .ha import HomeAssistantProcess
from .home import demo_home

ACCEPT = "application/json, text/event-stream"
# HA's wording when it reports a custom integration's use of something it will remove.
DEPRECATION = re.compile(
    r"deprecat|will stop working|please report|report (it|this) to", re.IGNORECASE
)


class SmokeError(RuntimeError):
    """A step did not do what a client expects."""


class McpSession:
    """A minimal Streamable HTTP client: enough to prove the gateway answers real requests."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
        self.ids = itertools.count(1)

    async def request(
        self, session: aiohttp.ClientSession, method: str, params: dict[str, Any] | None = None
    ) -> Any:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            body["params"] = params
        async with session.post(self.url, json=body, headers=self.headers) as response:
            text = await response.text()
            if response.status != 200:
                raise SmokeError(f"{method}: HTTP {response.status} {text[:300]}")
            if sid := response.headers.get("Mcp-Session-Id"):
                self.headers["Mcp-Session-Id"] = sid
            message = _message(text, response.content_type)
        if "error" in message:
            raise SmokeError(f"{method}: {message['error']}")
        return message["result"]

    async def notify(self, session: aiohttp.ClientSession, method: str) -> None:
        body = {"jsonrpc": "2.0", "method": method}
        async with session.post(self.url, json=body, headers=self.headers) as response:
            if response.status not in (200, 202):
                raise SmokeError(f"{method}: HTTP {response.status}")

    async def call(self, session: aiohttp.ClientSession, name: str, args: dict[str, Any]) -> Any:
        result = await self.request(session, "tools/call", {"name": name, "arguments": args})
        if result.get("isError"):
            raise SmokeError(f"{name}: {result.get('content')}")
        if (structured := result.get("structuredContent")) is not None:
            return structured
        return json.loads(result["content"][0]["text"])


def _message(text: str, content_type: str) -> dict[str, Any]:
    """The JSON-RPC answer, from a JSON body or the first SSE `data:` event."""
    if content_type == "text/event-stream":
        for line in text.splitlines():
            if line.startswith("data:"):
                return dict(json.loads(line[5:]))
        raise SmokeError("an SSE answer without data")
    return dict(json.loads(text))


def step(name: str, started: float) -> None:
    print(f"  ok  {name} ({time.monotonic() - started:.1f} s)", flush=True)


async def smoke() -> None:
    """Run every step; raises SmokeError on the first that fails."""
    started = time.monotonic()
    async with demo_home() as home:
        ha = HomeAssistantProcess(name="MCP Gateway smoke", extra_yaml="logger:\n  default: info\n")
        try:
            await ha.start()
            await ha.onboard()
            step("hass started and onboarded", started)
            entries = await add_backends(ha, home)
            step(f"backends added: {', '.join(e['title'] for e in entries)}", started)
            client = McpSession(f"{ha.base_url}/api/mcp_gateway", ha.token)
            async with aiohttp.ClientSession() as session:
                init = await client.request(
                    session,
                    "initialize",
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "mcp-gateway-smoke", "version": "1"},
                    },
                )
                await client.notify(session, "notifications/initialized")
                step(f"initialize: {init['serverInfo']['name']}", started)
                tools = {t["name"] for t in (await client.request(session, "tools/list"))["tools"]}
                missing = {"get_state", "set_state"} - tools
                if missing or len(tools) < 2 + len(entries):
                    raise SmokeError(f"tools/list: {sorted(tools)}")
                step(f"tools/list: {len(tools)} tools", started)
                states = await client.call(
                    session, "get_state", {"domain": ["switch"], "fields": ["entity_id", "state"]}
                )
                switches = [e for e in states["entities"] if e["state"] in ("on", "off")]
                if not switches:
                    raise SmokeError(f"get_state: no switch that is on or off: {states}")
                target = switches[0]
                step(f"get_state: {states['total']} switches", started)
                wanted = "off" if target["state"] == "on" else "on"
                await client.call(
                    session,
                    "set_state",
                    {"updates": [{"entity_id": target["entity_id"], "state": wanted}]},
                )
                await _wait_for_state(ha, target["entity_id"], wanted)
                step(f"set_state: {target['entity_id']} {target['state']} -> {wanted}", started)
                backend_tool = next(t for t in sorted(tools) if t.startswith("robine_wake"))
                listing = await client.call(session, backend_tool, {})
                names = [t["name"] for t in listing["tools"]]
                read = next(n for n in names if n.startswith(("get_", "list_")))
                await client.call(session, backend_tool, {"tool": read, "args": {}})
                step(f"backend tool call: {backend_tool} {read}", started)
        finally:
            ha.keep = True  # read its log (shutdown included) before the folder goes
            await ha.stop()
            log = ha.log.read_text(errors="replace") if ha.log.exists() else ""
            shutil.rmtree(ha.directory, ignore_errors=True)
    if complaints := complaints_about_us(log):
        raise SmokeError("HA's log names mcp_gateway:\n" + "\n\n".join(complaints))
    step("no error or deprecation warning names mcp_gateway", started)


# Where a log record starts: "2026-11-05 10:00:00.123 ERROR (MainThread) [logger] ...".
RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ (\w+) ", re.MULTILINE)
# Our domain, our package, or our issue tracker (HA names it when an entity of ours misbehaves).
OURS = re.compile(r"mcp[_-]gateway")


def complaints_about_us(log: str) -> list[str]:
    """Every error record (its traceback included) and every deprecation warning that names
    this integration."""
    starts = [m.start() for m in RECORD.finditer(log)] + [len(log)]
    found: list[str] = []
    for start, end in itertools.pairwise(starts):
        record = log[start:end].rstrip()
        match = RECORD.match(record)
        if match is None or not OURS.search(record):
            continue
        level = match.group(1)
        if level in ("ERROR", "CRITICAL") or (level == "WARNING" and DEPRECATION.search(record)):
            found.append(record)
    return found


async def _wait_for_state(ha: HomeAssistantProcess, entity_id: str, wanted: str) -> None:
    """The switch reaches the state (the backend round trip is asynchronous)."""
    for _ in range(40):
        state = await ha.get(f"/api/states/{entity_id}")
        if state["state"] == wanted:
            return
        await asyncio.sleep(0.25)  # polling a process we do not control
    raise SmokeError(f"set_state: {entity_id} stayed {state['state']}")


def main() -> None:
    """Entry point of `python -m demo.smoke`."""
    print(f"Smoke check on Home Assistant ({sys.executable})", flush=True)
    try:
        asyncio.run(smoke())
    except (SmokeError, StopIteration, KeyError) as err:
        print(f"smoke check FAILED: {err!r}", file=sys.stderr)
        sys.exit(1)
    print("smoke check passed")


if __name__ == "__main__":
    main()
