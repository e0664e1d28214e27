"""Handshakes: server/discover (2026-07-28), the initialize fallback, versions and sessions."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from aiohttp import web
import pytest

from custom_components.mcp_gateway.mcp.client import McpClient
from custom_components.mcp_gateway.mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpProtocolError,
)

from .conftest import FakeMcp, init_result, rpc_error, rpc_result

META_VERSION = "io.modelcontextprotocol/protocolVersion"


def modern_server(fake: FakeMcp, discover: dict[str, Any]) -> None:
    """Script `fake` as a 2026-07-28 server whose discover result is `discover`."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        method = body["method"]
        if request.headers.get("MCP-Protocol-Version") != body["params"]["_meta"][META_VERSION]:
            return rpc_error(body, -32020, "header/meta mismatch", status=400)
        if method == "server/discover":
            return rpc_result(body, discover)
        if method == "tools/call":
            return rpc_result(
                body,
                {"resultType": "complete", "content": [{"type": "text", "text": '{"ok": 1}'}]},
            )
        if method == "resources/read":
            return rpc_result(body, {"resultType": "complete", "contents": []})
        return rpc_error(body, -32601, "Method not found", status=404)

    fake.on_post = on_post


async def test_modern_server_uses_per_request_form(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """A server offering 2026-07-28: no initialize, no session, _meta and routing headers."""
    modern_server(
        fake,
        {
            "supportedVersions": ["2025-11-25", "2026-07-28"],
            "capabilities": {"tools": {}},
            "instructions": "Hi.",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
            "resultType": "complete",
        },
    )
    client = McpClient(http, fake.url, client_name="gw", client_version="1.2")
    assert await client.call("light.on", {"x": 1}) == {"ok": 1}
    await client.request("resources/read", {"uri": "hubitat://devices"})
    await client.close()

    assert client.modern is False  # close() forgets what was negotiated
    assert [s.rpc_method for s in fake.seen] == ["server/discover", "tools/call", "resources/read"]
    discover, call, read = fake.seen
    assert discover.headers["Mcp-Method"] == "server/discover"
    assert "Mcp-Name" not in discover.headers
    assert call.headers["MCP-Protocol-Version"] == "2026-07-28"
    assert call.headers["Mcp-Method"] == "tools/call"
    assert call.headers["Mcp-Name"] == "light.on"
    assert read.headers["Mcp-Name"] == "hubitat://devices"
    meta = call.body["params"]["_meta"]
    assert meta[META_VERSION] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientInfo"] == {"name": "gw", "version": "1.2"}
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert call.body["params"]["arguments"] == {"x": 1}
    assert all("Mcp-Session-Id" not in s.headers for s in fake.seen)


async def test_modern_server_info_and_capabilities(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Discover's serverInfo (plain field variant), capabilities and instructions are kept."""
    modern_server(
        fake,
        {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "plain", "version": "2"},
            "instructions": "Use tools wisely.",
        },
    )
    client = McpClient(http, fake.url)
    await client.connect()
    assert client.modern is True
    assert client.protocol_version == "2026-07-28"
    assert client.server_info == {"name": "plain", "version": "2"}
    assert client.capabilities == {"tools": {"listChanged": True}}
    assert client.instructions == "Use tools wisely."
    assert client.session_id is None


@pytest.mark.parametrize(
    "discover_answer",
    [
        pytest.param(lambda b: rpc_error(b, -32600, "Missing session", status=400), id="http-400"),
        pytest.param(lambda b: web.Response(status=404, text="nope"), id="http-404-plain"),
        pytest.param(lambda b: web.Response(status=405), id="http-405"),
        pytest.param(lambda b: rpc_error(b, -32601, "Method not found"), id="rpc-error-200"),
        pytest.param(
            lambda b: web.Response(text="{oops", content_type="application/json"), id="malformed"
        ),
        pytest.param(lambda b: rpc_result(b, {}), id="empty-result"),
        pytest.param(
            lambda b: rpc_result(b, {"supportedVersions": ["2025-11-25"]}), id="no-modern-version"
        ),
        pytest.param(
            lambda b: web.Response(text="<html></html>", content_type="text/html"), id="html"
        ),
    ],
)
async def test_discover_failure_falls_back_to_initialize(
    fake: FakeMcp, http: aiohttp.ClientSession, discover_answer: Any
) -> None:
    """Any refusal of server/discover leads to a clean legacy handshake."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "server/discover":
            return discover_answer(body)
        return await fake.default_post(request, body)

    fake.on_post = on_post
    client = McpClient(http, fake.url)
    result = await client.call_tool("echo", {"a": 1})
    assert result.data == {"a": 1}
    assert client.modern is False
    assert client.protocol_version == "2025-11-25"
    assert [s.rpc_method for s in fake.seen] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    # The legacy requests carry no modern _meta or routing headers.
    call = fake.seen[-1]
    assert "_meta" not in call.body["params"]
    assert "Mcp-Method" not in call.headers


async def test_discover_auth_failure_is_not_hidden(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """A 401 on discover is the answer: initialize would get the same."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(status=401)

    fake.on_post = on_post
    with pytest.raises(McpAuthError) as err:
        await McpClient(http, fake.url).connect()
    assert err.value.status == 401
    assert len(fake.seen) == 1


async def test_prefer_modern_false_skips_discover(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """With prefer_modern=False the first message is initialize."""
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.connect()
    assert [s.rpc_method for s in fake.seen] == ["initialize", "notifications/initialized"]


async def test_initialize_handshake(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """initialize offers 2025-11-25; afterwards the version and session headers go everywhere."""
    client = McpClient(http, fake.url, prefer_modern=False, client_name="gw", client_version="0.9")
    await client.connect()
    await client.connect()  # idempotent
    assert client.server_info == {"name": "fake", "version": "9.9"}
    assert client.instructions == "Be brief."
    assert client.capabilities == {"tools": {"listChanged": True}}
    assert client.session_id == "sess-1"
    await client.list_tools()

    init, initialized, listed = fake.seen
    assert init.body["params"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "gw", "version": "0.9"},
    }
    assert "MCP-Protocol-Version" not in init.headers
    assert "Mcp-Session-Id" not in init.headers
    assert init.headers["Accept"] == "application/json, text/event-stream"
    assert init.headers["Content-Type"] == "application/json"
    assert initialized.rpc_method == "notifications/initialized"
    assert "id" not in initialized.body
    for later in (initialized, listed):
        assert later.headers["MCP-Protocol-Version"] == "2025-11-25"
        assert later.headers["Mcp-Session-Id"] == "sess-1"


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
async def test_accepted_versions(fake: FakeMcp, http: aiohttp.ClientSession, version: str) -> None:
    """Every legacy revision we support is accepted and then announced in the header."""
    fake.version = version
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.list_tools()
    assert client.protocol_version == version
    assert fake.seen[-1].headers["MCP-Protocol-Version"] == version


async def test_unsupported_version_is_named(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """A version we do not speak fails the handshake, naming it."""
    fake.version = "2023-01-01"
    client = McpClient(http, fake.url, prefer_modern=False)
    with pytest.raises(McpProtocolError, match="2023-01-01"):
        await client.connect()
    assert client.protocol_version is None


async def test_concurrent_first_calls_initialize_once(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Ten calls racing on a fresh client share one handshake."""
    client = McpClient(http, fake.url)
    results = await asyncio.gather(*(client.call("echo", {"n": n}) for n in range(10)))
    assert results == [{"n": n} for n in range(10)]
    assert len(fake.posts("server/discover")) == 1
    assert len(fake.posts("initialize")) == 1
    assert len(fake.posts("tools/call")) == 10


def expiring_server(fake: FakeMcp, *, expire_always: bool = False) -> None:
    """Sessions numbered 1, 2, …; `fake.session_id` is the only live one. Unknown → 404.

    With `expire_always`, every tools/call is refused with 404 whatever its session.
    """
    counter = {"n": 0}

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "initialize":
            counter["n"] += 1
            fake.session_id = f"s{counter['n']}"
            return await fake.default_post(request, body)
        if body["method"] == "server/discover":
            return await fake.default_post(request, body)
        refuse_all = expire_always and body["method"] == "tools/call"
        if refuse_all or request.headers.get("Mcp-Session-Id") != fake.session_id:
            return rpc_error(body, -32001, "Session not found", status=404)
        return await fake.default_post(request, body)

    fake.on_post = on_post


async def test_session_expiry_reinitializes_and_retries_once(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """A 404 on the held session: initialize again, then send the same request once more."""
    expiring_server(fake)
    client = McpClient(http, fake.url, prefer_modern=False)
    assert await client.call("echo", {"v": 1}, kind="write") == {"v": 1}
    assert client.session_id == "s1"

    fake.session_id = "gone"  # the server restarted and forgot s1
    assert await client.call("echo", {"v": 2}, kind="write") == {"v": 2}
    assert client.session_id == "s2"
    calls = fake.posts("tools/call")
    assert [c.headers["Mcp-Session-Id"] for c in calls] == ["s1", "s1", "s2"]
    assert len(fake.posts("initialize")) == 2


async def test_second_404_surfaces(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """If the fresh session is refused too, the error surfaces after exactly one retry."""
    expiring_server(fake, expire_always=True)
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.connect()
    with pytest.raises(McpConnectionError) as err:
        await client.call("echo", {})
    assert err.value.status == 404
    assert len(fake.posts("tools/call")) == 2
    assert len(fake.posts("initialize")) == 2


async def test_concurrent_expiry_reinitializes_once(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Several calls hitting the same expired session start only one new session."""
    expiring_server(fake)
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.connect()
    fake.session_id = "gone"
    results = await asyncio.gather(*(client.call("echo", {"n": n}) for n in range(5)))
    assert results == [{"n": n} for n in range(5)]
    assert len(fake.posts("initialize")) == 2
    assert client.session_id == "s2"


async def test_close_deletes_session(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """close() sends DELETE with the session id; a 405 answer is fine; a second close is a no-op."""

    async def on_delete(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(status=405)

    fake.on_delete = on_delete
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.connect()
    await client.close()
    await client.close()
    deletes = [s for s in fake.seen if s.method == "DELETE"]
    assert len(deletes) == 1
    assert deletes[0].headers["Mcp-Session-Id"] == "sess-1"
    assert client.session_id is None
    assert client.protocol_version is None


async def test_close_without_session_sends_nothing(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """No session id from the server, so nothing to end."""
    fake.session_id = None
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.connect()
    await client.close()
    assert [s.method for s in fake.seen] == ["POST", "POST"]


async def test_close_survives_unreachable_server(http: aiohttp.ClientSession) -> None:
    """Closing must not raise when the server is gone."""
    app = web.Application()

    async def init(request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        if "id" not in body:
            return web.Response(status=202)
        return rpc_result(body, init_result(), **{"Mcp-Session-Id": "x"})

    app.router.add_post("/mcp", init)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    client = McpClient(http, f"http://127.0.0.1:{port}/mcp", prefer_modern=False)
    await client.connect()
    await runner.cleanup()
    await client.close()  # DELETE fails to connect: logged, not raised
    assert client.session_id is None


async def test_session_lost_right_after_initialize(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """A server that 404s its own brand-new session fails the handshake (no loop)."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "notifications/initialized":
            return web.Response(status=404)
        return await fake.default_post(request, body)

    fake.on_post = on_post
    client = McpClient(http, fake.url, prefer_modern=False)
    with pytest.raises(McpConnectionError, match="forgot the session"):
        await client.connect()
    assert client.protocol_version is None
    assert len(fake.posts("initialize")) == 1
