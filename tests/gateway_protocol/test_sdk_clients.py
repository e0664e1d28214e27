"""The official MCP Python SDK (1.x) against the gateway over real HTTP, on both transports.

HA's aiohttp test server listens on a real loopback port; the SDK connects to it with httpx.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
import httpx
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError
from mcp.types import LATEST_PROTOCOL_VERSION
import pytest

from .conftest import FakeHandler, base_url, make_token

pytestmark = pytest.mark.usefixtures("gateway")

type Connect = Callable[[str, str | None], AbstractAsyncContextManager[ClientSession]]


@asynccontextmanager
async def _streamable(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        streamablehttp_client(f"{url}/api/mcp_gateway", headers=headers) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        yield session


@asynccontextmanager
async def _sse(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        sse_client(f"{url}/api/mcp_gateway/sse", headers=headers) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session


TRANSPORTS = pytest.mark.parametrize("connect", [_streamable, _sse], ids=["streamable", "sse"])


@TRANSPORTS
async def test_list_call_and_errors(
    connect: Connect,
    client: TestClient,
    hass_access_token: str,
    handler: FakeHandler,
) -> None:
    """The official SDK client initializes, lists, calls and gets tool errors as results."""
    async with connect(base_url(client), hass_access_token) as session:
        init = await session.initialize()
        assert init.protocolVersion == LATEST_PROTOCOL_VERSION  # what the SDK asks for, echoed
        assert init.serverInfo.name == "home-assistant-mcp-gateway"
        assert init.capabilities.tools is not None

        tools = await session.list_tools()
        assert [tool.name for tool in tools.tools] == [tool["name"] for tool in handler.tools]
        assert tools.tools[0].annotations.readOnlyHint is True

        result = await session.call_tool("echo", {"text": "grüß"})
        assert not result.isError
        assert result.structuredContent == {"text": "grüß", "user": "Mock User"}
        assert result.content[0].text == '{"text": "gr\\u00fc\\u00df", "user": "Mock User"}'
        # The client's name from initialize reaches the handler on both transports
        # (the stateless endpoint remembers it per token and User-Agent).
        assert handler.contexts[-1].client_name == "mcp"

        result = await session.call_tool("add", {"amount": 3})
        assert result.structuredContent == {"total": 3}
        result = await session.call_tool("fail", {})
        assert result.isError
        assert result.content[0].text == "it failed"

        with pytest.raises(McpError) as err:
            await session.call_tool("nope", {})
        assert err.value.error.code == -32602
        assert err.value.error.message == "Unknown tool: nope"
        with pytest.raises(McpError) as err:
            await session.call_tool("boom", {})
        assert err.value.error.code == -32603

        resources = await session.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["mcp-gateway://guide"]
        read = await session.read_resource("mcp-gateway://guide")
        assert read.contents[0].text == "# Guide"
        with pytest.raises(McpError) as err:
            await session.read_resource("mcp-gateway://missing")
        assert err.value.error.code == -32002
        prompts = await session.list_prompts()
        assert prompts.prompts == []
        await session.send_ping()


async def test_sse_session_remembers_the_client_name(
    client: TestClient, hass_access_token: str, handler: FakeHandler
) -> None:
    """An SSE session remembers the SDK's client name."""
    async with _sse(base_url(client), hass_access_token) as session:
        await session.initialize()
        await session.list_tools()
    assert handler.contexts[-1].client_name == "mcp"  # SDK 1.x's clientInfo.name


@TRANSPORTS
async def test_no_token_is_refused(
    connect: Connect, client: TestClient, handler: FakeHandler
) -> None:
    """The SDK without a token gets 401 and never reaches the handler."""
    with pytest.raises(ExceptionGroup) as err:  # the SDK's task group wraps the HTTP error
        async with connect(base_url(client), None) as session:
            await session.initialize()
    assert _has_status(err.value, 401)
    assert handler.contexts == []


def _has_status(error: BaseException, status: int) -> bool:
    if isinstance(error, httpx.HTTPStatusError):
        return error.response.status_code == status
    children: Any = getattr(error, "exceptions", ())
    return any(_has_status(child, status) for child in children) or (
        error.__cause__ is not None and _has_status(error.__cause__, status)
    )


async def test_a_read_only_users_token_reaches_the_handler_as_that_user(
    hass: HomeAssistant, client: TestClient, hass_read_only_user: Any, handler: FakeHandler
) -> None:
    """A read-only user's token reaches the handler as that user."""
    token = await make_token(hass, hass_read_only_user)
    async with _streamable(base_url(client), token) as session:
        await session.initialize()
        await session.list_tools()
    assert handler.contexts[-1].user.id == hass_read_only_user.id
