"""The Hubitat simulator against the MCP Rule Server app, over raw HTTP.

Upstream: kingpanther13/Hubitat-local-MCP-server, hubitat-mcp-server.groovy (handleMcpRequest,
processJsonRpcMessage, handleToolsCall) and the tools of libraries/mcp-*-lib.groovy.

The simulator must be right on its own before any client is tested against it.
"""

from __future__ import annotations

import asyncio
import base64
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
import json
import re
import socket
import subprocess
import sys
from typing import Any

import aiohttp
from aiohttp.test_utils import TestClient
import pytest

from simulators.base import FAULTS, STATS, SimClock
from simulators.hubitat import (
    BEST_PRACTICE_KEY,
    CORE_TOOLS,
    GATEWAYS,
    HUB,
    SUPPORTED_VERSIONS,
    TOOL_DEFS,
    TOOLS,
    Hub,
    create_app,
)
from simulators.hubitat.hub import Mode
from tests.simulation import ClientFactory, RawMcp, client_on_clock

KEY = {"bestPracticeKey": BEST_PRACTICE_KEY}
NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
LAST_ACTIVITY = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$")
EVENT_DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}$")
MODERN = "2026-07-28"


class Sim(RawMcp):
    """A running simulated hub with raw JSON-RPC helpers."""

    def __init__(self, client: TestClient, clock: SimClock, app_id: str, token: str) -> None:
        super().__init__(client, clock)
        self.hub: Hub = client.server.app[HUB]
        self.path = f"/apps/api/{app_id}/mcp"
        self.token = token

    async def post(
        self,
        body: Any,
        *,
        headers: dict[str, str] | None = None,
        token: str | None = "query",
    ) -> aiohttp.ClientResponse:
        params = {"access_token": self.token} if token == "query" else None
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        return await self.client.post(
            self.path, data=self.encode(body), params=params, headers=hdrs
        )

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tool call that must succeed at the JSON-RPC level; the parsed text payload."""
        result = await super().call(name, arguments)
        assert "structuredContent" not in result
        return json.loads(result["content"][0]["text"])

    async def error(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        body = await self.call_raw(name, args)
        assert "error" in body, body
        return body["error"]

    async def gw(self, gateway: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return await self.call(gateway, {"tool": tool, "args": args})


# Real HTTP on 127.0.0.1 (the HA test plugin still refuses any other host).
pytestmark = pytest.mark.usefixtures("socket_enabled")


@pytest.fixture
def make_sim(aiohttp_client: ClientFactory) -> Callable[..., Awaitable[Sim]]:
    async def _make(**options: Any) -> Sim:
        options.setdefault("command_delay", None)
        options.setdefault("devices", 40)
        now = options.pop("now", NOW)
        client, clock = await client_on_clock(aiohttp_client, create_app, now, **options)
        return Sim(
            client, clock, str(options.get("app_id", "42")), options.get("token", "sim-token")
        )

    return _make


@pytest.fixture
async def sim(make_sim: Callable[..., Awaitable[Sim]]) -> Sim:
    return await make_sim()


def _first(sim: Sim, kind: str) -> str:
    return str(sim.hub.find(kind=kind)[0].id)


# ---------------------------------------------------------------- transport and protocol


@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ],
)
async def test_initialize_negotiates(sim: Sim, requested: str, negotiated: str) -> None:
    """initialize negotiates the version and announces the app's capabilities."""
    status, body = await sim.rpc("initialize", {"protocolVersion": requested})
    result = body["result"]
    assert status == 200
    assert result["protocolVersion"] == negotiated
    assert result["capabilities"] == {
        "tools": {},
        "resources": {"subscribe": False, "listChanged": False},
    }
    assert result["serverInfo"]["name"] == "hubitat-mcp-rule-server"
    assert result["instructions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == (
        "hubitat-mcp-rule-server"
    )
    assert "resultType" not in result  # legacy results stay strict-schema clean


async def test_stateless_transport(sim: Sim) -> None:
    """The transport is stateless: no session id, JSON answers, GET is 405."""
    response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert "Mcp-Session-Id" not in response.headers
    assert response.content_type == "application/json"
    for method in ("GET", "DELETE"):
        reply = await sim.client.request(method, sim.path, params={"access_token": sim.token})
        assert reply.status == 405
    note = await sim.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status == 202
    assert await note.read() == b""


async def test_server_discover_and_modern_headers(sim: Sim) -> None:
    """server/discover and the modern headers are answered as the app does."""
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "server/discover"}
    status, body = await sim.rpc("server/discover", headers=headers)
    assert status == 200
    assert body["result"]["supportedVersions"] == list(SUPPORTED_VERSIONS)
    assert body["result"]["resultType"] == "complete"
    assert body["result"]["ttlMs"] > 0
    # Legacy discover works too (headerless), still with resultType.
    _, legacy = await sim.rpc("server/discover")
    assert legacy["result"]["resultType"] == "complete"

    call = {"name": "hub_list_modes", "arguments": {}}
    good = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "hub_list_modes",
    }
    status, body = await sim.rpc("tools/call", call, headers=good)
    assert status == 200
    assert body["result"]["resultType"] == "complete"

    sentinel = "=?base64?" + base64.b64encode(b"hub_list_modes").decode() + "?="
    status, _ = await sim.rpc("tools/call", call, headers={**good, "Mcp-Name": sentinel})
    assert status == 200

    for bad in (
        {**good, "Mcp-Method": "tools/list"},
        {**good, "Mcp-Name": "hub_get_info"},
        {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"},
    ):
        status, body = await sim.rpc("tools/call", call, headers=bad)
        assert (status, body["error"]["code"]) == (400, -32020)

    meta_call = {**call, "_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25"}}
    status, body = await sim.rpc("tools/call", meta_call, headers=good)
    assert (status, body["error"]["code"]) == (400, -32020)

    status, body = await sim.rpc(
        "no/such", headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "no/such"}
    )
    assert (status, body["error"]["code"]) == (404, -32601)
    batch = await sim.post(
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        headers={"MCP-Protocol-Version": MODERN, "Mcp-Method": "ping"},
    )
    assert batch.status == 400
    assert (await batch.json())["error"]["code"] == -32600
    # A legacy header value is served like a headerless request, with no cross-checks.
    status, body = await sim.rpc("ping", headers={"MCP-Protocol-Version": "2025-06-18"})
    assert status == 200
    assert "resultType" not in body["result"]


async def test_unsupported_version_header(sim: Sim) -> None:
    """An unsupported version header is 400 -32022 naming the supported ones."""
    status, body = await sim.rpc("ping", headers={"MCP-Protocol-Version": "2030-01-01"})
    assert status == 400
    assert body["error"]["code"] == -32022
    assert body["error"]["data"] == {
        "requested": "2030-01-01",
        "supported": list(SUPPORTED_VERSIONS),
    }


async def test_jsonrpc_errors_and_batches(sim: Sim) -> None:
    """JSON-RPC errors and batches are answered as the app does."""
    response = await sim.post(b"{nope")
    assert response.status == 200
    assert (await response.json())["error"]["code"] == -32700
    response = await sim.post({"id": 1, "method": "ping"})
    assert (await response.json())["error"]["code"] == -32600
    status, body = await sim.rpc("no/such")
    assert (status, body["error"]["code"]) == (200, -32601)
    response = await sim.post([])
    assert (await response.json())["error"]["code"] == -32600
    response = await sim.post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
    )
    replies = await response.json()
    assert [r["id"] for r in replies] == [1, 2]
    only_notes = await sim.post([{"jsonrpc": "2.0", "method": "notifications/cancelled"}])
    assert only_notes.status == 202
    status, body = await sim.rpc("tools/call", {"arguments": {}})
    assert body["error"]["code"] == -32602


async def test_auth_query_bearer_and_refusals(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The token is accepted in the query or as Bearer; others are refused."""
    sim = await make_sim(token="s3cret", app_id=77)
    assert sim.path == "/apps/api/77/mcp"
    status, _ = await sim.rpc("ping")
    assert status == 200
    status, _ = await sim.rpc("ping", token=None, headers={"Authorization": "Bearer s3cret"})
    assert status == 200
    response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, token=None)
    assert response.status == 401
    status, _ = await sim.rpc("ping", token=None, headers={"Authorization": "Bearer wrong"})
    assert status == 401
    other = await sim.client.post("/apps/api/1/mcp", params={"access_token": "s3cret"}, data="{}")
    assert other.status == 404
    get = await sim.client.get(sim.path)
    assert get.status == 401  # the OAuth layer answers before the app's 405
    cloud = await sim.client.post(
        f"/api/{sim.hub.hub_id}/apps/77/mcp",
        params={"access_token": "s3cret"},
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
    )
    assert cloud.status == 200
    elsewhere = await sim.client.post(
        "/api/other-hub/apps/77/mcp", params={"access_token": "s3cret"}, data="{}"
    )
    assert elsewhere.status == 404
    sim.client.server.app[FAULTS].revoked = True
    status, _ = await sim.rpc("ping")
    assert status == 401


async def test_origin_is_logged_or_enforced(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Origins are logged, or enforced when the app is set to."""
    lenient = await make_sim()
    status, _ = await lenient.rpc("ping", headers={"Origin": "http://evil.example"})
    assert status == 200
    strict = await make_sim(enforce_origin=True)
    status, _ = await strict.rpc("ping", headers={"Origin": "http://evil.example"})
    assert status == 403
    status, _ = await strict.rpc("ping", headers={"Origin": "http://127.0.0.1:8080"})
    assert status == 200


# ---------------------------------------------------------------- catalog and gateways


async def test_gateway_catalog(sim: Sim) -> None:
    """The gateway catalog lists the core tools, then the gateways."""
    _, body = await sim.rpc("tools/list")
    tools = body["result"]["tools"]
    names = [t["name"] for t in tools]
    assert len(tools) == 36
    assert names[:13] == list(CORE_TOOLS)
    assert set(names[13:]) == set(GATEWAYS)
    assert body["result"]["ttlMs"] > 0
    assert "nextCursor" not in body["result"]
    by_name = {t["name"]: t for t in tools}
    assert by_name["hub_read_devices"]["annotations"]["readOnlyHint"] is True
    assert by_name["hub_manage_devices"]["annotations"]["readOnlyHint"] is False
    assert by_name["hub_manage_devices"]["annotations"]["destructiveHint"] is True
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object"
        assert set(tool["annotations"]) == {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }
    assert by_name["hub_set_hsm"]["annotations"]["destructiveHint"] is True
    assert "bestPracticeKey" in by_name["hub_set_hsm"]["inputSchema"]["properties"]
    assert "bestPracticeKey" not in by_name["hub_get_info"]["inputSchema"]["properties"]


async def test_flat_catalog(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """The flat catalog lists every tool, as heavy as a real hub's."""
    sim = await make_sim(gateways=False)
    response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    raw = await response.read()
    assert 100_000 <= len(raw) <= 124_000  # as heavy as a real hub's flat catalog
    body = json.loads(raw)
    names = [t["name"] for t in body["result"]["tools"]]
    assert len(names) == len(set(names)) == len(TOOL_DEFS) - 1
    assert "hub_search_tools" not in names
    assert not set(names) & set(GATEWAYS)
    assert "hub_list_devices" in names
    command = next(t for t in body["result"]["tools"] if t["name"] == "hub_call_device_command")
    assert "bestPracticeKey" in command["description"]
    reboot = next(t for t in body["result"]["tools"] if t["name"] == "hub_reboot")
    assert "confirm=true" in reboot["description"]
    error = await sim.error("hub_search_tools", {"query": "light"})
    assert error["code"] == -32602


async def test_gateway_catalog_and_execute(sim: Sim) -> None:
    """A gateway without a tool answers its catalog; with one it executes it."""
    catalog = await sim.call("hub_read_devices")
    assert catalog["gateway"] == "hub_read_devices"
    assert catalog["mode"] == "catalog"
    assert [t["name"] for t in catalog["tools"]] == list(GATEWAYS["hub_read_devices"][1])
    assert all(t["inputSchema"]["type"] == "object" for t in catalog["tools"])
    flat = await sim.call("hub_list_devices", {"limit": 5})
    proxied = await sim.gw("hub_read_devices", "hub_list_devices", {"limit": 5})
    assert flat == proxied
    error = await sim.error("hub_read_devices", {"tool": "hub_call_device_command", "args": {}})
    assert error["code"] == -32602
    assert "hub_list_devices" in error["message"]
    error = await sim.error("hub_no_such_tool")
    assert error["code"] == -32602
    error = await sim.error("hub_read_devices", {"tool": "hub_list_devices", "args": [1]})
    assert error["code"] == -32602


async def test_search_tools_ranks_hidden_tools(sim: Sim) -> None:
    """hub_search_tools ranks hidden tools and names their gateways."""
    result = await sim.call("hub_search_tools", {"query": "send a command to a device"})
    names = [r["name"] for r in result["results"]]
    assert "hub_call_device_command" in names[:3]
    top = next(r for r in result["results"] if r["name"] == "hub_call_device_command")
    assert top["gateways"] == ["hub_manage_devices"]
    assert (await sim.error("hub_search_tools", {}))["code"] == -32602


# ---------------------------------------------------------------- device listing


async def test_list_devices_summary_shape(sim: Sim) -> None:
    """hub_list_devices' summary has the app's shape and counts."""
    result = await sim.call("hub_list_devices")
    assert result["count"] == 40
    assert result["total"] == 40
    assert result["hasMore"] is False
    assert "nextCursor" not in result
    allowed = {"switch", "level", "motion", "contact", "temperature", "humidity", "battery"}
    never = 0
    for item in result["devices"]:
        assert isinstance(item["id"], str)
        assert set(item) >= {
            "id",
            "name",
            "label",
            "room",
            "disabled",
            "deviceNetworkId",
            "lastActivity",
            "parentDeviceId",
            "currentStates",
        }
        assert set(item["currentStates"]) <= allowed
        if item["lastActivity"] is None:
            never += 1
        else:
            assert LAST_ACTIVITY.match(item["lastActivity"])
            assert item["lastActivity"].endswith(("-06:00", "-05:00"))  # hub's local zone
    assert never == 1  # the paired-but-silent device
    by_id = {d["id"]: d for d in result["devices"]}
    children = [d for d in result["devices"] if d["parentDeviceId"]]
    assert len(children) == 2
    parent = by_id[children[0]["parentDeviceId"]]
    assert all(c["room"] == parent["room"] for c in children)
    assert all(c["label"].startswith(parent["label"]) for c in children)
    assert sum(1 for d in result["devices"] if d["label"] is None) == 1
    assert sum(1 for d in result["devices"] if d["label"] == "Lamp") == 2
    assert sum(1 for d in result["devices"] if d["disabled"]) == 1
    lock = next(d for d in result["devices"] if d["id"] == _first(sim, "lock"))
    assert "lock" not in lock["currentStates"]  # only detailed shows locks
    assert lock["currentStates"]["battery"] == sim.hub.devices[int(lock["id"])].value("battery")


async def test_list_devices_formats(sim: Sim) -> None:
    """hub_list_devices' formats: ids only, or full items."""
    ids = await sim.call("hub_list_devices", {"format": "ids"})
    assert all(isinstance(i, int) for i in ids["deviceIds"])
    assert ids["count"] == ids["total"] == 40
    detailed = await sim.call("hub_list_devices", {"format": "detailed", "limit": 3})
    item = detailed["devices"][0]
    assert isinstance(item["capabilities"], list)
    assert all(set(a) == {"name", "value"} for a in item["attributes"])
    assert all(isinstance(c, str) for c in item["commands"])
    context = await sim.call("hub_list_devices", {"format": "context", "limit": 2})
    assert set(context["devices"][0]) == {"id", "label", "room", "states"}
    assert (await sim.error("hub_list_devices", {"format": "xml"}))["code"] == -32602


async def test_paging_offset_and_cursor(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Listings page by offset and cursor."""
    sim = await make_sim(devices=120)
    first = await sim.call("hub_list_devices")
    assert first["count"] == 50
    assert first["hasMore"] is True
    assert (first["nextOffset"], first["nextCursor"]) == (50, "50")
    seen = [d["id"] for d in first["devices"]]
    cursor = first["nextCursor"]
    while cursor:
        page = await sim.call("hub_list_devices", {"cursor": cursor})
        seen += [d["id"] for d in page["devices"]]
        cursor = page.get("nextCursor")
    assert len(seen) == len(set(seen)) == 120
    by_offset = await sim.call("hub_list_devices", {"offset": 100, "limit": 50})
    assert by_offset["count"] == 20
    assert by_offset["hasMore"] is False
    for bad in ({"cursor": "abc"}, {"cursor": "999"}, {"limit": 0}, {"offset": "x"}):
        assert (await sim.error("hub_list_devices", bad))["code"] == -32602


async def test_list_filters(sim: Sim) -> None:
    """Listings filter by capability, attribute value and room."""
    hub = sim.hub
    switches = await sim.call("hub_list_devices", {"capabilityFilter": "switch"})
    expected = {str(d.id) for d in hub.visible_devices() if "Switch" in d.capabilities}
    assert {d["id"] for d in switches["devices"]} == expected
    on = await sim.call("hub_list_devices", {"onlyOn": True})
    assert {d["id"] for d in on["devices"]} == {
        str(d.id) for d in hub.visible_devices() if d.value("switch") == "on"
    }
    room = next(r for r in hub.rooms.values() if r.device_ids)
    in_room = await sim.call("hub_list_devices", {"roomFilter": room.name.upper()})
    assert {d["room"] for d in in_room["devices"]} == {room.name}
    label = hub.visible_devices()[0].label
    by_label = await sim.call("hub_list_devices", {"labelFilter": label.lower()})
    assert label in [d["label"] for d in by_label["devices"]]
    stale = await sim.call("hub_list_devices", {"filter": "stale:240"})
    for item in stale["devices"]:
        device = hub.devices[int(item["id"])]
        assert device.last_activity is None or NOW - device.last_activity >= timedelta(hours=240)
    target = _first(sim, "switch")
    await sim.gw(
        "hub_manage_devices", "hub_update_device", {"deviceId": target, "enabled": False, **KEY}
    )
    disabled = await sim.call("hub_list_devices", {"filter": "disabled"})
    off = {str(d.id) for d in hub.visible_devices() if d.disabled}
    assert target in off
    assert len(off) == 2  # the one the population ships disabled, and ours
    assert {d["id"] for d in disabled["devices"]} == off
    enabled = await sim.call("hub_list_devices", {"filter": "enabled"})
    assert enabled["total"] == 38
    for bad in ("stale:x", "broken"):
        assert (await sim.error("hub_list_devices", {"filter": bad}))["code"] == -32602


async def test_changed_since_is_incremental(sim: Sim) -> None:
    """changedSince lists only the devices with activity since then."""
    hub = sim.hub
    bookmark = int(NOW.timestamp() * 1000)
    assert (await sim.call("hub_list_devices", {"changedSince": bookmark}))["devices"] == []
    sim.clock.advance(1.5)
    a, b = hub.find(kind="contact")[0], hub.find(kind="motion")[0]
    hub.set_attribute(a.id, "contact", "open" if a.value("contact") == "closed" else "closed")
    hub.set_attribute(b.id, "motion", "active" if b.value("motion") == "inactive" else "inactive")
    changed = await sim.call("hub_list_devices", {"changedSince": bookmark})
    assert sorted(d["id"] for d in changed["devices"]) == sorted([str(a.id), str(b.id)])
    assert changed["total"] == 2
    iso = (NOW + timedelta(seconds=1)).astimezone(hub.tz).isoformat()
    assert len((await sim.call("hub_list_devices", {"changedSince": iso}))["devices"]) == 2
    # At or after (mcp-devices-lib.groovy toolListDevices: la.time >= changedSince): the
    # exact instant of the change still lists it, a millisecond later does not.
    exact = int((NOW + timedelta(seconds=1.5)).timestamp() * 1000)
    assert len((await sim.call("hub_list_devices", {"changedSince": exact}))["devices"]) == 2
    assert (await sim.call("hub_list_devices", {"changedSince": exact + 1}))["devices"] == []
    # A report that changes nothing makes no activity.
    hub.set_attribute(a.id, "contact", a.value("contact"))
    assert (await sim.call("hub_list_devices", {"changedSince": exact + 1}))["devices"] == []
    assert (await sim.error("hub_list_devices", {"changedSince": "yesterday"}))["code"] == -32602
    naive = {"changedSince": "2026-11-29T10:00:00"}
    assert (await sim.error("hub_list_devices", naive))["code"] == -32602


async def test_changed_since_cost_does_not_grow_with_devices(
    make_sim: Callable[..., Awaitable[Sim]],
) -> None:
    """A changedSince listing costs the same however many devices the hub has."""
    sizes = []
    for count in (100, 1000):
        sim = await make_sim(devices=count)
        bookmark = int(NOW.timestamp() * 1000)
        sim.clock.advance(1)
        for device in sim.hub.find(capability="Switch")[:3]:
            sim.hub.set_attribute(
                device.id, "switch", "on" if device.value("switch") == "off" else "off"
            )
        response = await sim.post(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "hub_list_devices", "arguments": {"changedSince": bookmark}},
            }
        )
        body = await response.read()
        assert len(json.loads(json.loads(body)["result"]["content"][0]["text"])["devices"]) == 3
        sizes.append(len(body))
    assert abs(sizes[0] - sizes[1]) < 200  # same three devices, whatever the hub's size


async def test_unselected_devices_are_invisible(sim: Sim) -> None:
    """Devices not selected in the app are invisible and not found."""
    hidden = [d for d in sim.hub.devices.values() if not d.selected]
    assert len(hidden) == 2
    listed = await sim.call("hub_list_devices", {"format": "ids"})
    assert not {d.id for d in hidden} & set(listed["deviceIds"])
    error = await sim.error("hub_get_device", {"deviceId": str(hidden[0].id)})
    assert error["code"] == -32602
    assert error["message"] == f"Device not found: {hidden[0].id}"
    rooms = await sim.call("hub_list_rooms")
    all_room_ids = {i for r in rooms["rooms"] for i in r["deviceIds"]}
    # getRooms() knows every device in a room, selected or not.
    assert any(d.id in all_room_ids for d in hidden if d.room_id)


async def test_get_device_shape(sim: Sim) -> None:
    """hub_get_device has the app's shape: capabilities, typed attributes, commands."""
    dev_id = _first(sim, "thermostat")
    device = await sim.call("hub_get_device", {"deviceId": int(dev_id)})
    assert device["id"] == dev_id
    assert "Thermostat" in device["capabilities"]
    attrs = {a["name"]: a for a in device["attributes"]}
    assert attrs["heatingSetpoint"]["dataType"] == "NUMBER"
    assert isinstance(attrs["heatingSetpoint"]["value"], int | float)
    assert isinstance(json.loads(attrs["supportedThermostatModes"]["value"]), list)
    commands = {c["name"]: c["arguments"] for c in device["commands"]}
    assert commands["heat"] is None
    assert commands["setHeatingSetpoint"] == [{"name": "temperature", "type": "NUMBER"}]
    assert (await sim.error("hub_get_device", {"deviceId": "999999"}))["code"] == -32602
    assert (await sim.error("hub_get_device", {}))["code"] == -32602


# ---------------------------------------------------------------- attributes and waits


async def test_get_attribute(sim: Sim) -> None:
    """hub_get_attribute answers a value, or an error naming the available ones."""
    dev = sim.hub.find(kind="lock")[0]
    result = await sim.call(
        "hub_get_device_attribute", {"deviceId": str(dev.id), "attribute": "lock"}
    )
    assert result == {"device": dev.label, "attribute": "lock", "value": "locked"}
    error = await sim.error("hub_get_device_attribute", {"deviceId": str(dev.id), "attribute": "x"})
    assert error["code"] == -32602
    assert "Available" in error["message"]
    ids = [str(d.id) for d in sim.hub.find(capability="Switch")[:3]]
    multi = await sim.call("hub_get_device_attribute", {"deviceIds": ids, "attribute": "switch"})
    assert [r["deviceId"] for r in multi["results"]] == ids
    for bad in (
        {"deviceId": ids[0], "deviceIds": ids, "attribute": "switch"},
        {"deviceIds": [ids[0]] * 21, "attribute": "switch"},
        {"deviceId": ids[0], "attribute": "switch", "expectedValue": "on", "timeoutMs": 60001},
        {
            "deviceId": ids[0],
            "attribute": "switch",
            "expectedValue": "on",
            "stableForMs": 10,
            "timeoutMs": 10,
        },
        {"deviceId": ids[0], "attribute": "switch", "expectedValues": [1], "comparator": "between"},
        {"deviceId": ids[0]},
    ):
        assert (await sim.error("hub_get_device_attribute", bad))["code"] == -32602


async def test_attribute_wait_succeeds_when_the_device_changes(
    make_sim: Callable[..., Awaitable[Sim]],
) -> None:
    """An attribute wait succeeds when the device changes in time."""
    sim = await make_sim(command_delay=0.01)
    dev = next(d for d in sim.hub.find(kind="switch") if d.value("switch") == "off")
    waiting = asyncio.create_task(
        sim.call(
            "hub_get_device_attribute",
            {
                "deviceId": str(dev.id),
                "attribute": "switch",
                "expectedValue": "on",
                "timeoutMs": 10000,
            },
        )
    )
    await sim.hub.wait_blocking(1)
    assert dev.value("switch") == "off"
    sim.hub.set_attribute(dev.id, "switch", "on")
    result = await waiting
    assert result["success"] is True
    assert result["timedOut"] is False
    assert result["finalValue"] == "on"


async def test_attribute_wait_times_out_and_non_numeric(sim: Sim) -> None:
    """An attribute wait times out; non-numeric comparisons are reported."""
    dev = sim.hub.find(kind="lock")[0]
    result = await sim.call(
        "hub_get_device_attribute",
        {
            "deviceId": str(dev.id),
            "attribute": "lock",
            "expectedValue": "unlocked",
            "timeoutMs": 30,
        },
    )
    assert (result["success"], result["timedOut"], result["finalValue"]) == (False, True, "locked")
    numeric = await sim.call(
        "hub_get_device_attribute",
        {
            "deviceId": str(dev.id),
            "attribute": "lock",
            "expectedValue": 5,
            "comparator": "gt",
            "timeoutMs": 20,
        },
    )
    assert numeric["nonNumericAttribute"] is True
    battery = await sim.call(
        "hub_get_device_attribute",
        {
            "deviceId": str(dev.id),
            "attribute": "battery",
            "expectedValues": [0, 100],
            "comparator": "between",
            "timeoutMs": 1000,
        },
    )
    assert battery["success"] is True


async def test_attribute_wait_stable_for(sim: Sim) -> None:
    """An attribute wait with stableFor succeeds once the value holds."""
    dev = sim.hub.find(kind="lock")[0]
    result = await sim.call(
        "hub_get_device_attribute",
        {
            "deviceId": str(dev.id),
            "attribute": "lock",
            "expectedValue": "locked",
            "stableForMs": 20,
            "timeoutMs": 5000,
        },
    )
    assert (result["success"], result["timedOut"]) == (True, False)


async def test_multi_device_wait_any(sim: Sim) -> None:
    """A multi-device wait in any mode ends when one converges."""
    devices = sim.hub.find(kind="contact")[:2]
    sim.hub.set_attribute(devices[0].id, "contact", "open")
    sim.hub.set_attribute(devices[1].id, "contact", "closed")
    result = await sim.call(
        "hub_get_device_attribute",
        {
            "deviceIds": [str(d.id) for d in devices],
            "attribute": "contact",
            "expectedValue": "open",
            "mode": "any",
            "timeoutMs": 1000,
        },
    )
    assert result["success"] is True
    assert result["convergedCount"] == 1
    assert [r["matched"] for r in result["results"]] == [True, False]


# ---------------------------------------------------------------- commands


async def test_command_lands_after_the_reply(sim: Sim) -> None:
    """A command succeeds at once and its effect lands after the reply."""
    dev = next(d for d in sim.hub.find(kind="dimmer"))
    sim.hub.set_attribute(dev.id, "switch", "off")
    result = await sim.gw(
        "hub_manage_devices",
        "hub_call_device_command",
        {"deviceId": str(dev.id), "command": "setLevel", "parameters": ["75"], **KEY},
    )
    assert result["success"] is True
    assert result["device"] == dev.display == dev.name  # this dimmer was never labelled
    assert result["parameters"] == ["75"]
    assert result["state"]["switch"]["value"] == "off"  # snapshot before the effect
    assert EVENT_DATE.match(result["state"]["switch"]["timestamp"])
    assert dev.value("level") != 75 or dev.value("switch") == "off"
    assert sim.hub.apply_pending() == 1
    assert dev.value("level") == 75
    assert dev.value("switch") == "on"


async def test_command_parameter_conversion(sim: Sim) -> None:
    """Command parameters are converted as the drivers expect."""
    light = sim.hub.find(kind="color_light")[0]
    args = {"deviceId": str(light.id), "command": "setColor", **KEY}
    color = json.dumps({"hue": 33, "saturation": 90, "level": 40})
    assert (await sim.call("hub_call_device_command", {**args, "parameters": [color]}))["success"]
    args["command"] = "setColorTemperature"
    assert (await sim.call("hub_call_device_command", {**args, "parameters": ["3500", "60"]}))[
        "success"
    ]
    sim.hub.apply_pending()
    assert light.value("hue") == 33
    assert light.value("colorTemperature") == 3500
    assert light.value("colorMode") == "CT"
    assert light.value("level") == 60


async def test_command_errors(sim: Sim) -> None:
    """Unknown devices, commands and bad parameters are errors with the app's messages."""
    dev = sim.hub.find(kind="switch")[0]
    base = {"deviceId": str(dev.id), **KEY}
    error = await sim.error("hub_call_device_command", {**base, "command": "explode"})
    assert error["code"] == -32602
    assert "on, off" in error["message"]
    error = await sim.error(
        "hub_call_device_command", {**KEY, "deviceId": "424242", "command": "on"}
    )
    assert error["message"] == "Device not found: 424242"
    error = await sim.error("hub_call_device_command", {**base, "command": "on", "parameters": "1"})
    assert error["code"] == -32602
    # Runtime failures are results, not isError.
    body = await sim.call_raw(
        "hub_call_device_command", {**base, "command": "on", "parameters": ["1"]}
    )
    assert "isError" not in body["result"]
    assert json.loads(body["result"]["content"][0]["text"])["success"] is False
    dimmer = sim.hub.find(kind="dimmer")[0]
    bad_level = {**KEY, "deviceId": str(dimmer.id), "command": "setLevel", "parameters": ["loud"]}
    assert (await sim.call("hub_call_device_command", bad_level))["success"] is False
    sim.hub.break_device(dev.id)
    broken = await sim.call("hub_call_device_command", {**base, "command": "on"})
    assert broken["success"] is False
    assert broken["note"]
    sim.hub.break_device(dev.id, False)
    dev.disabled = True
    assert (await sim.call("hub_call_device_command", {**base, "command": "on"}))[
        "success"
    ] is False
    assert sim.hub.apply_pending() == 0


async def test_command_wait_for(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """A command with waitFor answers the awaited state."""
    sim = await make_sim(command_delay=0.01)
    lock = sim.hub.find(kind="lock")[0]
    result = await sim.call(
        "hub_call_device_command",
        {
            "deviceId": str(lock.id),
            "command": "unlock",
            "waitFor": {"attribute": "lock", "expectedValue": "unlocked", "timeoutMs": 10000},
            **KEY,
        },
    )
    assert result["waitFor"]["success"] is True
    assert result["state"]["lock"]["value"] == "unlocked"
    too_long = {"attribute": "lock", "expectedValue": "locked", "timeoutMs": 30001}
    error = await sim.error(
        "hub_call_device_command",
        {"deviceId": str(lock.id), "command": "lock", "waitFor": too_long, **KEY},
    )
    assert error["code"] == -32602


async def test_multi_stage_covers_and_garage(sim: Sim) -> None:
    """Garage doors and shades pass through their intermediate states."""
    garage = sim.hub.find(kind="garage")[0]
    await sim.call(
        "hub_call_device_command", {"deviceId": str(garage.id), "command": "open", **KEY}
    )
    sim.hub.apply_pending()
    assert (garage.value("door"), garage.value("contact")) == ("open", "open")
    door_events = [e.value for e in garage.events if e.name == "door"]
    assert door_events[-2:] == ["opening", "open"]
    shade = sim.hub.find(kind="shade")[0]
    await sim.call(
        "hub_call_device_command",
        {"deviceId": str(shade.id), "command": "setPosition", "parameters": ["40"], **KEY},
    )
    sim.hub.apply_pending()
    assert (shade.value("windowShade"), shade.value("position")) == ("partially open", 40)


async def test_batch_commands(sim: Sim) -> None:
    """Batches report sent and failed commands, partial success included."""
    switches = sim.hub.find(kind="switch")[:2]
    entries = [
        {"deviceId": str(switches[0].id), "command": "on"},
        {"deviceId": "999999", "command": "on"},
        {"deviceId": str(switches[1].id), "command": "fly"},
    ]
    result = await sim.call("hub_call_device_command", {"commands": entries, **KEY})
    assert (result["count"], result["sentCount"], result["failedCount"]) == (3, 1, 2)
    assert result["partial"] is True
    assert result["success"] is False
    assert result["failedDeviceIds"] == ["999999", str(switches[1].id)]
    assert result["results"][0] == {
        "deviceId": str(switches[0].id),
        "command": "on",
        "success": True,
        "device": switches[0].label,
    }
    assert sim.hub.apply_pending() == 1
    all_bad = await sim.call_raw("hub_call_device_command", {"commands": entries[1:], **KEY})
    assert all_bad["result"]["isError"] is True
    # The whole batch is validated before anything is sent.
    malformed = [entries[0], {"deviceId": "1"}]
    error = await sim.error("hub_call_device_command", {"commands": malformed, **KEY})
    assert error["code"] == -32602
    assert sim.hub.apply_pending() == 0
    for bad in (
        {"commands": [], **KEY},
        {"commands": [entries[0]] * 21, **KEY},
        {"commands": [entries[0]], "deviceId": "1", **KEY},
        {"commands": [entries[0]], "waitFor": {"attribute": "switch"}, **KEY},
    ):
        assert (await sim.error("hub_call_device_command", bad))["code"] == -32602


async def test_update_device(sim: Sim) -> None:
    """hub_update_device changes the label and room."""
    dev = sim.hub.find(kind="switch")[0]
    room = next(r for r in sim.hub.rooms.values() if r.id != dev.room_id)
    result = await sim.call(
        "hub_update_device",
        {"deviceId": str(dev.id), "label": "Renamed", "room": room.name.lower(), **KEY},
    )
    assert result["updated"] == ["label", "room"]
    assert result["room"] == room.name
    assert dev.id in room.device_ids
    assert (await sim.call("hub_get_device", {"deviceId": str(dev.id)}))["label"] == "Renamed"
    unassigned = await sim.call("hub_update_device", {"deviceId": str(dev.id), "room": "", **KEY})
    assert unassigned["room"] is None
    for bad in (
        {"deviceId": str(dev.id), **KEY},
        {"deviceId": str(dev.id), "room": "Moon Base", **KEY},
        {"deviceId": str(dev.id), "preferences": {"x": 1}, **KEY},
    ):
        assert (await sim.error("hub_update_device", bad))["code"] == -32602


# ---------------------------------------------------------------- safety gates


async def test_best_practice_key_gate(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Write tools without the best-practice key are refused."""
    sim = await make_sim()
    dev = _first(sim, "switch")
    error = await sim.error("hub_call_device_command", {"deviceId": dev, "command": "on"})
    assert error["code"] == -32602
    assert "bestPracticeKey" in error["message"]
    error = await sim.error(
        "hub_manage_devices",
        {"tool": "hub_call_device_command", "args": {"deviceId": dev, "command": "on"}},
    )
    assert error["code"] == -32602
    outside = {"tool": "hub_call_device_command", "args": {"deviceId": dev, "command": "on"}}
    assert (await sim.error("hub_manage_devices", {**outside, **KEY}))["code"] == -32602
    inside = {"tool": "hub_call_device_command", "args": {"deviceId": dev, "command": "on", **KEY}}
    assert (await sim.call("hub_manage_devices", inside))["success"] is True
    wrong = {"deviceId": dev, "command": "on", "bestPracticeKey": "nope"}
    assert (await sim.error("hub_call_device_command", wrong))["code"] == -32602
    guide = await sim.call("hub_get_tool_guide", {"section": "best_practices"})
    assert BEST_PRACTICE_KEY in guide["content"]
    open_gate = await make_sim(best_practice_gate=False)
    result = await open_gate.call("hub_call_device_command", {"deviceId": dev, "command": "on"})
    assert result["success"] is True


async def test_write_cap(sim: Sim) -> None:
    """Concurrent writes above the cap are refused as the app does."""
    hub = sim.hub
    hub.write_hold = asyncio.Event()
    dev = _first(sim, "switch")
    args = {"deviceId": dev, "command": "on", **KEY}
    first = asyncio.create_task(sim.call("hub_call_device_command", args))
    second = asyncio.create_task(sim.call("hub_set_hsm", {"armCommand": "armAway", **KEY}))
    await hub.wait_writes_in_flight(2)
    third = await sim.call_raw("hub_call_device_command", args)
    assert third["result"]["isError"] is True
    # hubitat-mcp-server.groovy _writeCapacityRefusalLocked
    refusal = json.loads(third["result"]["content"][0]["text"])
    assert refusal["success"] is False
    assert refusal["isError"] is True
    assert refusal["status"] == "too_many_writes_in_flight"
    assert refusal["limit"] == 2
    assert [a["tool"] for a in refusal["active"]] == ["hub_call_device_command", "hub_set_hsm"]
    assert "Nothing was run" in refusal["note"]
    assert (await sim.call("hub_list_modes"))["currentMode"] == "Day"  # reads still flow
    hub.write_hold.set()
    assert (await first)["success"] is True
    assert (await second)["success"] is True
    assert hub.writes_in_flight == 0


async def test_destructive_tier(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Destructive tools ask for confirm and a recent backup."""
    sim = await make_sim(backup_age_hours=None)
    error = await sim.error("hub_create_room", {"name": "Attic", **KEY})
    assert "confirm" in error["message"]
    error = await sim.error("hub_create_room", {"name": "Attic", "confirm": True, **KEY})
    assert "backup" in error["message"]
    assert (await sim.error("hub_create_backup", KEY))["code"] == -32602
    backup = await sim.call("hub_create_backup", {"confirm": True, **KEY})
    assert backup["success"] is True
    room = await sim.call("hub_create_room", {"name": "Attic", "confirm": True, **KEY})
    assert room["room"]["name"] == "Attic"
    sim.clock.advance(25 * 3600)
    error = await sim.error("hub_reboot", {"confirm": True, **KEY})
    assert "backup" in error["message"]
    await sim.call("hub_create_backup", {"confirm": True, **KEY})
    assert (await sim.call("hub_reboot", {"confirm": True, **KEY}))["success"] is True
    assert sim.hub.admin_calls == [("hub_reboot", {"confirm": True})]


async def test_size_guards(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """Answers over the size limit are truncated with the app's markers."""
    sim = await make_sim(devices=1000)
    big = await sim.call("hub_list_devices", {"format": "detailed", "limit": 1000})
    assert big["response_too_large"] is True
    assert big["truncated"] is True
    assert big["estimatedBytes"] > big["sizeLimitBytes"] == 120_000
    assert big["tool"] == "hub_list_devices"
    assert big["suggestion"]
    # Each result fits (the guard measures the whole wire response of one call, escaping
    # included: _renderToolResult); three of them in one batch do not (the 124,000 guard).
    one_call = {"name": "hub_list_devices", "arguments": {"format": "detailed", "limit": 100}}
    single = await sim.call_raw("hub_list_devices", one_call["arguments"])
    assert "response_too_large" not in single["result"]["content"][0]["text"]
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": one_call} for i in range(3)
    ]
    response = await sim.post(batch)
    body = await response.json()
    assert body["error"]["code"] == -32603
    assert body["error"]["message"] == "Response too large"


async def test_structured_content_switch(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """structuredContent, when on, equals the text content."""
    sim = await make_sim(structured_content=True)
    body = await sim.call_raw("hub_list_modes")
    result = body["result"]
    assert result["structuredContent"] == json.loads(result["content"][0]["text"])


# ---------------------------------------------------------------- events


async def test_device_events_recent_and_history(sim: Sim) -> None:
    """Device events: recent ones and history with the app's date format."""
    hub = sim.hub
    dev = hub.find(kind="motion")[0]
    for i in range(12):
        sim.clock.advance(60)
        hub.set_attribute(dev.id, "motion", "active" if i % 2 == 0 else "inactive")
    recent = await sim.call("hub_list_device_events", {"deviceId": str(dev.id)})
    assert recent["count"] == 10
    assert recent["device"] == dev.label
    dates = [e["date"] for e in recent["events"]]
    assert all(EVENT_DATE.match(d) for d in dates)
    assert dates == sorted(dates, reverse=True)  # newest first
    event = recent["events"][0]
    assert set(event) == {"name", "value", "unit", "description", "date", "isStateChange"}
    assert event["value"] == "inactive"
    newest = dates[0]
    assert (await sim.call("hub_list_device_events", {"deviceId": str(dev.id), "since": newest}))[
        "count"
    ] == 0
    sim.clock.advance(1)
    hub.set_attribute(dev.id, "temperature", 80.5)
    after = await sim.call("hub_list_device_events", {"deviceId": str(dev.id), "since": newest})
    assert [(e["name"], e["value"], e["unit"]) for e in after["events"]] == [
        ("temperature", "80.5", "°F")
    ]
    window = await sim.call("hub_list_device_events", {"deviceId": str(dev.id), "hoursBack": 1})
    hour_ago = hub.now() - timedelta(hours=1)
    assert window["count"] == sum(1 for e in dev.events if e.date >= hour_ago) >= 12
    only = await sim.call(
        "hub_list_device_events", {"deviceId": str(dev.id), "attribute": "motion", "limit": 500}
    )
    assert {e["name"] for e in only["events"]} == {"motion"}
    assert only["count"] >= 12
    # The device branch caps eventsSince at `limit` before the attribute filter: the newest
    # event is the temperature, so a limit of one finds no motion among it.
    capped = await sim.call(
        "hub_list_device_events", {"deviceId": str(dev.id), "attribute": "motion", "limit": 1}
    )
    assert capped["count"] == 0
    # toolGetDeviceHistory clamps rather than refuses: at most 168 hours and 500 events.
    clamped = await sim.call(
        "hub_list_device_events", {"deviceId": str(dev.id), "hoursBack": 169, "limit": 501}
    )
    assert clamped["count"] >= window["count"]
    for bad in (
        {"deviceId": str(dev.id), "since": "soon"},
        {"deviceId": "555555"},
    ):
        assert (await sim.error("hub_list_device_events", bad))["code"] == -32602


async def test_location_events_and_modes(sim: Sim) -> None:
    """Location events and modes: current mode, list and activation."""
    modes = await sim.call("hub_list_modes")
    assert modes["currentMode"] == "Day"
    assert modes["modes"][0] == {"id": "1", "name": "Day", "icon": None}
    sim.clock.advance(5)
    result = await sim.call("hub_manage_mode", {"action": "activate", "mode": "night", **KEY})
    assert result["success"] is True
    assert (result["previousMode"], result["newMode"]) == ("Day", "Night")
    events = await sim.call("hub_list_device_events", {"hoursBack": 1})
    assert events["events"][0]["name"] == "mode"
    assert events["events"][0]["value"] == "Night"
    error = await sim.error("hub_manage_mode", {"action": "activate", "mode": "Party", **KEY})
    assert "Available" in error["message"]
    # toolManageMode: create and rename need no confirm; delete does.
    created = await sim.call("hub_manage_mode", {"action": "create", "name": "Party", **KEY})
    assert created["success"] is True
    delete = {"action": "delete", "mode": "Party", **KEY}
    assert (await sim.error("hub_manage_mode", delete))["code"] == -32602
    assert (await sim.call("hub_manage_mode", {**delete, "confirm": True}))["success"] is True
    assert (await sim.error("hub_manage_mode", {"action": "dance", **KEY}))["code"] == -32602


async def test_hsm_is_asynchronous(sim: Sim) -> None:
    """HSM arms asynchronously and lists its commands."""
    status = await sim.call("hub_get_hsm_status")
    assert status["status"] == "disarmed"
    assert status["alert"] is None
    assert "armAway" in status["armCommands"]
    result = await sim.call("hub_set_hsm", {"armCommand": "armAway", **KEY})
    assert result["previousStatus"] == "disarmed"
    assert result["newMode"] == "armAway"
    assert (await sim.call("hub_get_hsm_status"))["status"] == "disarmed"
    sim.hub.apply_pending()
    assert (await sim.call("hub_get_hsm_status"))["status"] == "armedAway"
    values = [e.value for e in sim.hub.location_events if e.name == "hsmStatus"]
    assert values == ["armingAway", "armedAway"]
    sim.hub.trigger_hsm_alert("intrusion")
    assert (await sim.call("hub_get_hsm_status"))["alert"] == "intrusion"
    assert (await sim.error("hub_set_hsm", {"armCommand": "panic", **KEY}))["code"] == -32602


# ------------------------------------------------ rooms, info, virtual devices, rules


async def test_rooms(sim: Sim) -> None:
    """Rooms list with ids as strings and device ids as numbers."""
    rooms = await sim.call("hub_list_rooms")
    assert rooms["count"] == len(sim.hub.rooms)
    room = next(r for r in rooms["rooms"] if r["deviceCount"])
    assert isinstance(room["id"], str)
    assert all(isinstance(i, int) for i in room["deviceIds"])
    detail = await sim.gw("hub_read_rooms", "hub_get_room", {"room": room["name"].lower()})
    assert detail["id"] == room["id"]
    assert {d["id"] for d in detail["devices"]} <= {str(i) for i in room["deviceIds"]}
    assert (await sim.error("hub_get_room", {"room": "Nowhere"}))["code"] == -32602


async def test_hub_identity(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """hub_get_info names the hub by zigbeeId and name."""
    # libraries/mcp-system-lib.groovy toolGetHubInfo: flat, zigbeeId as the hub gives it.
    sim = await make_sim(hub_id="hub-uid-1", hub_name="Cabin")
    info = await sim.call("hub_get_info")
    assert "hub" not in info
    assert info["zigbeeId"] == "hub-uid-1"
    assert info["name"] == "Cabin"
    assert info["firmwareVersion"]
    assert info["mcpServerVersion"]
    assert info["temperatureScale"] == "F"
    assert info["timeZone"] == "America/Chicago"
    assert info["mcpDeviceCount"] == 40
    assert isinstance(info["freeMemoryKB"], str)
    a = (await (await make_sim(seed=5)).call("hub_get_info"))["zigbeeId"]
    b = (await (await make_sim(seed=5)).call("hub_get_info"))["zigbeeId"]
    c = (await (await make_sim(seed=6)).call("hub_get_info"))["zigbeeId"]
    assert a == b != c
    for missing in (None, "unavailable"):
        other = await make_sim(zigbee_id=missing)
        assert (await other.call("hub_get_info"))["zigbeeId"] == missing


async def test_virtual_devices(sim: Sim) -> None:
    """Virtual devices are created and removed with the app's fields."""
    created = await sim.call(
        "hub_manage_virtual_device",
        {
            "action": "create",
            "deviceType": "Virtual Switch",
            "deviceLabel": "Test",
            "confirm": True,
            **KEY,
        },
    )
    device = created["device"]
    assert device["driverType"] == device["typeName"] == "Virtual Switch"
    assert device["driverNamespace"] == "hubitat"
    assert device["deviceNetworkId"].startswith("mcp-virtual-")
    assert {"name", "value"} == set(device["attributes"][0])
    listed = await sim.call("hub_list_devices", {"filter": "virtual"})
    assert listed["count"] == 1
    assert listed["devices"][0]["currentStates"] == {
        "switch": sim.hub.devices[int(device["id"])].value("switch")
    }
    summary = await sim.call("hub_list_devices", {"labelFilter": "Test"})
    assert summary["devices"][0]["mcpManaged"] is True
    for bad in (
        {
            "action": "create",
            "deviceType": "Virtual Switch",
            "customDriver": {"namespace": "a", "name": "b"},
        },
        {"action": "create"},
        {"action": "create", "deviceType": "Virtual Toaster"},
        {"action": "create", "customDriver": {"namespace": " ", "name": "x"}},
        {"action": "create", "customDriver": {"namespace": "acme", "name": "Nope"}},
        {"action": "delete", "deviceId": _first(sim, "lock")},
    ):
        assert (await sim.error("hub_manage_virtual_device", {**bad, "confirm": True, **KEY}))[
            "code"
        ] == -32602
    deleted = await sim.call(
        "hub_manage_virtual_device",
        {"action": "delete", "deviceId": device["id"], "confirm": True, **KEY},
    )
    assert deleted["deviceLabel"] == "Test"
    assert (await sim.call("hub_list_devices", {"filter": "virtual"}))["count"] == 0


async def test_native_rules(sim: Sim) -> None:
    """Native rules list without a cursor; a paused rule skips its run, an active one runs."""
    # libraries/mcp-native-rules-lib.groovy toolListRmRules / toolRunRmRule.
    rules = await sim.gw("hub_read_rules", "hub_list_rules", {})
    assert {r["name"] for r in rules["rules"]} >= {"Goodnight", "Vacation Lights"}
    assert "nextCursor" not in rules
    assert rules["count"] == len(sim.hub.rules)
    goodnight = next(r for r in rules["rules"] if r["name"] == "Goodnight")
    assert isinstance(goodnight["id"], int)
    assert goodnight["status"] == "active"
    paused = next(r for r in rules["rules"] if r["paused"])
    assert paused["status"] == "paused"
    gateway = "hub_manage_native_rules_and_apps"
    before = sim.hub.rules[paused["id"]].run_count
    skipped = await sim.gw(gateway, "hub_call_rule", {"ruleId": paused["id"], **KEY})
    assert skipped["success"] is True
    assert sim.hub.rules[paused["id"]].run_count == before
    ran = await sim.gw(
        gateway, "hub_call_rule", {"ruleId": goodnight["id"], "action": "actions", **KEY}
    )
    assert ran == {
        "success": True,
        "ruleIds": [goodnight["id"]],
        "rmAction": "runRuleAct",
        "ruleId": goodnight["id"],
    }
    assert sim.hub.apply_pending() > 0
    targets = sim.hub.rules[int(goodnight["id"])].actions
    assert all(sim.hub.devices[t[0]].value("switch") == "off" for t in targets if t[1] == "off")
    # The enum the app refuses: what older guesses sent.
    for action in ("runActions", "evaluate"):
        error = await sim.error(
            "hub_call_rule", {"ruleId": goodnight["id"], "action": action, **KEY}
        )
        assert error["code"] == -32602
    stopped = await sim.call("hub_call_rule", {"ruleId": goodnight["id"], "action": "stop", **KEY})
    assert stopped["rmAction"] == "stopRule toggle"
    assert sim.hub.rules[goodnight["id"]].stopped is True
    resumed = await sim.call(
        "hub_set_rule_paused", {"ruleId": paused["id"], "paused": False, **KEY}
    )
    assert resumed["paused"] is False
    assert (await sim.error("hub_call_rule", {"ruleId": "9", **KEY}))["code"] == -32602
    custom = await sim.call("hub_get_custom_rule")
    assert custom["count"] == 1
    rule_id = custom["rules"][0]["id"]
    # The engine is off by default (read-only mode): only `enabled` may change, and the write
    # key the gate asks for counts as a structural field there (toolUpdateRule).
    refused = await sim.error(
        "hub_update_custom_rule", {"ruleId": rule_id, "enabled": False, **KEY}
    )
    assert refused["code"] == -32602
    assert "Structural fields provided: bestPracticeKey" in refused["message"]
    sim.client.server.app[TOOLS].engine.enabled = True
    updated = await sim.call("hub_update_custom_rule", {"ruleId": rule_id, "enabled": False, **KEY})
    assert updated["success"] is True
    assert (await sim.call("hub_get_custom_rule", {"ruleId": rule_id}))["enabled"] is False


async def test_other_tools_answer_plausibly(sim: Sim) -> None:
    """Files, logs and the other tools answer plausibly and refuse bad input."""
    files = await sim.gw("hub_read_files", "hub_list_files", {})
    assert files["count"] == len(sim.hub.files)
    assert (await sim.error("hub_read_file", {"fileName": "../etc"}))["code"] == -32602
    logs = await sim.call("hub_get_logs", {"limit": 5})
    assert logs["count"] == 5
    variables = await sim.call("hub_list_variables")
    assert variables["count"] == 3
    await sim.call("hub_set_variable", {"name": "guestMode", "value": True, **KEY})
    location = await sim.call("hub_list_device_events", {})
    assert location["events"][0]["name"] == "variable:guestMode"
    assert (await sim.call("hub_get_jobs"))["count"] == 0


async def test_resources(sim: Sim) -> None:
    """Resources list and read the context and the guide with its key."""
    _, listed = await sim.rpc("resources/list")
    uris = [r["uri"] for r in listed["result"]["resources"]]
    assert "hubitat://context" in uris
    _, read = await sim.rpc("resources/read", {"uri": "hubitat://guide/best_practices"})
    assert BEST_PRACTICE_KEY in read["result"]["contents"][0]["text"]
    _, context = await sim.rpc("resources/read", {"uri": "hubitat://context"})
    assert json.loads(context["result"]["contents"][0]["text"])["deviceCount"] == 40
    _, missing = await sim.rpc("resources/read", {"uri": "hubitat://nope"})
    assert missing["error"]["code"] == -32002
    assert missing["error"]["data"] == {"uri": "hubitat://nope"}
    _, templates = await sim.rpc("resources/templates/list")
    assert templates["result"]["resourceTemplates"] == []


# ---------------------------------------------------------------- population and injection


def test_population_is_deterministic_and_varied() -> None:
    """The population is deterministic per seed and varied between seeds."""
    clock = SimClock()
    clock.set(NOW)
    first, again = Hub(clock, devices=40, seed=3), Hub(clock, devices=40, seed=3)
    assert [(d.id, d.label) for d in first.devices.values()] == [
        (d.id, d.label) for d in again.devices.values()
    ]
    other = Hub(clock, devices=40, seed=4)
    assert [d.label for d in other.devices.values()] != [d.label for d in first.devices.values()]
    kinds = {d.kind for d in first.visible_devices()}
    assert kinds >= {
        "color_light",
        "ct_light",
        "dimmer",
        "switch",
        "outlet",
        "contact",
        "motion",
        "water",
        "presence",
        "smoke",
        "climate_sensor",
        "lock",
        "shade",
        "garage",
        "fan",
        "thermostat",
        "valve",
        "button",
    }
    assert len(first.visible_devices()) == 40
    big = Hub(clock, devices=1000, seed=1)
    assert len(big.visible_devices()) == 1000
    labels = Counter(d.label for d in big.devices.values())
    assert labels.most_common(1) == [("Lamp", 2)]  # the only twin labels
    assert labels[""] == 1


def test_random_activity_changes_devices() -> None:
    """Random activity changes devices and shows in changedSince."""
    clock = SimClock()
    clock.set(NOW)
    hub = Hub(clock, devices=40, command_delay=None)
    before = int(NOW.timestamp() * 1000)
    clock.advance(1)
    events = hub.random_activity(5)
    assert len(events) == 5
    assert 1 <= len(hub.changed_since(before)) <= 5


def test_utc_hub_reports_z() -> None:
    """A hub in UTC reports Z and +0000 times."""
    clock = SimClock()
    clock.set(NOW)
    hub = Hub(clock, devices=5, timezone="UTC")
    from simulators.hubitat.hub import event_time, hub_time

    assert hub_time(NOW, hub.tz) == "2026-11-29T18:00:00Z"
    assert event_time(NOW, hub.tz) == "2026-11-29T18:00:00.000+0000"


async def test_external_changes(sim: Sim) -> None:
    """External changes make events; every button press is one."""
    hub = sim.hub
    button = hub.find(kind="button")[0]
    assert hub.set_attribute(button.id, "pushed", 1) is not None
    assert hub.set_attribute(button.id, "pushed", 1) is not None  # every press is an event
    new = hub.pair_device("outlet", "Aquarium", "Den")
    assert (await sim.call("hub_get_device", {"deviceId": str(new.id)}))["room"] == "Den"
    hub.remove_device(new.id)
    assert (await sim.error("hub_get_device", {"deviceId": str(new.id)}))["code"] == -32602
    client = sim.client
    response = await client.post(
        "/_sim/hubitat/attribute",
        json={"deviceId": button.id, "attribute": "battery", "value": 5},
    )
    assert (await response.json())["event"] is True
    assert button.value("battery") == 5
    paired = await (
        await client.post(
            "/_sim/hubitat/pair", json={"kind": "lock", "label": "Shed Lock", "room": "Garage"}
        )
    ).json()
    assert hub.devices[int(paired["deviceId"])].label == "Shed Lock"
    await client.post("/_sim/hubitat/remove", json={"deviceId": paired["deviceId"]})
    assert int(paired["deviceId"]) not in hub.devices
    await client.post("/_sim/hubitat/mode", json={"mode": "Away"})
    await client.post("/_sim/hubitat/hsm", json={"status": "armedHome"})
    assert hub.hsm_status == "armedHome"
    await client.post("/_sim/hubitat/hsm", json={"status": "disarmed"})
    await client.post("/_sim/hubitat/hsm_alert", json={"alert": "water"})
    await client.post(
        "/_sim/hubitat/button", json={"deviceId": button.id, "button": 2, "action": "hold"}
    )
    assert button.value("held") == 2
    await client.post("/_sim/hubitat/advance", json={"seconds": 60})
    assert hub.now() == NOW + timedelta(seconds=60)
    await sim.call(
        "hub_call_device_command", {"deviceId": _first(sim, "switch"), "command": "on", **KEY}
    )
    assert (await (await client.post("/_sim/hubitat/apply", json={})).json())["applied"] == 1
    activity = await client.post("/_sim/hubitat/activity", json={"count": 3})
    assert (await activity.json())["events"] == 3
    state = await (await client.get("/_sim/hubitat/state")).json()
    assert (state["mode"], state["hsm"]) == ("Away", "disarmed")
    assert hub.hsm_alert == "water"
    bad = await client.post("/_sim/hubitat/attribute", json={"deviceId": button.id})
    assert bad.status == 400
    assert (await client.post("/_sim/hubitat/nope", json={})).status == 404


async def test_real_delay_applies_commands(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """A real delay applies commands later; a wait times out meanwhile."""
    sim = await make_sim(command_delay=0.01)
    dev = next(d for d in sim.hub.find(kind="switch") if d.value("switch") == "off")
    result = await sim.call(
        "hub_get_device_attribute",
        {"deviceId": str(dev.id), "attribute": "switch", "expectedValue": "on", "timeoutMs": 10},
    )
    assert result["timedOut"] is True
    result = await sim.call(
        "hub_call_device_command", {"deviceId": str(dev.id), "command": "on", **KEY}
    )
    assert result["state"]["switch"]["value"] == "off"
    while dev.value("switch") != "on":
        await sim.hub.wait_change(1)
    assert dev.last_activity is not None


# ---------------------------------------------------------------- faults and stats


async def test_fault_switches(sim: Sim) -> None:
    """The fault switches make errors, malformed replies and outages."""
    faults = sim.client.server.app[FAULTS]
    faults.latency = 0.01
    assert (await sim.rpc("ping"))[0] == 200
    faults.reset()
    faults.error_rate = 1.0
    assert (await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})).status == 500
    faults.reset()
    faults.malformed = True
    response = await sim.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    with pytest.raises(json.JSONDecodeError):
        json.loads(await response.text())
    faults.reset()
    faults.hang = True
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(sim.rpc("ping"), 0.05)
    faults.reset()
    faults.offline = True
    with pytest.raises(aiohttp.ClientError):
        await sim.rpc("ping")
    faults.reset()
    control = await sim.client.post("/_sim/faults", json={"revoked": True})
    assert (await control.json())["revoked"] is True
    assert (await sim.rpc("ping"))[0] == 401


async def test_stats_count_tools(sim: Sim) -> None:
    """The stats count tools, methods and bytes."""
    stats = sim.client.server.app[STATS]
    stats.reset()
    await sim.call("hub_read_devices", {"tool": "hub_list_devices", "args": {}})
    await sim.call("hub_list_modes")
    assert stats.tools["hub_read_devices"] == 1
    assert stats.methods["tools/call"] == 2
    assert stats.bytes_out > 1000


# ---------------------------------------------------------------- official SDK peer


async def test_official_sdk_client_talks_to_it(sim: Sim) -> None:
    """The official SDK client talks to the simulator."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    url = str(sim.client.make_url(sim.path).with_query(access_token=sim.token))
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.serverInfo.name == "hubitat-mcp-rule-server"
        assert len((await session.list_tools()).tools) == 36
        result = await session.call_tool(
            "hub_read_devices", {"tool": "hub_list_devices", "args": {"limit": 2}}
        )
        assert result.isError is False
        assert json.loads(result.content[0].text)["count"] == 2


# ---------------------------------------------------------------- standalone


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_standalone_prints_the_endpoint() -> None:
    """The standalone server prints its endpoint with the token."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "simulators.hubitat", "--port", str(port), "--devices", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.endswith(f"http://127.0.0.1:{port}/apps/api/42/mcp?access_token=sim-token")
    finally:
        process.terminate()
        process.wait(timeout=10)


# ------------------------------------------------ 2026-07-28 multi round-trip requests


async def _modern(
    sim: Sim, name: str, arguments: dict[str, Any], state: str | None = None
) -> dict[str, Any]:
    """A tools/call in the 2026-07-28 era; the JSON-RPC reply."""
    sim._id += 1
    params: dict[str, Any] = {
        "name": name,
        "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    }
    if state is not None:
        params["requestState"] = state
    message = {"jsonrpc": "2.0", "id": sim._id, "method": "tools/call", "params": params}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
    response = await sim.post(message, headers=headers)
    return await response.json()


async def test_multi_round_trip_leases_a_write_slot(sim: Sim) -> None:
    """Multi round-trip writes lease a write slot across their rounds."""
    # hubitat-mcp-server.groovy handleToolsCall / _mrtrReserve / _mrtrClaim.
    rule = {"name": "Porch", "definition": {}, "confirm": True, **KEY}
    zero = (await _modern(sim, "hub_set_rule", rule))["result"]
    assert zero["resultType"] == "input_required"
    assert "content" not in zero
    state = zero["requestState"]
    assert sim.hub.admin_calls == []  # round zero runs nothing
    # An identical replay of round zero rejoins the same lease.
    again = (await _modern(sim, "hub_set_rule", rule))["result"]
    assert again["requestState"] == state
    assert again["rejoined"] is True
    driver = {"type": "driver", "id": "7", "confirm": True, **KEY}
    other = await _modern(sim, "hub_manage_code", {"tool": "hub_delete_item", "args": driver})
    assert other["result"]["resultType"] == "input_required"
    # Both slots are leased: a third write is refused before it runs.
    dev = _first(sim, "switch")
    third = await _modern(sim, "hub_call_device_command", {"deviceId": dev, "command": "on", **KEY})
    assert third["result"]["isError"] is True
    refused = json.loads(third["result"]["content"][0]["text"])
    assert refused["status"] == "too_many_writes_in_flight"
    assert {a["transport"] for a in refused["active"]} == {"mrtr"}
    # The state is bound to the tool and its exact arguments.
    changed = await _modern(sim, "hub_set_rule", {**rule, "name": "Back"}, state)
    assert changed["error"]["code"] == -32602
    assert "does not match" in changed["error"]["message"]
    done = (await _modern(sim, "hub_set_rule", rule, state))["result"]
    assert done["resultType"] == "complete"
    assert json.loads(done["content"][0]["text"])["success"] is True
    assert [name for name, _ in sim.hub.admin_calls] == ["hub_set_rule"]
    # The terminal result replays without running again; the slot is free.
    replay = (await _modern(sim, "hub_set_rule", rule, state))["result"]
    assert replay["content"] == done["content"]
    assert len(sim.hub.admin_calls) == 1
    ok = await _modern(sim, "hub_call_device_command", {"deviceId": dev, "command": "on", **KEY})
    assert "isError" not in ok["result"]
    # An abandoned lease holds its slot for 3 minutes (_writeLeaseMs), then expires.
    sim.clock.advance(181)
    state2 = other["result"]["requestState"]
    late = await _modern(
        sim, "hub_manage_code", {"tool": "hub_delete_item", "args": driver}, state2
    )
    assert "Invalid or expired requestState" in late["error"]["message"]


async def test_multi_round_trip_refusals(sim: Sim) -> None:
    """Multi round-trip refuses bad arguments, unknown state and other clients' state."""
    rule = {"name": "Porch", "definition": {}, "confirm": True}
    # The key is checked before anything is reserved (_mrtrValidateAccess).
    assert (await _modern(sim, "hub_set_rule", rule))["error"]["code"] == -32602
    # A validation failure at the continuation abandons the record and frees the slot.
    unconfirmed = {"name": "Porch", "definition": {}, **KEY}
    state = (await _modern(sim, "hub_set_rule", unconfirmed))["result"]["requestState"]
    failed = await _modern(sim, "hub_set_rule", unconfirmed, state)
    assert failed["error"]["code"] == -32602
    assert sim.client.server.app[TOOLS].active_writes() == []
    assert (await _modern(sim, "hub_set_rule", unconfirmed, state))["error"]["code"] == -32602
    # requestState needs the modern era, and only eligible calls take one.
    legacy = await sim.call("hub_set_rule", {**rule, **KEY})
    assert legacy["success"] is True  # the legacy path runs in one request
    _, body = await sim.rpc(
        "tools/call", {"name": "hub_set_rule", "arguments": rule, "requestState": "mrtr-x"}
    )
    assert "requires MCP-Protocol-Version" in body["error"]["message"]
    single = {"ruleId": 101, "action": "stop", **KEY}
    direct = (await _modern(sim, "hub_call_rule", single))["result"]
    assert direct["resultType"] == "complete"
    multi = {"ruleId": [101, 102], "action": "stop", **KEY}
    assert (await _modern(sim, "hub_call_rule", multi))["result"]["resultType"] == "input_required"
    assert (await _modern(sim, "hub_call_rule", single, "mrtr-x"))["error"]["code"] == -32602


# ---------------------------------------------------------------- failing as upstream fails


async def test_the_newest_release(sim: Sim) -> None:
    """The app's newest release is 4.0.2 (a385ffd1): serverInfo and hub_get_info say so."""
    status, body = await sim.rpc("initialize", {"protocolVersion": "2025-11-25"})
    assert status == 200
    assert body["result"]["serverInfo"]["version"] == "4.0.2"
    assert (await sim.call("hub_get_info"))["mcpServerVersion"] == "4.0.2"


async def test_rule_machine_not_answering(sim: Sim) -> None:
    """mcp-native-rules-lib.groovy toolListRmRules: both RMUtils calls throwing (not the
    class-missing of a hub without Rule Machine) is success: false with an empty list."""
    sim.hub.rm_fails = True
    for args in ({}, {"cursor": ""}):
        rules = await sim.gw("hub_read_rules", "hub_list_rules", args)
        assert rules["rules"] == []
        assert rules["count"] == 0
        assert rules["success"] is False
        assert rules["error"].startswith("RMUtils calls failed: v4=")
        assert " v5=" in rules["error"]
        assert rules["note"] == "Rule Machine may not be installed on this hub."
    assert "total" in rules  # paged form (a cursor given) carries the total


async def test_rule_status_unknown_without_hub_login(
    make_sim: Callable[..., Awaitable[Sim]],
) -> None:
    """_rmAnnotateRuleStatus: /hub2/appsList unreadable (Hub Security on, no login in the app)
    gives every rule status "unknown" and neither paused nor disabled, with a statusNote."""
    sim = await make_sim(hub_security_blocks=True)
    rules = await sim.gw("hub_read_rules", "hub_list_rules", {"cursor": ""})
    assert rules["rules"]
    for rule in rules["rules"]:
        assert rule["status"] == "unknown"
        assert "paused" not in rule
        assert "disabled" not in rule
    assert "Hub Security credentials" in rules["statusNote"]
    assert "success" not in rules
    sim.hub.hub_security_blocks = False
    rules = await sim.gw("hub_read_rules", "hub_list_rules", {})
    assert {rule["status"] for rule in rules["rules"]} >= {"active", "paused"}
    assert "statusNote" not in rules
    # One rule's node lacking its data: that rule alone is unknown, and no note.
    sim.hub.rule_nodes_incomplete = {101}
    rules = await sim.gw("hub_read_rules", "hub_list_rules", {})
    unknown = [rule["id"] for rule in rules["rules"] if rule["status"] == "unknown"]
    assert unknown == [101]
    assert "paused" not in next(rule for rule in rules["rules"] if rule["id"] == 101)
    assert "statusNote" not in rules


async def test_one_devices_history_failing(sim: Sim) -> None:
    """mcp-devices-lib.groovy toolGetDeviceHistory, device branch: eventsSince throwing is
    {success: false, error, device, deviceId, note}; other devices and recent-N still read."""
    first_id, second_id = (
        int(device["id"])
        for device in (await sim.gw("hub_read_devices", "hub_list_devices", {"limit": 2}))[
            "devices"
        ]
    )
    sim.hub.history_fails = {first_id}
    failed = await sim.gw(
        "hub_read_devices", "hub_list_device_events", {"deviceId": str(first_id), "since": "0"}
    )
    assert failed["success"] is False
    assert failed["error"].startswith("eventsSince not supported or failed: ")
    assert failed["deviceId"] == str(first_id)
    assert failed["device"]
    assert failed["note"]
    other = await sim.gw(
        "hub_read_devices", "hub_list_device_events", {"deviceId": str(second_id), "since": "0"}
    )
    assert "success" not in other
    assert isinstance(other["events"], list)
    # Without a window the app reads device.events (toolGetDeviceEvents), which does not fail.
    recent = await sim.gw("hub_read_devices", "hub_list_device_events", {"deviceId": first_id})
    assert "success" not in recent


async def test_disarming_leaves_cancel_as_the_last_alert(sim: Sim) -> None:
    """hub_get_hsm_status.alert is location.hsmAlert, the last alert: "cancel" after a disarm."""
    sim.hub.set_hsm_status("armedAway")
    sim.hub.trigger_hsm_alert("intrusion")
    assert (await sim.call("hub_get_hsm_status"))["alert"] == "intrusion"
    sim.hub.set_hsm_status("disarmed")
    status = await sim.call("hub_get_hsm_status")
    assert status["status"] == "disarmed"
    assert status["alert"] == "cancel"
    last = [(event.name, event.value) for event in sim.hub.location_events][-2:]
    assert set(last) == {("hsmStatus", "disarmed"), ("hsmAlert", "cancel")}


async def test_published_output_schemas(make_sim: Callable[..., Awaitable[Sim]]) -> None:
    """hubitat-mcp-server.groovy _renderToolResult with publishOutputSchemas on: core tools
    carry structuredContent, and their response_too_large comes with isError; gateways (and
    the tools behind them) neither; with the setting off, no isError either."""
    for publish in (True, False):
        sim = await make_sim(structured_content=publish, devices=1000)
        sim.hub.modes.extend(Mode(n, f"Mode {n} " + "x" * 200) for n in range(5, 700))
        body = await sim.call_raw("hub_list_modes")
        result = body["result"]
        assert json.loads(result["content"][0]["text"])["response_too_large"] is True
        assert result.get("isError", False) is publish
        assert "structuredContent" not in result
        body = await sim.call_raw(
            "hub_read_devices", {"tool": "hub_list_devices", "args": {"limit": 1000}}
        )
        result = body["result"]
        assert json.loads(result["content"][0]["text"])["response_too_large"] is True
        assert "isError" not in result
        small = (await sim.call_raw("hub_read_rooms", {"tool": "hub_list_rooms", "args": {}}))[
            "result"
        ]
        assert "structuredContent" not in small


async def test_a_tool_throwing(sim: Sim) -> None:
    """handleToolsCallLegacy's catch-all: a read whose exception nothing caught is isError with
    the plain text "Tool error: <message>" (not JSON), through a gateway or not."""
    sim.hub.tools_throw = {"hub_list_modes": "java.lang.NullPointerException"}
    for name, args in (
        ("hub_list_modes", {}),
        ("hub_read_devices", {"tool": "hub_list_devices", "args": {}}),
    ):
        result = (await sim.call_raw(name, args))["result"]
        if name == "hub_list_modes":
            assert result["content"] == [
                {"type": "text", "text": "Tool error: java.lang.NullPointerException"}
            ]
            assert result["isError"] is True
            assert "structuredContent" not in result
        else:
            assert "isError" not in result
    sim.hub.tools_throw = {"hub_list_devices": "boom"}
    result = (await sim.call_raw("hub_read_devices", {"tool": "hub_list_devices", "args": {}}))[
        "result"
    ]
    assert result["content"][0]["text"] == "Tool error: boom"
    assert result["isError"] is True
