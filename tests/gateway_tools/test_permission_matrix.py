"""Every tool by {admin, user, read-only, no token}, over HTTP through the gateway's view.

For each role: the tools in `tools/list`, the backend tools in the gateway's catalog and in
`search_tools` results, and the outcome of `tools/call` for every one of them. A tool a role may
not use is absent everywhere and refused with a clear `forbidden` error when called anyway.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.core.const import DOMAIN
from tests.results import result_data

from .conftest import FakeRuntime, add_fake_entry

URL = "/api/mcp_gateway"
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
GATEWAY = "hubitat_test_hub"

R, C, A = "read", "control", "admin"
TIERS = {"admin": {R, C, A}, "user": {R, C}, "read_only": {R}}

# (tier, arguments that would run it) for every core tool ...
CORE: dict[str, tuple[str, dict[str, Any]]] = {
    "search_tools": (R, {"query": "device"}),
    "get_state": (R, {}),
    "get_history": (R, {"entity_ids": ["switch.kitchen_plug"]}),
    "list_backends": (R, {}),
    "set_state": (C, {"updates": [{"entity_id": "switch.kitchen_plug", "state": "on"}]}),
    "automations": (C, {"action": "list"}),
}
# ... and every tool of the fake backend, as its classification table (or default) says.
BACKEND: dict[str, tuple[str, dict[str, Any]]] = {
    "list_things": (R, {}),
    "hub_weather": (R, {}),  # not in the table, marked read-only by the backend
    "slow_tool": (R, {}),
    "get_thing": (R, {"device": "1"}),
    "switch_thing": (C, {"device": "2", "on": True}),
    "set_mode": (C, {"mode": "away"}),
    "broken_tool": (C, {}),
    "write_rule": (A, {"code": "x"}),
    "reboot_hub": (A, {}),  # destructive: called with confirm
    "mystery_tool": (A, {}),  # not in the table, not read-only: admin
}


@pytest.fixture
async def clients(
    hass: HomeAssistant,
    *,
    hass_client: Any,
    hass_client_no_auth: Any,
    hass_access_token: str,
    hass_read_only_access_token: str,
    hass_user: MockUser,
) -> dict[str, TestClient]:
    """The gateway over HTTP with the fake backend, and a client per role."""
    assert await async_setup_component(hass, "http", {"http": {}})
    assert await async_setup_component(hass, DOMAIN, {})
    entry: MockConfigEntry = await add_fake_entry(hass)
    runtime: FakeRuntime = entry.runtime_data
    runtime.hang.set()  # slow_tool answers at once here
    refresh = await hass.auth.async_create_refresh_token(hass_user, "https://client.example/")
    user_token = hass.auth.async_create_access_token(refresh)
    return {
        "admin": await hass_client(hass_access_token),
        "user": await hass_client(user_token),
        "read_only": await hass_client(hass_read_only_access_token),
        "none": await hass_client_no_auth(),
    }


async def _rpc(client: TestClient, method: str, params: dict[str, Any]) -> tuple[int, Any]:
    response = await client.post(
        URL, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=HEADERS
    )
    text = await response.text()
    return response.status, (json.loads(text) if text else None)


async def _call(client: TestClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    status, body = await _rpc(client, "tools/call", {"name": name, "arguments": arguments})
    assert status == 200, body
    return body["result"]


def _refused(result: dict[str, Any]) -> bool:
    try:
        data = result_data(result)
    except ValueError:  # a backend's plain-text failure
        data = {}
    error = (data.get("error") if isinstance(data, dict) else None) or {}
    return result["isError"] is True and error.get("code") == "forbidden"


@pytest.mark.parametrize("role", ["admin", "user", "read_only"])
@pytest.mark.preapproved("who may call what; who approves is tests/security's")
async def test_matrix(clients: dict[str, TestClient], role: str) -> None:
    """Listing, search and calls agree with the tier table for every tool."""
    client = clients[role]
    tiers = TIERS[role]
    status, body = await _rpc(client, "tools/list", {})
    assert status == 200
    listed = {tool["name"] for tool in body["result"]["tools"]}
    assert listed == {name for name, (tier, _) in CORE.items() if tier in tiers} | {GATEWAY}

    allowed_backend = {name for name, (tier, _) in BACKEND.items() if tier in tiers}
    catalog = result_data(await _call(client, GATEWAY, {}))
    assert {tool["name"] for tool in catalog["tools"]} == allowed_backend
    gateway_tool = next(t for t in body["result"]["tools"] if t["name"] == GATEWAY)
    for name in BACKEND:
        assert (name in gateway_tool["description"]) is (name in allowed_backend), name

    for name, (tier, _) in BACKEND.items():
        hits = result_data(await _call(client, "search_tools", {"query": name, "limit": 20}))[
            "results"
        ]
        assert (name in {hit["tool"] for hit in hits}) is (tier in tiers), (role, name)

    for name, (tier, arguments) in CORE.items():
        result = await _call(client, name, arguments)
        assert _refused(result) is (tier not in tiers), (role, name, result)
    for name, (tier, args) in BACKEND.items():
        call: dict[str, Any] = {"tool": name, "args": args}
        if name == "reboot_hub":
            call["confirm"] = True
        result = await _call(client, GATEWAY, call)
        assert _refused(result) is (tier not in tiers), (role, name, result)
        if tier in tiers and name != "broken_tool":
            assert result["isError"] is False, (role, name, result)


async def test_no_token_is_refused_before_anything_runs(
    hass: HomeAssistant, clients: dict[str, TestClient]
) -> None:
    """Without credentials every method is a 401 that points at the protected-resource metadata."""
    client = clients["none"]
    runtime: FakeRuntime = hass.config_entries.async_entries(DOMAIN)[0].runtime_data
    for method, params in (
        ("tools/list", {}),
        ("tools/call", {"name": "get_state", "arguments": {}}),
        ("tools/call", {"name": GATEWAY, "arguments": {"tool": "list_things"}}),
        ("resources/read", {"uri": "mcp-gateway://context"}),
    ):
        response = await client.post(
            URL,
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers=HEADERS,
        )
        assert response.status == 401, method
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith("Bearer ")
        assert "/.well-known/oauth-protected-resource/api/mcp_gateway" in challenge
    assert runtime.calls == []
