"""Fixtures for the MCP client tests: a scriptable local MCP endpoint and the SDK servers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from dataclasses import dataclass, field
import json
from pathlib import Path
import socket
import subprocess
import sys
import time
from typing import Any

import aiohttp
from aiohttp import web
import pytest
import pytest_socket

Handler = Callable[[web.Request, Any], Awaitable[web.StreamResponse]]

SDK_SERVER = Path(__file__).with_name("sdk_server.py")


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """These tests talk HTTP for real; the HA plugin still limits them to 127.0.0.1."""


@dataclass
class Seen:
    """One HTTP request the fake server received."""

    method: str
    headers: dict[str, str]
    query: dict[str, str]
    body: Any
    size: int

    @property
    def rpc_method(self) -> str | None:
        """The JSON-RPC method of a POST body."""
        return self.body.get("method") if isinstance(self.body, dict) else None


def rpc_result(body: dict[str, Any], result: dict[str, Any], **headers: str) -> web.Response:
    """A JSON response carrying `result` for the request in `body`."""
    return web.json_response(
        {"jsonrpc": "2.0", "id": body["id"], "result": result}, headers=headers
    )


def rpc_error(
    body: dict[str, Any] | None, code: int, message: str, status: int = 200, data: Any = None
) -> web.Response:
    """A JSON-RPC error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return web.json_response(
        {"jsonrpc": "2.0", "id": body.get("id") if body else None, "error": error},
        status=status,
    )


def init_result(version: str = "2025-11-25") -> dict[str, Any]:
    """An initialize result."""
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": True}},
        "serverInfo": {"name": "fake", "version": "9.9"},
        "instructions": "Be brief.",
    }


def sse(*events: str) -> bytes:
    """Encode raw SSE event blocks (each without its blank line) into a stream body."""
    return b"".join(event.encode() + b"\n\n" for event in events)


def data_event(message: dict[str, Any], event_id: str | None = None) -> str:
    """One SSE event carrying a JSON-RPC message."""
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: message\ndata: {json.dumps(message)}"


@dataclass
class FakeMcp:
    """A local MCP endpoint whose behaviour each test scripts.

    By default it speaks legacy MCP (refuses server/discover with 400, answers initialize with a
    session id, acks notifications, and answers `tools/call` of `echo`). A test replaces
    `on_post` (and `on_get`, `on_delete`) with its own coroutine `(request, body) -> response`.
    """

    url: str = ""
    seen: list[Seen] = field(default_factory=list)
    session_id: str | None = "sess-1"
    version: str = "2025-11-25"
    release: asyncio.Event = field(default_factory=asyncio.Event)
    on_post: Handler | None = None
    on_get: Handler | None = None
    on_delete: Handler | None = None

    def posts(self, rpc_method: str | None = None) -> list[Seen]:
        """POSTs received, optionally only those of one JSON-RPC method."""
        return [
            s
            for s in self.seen
            if s.method == "POST" and (rpc_method is None or s.rpc_method == rpc_method)
        ]

    async def default_post(self, request: web.Request, body: Any) -> web.StreamResponse:
        """Legacy behaviour shared by most tests."""
        method = body.get("method")
        if method == "server/discover":
            return rpc_error(body, -32600, "Missing session ID", status=400)
        if "id" not in body:
            return web.Response(status=202)
        if method == "initialize":
            headers = {"Mcp-Session-Id": self.session_id} if self.session_id else {}
            return rpc_result(body, init_result(self.version), **headers)
        if method == "tools/call":
            args = body["params"].get("arguments", {})
            return rpc_result(body, {"content": [{"type": "text", "text": json.dumps(args)}]})
        if method == "tools/list":
            return rpc_result(body, {"tools": [{"name": "echo", "inputSchema": {}}]})
        return rpc_error(body, -32601, f"Method not found: {method}")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self.seen.append(
            Seen(request.method, dict(request.headers), dict(request.query), body, len(raw))
        )
        if request.method == "POST":
            return await (self.on_post or self.default_post)(request, body)
        if request.method == "GET" and self.on_get:
            return await self.on_get(request, body)
        if request.method == "DELETE":
            if self.on_delete:
                return await self.on_delete(request, body)
            return web.Response(status=200)
        return web.Response(status=405)


@pytest.fixture
async def fake() -> AsyncGenerator[FakeMcp]:
    """A FakeMcp listening on 127.0.0.1."""
    server = FakeMcp()
    app = web.Application()
    app.router.add_route("*", "/mcp", server.handle)
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    server.url = f"http://127.0.0.1:{port}/mcp"
    yield server
    server.release.set()  # let handlers parked on it finish before shutdown
    await runner.cleanup()


@pytest.fixture
async def http() -> AsyncGenerator[aiohttp.ClientSession]:
    """A plain aiohttp session (production passes Home Assistant's shared one)."""
    async with aiohttp.ClientSession() as session:
        yield session


async def stream_response(
    request: web.Request, body: bytes, *, close: bool = False
) -> web.StreamResponse:
    """Send `body` as an SSE response, then end it (or drop the connection when `close`)."""
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    await resp.write(body)
    if close:
        assert request.transport is not None
        request.transport.close()
        return resp
    await resp.write_eof()
    return resp


# ---------------------------------------------------------------------------------------------
# The official SDK server, as a subprocess
# ---------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], limit: float = 30.0) -> None:
    """Poll until the subprocess listens: it offers no other readiness signal we can await."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"SDK server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"SDK server did not listen on {port} within {limit} s")


def _sdk_server(*flags: str) -> Generator[str]:
    # Module-scoped, so it runs before the per-test socket_enabled fixture: open up briefly.
    pytest_socket.enable_socket()
    try:
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, str(SDK_SERVER), str(port), *flags],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for_port(port, proc)
        except BaseException:
            _stop(proc)
            raise
    finally:
        pytest_socket.disable_socket(allow_unix_socket=True)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="module")
def sdk_sse_url() -> Generator[str]:
    """The SDK server with sessions, answering over SSE."""
    yield from _sdk_server()


@pytest.fixture(scope="module")
def sdk_json_url() -> Generator[str]:
    """The SDK server, stateless, answering plain JSON."""
    yield from _sdk_server("--stateless", "--json")
