"""The hub's catalog over the gateway's HTTP endpoint, in a home of every backend."""

from __future__ import annotations

import json

from aiohttp.test_utils import TestClient

from tests.gateway_protocol.conftest import URL


async def test_hub_catalog_asks_for_nothing_the_gateway_supplies(home_client: TestClient) -> None:
    """Over the wire, the hub's tools never ask for the write key and explain rule actions."""
    headers = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
    listing = await home_client.post(
        URL, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
    )
    names = [tool["name"] for tool in json.loads(await listing.read())["result"]["tools"]]
    hub = next(name for name in names if name.startswith("hubitat"))
    response = await home_client.post(
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
