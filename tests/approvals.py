"""What the approval tests over the wire share: the gateway's URL and headers, sign-ins, a
tool call and its answer, and the approvals the gateway opened while a call is held."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from aiohttp.test_utils import TestClient
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from custom_components.mcp_gateway.gateway.approval.manager import Pending, approval_manager

URL: Final = "/api/mcp_gateway"
HEADERS: Final = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
# The AI app's sign-in, and the owner's own browser (a sign-in that never calls the gateway).
CLIENT_ID: Final = "https://client.example/"
BROWSER_ID: Final = "http://homeassistant.local:8123/"


async def access_token(hass: HomeAssistant, user: User, client_id: str = CLIENT_ID) -> str:
    """A fresh sign-in of `user` through `client_id`: its access token."""
    refresh = await hass.auth.async_create_refresh_token(user, client_id)
    return hass.auth.async_create_access_token(refresh)


async def tool_call(client: TestClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """tools/call over HTTP as the client's user: the CallToolResult (asserting HTTP 200)."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = await client.post(URL, json=body, headers=HEADERS)
    assert response.status == 200, await response.text()
    result: dict[str, Any] = (await response.json())["result"]
    return result


def data(result: dict[str, Any]) -> Any:
    """A tool result's structured answer."""
    return json.loads(result["content"][0]["text"])


def code(result: dict[str, Any]) -> str | None:
    """The gateway's error code of a refused call (None: it ran)."""
    return data(result)["error"]["code"] if result.get("isError") else None


async def open_approvals(hass: HomeAssistant) -> list[Pending]:
    """The open approvals, once the gateway has opened at least one (a held call opens its
    approval a moment after it was sent); fails when none opens."""
    manager = approval_manager(hass)
    for _ in range(300):
        if open_ := [pending for pending in manager._by_id.values() if pending.open]:
            return open_
        await asyncio.sleep(0.01)
    raise AssertionError("no approval was requested")
