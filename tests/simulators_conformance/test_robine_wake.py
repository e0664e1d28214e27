"""The Robine Wake simulator against spec 50-002 and the simulator's decisions where it is silent.

50-002 "Protocol profile", "Security boundary", "Tools", "Camera-free state and tactile
configuration" and requirements MCP-001 … MCP-008 fix the transport and the tools; the shapes of
alarms, sessions and error objects are the simulator's own (`Decision:` in simulators/robine_wake).

Raw HTTP only: the simulator must be right on its own before any client is tested against it.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
import json
import subprocess
import sys
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
import pytest

from simulators.base import FAULTS, STATS, SimClock
from simulators.robine_wake import (
    DEFAULT_SOUNDS,
    MAX_ALARMS,
    RECENT_SESSIONS,
    ROBINE,
    SUPPORTED_VERSIONS,
    VIBRATION_CEILING,
    RateLimiter,
    RobineWake,
    create_app,
)
from tests.simulation import ClientFactory, RawMcp, client_on_clock

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-06-18",
}
# Monday 30 November 2026, 06:00 in Berlin (CET, +01:00): 45 minutes before the weekday alarm.
MONDAY_6AM = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
TOOL_NAMES = {
    "get_state",
    "list_alarms",
    "list_sounds",
    "preview_alarm",
    "create_alarm",
    "update_alarm",
    "delete_alarm",
    "trigger_alarm",
    "snooze_session",
    "dismiss_session",
}


class Sim(RawMcp):
    """A running simulator with helpers for raw JSON-RPC over HTTP."""

    def __init__(self, client: TestClient, clock: SimClock) -> None:
        super().__init__(client, clock)
        self.device: RobineWake = client.server.app[ROBINE]

    async def post(
        self, body: Any, headers: dict[str, str] | None = None
    ) -> aiohttp.ClientResponse:
        return await self.client.post("/mcp", data=self.encode(body), headers=headers or HEADERS)

    async def ok(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tool call that must succeed; returns structuredContent."""
        result = await self.call(name, arguments)
        assert result["isError"] is False, result
        assert result["content"][0]["type"] == "text"
        assert result["content"][0]["text"]
        return result["structuredContent"]

    async def fails(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tool call that must be a domain failure; returns its error object."""
        result = await self.call(name, arguments)
        assert result["isError"] is True, result
        error = result["structuredContent"]["error"]
        assert result["content"][0]["text"] == error["message"]
        return error

    async def invalid(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A tool call that must be refused as invalid params (JSON-RPC -32602)."""
        status, body = await self.rpc("tools/call", {"name": name, "arguments": arguments})
        assert status == 200
        assert body["error"]["code"] == -32602, body
        return body["error"]

    async def alarm(self, label: str) -> dict[str, Any]:
        alarms = (await self.ok("list_alarms"))["alarms"]
        return next(alarm for alarm in alarms if alarm["label"] == label)


# Real HTTP on 127.0.0.1 (the HA test plugin still refuses any other host).
pytestmark = pytest.mark.usefixtures("socket_enabled")


@pytest.fixture
def make_sim(aiohttp_client: ClientFactory) -> Callable[..., Awaitable[Sim]]:
    async def _make(**options: Any) -> Sim:
        options.setdefault("command_delay", 0)
        now = options.pop("now", MONDAY_6AM)
        return Sim(*await client_on_clock(aiohttp_client, create_app, now, **options))

    return _make


@pytest.fixture
async def sim(make_sim: Callable[..., Awaitable[Sim]]) -> Sim:
    return await make_sim()


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# --- transport and protocol -------------------------------------------------------------------


async def test_initialize_negotiates_and_names_no_device(sim: Sim) -> None:
    """50-002 defines no device identity: a clock by the spec sends none, anywhere."""
    response = await sim.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        headers={k: v for k, v in HEADERS.items() if k != "MCP-Protocol-Version"},
    )
    assert response.status == 200
    assert response.content_type == "application/json"
    assert "Mcp-Session-Id" not in response.headers  # stateless
    result = (await response.json())["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert "device" not in result["serverInfo"]
    assert "device" not in await sim.ok("get_state")


@pytest.mark.parametrize(
    ("offered", "agreed"),
    [("2025-03-26", "2025-03-26"), ("2024-11-05", "2025-06-18"), ("2099-01-01", "2025-06-18")],
)
async def test_initialize_version_fallback(sim: Sim, offered: str, agreed: str) -> None:
    """initialize falls back to a version the clock speaks."""
    status, body = await sim.rpc("initialize", {"protocolVersion": offered, "capabilities": {}})
    assert status == 200
    assert body["result"]["protocolVersion"] == agreed


async def test_initialize_without_version_is_invalid_params(sim: Sim) -> None:
    """initialize without a version is invalid params."""
    status, body = await sim.rpc("initialize", {"capabilities": {}})
    assert status == 200
    assert body["error"]["code"] == -32602


async def test_device_id_variation(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The variation of a clock that names itself: the same `device` in get_state and serverInfo."""
    sim = await make_sim(device_id="rw-00aa11bb22cc")
    _, body = await sim.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    device = body["result"]["serverInfo"]["device"]
    assert device == {
        "id": "rw-00aa11bb22cc",
        "name": "Bedroom clock",
        "model": "Robine Wake",
        "firmware": body["result"]["serverInfo"]["version"],
    }
    assert device == (await sim.ok("get_state"))["device"]


async def test_reshape_variation(sim: Sim) -> None:
    """A test bends successful results; failures and other tools stay as they are."""
    sim.device.reshape = lambda tool, data: {"odd": tool} if tool == "get_state" else data
    assert await sim.ok("get_state") == {"odd": "get_state"}
    assert "sounds" in await sim.ok("list_sounds")
    assert (await sim.fails("trigger_alarm", {"id": "alm_none"}))["code"] == "not_found"


async def test_failing_tools_in_both_shapes(sim: Sim) -> None:
    """A failing tool answers as 50-002 has failures: an isError result, or a JSON-RPC error."""
    sim.device.failing_tools = {"list_alarms": "domain", "get_state": "rpc"}
    assert (await sim.fails("list_alarms"))["code"] == "internal_error"
    status, body = await sim.rpc("tools/call", {"name": "get_state", "arguments": {}})
    assert status == 200
    assert body["error"]["code"] == -32603
    assert "sounds" in await sim.ok("list_sounds")  # the others answer
    sim.device.failing_tools = {}
    assert "alarms" in await sim.ok("list_alarms")


async def test_missing_version_header_means_compat(sim: Sim) -> None:
    """Without a version header the clock answers in compatibility mode."""
    headers = {k: v for k, v in HEADERS.items() if k != "MCP-Protocol-Version"}
    status, body = await sim.rpc("tools/list", headers=headers)
    assert status == 200
    assert len(body["result"]["tools"]) == 10


@pytest.mark.parametrize("version", ["2024-11-05", "2026-07-28", "garbage"])
async def test_unsupported_version_header(sim: Sim, version: str) -> None:
    """An unsupported version header is 400 invalid params."""
    status, body = await sim.rpc("tools/list", headers={**HEADERS, "MCP-Protocol-Version": version})
    assert status == 400
    assert body["id"] == 1
    assert body["error"]["code"] == -32602
    assert body["error"]["data"]["supported"] == list(SUPPORTED_VERSIONS)
    for supported in SUPPORTED_VERSIONS:
        assert supported in body["error"]["message"]


async def test_older_supported_header_is_accepted(sim: Sim) -> None:
    """An older supported version header is accepted."""
    status, _ = await sim.rpc("ping", headers={**HEADERS, "MCP-Protocol-Version": "2025-03-26"})
    assert status == 200


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_only_post(sim: Sim, method: str) -> None:
    """Only POST is allowed."""
    response = await sim.client.request(method, "/mcp", headers=HEADERS)
    assert response.status == 405
    assert response.headers["Allow"] == "POST"


async def test_notifications_and_responses_get_202(sim: Sim) -> None:
    """Notifications and responses get an empty 202."""
    for message in (
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}},
        {"jsonrpc": "2.0", "id": 9, "result": {}},
    ):
        response = await sim.post(message)
        assert response.status == 202
        assert await response.read() == b""


async def test_ping_and_unknown_method(sim: Sim) -> None:
    """ping answers {}; an unknown method is -32601."""
    assert (await sim.rpc("ping"))[1]["result"] == {}
    status, body = await sim.rpc("resources/list")
    assert status == 200
    assert body["error"]["code"] == -32601


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe", -32700),
        (json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), -32600),
        (json.dumps({"jsonrpc": "1.0", "id": 1, "method": "ping"}), -32600),
        (json.dumps({"jsonrpc": "2.0", "id": None, "method": "ping"}), -32600),
        (json.dumps({"jsonrpc": "2.0", "id": True, "method": "ping"}), -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1, "method": 5}), -32600),
        (json.dumps({"jsonrpc": "2.0", "id": 1}), -32600),
        (json.dumps("ping"), -32600),
    ],
)
async def test_malformed_messages(sim: Sim, body: Any, code: int) -> None:
    """Malformed messages are 400 with their JSON-RPC codes."""
    response = await sim.post(body)
    assert response.status == 400
    assert (await response.json())["error"]["code"] == code


async def test_params_must_be_an_object(sim: Sim) -> None:
    """params must be an object."""
    response = await sim.post({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": [1]})
    assert (await response.json())["error"]["code"] == -32602


async def test_content_negotiation(sim: Sim) -> None:
    """A wrong Content-Type is 415, an Accept without JSON 406."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    wrong_type = await sim.post(ping, headers={**HEADERS, "Content-Type": "text/plain"})
    assert wrong_type.status == 415
    html_only = await sim.post(ping, headers={**HEADERS, "Accept": "text/html"})
    assert html_only.status == 406
    sse_only = await sim.post(ping, headers={**HEADERS, "Accept": "text/event-stream"})
    assert sse_only.status == 406
    no_accept = {k: v for k, v in HEADERS.items() if k != "Accept"}
    # aiohttp would add "Accept: */*" on its own: really send none.
    missing = await sim.client.post(
        "/mcp", data=json.dumps(ping), headers=no_accept, skip_auto_headers=["Accept"]
    )
    assert missing.status == 406
    json_only = await sim.post(ping, headers={**HEADERS, "Accept": "application/json"})
    assert json_only.status == 200
    with_params = await sim.post(
        ping, headers={**HEADERS, "Content-Type": "application/json; charset=utf-8"}
    )
    assert with_params.status == 200


async def test_origin_rule(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """A foreign origin is 403 before anything runs."""
    sim = await make_sim(allowed_origins=["http://ha.local:8123"])
    create = {"label": "Sneaky", "time": "07:00"}
    own = f"http://{sim.client.host}:{sim.client.port}"
    foreign = await sim.post(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "create_alarm", "arguments": create},
        },
        headers={**HEADERS, "Origin": "http://evil.example"},
    )
    assert foreign.status == 403
    assert len(sim.device.alarms) == 3  # refused before dispatch
    assert sim.client.server.app[STATS].tools["create_alarm"] == 0
    for origin in (own, "http://HA.local:8123", "http://ha.local:8123/"):
        status, _ = await sim.rpc("ping", headers={**HEADERS, "Origin": origin})
        assert status == 200, origin
    for origin in ("null", "http://ha.local:8124", "https://ha.local:8123"):
        status, _ = await sim.rpc("ping", headers={**HEADERS, "Origin": origin})
        assert status == 403, origin


async def test_passwordless_by_default(sim: Sim) -> None:
    """Without a password set, requests need no credentials."""
    status, _ = await sim.rpc("ping")
    assert status == 200


async def test_admin_password(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """With a password, Basic admin is required and the secret never echoed."""
    sim = await make_sim(password="s3cret")
    for authorization in (
        None,
        _basic("admin", "wrong"),
        _basic("root", "s3cret"),
        "Basic !!!not-base64",
        "Bearer s3cret",
        "Basic " + base64.b64encode(b"admin").decode(),
    ):
        headers = dict(HEADERS)
        if authorization:
            headers["Authorization"] = authorization
        response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
        assert response.status == 401, authorization
        assert response.headers["WWW-Authenticate"] == 'Basic realm="Robine Wake"'
        assert "s3cret" not in await response.text()
    status, body = await sim.rpc(
        "ping", headers={**HEADERS, "Authorization": _basic("admin", "s3cret")}
    )
    assert status == 200
    assert body["result"] == {}


async def test_bearer_credentials(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """A clock configured for Bearer asks for it in the 401 and takes the secret as the token."""
    sim = await make_sim(password="s3cret", auth_scheme="bearer")
    for authorization in (None, "Bearer wrong", _basic("admin", "s3cret"), "s3cret"):
        headers = dict(HEADERS)
        if authorization:
            headers["Authorization"] = authorization
        response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
        assert response.status == 401, authorization
        assert response.headers["WWW-Authenticate"] == 'Bearer realm="Robine Wake"'
    status, _ = await sim.rpc("ping", headers={**HEADERS, "Authorization": "Bearer s3cret"})
    assert status == 200


async def test_unanswerable_scheme(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Any other configured scheme is named in the challenge and nothing gets through."""
    sim = await make_sim(password="s3cret", auth_scheme="digest")
    for authorization in ("Digest s3cret", _basic("admin", "s3cret"), "Bearer s3cret"):
        response = await sim.post(
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={**HEADERS, "Authorization": authorization},
        )
        assert response.status == 401
        assert response.headers["WWW-Authenticate"] == 'Digest realm="Robine Wake"'


async def test_rate_limit_window(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Past the rate limit requests are 429 with Retry-After, for a minute."""
    sim = await make_sim(rate_limit=3)
    for _ in range(3):
        assert (await sim.rpc("ping"))[0] == 200
    refused = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status == 429
    assert refused.headers["Retry-After"] == "60"
    assert (await refused.json())["error"]["message"]
    sim.clock.advance(45)
    refused = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status == 429
    assert refused.headers["Retry-After"] == "15"
    sim.clock.advance(15)
    assert (await sim.rpc("ping"))[0] == 200


async def test_rate_limit_default_is_120(sim: Sim) -> None:
    """The default rate limit is 120 requests a minute."""
    for _ in range(120):
        response = await sim.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert response.status == 202
    assert (await sim.rpc("ping"))[0] == 429


def test_rate_limiter_is_per_address_and_can_be_off() -> None:
    """The rate limiter counts per address and can be off."""
    limiter = RateLimiter(2)
    assert limiter.check("10.0.0.1", 0.0) is None
    assert limiter.check("10.0.0.1", 1.0) is None
    assert limiter.check("10.0.0.1", 2.0) == pytest.approx(58.0)
    assert limiter.check("10.0.0.2", 2.0) is None  # another address has its own budget
    assert limiter.check("10.0.0.1", 60.0) is None  # the first hit left the window
    limiter.reset()
    assert limiter.check("10.0.0.1", 60.5) is None
    off = RateLimiter(None)
    assert all(off.check("a", float(i)) is None for i in range(500))


async def test_tools_list(sim: Sim) -> None:
    """tools/list lists the 50-002 tools in one page."""
    status, body = await sim.rpc("tools/list")
    assert status == 200
    tools = body["result"]["tools"]
    assert {tool["name"] for tool in tools} == TOOL_NAMES
    assert "nextCursor" not in body["result"]
    for tool in tools:
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
        hints = tool["annotations"]
        for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
            assert isinstance(hints[hint], bool), (tool["name"], hint)
        assert hints["openWorldHint"] is False
    by_name = {tool["name"]: tool for tool in tools}
    read_only = {name for name, tool in by_name.items() if tool["annotations"]["readOnlyHint"]}
    assert read_only == {"get_state", "list_alarms", "list_sounds", "preview_alarm"}
    assert by_name["delete_alarm"]["annotations"]["destructiveHint"] is True
    assert by_name["create_alarm"]["annotations"]["destructiveHint"] is False
    assert by_name["update_alarm"]["inputSchema"]["required"] == ["id", "revision"]
    assert "presence_policy" not in json.dumps(tools)


async def test_unknown_tool_and_bad_arguments_are_rpc_errors(sim: Sim) -> None:
    """Unknown tools and bad arguments are JSON-RPC errors."""
    status, body = await sim.rpc("tools/call", {"name": "open_camera", "arguments": {}})
    assert status == 200
    assert body["error"]["code"] == -32602
    _, body = await sim.rpc("tools/call", {"arguments": {}})
    assert body["error"]["code"] == -32602
    _, body = await sim.rpc("tools/call", {"name": "get_state", "arguments": [1]})
    assert body["error"]["code"] == -32602
    await sim.invalid("get_state", {"verbose": True})
    # arguments may be left out for tools without parameters
    _, body = await sim.rpc("tools/call", {"name": "list_sounds"})
    assert body["result"]["isError"] is False


# --- read tools -------------------------------------------------------------------------------


async def test_get_state_shape(sim: Sim) -> None:
    """get_state has the 50-002 shape."""
    state = await sim.ok("get_state")
    assert set(state) == {
        "health",
        "settings",
        "alarms",
        "active_session",
        "recent_sessions",
    }
    assert state["health"] == {
        "status": "ok",
        "uptime_s": 0,
        "time_synced": True,
        "firmware": sim.device.firmware,
        "storage_ok": True,
    }
    assert state["settings"] == {
        "smartphone_dismissal_enabled": True,
        "max_volume": 85,
        "timezone": "Europe/Berlin",
    }
    assert state["active_session"] is None
    assert state["recent_sessions"] == []
    weekday = next(alarm for alarm in state["alarms"] if alarm["label"] == "Weekdays")
    assert weekday["next_occurrence"] == "2026-11-30T06:45:00+01:00"
    assert weekday["revision"] == 1
    disabled = next(alarm for alarm in state["alarms"] if not alarm["enabled"])
    assert disabled["next_occurrence"] is None
    text = json.dumps(state).lower()
    for word in ("presence", "confidence", "camera", "detector", "password"):
        assert word not in text
    sim.clock.advance(90)
    assert (await sim.ok("get_state"))["health"]["uptime_s"] == 90


async def test_health_degrades(sim: Sim) -> None:
    """Health degrades with time sync and storage faults."""
    sim.device.set_settings(time_synced=False)
    health = (await sim.ok("get_state"))["health"]
    assert health["status"] == "degraded"
    assert health["time_synced"] is False
    sim.device.set_settings(time_synced=True, storage_ok=False)
    assert (await sim.ok("get_state"))["health"]["status"] == "degraded"


async def test_list_alarms_with_occurrences(sim: Sim) -> None:
    """list_alarms answers the alarms with their next occurrences."""
    result = await sim.call("list_alarms")
    text = result["content"][0]["text"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)  # human text: clients must read structuredContent
    alarms = result["structuredContent"]["alarms"]
    assert [alarm["label"] for alarm in alarms] == ["Weekdays", "Weekend", "Train to the coast"]
    weekday, weekend, one_shot = alarms
    assert weekday["next_occurrences"] == [
        "2026-11-30T06:45:00+01:00",
        "2026-12-01T06:45:00+01:00",
        "2026-12-02T06:45:00+01:00",
        "2026-12-03T06:45:00+01:00",
        "2026-12-04T06:45:00+01:00",
    ]
    assert weekend["next_occurrences"][:3] == [
        "2026-12-05T08:30:00+01:00",
        "2026-12-06T08:30:00+01:00",
        "2026-12-12T08:30:00+01:00",
    ]
    assert weekend["vibration"] == {"profile": "off", "intensity": 0}
    assert one_shot["enabled"] is False
    assert one_shot["days"] == []
    assert one_shot["date"] is None
    assert one_shot["next_occurrences"] == []
    for alarm in alarms:
        assert alarm["id"].startswith("alm_")
        assert set(alarm) >= {
            "revision",
            "time",
            "sound_id",
            "volume",
            "ramp_seconds",
            "snooze_minutes",
            "max_snoozes",
            "vibration",
        }


async def test_no_starter_alarms(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """A clock without starter alarms lists none."""
    sim = await make_sim(starter_alarms=False)
    result = await sim.call("list_alarms")
    assert result["structuredContent"] == {"alarms": []}
    assert result["content"][0]["text"]


async def test_list_sounds(sim: Sim) -> None:
    """list_sounds answers the default sounds with their durations."""
    sounds = (await sim.ok("list_sounds"))["sounds"]
    assert len(sounds) == len(DEFAULT_SOUNDS) >= 4
    for sound in sounds:
        assert set(sound) == {"id", "name", "duration_s"}
        assert sound["duration_s"] > 0


async def test_preview_persists_nothing(sim: Sim) -> None:
    """preview_alarm normalises the alarm and persists nothing."""
    preview = await sim.ok(
        "preview_alarm",
        {"label": "  Gym  ", "time": "05:30", "days": ["fri", "mon"], "enabled": False},
    )
    assert preview["valid"] is True
    assert preview["alarm"]["label"] == "Gym"
    assert preview["alarm"]["days"] == ["mon", "fri"]  # normalised to week order
    assert preview["alarm"]["vibration"] == {"profile": "off", "intensity": 0}
    assert preview["next_occurrences"] == []
    assert any("disabled" in warning for warning in preview["warnings"])
    enabled = await sim.ok("preview_alarm", {"label": "Gym", "time": "05:30", "days": ["mon"]})
    assert enabled["next_occurrences"][0] == "2026-12-07T05:30:00+01:00"
    assert enabled["warnings"] == []
    assert len(sim.device.alarms) == 3


async def test_preview_reports_domain_failures_as_invalid(sim: Sim) -> None:
    """preview_alarm reports domain failures as invalid, not as errors."""
    bad_sound = await sim.ok("preview_alarm", {"label": "x", "time": "07:00", "sound_id": "kazoo"})
    assert bad_sound["valid"] is False
    assert bad_sound["error"]["code"] == "validation_failed"
    assert bad_sound["alarm"] is None
    loud = await sim.ok("preview_alarm", {"label": "x", "time": "07:00", "volume": 99})
    assert loud["error"]["code"] == "ceiling_exceeded"
    retired = await sim.ok(
        "preview_alarm", {"label": "x", "time": "07:00", "wake_on_presence": True}
    )
    assert retired["error"]["code"] == "retired_field"
    await sim.invalid("preview_alarm", {"label": "x"})


async def test_preview_warnings(sim: Sim) -> None:
    """preview_alarm answers the clock's warnings for a questionable alarm."""
    preview = await sim.ok(
        "preview_alarm",
        {
            "label": "Bell",
            "time": "07:00",
            "sound_id": "classic_bell",
            "ramp_seconds": 120,
            "vibration": {"profile": "pulse", "intensity": 0},
        },
    )
    assert len(preview["warnings"]) == 2


# --- alarm writes -----------------------------------------------------------------------------


async def test_create_alarm_defaults_and_persistence(sim: Sim) -> None:
    """create_alarm fills defaults and persists the alarm."""
    created = (await sim.ok("create_alarm", {"label": "Yoga", "time": "07:15", "days": ["wed"]}))[
        "alarm"
    ]
    assert created["revision"] == 1
    assert created["id"].startswith("alm_")
    assert created["enabled"] is True
    assert created["vibration"] == {"profile": "off", "intensity": 0}
    assert created["sound_id"] in {sound.id for sound in DEFAULT_SOUNDS}
    assert created["next_occurrences"][0] == "2026-12-02T07:15:00+01:00"
    assert created == await sim.alarm("Yoga")
    assert created["id"] in sim.device.alarms


async def test_create_vibration_profiles(sim: Sim) -> None:
    """Vibration profiles take their intensities, capped at the ceiling."""
    pulse = (
        await sim.ok(
            "create_alarm", {"label": "Buzz", "time": "07:00", "vibration": {"profile": "pulse"}}
        )
    )["alarm"]
    assert pulse["vibration"] == {"profile": "pulse", "intensity": 50}
    ceiling = (
        await sim.ok(
            "create_alarm",
            {
                "label": "Max",
                "time": "07:00",
                "vibration": {"profile": "strong", "intensity": VIBRATION_CEILING},
            },
        )
    )["alarm"]
    assert ceiling["vibration"]["intensity"] == VIBRATION_CEILING
    off = (
        await sim.ok(
            "create_alarm",
            {"label": "Still", "time": "07:00", "vibration": {"profile": "off", "intensity": 30}},
        )
    )["alarm"]
    assert off["vibration"] == {"profile": "off", "intensity": 0}


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"sound_id": "kazoo"}, "validation_failed"),
        ({"label": "   "}, "validation_failed"),
        ({"days": ["mon"], "date": "2026-12-24"}, "validation_failed"),
        ({"date": "2026-11-29"}, "validation_failed"),  # yesterday
        ({"date": "2026-11-30", "time": "05:59"}, "validation_failed"),  # earlier today
        ({"date": "2026-02-30"}, "validation_failed"),
        ({"volume": 86}, "ceiling_exceeded"),
        ({"vibration": {"profile": "gentle", "intensity": 81}}, "ceiling_exceeded"),
        ({"presence_policy": "dismiss_when_absent"}, "retired_field"),
        ({"presence_dismissal": True}, "retired_field"),
        ({"wake_on_presence": False}, "retired_field"),
    ],
)
async def test_create_domain_failures(sim: Sim, arguments: dict[str, Any], code: str) -> None:
    """Domain failures of create_alarm name their code and limit."""
    error = await sim.fails("create_alarm", {"label": "Test", "time": "07:00", **arguments})
    assert error["code"] == code
    assert len(sim.device.alarms) == 3
    if code == "ceiling_exceeded":
        assert error["details"]["limit"] in {85, VIBRATION_CEILING}
    if code == "retired_field":
        assert error["details"]["fields"] == list(arguments)


async def test_one_shot_with_future_date(sim: Sim) -> None:
    """A one-shot alarm with a future date rings once."""
    alarm = (
        await sim.ok("create_alarm", {"label": "Flight", "time": "04:00", "date": "2026-12-24"})
    )["alarm"]
    assert alarm["next_occurrences"] == ["2026-12-24T04:00:00+01:00"]
    assert alarm["date"] == "2026-12-24"


async def test_max_volume_setting_moves_the_ceiling(sim: Sim) -> None:
    """The max_volume setting moves the volume ceiling."""
    sim.device.set_settings(max_volume=60)
    error = await sim.fails("create_alarm", {"label": "Loud", "time": "07:00", "volume": 61})
    assert error["details"] == {"field": "volume", "limit": 60}
    assert (await sim.ok("get_state"))["settings"]["max_volume"] == 60


@pytest.mark.parametrize(
    "arguments",
    [
        {"time": "07:00"},  # label missing
        {"label": "x"},  # time missing
        {"label": "x" * 41, "time": "07:00"},
        {"label": "x", "time": "24:00"},
        {"label": "x", "time": "7:00"},
        {"label": "x", "time": "07:00", "volume": 0},
        {"label": "x", "time": "07:00", "volume": 101},
        {"label": "x", "time": "07:00", "volume": 40.0},  # floats are not integers here
        {"label": "x", "time": "07:00", "volume": True},
        {"label": "x", "time": "07:00", "days": ["monday"]},
        {"label": "x", "time": "07:00", "days": ["mon", "mon"]},
        {"label": "x", "time": "07:00", "days": "mon"},
        {"label": "x", "time": "07:00", "snooze_minutes": 31},
        {"label": "x", "time": "07:00", "max_snoozes": 11},
        {"label": "x", "time": "07:00", "ramp_seconds": 601},
        {"label": "x", "time": "07:00", "vibration": {"profile": "tickle"}},
        {"label": "x", "time": "07:00", "vibration": {"intensity": 10}},
        {"label": "x", "time": "07:00", "vibration": {"profile": "pulse", "intensity": 101}},
        {"label": "x", "time": "07:00", "vibration": {"profile": "pulse", "rhythm": 2}},
        {"label": "x", "time": "07:00", "date": "24.12.2026"},
        {"label": "x", "time": "07:00", "enabled": "yes"},
        {"label": "x", "time": "07:00", "colour": "red"},
    ],
)
async def test_create_schema_violations(sim: Sim, arguments: dict[str, Any]) -> None:
    """Schema violations of create_alarm are refused and store nothing."""
    error = await sim.invalid("create_alarm", arguments)
    assert "create_alarm" in error["message"]
    assert len(sim.device.alarms) == 3


async def test_alarm_limit(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The alarm limit is refused with its number."""
    sim = await make_sim(starter_alarms=False)
    for index in range(MAX_ALARMS):
        sim.device.add_alarm(label=f"A{index}", time="07:00")
    error = await sim.fails("create_alarm", {"label": "One more", "time": "07:00"})
    assert error["code"] == "validation_failed"
    assert error["details"] == {"limit": MAX_ALARMS}


async def test_update_bumps_revision_and_conflicts(sim: Sim) -> None:
    """Updates bump the revision; a stale one conflicts."""
    weekday = await sim.alarm("Weekdays")
    updated = (
        await sim.ok(
            "update_alarm",
            {"id": weekday["id"], "revision": 1, "time": "07:00", "vibration": {"profile": "off"}},
        )
    )["alarm"]
    assert updated["revision"] == 2
    assert updated["time"] == "07:00"
    assert updated["label"] == "Weekdays"  # untouched fields stay
    assert updated["vibration"] == {"profile": "off", "intensity": 0}
    assert updated["next_occurrences"][0] == "2026-11-30T07:00:00+01:00"
    stale = await sim.fails("update_alarm", {"id": weekday["id"], "revision": 1, "label": "Old"})
    assert stale["code"] == "revision_conflict"
    assert stale["details"]["current_revision"] == 2
    assert "2" in stale["message"]
    assert (await sim.alarm("Weekdays"))["time"] == "07:00"


async def test_external_edit_makes_client_stale(sim: Sim) -> None:
    """An edit on the clock makes a client's revision stale."""
    weekday = await sim.alarm("Weekdays")
    sim.device.edit_alarm(weekday["id"], label="Work days")  # someone at the clock
    error = await sim.fails("update_alarm", {"id": weekday["id"], "revision": 1, "volume": 30})
    assert error["details"]["current_revision"] == 2
    fresh = await sim.alarm("Work days")
    assert fresh["volume"] == weekday["volume"]


async def test_update_failures(sim: Sim) -> None:
    """update_alarm refuses unknown alarms, empty changes and retired fields."""
    weekday = await sim.alarm("Weekdays")
    missing = await sim.fails("update_alarm", {"id": "alm_nothere", "revision": 1, "label": "x"})
    assert missing["code"] == "not_found"
    nothing = await sim.fails("update_alarm", {"id": weekday["id"], "revision": 1})
    assert nothing["code"] == "validation_failed"
    retired = await sim.fails(
        "update_alarm", {"id": weekday["id"], "revision": 1, "presence_policy": "off"}
    )
    assert retired["code"] == "retired_field"
    loud = await sim.fails("update_alarm", {"id": weekday["id"], "revision": 1, "volume": 90})
    assert loud["code"] == "ceiling_exceeded"
    await sim.invalid("update_alarm", {"id": weekday["id"], "label": "no revision"})
    await sim.invalid("update_alarm", {"id": weekday["id"], "revision": 0, "label": "x"})
    await sim.invalid("update_alarm", {"id": weekday["id"], "revision": "1", "label": "x"})
    assert (await sim.alarm("Weekdays"))["revision"] == 1


async def test_update_between_one_shot_and_repeating(sim: Sim) -> None:
    """An alarm switches between one-shot and repeating; both at once is refused."""
    created = (
        await sim.ok("create_alarm", {"label": "Trip", "time": "06:00", "date": "2026-12-10"})
    )["alarm"]
    repeating = (
        await sim.ok("update_alarm", {"id": created["id"], "revision": 1, "days": ["sat"]})
    )["alarm"]
    assert repeating["date"] is None
    assert repeating["next_occurrences"][0] == "2026-12-05T06:00:00+01:00"
    clash = await sim.fails(
        "update_alarm", {"id": created["id"], "revision": 2, "date": "2026-12-12"}
    )
    assert clash["code"] == "validation_failed"
    back = (
        await sim.ok(
            "update_alarm", {"id": created["id"], "revision": 2, "days": [], "date": "2026-12-12"}
        )
    )["alarm"]
    assert back["next_occurrences"] == ["2026-12-12T06:00:00+01:00"]


async def test_delete(sim: Sim) -> None:
    """delete_alarm is revision-safe."""
    weekend = await sim.alarm("Weekend")
    stale = await sim.fails("delete_alarm", {"id": weekend["id"], "revision": 5})
    assert stale["code"] == "revision_conflict"
    assert stale["details"]["current_revision"] == 1
    assert weekend["id"] in sim.device.alarms
    result = await sim.call("delete_alarm", {"id": weekend["id"], "revision": 1})
    assert result["structuredContent"] == {"deleted": weekend["id"]}
    assert weekend["id"] not in sim.device.alarms
    again = await sim.fails("delete_alarm", {"id": weekend["id"], "revision": 1})
    assert again["code"] == "not_found"
    await sim.invalid("delete_alarm", {"id": weekend["id"]})


async def test_delete_refused_while_its_session_is_active(sim: Sim) -> None:
    """An alarm with an active session cannot be deleted."""
    weekend = await sim.alarm("Weekend")
    await sim.ok("trigger_alarm", {"id": weekend["id"]})
    error = await sim.fails("delete_alarm", {"id": weekend["id"], "revision": 1})
    assert error["code"] == "session_active"
    await sim.ok("dismiss_session")
    await sim.ok("delete_alarm", {"id": weekend["id"], "revision": 1})


async def test_concurrent_writers_with_one_revision(
    make_sim: Callable[..., Awaitable[Sim]],
) -> None:
    """Of two writers with one revision, the second conflicts."""
    sim = await make_sim(command_delay=0.01)
    weekday = await sim.alarm("Weekdays")
    first, second = await asyncio.gather(
        sim.call("update_alarm", {"id": weekday["id"], "revision": 1, "label": "A"}),
        sim.call("update_alarm", {"id": weekday["id"], "revision": 1, "label": "B"}),
    )
    outcomes = sorted([first["isError"], second["isError"]])
    assert outcomes == [False, True]
    loser = first if first["isError"] else second
    assert loser["structuredContent"]["error"]["code"] == "revision_conflict"
    assert sim.device.alarms[weekday["id"]].revision == 2


async def test_command_delay_defers_the_effect(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The command delay defers a write's effect; reads see the old state meanwhile."""
    started = asyncio.Event()
    release = asyncio.Event()
    delays: list[float] = []

    async def held_sleep(seconds: float) -> None:
        delays.append(seconds)
        started.set()
        await release.wait()

    sim = await make_sim(command_delay=0.2, sleep=held_sleep)
    weekday = await sim.alarm("Weekdays")
    write = asyncio.create_task(
        sim.call("update_alarm", {"id": weekday["id"], "revision": 1, "label": "Later"})
    )
    await started.wait()
    assert (await sim.alarm("Weekdays"))["revision"] == 1  # reads see the old state meanwhile
    release.set()
    assert (await write)["structuredContent"]["alarm"]["label"] == "Later"
    assert delays == [0.2]


# --- wake sessions ----------------------------------------------------------------------------


async def test_trigger_and_dismiss(sim: Sim) -> None:
    """trigger_alarm rings and dismiss_session ends the session."""
    weekend = await sim.alarm("Weekend")
    session = (await sim.ok("trigger_alarm", {"id": weekend["id"]}))["session"]
    assert session["state"] == "ringing"
    assert session["alarm_id"] == weekend["id"]
    assert session["started_at"] == "2026-11-30T06:00:00+01:00"
    assert session["snooze_count"] == 0
    assert session["id"].startswith("ses_")
    assert "ended_at" not in session
    assert (await sim.ok("get_state"))["active_session"] == session
    busy = await sim.fails("trigger_alarm", {"id": weekend["id"]})
    assert busy["code"] == "session_active"
    sim.clock.advance(30)
    ended = (await sim.ok("dismiss_session"))["session"]
    assert ended["state"] == "ended"
    assert ended["end_reason"] == "mcp"
    assert ended["ended_at"] == "2026-11-30T06:00:30+01:00"
    state = await sim.ok("get_state")
    assert state["active_session"] is None
    assert state["recent_sessions"] == [ended]
    assert [event["type"] for event in sim.device.events] == ["ringing", "dismissed", "ended"]


async def test_trigger_disabled_alarm_and_unknown(sim: Sim) -> None:
    """A disabled alarm can be triggered; an unknown one cannot."""
    one_shot = await sim.alarm("Train to the coast")
    assert (await sim.ok("trigger_alarm", {"id": one_shot["id"]}))["session"]["state"] == "ringing"
    await sim.ok("dismiss_session")
    assert (await sim.fails("trigger_alarm", {"id": "alm_gone"}))["code"] == "not_found"


async def test_no_active_session(sim: Sim) -> None:
    """Snooze and dismiss without a session are no_active_session."""
    assert (await sim.fails("snooze_session"))["code"] == "no_active_session"
    assert (await sim.fails("dismiss_session"))["code"] == "no_active_session"
    await sim.invalid("snooze_session", {"minutes": 5})


async def test_dismissal_disabled(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Smartphone dismissal switched off refuses dismiss_session."""
    sim = await make_sim(smartphone_dismissal=False)
    assert (await sim.ok("get_state"))["settings"]["smartphone_dismissal_enabled"] is False
    weekday = await sim.alarm("Weekdays")
    await sim.ok("trigger_alarm", {"id": weekday["id"]})
    error = await sim.fails("dismiss_session")
    assert error["code"] == "dismissal_disabled"
    assert (await sim.ok("get_state"))["active_session"]["state"] == "ringing"
    # The off button on the clock itself still works.
    pressed = sim.device.press_dismiss()
    assert pressed["end_reason"] == "dismissed"
    sim.device.set_settings(smartphone_dismissal_enabled=True)
    await sim.ok("trigger_alarm", {"id": weekday["id"]})
    assert (await sim.ok("dismiss_session"))["session"]["end_reason"] == "mcp"


async def test_snooze_cycle_and_limit(sim: Sim) -> None:
    """Snoozes count up to the alarm's limit, then are refused."""
    weekend = await sim.alarm("Weekend")  # snooze 15 minutes, at most 2 snoozes
    await sim.ok("trigger_alarm", {"id": weekend["id"]})
    first = (await sim.ok("snooze_session"))["session"]
    assert first["state"] == "snoozed"
    assert first["snooze_count"] == 1
    assert first["snooze_until"] == "2026-11-30T06:15:00+01:00"
    again = (await sim.ok("snooze_session"))["session"]
    assert again == first  # snoozing while snoozed changes nothing
    sim.clock.advance(15 * 60 - 1)
    assert (await sim.ok("get_state"))["active_session"]["state"] == "snoozed"
    sim.clock.advance(1)
    ringing = (await sim.ok("get_state"))["active_session"]
    assert ringing["state"] == "ringing"
    assert "snooze_until" not in ringing
    assert (await sim.ok("snooze_session"))["session"]["snooze_count"] == 2
    sim.clock.advance(15 * 60)
    error = await sim.fails("snooze_session")
    assert error["code"] == "snooze_limit_reached"
    assert error["details"] == {"snooze_count": 2, "max_snoozes": 2}
    assert [event["type"] for event in sim.device.events] == [
        "ringing",
        "snoozed",
        "ringing",
        "snoozed",
        "ringing",
    ]


async def test_zero_snoozes_allowed(sim: Sim) -> None:
    """An alarm that allows no snoozes refuses the first."""
    alarm = (await sim.ok("create_alarm", {"label": "Strict", "time": "09:00", "max_snoozes": 0}))[
        "alarm"
    ]
    await sim.ok("trigger_alarm", {"id": alarm["id"]})
    assert (await sim.fails("snooze_session"))["code"] == "snooze_limit_reached"


async def test_ring_timeout(sim: Sim) -> None:
    """Ringing too long ends the session with reason timeout."""
    weekday = await sim.alarm("Weekdays")
    await sim.ok("trigger_alarm", {"id": weekday["id"]})
    sim.clock.advance(599)
    assert (await sim.ok("get_state"))["active_session"]["state"] == "ringing"
    sim.clock.advance(1)
    state = await sim.ok("get_state")
    assert state["active_session"] is None
    ended = state["recent_sessions"][0]
    assert ended["end_reason"] == "timeout"
    assert ended["ended_at"] == "2026-11-30T06:10:00+01:00"


async def test_timeout_counts_from_the_last_ring(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The ring timeout counts from the last ring after a snooze."""
    sim = await make_sim(ring_timeout=120)
    weekday = await sim.alarm("Weekdays")  # 9-minute snooze
    await sim.ok("trigger_alarm", {"id": weekday["id"]})
    sim.clock.advance(60)
    await sim.ok("snooze_session")
    # One jump across the snooze end and the following timeout: both play, in order.
    sim.clock.advance(9 * 60 + 120)
    ended = (await sim.ok("get_state"))["recent_sessions"][0]
    assert ended["end_reason"] == "timeout"
    assert ended["ended_at"] == "2026-11-30T06:12:00+01:00"


async def test_alarm_rings_when_its_time_passes(sim: Sim) -> None:
    """An alarm rings when its time passes on the clock."""
    weekday = await sim.alarm("Weekdays")
    sim.clock.advance(44 * 60 + 59)
    assert (await sim.ok("get_state"))["active_session"] is None
    sim.clock.advance(1)
    session = (await sim.ok("get_state"))["active_session"]
    assert session["alarm_id"] == weekday["id"]
    assert session["started_at"] == "2026-11-30T06:45:00+01:00"
    assert (await sim.alarm("Weekdays"))["next_occurrences"][0] == "2026-12-01T06:45:00+01:00"


async def test_tick_plays_a_long_gap_in_order(sim: Sim) -> None:
    """A long gap in time plays every ring in order."""
    # Monday 06:00 → Sunday 12:00: five weekday rings and two weekend rings, each timing out.
    sim.clock.advance(6 * 86400 + 6 * 3600)
    events = sim.device.tick()
    rings = [event["at"] for event in events if event["type"] == "ringing"]
    assert rings == [
        "2026-11-30T06:45:00+01:00",
        "2026-12-01T06:45:00+01:00",
        "2026-12-02T06:45:00+01:00",
        "2026-12-03T06:45:00+01:00",
        "2026-12-04T06:45:00+01:00",
        "2026-12-05T08:30:00+01:00",
        "2026-12-06T08:30:00+01:00",
    ]
    recent = (await sim.ok("get_state"))["recent_sessions"]
    assert len(recent) == 7
    assert all(session["end_reason"] == "timeout" for session in recent)
    assert recent[0]["started_at"] == "2026-12-06T08:30:00+01:00"  # newest first
    assert sim.device.tick() == []


async def test_recent_sessions_are_capped(sim: Sim) -> None:
    """Recent sessions are capped."""
    weekday = await sim.alarm("Weekdays")
    for _ in range(RECENT_SESSIONS + 2):
        await sim.ok("trigger_alarm", {"id": weekday["id"]})
        await sim.ok("dismiss_session")
    assert len((await sim.ok("get_state"))["recent_sessions"]) == RECENT_SESSIONS


async def test_one_shot_is_used_up(sim: Sim) -> None:
    """A one-shot alarm is used up once it rang."""
    created = (await sim.ok("create_alarm", {"label": "Nap", "time": "06:20"}))["alarm"]
    assert created["next_occurrences"] == ["2026-11-30T06:20:00+01:00"]
    sim.clock.advance(20 * 60)
    state = await sim.ok("get_state")
    assert state["active_session"]["alarm_id"] == created["id"]
    after = await sim.alarm("Nap")
    assert after["enabled"] is False
    assert after["revision"] == 2  # the device's own write moves the revision
    assert after["next_occurrences"] == []
    stale = await sim.fails("update_alarm", {"id": created["id"], "revision": 1, "label": "z"})
    assert stale["code"] == "revision_conflict"


async def test_alarm_due_during_a_session_is_missed(sim: Sim) -> None:
    """An alarm due during another session is missed, and recorded so."""
    weekend = await sim.alarm("Weekend")
    weekday = await sim.alarm("Weekdays")
    sim.clock.advance(40 * 60)
    await sim.ok("trigger_alarm", {"id": weekend["id"]})  # 06:40, times out at 06:50
    sim.clock.advance(6 * 60)
    session = (await sim.ok("get_state"))["active_session"]
    assert session["alarm_id"] == weekend["id"]
    missed = [event for event in sim.device.events if event["type"] == "missed"]
    assert missed == [
        {
            "type": "missed",
            "at": "2026-11-30T06:45:00+01:00",
            "session_id": None,
            "alarm_id": weekday["id"],
        }
    ]


async def test_physical_snooze_button(sim: Sim) -> None:
    """The clock's physical snooze button snoozes the session."""
    weekday = await sim.alarm("Weekdays")
    await sim.ok("trigger_alarm", {"id": weekday["id"]})
    pressed = sim.device.press_snooze()
    assert pressed["state"] == "snoozed"
    assert (await sim.ok("get_state"))["active_session"]["snooze_count"] == 1


# --- time zones and DST -----------------------------------------------------------------------


async def test_occurrences_across_spring_forward(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Occurrences across the spring-forward gap move to the next valid time."""
    # Berlin moves 02:00 → 03:00 on Sunday 28 March 2027.
    sim = await make_sim(now=datetime(2027, 3, 26, 12, 0, tzinfo=UTC), starter_alarms=False)
    every_day = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    night = (await sim.ok("create_alarm", {"label": "Night", "time": "02:30", "days": every_day}))[
        "alarm"
    ]
    assert night["next_occurrences"] == [
        "2027-03-27T02:30:00+01:00",
        "2027-03-28T03:30:00+02:00",  # 02:30 does not exist that night: it rings after the gap
        "2027-03-29T02:30:00+02:00",
        "2027-03-30T02:30:00+02:00",
        "2027-03-31T02:30:00+02:00",
    ]
    morning = (
        await sim.ok("create_alarm", {"label": "Morning", "time": "06:45", "days": ["sat", "mon"]})
    )["alarm"]
    assert morning["next_occurrences"][:2] == [
        "2027-03-27T06:45:00+01:00",
        "2027-03-29T06:45:00+02:00",
    ]
    # Ring times are exact instants: Monday 06:45 CEST is 04:45 UTC.
    await sim.ok("delete_alarm", {"id": night["id"], "revision": 1})
    sim.clock.set(datetime(2027, 3, 29, 4, 44, 59, tzinfo=UTC))
    sim.device.tick()  # Saturday's ring plays and times out on the way
    sim.clock.advance(1)
    session = (await sim.ok("get_state"))["active_session"]
    assert session["started_at"] == "2027-03-29T06:45:00+02:00"


async def test_occurrences_across_fall_back(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Occurrences across the fall-back hour ring once."""
    # Berlin repeats 02:00-03:00 on Sunday 31 October 2027; 02:30 rings once, the first time.
    sim = await make_sim(now=datetime(2027, 10, 29, 12, 0, tzinfo=UTC), starter_alarms=False)
    alarm = (
        await sim.ok("create_alarm", {"label": "Night", "time": "02:30", "days": ["sun", "mon"]})
    )["alarm"]
    assert alarm["next_occurrences"][:2] == [
        "2027-10-31T02:30:00+02:00",
        "2027-11-01T02:30:00+01:00",
    ]
    # A snooze across the repeated hour lasts its real nine minutes.
    sim.clock.set(datetime(2027, 10, 31, 0, 55, tzinfo=UTC))  # 02:55 CEST
    await sim.ok("trigger_alarm", {"id": alarm["id"]})
    snoozed = (await sim.ok("snooze_session"))["session"]
    assert snoozed["snooze_until"] == "2027-10-31T02:04:00+01:00"


async def test_other_time_zone(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """A clock in another time zone answers in its zone."""
    sim = await make_sim(timezone="America/New_York")
    state = await sim.ok("get_state")
    assert state["settings"]["timezone"] == "America/New_York"
    weekday = await sim.alarm("Weekdays")
    # 05:00 UTC on Monday is 00:00 in New York (EST, -05:00).
    assert weekday["next_occurrences"][0] == "2026-11-30T06:45:00-05:00"


# --- faults, stats and control routes ---------------------------------------------------------


async def test_fault_error_rate_and_malformed(sim: Sim) -> None:
    """The error-rate and malformed faults break replies as set."""
    faults = sim.client.server.app[FAULTS]
    faults.update({"error_rate": 1.0})
    assert (await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status == 500
    faults.reset()
    faults.update({"malformed": True})
    response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    with pytest.raises(json.JSONDecodeError):
        json.loads(await response.text())
    faults.reset()
    assert (await sim.rpc("ping"))[0] == 200


async def test_fault_revoked_refuses_even_a_good_password(
    make_sim: Callable[..., Awaitable[Sim]],
) -> None:
    """The revoked fault refuses even the right password."""
    sim = await make_sim(password="pw")
    headers = {**HEADERS, "Authorization": _basic("admin", "pw")}
    assert (await sim.rpc("ping", headers=headers))[0] == 200
    sim.client.server.app[FAULTS].update({"revoked": True})
    response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    assert response.status == 401
    assert "WWW-Authenticate" in response.headers


async def test_fault_revoked_without_password(sim: Sim) -> None:
    """The revoked fault refuses a clock without a password too."""
    sim.client.server.app[FAULTS].update({"revoked": True})
    assert (await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status == 401


async def test_fault_latency_still_answers(sim: Sim) -> None:
    """With latency the clock still answers."""
    sim.client.server.app[FAULTS].update({"latency": 0.01})
    assert (await sim.rpc("ping"))[1]["result"] == {}


async def test_fault_hang(sim: Sim) -> None:
    """The hang fault never answers."""
    sim.client.server.app[FAULTS].update({"hang": True})
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(sim.rpc("ping"), timeout=0.2)


async def test_fault_offline(sim: Sim) -> None:
    """The offline fault refuses connections."""
    sim.client.server.app[FAULTS].update({"offline": True})
    with pytest.raises(aiohttp.ClientError):
        await sim.rpc("ping")


async def test_fault_switches_over_http(sim: Sim) -> None:
    """The fault switches can be set over HTTP."""
    response = await sim.client.post("/_sim/faults", json={"error_rate": 1})
    assert (await response.json())["error_rate"] == 1.0
    assert (await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status == 500
    bad = await sim.client.post("/_sim/faults", json={"errror_rate": 1})
    assert bad.status == 400


async def test_stats_count_tools(sim: Sim) -> None:
    """The stats count tools, methods and requests."""
    await sim.ok("list_alarms")
    await sim.ok("list_alarms")
    await sim.rpc("ping")
    stats = await (await sim.client.get("/_sim/stats")).json()
    assert stats["tools"] == {"list_alarms": 2}
    assert stats["methods"] == {"tools/call": 2, "ping": 1}
    assert stats["http_requests"] == 3


async def test_control_route_device(sim: Sim) -> None:
    """The device control route triggers, snoozes and dismisses like the clock's buttons."""
    weekday = await sim.alarm("Weekdays")
    response = await sim.client.post(
        "/_sim/device", json={"action": "trigger", "id": weekday["id"]}
    )
    assert response.status == 200
    body = await response.json()
    assert body["result"]["state"] == "ringing"
    assert body["state"]["active_session"]["id"] == body["result"]["id"]
    snoozed = await (await sim.client.post("/_sim/device", json={"action": "press_snooze"})).json()
    assert snoozed["result"]["state"] == "snoozed"
    dismissed = await (
        await sim.client.post("/_sim/device", json={"action": "press_dismiss"})
    ).json()
    assert dismissed["result"]["end_reason"] == "dismissed"
    conflict = await sim.client.post("/_sim/device", json={"action": "press_dismiss"})
    assert conflict.status == 409
    assert (await conflict.json())["error"]["code"] == "no_active_session"
    unknown = await sim.client.post("/_sim/device", json={"action": "explode"})
    assert unknown.status == 400
    missing = await sim.client.post("/_sim/device", json={"action": "trigger"})
    assert missing.status == 400


async def test_control_route_alarms_and_settings(sim: Sim) -> None:
    """The control routes edit alarms and settings behind the client's back."""
    added = await (
        await sim.client.post(
            "/_sim/device",
            json={"action": "add_alarm", "fields": {"label": "Paired", "time": "10:00"}},
        )
    ).json()
    alarm_id = added["result"]["id"]
    edited = await (
        await sim.client.post(
            "/_sim/device",
            json={"action": "edit_alarm", "id": alarm_id, "fields": {"time": "10:30"}},
        )
    ).json()
    assert edited["result"]["revision"] == 2
    await sim.client.post(
        "/_sim/device",
        json={"action": "settings", "fields": {"smartphone_dismissal_enabled": False}},
    )
    assert sim.device.smartphone_dismissal_enabled is False
    await sim.client.post("/_sim/device", json={"action": "remove_alarm", "id": alarm_id})
    assert alarm_id not in sim.device.alarms
    state = await (await sim.client.get("/_sim/device")).json()
    assert state["now"] == "2026-11-30T06:00:00+01:00"
    assert len(state["state"]["alarms"]) == 3


async def test_control_route_clock(sim: Sim) -> None:
    """The clock control route moves time and reports the events."""
    body = await (await sim.client.post("/_sim/clock", json={"advance": 45 * 60})).json()
    assert body["now"] == "2026-11-30T06:45:00+01:00"
    assert [event["type"] for event in body["events"]] == ["ringing"]
    later = await (
        await sim.client.post("/_sim/clock", json={"set": "2026-11-30T07:00:00+01:00"})
    ).json()
    assert [event["type"] for event in later["events"]] == ["ended"]
    bad = await sim.client.post("/_sim/clock", json={"set": "soon"})
    assert bad.status == 400
    # Clock set back: nothing is due.
    back = await (await sim.client.post("/_sim/clock", json={"advance": -3600})).json()
    assert back["events"] == []


async def test_clock_moved_back_does_not_replay(sim: Sim) -> None:
    """Moving the clock back does not replay rings."""
    sim.clock.advance(50 * 60)
    assert len(sim.device.tick()) == 1
    sim.clock.advance(-10 * 60)
    assert sim.device.tick() == []
    sim.clock.advance(2 * 60)
    assert sim.device.tick() == []


def test_standalone_refuses_other_hosts() -> None:
    """The standalone server refuses hosts other than loopback."""
    result = subprocess.run(
        [sys.executable, "-m", "simulators.robine_wake", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "127.0.0.1" in result.stderr


def test_timezone_arithmetic_helper_keeps_instants() -> None:
    """The time-zone arithmetic helper keeps instants across DST."""
    device = RobineWake(starter_alarms=False, timezone="Europe/Berlin")
    start = datetime(2027, 3, 28, 0, 55, tzinfo=UTC)  # 01:55 CET, five minutes before the gap
    device.clock.set(start)
    alarm = device.create({"label": "Gap", "time": "02:00", "days": ["sun"]})
    first = device.next_occurrences(alarm, start, 1)[0]
    assert first - start == timedelta(minutes=5)  # 02:00 does not exist: 03:00 CEST
    assert first.utcoffset() == timedelta(hours=2)


async def test_official_sdk_client_interoperates(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The MCP SDK's own client (an independent peer) negotiates, lists and calls tools."""
    sim = await make_sim(password="pw")
    url = str(sim.client.make_url("/mcp"))
    async with (
        streamablehttp_client(url, auth=httpx.BasicAuth("admin", "pw")) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.protocolVersion in SUPPORTED_VERSIONS
        assert init.capabilities.tools is not None
        tools = await session.list_tools()
        assert {tool.name for tool in tools.tools} == TOOL_NAMES
        listed = await session.call_tool("list_alarms", {})
        assert listed.isError is False
        assert listed.structuredContent is not None
        assert len(listed.structuredContent["alarms"]) == 3
        failed = await session.call_tool("dismiss_session", {})
        assert failed.isError is True
        assert failed.structuredContent == {
            "error": {"code": "no_active_session", "message": "No wake session is active."}
        }
    stats = sim.client.server.app[STATS]
    assert stats.tools == {"list_alarms": 1, "dismiss_session": 1}
