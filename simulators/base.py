"""Pieces every simulator shares: JSON-RPC replies, a controllable clock, fault switches, stats.

Each simulator owns its transport rules (versions, sessions, auth); this module only holds what
is the same for all of them.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, MutableSequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
import json
import random
import time
from typing import Any, cast

from aiohttp import web

JSONRPC = "2.0"

# JSON-RPC error codes used across MCP servers.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def rpc_result(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC success response.

    JSON-RPC 2.0 specification, section 5 (Response object).
    """
    return {"jsonrpc": JSONRPC, "id": request_id, "result": result}


def rpc_error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response (data only when given).

    JSON-RPC 2.0 specification, section 5.1 (Error object).
    """
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC, "id": request_id, "error": error}


class RpcFailure(Exception):
    """Raised inside a handler to answer with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None, *, status: int = 200) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.status = status


class SimClock:
    """Wall-clock time that tests can freeze and move, so nothing in a test needs to sleep."""

    def __init__(self) -> None:
        self._frozen: datetime | None = None
        self._offset = timedelta()

    def now(self) -> datetime:
        """The simulated current time, timezone-aware (UTC).

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        if self._frozen is not None:
            return self._frozen
        return datetime.now(UTC) + self._offset

    def set(self, when: datetime) -> None:
        """Freeze the clock at `when` (aware datetime).

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        self._frozen = when.astimezone(UTC)

    def advance(self, seconds: float) -> None:
        """Move the clock forward, frozen or running.

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        if self._frozen is not None:
            self._frozen += timedelta(seconds=seconds)
        else:
            self._offset += timedelta(seconds=seconds)

    def resume(self) -> None:
        """Let a frozen clock run again from where it stands.

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        if self._frozen is not None:
            self._offset = self._frozen - datetime.now(UTC)
            self._frozen = None

    def monotonic(self) -> float:
        """Seconds on the simulated timeline, for rate windows and delays.

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        return self.now().timestamp()


@dataclass
class Faults:
    """Switches that make a simulator misbehave the way real devices and networks do."""

    latency: float = 0.0  # seconds added before every answer
    error_rate: float = 0.0  # share of requests answered with HTTP 500
    malformed: bool = False  # answer with a body that is not JSON
    hang: bool = False  # never answer (the client's timeout must fire)
    revoked: bool = False  # every credential is refused (401)
    offline: bool = False  # close the connection without an answer
    # A tools/call runs, then the connection drops before its answer (a write that happened
    # but that the client never hears of).
    drop_answer: bool = False
    # Answer every tools/call with a valid JSON-RPC result this many bytes long, streamed
    # without a length (a spoofed or faulty server on a plain-HTTP LAN); 0 is off.
    huge_answer: int = 0

    def update(self, values: dict[str, Any]) -> None:
        """Set switches from a dict (unknown names are an error, to catch typos in tests).

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        for name, value in values.items():
            if not hasattr(self, name):
                raise KeyError(name)
            setattr(self, name, type(getattr(self, name))(value))

    def reset(self) -> None:
        """Back to a healthy device.

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        self.update(Faults().__dict__)


@dataclass
class Stats:
    """What crossed the wire, so tests and benchmarks can count round trips and bytes."""

    http_requests: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    tools: Counter[str] = field(default_factory=Counter)

    def reset(self) -> None:
        """Zero every counter.

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        self.http_requests = self.bytes_in = self.bytes_out = 0
        self.methods.clear()
        self.tools.clear()

    def record_message(self, message: Any) -> None:
        """Count one JSON-RPC message by method (and tool name for tools/call).

        Simulator infrastructure shared by the three simulators, no upstream counterpart.
        """
        if not isinstance(message, dict):
            return
        method = message.get("method")
        if isinstance(method, str):
            self.methods[method] += 1
            params = message.get("params")
            if method == "tools/call" and isinstance(params, dict):
                self.tools[str(params.get("name"))] += 1


FAULTS = web.AppKey("faults", Faults)
STATS = web.AppKey("stats", Stats)
CLOCK = web.AppKey("clock", SimClock)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def fault_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Apply the fault switches and count traffic; the `/_sim/` control paths are exempt.

    Simulator infrastructure shared by the three simulators, no upstream counterpart. The faults
    stand for what a network or a device does wrong.
    """
    if request.path.startswith("/_sim/"):
        return await handler(request)
    faults = request.app[FAULTS]
    stats = request.app[STATS]
    stats.http_requests += 1
    stats.bytes_in += request.content_length or 0
    if faults.latency:
        await asyncio.sleep(faults.latency)
    if faults.hang:
        await asyncio.sleep(3600)
    if faults.offline:
        transport = request.transport
        if transport is not None:
            transport.close()
        raise web.HTTPServiceUnavailable
    if faults.error_rate and random.random() < faults.error_rate:
        return web.Response(status=500, text="Internal Server Error")
    if faults.malformed:
        return web.Response(status=200, text="{not json", content_type="application/json")
    call = await _tool_call(request) if faults.huge_answer or faults.drop_answer else None
    if call is not None and faults.huge_answer:
        return await _huge_answer(request, call.get("id"), faults.huge_answer)
    response = await handler(request)
    if call is not None and faults.drop_answer:
        if (transport := request.transport) is not None:
            transport.close()
        raise web.HTTPServiceUnavailable
    if isinstance(response, web.Response) and response.body is not None:
        body = response.body
        stats.bytes_out += len(body) if isinstance(body, bytes | bytearray) else 0
    return response


async def _tool_call(request: web.Request) -> dict[str, Any] | None:
    """The JSON-RPC tools/call a POST carries, if it is one (the body stays readable)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(await request.read())
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return message
    return None


async def _huge_answer(request: web.Request, request_id: Any, size: int) -> web.StreamResponse:
    """A tools/call result `size` bytes long, chunked, produced as it is sent (never held)."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode()
    head += b',"result":{"content":[{"type":"text","text":"'
    tail = b'"}]}}'
    chunk = b"x" * 65536
    try:
        await response.write(head)
        for _ in range(max(0, size - len(head) - len(tail)) // len(chunk)):
            await response.write(chunk)
        await response.write(tail)
        await response.write_eof()
    except (ConnectionResetError, RuntimeError):
        pass  # the client stopped reading: what a capped client does
    return response


async def _control_faults(request: web.Request) -> web.Response:
    """POST /_sim/faults {switches} sets fault switches; GET reads them (demo, manual tests)."""
    faults = request.app[FAULTS]
    if request.method == "POST":
        try:
            faults.update(await request.json())
        except (KeyError, ValueError, TypeError) as err:
            return web.json_response({"error": f"bad fault switch: {err}"}, status=400)
    return web.json_response(faults.__dict__)


async def _control_stats(request: web.Request) -> web.Response:
    stats = request.app[STATS]
    if request.method == "POST":
        stats.reset()
    return web.json_response(
        {
            "http_requests": stats.http_requests,
            "bytes_in": stats.bytes_in,
            "bytes_out": stats.bytes_out,
            "methods": dict(stats.methods),
            "tools": dict(stats.tools),
        }
    )


def make_app(clock: SimClock | None = None) -> web.Application:
    """An aiohttp app with the shared fault/stats middleware and control routes installed.

    Simulator infrastructure shared by the three simulators, no upstream counterpart.
    """
    app = web.Application(middlewares=[fault_middleware], client_max_size=4 * 1024 * 1024)
    app[FAULTS] = Faults()
    app[STATS] = Stats()
    app[CLOCK] = clock or SimClock()
    app.router.add_route("*", "/_sim/faults", _control_faults)
    app.router.add_route("*", "/_sim/stats", _control_stats)
    return app


def parse_json_body(raw: bytes) -> Any:
    """Parse a request body, turning bad JSON into a JSON-RPC parse error.

    JSON-RPC 2.0 specification, section 5.1: -32700 Parse error.
    """
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RpcFailure(PARSE_ERROR, f"Parse error: {err}") from err


def iso(when: datetime) -> str:
    """ISO-8601 with offset, seconds precision.

    Simulator infrastructure shared by the three simulators, no upstream counterpart.
    """
    return when.isoformat(timespec="seconds")


def standalone_parser(description: str, default_port: int) -> argparse.ArgumentParser:
    """The command-line options every simulator accepts when run on its own.

    Simulator infrastructure shared by the three simulators, no upstream counterpart.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (loopback only)")
    parser.add_argument("--port", type=int, default=default_port)
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated population")
    return parser


type AppHook = Callable[[web.Application], Awaitable[None]]
"""A handler of an app signal: aiohttp awaits it with the app."""


# aiohttp 3.11 (HA 2025.4's) annotates its signals for aiosignal 1.3 (`Signal[Callable[[
# Application], ...]]`); aiosignal 1.4, generic over the handler's parameters, reads that as a
# handler taking a handler. Every aiohttp awaits each handler with the app: these say so once.
def on_startup(app: web.Application, hook: AppHook) -> None:
    """Await `hook` with the app once it starts (aiohttp's app.on_startup).

    Simulator infrastructure, no upstream counterpart.
    """
    cast("MutableSequence[AppHook]", app.on_startup).append(hook)


def on_shutdown(app: web.Application, hook: AppHook) -> None:
    """Await `hook` with the app when it shuts down, before open requests are waited for
    (aiohttp's app.on_shutdown).

    Simulator infrastructure, no upstream counterpart.
    """
    cast("MutableSequence[AppHook]", app.on_shutdown).append(hook)


def on_cleanup(app: web.Application, hook: AppHook) -> None:
    """Await `hook` with the app once it has stopped (aiohttp's app.on_cleanup).

    Simulator infrastructure, no upstream counterpart.
    """
    cast("MutableSequence[AppHook]", app.on_cleanup).append(hook)


def run_standalone(app: web.Application, host: str, port: int, banner: str) -> None:
    """Serve `app` until interrupted, printing one line when it listens.

    Simulator infrastructure shared by the three simulators, no upstream counterpart.
    """

    async def _announce(_: web.Application) -> None:
        print(f"{banner} listening on http://{host}:{port}", flush=True)

    on_startup(app, _announce)
    web.run_app(app, host=host, port=port, print=None, handle_signals=True)


def elapsed_ms(start: float) -> float:
    """Milliseconds since a time.perf_counter() reading.

    Simulator infrastructure shared by the three simulators, no upstream counterpart.
    """
    return (time.perf_counter() - start) * 1000
