"""One Home Assistant with every backend on its simulator, and every kind of caller.

The kinds: an administrator, an ordinary user, a read-only user, a user whose policy grants one
entity only (`policy`), no token at all, a revoked token and a deactivated user. Each kind gets
an HTTP client (the gateway and HA's REST API) and can open a websocket connection.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
import json
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.mcp_gateway.backends.homecast.const import KIND as HOMECAST_KIND
from custom_components.mcp_gateway.backends.hubitat.const import KIND as HUBITAT_KIND
from custom_components.mcp_gateway.backends.robine_wake.const import KIND as ROBINE_WAKE_KIND
from custom_components.mcp_gateway.core.const import (
    DOMAIN,
)
from custom_components.mcp_gateway.core.settings import (
    CONF_EXPOSED_ONLY,
    CONF_RATE_LIMIT,
    MAX_RATE_LIMIT,
)
from custom_components.mcp_gateway.gateway.approval import gate as approval_gate_module
from custom_components.mcp_gateway.gateway.catalog.store import gateway_tool_names
from simulators.homecast import HomecastSim
from simulators.hubitat import Hub
from simulators.robine_wake import RobineWake
from tests.all_backends import Entries, Simulators, setup_entries, start_simulators
from tests.homecast import sim as homecast
from tests.results import result_data
from tests.simulation import LoopbackServers, gateway_entry

URL = "/api/mcp_gateway"
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
CLIENT_ID = "https://client.example/"

# Callers with a working token, and callers without one.
SIGNED_IN = ("admin", "user", "read_only", "policy")
SIGNED_OUT = ("none", "revoked", "deactivated")
KINDS = (*SIGNED_IN, *SIGNED_OUT)

# The gateway tools of the particular home some tests here address by name.
HUBITAT = "hubitat_home_hub"
HOMECAST_GATEWAY = "homecast"
ROBINE = "robine_wake_bedroom_clock"


@dataclass
class SecurityHome:
    """The running home: simulators, entries, callers and the one entity `policy` may use."""

    hass: HomeAssistant
    hub: Hub
    homecast: HomecastSim
    robine: RobineWake
    hubitat_entry: MockConfigEntry
    homecast_entry: MockConfigEntry
    robine_entry: MockConfigEntry
    clients: dict[str, TestClient]
    tokens: dict[str, str | None]
    users: dict[str, User]
    # The living-room ceiling light of the followed home: the one entity `policy` controls.
    policy_light: str
    # Every registered backend by kind: its simulator, its entry and its gateway tool.
    sims: Simulators
    entries: Entries
    gateways: dict[str, str]
    ws_factory: WebSocketGenerator | None = None

    def settings_entry(self) -> MockConfigEntry:
        """The gateway's settings entry."""
        entry = next(
            e for e in self.hass.config_entries.async_entries(DOMAIN) if e.unique_id == "gateway"
        )
        assert isinstance(entry, MockConfigEntry)
        return entry

    async def rpc(
        self, kind: str, method: str, params: dict[str, Any] | None = None, **headers: str
    ) -> tuple[int, Any]:
        """One JSON-RPC request to the gateway as `kind`: HTTP status and decoded body."""
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = params
        response = await self.clients[kind].post(URL, json=body, headers={**HEADERS, **headers})
        text = await response.text()
        return response.status, json.loads(text) if text else None

    async def call(self, kind: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """tools/call as `kind`; the CallToolResult (asserting HTTP 200)."""
        status, body = await self.rpc(kind, "tools/call", {"name": name, "arguments": arguments})
        assert status == 200, (kind, name, status, body)
        assert "result" in body, (kind, name, body)
        result: dict[str, Any] = body["result"]
        return result


def error_code(result: dict[str, Any]) -> str | None:
    """The gateway's own error code of a tool result (forbidden, invalid, …), if any."""
    if not result.get("isError"):
        return None
    try:
        structured = result_data(result)
    except ValueError:  # a backend's own error in plain text
        return "backend"
    if isinstance(structured, dict) and isinstance(structured.get("error"), dict):
        code = structured["error"].get("code")
        return code if isinstance(code, str) else "backend"
    return "backend"


@pytest.fixture(autouse=True)
def short_hold() -> Generator[None]:
    """The real gate, answering "waiting for a person" at once instead of holding the request
    open for an answer: the matrix makes hundreds of calls, some of them sensitive."""
    with patch.object(approval_gate_module, "HOLD_SECONDS", 0.0):
        yield


async def _token(hass: HomeAssistant, user: User) -> str:
    refresh = await hass.auth.async_create_refresh_token(user, CLIENT_ID)
    return hass.auth.async_create_access_token(refresh)


@pytest.fixture
async def home(
    hass: HomeAssistant,
    *,
    hass_client: Callable[..., Awaitable[TestClient]],
    hass_client_no_auth: Callable[..., Awaitable[TestClient]],
    hass_ws_client: WebSocketGenerator,
    hass_admin_user: MockUser,
    hass_access_token: str,
    hass_read_only_user: MockUser,
    hass_read_only_access_token: str,
    loopback_servers: LoopbackServers,
    socket_enabled: None,
) -> SecurityHome:
    """HA (http, api, websocket) with a hub, a Homecast account following one of its two
    homes, and a clock; a client per kind of caller."""
    assert await async_setup_component(hass, "http", {})
    assert await async_setup_component(hass, "api", {})
    assert await async_setup_component(hass, "websocket_api", {})
    # The matrix makes hundreds of calls per caller: the rate limit is raised here, and the
    # tests of the limit itself set it back. It checks permissions, so every entity is
    # reachable (HA exposes no alarm panel to assistants by default); exposure has its own tests.
    gateway_entry({CONF_RATE_LIMIT: MAX_RATE_LIMIT, CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    sims = await start_simulators(loopback_servers)
    hc_sim = sims[HOMECAST_KIND]
    # Two accessories of the same name in two rooms (two "Ceiling Light"s).
    state = hc_sim.state
    followed = state.homes[0]
    living = homecast.device_of(hc_sim, "light", nth=0)
    kitchen = homecast.device_of(hc_sim, "light", nth=1)
    assert followed.room_of(living) is not followed.room_of(kitchen)
    living.name = kitchen.name = "Ceiling Light"
    entries = await setup_entries(
        hass, sims, options={HOMECAST_KIND: {"homes": [hc_sim.home_uuids()[0]]}}
    )
    hc_entry = entries[HOMECAST_KIND]
    names = gateway_tool_names(list(entries.values()))
    gateways = {kind: names[entry.entry_id] for kind, entry in entries.items()}
    assert {HUBITAT, HOMECAST_GATEWAY, ROBINE} <= set(gateways.values()), gateways
    policy_light = homecast.entity_id(hass, hc_entry, hc_sim, living, "light")

    user = MockUser(name="Ordinary", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    user.add_to_hass(hass)
    policy = MockUser(name="One light", groups=[])
    policy.add_to_hass(hass)
    policy.mock_policy({"entities": {"entity_ids": {policy_light: True}}})
    gone = MockUser(name="Left", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    gone.add_to_hass(hass)
    revoked_user = MockUser(name="Revoked", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    revoked_user.add_to_hass(hass)

    tokens: dict[str, str | None] = {
        "admin": hass_access_token,
        "user": await _token(hass, user),
        "read_only": hass_read_only_access_token,
        "policy": await _token(hass, policy),
        "none": None,
    }
    refresh = await hass.auth.async_create_refresh_token(revoked_user, CLIENT_ID)
    tokens["revoked"] = hass.auth.async_create_access_token(refresh)
    hass.auth.async_remove_refresh_token(refresh)
    tokens["deactivated"] = await _token(hass, gone)
    await hass.auth.async_deactivate_user(gone)

    clients: dict[str, TestClient] = {}
    for kind, token in tokens.items():
        clients[kind] = await (hass_client(token) if token else hass_client_no_auth())
    return SecurityHome(
        hass=hass,
        hub=sims[HUBITAT_KIND].hub,
        homecast=state,
        robine=sims[ROBINE_WAKE_KIND].device,
        hubitat_entry=entries[HUBITAT_KIND],
        homecast_entry=hc_entry,
        robine_entry=entries[ROBINE_WAKE_KIND],
        clients=clients,
        tokens=tokens,
        users={
            "admin": hass_admin_user,
            "user": user,
            "read_only": hass_read_only_user,
            "policy": policy,
        },
        policy_light=policy_light,
        sims=sims,
        entries=entries,
        gateways=gateways,
        ws_factory=hass_ws_client,
    )
