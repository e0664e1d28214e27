"""Our client against the official MCP Python SDK server (an independent implementation)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import aiohttp
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from mcp.types import LATEST_PROTOCOL_VERSION
import pytest

from custom_components.mcp_gateway.mcp.client import McpClient
from custom_components.mcp_gateway.mcp.errors import McpToolError


def _recording_session() -> tuple[aiohttp.ClientSession, list[tuple[str, dict[str, str]]]]:
    """A session that records the method and headers of every request it sends."""
    sent: list[tuple[str, dict[str, str]]] = []

    async def on_start(session: aiohttp.ClientSession, ctx: SimpleNamespace, params: Any) -> None:
        sent.append((params.method, dict(params.headers)))

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_start)
    return aiohttp.ClientSession(trace_configs=[trace]), sent


async def test_sessionful_sse_server(sdk_sse_url: str) -> None:
    """List, call, structured output, isError, one session throughout, DELETE on close."""
    session, sent = _recording_session()
    async with session:
        client = McpClient(session, sdk_sse_url)
        await client.connect()
        assert client.protocol_version == LATEST_PROTOCOL_VERSION  # the SDK server's newest
        assert client.modern is False
        assert client.session_id
        assert client.server_info["name"] == "sdk-test-server"
        assert client.instructions == "Test server for the MCP Gateway client."
        assert "tools" in client.capabilities

        tools = await client.list_tools()
        assert sorted(t["name"] for t in tools) == ["add", "echo", "fail", "info"]

        assert await client.call("add", {"a": 2, "b": 40}) == {"result": 42}
        result = await client.call_tool("echo", {"text": "héllo"})
        assert result.text == "héllo"
        assert result.is_error is False
        info = await client.call_tool("info", {"name": "kitchen"})
        assert info.structured == {"name": "kitchen", "length": 7}
        assert info.data == {"name": "kitchen", "length": 7}

        with pytest.raises(McpToolError) as err:
            await client.call("fail", {"message": "boom"}, kind="write")
        assert "boom" in str(err.value)
        assert err.value.result.is_error is True

        session_id = client.session_id
        await client.close()

    methods = [method for method, _ in sent]
    assert methods[0] == "POST"  # server/discover, refused: SDK 1.x needs a session
    assert methods[-1] == "DELETE"
    after_init = [headers for _, headers in sent[2:]]  # past discover and initialize
    assert after_init
    assert all(h.get("Mcp-Session-Id") == session_id for h in after_init)
    assert all(h.get("MCP-Protocol-Version") == LATEST_PROTOCOL_VERSION for h in after_init)


async def test_sdk_session_expiry_reinitializes(
    sdk_sse_url: str, http: aiohttp.ClientSession
) -> None:
    """When the real server forgets our session, the client starts a new one and carries on."""
    client = McpClient(http, sdk_sse_url)
    await client.connect()
    first = client.session_id
    assert first
    # End the session behind the client's back, as a server restart would.
    async with http.delete(
        sdk_sse_url,
        headers={"Mcp-Session-Id": first, "MCP-Protocol-Version": "2025-06-18"},
    ) as resp:
        assert resp.status == 200

    assert await client.call("add", {"a": 1, "b": 1}) == {"result": 2}
    assert client.session_id not in (None, first)
    await client.close()


async def test_closed_session_is_gone_on_the_server(
    sdk_sse_url: str, http: aiohttp.ClientSession
) -> None:
    """close() really ends the session: the server answers 404 for it afterwards."""
    client = McpClient(http, sdk_sse_url)
    await client.connect()
    session_id = client.session_id
    assert session_id
    await client.close()
    assert client.session_id is None
    async with http.post(
        sdk_sse_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Mcp-Session-Id": session_id,
            "MCP-Protocol-Version": "2025-06-18",
            "Accept": "application/json, text/event-stream",
        },
    ) as resp:
        assert resp.status == 404


async def test_stateless_json_server(sdk_json_url: str, http: aiohttp.ClientSession) -> None:
    """Stateless JSON mode: no session, plain JSON answers, the same results."""
    client = McpClient(http, sdk_json_url)
    tools = await client.list_tools()
    assert client.session_id is None
    assert client.protocol_version == LATEST_PROTOCOL_VERSION
    assert {t["name"] for t in tools} == {"add", "echo", "fail", "info"}
    assert await client.call("add", {"a": -3, "b": 5}) == {"result": 2}
    assert (await client.call_tool("info", {"name": "ab"})).data == {"name": "ab", "length": 2}
    failed = await client.call_tool("fail", {"message": "nope"})
    assert failed.is_error
    assert "nope" in failed.text
    before = client.stats.requests
    await client.close()
    assert client.stats.requests == before  # no session, so nothing to DELETE
    assert client.stats.bytes_sent > 0
    assert client.stats.bytes_received > 0


async def test_with_home_assistant_shared_session(hass: HomeAssistant, sdk_json_url: str) -> None:
    """The production wiring: Home Assistant's shared aiohttp session."""
    client = McpClient(async_get_clientsession(hass), sdk_json_url, prefer_modern=False)
    assert await client.call("echo", {"text": "from HA"}) == {"result": "from HA"}
    await client.close()
