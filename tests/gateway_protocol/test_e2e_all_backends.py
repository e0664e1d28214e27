"""End to end with all three backends and their simulators: one level of gateways, every
backend tool reachable, and the whole tools/list within its budget."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.gateway.catalog.schemas.subset import schema_problems
from tests.all_backends import setup_entries, start_simulators
from tests.simulation import LoopbackServers

from .conftest import URL, ClientFactory
from .test_sdk_clients import _streamable

CORE = {"search_tools", "get_state", "set_state", "get_history", "list_backends"}
BUDGET_BYTES = 12 * 1024


@pytest.fixture
async def client(
    hass: HomeAssistant,
    hass_client: ClientFactory,
    loopback_servers: LoopbackServers,
    socket_enabled: None,
) -> TestClient:
    """HA with one Hubitat, one Homecast and one Robine Wake entry, each on its simulator."""
    assert await async_setup_component(hass, "http", {})
    await setup_entries(hass, await start_simulators(loopback_servers))
    return await hass_client()


def _data(result: Any) -> Any:
    return result.structuredContent or json.loads(result.content[0].text)


async def test_admin_catalog_budget_and_reach(client: TestClient, hass_access_token: str) -> None:
    """An administrator's catalog names the three backends, keeps its byte budget, reaches each."""
    response = await client.post(
        URL,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    raw = await response.read()
    tools = json.loads(raw)["result"]["tools"]
    gateways = {tool["name"] for tool in tools} - CORE
    assert {name.split("_", 1)[0] for name in gateways} == {"hubitat", "homecast", "robine"}
    assert len(raw) <= BUDGET_BYTES, len(raw)

    async with _streamable(str(client.make_url("")).rstrip("/"), hass_access_token) as session:
        await session.initialize()
        backend_tools: dict[str, set[str]] = {}
        for gateway in sorted(gateways):
            catalog = _data(await session.call_tool(gateway, {}))
            names = {tool["name"] for tool in catalog["tools"]}
            assert names, gateway
            # One level only: no backend tool is itself a gateway of tools.
            assert not any(
                {"tool", "args"} <= set(tool.get("inputSchema", {}).get("properties", {}))
                for tool in catalog["tools"]
            ), gateway
            backend_tools[gateway] = names
        # Every backend tool is findable through search.
        for gateway, names in backend_tools.items():
            probe = sorted(names)[0]
            found = _data(await session.call_tool("search_tools", {"query": probe, "limit": 20}))
            assert any(
                hit["tool"] == probe and hit["gateway"] == gateway for hit in found["results"]
            ), (gateway, probe)
        # get_state spans every backend's entities; each backend contributes.
        everything = _data(await session.call_tool("get_state", {}))
        per_backend = [
            _data(await session.call_tool("get_state", {"backend": kind}))["total"]
            for kind in ("hubitat", "homecast", "robine_wake")
        ]
        assert all(count > 0 for count in per_backend), per_backend
        assert sum(per_backend) == everything["total"]


async def test_hub_catalog_asks_for_nothing_the_gateway_supplies(client: TestClient) -> None:
    """Over the wire, the hub's tools never ask for the write key and explain rule actions."""
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
    listing = await client.post(
        URL, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
    )
    names = [tool["name"] for tool in json.loads(await listing.read())["result"]["tools"]]
    hub = next(name for name in names if name.startswith("hubitat"))
    response = await client.post(
        URL,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": hub, "arguments": {}},
        },
        headers=headers,
    )
    raw = (await response.read()).decode()
    assert "bestPracticeKey" not in raw
    assert "write key" not in raw
    result = json.loads(raw)["result"]
    catalog = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    rule = next(tool for tool in catalog["tools"] if tool["name"] == "hub_call_rule")
    action = rule["inputSchema"]["properties"]["action"]["description"]
    assert all(f"{value} = " in action for value in ("rule", "actions", "stop", "start"))


async def test_backend_arguments_as_object_or_json_text(client: TestClient) -> None:
    """A backend tool's arguments work as the object itself or as its JSON text, alike; the
    published schema stays in the subset every model provider accepts and says so."""
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}

    async def rpc(method: str, params: dict[str, Any], request_id: int) -> Any:
        response = await client.post(
            URL,
            json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
            headers=headers,
        )
        return json.loads(await response.read())["result"]

    tools = (await rpc("tools/list", {}, 1))["tools"]
    gateways = [tool for tool in tools if tool["name"] not in CORE]
    for tool in gateways:
        assert schema_problems(tool["inputSchema"]) == [], tool["name"]
        args = tool["inputSchema"]["properties"]["args"]
        assert args["type"] == "string"
        assert "also accepts object" in args["description"]
    clock = next(tool["name"] for tool in gateways if tool["name"].startswith("robine"))
    answers = []
    preview = {"label": "Rob's nap", "time": "14:30"}
    for number, args in enumerate((preview, json.dumps(preview)), start=2):
        call = {"tool": "preview_alarm", "args": args}
        result = await rpc("tools/call", {"name": clock, "arguments": call}, number)
        assert result["isError"] is False, result
        answers.append(result["content"])
    assert answers[0] == answers[1]
