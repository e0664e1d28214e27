"""The gateway over the three real backends, each talking to its simulator on 127.0.0.1.

Pins the budget (an admin's whole tools/list ≤ 12 KB with one entry of each backend while
every backend tool stays reachable) and a few calls end to end through the HTTP view.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from itertools import pairwise
import json
from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.backends.homecast.const import (
    AUTH_TOKEN,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    KIND as HOMECAST_KIND,
)
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_TOKEN as HUBITAT_TOKEN,
    CONF_URL as HUBITAT_URL,
    KIND as HUBITAT_KIND,
)
from custom_components.mcp_gateway.backends.robine_wake.const import (
    CONF_URL as ROBINE_URL,
    KIND as ROBINE_WAKE_KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.gateway.catalog.schemas.subset import schema_problems
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext
from simulators.base import SimClock
from simulators.homecast import HOMECAST, create_app as homecast_app
from simulators.hubitat import HUB, create_app as hubitat_app, mcp_path
from simulators.hubitat.catalog import GATEWAYS as HUBITAT_GATEWAYS, TOOLS as HUBITAT_TOOLS
from simulators.robine_wake import create_app as robine_app
from tests.results import result_data

BUDGET_BYTES = 12 * 1024
URL = "/api/mcp_gateway"
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@pytest.fixture(autouse=True)
def _loopback_sockets(socket_enabled: None) -> None:
    """Real HTTP to the simulators on 127.0.0.1."""


@pytest.fixture
async def sims() -> AsyncGenerator[dict[str, TestServer]]:
    """One simulator of each backend."""
    clock = SimClock()
    servers = {
        HUBITAT_KIND: TestServer(
            hubitat_app(hub_id="hub-0001", devices=24, command_delay=0), host="127.0.0.1"
        ),
        HOMECAST_KIND: TestServer(homecast_app(write_delay=0), host="127.0.0.1"),
        ROBINE_WAKE_KIND: TestServer(
            robine_app(clock=clock, command_delay=0, device_id="rw-0123456789ab"),
            host="127.0.0.1",
        ),
    }
    for server in servers.values():
        await server.start_server()
    yield servers
    for server in servers.values():
        await server.close()


@pytest.fixture
async def entries(hass: HomeAssistant, sims: dict[str, TestServer]) -> dict[str, MockConfigEntry]:
    """One loaded entry per backend, and HA's HTTP server with the gateway."""
    assert await async_setup_component(hass, "http", {"http": {}})
    hubitat = sims[HUBITAT_KIND]
    homecast = sims[HOMECAST_KIND]
    homes = [home.uuid.lower() for home in homecast.app[HOMECAST].homes]
    made = {
        HUBITAT_KIND: MockConfigEntry(
            domain=DOMAIN,
            title="Home Hub",
            unique_id=hubitat.app[HUB].hub_id,
            data={
                CONF_BACKEND: HUBITAT_KIND,
                HUBITAT_URL: str(hubitat.make_url(mcp_path("42"))),
                HUBITAT_TOKEN: "sim-token",
            },
        ),
        HOMECAST_KIND: MockConfigEntry(
            domain=DOMAIN,
            title="Homecast",
            unique_id=min(homes),
            data={
                CONF_BACKEND: HOMECAST_KIND,
                "url": str(homecast.make_url("/mcp")),
                CONF_AUTH_TYPE: AUTH_TOKEN,
                CONF_ACCESS_TOKEN: "hc_test_token",
                CONF_HOMES: homes,
            },
        ),
        ROBINE_WAKE_KIND: MockConfigEntry(
            domain=DOMAIN,
            title="Bedroom clock",
            unique_id="rw-0123456789ab",
            data={
                CONF_BACKEND: ROBINE_WAKE_KIND,
                ROBINE_URL: str(sims[ROBINE_WAKE_KIND].make_url("/mcp")),
            },
        ),
    }
    for entry in made.values():
        entry.add_to_hass(hass)
        assert await hass.config_entries.async_setup(entry.entry_id), entry.title
        await hass.async_block_till_done()
    return made


def _ctx(user: Any) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


async def _rpc(client: TestClient, method: str, params: dict[str, Any] | None = None) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    response = await client.post(URL, json=body, headers=HEADERS)
    assert response.status == 200, await response.text()
    return await response.json()


def listed_in(description: str) -> set[str]:
    """The tool names a gateway tool's description lists, a shared prefix written out again."""
    listing = description.rsplit("Tools", 1)[1].rstrip(".")
    if listing.startswith(", each named "):
        prefix, _, names = listing.removeprefix(', each named "').partition('" + one of: ')
        return {prefix + name for name in names.split(", ")}
    return set(listing.removeprefix(": ").split(", "))


async def test_admin_tools_list_fits_the_budget(
    hass: HomeAssistant,
    entries: dict[str, MockConfigEntry],
    hass_client: Any,
    hass_admin_user: MockUser,
) -> None:
    """≤ 12 KB for an admin over HTTP, while every backend tool is reachable by name."""
    client: TestClient = await hass_client()
    response = await client.post(
        URL,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers=HEADERS,
    )
    body = await response.read()
    assert response.status == 200
    tools = json.loads(body)["result"]["tools"]
    assert len(body) <= BUDGET_BYTES, len(body)
    gateways = {
        "hubitat_home_hub": entries[HUBITAT_KIND],
        "homecast": entries[HOMECAST_KIND],
        "robine_wake_bedroom_clock": entries[ROBINE_WAKE_KIND],
    }
    assert {tool["name"] for tool in tools} == {
        "search_tools",
        "get_state",
        "set_state",
        "get_history",
        "list_backends",
        "automations",
        *gateways,
    }
    # Every one of the hub's tools, sub-tools of its gateways included, is reachable.
    hubitat = await entries[HUBITAT_KIND].runtime_data.async_list_tools()
    assert {tool["name"] for tool in hubitat} == {tool.name for tool in HUBITAT_TOOLS}
    titles = {tool["name"]: tool["title"] for tool in tools}
    assert titles["homecast"] == "Homecast"  # the kind is not repeated when the title has it
    assert titles["robine_wake_bedroom_clock"] == "Bedroom clock (Robine Wake)"
    handler = GatewayHandler(hass)
    backends = await handler.call_tool(_ctx(hass_admin_user), "list_backends", {})
    # Every backend reports the round trip of its last poll.
    assert all(
        item["available"] and item["latency_ms"] >= 0 for item in result_data(backends)["backends"]
    ), backends
    for gateway, entry in gateways.items():
        backend_tools = await entry.runtime_data.async_list_tools()
        names = {tool["name"] for tool in backend_tools}
        assert names, gateway
        # The gateway names them all, and its catalog call returns them all with schemas.
        description = next(t["description"] for t in tools if t["name"] == gateway)
        assert listed_in(description) == names, gateway
        result = await handler.call_tool(_ctx(hass_admin_user), gateway, {})
        listed = result_data(result)["tools"]
        assert {tool["name"] for tool in listed} == names
        assert all(tool["inputSchema"]["type"] == "object" for tool in listed)
        # Flattened: none of Hubitat's 23 gateways is offered, only their sub-tools.
        assert not names & set(HUBITAT_GATEWAYS), gateway


async def test_hubitat_device_command_through_the_gateway(
    hass: HomeAssistant,
    entries: dict[str, MockConfigEntry],
    sims: dict[str, TestServer],
    hass_admin_user: MockUser,
    hass_user: MockUser,
) -> None:
    """A device command needs control of that device's entity; the write key is the runtime's."""
    entry = entries[HUBITAT_KIND]
    hub = sims[HUBITAT_KIND].app[HUB]
    switch = sorted(hub.find(kind="switch"), key=lambda d: d.id)[0]
    runtime = entry.runtime_data
    keys = runtime.device_keys_in_call("hub_call_device_command", {"deviceId": str(switch.id)})
    assert keys
    registry = er.async_get(hass)
    specs = [spec for spec in runtime.publisher.specs if spec.device.key in keys]
    entity_ids = [
        registry.async_get_entity_id(spec.platform, DOMAIN, runtime.publisher.unique_id(spec))
        for spec in specs
    ]
    assert entity_ids
    call = {
        "tool": "hub_call_device_command",
        "args": {"deviceId": str(switch.id), "command": "on"},
    }
    handler = GatewayHandler(hass)
    hass_user.mock_policy(
        {"entities": {"entity_ids": {eid: {"read": True} for eid in entity_ids if eid}}}
    )
    denied = await handler.call_tool(_ctx(hass_user), "hubitat_home_hub", call)
    assert denied["isError"] is True
    assert result_data(denied)["error"]["code"] == "forbidden"

    done = await handler.call_tool(_ctx(hass_admin_user), "hubitat_home_hub", call)
    assert done["isError"] is False, done
    assert result_data(done)["success"] is True


async def test_read_only_user_reads_each_backend(
    hass: HomeAssistant,
    entries: dict[str, MockConfigEntry],
    sims: dict[str, TestServer],
    hass_read_only_user: MockUser,
) -> None:
    """A read-only user sees only read tools of each backend, and they work."""
    handler = GatewayHandler(hass)
    tools = await handler.list_tools(_ctx(hass_read_only_user))
    assert "set_state" not in {tool["name"] for tool in tools}
    reads = {
        # hub_list_modes reads the mode select, which HA does not expose to assistants by
        # default: a room listing instead.
        "hubitat_home_hub": "hub_list_rooms",
        "homecast": "get_state",
        "robine_wake_bedroom_clock": "list_alarms",
    }
    for gateway, tool in reads.items():
        catalog = await handler.call_tool(_ctx(hass_read_only_user), gateway, {})
        assert {t["tier"] for t in result_data(catalog)["tools"]} == {"read"}
        result = await handler.call_tool(_ctx(hass_read_only_user), gateway, {"tool": tool})
        assert result["isError"] is False, (gateway, result)
    # A device read needs read permission on the device's entities, which read-only users have.
    switch = sorted(sims[HUBITAT_KIND].app[HUB].find(kind="switch"), key=lambda d: d.id)[0]
    device = await handler.call_tool(
        _ctx(hass_read_only_user),
        "hubitat_home_hub",
        {"tool": "hub_get_device", "args": {"deviceId": str(switch.id)}},
    )
    assert device["isError"] is False, device
    assert result_data(device)["id"] == str(switch.id)
    write = await handler.call_tool(
        _ctx(hass_read_only_user), "robine_wake_bedroom_clock", {"tool": "snooze_session"}
    )
    assert result_data(write)["error"]["code"] == "forbidden"


async def test_get_state_spans_backends(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry], hass_admin_user: MockUser
) -> None:
    """One get_state over all backends; the backend filter narrows it to one."""
    handler = GatewayHandler(hass)
    everything = await handler.call_tool(
        _ctx(hass_admin_user), "get_state", {"fields": ["backend"], "limit": 1000}
    )
    backends = {item["backend"] for item in result_data(everything)["entities"]}
    assert backends == {"hubitat_home_hub", "homecast", "robine_wake_bedroom_clock"}
    clock = await handler.call_tool(
        _ctx(hass_admin_user), "get_state", {"backend": "robine_wake", "fields": ["backend"]}
    )
    # One backend on the page: named once for the page, not per entity.
    assert result_data(clock)["backend"] == "robine_wake_bedroom_clock"
    assert all("backend" not in item for item in result_data(clock)["entities"])


# The tier classification, written out independently of the backends' own tables.
ROBINE_READ = {"get_state", "list_alarms", "list_sounds", "preview_alarm"}
ROBINE_CONTROL = {
    "create_alarm",
    "update_alarm",
    "delete_alarm",
    "trigger_alarm",
    "snooze_session",
    "dismiss_session",
}
HOMECAST_READ = {
    "get_state",
    "get_automations",
    "get_hc_automations",
    "query_history",
    "get_history",
}
HOMECAST_CONTROL = {"set_state", "run_scene"}
HUBITAT_CONTROL = {"hub_call_device_command", "hub_set_hsm", "hub_manage_mode"}
HUBITAT_SOME_READS = {"hub_list_devices", "hub_get_device", "hub_list_modes", "hub_get_hsm_status"}
HUBITAT_SOME_ADMIN = {
    "hub_reboot",
    "hub_shutdown",
    "hub_create_backup",
    "hub_restore_backup",
    "hub_write_file",
    "hub_set_zwave",
    "hub_create_custom_rule",
    "hub_update_app",
    "hub_delete_device",
    "hub_update_firmware",
}


@pytest.mark.parametrize("role", ["admin", "user", "read_only"])
async def test_real_backend_matrix(
    hass: HomeAssistant,
    entries: dict[str, MockConfigEntry],
    *,
    hass_admin_user: MockUser,
    hass_user: MockUser,
    hass_read_only_user: MockUser,
    role: str,
) -> None:
    """Each role's catalog of each backend follows the classification above; the rest is refused."""
    user = {"admin": hass_admin_user, "user": hass_user, "read_only": hass_read_only_user}[role]
    handler = GatewayHandler(hass)
    catalogs: dict[str, set[str]] = {}
    everything: dict[str, set[str]] = {}
    for gateway, entry in (
        ("hubitat_home_hub", entries[HUBITAT_KIND]),
        ("homecast", entries[HOMECAST_KIND]),
        ("robine_wake_bedroom_clock", entries[ROBINE_WAKE_KIND]),
    ):
        result = await handler.call_tool(_ctx(user), gateway, {})
        catalogs[gateway] = {tool["name"] for tool in result_data(result)["tools"]}
        everything[gateway] = {t["name"] for t in await entry.runtime_data.async_list_tools()}

    robine, homecast, hubitat = (
        catalogs["robine_wake_bedroom_clock"],
        catalogs["homecast"],
        catalogs["hubitat_home_hub"],
    )
    if role == "admin":
        assert catalogs == everything
    elif role == "user":
        assert robine == ROBINE_READ | ROBINE_CONTROL
        assert homecast == HOMECAST_READ | HOMECAST_CONTROL
        assert hubitat >= HUBITAT_CONTROL | HUBITAT_SOME_READS
        assert not HUBITAT_SOME_ADMIN & hubitat
    else:
        assert robine == ROBINE_READ
        assert homecast == HOMECAST_READ
        assert hubitat >= HUBITAT_SOME_READS
        assert not (HUBITAT_CONTROL | HUBITAT_SOME_ADMIN) & hubitat

    # Everything outside the role's catalog is refused before reaching the backend.
    for gateway, names in everything.items():
        for name in sorted(names - catalogs[gateway]):
            result = await handler.call_tool(
                _ctx(user), gateway, {"tool": name, "args": {}, "confirm": True}
            )
            assert result_data(result)["error"]["code"] == "forbidden", (gateway, name)


@pytest.mark.parametrize(
    ("query", "expected", "within"),
    [
        ("reboot the hub", "hub_reboot", 1),
        ("snooze", "snooze_session", 1),
        ("run a scene", "run_scene", 1),
        ("lock the door", "set_state", 1),
        ("set an alarm for 7am", "create_alarm", 3),
        ("change hub mode to away", "hub_manage_mode", 3),
        ("arm security system", "hub_set_hsm", 3),
        ("switch a device on", "hub_call_device_command", 4),
        ("read a file", "hub_read_file", 1),
        ("device temperature history", "get_history", 4),
        # Plain requests: the obvious tool first.
        ("set an alarm for 6:45", "create_alarm", 1),
        ("set an alarm for 6:45 on weekdays", "create_alarm", 1),
        ("which devices are offline", "get_state", 1),
        ("run the Good Night scene", "run_scene", 1),
        ("what happened at the front door in the last hour", "get_history", 1),
        ("bedroom temperature", "get_state", 2),
    ],
)
async def test_search_finds_the_right_tool(
    hass: HomeAssistant,
    entries: dict[str, MockConfigEntry],
    *,
    hass_admin_user: MockUser,
    query: str,
    expected: str,
    within: int,
) -> None:
    """BM25 over ~145 real tools of three backends puts the obvious tool near the top."""
    result = await GatewayHandler(hass).call_tool(
        _ctx(hass_admin_user), "search_tools", {"query": query, "limit": within}
    )
    found = [hit["tool"] for hit in result_data(result)["results"]]
    assert expected in found, found


async def test_every_schema_suits_every_provider(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry], hass_admin_user: MockUser
) -> None:
    """tools/list, every backend tool's schema (catalog calls and search) are portable.

    Portable: what OpenAI's strict mode and Gemini's OpenAPI subset both accept (schemas/subset.py).
    The three backends' own schemas are not (type arrays, free-form objects, minLength, …).
    """
    handler = GatewayHandler(hass)
    ctx = _ctx(hass_admin_user)
    listed = await handler.list_tools(ctx)
    problems = {tool["name"]: schema_problems(tool["inputSchema"]) for tool in listed}
    assert {name: found for name, found in problems.items() if found} == {}
    raw_problems = 0
    described = 0
    for gateway in (tool["name"] for tool in listed if tool["name"] not in handler.core_tools):
        catalog = result_data(await handler.call_tool(ctx, gateway, {}))
        for tool in catalog["tools"]:
            described += 1
            assert schema_problems(tool["inputSchema"]) == [], (gateway, tool["name"])
        raw = await entries_runtime(entries, gateway).async_list_tools()
        raw_problems += sum(1 for tool in raw if schema_problems(tool.get("inputSchema")))
    assert described > 130
    # The test would catch the backends' own schemas: they are far from portable.
    assert raw_problems > 50
    search = await handler.call_tool(
        ctx, "search_tools", {"query": "alarm device scene rule", "limit": 20, "schemas": True}
    )
    for hit in result_data(search)["results"]:
        assert schema_problems(hit["inputSchema"]) == [], hit["tool"]


def entries_runtime(entries: dict[str, MockConfigEntry], gateway: str) -> Any:
    """The runtime behind a gateway tool name."""
    prefix = gateway.split("_", 1)[0]
    return next(e.runtime_data for e in entries.values() if e.data[CONF_BACKEND].startswith(prefix))


async def test_free_form_arguments_travel_as_json_text(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry], hass_admin_user: MockUser
) -> None:
    """args as JSON text (what the portable schema asks) reaches the backend as an object."""
    handler = GatewayHandler(hass)
    ctx = _ctx(hass_admin_user)
    clock = "robine_wake_bedroom_clock"
    created = await handler.call_tool(
        ctx,
        clock,
        {
            "tool": "create_alarm",
            "args": json.dumps(
                {"label": "Work", "time": "06:45", "days": ["mon", "tue", "wed", "thu", "fri"]}
            ),
        },
    )
    assert created["isError"] is False, created
    broken = await handler.call_tool(ctx, clock, {"tool": "list_alarms", "args": "{nope"})
    assert broken["isError"] is True
    assert '"args" is not valid JSON' in result_data(broken)["error"]["message"]
    listed = await handler.call_tool(ctx, clock, {"tool": "list_alarms", "args": "[1]"})
    assert "must be a JSON object" in result_data(listed)["error"]["message"]


async def test_no_doubled_words_in_names(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry]
) -> None:
    """Device name + entity name never repeat a word ("Home Hub Hub temperature").

    A device's own label is the user's (a Hubitat child "Living Room Outlet Outlet 1" is
    named so on the hub); only what the integration composes is checked.
    """

    def doubled(text: str) -> bool:
        words = text.casefold().split()
        return any(a == b for a, b in pairwise(words))

    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    found = []
    checked = 0
    for state in hass.states.async_all():
        entry = entities.async_get(state.entity_id)
        device = devices.async_get(entry.device_id) if entry and entry.device_id else None
        if device is None or doubled(device.name or ""):
            continue
        checked += 1
        if doubled(str(state.attributes.get("friendly_name", ""))):
            found.append(state.attributes["friendly_name"])
    assert not found, "; ".join(sorted(found))
    assert checked > 50


async def test_short_tool_names_from_the_listing_reach_the_hub(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry], hass_admin_user: MockUser
) -> None:
    """A name as the listing writes it ("get_info" under "hub_") runs and describes the tool."""
    handler = GatewayHandler(hass)
    ctx = _ctx(hass_admin_user)
    full = await handler.call_tool(ctx, "hubitat_home_hub", {"tool": "hub_get_info"})
    short = await handler.call_tool(ctx, "hubitat_home_hub", {"tool": "get_info"})
    assert not short.get("isError"), short
    assert result_data(short)["name"] == result_data(full)["name"]
    described = await handler.call_tool(
        ctx, "hubitat_home_hub", {"describe": ["list_modes", "hub_get_info"]}
    )
    assert [tool["name"] for tool in result_data(described)["tools"]] == [
        "hub_list_modes",
        "hub_get_info",
    ]
    unknown = await handler.call_tool(ctx, "hubitat_home_hub", {"tool": "no_such_tool"})
    assert unknown["isError"]
    assert result_data(unknown)["error"]["code"] == "unknown_tool"


async def test_every_entity_is_in_a_home(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry], hass_admin_user: MockUser
) -> None:
    """A Homecast home, a Hubitat hub (by the name it reports) or Home Assistant's own home:
    each entity says which, and the home filter keeps one home's entities."""
    hass.config.location_name = "Main House"
    handler = GatewayHandler(hass)
    homecast = sims_homes(entries)
    listed = result_data(
        await handler.call_tool(_ctx(hass_admin_user), "get_state", {"fields": ["home"]})
    )
    by_home: dict[str, set[str]] = {}
    for item in listed["entities"]:
        by_home.setdefault(item["home"], set()).add(entries_of(hass, item["entity_id"]))
    assert by_home == {
        "Home Hub": {HUBITAT_KIND},
        "Main House": {ROBINE_WAKE_KIND},
        **{name: {HOMECAST_KIND} for name in homecast},
    }
    hub = result_data(
        await handler.call_tool(_ctx(hass_admin_user), "get_state", {"home": "home hub"})
    )
    assert hub["home"] == "Home Hub"
    assert hub["backend"] == "hubitat_home_hub"
    clock = result_data(
        await handler.call_tool(_ctx(hass_admin_user), "get_state", {"home": "main house"})
    )
    assert clock["home"] == "Main House"
    assert clock["total"] > 0
    assert all(
        item["entity_id"].startswith(("sensor.", "switch.", "binary_sensor.", "button.", "event."))
        for item in clock["entities"]
    )


def sims_homes(entries: dict[str, MockConfigEntry]) -> list[str]:
    """The names of the homes the Homecast entry follows, as the integration reads them."""
    data = entries[HOMECAST_KIND].runtime_data.coordinator.data
    return [home.name for home in data.homes.values()]


def entries_of(hass: HomeAssistant, entity_id: str) -> str:
    """The backend kind of an entity's entry."""
    entry_id = er.async_get(hass).async_get(entity_id).config_entry_id
    return str(hass.config_entries.async_get_entry(entry_id).data[CONF_BACKEND])


async def test_list_backends_names_the_homes(
    hass: HomeAssistant, entries: dict[str, MockConfigEntry], hass_admin_user: MockUser
) -> None:
    """With several homes, each backend says which it holds: the names the home filter takes."""
    hass.config.location_name = "Main House"
    listed = result_data(
        await GatewayHandler(hass).call_tool(_ctx(hass_admin_user), "list_backends", {})
    )
    by_kind = {item["backend"]: item["homes"] for item in listed["backends"]}
    assert by_kind == {
        HUBITAT_KIND: ["Home Hub"],
        HOMECAST_KIND: sorted(sims_homes(entries), key=str.casefold),
        ROBINE_WAKE_KIND: ["Main House"],
    }
