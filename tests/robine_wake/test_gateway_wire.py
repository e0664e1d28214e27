"""The clock's gateway tool over the gateway's HTTP endpoint, in a home of every backend."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
import pytest

from tests.all_backends import http_home
from tests.gateway_protocol.conftest import URL, ClientFactory
from tests.simulation import LoopbackServers


@pytest.fixture
async def client(
    hass: HomeAssistant,
    hass_client: ClientFactory,
    loopback_servers: LoopbackServers,
    socket_enabled: None,
) -> TestClient:
    """HA with an entry of every registered backend, each on its simulator."""
    return await http_home(hass, hass_client, loopback_servers)


async def test_arguments_as_object_or_json_text(client: TestClient) -> None:
    """A backend tool's arguments work as the object itself or as its JSON text, alike."""
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}

    async def rpc(method: str, params: dict[str, Any], request_id: int) -> Any:
        response = await client.post(
            URL,
            json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
            headers=headers,
        )
        return json.loads(await response.read())["result"]

    tools = (await rpc("tools/list", {}, 1))["tools"]
    gateways = [
        tool for tool in tools if "args" in tool.get("inputSchema", {}).get("properties", {})
    ]
    clock = next(tool["name"] for tool in gateways if tool["name"].startswith("robine"))
    answers = []
    preview = {"label": "Rob's nap", "time": "14:30"}
    for number, args in enumerate((preview, json.dumps(preview)), start=2):
        call = {"tool": "preview_alarm", "args": args}
        result = await rpc("tools/call", {"name": clock, "arguments": call}, number)
        assert result["isError"] is False, result
        answers.append(result["content"])
    assert answers[0] == answers[1]
