"""The official MCP Python SDK client against the real gateway tools, on both transports.

HA's HTTP server listens on a loopback port; the SDK validates every message it receives with
its own models, so this pins that our tools, results and resources are what clients accept.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import FakeRuntime, add_fake_entry

type Connect = Callable[[str, str], AbstractAsyncContextManager[ClientSession]]
GATEWAY = "hubitat_test_hub"


@asynccontextmanager
async def _streamable(url: str, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        streamablehttp_client(f"{url}/api/mcp_gateway", headers=headers) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def _sse(url: str, token: str) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        sse_client(f"{url}/api/mcp_gateway/sse", headers=headers) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


TRANSPORTS = pytest.mark.parametrize("connect", [_streamable, _sse], ids=["streamable", "sse"])


@pytest.fixture
async def base(hass: HomeAssistant, hass_client: Any) -> str:
    """The gateway with the fake backend on a loopback port; its base URL."""
    assert await async_setup_component(hass, "http", {"http": {}})
    assert await async_setup_component(hass, DOMAIN, {})
    entry: MockConfigEntry = await add_fake_entry(hass)
    runtime: FakeRuntime = entry.runtime_data
    runtime.hang.set()
    client: TestClient = await hass_client()
    return str(client.make_url("")).rstrip("/")


@TRANSPORTS
async def test_admin_session(
    hass: HomeAssistant, base: str, hass_access_token: str, connect: Connect
) -> None:
    """List, read state, change it, run a backend tool, search and read resources."""
    async with connect(base, hass_access_token) as session:
        tools = (await session.list_tools()).tools
        assert [tool.name for tool in tools] == [
            "search_tools",
            "get_state",
            "set_state",
            "get_history",
            "list_backends",
            "automations",
            GATEWAY,
        ]
        assert all(tool.annotations is not None for tool in tools)
        assert all(tool.inputSchema.get("required") is not None for tool in tools)

        state = await session.call_tool("get_state", {"domain": ["switch"]})
        assert not state.isError
        # The data once, as compact JSON text: what every client reads.
        assert state.structuredContent is None
        assert json.loads(state.content[0].text)["entities"][0]["state"] == "off"

        changed = await session.call_tool(
            "set_state", {"updates": [{"entity_id": "switch.kitchen_plug", "state": "on"}]}
        )
        assert json.loads(changed.content[0].text)["results"][0]["state"] == "on"
        assert hass.states.get("switch.kitchen_plug").state == "on"

        listed = await session.call_tool(GATEWAY, {"tool": "list_things"})
        assert json.loads(listed.content[0].text)["things"][0] == {"id": "1", "on": True}
        refused = await session.call_tool(GATEWAY, {"tool": "reboot_hub"})
        assert refused.isError
        assert json.loads(refused.content[0].text)["error"]["code"] == "confirmation_required"

        hits = await session.call_tool("search_tools", {"query": "reboot"})
        assert json.loads(hits.content[0].text)["results"][0]["call"]["name"] == GATEWAY

        resources = (await session.list_resources()).resources
        assert {str(r.uri) for r in resources} == {
            "mcp-gateway://guide",
            "mcp-gateway://context",
        }
        snapshot = await session.read_resource("mcp-gateway://context")
        assert json.loads(snapshot.contents[0].text)["role"] == "admin"


@TRANSPORTS
async def test_read_only_session(
    hass: HomeAssistant, base: str, hass_read_only_access_token: str, connect: Connect
) -> None:
    """A read-only user sees read tools only and is refused writes with a clear error."""
    async with connect(base, hass_read_only_access_token) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert "set_state" not in names
        refused = await session.call_tool(
            "set_state", {"updates": [{"entity_id": "switch.kitchen_plug", "state": "on"}]}
        )
        assert refused.isError
        assert "needs the 'control' tier" in json.loads(refused.content[0].text)["error"]["message"]
        assert hass.states.get("switch.kitchen_plug").state == "off"
        with pytest.raises(McpError, match="Unknown tool: no_such_tool"):
            await session.call_tool("no_such_tool", {})
