"""The Homecast simulator against the service's MCP reference and homecast-web's source.

Upstream: parob/homecast-web, src/lib/slug.ts (keys); src/server/local-mcp.ts handleMCP and
callTool (the community server's MCP, scenes), local-server.ts (its HTTP gate), local-rest.ts
(get_state, set_state, history), local-automations.ts (HomeKit automations),
local-hc-automations.ts (Homecast automations, virtual accessories), local-oauth.ts (scopes,
tokens). The cloud's own server is not public: its sessions and SSE answers follow the MCP
reference, its camelCase surface graphql-mcp.

Raw HTTP only: the simulator must be right on its own before any client is tested against it.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
import hashlib
import json
import subprocess
import sys
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient, TestServer
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
import pytest
from yarl import URL

from simulators import DATA_DIR
from simulators.base import FAULTS, STATS, SimClock
from simulators.homecast import HOMECAST, TOOLS, HomecastSim, create_app, slug
from simulators.homecast.model import TYPES
from tests.simulation import ClientFactory, RawMcp, client_on_clock

TOKEN = "hc_test_token"
ACCEPT = "application/json, text/event-stream"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
LEGACY_FILE = DATA_DIR / "homecast_legacy.json"
# Shaped as the real server answers (src/server/local-rest.ts getState): slug names, virtual
# accessories as type "other", raw characteristic names, two homes, one unreachable switch.
REAL_FILE = DATA_DIR / "homecast_real.json"
TOOL_NAMES = {
    "get_state",
    "set_state",
    "query_history",
    "get_history",
    "run_scene",
    "create_scene",
    "update_scene",
    "delete_scene",
    "get_automations",
    "create_automation",
    "update_automation",
    "delete_automation",
    "get_hc_automations",
    "create_hc_automation",
    "update_hc_automation",
    "delete_hc_automation",
    "create_virtual_accessory",
    "update_virtual_accessory",
    "delete_virtual_accessory",
}


def parse_body(text: str, content_type: str) -> dict[str, Any]:
    """The JSON-RPC message of a reply, plain or as the last SSE data event."""
    if content_type == "text/event-stream":
        data = [
            line[len("data: ") :]
            for line in text.splitlines()
            if line.startswith("data: ") and line[len("data: ") :].strip()
        ]
        assert data, text
        return json.loads(data[-1])
    return json.loads(text)


class Hc(RawMcp):
    """A simulator under test with helpers for raw MCP over HTTP."""

    def __init__(self, client: TestClient, clock: SimClock) -> None:
        super().__init__(client, clock)
        self.sim: HomecastSim = client.server.app[HOMECAST]
        self.token = TOKEN
        self.session: str | None = None

    def headers(self, **extra: str) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        headers.update(extra)
        return headers

    async def post(self, body: Any, **extra: str) -> aiohttp.ClientResponse:
        return await self.client.post("/mcp", data=self.encode(body), headers=self.headers(**extra))

    async def read(self, response: aiohttp.ClientResponse) -> dict[str, Any]:
        return parse_body(await response.text(), response.content_type)

    async def init(self, version: str = "2025-03-26") -> dict[str, Any]:
        response = await self.post(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"},
                },
            }
        )
        assert response.status == 200
        self.session = response.headers.get("Mcp-Session-Id")
        return parse_body(await response.text(), response.content_type)["result"]

    async def ok(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        result = await self.call(name, arguments)
        assert result["isError"] is False, result
        assert "structuredContent" not in result
        return json.loads(result["content"][0]["text"])

    async def ok_community(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        result = await self.call(name, arguments)
        assert "isError" not in result, result
        return json.loads(result["content"][0]["text"])

    async def fails(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        result = await self.call(name, arguments)
        assert result["isError"] is True, result
        text = result["content"][0]["text"]
        assert text.startswith("Error: ")
        return text

    async def state(self, **filters: str) -> dict[str, Any]:
        return await self.ok("get_state", filters)

    @property
    def home(self) -> str:
        return self.sim.homes[0].slug

    def find(self, kind: str, home: int = 0, **has: Any) -> tuple[str, str]:
        """(room key, accessory key) of the first device of `kind` with the given value keys."""
        h = self.sim.homes[home]
        for acc in h.devices():
            if acc.kind == kind and all(k in acc.values for k in has):
                return h.room_of(acc).slug, acc.slug
        raise AssertionError(kind)

    def virtual(self, name: str, home: int = 0) -> tuple[str, str]:
        h = self.sim.homes[home]
        acc = next(a for a in h.virtuals() if a.name == name)
        return h.room_of(acc).slug, acc.slug


# Real HTTP on 127.0.0.1 (the HA test plugin still refuses any other host).
pytestmark = pytest.mark.usefixtures("socket_enabled")


@pytest.fixture
def make_hc(aiohttp_client: ClientFactory) -> Callable[..., Awaitable[Hc]]:
    async def _make(*, init: bool = True, **options: Any) -> Hc:
        options.setdefault("write_delay", 0)
        hc = Hc(*await client_on_clock(aiohttp_client, create_app, NOW, **options))
        if init:
            await hc.init()
        return hc

    return _make


@pytest.fixture
async def hc(make_hc: Callable[..., Awaitable[Hc]]) -> Hc:
    return await make_hc()


def _accessories(state: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        (home, room, key, acc)
        for home, body in state.items()
        if not home.startswith("_")
        for room, accs in body.items()
        if not room.startswith("_")
        for key, acc in accs.items()
    ]


# ---------------------------------------------------------------------------------------------
# slugs


def test_slug_rules() -> None:
    """Name trimmed, whitespace runs to _, lowercase, punctuation kept, UUID tail."""
    uuid = "0A1B2C3D-0000-4000-8000-00000000" + "7F60"
    assert slug("Bedroom 1 Air Conditioner", uuid) == "bedroom_1_air_conditioner_7f60"
    assert slug("  Kid's   Lamp\t(2) ", uuid) == "kid's_lamp_(2)_7f60"


async def test_generated_keys_follow_the_slug_rule(hc: Hc) -> None:
    """Generated homes, rooms and accessories get slugs by the upstream rule."""
    state = await hc.state()
    for home in hc.sim.homes:
        assert home.slug == slug(home.name, home.uuid)
        assert state["_homes"][home.slug] == home.uuid
        for room in home.rooms:
            for acc in room.accessories:
                assert acc.slug in state[home.slug][room.slug]
                assert acc.slug.endswith("_" + acc.uuid[-4:].lower())


# ---------------------------------------------------------------------------------------------
# transport


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_echoes_supported_versions(make_hc: Any, version: str) -> None:
    """initialize echoes each supported version and announces listChanged tools."""
    hc = await make_hc(init=False)
    result = await hc.init(version)
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "homecast"
    assert result["capabilities"]["tools"]["listChanged"] is True
    assert hc.session
    assert hc.sim.sessions[hc.session].protocol_version == version


async def test_unknown_version_gets_the_session_era_version(make_hc: Any) -> None:
    """An unknown version gets the session era's version, 2025-03-26."""
    hc = await make_hc(init=False)
    assert (await hc.init("2026-07-28"))["protocolVersion"] == "2025-03-26"


async def test_answers_are_sse_by_default(hc: Hc) -> None:
    """Answers are SSE by default."""
    response = await hc.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert response.status == 200
    assert response.content_type == "text/event-stream"
    text = await response.text()
    assert "event: message" in text
    assert parse_body(text, response.content_type) == {"jsonrpc": "2.0", "id": 5, "result": {}}


async def test_2025_11_25_stream_starts_with_a_priming_event(make_hc: Any) -> None:
    """A 2025-11-25 stream starts with a priming event carrying an id."""
    hc = await make_hc(init=False)
    await hc.init("2025-11-25")
    response = await hc.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    events = (await response.text()).split("\n\n")
    priming = events[0].splitlines()
    assert priming[0].startswith("id: ")
    assert priming[1:] == ["data: "]
    assert "event: message" in events[1]
    older = await make_hc(init=False)
    await older.init("2025-06-18")
    response = await older.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert (await response.text()).startswith("event: message")


async def test_plain_json_without_sessions(make_hc: Any) -> None:
    """The plain-JSON server mode answers without sessions."""
    hc = await make_hc(init=False, sse=False, sessions=False)
    result = await hc.init("2024-11-05")
    assert result["protocolVersion"] == "2024-11-05"
    assert hc.session is None
    response = await hc.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.content_type == "application/json"
    assert len((await response.json())["result"]["tools"]) == len(TOOL_NAMES)
    assert (await hc.client.get("/mcp", headers=hc.headers())).status == 405
    assert (await hc.client.delete("/mcp", headers=hc.headers())).status == 405


async def test_json_answers_with_sessions(make_hc: Any) -> None:
    """The JSON mode with sessions hands out a session and answers JSON."""
    hc = await make_hc(sse=False)
    assert hc.session
    response = await hc.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.content_type == "application/json"


async def test_missing_session_is_400_unknown_is_404(hc: Hc) -> None:
    """A missing session id is 400, an unknown one 404."""
    status, body = await hc.rpc("ping", **{"Mcp-Session-Id": ""})
    assert status == 400
    assert body["error"]["code"] == -32600
    status, body = await hc.rpc("ping", **{"Mcp-Session-Id": "nope"})
    assert status == 404
    assert "error" in body


async def test_expired_sessions_answer_404_and_reinitialize_works(hc: Hc) -> None:
    """Expired sessions answer 404 and a new initialize works."""
    old = hc.session
    assert hc.sim.expire_sessions() == 1
    status, _ = await hc.rpc("ping")
    assert status == 404
    await hc.init()
    assert hc.session != old
    assert (await hc.rpc("ping"))[0] == 200


async def test_idle_sessions_expire_on_the_clock(make_hc: Any) -> None:
    """Idle sessions expire on the simulated clock; use restarts the timer."""
    hc = await make_hc(session_ttl=600)
    hc.clock.advance(599)
    assert (await hc.rpc("ping"))[0] == 200  # use restarts the idle timer
    hc.clock.advance(599)
    assert (await hc.rpc("ping"))[0] == 200
    hc.clock.advance(601)
    assert (await hc.rpc("ping"))[0] == 404


async def test_delete_ends_the_session(hc: Hc) -> None:
    """DELETE ends the session; a second DELETE is 404."""
    assert (await hc.client.delete("/mcp", headers=hc.headers())).status == 200
    assert (await hc.rpc("ping"))[0] == 404
    assert (await hc.client.delete("/mcp", headers=hc.headers())).status == 404
    hc.session = None
    assert (await hc.client.delete("/mcp", headers=hc.headers())).status == 400


async def test_accept_must_list_both_types(hc: Hc) -> None:
    """Accept must list both JSON and event-stream, else 406."""
    status, body = await hc.rpc("ping", Accept="application/json")
    assert status == 406
    assert body["error"]["code"] == -32600


async def test_protocol_errors(hc: Hc) -> None:
    """Unparseable and invalid bodies are 400 with JSON-RPC codes."""
    response = await hc.post("{not json")
    assert response.status == 400
    assert (await response.json())["error"]["code"] == -32700
    response = await hc.post([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert response.status == 400
    assert (await response.json())["error"]["code"] == -32600
    status, body = await hc.rpc("resources/list")
    assert body["error"]["code"] == -32601
    status, body = await hc.rpc("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert body["error"]["code"] == -32602
    status, body = await hc.rpc("tools/call", {"name": "get_state", "arguments": [1]})
    assert body["error"]["code"] == -32602
    status, body = await hc.rpc("ping", **{"MCP-Protocol-Version": "1999-01-01"})
    assert status == 400
    response = await hc.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status == 202
    assert await response.read() == b""


async def test_get_stream_announces_tool_list_changes(hc: Hc) -> None:
    """The GET stream announces tool list changes."""
    response = await hc.client.get("/mcp", headers=hc.headers(Accept="text/event-stream"))
    assert response.status == 200
    assert response.content_type == "text/event-stream"
    hc.sim.pair_accessory(hc.home, "Loft", "Loft Lamp", "light")
    line = b""
    while not line.startswith(b"data: "):
        line = await asyncio.wait_for(response.content.readline(), 5)
    assert json.loads(line[6:])["method"] == "notifications/tools/list_changed"
    hc.sim.expire_sessions()  # closes the stream
    assert (await asyncio.wait_for(response.content.read(), 5)).strip() == b""  # stream ended


# ---------------------------------------------------------------------------------------------
# auth


async def test_missing_or_bad_token_is_401_with_resource_metadata(make_hc: Any) -> None:
    """A missing or bad token is 401 pointing at the resource metadata."""
    hc = await make_hc(init=False)
    for token in ("", "hc_wrong"):
        hc.token = token
        response = await hc.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert response.status == 401
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith('Bearer resource_metadata="')
        meta_url = URL(challenge.split('"')[1])
        meta = await (await hc.client.get(meta_url.path)).json()
        assert meta["resource"].endswith("/mcp")
        assert meta["authorization_servers"]


async def test_revoked_token_and_revoked_fault(hc: Hc) -> None:
    """A revoked token, and the revoked fault, are 401."""
    assert (await hc.rpc("ping"))[0] == 200
    hc.client.server.app[FAULTS].revoked = True
    assert (await hc.rpc("ping"))[0] == 401
    hc.client.server.app[FAULTS].revoked = False
    hc.sim.revoke_token(TOKEN)
    assert (await hc.rpc("ping"))[0] == 401


def _pkce() -> tuple[str, str]:
    verifier = "v" * 43
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


async def _oauth(hc: Hc, scope: str = "mcp:read mcp:write") -> tuple[str, dict[str, Any]]:
    """Register, authorize (consent is automatic) and exchange the code: (client_id, tokens)."""
    meta = await (await hc.client.get("/.well-known/oauth-authorization-server")).json()
    assert meta["code_challenge_methods_supported"] == ["S256"]
    register = await hc.client.post(
        URL(meta["registration_endpoint"]).path,
        json={"redirect_uris": ["http://127.0.0.1:9/cb"], "client_name": "test"},
    )
    assert register.status == 201
    client_id = (await register.json())["client_id"]
    verifier, challenge = _pkce()
    response = await hc.client.get(
        "/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": "http://127.0.0.1:9/cb",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "xyz",
            "scope": scope,
        },
        allow_redirects=False,
    )
    assert response.status == 302
    location = URL(response.headers["Location"])
    assert location.query["state"] == "xyz"
    form = {
        "grant_type": "authorization_code",
        "code": location.query["code"],
        "redirect_uri": "http://127.0.0.1:9/cb",
        "client_id": client_id,
        "code_verifier": verifier,
    }
    token = await hc.client.post("/oauth/token", data=form)
    assert token.status == 200
    tokens = await token.json()
    again = await hc.client.post("/oauth/token", data=form)  # codes are single use
    assert (await again.json())["error"] == "invalid_grant"
    return client_id, tokens


async def test_oauth_flow_expiry_and_refresh_rotation(make_hc: Any) -> None:
    """OAuth: login, token expiry and refresh-token rotation."""
    hc = await make_hc(init=False)
    client_id, tokens = await _oauth(hc)
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 3600
    hc.token = tokens["access_token"]
    await hc.init()
    assert (await hc.rpc("ping"))[0] == 200
    hc.clock.advance(3601)
    assert (await hc.rpc("ping"))[0] == 401
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": tokens["refresh_token"],
        "client_id": client_id,
    }
    fresh = await (await hc.client.post("/oauth/token", data=refresh)).json()
    assert fresh["refresh_token"] != tokens["refresh_token"]
    hc.token = fresh["access_token"]
    assert (await hc.rpc("ping"))[0] == 200
    reused = await hc.client.post("/oauth/token", data=refresh)
    assert reused.status == 400
    assert (await reused.json())["error"] == "invalid_grant"
    hc.sim.revoke_refresh_token(fresh["refresh_token"])
    revoked = await hc.client.post(
        "/oauth/token", data={**refresh, "refresh_token": fresh["refresh_token"]}
    )
    assert (await revoked.json())["error"] == "invalid_grant"


async def test_oauth_errors(make_hc: Any) -> None:
    """OAuth refuses bad redirects, missing PKCE and wrong codes as upstream does."""
    hc = await make_hc(init=False)
    bad = await hc.client.post("/oauth/register", json={"redirect_uris": []})
    assert (await bad.json())["error"] == "invalid_redirect_uri"
    reg = await hc.client.post("/oauth/register", json={"redirect_uris": ["http://127.0.0.1/cb"]})
    client_id = (await reg.json())["client_id"]
    base = {"response_type": "code", "client_id": client_id, "state": "s"}
    wrong_uri = await hc.client.get(
        "/oauth/authorize",
        params={**base, "redirect_uri": "http://127.0.0.1/evil", "code_challenge": "c"},
        allow_redirects=False,
    )
    assert wrong_uri.status == 400  # never redirected to an unregistered URI
    no_pkce = await hc.client.get(
        "/oauth/authorize",
        params={**base, "redirect_uri": "http://127.0.0.1/cb"},
        allow_redirects=False,
    )
    assert URL(no_pkce.headers["Location"]).query["error"] == "invalid_request"
    _, challenge = _pkce()
    ok = await hc.client.get(
        "/oauth/authorize",
        params={
            **base,
            "redirect_uri": "http://127.0.0.1/cb",
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        },
        allow_redirects=False,
    )
    code = URL(ok.headers["Location"]).query["code"]
    wrong_verifier = await hc.client.post(
        "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": "http://127.0.0.1/cb",
            "client_id": client_id,
            "code_verifier": "w" * 43,
        },
    )
    assert (await wrong_verifier.json())["error"] == "invalid_grant"
    unknown = await hc.client.post(
        "/oauth/token", data={"grant_type": "password", "client_id": client_id}
    )
    assert (await unknown.json())["error"] == "unsupported_grant_type"


async def test_read_scope_cannot_write(make_hc: Any) -> None:
    """A read-scoped token reads but every write asks for mcp:write."""
    hc = await make_hc(init=False)
    _, tokens = await _oauth(hc, scope="mcp:read")
    hc.token = tokens["access_token"]
    await hc.init()
    assert (await hc.state())["_homes"]
    assert "mcp:write" in await hc.fails(
        "set_state", {"updates": [{"home": "x", "room": "y", "accessory": "z", "on": True}]}
    )
    assert "mcp:write" in await hc.fails("query_history", {})
    assert await hc.ok("get_automations")
    assert await hc.ok("get_hc_automations")


async def test_per_home_rights(make_hc: Any) -> None:
    """Per-home rights limit what a token sees and may change."""
    hc = await make_hc(init=False, homes=3)
    first, second, third = hc.sim.homes
    hc.sim.add_token("hc_limited", homes={first.slug: "control", second.slug: "view"})
    hc.token = "hc_limited"
    await hc.init()
    state = await hc.state()
    assert set(state["_homes"]) == {first.slug, second.slug}
    tools = (await hc.rpc("tools/list"))[1]["result"]["tools"]
    description = next(t for t in tools if t["name"] == "get_state")["description"]
    assert first.slug in description
    assert third.slug not in description
    room, acc = hc.find("switch", home=1)
    result = await hc.ok(
        "set_state",
        {"updates": [{"home": second.slug, "room": room, "accessory": acc, "on": True}]},
    )
    assert result["failed"] == 1
    assert result["errors"][0].startswith(f"{second.slug}: Permission denied")
    assert "HOME_NOT_FOUND" in await hc.fails(
        "run_scene", {"home": third.slug, "name": "Good Night"}
    )


async def test_oauth_consent_limits_homes(make_hc: Any) -> None:
    """The OAuth consent limits the token to the chosen homes."""
    hc = await make_hc(init=False)
    hc.sim.consent = {hc.home: "view"}
    _, tokens = await _oauth(hc)
    hc.token = tokens["access_token"]
    await hc.init()
    assert list((await hc.state())["_homes"]) == [hc.home]
    assert "Permission denied" in await hc.fails(
        "create_virtual_accessory", {"home": hc.home, "name": "X", "type": "switch"}
    )


# ---------------------------------------------------------------------------------------------
# catalog


async def test_tools_list_is_complete_and_personalised(make_hc: Any) -> None:
    """tools/list is complete and personalised to the token's homes."""
    hc = await make_hc()
    hc.sim.homes[1].view_only = True
    status, body = await hc.rpc("tools/list")
    assert status == 200
    tools = body["result"]["tools"]
    assert {t["name"] for t in tools} == TOOL_NAMES
    assert len(TOOLS) == len(TOOL_NAMES)
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object"
        assert set(tool["annotations"]) == {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }
        assert tool["annotations"]["destructiveHint"] == tool["name"].startswith("delete_")
    by_name = {t["name"]: t for t in tools}
    assert by_name["get_state"]["annotations"]["readOnlyHint"] is True
    assert by_name["set_state"]["annotations"]["readOnlyHint"] is False
    for home in hc.sim.homes:
        assert home.slug in by_name["get_state"]["description"]
        for room in home.rooms:
            assert room.name in by_name["get_state"]["description"]
    automations = by_name["get_automations"]["description"]
    assert "; HomeKit automations read-only)" in automations
    assert automations.count("HomeKit automations read-only") == 1
    for home in hc.sim.homes:
        assert f"{home.slug} (rooms: {home.rooms[0].name}" in automations


# ---------------------------------------------------------------------------------------------
# get_state


async def test_get_state_shape(hc: Hc) -> None:
    """get_state has the upstream shape: meta, homes, rooms, accessories, settable keys."""
    state = await hc.state()
    accessories = _accessories(state)
    assert state["_meta"]["message"] == (
        f"Found {len(accessories)} accessories across {len(state['_homes'])} home(s)"
    )
    datetime.fromisoformat(state["_meta"]["fetched_at"])
    kinds = set()
    for home, room, key, acc in accessories:
        kinds.add(acc["type"])
        # src/server/local-rest.ts getState: the slug path, never display names.
        assert acc["name"] == f"{home}.{room}.{key}"
        assert set(acc.get("_settable", [])) <= acc.keys()
    real = {"light", "switch", "outlet", "climate", "lock", "alarm", "motion", "contact"}
    real |= {"temperature", "fan", "blind", "valve", "speaker", "light_sensor", "doorbell"}
    assert real | {"button", "other"} <= kinds
    assert kinds <= set(TYPES)
    for home in state["_homes"]:
        assert "Good Morning" in state[home]["_scenes"]
    groups = [(h, r, k, a) for h, r, k, a in accessories if a.get("group")]
    assert groups
    for home, room, key, group in groups:
        assert len(group["accessories"]) >= 2
        for member_key, member in group["accessories"].items():
            assert member["name"] == f"{home}.{room}.{key}.{member_key}"
    # Virtual accessories: ordinary accessories of type "other" (a switch: "switch") in the
    # no-room listing, carrying their value key and nothing of their definition.
    virtuals = {k: a for _, r, k, a in accessories if r == "unknown_0000"}
    assert {a["type"] for a in virtuals.values()} == {"other", "switch"}
    keys = {k for a in virtuals.values() for k in a if k.startswith("virtual_")}
    assert keys == {
        "virtual_mode",
        "virtual_count",
        "virtual_number",
        "virtual_text",
        "virtual_timer",
        "virtual_datetime",
    }
    invented = {
        "virtual",
        "virtual_type",
        "options",
        "controllable",
        "id",
        "min",
        "max",
        "_options",
    }
    assert not any(invented & a.keys() for a in virtuals.values())
    note = next(a for a in virtuals.values() if "virtual_text" in a)
    assert "_settable" not in note  # "Adjustable here" off: not writable for people
    # Raw characteristic names pass through (getSimpleName keeps them).
    raw = {k for *_, a in accessories for k in a}
    assert {"leak_detected", "smoke_detected", "carbon_monoxide_detected"} <= raw
    assert {"occupancy_detected", "heating_cooling_target", "temperature_units"} <= raw
    climate = next(a for *_, a in accessories if a["type"] == "climate" and "hvac_mode" in a)
    assert climate["hvac_mode"] in ("auto", "heat", "cool")
    assert climate["hvac_state"] in ("inactive", "idle", "heating", "cooling")
    assert isinstance(climate["current_temp"], float)
    assert "current_temperature" not in climate
    light = next(a for *_, a in accessories if a["type"] == "light" and "color_temp" in a)
    assert 140 <= light["color_temp"] <= 500


async def test_get_state_filters(hc: Hc) -> None:
    """get_state filters by home, room and type."""
    second = hc.sim.homes[1]
    state = await hc.state(filter_by_home=second.slug[:6])
    assert list(state["_homes"]) == [second.slug]
    room = second.rooms[1]
    state = await hc.state(filter_by_room=room.name.upper())
    for key, body in state.items():
        if not key.startswith("_"):
            rooms = [r for r in body if not r.startswith("_")]
            assert rooms == [hc.sim.home(key).find_room(room.name).slug]  # type: ignore[union-attr]
    locks = _accessories(await hc.state(filter_by_type="lock"))
    assert locks
    assert all(a["type"] == "lock" for *_, a in locks)
    # get_state's own type names only: HomeKit's "lightbulb" matches nothing.
    nothing = await hc.state(filter_by_type="lightbulb")
    assert nothing["_homes"] == {}
    assert nothing["_meta"]["message"] == "Found 0 accessories across 0 home(s)"
    named = _accessories(await hc.state(filter_by_name="door lock"))
    assert named
    assert all("door_lock" in key for _, _, key, _ in named)


async def test_generation_is_deterministic_and_scales(make_hc: Any) -> None:
    """Generation is deterministic per seed and scales to more homes."""
    one = await (await make_hc(seed=5)).state()
    two = await (await make_hc(seed=5)).state()
    other = await (await make_hc(seed=6)).state()
    assert one == two
    assert one["_homes"] != other["_homes"]
    big = await make_hc(homes=3, accessories_per_home=100)
    state = await big.state()
    assert len(state["_homes"]) == 3
    devices = [
        a for _, r, _, a in _accessories(state) if r != "unknown_0000" and not a.get("group")
    ]
    assert len(devices) == 300
    assert len({(h, r, k) for h, r, k, _ in _accessories(state)}) == len(_accessories(state))


async def test_unreachable_accessory_keeps_cached_values_and_fails_writes(hc: Hc) -> None:
    """An unreachable accessory shows HomeKit's cached values; a write fails after the bound."""
    room, acc = hc.find("light")
    before = (await hc.state())[hc.home][room][acc]
    hc.sim.set_reachable(hc.home, acc, False)
    hc.sim.relay_write_timeout = 0.01
    assert (await hc.state())[hc.home][room][acc] == before
    result = await hc.ok(
        "set_state", {"updates": [{"home": hc.home, "room": room, "accessory": acc, "on": True}]}
    )
    assert result["updated"] == 0
    assert "ACCESSORY_UNREACHABLE" in result["errors"][0]
    assert "did not confirm the write within 10s" in result["errors"][0]


# ---------------------------------------------------------------------------------------------
# set_state


async def test_set_state_result_and_changes(hc: Hc) -> None:
    """set_state answers its counts and changes and applies the value."""
    room, acc = hc.find("light", hue=True)
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {"home": hc.home, "room": room, "accessory": acc, "on": True, "brightness": 80}
            ]
        },
    )
    assert result == {
        "updated": 1,
        "failed": 0,
        "changes": [f"{hc.home}/{room}/{acc}: on=true, brightness=80"],
        "errors": [],
        "message": result["message"],
    }
    assert result["message"]
    values = hc.sim.values(hc.home, acc)
    assert values["on"] is True
    assert values["brightness"] == 80


async def test_writes_land_after_the_relay_delay(make_hc: Any) -> None:
    """Writes land after the relay delay; reads show the old value meanwhile."""
    hc = await make_hc(write_delay=30)
    room, acc = hc.find("switch")
    before = hc.sim.values(hc.home, acc)["on"]
    await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": room, "accessory": acc, "on": not before}]},
    )
    assert hc.sim.pending_writes == 1
    assert (await hc.state())[hc.home][room][acc]["on"] is before
    hc.sim.flush()
    assert hc.sim.pending_writes == 0
    assert (await hc.state())[hc.home][room][acc]["on"] is (not before)


async def test_set_state_accepts_names_and_reports_failures_per_home(hc: Hc) -> None:
    """set_state accepts names and reports failures per home."""
    h = hc.sim.homes[0]
    acc = next(a for a in h.devices() if a.kind == "switch")
    room = h.room_of(acc)
    _, sensor = hc.find("motion")
    sensor_room = h.room_of(hc.sim.accessory(hc.home, sensor)).slug
    _, light = hc.find("light")
    light_room = h.room_of(hc.sim.accessory(hc.home, light)).slug
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {"home": h.name, "room": room.name, "accessory": acc.name, "on": True},
                {"home": "Atlantis", "room": "x", "accessory": "y", "on": True},
                {"home": hc.home, "room": sensor_room, "accessory": sensor, "motion": True},
                {"home": hc.home, "room": light_room, "accessory": light, "brightness": "lots"},
                {"home": hc.home, "room": light_room, "accessory": "ghost_0000", "on": True},
            ]
        },
    )
    assert result["updated"] == 1
    assert result["failed"] == 4
    assert result["changes"] == [f"{hc.home}/{room.slug}/{acc.slug}: on=true"]
    assert len(result["errors"]) == 2
    assert result["errors"][0].startswith("Atlantis: HOME_NOT_FOUND")
    mine = result["errors"][1]
    assert mine.startswith(f"{hc.home}: ")
    assert "CHARACTERISTIC_NOT_WRITABLE" in mine
    assert "INVALID_VALUE" in mine
    assert "ghost_0000" in mine


async def test_set_state_clamps_out_of_range_values(hc: Hc) -> None:
    """The relay clamps a number to the characteristic's range (convertValue, clampToRange)."""
    room, light = hc.find("light")
    result = await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": room, "accessory": light, "brightness": 140}]},
    )
    assert (result["updated"], result["failed"]) == (1, 0)
    assert hc.sim.values(hc.home, light)["brightness"] == 100


async def test_community_set_state_counts_every_update_applied(
    make_hc: Callable[..., Awaitable[Hc]],
) -> None:
    """local-rest.ts handleSetState ignores the relay's failed list: no error per accessory.

    Only a home it cannot find (or a relay call that throws) fails, for the whole home.
    """
    hc = await make_hc(community=True)
    hc.sim.relay_write_timeout = 0.01
    h = hc.sim.homes[0]
    switch = next(a for a in h.devices() if a.kind == "switch")
    _, sensor = hc.find("motion")
    sensor_room = h.room_of(hc.sim.accessory(hc.home, sensor)).slug
    hc.sim.set_reachable(hc.home, switch.slug, False)
    result = await hc.ok_community(
        "set_state",
        {
            "updates": [
                {"home": hc.home, "room": h.room_of(switch).slug, "accessory": switch.slug},
                {"home": hc.home, "room": sensor_room, "accessory": sensor, "on": True},
                {"home": "atlantis_0000", "room": "x", "accessory": "y", "on": True},
            ]
        },
    )
    assert (result["updated"], result["failed"]) == (2, 1)
    assert result["errors"] == ["atlantis_0000: HOME_NOT_FOUND: no home matches 'atlantis_0000'"]


async def test_set_state_rejects_malformed_updates(hc: Hc) -> None:
    """set_state refuses malformed updates with upstream's messages."""
    assert "updates" in await hc.fails("set_state", {})
    assert "updates" in await hc.fails("set_state", {"updates": []})
    assert "'room' is required" in await hc.fails(
        "set_state", {"updates": [{"home": hc.home, "accessory": "x", "on": True}]}
    )


async def test_device_write_rules(hc: Hc) -> None:
    """Device write rules: climate, lights and covers write as upstream maps them."""
    croom, climate = hc.find("climate", hvac_mode=True)
    lroom, lock = hc.find("lock")
    aroom, alarm = hc.find("alarm")
    broom, blind = hc.find("blind")
    froom, fan = hc.find("fan")
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {"home": hc.home, "room": croom, "accessory": climate, "hvac_mode": "off"},
                {"home": hc.home, "room": lroom, "accessory": lock, "lock_target": 0},
                {"home": hc.home, "room": aroom, "accessory": alarm, "alarm_target": 1},
                {"home": hc.home, "room": broom, "accessory": blind, "target": 30},
                {"home": hc.home, "room": froom, "accessory": fan, "active": True, "speed": 75},
            ]
        },
    )
    assert result["updated"] == 5, result
    assert hc.sim.values(hc.home, climate)["active"] is False
    assert hc.sim.values(hc.home, climate)["hvac_state"] == "inactive"
    assert hc.sim.values(hc.home, lock)["locked"] is False
    assert hc.sim.values(hc.home, alarm)["alarm_state"] == "away"
    assert hc.sim.values(hc.home, blind)["current_position"] == 30
    assert hc.sim.values(hc.home, fan)["speed"] == 75
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {
                    "home": hc.home,
                    "room": croom,
                    "accessory": climate,
                    "active": True,
                    "hvac_mode": "heat",
                    "heat_target": 25.0,
                }
            ]
        },
    )
    assert result["updated"] == 1
    values = hc.sim.values(hc.home, climate)
    assert values["hvac_mode"] == "heat"
    assert values["hvac_state"] == ("heating" if values["current_temp"] < 24.5 else "idle")


async def test_thermostat_raw_keys(hc: Hc) -> None:
    """Thermostats take raw keys; read-only characteristics refuse writes."""
    room, thermostat = hc.find("climate", heating_cooling_target=True)
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {
                    "home": hc.home,
                    "room": room,
                    "accessory": thermostat,
                    "heating_cooling_target": 2,
                    "target_temp": 19.5,
                },
                {"home": hc.home, "room": room, "accessory": thermostat, "hvac_mode": "cool"},
            ]
        },
    )
    assert result["updated"] == 1
    assert "CHARACTERISTIC_NOT_WRITABLE" in result["errors"][0]
    values = hc.sim.values(hc.home, thermostat)
    assert values["heating_cooling_current"] == 2
    assert values["target_temp"] == 19.5


async def test_group_write_reaches_every_member(hc: Hc) -> None:
    """A group write reaches every member."""
    h = hc.sim.homes[0]
    group = next(a for a in h.all_accessories() if a.members)
    room = h.room_of(group).slug
    result = await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": room, "accessory": group.slug, "brightness": 33}]},
    )
    assert result["updated"] == 1
    assert all(m.values["brightness"] == 33 for m in group.members or [])


async def test_virtual_writes(hc: Hc) -> None:
    """Virtual accessories take writes unless not adjustable."""
    room, mode = hc.virtual("House Mode")
    _, note = hc.virtual("Away Note")
    _, counter = hc.virtual("Visit Counter")
    _, guest = hc.virtual("Guest Switch")
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {"home": hc.home, "room": room, "accessory": mode, "virtual_mode": "Away"},
                {"home": hc.home, "room": room, "accessory": counter, "virtual_count": 7},
                {"home": hc.home, "room": room, "accessory": guest, "on": True},
                {"home": hc.home, "room": room, "accessory": note, "virtual_text": "hi"},
                {"home": hc.home, "room": room, "accessory": mode, "virtual_mode": "Party"},
            ]
        },
    )
    assert result["updated"] == 3
    assert result["failed"] == 2
    assert "not adjustable" in result["errors"][0]
    assert "Party" in result["errors"][0]
    assert hc.sim.values(hc.home, mode)["virtual_mode"] == "Away"
    assert hc.sim.values(hc.home, counter)["virtual_count"] == 7
    assert "_settable" not in (await hc.state())[hc.home][room][note]


async def test_legacy_vocabulary(make_hc: Any) -> None:
    """The legacy vocabulary replaces every current key and numeric states."""
    hc = await make_hc(vocabulary="legacy")
    state = await hc.state()
    accs = [a for *_, a in _accessories(state)]
    blob = json.dumps(state)
    for current in ('"hvac_mode"', '"hvac_state"', '"speed"', '"target"', '"battery"'):
        assert current not in blob
    climate = next(a for a in accs if "target_heater_cooler_state" in a)
    assert climate["target_heater_cooler_state"] in (0, 1, 2)
    assert isinstance(climate["current_heater_cooler_state"], int)
    assert "target_heater_cooler_state" in climate["_settable"]
    assert any("rotation_speed" in a for a in accs)
    assert any("target_position" in a for a in accs)
    froom, fan = hc.find("fan")
    croom, ac = hc.find("climate", hvac_mode=True)
    result = await hc.ok(
        "set_state",
        {
            "updates": [
                {"home": hc.home, "room": froom, "accessory": fan, "rotation_speed": 20},
                {"home": hc.home, "room": croom, "accessory": ac, "target_heater_cooler_state": 1},
            ]
        },
    )
    assert result["updated"] == 2
    shown = (await hc.state())[hc.home]
    assert shown[froom][fan]["rotation_speed"] == 20
    assert shown[croom][ac]["target_heater_cooler_state"] == 1
    await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": froom, "accessory": fan, "speed": 90}]},
    )
    assert (await hc.state())[hc.home][froom][fan]["rotation_speed"] == 90


async def test_state_file_is_served_in_its_own_vocabulary(make_hc: Any) -> None:
    """A saved state file is served in its own vocabulary."""
    hc = await make_hc(state_file=LEGACY_FILE)
    saved = json.loads(LEGACY_FILE.read_text())
    state = await hc.state()
    assert state["_homes"] == saved["_homes"]
    for home, body in saved.items():
        if home.startswith("_"):
            continue
        assert set(state[home]) == set(body)
        for room, accs in body.items():
            if room.startswith("_"):
                continue
            assert state[home][room] == accs
    home = next(iter(saved["_homes"]))
    room, key = next(
        (r, k)
        for r, accs in saved[home].items()
        if not r.startswith("_")
        for k, a in accs.items()
        if a["type"] == "fan"
    )
    result = await hc.ok(
        "set_state",
        {"updates": [{"home": home, "room": room, "accessory": key, "rotation_speed": 10}]},
    )
    assert result["updated"] == 1
    assert (await hc.state())[home][room][key]["rotation_speed"] == 10


async def test_real_capture_is_replayed_exactly(make_hc: Any) -> None:
    """`--state FILE` serves a real get_state answer as captured: no key gets a second tail."""
    hc = await make_hc(state_file=REAL_FILE)
    saved = json.loads(REAL_FILE.read_text())
    state = await hc.state()
    state.pop("_meta")
    assert state == saved
    # Writes still land, addressed by the captured keys, in the captured spelling.
    home = "george_street_b438"
    room, key = "living_room_a450", "living_room_ceiling_fan_cc3a"
    result = await hc.ok(
        "set_state", {"updates": [{"home": home, "room": room, "accessory": key, "speed": 10}]}
    )
    assert result["updated"] == 1
    assert (await hc.state())[home][room][key]["rotation_speed"] == 10
    mode = {"home": home, "room": "unknown_0000", "accessory": "house_mode_99c9"}
    await hc.ok("set_state", {"updates": [{**mode, "virtual_mode": "Away"}]})
    assert (await hc.state())[home]["unknown_0000"]["house_mode_99c9"]["virtual_mode"] == "Away"
    note = {"home": home, "room": "unknown_0000", "accessory": "away_note_9cbc"}
    refused = await hc.ok("set_state", {"updates": [{**note, "virtual_text": "x"}]})
    assert refused["failed"] == 1  # "Adjustable here" off: reported in failed


# ---------------------------------------------------------------------------------------------
# the community server (Homecast Mac app, src/server/local-server.ts + local-mcp.ts)


async def _community(make_hc: Any, **options: Any) -> Hc:
    return await make_hc(init=False, community=True, **options)


async def test_community_protocol(make_hc: Any) -> None:
    """2024-11-05 whatever is asked, no session, plain JSON, notifications answered too."""
    hc = await _community(make_hc)
    result = await hc.init("2025-11-25")
    assert result == {
        "protocolVersion": "2024-11-05",
        "serverInfo": {"name": "homecast-community", "version": "1.0.0"},
        "capabilities": {"tools": {}},
    }
    assert hc.session is None
    response = await hc.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert response.status == 200
    assert response.content_type == "application/json"
    assert await response.json() == {"jsonrpc": "2.0", "id": None, "result": {}}
    result = await hc.call("get_state")
    assert "isError" not in result  # success carries no isError at all
    state = json.loads(result["content"][0]["text"])
    fan = next(a for *_, a in _accessories(state) if a["type"] == "fan")
    assert "rotation_speed" in fan  # not simplified by CHAR_TO_SIMPLE
    assert not any("_options" in a for *_, a in _accessories(state))
    status, body = await hc.rpc("resources/list")
    assert status == 200
    assert body["error"]["code"] == -32601
    for method in ("get", "delete"):
        response = await hc.client.request(method, "/mcp", headers=hc.headers())
        assert response.status == 200
        assert await response.json() == {"error": "Not found"}
    response = await hc.post(b"{nope")
    assert (await response.json())["error"]["code"] == -32700


@pytest.mark.parametrize("token", ["", "expired.jwt.token"])
async def test_community_refuses_with_a_plain_body(make_hc: Any, token: str) -> None:
    """A missing or wrong token: HTTP 200 and {"error": ...}, neither 401 nor JSON-RPC."""
    hc = await _community(make_hc)
    hc.token = token
    response = await hc.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    assert response.status == 200
    assert await response.json() == {"error": "Authentication required"}


async def test_community_auth_gate_follows_the_source(make_hc: Any) -> None:
    """hc_ tokens pass the /mcp gate unchecked; with authentication off anyone gets in."""
    hc = await _community(make_hc)
    hc.token = "hc_not_a_real_token"
    assert (await hc.init())["protocolVersion"] == "2024-11-05"
    open_server = await _community(make_hc, community_auth=False)
    open_server.token = ""
    assert (await open_server.init())["protocolVersion"] == "2024-11-05"


async def test_community_set_state_drops_what_it_does_not_know(make_hc: Any) -> None:
    """handleSetState keeps only its settableProps: a virtual mode write is dropped silently."""
    hc = await _community(make_hc)
    await hc.init()
    room, key = hc.virtual("House Mode")
    before = hc.sim.values(hc.home, key)["virtual_mode"]
    update = {"home": hc.home, "room": room, "accessory": key, "virtual_mode": "Night"}
    result = await hc.ok_community("set_state", {"updates": [update]})
    assert result["updated"] == 1
    assert result["failed"] == 0
    assert hc.sim.values(hc.home, key)["virtual_mode"] == before
    room, light = hc.find("light")
    update = {"home": hc.home, "room": room, "accessory": light, "on": True, "virtual_mode": "x"}
    result = await hc.ok_community("set_state", {"updates": [update]})
    assert result["changes"] == [f"{hc.home}/{room}/{light}: on=true"]


# ---------------------------------------------------------------------------------------------
# outside world and control routes


async def test_external_changes_pairing_and_removal(hc: Hc) -> None:
    """External changes, pairing and removal show in get_state."""
    room, sensor = hc.find("contact")
    hc.sim.external_change(hc.home, sensor, contact=1)
    assert (await hc.state())[hc.home][room][sensor]["contact"] == 1
    new = hc.sim.pair_accessory(hc.home, "Loft", "Loft Lamp", "light")
    loft = hc.sim.homes[0].find_room("Loft")
    assert loft is not None
    assert new in (await hc.state())[hc.home][loft.slug]
    hc.sim.remove_accessory(hc.home, new)
    assert new not in json.dumps(await hc.state())
    _, bell = hc.find("doorbell")
    hc.sim.press(hc.home, bell)
    assert hc.sim.values(hc.home, bell)["programmable_switch_event"] == 0


async def test_control_routes(hc: Hc) -> None:
    """The control routes toggle, change and unplug accessories."""
    _, switch = hc.find("switch")
    before = hc.sim.values(hc.home, switch)["on"]
    response = await hc.client.post(
        "/_sim/homecast/change",
        json={"home": hc.home, "accessory": switch, "values": {"on": not before}},
    )
    assert (await response.json())["on"] is (not before)
    response = await hc.client.post(
        "/_sim/homecast/reachable", json={"home": hc.home, "accessory": switch, "reachable": False}
    )
    assert response.status == 200
    assert hc.sim.accessory(hc.home, switch).reachable is False
    response = await hc.client.post(
        "/_sim/homecast/pair",
        json={"home": hc.home, "room": "Kitchen", "name": "Kettle", "type": "outlet"},
    )
    assert (await response.json())["accessory"].startswith("kettle_")
    assert (await (await hc.client.post("/_sim/homecast/expire_sessions")).json())["expired"] == 1
    assert (await hc.client.post("/_sim/homecast/change", json={})).status == 400
    assert (await hc.client.post("/_sim/homecast/nothing")).status == 404


# ---------------------------------------------------------------------------------------------
# history


async def test_query_history_raw_and_filters(hc: Hc) -> None:
    """query_history answers raw series and honours its filters."""
    result = await hc.ok("query_history", {"characteristics": ["on"]})
    assert result["home"] == hc.home
    assert result["resolution"] == "raw"
    assert result["series"]
    for series in result["series"]:
        assert series["characteristic"] == "power_state"
        assert series["kind"] == "state"
        assert series["count"] == len(series["points"])
        times = [p[0] for p in series["points"]]
        assert times == sorted(times)
        assert all(isinstance(p[1], bool) for p in series["points"])


async def test_query_history_buckets(hc: Hc) -> None:
    """query_history buckets by hour, numeric and state series alike."""
    result = await hc.ok(
        "query_history",
        {"start": "2026-11-25T00:00:00Z", "end": "2026-11-28T00:00:00Z", "resolution": "auto"},
    )
    assert result["resolution"] == "hourly"
    numeric = [s for s in result["series"] if s["kind"] == "numeric"]
    state = [s for s in result["series"] if s["kind"] == "state"]
    assert numeric
    assert state
    for series in numeric:
        for when, low, avg, high in series["points"]:
            assert low <= avg <= high
            assert datetime.fromisoformat(when).minute == 0
    for series in state:
        for _when, transitions, ms in series["points"]:
            assert transitions >= 0
            assert 0 < sum(ms.values()) <= 3_600_000
    daily = await hc.ok("query_history", {"start": "2026-11-23T00:00:00Z", "resolution": "daily"})
    assert all(len(p) == 4 for s in daily["series"] if s["kind"] == "numeric" for p in s["points"])


async def test_query_history_pages_with_continue_from(hc: Hc) -> None:
    """query_history pages with continue_from."""
    args = {
        "characteristics": ["current_temperature"],
        "start": "2026-11-23T00:00:00Z",
        "end": "2026-11-29T00:00:00Z",
        "resolution": "raw",
        "max_points_per_series": 10,
    }
    first = await hc.ok("query_history", args)
    assert first["truncated"] is True
    series = first["series"][0]
    assert series["count"] == 10
    nxt = await hc.ok(
        "query_history",
        {**args, "start": series["continue_from"], "accessories": [series["accessory"]]},
    )
    assert nxt["series"][0]["points"][0][0] == series["continue_from"]
    assert nxt["series"][0]["points"][0][0] > series["points"][-1][0]
    assert "positive" in await hc.fails("query_history", {"max_points_per_series": 0})
    assert "before" in await hc.fails(
        "query_history", {"start": "2026-11-29T00:00:00Z", "end": "2026-11-28T00:00:00Z"}
    )


async def test_history_off_is_a_message_not_an_error(hc: Hc) -> None:
    """History switched off is a message, not an error."""
    second = hc.sim.homes[1]
    assert second.analytics is False
    result = await hc.ok("query_history", {"home": second.name[:5]})
    assert result["enabled"] is False
    assert "Analytics" in result["message"]
    acc = second.devices()[0]
    result = await hc.ok("get_history", {"accessory": acc.slug})
    assert result["enabled"] is False


async def test_get_history(hc: Hc) -> None:
    """get_history answers a series per characteristic: bounded values with a min, avg, max
    summary, and transitions."""
    _, sensor = hc.find("temperature")
    result = await hc.ok("get_history", {"accessory": sensor, "max_points": 5})
    series = {s["characteristic"]: s for s in result["series"]}
    temp = series["current_temperature"]
    assert temp["kind"] == "numeric"
    assert 0 < len(temp["values"]) <= 5
    summary = temp["summary"]
    assert summary["min"] <= summary["avg"] <= summary["max"]
    assert result["accessory"]["key"] == sensor
    room, light = hc.find("light")
    was = hc.sim.values(hc.home, light)["on"]
    hc.clock.advance(2 * 3600)  # past the synthesized week, which ended at the first read
    await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": room, "accessory": light, "on": not was}]},
    )
    hc.clock.advance(60)
    hc.sim.external_change(hc.home, light, on=was)  # someone flips it back by hand
    hc.clock.advance(60)
    result = await hc.ok("get_history", {"accessory": light, "characteristic": "on", "hours": 1})
    (power,) = result["series"]
    assert power["characteristic"] == "power_state"
    assert power["openingValue"] == was
    transitions = power["transitions"]
    assert [t[1] for t in transitions] == [not was, was]
    assert transitions[1][0] > transitions[0][0]
    missing = await hc.ok("get_history", {"accessory": light, "characteristic": "co2"})
    assert "not recordable" in missing["error"]
    assert "not found" in await hc.fails("get_history", {"accessory": "zzz_nothing"})
    assert "required" in await hc.fails("get_history", {})


# ---------------------------------------------------------------------------------------------
# scenes


async def test_run_scene(hc: Hc) -> None:
    """run_scene applies the scene's actions."""
    scene = hc.sim.homes[0].find_scene("Movie Time")
    assert scene is not None
    target = scene.actions[0]["accessory"]
    result = await hc.ok("run_scene", {"home": hc.sim.homes[0].name, "name": "movie time"})
    assert result["success"] is True
    assert hc.sim.values(hc.home, target)["brightness"] == 20
    text = await hc.fails("run_scene", {"home": hc.home, "name": "Disco"})
    assert "Disco" in text
    assert "Good Night" in text


async def test_scene_management(hc: Hc) -> None:
    """Scenes are listed, created, updated and deleted; unknown ones are refused."""
    _, light = hc.find("light")
    _, virtual = hc.virtual("Guest Switch")
    text = await hc.fails(
        "create_scene",
        {
            "home": hc.home,
            "name": "Lights (evening)",
            "actions": [{"accessory": light, "on": True}],
        },
    )
    assert "Lights evening" in text
    assert "not found" in await hc.fails(
        "create_scene",
        {"home": hc.home, "name": "Guests", "actions": [{"accessory": virtual, "on": True}]},
    )
    created = await hc.ok(
        "create_scene",
        {"home": hc.home, "name": "Reading", "actions": [{"accessory": light, "brightness": 60}]},
    )
    assert created["scene"]["name"] == "Reading"
    assert "Reading" in (await hc.state())[hc.home]["_scenes"]
    assert "already exists" in await hc.fails(
        "create_scene",
        {"home": hc.home, "name": "reading", "actions": [{"accessory": light, "on": True}]},
    )
    updated = await hc.ok(
        "update_scene", {"home": hc.home, "name": "Reading", "new_name": "Reading 2"}
    )
    assert updated["scene"]["actions"] == [{"accessory": light, "brightness": 60}]
    assert "built-in" in await hc.fails(
        "update_scene", {"home": hc.home, "name": "Good Night", "new_name": "Bed"}
    )
    owned = await hc.fails("delete_scene", {"home": hc.home, "name": "Porch at sunset"})
    assert "Lock up at sunset" in owned
    assert (await hc.ok("delete_scene", {"home": hc.home, "name": "Reading 2"}))[
        "deleted"
    ] == "Reading 2"
    hc.sim.homes[0].scene_management = False
    assert "scene management" in await hc.fails(
        "delete_scene", {"home": hc.home, "name": "Movie Time"}
    )


# ---------------------------------------------------------------------------------------------
# HomeKit automations


async def test_get_automations(hc: Hc) -> None:
    """get_automations lists each home's automations and its view-only homes."""
    hc.sim.homes[1].view_only = True
    result = await hc.ok("get_automations")
    assert result["_meta"]["view_only_homes"] == [hc.sim.homes[1].slug]
    autos = result[hc.home]
    assert {"id", "name", "enabled", "editable", "trigger", "actions", "last_fired"} <= autos[
        0
    ].keys()
    locked = next(a for a in autos if not a["editable"])
    assert locked["trigger"]["activation_issue"] == "disabledNoHomeHub"
    assert list(await hc.ok("get_automations", {"filter_by_home": hc.home})) == [hc.home, "_meta"]


async def test_homekit_automation_lifecycle(hc: Hc) -> None:
    """A HomeKit automation is created, renamed, moved (new id) and deleted."""
    _, light = hc.find("light")
    _, motion = hc.find("motion")
    trigger = {"type": "timer", "hour": 7, "minute": 30, "recurrenceType": "daily"}
    created = (
        await hc.ok(
            "create_automation",
            {
                "home": hc.home,
                "name": "Morning",
                "trigger": trigger,
                "actions": [{"accessory": light, "on": True}],
            },
        )
    )["automation"]
    renamed = await hc.ok(
        "update_automation", {"home": hc.home, "id": created["id"], "name": "Morning 2"}
    )
    assert renamed["id"] == created["id"]
    assert renamed["id_changed"] is False
    event = {
        "type": "event",
        "events": [
            {
                "type": "characteristic",
                "accessory": motion,
                "characteristic": "motion",
                "value": True,
            }
        ],
    }
    moved = await hc.ok(
        "update_automation", {"home": hc.home, "id": created["id"], "trigger": event}
    )
    assert moved["id_changed"] is True
    assert moved["id"] != created["id"]
    assert "not found" in await hc.fails(
        "update_automation", {"home": hc.home, "id": created["id"], "enabled": False}
    )
    paused = await hc.ok(
        "update_automation", {"home": hc.home, "id": moved["id"], "enabled": False}
    )
    assert paused["automation"]["enabled"] is False
    assert (await hc.ok("delete_automation", {"home": hc.home, "id": moved["id"]}))[
        "deleted"
    ] == moved["id"]


async def test_homekit_automation_limits(hc: Hc) -> None:
    """HomeKit automation limits are refused with upstream's hints."""
    _, light = hc.find("light")
    _, sensor = hc.find("temperature")
    actions = [{"accessory": light, "on": True}]
    presence = {"type": "event", "events": [{"type": "presence"}]}
    assert "Apple Home app" in await hc.fails(
        "create_automation",
        {"home": hc.home, "name": "Hi", "trigger": presence, "actions": actions},
    )
    threshold = {
        "type": "event",
        "events": [{"type": "significantTime", "significantEvent": "sunset"}],
        "conditions": [
            {
                "type": "characteristic",
                "accessory": sensor,
                "characteristic": "current_temp",
                "above": 5,
            }
        ],
    }
    assert "create_hc_automation" in await hc.fails(
        "create_automation",
        {"home": hc.home, "name": "Cold", "trigger": threshold, "actions": actions},
    )
    assert "try 'Lights evening'" in await hc.fails(
        "create_automation",
        {
            "home": hc.home,
            "name": "Lights (evening)",
            "trigger": {"type": "timer", "hour": 1, "minute": 0},
            "actions": actions,
        },
    )
    locked = next(a for a in hc.sim.homes[0].automations if not a["editable"])
    assert "only name and enabled" in await hc.fails(
        "update_automation", {"home": hc.home, "id": locked["id"], "actions": actions}
    )
    assert (
        await hc.ok("update_automation", {"home": hc.home, "id": locked["id"], "name": "Hello"})
    )["automation"]["name"] == "Hello"
    owner = next(a for a in hc.sim.homes[0].automations if a["name"] == "Lock up at sunset")
    await hc.ok("delete_automation", {"home": hc.home, "id": owner["id"]})
    assert "Porch at sunset" not in (await hc.state())[hc.home]["_scenes"]
    hc.sim.homes[0].view_only = True
    assert "INSUFFICIENT_HOMEKIT_PRIVILEGES" in await hc.fails(
        "create_automation",
        {
            "home": hc.home,
            "name": "X",
            "trigger": {"type": "timer", "hour": 1, "minute": 0},
            "actions": actions,
        },
    )


# ---------------------------------------------------------------------------------------------
# Homecast automations and virtual accessories


async def test_worked_example_and_merge_updates(hc: Hc) -> None:
    """The worked example runs and updates merge into what is stored."""
    _, ac = hc.find("climate", hvac_mode=True)
    _, sensor = hc.find("temperature", relative_humidity=True)
    cycle = (
        await hc.ok(
            "create_virtual_accessory",
            {
                "home": hc.home,
                "name": "Bedroom 1 Dry Cycle",
                "type": "mode",
                "options": ["Idle", "Running", "Cancelled"],
            },
        )
    )["accessory"]
    assert cycle["virtual_mode"] == "Idle"
    assert cycle["slug"].startswith("bedroom_1_dry_cycle_")
    spec = {
        "home": hc.home,
        "name": "Dry cycle start",
        "triggers": [
            {
                "type": "numeric",
                "accessory": sensor,
                "characteristic": "relative_humidity",
                "above": 65,
                "for": {"minutes": 10},
            }
        ],
        "conditions": [
            {"type": "virtual", "virtual": cycle["slug"], "equals": "Idle"},
            {
                "operator": "or",
                "conditions": [
                    {"type": "device", "accessory": ac, "characteristic": "active", "value": False},
                    {"type": "time", "after": "09:00", "before": "21:00"},
                ],
            },
        ],
        "actions": [
            {
                "type": "device",
                "accessory": ac,
                "active": True,
                "hvac_mode": "cool",
                "cool_target": 18,
            },
            {"type": "virtual", "virtual": cycle["slug"], "operation": "set", "value": "Running"},
            {"type": "notify", "message": "Drying", "title": "Bedroom"},
            {"type": "delay", "seconds": 60},
            {"type": "scene", "scene": "Movie Time"},
        ],
    }
    created = (await hc.ok("create_hc_automation", spec))["automation"]
    assert created["enabled"] is True
    assert created["mode"] == "single"
    assert created["editable_via_mcp"] is True
    paused = (
        await hc.ok(
            "update_hc_automation", {"home": hc.home, "id": created["id"], "enabled": False}
        )
    )["automation"]
    assert paused["id"] == created["id"]
    assert paused["triggers"] == spec["triggers"]
    assert paused["conditions"] == spec["conditions"]
    cleared = (
        await hc.ok(
            "update_hc_automation", {"home": hc.home, "id": created["id"], "conditions": []}
        )
    )["automation"]
    assert cleared["conditions"] == []
    assert cleared["actions"] == spec["actions"]
    listed = (await hc.ok("get_hc_automations", {"filter_by_home": hc.home}))[hc.home]
    assert any(a["id"] == created["id"] and a["enabled"] is False for a in listed)
    assert (await hc.ok("delete_hc_automation", {"home": hc.home, "id": created["id"]}))[
        "deleted"
    ] == created["id"]


async def test_hc_automation_validation_and_unsupported_nodes(hc: Hc) -> None:
    """Homecast automations validate their nodes and refuse unsupported ones."""
    _, light = hc.find("light")
    base = {
        "home": hc.home,
        "name": "X",
        "actions": [{"type": "device", "accessory": light, "on": True}],
    }
    assert "unknown trigger" in await hc.fails(
        "create_hc_automation", {**base, "triggers": [{"type": "geofence"}]}
    )
    assert "above" in await hc.fails(
        "create_hc_automation",
        {
            **base,
            "triggers": [{"type": "numeric", "accessory": light, "characteristic": "brightness"}],
        },
    )
    assert "HH:MM" in await hc.fails(
        "create_hc_automation", {**base, "triggers": [{"type": "time", "at": "7am"}]}
    )
    assert "mode" in await hc.fails(
        "create_hc_automation",
        {**base, "triggers": [{"type": "sun", "event": "sunset"}], "mode": "forever"},
    )
    assert "Virtual accessory" in await hc.fails(
        "create_hc_automation",
        {
            **base,
            "triggers": [{"type": "webhook", "webhook_id": "w"}],
            "actions": [
                {"type": "virtual", "virtual": "nope_0000", "operation": "set", "value": 1}
            ],
        },
    )
    legacy = next(a for a in hc.sim.homes[0].hc_automations if not a["editable_via_mcp"])
    renamed = (
        await hc.ok(
            "update_hc_automation", {"home": hc.home, "id": legacy["id"], "name": "Humidity alert"}
        )
    )["automation"]
    assert renamed["editable_via_mcp"] is False
    rewritten = (
        await hc.ok(
            "update_hc_automation",
            {
                "home": hc.home,
                "id": legacy["id"],
                "actions": [{"type": "notify", "message": "Humid"}],
            },
        )
    )["automation"]
    assert rewritten["editable_via_mcp"] is True


async def test_virtual_accessory_types_and_rules(hc: Hc) -> None:
    """Each virtual accessory type is created with its rules and values."""
    made = {}
    for kind, extra in (
        ("switch", {}),
        ("mode", {"options": ["A", "B"]}),
        ("number", {"min": 0, "max": 10, "unit": "°C", "initial": 4}),
        ("counter", {"step": 2}),
        ("timer", {"duration": 600}),
        ("text", {"initial": "hello"}),
        ("date", {}),
    ):
        made[kind] = (
            await hc.ok(
                "create_virtual_accessory",
                {"home": hc.home, "name": f"V {kind}", "type": kind, **extra},
            )
        )["accessory"]
        assert made[kind]["type"] == kind
    assert made["number"]["virtual_number"] == 4
    assert made["text"]["virtual_text"] == "hello"
    assert "options" in await hc.fails(
        "create_virtual_accessory", {"home": hc.home, "name": "M", "type": "mode"}
    )
    assert "min < max" in await hc.fails(
        "create_virtual_accessory", {"home": hc.home, "name": "N", "type": "number"}
    )
    assert "type must be" in await hc.fails(
        "create_virtual_accessory", {"home": hc.home, "name": "Q", "type": "dial"}
    )
    assert "initial" in await hc.fails(
        "create_virtual_accessory",
        {"home": hc.home, "name": "N2", "type": "number", "min": 0, "max": 1, "initial": 5},
    )
    assert "cannot change" in await hc.fails(
        "update_virtual_accessory", {"home": hc.home, "id": made["mode"]["id"], "type": "counter"}
    )
    room = hc.sim.homes[0].room_of(hc.sim.accessory(hc.home, made["mode"]["slug"])).slug
    await hc.ok(
        "set_state",
        {
            "updates": [
                {
                    "home": hc.home,
                    "room": room,
                    "accessory": made["mode"]["slug"],
                    "virtual_mode": "B",
                }
            ]
        },
    )
    swapped = (
        await hc.ok(
            "update_virtual_accessory",
            {"home": hc.home, "id": made["mode"]["slug"], "options": ["C", "D"]},
        )
    )["accessory"]
    assert swapped["virtual_mode"] == "C"
    assert swapped["options"] == ["C", "D"]
    renamed = (
        await hc.ok(
            "update_virtual_accessory",
            {"home": hc.home, "id": made["mode"]["id"], "name": "Renamed"},
        )
    )["accessory"]
    assert renamed["slug"] != made["mode"]["slug"]
    assert renamed["slug"].startswith("renamed_")
    await hc.ok(
        "set_state",
        {
            "updates": [
                {
                    "home": hc.home,
                    "room": room,
                    "accessory": made["timer"]["slug"],
                    "virtual_timer": "active",
                }
            ]
        },
    )
    assert hc.sim.values(hc.home, made["timer"]["slug"])["virtual_timer"] == "active"
    await hc.ok(
        "set_state",
        {
            "updates": [
                {
                    "home": hc.home,
                    "room": room,
                    "accessory": made["timer"]["slug"],
                    "virtual_timer": "stop",
                }
            ]
        },
    )
    assert hc.sim.values(hc.home, made["timer"]["slug"])["virtual_timer"] == "idle"
    date_updates = [
        {"home": hc.home, "room": room, "accessory": made["date"]["slug"], "virtual_datetime": v}
        for v in ("2026-12-24T18:00:00+01:00", "next tuesday")
    ]
    result = await hc.ok("set_state", {"updates": date_updates})
    assert result["updated"] == 1
    assert "ISO 8601" in result["errors"][0]
    assert hc.sim.values(hc.home, made["date"]["slug"])["virtual_datetime"].startswith("2026-12-24")
    assert (await hc.ok("delete_virtual_accessory", {"home": hc.home, "id": renamed["slug"]}))[
        "deleted"
    ] == renamed["slug"]
    assert "not found" in await hc.fails(
        "delete_virtual_accessory", {"home": hc.home, "id": renamed["slug"]}
    )


# ---------------------------------------------------------------------------------------------
# faults and stats


async def test_fault_switches(hc: Hc) -> None:
    """The fault switches make errors, malformed replies and outages."""
    faults = hc.client.server.app[FAULTS]
    faults.error_rate = 1.0
    assert (await hc.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status == 500
    faults.reset()
    faults.malformed = True
    response = await hc.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    with pytest.raises(json.JSONDecodeError):
        json.loads(await response.text())
    faults.reset()
    faults.offline = True
    with pytest.raises(aiohttp.ClientError):
        await hc.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    faults.reset()
    faults.hang = True
    with pytest.raises(TimeoutError):
        await hc.client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers=hc.headers(),
            timeout=aiohttp.ClientTimeout(total=0.2),
        )
    faults.reset()
    response = await hc.client.post("/_sim/faults", json={"latency": 0.001})
    assert (await response.json())["latency"] == 0.001
    assert (await hc.rpc("ping"))[0] == 200
    assert (await hc.client.post("/_sim/faults", json={"bogus": 1})).status == 400


async def test_stats_count_tools(hc: Hc) -> None:
    """The stats count tools, requests and bytes."""
    hc.client.server.app[STATS].reset()
    await hc.state()
    await hc.state()
    stats = await (await hc.client.get("/_sim/stats")).json()
    assert stats["tools"] == {"get_state": 2}
    assert stats["http_requests"] == 2
    assert stats["bytes_out"] > 0


def test_standalone_help_and_loopback_only() -> None:
    """The standalone server prints help and refuses hosts other than loopback."""
    ok = subprocess.run(
        [sys.executable, "-m", "simulators.homecast", "--help"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert ok.returncode == 0
    assert "--accessories" in ok.stdout
    refused = subprocess.run(
        [sys.executable, "-m", "simulators.homecast", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert refused.returncode != 0
    assert "127.0.0.1" in refused.stderr


async def test_offline_relay_hides_the_home_and_fails_writes(hc: Hc) -> None:
    """An offline relay hides its home and fails its writes."""
    second = hc.sim.homes[1]
    room, switch = hc.find("switch", home=1)
    hc.sim.set_relay_online(second.slug, False)
    state = await hc.state()
    assert second.slug not in state
    assert second.slug not in state["_homes"]
    assert second.slug not in await hc.ok("get_automations")
    result = await hc.ok(
        "set_state",
        {"updates": [{"home": second.slug, "room": room, "accessory": switch, "on": True}]},
    )
    assert result["failed"] == 1
    assert "RELAY_NOT_CONNECTED" in result["errors"][0]
    assert "RELAY_NOT_CONNECTED" in await hc.fails(
        "run_scene", {"home": second.slug, "name": "Good Night"}
    )
    hc.sim.set_relay_online(second.slug, True)
    assert second.slug in (await hc.state())["_homes"]


async def test_delayed_write_lands_on_its_own(make_hc: Any) -> None:
    """A delayed write lands on its own, without another request."""
    hc = await make_hc(write_delay=0.01)
    room, switch = hc.find("switch")
    was = hc.sim.values(hc.home, switch)["on"]
    landed = asyncio.Event()
    hc.sim.listeners.append(lambda home, acc, changed: landed.set())
    await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": room, "accessory": switch, "on": not was}]},
    )
    await asyncio.wait_for(landed.wait(), 5)
    assert hc.sim.values(hc.home, switch)["on"] is (not was)
    assert hc.sim.pending_writes == 0


async def test_official_sdk_client_interoperates() -> None:
    """The official MCP SDK client (an independent peer) drives sessions, SSE and tool errors."""
    app = create_app(write_delay=0)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        url = str(server.make_url("/mcp"))
        auth = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            streamablehttp_client(url, headers=auth) as (read, write, session_id),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            assert init.protocolVersion in ("2025-03-26", "2025-06-18", "2025-11-25")
            assert session_id() in app[HOMECAST].sessions
            assert {t.name for t in (await session.list_tools()).tools} == TOOL_NAMES
            result = await session.call_tool("get_state", {"filter_by_type": "lock"})
            assert result.isError is False
            locks = _accessories(json.loads(result.content[0].text))
            assert locks
            assert all(a["type"] == "lock" for *_, a in locks)
            failed = await session.call_tool("run_scene", {"home": "nowhere", "name": "x"})
            assert failed.isError is True
        assert app[HOMECAST].sessions == {}  # the SDK ends its session with DELETE
    finally:
        await server.close()


async def test_more_control_routes(make_hc: Any) -> None:
    """More control routes: tokens, rights and pending writes."""
    hc = await make_hc(write_delay=60)
    room, switch = hc.find("switch")
    response = await hc.client.post(
        "/_sim/homecast/token",
        json={"token": "hc_reader", "scopes": ["mcp:read"], "homes": {hc.home: "view"}},
    )
    assert (await response.json())["scopes"] == ["mcp:read"]
    assert hc.sim.tokens["hc_reader"].right(hc.sim.homes[1]) is None
    was = hc.sim.values(hc.home, switch)["on"]
    await hc.ok(
        "set_state",
        {"updates": [{"home": hc.home, "room": room, "accessory": switch, "on": not was}]},
    )
    assert hc.sim.pending_writes == 1
    assert (await hc.client.post("/_sim/homecast/flush")).status == 200
    assert hc.sim.values(hc.home, switch)["on"] is (not was)
    _, bell = hc.find("doorbell")
    await hc.client.post(
        "/_sim/homecast/press", json={"home": hc.home, "accessory": bell, "event": 1}
    )
    assert hc.sim.values(hc.home, bell)["programmable_switch_event"] == 1
    await hc.client.post("/_sim/homecast/remove", json={"home": hc.home, "accessory": bell})
    with pytest.raises(KeyError):
        hc.sim.accessory(hc.home, bell)
    await hc.client.post("/_sim/homecast/revoke", json={"token": TOKEN})
    assert (await hc.rpc("ping"))[0] == 401


async def test_oauth_revocation_endpoint_and_client_removal(make_hc: Any) -> None:
    """OAuth revocation ends a token; removing a client ends its tokens."""
    hc = await make_hc(init=False)
    client_id, tokens = await _oauth(hc)
    hc.token = tokens["access_token"]
    await hc.init()
    assert (
        await hc.client.post("/oauth/revoke", data={"token": tokens["access_token"]})
    ).status == 200
    assert (await hc.rpc("ping"))[0] == 401
    _, again = await _oauth(hc)
    hc.token = again["access_token"]
    assert (await hc.rpc("ping"))[0] == 200
    hc.sim.revoke_client(client_id)
    assert (await hc.rpc("ping"))[0] == 200  # a different registration, untouched
    second_client = hc.sim.tokens[again["access_token"]].client_id
    assert second_client
    hc.sim.revoke_client(second_client)
    assert (await hc.rpc("ping"))[0] == 401
    refresh = await hc.client.post(
        "/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": again["refresh_token"],
            "client_id": second_client,
        },
    )
    assert refresh.status == 400
    assert (await refresh.json())["error"] == "invalid_grant"


async def test_hc_automation_references_groups_virtuals_and_time(hc: Hc) -> None:
    """Homecast automations reference groups, virtual accessories and times as upstream allows."""
    h = hc.sim.homes[0]
    group = next(a for a in h.all_accessories() if a.members)
    _, mode = hc.virtual("House Mode")
    _, light = hc.find("light")
    created = await hc.ok(
        "create_hc_automation",
        {
            "home": hc.home,
            "name": "Evening!",  # no trailing-punctuation rule here
            "triggers": [
                {"type": "device", "service_group": group.uuid, "characteristic": "on", "to": True},
                {"type": "device", "virtual": mode, "characteristic": "virtual_mode", "to": "Away"},
                {"type": "time", "at": "07:30", "weekdays": [1, 2, 3, 4, 5]},
                {"type": "sun", "event": "sunset", "offset": {"minutes": -30}},
            ],
            "conditions": [
                {"operator": "not", "conditions": [{"type": "template", "expression": "x"}]}
            ],
            "actions": [
                {"type": "device", "accessory": light, "on": True, "brightness": 40},
                {"type": "virtual", "virtual": mode, "operation": "toggle"},
            ],
            "mode": "queued",
        },
    )
    assert created["automation"]["name"] == "Evening!"
    assert created["automation"]["mode"] == "queued"
    assert "Service group" in await hc.fails(
        "create_hc_automation",
        {
            "home": hc.home,
            "name": "x",
            "triggers": [{"type": "device", "service_group": "nope", "characteristic": "on"}],
            "actions": [{"type": "notify", "message": "m"}],
        },
    )
    assert "operation" in await hc.fails(
        "create_hc_automation",
        {
            "home": hc.home,
            "name": "x",
            "triggers": [{"type": "webhook", "webhook_id": "w"}],
            "actions": [{"type": "virtual", "virtual": mode, "operation": "explode"}],
        },
    )


async def test_update_scene_actions_and_one_off_homekit_timer(hc: Hc) -> None:
    """Scene actions update, and a one-off HomeKit timer is created."""
    _, light = hc.find("light")
    updated = await hc.ok(
        "update_scene",
        {"home": hc.home, "name": "Movie Time", "actions": [{"accessory": light, "on": False}]},
    )
    assert updated["scene"]["actions"] == [{"accessory": light, "on": False}]
    assert "nothing to change" in await hc.fails(
        "update_scene", {"home": hc.home, "name": "Movie Time"}
    )
    once = await hc.ok(
        "create_automation",
        {
            "home": hc.home,
            "name": "Once",
            "trigger": {"type": "timer", "fireDate": "2026-12-01T07:00:00Z"},
            "actions": [{"accessory": light, "on": True}],
        },
    )
    assert once["automation"]["editable"] is True
    assert "hour" in await hc.fails(
        "create_automation",
        {
            "home": hc.home,
            "name": "Bad",
            "trigger": {"type": "timer", "hour": 25, "minute": 0},
            "actions": [{"accessory": light, "on": True}],
        },
    )


async def test_rename_changes_the_key_and_new_homes_appear(hc: Hc) -> None:
    """A rename changes the accessory's key; new homes appear."""
    room, switch = hc.find("switch")
    uuid = hc.sim.accessory(hc.home, switch).uuid
    new_key = hc.sim.rename_accessory(hc.home, switch, "Porch Switch")
    assert new_key == slug("Porch Switch", uuid)
    assert new_key != switch
    result = await hc.ok(
        "set_state", {"updates": [{"home": hc.home, "room": room, "accessory": switch, "on": True}]}
    )
    assert result["failed"] == 1  # the old key no longer resolves
    assert new_key in (await hc.state())[hc.home][room]
    key = hc.sim.add_home("Ski Lodge")
    state = await hc.state()
    assert key.startswith("ski_lodge_")
    assert key in state["_homes"]
    tools = (await hc.rpc("tools/list"))[1]["result"]["tools"]
    assert key in next(t for t in tools if t["name"] == "get_state")["description"]


async def test_failure_switches(make_hc: Callable[..., Awaitable[Hc]]) -> None:
    """An older community server without a tool, and a tool whose relay call throws.

    Both as local-mcp.ts answers them: an isError result, "Error: Unknown tool: <name>" from
    callTool's default case, "Error: <message>" from handleJsonRpc's catch.
    """
    hc = await make_hc(community=True)
    hc.sim.absent_tools.add("get_hc_automations")
    hc.sim.failing_tools["get_automations"] = "Request timed out"
    names = {tool["name"] for tool in (await hc.rpc("tools/list"))[1]["result"]["tools"]}
    assert "get_hc_automations" not in names
    assert await hc.fails("get_hc_automations") == "Error: Unknown tool: get_hc_automations"
    assert await hc.fails("get_automations") == "Error: Request timed out"
    assert "_homes" in await hc.ok_community("get_state")


async def test_camel_case_surface(hc: Hc) -> None:
    """The cloud's graphql-mcp surface: camelCase names; an undeclared field is ignored."""
    hc.sim.camel_case = True
    tools = {tool["name"]: tool for tool in (await hc.rpc("tools/list"))[1]["result"]["tools"]}
    item = tools["set_state"]["inputSchema"]["properties"]["updates"]["items"]["properties"]
    assert {"heatTarget", "colorTemp", "virtualMode"} <= set(item)
    assert "heat_target" not in item
    assert "filterByHome" in tools["get_state"]["inputSchema"]["properties"]
    room, light = hc.find("light", color_temp=True)
    update = {"home": hc.home, "room": room, "accessory": light}
    result = await hc.ok("set_state", {"updates": [{**update, "color_temp": 300, "brightness": 5}]})
    assert result["updated"] == 1
    values = hc.sim.values(hc.home, light)
    assert values["brightness"] == 5  # one word: the same in both spellings
    assert values["color_temp"] != 300  # snake_case: not a field of the typed input
    await hc.ok("set_state", {"updates": [{**update, "colorTemp": 300}]})
    assert hc.sim.values(hc.home, light)["color_temp"] == 300
