"""End to end with every registered backend on its simulator: one level of gateways, every
backend tool reachable, and the whole tools/list within its budget.

Each backend's own checks over the same wire live with its tests
(`tests/<kind>/test_gateway_wire.py`)."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient

from custom_components.mcp_gateway.gateway.catalog.schemas.subset import schema_problems
from tests.all_backends import gateway_result
from tests.backend_sims import registered_kinds

from .conftest import URL
from .test_sdk_clients import _streamable

CORE = {"search_tools", "get_state", "set_state", "get_history", "list_backends", "automations"}
BUDGET_BYTES = 12 * 1024


def _data(result: Any) -> Any:
    return result.structuredContent or json.loads(result.content[0].text)


async def test_admin_catalog_budget_and_reach(
    home_client: TestClient, hass_access_token: str
) -> None:
    """An administrator's catalog names every backend, keeps its byte budget, reaches each."""
    response = await home_client.post(
        URL,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    raw = await response.read()
    tools = json.loads(raw)["result"]["tools"]
    gateways = {tool["name"] for tool in tools} - CORE
    kinds = registered_kinds()
    # One gateway tool per backend, named after its kind.
    assert len(gateways) == len(kinds), gateways
    assert {next(k for k in kinds if name.startswith(k)) for name in gateways} == set(kinds)
    assert len(raw) <= BUDGET_BYTES, len(raw)

    async with _streamable(str(home_client.make_url("")).rstrip("/"), hass_access_token) as session:
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
            for kind in registered_kinds()
        ]
        assert all(count > 0 for count in per_backend), per_backend
        assert sum(per_backend) == everything["total"]


async def test_backend_arguments_as_object_or_json_text(home_client: TestClient) -> None:
    """Every gateway's published schema stays in the subset every model provider accepts and
    says that its arguments may be the object itself or its JSON text."""
    tools = (await gateway_result(home_client, "tools/list", {}, 1))["tools"]
    gateways = [tool for tool in tools if tool["name"] not in CORE]
    for tool in gateways:
        assert schema_problems(tool["inputSchema"]) == [], tool["name"]
        args = tool["inputSchema"]["properties"]["args"]
        assert args["type"] == "string"
        assert "also accepts object" in args["description"]
