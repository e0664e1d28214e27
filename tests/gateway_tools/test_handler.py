"""GatewayHandler over a fake backend: listing, calling, policy, errors, search, resources."""

from __future__ import annotations

import asyncio
import json
from typing import Any
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.auth.models import User
from homeassistant.core import Event, HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    async_fire_time_changed,
)

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway import handler as handler_module
from custom_components.mcp_gateway.gateway.approval import gate as approval_gate_module
from custom_components.mcp_gateway.gateway.calls import execute as execute_module
from custom_components.mcp_gateway.gateway.catalog import store as catalog_module
from custom_components.mcp_gateway.gateway.catalog.store import gateway_tool_names
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.client import ToolResult
from custom_components.mcp_gateway.mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpProtocolError,
    McpRateLimitError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
)
from custom_components.mcp_gateway.mcp.server import (
    InvalidParamsError,
    RequestContext,
    ResourceNotFoundError,
    UnknownToolError,
)
from custom_components.mcp_gateway.permissions.policy import EVENT_GATEWAY_WRITE
from tests.results import result_data

from .conftest import FakeRuntime, add_fake_entry, fake_tools

GATEWAY = "hubitat_test_hub"
CORE = ["search_tools", "get_state", "set_state", "get_history", "list_backends", "automations"]


def ctx(user: User | None, client: str | None = "pytest") -> RequestContext:
    return RequestContext(
        protocol_version="2025-11-25", client_name=client, user=user, request_id=1
    )


def _names(tools: list[dict[str, Any]]) -> list[str]:
    return [tool["name"] for tool in tools]


def _gateway(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return next(tool for tool in tools if tool["name"] == GATEWAY)


async def _call(
    hass: HomeAssistant, user: User, name: str, arguments: dict[str, Any] | None = None
) -> dict[str, Any]:
    return await GatewayHandler(hass).call_tool(ctx(user), name, arguments or {})


async def _expire_catalogs(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Move HA's clock past the catalog TTL."""
    freezer.tick(catalog_module.CATALOG_TTL + 1)
    async_fire_time_changed(hass)
    await hass.async_block_till_done()


def _data(result: dict[str, Any]) -> Any:
    """The gateway's own results carry their data once: compact JSON text, no structuredContent."""
    assert "structuredContent" not in result
    (part,) = result["content"]
    data = json.loads(part["text"])
    assert part["text"] == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return data


async def test_every_tool_is_well_formed(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Titles, all four hints explicit, object schemas with `required`, names ≤ 64."""
    tools = await GatewayHandler(hass).list_tools(ctx(hass_admin_user))
    assert _names(tools) == [*CORE, GATEWAY]
    assert _gateway(tools)["title"] == "Test Hub (Hubitat)"
    for tool in tools:
        assert tool["title"]
        assert tool["description"]
        assert len(tool["name"]) <= 64
        assert set(tool["annotations"]) == {
            "title",
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }
        assert all(isinstance(v, bool) for k, v in tool["annotations"].items() if k != "title")
        schema = tool["inputSchema"]
        assert schema["type"] == "object"
        assert isinstance(schema["required"], list)
        assert schema["additionalProperties"] is False


async def test_lists_follow_the_role(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    hass_user: User,
    hass_read_only_user: MockUser,
) -> None:
    """Each role sees only the tools (and sub-tools) it may call."""
    handler = GatewayHandler(hass)
    admin = await handler.list_tools(ctx(hass_admin_user))
    user = await handler.list_tools(ctx(hass_user))
    read_only = await handler.list_tools(ctx(hass_read_only_user))
    assert _names(user) == [*CORE, GATEWAY]
    assert _names(read_only) == [
        "search_tools",
        "get_state",
        "get_history",
        "list_backends",
        GATEWAY,
    ]

    def listed(tools: list[dict[str, Any]]) -> str:
        return _gateway(tools)["description"].split("Tools: ", 1)[1]

    assert listed(admin) == (
        "list_things, switch_thing, set_mode, write_rule, reboot_hub, hub_weather, "
        "mystery_tool, broken_tool, slow_tool, get_thing."
    )
    assert listed(user) == (
        "list_things, switch_thing, set_mode, hub_weather, broken_tool, slow_tool, get_thing."
    )
    assert listed(read_only) == "list_things, hub_weather, slow_tool, get_thing."
    # The hints follow what this user can reach through the gateway.
    assert _gateway(read_only)["annotations"]["readOnlyHint"] is True
    assert _gateway(read_only)["annotations"]["destructiveHint"] is False
    assert _gateway(user)["annotations"]["readOnlyHint"] is False
    assert _gateway(admin)["annotations"]["destructiveHint"] is True


async def test_gateway_tools_do_not_inline_backend_schemas(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """tools/list grows by the sub-tools' names only, whatever their schemas weigh."""
    monkeypatch.setattr(catalog_module, "CATALOG_TTL", 0)
    handler = GatewayHandler(hass)
    runtime: FakeRuntime = fake_entry.runtime_data
    before = len(json.dumps(await handler.list_tools(ctx(hass_admin_user))))
    heavy_schema = {
        "type": "object",
        "properties": {f"p{n}": {"type": "string", "description": "x" * 200} for n in range(20)},
        "required": [],
    }
    extra = [
        {
            "name": f"extra_{n:03d}",
            "description": "A long description. " * 40,
            "inputSchema": heavy_schema,
            "annotations": {"readOnlyHint": True},
        }
        for n in range(100)
    ]
    runtime.tools = fake_tools() + extra
    after_tools = await handler.list_tools(ctx(hass_admin_user))
    after = len(json.dumps(after_tools))
    names_bytes = sum(len(f", extra_{n:03d}") for n in range(100))
    assert after - before == names_bytes
    assert "p0" not in json.dumps(_gateway(after_tools))
    catalog_bytes = len(json.dumps(extra))
    assert catalog_bytes > 50 * (after - before)


async def test_gateway_catalog_call(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: User
) -> None:
    """`{}` returns the tools this user may use, with schemas and tiers."""
    result = await _call(hass, hass_user, GATEWAY)
    assert result["isError"] is False
    data = _data(result)
    assert data["gateway"] == GATEWAY
    assert data["backend"] == "hubitat"
    by_name = {tool["name"]: tool for tool in data["tools"]}
    assert list(by_name) == [
        "list_things",
        "switch_thing",
        "set_mode",
        "hub_weather",
        "broken_tool",
        "slow_tool",
        "get_thing",
    ]
    assert by_name["switch_thing"] == {
        "name": "switch_thing",
        "description": "Turn a device on or off.",
        "tier": "control",
        # The backend's schema in the subset every model provider accepts.
        "inputSchema": {**fake_tools()[1]["inputSchema"], "additionalProperties": False},
    }


async def test_gateway_executes_and_passes_results_through(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: User
) -> None:
    """Results come back as the backend gave them, their data once (no structuredContent copy)."""
    runtime: FakeRuntime = fake_entry.runtime_data
    result = await _call(hass, hass_user, GATEWAY, {"tool": "list_things"})
    assert result["isError"] is False
    assert result_data(result) == {
        "things": [{"id": "1", "on": False}, {"id": "2", "on": False}, {"id": "3", "on": False}]
    }
    assert runtime.calls == [("list_things", {})]
    assert "structuredContent" not in result  # none was sent, none is derived
    result = await _call(hass, hass_user, GATEWAY, {"tool": "set_mode", "args": {"mode": "away"}})
    # The backend sent the same JSON as text and as structuredContent: the text goes on alone.
    assert result == {
        "content": [{"type": "text", "text": '{"ok": true, "tool": "set_mode"}'}],
        "isError": False,
    }
    assert runtime.calls[-1] == ("set_mode", {"mode": "away"})


@pytest.mark.parametrize(
    ("content", "structured", "expected"),
    [
        # Different data beside the text (Robine Wake's error code): both go on.
        (
            [{"type": "text", "text": "Alarm not found"}],
            {"error": {"code": "not_found"}},
            {
                "content": [{"type": "text", "text": "Alarm not found"}],
                "structuredContent": {"error": {"code": "not_found"}},
            },
        ),
        # No content at all: the structured data becomes the text, once.
        ([], {"a": 1}, {"content": [{"type": "text", "text": '{"a":1}'}]}),
        # Text that looks like JSON but is not: kept with the structured data.
        (
            [{"type": "text", "text": "{oops"}],
            {"a": 1},
            {"content": [{"type": "text", "text": "{oops"}], "structuredContent": {"a": 1}},
        ),
    ],
)
async def test_passthrough_carries_backend_data_once(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    *,
    content: list[dict[str, Any]],
    structured: Any,
    expected: dict[str, Any],
) -> None:
    """A backend's structuredContent is forwarded only where the text does not already hold it."""
    runtime: FakeRuntime = fake_entry.runtime_data

    async def answer(name: str, arguments: Any) -> ToolResult:
        return ToolResult(content=content, structured=structured)

    runtime.async_call_tool = answer  # type: ignore[method-assign]
    result = await _call(hass, hass_admin_user, GATEWAY, {"tool": "set_mode", "args": {}})
    assert result == {**expected, "isError": False}


async def test_backend_error_results_pass_through(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A backend's own isError result stays an isError result with its text."""
    result = await _call(hass, hass_admin_user, GATEWAY, {"tool": "broken_tool"})
    assert result == {
        "content": [{"type": "text", "text": "Error: relay offline"}],
        "isError": True,
    }


@pytest.mark.parametrize(
    ("error", "code", "text"),
    [
        (McpRpcError(-32602, "Device not found: 42", None), "rejected", "rejected set_mode"),
        (McpConnectionError("connection refused"), "unavailable", "is unreachable"),
        (McpTimeoutError("read timed out"), "timeout", "did not answer set_mode in time"),
        (McpAuthError("401", status=401), "backend_auth", "re-authenticate the entry"),
        (McpRateLimitError("429", retry_after=7), "rate_limited", "retry in 7 seconds"),
        (McpProtocolError("not JSON"), "backend_error", "failed on set_mode"),
        (RuntimeError("bug"), "failed", "see the Home Assistant log"),
    ],
)
async def test_backend_failures_become_error_results(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    *,
    error: Exception,
    code: str,
    text: str,
) -> None:
    """Every failure is an isError result that says what happened, never a protocol error."""
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.call_error = error
    result = await _call(hass, hass_admin_user, GATEWAY, {"tool": "set_mode", "args": {}})
    assert result["isError"] is True
    data = _data(result)
    assert data["error"]["code"] == code
    assert text in data["error"]["message"]


async def test_tool_error_exception_passes_its_result(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A runtime that raises McpToolError still gives the AI the backend's result."""
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.call_error = McpToolError(
        "jammed",
        ToolResult(content=[{"type": "text", "text": '{"error": "jammed"}'}], is_error=True),
    )
    result = await _call(hass, hass_admin_user, GATEWAY, {"tool": "set_mode"})
    assert result["isError"] is True
    assert result_data(result) == {"error": "jammed"}


async def test_backend_call_timeout(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A backend that never answers is cut off by the gateway's own timeout."""
    monkeypatch.setattr(execute_module, "BACKEND_CALL_TIMEOUT", 0)
    result = await _call(hass, hass_admin_user, GATEWAY, {"tool": "slow_tool"})
    assert _data(result)["error"]["code"] == "timeout"


async def test_one_deadline_bounds_catalog_refresh_and_call(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The backend's configured timeout bounds the whole gateway call: a catalog refresh and
    a call that each stay within it, but not together, time out (two 10 s waits in a row must
    not answer after 21 s)."""
    runtime: FakeRuntime = fake_entry.runtime_data
    bound = 0.2
    monkeypatch.setattr(runtime.client, "timeout", bound)
    list_tools, call_tool = runtime.async_list_tools, runtime.async_call_tool

    listed: list[float] = []

    async def slow_list() -> list[dict[str, Any]]:
        listed.append(bound)
        await asyncio.sleep(bound * 0.6)
        return await list_tools()

    async def slow_call(name: str, arguments: Any) -> ToolResult:
        await asyncio.sleep(bound * 0.6)
        return await call_tool(name, arguments)

    monkeypatch.setattr(runtime, "async_list_tools", slow_list)
    monkeypatch.setattr(runtime, "async_call_tool", slow_call)
    handler = GatewayHandler(hass)
    args = {"tool": "set_mode", "args": {"mode": "away"}}
    result = await handler.call_tool(ctx(hass_admin_user), GATEWAY, args)
    assert listed  # the first call fetched the catalog, then called
    # set_mode is a write the deadline cut off in flight: it may be with the backend already.
    assert _data(result)["error"]["code"] == "outcome_unknown"
    monkeypatch.setattr(runtime, "async_list_tools", list_tools)
    result = await handler.call_tool(ctx(hass_admin_user), GATEWAY, args)
    assert result["isError"] is False, result  # a slow call alone fits in the bound


@pytest.mark.preapproved(
    "tests the tier and confirm steps of a destructive tool, not who approves it"
)
async def test_tier_confirm_and_unknown_sub_tools(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    hass_user: User,
) -> None:
    """Admin tools refuse users; destructive ones need confirm; unknown ones list the known."""
    runtime: FakeRuntime = fake_entry.runtime_data
    denied = _data(await _call(hass, hass_user, GATEWAY, {"tool": "write_rule", "args": {}}))
    assert denied["error"]["code"] == "forbidden"
    assert "needs the 'admin' tier" in denied["error"]["message"]
    unconfirmed = _data(await _call(hass, hass_admin_user, GATEWAY, {"tool": "reboot_hub"}))
    assert unconfirmed["error"]["code"] == "confirmation_required"
    assert runtime.calls == []
    confirmed = await _call(hass, hass_admin_user, GATEWAY, {"tool": "reboot_hub", "confirm": True})
    assert confirmed["isError"] is False
    assert runtime.calls == [("reboot_hub", {})]
    unknown = _data(await _call(hass, hass_user, GATEWAY, {"tool": "nope"}))
    assert unknown["error"]["code"] == "unknown_tool"
    assert "list_things, switch_thing" in unknown["error"]["message"]
    assert "write_rule" not in unknown["error"]["message"]
    invalid = _data(await _call(hass, hass_user, GATEWAY, {"tool": True, "extra": 1}))
    assert invalid["error"]["code"] == "invalid"
    assert "arguments.tool must be string" in invalid["error"]["message"]
    assert "arguments.extra is not accepted" in invalid["error"]["message"]
    lonely_args = _data(await _call(hass, hass_user, GATEWAY, {"args": {}}))
    assert lonely_args["error"]["message"] == 'Give "tool" with "args".'


async def test_describe_lists_only_the_named_tools(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: User
) -> None:
    """`describe` returns just those tools' schemas, in the order asked, within the user's tier."""
    everything = _data(await _call(hass, hass_user, GATEWAY))
    some = _data(
        await _call(hass, hass_user, GATEWAY, {"describe": ["switch_thing", "list_things"]})
    )
    assert [tool["name"] for tool in some["tools"]] == ["switch_thing", "list_things"]
    full = {tool["name"]: tool for tool in everything["tools"]}
    assert all(tool["inputSchema"] == full[tool["name"]]["inputSchema"] for tool in some["tools"])
    # One name alone is read as a list of one.
    one = _data(await _call(hass, hass_user, GATEWAY, {"describe": "list_things"}))
    assert [tool["name"] for tool in one["tools"]] == ["list_things"]
    # An admin tool is unknown to a user, like a name the backend does not have.
    hidden = _data(await _call(hass, hass_user, GATEWAY, {"describe": ["write_rule", "nope"]}))
    assert hidden["error"]["code"] == "unknown_tool"
    assert "'write_rule', 'nope'" in hidden["error"]["message"]
    mixed = _data(
        await _call(hass, hass_user, GATEWAY, {"describe": ["list_things"], "tool": "list_things"})
    )
    assert mixed["error"]["code"] == "invalid"
    # Empty is how clients that must fill every property leave it out: all tools.
    empty = _data(await _call(hass, hass_user, GATEWAY, {"describe": [], "tool": ""}))
    assert empty["tools"] == everything["tools"]


async def test_device_calls_check_entity_control(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    hass_user: MockUser,
) -> None:
    """A device-addressing call needs control of the device's entities; unmapped → admins only."""
    runtime: FakeRuntime = fake_entry.runtime_data
    hass_user.mock_policy(
        {
            "entities": {
                "entity_ids": {"switch.kitchen_plug": {"read": True}, "light.desk_lamp": True}
            }
        }
    )
    plug = {"tool": "switch_thing", "args": {"device": "1", "on": True}}
    denied = _data(await _call(hass, hass_user, GATEWAY, plug))
    assert denied["error"]["code"] == "forbidden"
    assert "switch.kitchen_plug" in denied["error"]["message"]
    assert runtime.things["1"].on is False

    lamp = {"tool": "switch_thing", "args": {"device": "2", "on": True}}
    assert (await _call(hass, hass_user, GATEWAY, lamp))["isError"] is False
    assert runtime.things["2"].on is True

    # Reading a device needs read permission on its entities, not control.
    read_plug = {"tool": "get_thing", "args": {"device": "1"}}
    assert (await _call(hass, hass_user, GATEWAY, read_plug))["isError"] is False
    hass_user.mock_policy({"entities": {"entity_ids": {"light.desk_lamp": True}}})
    hidden = _data(await _call(hass, hass_user, GATEWAY, read_plug))
    assert hidden["error"]["message"] == (
        f"Permission denied: {GATEWAY}/get_thing reads 1 entity you may not read, which this "
        "Home Assistant user may not read."
    )

    ghost = {"tool": "switch_thing", "args": {"device": "99", "on": True}}
    refused = _data(await _call(hass, hass_user, GATEWAY, ghost))
    assert "not Home Assistant entities (dev_99)" in refused["error"]["message"]
    runtime.things["99"] = runtime.things["1"]  # lets the fake accept the admin's call
    # A write to an address no entity stands for cannot be weighed: a person is asked.
    with patch.object(approval_gate_module, "HOLD_SECONDS", 0.0):
        blind = _data(await _call(hass, hass_admin_user, GATEWAY, ghost))
    assert blind["error"]["code"] == "approval_pending"
    assert "does not know: dev_99" in blind["error"]["message"]


async def test_writes_reach_the_logbook_and_reads_do_not(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: User
) -> None:
    """Control and admin calls fire the write event with user and client; reads stay quiet."""
    events: list[Event] = []
    hass.bus.async_listen(EVENT_GATEWAY_WRITE, events.append)
    handler = GatewayHandler(hass)
    await handler.call_tool(ctx(hass_user, "ChatGPT"), GATEWAY, {"tool": "list_things"})
    await handler.call_tool(
        ctx(hass_user, "ChatGPT"), GATEWAY, {"tool": "set_mode", "args": {"mode": "x"}}
    )
    await handler.call_tool(ctx(hass_user, "ChatGPT"), GATEWAY, {"tool": "broken_tool"})
    await hass.async_block_till_done()
    assert sorted((e.data["tool"], e.data["success"]) for e in events) == [
        (f"{GATEWAY}/broken_tool", False),
        (f"{GATEWAY}/set_mode", True),
    ]
    assert {e.data["client_name"] for e in events} == {"ChatGPT"}
    assert {e.data["summary"] for e in events} == {"Test Hub: set_mode", "Test Hub: broken_tool"}

    events.clear()
    device_call = {"tool": "switch_thing", "args": {"device": "1", "on": True}}
    await handler.call_tool(ctx(hass_user, "ChatGPT"), GATEWAY, device_call)
    await hass.async_block_till_done()
    assert [(e.data["summary"], e.data["entity_id"]) for e in events] == [
        ("Test Hub: switch_thing on Kitchen plug", "switch.kitchen_plug")
    ]
    assert {e.context.user_id for e in events} == {hass_user.id}


async def test_core_tool_policy_and_validation(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_read_only_user: MockUser,
    hass_admin_user: MockUser,
) -> None:
    """A tool outside the user's tiers is a clear error; bad arguments are isError results."""
    denied = await _call(hass, hass_read_only_user, "set_state", {"updates": []})
    assert _data(denied)["error"]["code"] == "forbidden"
    invalid = await _call(hass, hass_admin_user, "get_state", {"limit": 0, "bogus": True})
    message = _data(invalid)["error"]["message"]
    assert "arguments.limit must be ≥ 1" in message
    assert "arguments.bogus is not accepted" in message
    failure = await _call(hass, hass_admin_user, "get_state", {"area": "Nowhere"})
    assert _data(failure)["error"]["code"] == "not_found"
    ok = await _call(hass, hass_admin_user, "get_state", {"domain": ["switch"]})
    assert _data(ok)["entities"][0]["entity_id"] == "switch.kitchen_plug"
    # A lone string where a list of strings is expected is read as that list ...
    lone = await _call(hass, hass_admin_user, "get_state", {"domain": "switch"})
    assert not lone["isError"]
    assert [e["entity_id"] for e in _data(lone)["entities"]] == ["switch.kitchen_plug"]
    # ... but nothing else is bent to fit.
    wrong = await _call(hass, hass_admin_user, "get_state", {"domain": 3, "name": ["plug"]})
    message = _data(wrong)["error"]["message"]
    assert "arguments.domain must be array" in message
    assert "arguments.name must be string" in message


async def test_unknown_tools_and_prompts(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Unknown tool names are protocol errors; there are no prompts."""
    handler = GatewayHandler(hass)
    with pytest.raises(UnknownToolError):
        await handler.call_tool(ctx(hass_admin_user), "hubitat_other", {})
    assert await handler.list_prompts(ctx(hass_admin_user)) == []
    with pytest.raises(InvalidParamsError):
        await handler.get_prompt(ctx(hass_admin_user), "x", {})


async def test_unexposed_entries_are_invisible(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """An entry with the gateway option off has no tool, no search hits, no entities."""
    hidden = await add_fake_entry(hass, "Hidden", unique_id="hub-2", exposed=False)
    handler = GatewayHandler(hass)
    tools = await handler.list_tools(ctx(hass_admin_user))
    assert "hubitat_hidden" not in _names(tools)
    with pytest.raises(UnknownToolError):
        await handler.call_tool(ctx(hass_admin_user), "hubitat_hidden", {})
    hits = _data(
        await _call(hass, hass_admin_user, "search_tools", {"query": "reboot", "limit": 20})
    )
    assert {hit["gateway"] for hit in hits["results"]} == {GATEWAY}
    assert hidden.runtime_data.calls == []


async def test_kind_tool_adds_titles_its_names_do_not_say(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Entry names are the schema's enum; the description adds a title only where the name
    does not already say it (a second "Test Hub" is hubitat_test_hub_2)."""
    await add_fake_entry(hass, "Test Hub", unique_id="hub-2")
    tools = await GatewayHandler(hass).list_tools(ctx(hass_admin_user))
    kind = next(tool for tool in tools if tool["name"] == "hubitat")
    assert kind["inputSchema"]["properties"]["entry"]["enum"] == [
        "hubitat_test_hub",
        "hubitat_test_hub_2",
    ]
    assert "(hubitat_test_hub_2: Test Hub)" in kind["description"]
    assert "hubitat_test_hub:" not in kind["description"]


async def test_unloaded_and_failing_backends(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A backend that is down stays listed (so the AI learns why) and calls say so."""
    await add_fake_entry(hass, "Offline", unique_id="hub-2", setup=False)
    handler = GatewayHandler(hass)
    tools = await handler.list_tools(ctx(hass_admin_user))
    # Two entries of one kind are listed as one tool that takes the entry.
    assert "hubitat_offline" not in _names(tools)
    kind = next(tool for tool in tools if tool["name"] == "hubitat")
    # Its name says its title; what it adds is that it is not connected.
    assert "(hubitat_offline: not connected)" in kind["description"]
    assert "hubitat_test_hub" not in kind["description"]  # the schema's enum names it
    result = _data(await _call(hass, hass_admin_user, "hubitat", {"entry": "hubitat_offline"}))
    assert result["error"]["code"] == "unavailable"
    # The entry's own name still answers (clients that kept an older list).
    result = _data(await _call(hass, hass_admin_user, "hubitat_offline", {}))
    assert result["error"]["code"] == "unavailable"

    # A backend that fails to list keeps its last catalog.
    monkeypatch.setattr(catalog_module, "CATALOG_TTL", 0)
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.list_error = McpConnectionError("down")
    tools = await handler.list_tools(ctx(hass_admin_user))
    kind = next(tool for tool in tools if tool["name"] == "hubitat")
    assert "reboot_hub" in kind["description"]


async def test_never_listed_backend_that_fails(
    hass: HomeAssistant, hass_admin_user: MockUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No catalog yet and listing fails: the gateway tool says it is not connected."""
    monkeypatch.setattr(FakeRuntime, "list_error", McpConnectionError("down"))
    await add_fake_entry(hass)
    tools = await GatewayHandler(hass).list_tools(ctx(hass_admin_user))
    assert "not connected right now" in _gateway(tools)["description"]
    result = _data(await _call(hass, hass_admin_user, GATEWAY, {}))
    assert result["error"]["code"] == "unavailable"


async def test_catalog_refreshes_when_the_backend_changes(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Backends are asked again after the TTL: new tools appear, equal lists reuse the cache."""
    handler = GatewayHandler(hass)
    runtime: FakeRuntime = fake_entry.runtime_data
    await handler.list_tools(ctx(hass_admin_user))
    first = handler.catalog._catalogs[fake_entry.entry_id]
    runtime.tools = fake_tools()  # equal content, new list
    await _expire_catalogs(hass, freezer)
    await handler.list_tools(ctx(hass_admin_user))
    assert handler.catalog._catalogs[fake_entry.entry_id] is first
    runtime.tools = [*fake_tools(), {"name": "new_tool", "description": "Fresh."}]
    # Within the TTL the cached catalog answers without asking the backend.
    tools = await handler.list_tools(ctx(hass_admin_user))
    assert "new_tool" not in _gateway(tools)["description"]
    await _expire_catalogs(hass, freezer)
    tools = await handler.list_tools(ctx(hass_admin_user))
    assert _gateway(tools)["description"].endswith("get_thing, new_tool.")
    catalog = _data(await _call(hass, hass_admin_user, GATEWAY))
    new = next(tool for tool in catalog["tools"] if tool["name"] == "new_tool")
    # No schema from the backend: an empty object schema, and admin (unclassified) tier.
    assert new["inputSchema"] == {"type": "object", "properties": {}, "additionalProperties": False}
    assert new["tier"] == "admin"


async def test_broken_classifier_fails_closed(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_user: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """If a backend's table raises, its tools become admin-only rather than open."""

    def broken(tool: Any) -> Any:
        raise KeyError("table")

    monkeypatch.setattr(fake_entry.runtime_data, "tool_class", broken)
    tools = await GatewayHandler(hass).list_tools(ctx(hass_user))
    assert GATEWAY not in _names(tools)


async def test_search_tools(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    hass_read_only_user: MockUser,
) -> None:
    """Results name the gateway and sub-tool, with schema and a ready call; policy filters."""
    hits = _data(await _call(hass, hass_admin_user, "search_tools", {"query": "reboot the hub"}))
    top = hits["results"][0]
    assert top["tool"] == "reboot_hub"
    assert top["gateway"] == GATEWAY
    assert top["tier"] == "admin"
    assert top["destructive"] is True
    assert top["call"] == {
        "name": GATEWAY,
        "arguments": {"tool": "reboot_hub", "args": "{}", "confirm": True},
    }
    assert top["inputSchema"]["type"] == "object"

    core = _data(await _call(hass, hass_admin_user, "search_tools", {"query": "entity states"}))
    assert core["results"][0]["tool"] in {"get_state", "set_state"}
    assert "gateway" not in core["results"][0]

    ro = _data(
        await _call(
            hass, hass_read_only_user, "search_tools", {"query": "reboot hub mode", "limit": 20}
        )
    )
    assert {hit["tool"] for hit in ro["results"]} <= {
        "list_things",
        "hub_weather",
        "slow_tool",
        "get_thing",
        "search_tools",
        "get_state",
        "get_history",
        "list_backends",
    }
    assert "reboot_hub" not in {hit["tool"] for hit in ro["results"]}
    assert "set_mode" not in {hit["tool"] for hit in ro["results"]}


async def test_non_admins_can_be_kept_out(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    hass_user: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the option off, ordinary users get no tools, no resources and a clear refusal."""
    monkeypatch.setattr(handler_module, "allow_non_admin", lambda hass: False)
    handler = GatewayHandler(hass)
    assert await handler.list_tools(ctx(hass_user)) == []
    assert await handler.list_resources(ctx(hass_user)) == []
    refused = _data(await handler.call_tool(ctx(hass_user), "get_state", {}))
    assert "limited to administrators" in refused["error"]["message"]
    assert len(await handler.list_tools(ctx(hass_admin_user))) == 7


async def test_resources(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_user: MockUser,
    hass_read_only_user: MockUser,
) -> None:
    """The guide and a snapshot filtered by what the user may read."""
    handler = GatewayHandler(hass)
    resources = await handler.list_resources(ctx(hass_user))
    assert [r["uri"] for r in resources] == ["mcp-gateway://guide", "mcp-gateway://context"]
    guide = await handler.read_resource(ctx(hass_read_only_user), "mcp-gateway://guide")
    text = guide["contents"][0]["text"]
    assert "read-only user" in text
    assert "set_state" not in text
    assert f"`{GATEWAY}`" in text
    assert "set_state, per domain" not in text
    # When the core tools' answers are the whole answer, and what a backend tool adds.
    assert "## Which answers to trust" in text
    assert "authoritative" in text
    # The backend's own tools that repeat the core answers, as the backend names them.
    assert "own tools (get_thing, list_things) costs calls" in text
    assert "`get_history` is HA's recorder" in text
    assert "`get_state` reads them" in text
    user_guide = await handler.read_resource(ctx(hass_user), "mcp-gateway://guide")
    user_text = user_guide["contents"][0]["text"]
    assert "- lock: state locked/unlocked/open, code" in user_text
    assert "`set_state` says what the device did" in user_text

    hass_user.mock_policy({"entities": {"entity_ids": {"light.desk_lamp": True}}})
    context = await handler.read_resource(ctx(hass_user), "mcp-gateway://context")
    snapshot = json.loads(context["contents"][0]["text"])
    assert snapshot == {
        "role": "user",
        "backends": [
            {"gateway_tool": GATEWAY, "title": "Test Hub", "backend": "hubitat", "connected": True}
        ],
        "areas": {"Office": {"light.desk_lamp": ["Desk lamp", "off"]}},
        "entities": 1,
    }
    with pytest.raises(ResourceNotFoundError):
        await handler.read_resource(ctx(hass_user), "mcp-gateway://nope")


async def test_context_snapshot_is_bounded(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Beyond its cap the snapshot says how to get the rest."""
    from custom_components.mcp_gateway.gateway.tools import resources

    monkeypatch.setattr(resources, "CONTEXT_MAX_ENTITIES", 2)
    context = await GatewayHandler(hass).read_resource(
        ctx(hass_admin_user), "mcp-gateway://context"
    )
    snapshot = json.loads(context["contents"][0]["text"])
    assert sum(len(v) for v in snapshot["areas"].values()) == 2
    assert snapshot["entities"] == 3
    assert "Only the first 2 of 3" in snapshot["truncated"]


async def test_requests_without_a_user_are_refused(
    hass: HomeAssistant, fake_entry: MockConfigEntry
) -> None:
    """The view always passes a user; if it ever did not, nothing is served."""
    from custom_components.mcp_gateway.mcp.server import McpServerError

    with pytest.raises(McpServerError):
        await GatewayHandler(hass).list_tools(ctx(None))


def test_gateway_names_are_unique_short_and_stable() -> None:
    """`<backend>_<title>`, no doubled prefix, ≤ 64 characters, numbered on clashes."""

    class Entry:
        def __init__(self, entry_id: str, kind: str, title: str) -> None:
            self.entry_id, self.title, self.data = entry_id, title, {"backend": kind}

    entries = [
        Entry("a", "hubitat", "Hubitat Elevation"),
        Entry("b", "hubitat", "Hubitat Elevation"),
        Entry("c", "robine_wake", "Robine Wake: Bedroom"),
        Entry("d", "homecast", "My " + "very " * 20 + "long home"),
        Entry("e", "homecast", "My " + "very " * 20 + "long home"),
        Entry("f", "homecast", ""),
    ]
    names = gateway_tool_names(entries)  # type: ignore[arg-type]
    assert names["a"] == "hubitat_elevation"
    assert names["b"] == "hubitat_elevation_2"
    assert names["c"] == "robine_wake_bedroom"
    assert names["d"].startswith("homecast_my_very_")
    assert len(names["d"]) <= 64
    assert names["e"].endswith("_2")
    assert len(names["e"]) <= 64
    assert names["f"] == "homecast_entry"
    assert len(set(names.values())) == len(names)


async def test_catalog_hoists_repeated_paragraphs(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A checklist repeated in many descriptions is listed once and referenced by each tool."""
    monkeypatch.setattr(catalog_module, "CATALOG_TTL", 0)
    checklist = "BEFORE CALLING: confirm the device with the user, then pass the key. " * 2
    runtime: FakeRuntime = fake_entry.runtime_data
    tools = fake_tools()
    for tool in tools[1:5]:
        tool["description"] += f"\n\n{checklist.strip()}"
    tools[1]["title"] = "Switch a thing"
    runtime.tools = tools
    data = _data(await _call(hass, hass_admin_user, GATEWAY))
    assert data["notes"] == {"note_1": checklist.strip()}
    by_name = {tool["name"]: tool for tool in data["tools"]}
    assert by_name["switch_thing"]["description"] == "Turn a device on or off."
    assert by_name["switch_thing"]["notes"] == ["note_1"]
    assert by_name["switch_thing"]["title"] == "Switch a thing"
    assert "notes" not in by_name["list_things"]
    assert checklist.strip() not in json.dumps(data["tools"])


async def test_concurrent_requests_list_a_backend_once(
    hass: HomeAssistant,
    hass_admin_user: MockUser,
    hass_user: User,
) -> None:
    """Requests arriving while a backend is being listed wait for that one listing."""
    entry = await add_fake_entry(hass)
    runtime: FakeRuntime = entry.runtime_data
    runtime.list_gate = asyncio.Event()
    handler = GatewayHandler(hass)
    all_arrived = asyncio.Event()

    class ObservedLock(asyncio.Lock):
        """Tells the test once every request has reached the entry's lock."""

        arrivals = 0

        async def acquire(self) -> bool:
            ObservedLock.arrivals += 1
            if ObservedLock.arrivals == 3:
                all_arrived.set()
            return await super().acquire()

    handler.catalog._locks[entry.entry_id] = ObservedLock()
    waiting = [
        hass.async_create_task(handler.list_tools(ctx(user)))
        for user in (hass_admin_user, hass_user, hass_admin_user)
    ]
    async with asyncio.timeout(10):  # a guard against a hang, not a timing assertion
        await all_arrived.wait()
    assert runtime.list_calls == 1  # the first request is listing; two wait behind it
    runtime.list_gate.set()
    listings = await asyncio.gather(*waiting)
    assert runtime.list_calls == 1
    assert all(GATEWAY in _names(tools) for tools in listings)


async def test_entries_of_one_kind_are_one_tool(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """tools/list does not grow per entry: a kind with several entries is one tool."""
    handler = GatewayHandler(hass)
    one = await handler.list_tools(ctx(hass_admin_user))
    await add_fake_entry(hass, "Barn", unique_id="hub-2")
    await add_fake_entry(hass, "Garage", unique_id="hub-3")
    three = await handler.list_tools(ctx(hass_admin_user))
    assert _names(three) == [*CORE, "hubitat"]
    kind = three[-1]
    assert kind["inputSchema"]["required"] == ["entry"]
    assert kind["inputSchema"]["properties"]["entry"]["enum"] == [
        GATEWAY,
        "hubitat_barn",
        "hubitat_garage",
    ]
    assert kind["annotations"]["destructiveHint"] is True  # reboot_hub is destructive
    # Each further entry adds its name, not another copy of the tool.
    growth = len(json.dumps(three)) - len(json.dumps(one))
    assert growth < 300, growth

    # Calls name the entry by gateway name, title or entry id.
    barn = hass.config_entries.async_entries(DOMAIN)[1]
    for entry in ("hubitat_barn", "Barn", barn.entry_id):
        result = await _call(
            hass, hass_admin_user, "hubitat", {"entry": entry, "tool": "list_things"}
        )
        assert result["isError"] is False, result
    assert barn.runtime_data.calls == [("list_things", {})] * 3
    catalog = _data(await _call(hass, hass_admin_user, "hubitat", {"entry": "hubitat_garage"}))
    assert catalog["gateway"] == "hubitat_garage"

    missing = _data(await _call(hass, hass_admin_user, "hubitat", {"tool": "list_things"}))
    assert missing["error"] == {
        "code": "invalid",
        "message": 'Give "entry", one of: hubitat_test_hub, hubitat_barn, hubitat_garage.',
    }
    unknown = _data(await _call(hass, hass_admin_user, "hubitat", {"entry": "attic"}))
    assert "has no entry 'attic'" in unknown["error"]["message"]

    # search_tools points at the listed tool, with the entry to pass.
    hits = _data(await _call(hass, hass_admin_user, "search_tools", {"query": "reboot hub"}))
    calls = [hit["call"] for hit in hits["results"] if hit["tool"] == "reboot_hub"]
    assert {call["name"] for call in calls} == {"hubitat"}
    assert {call["arguments"]["entry"] for call in calls} == {
        GATEWAY,
        "hubitat_barn",
        "hubitat_garage",
    }
    assert all(call["arguments"]["confirm"] is True for call in calls)
    guide = await handler.read_resource(ctx(hass_admin_user), "mcp-gateway://guide")
    assert '- `hubitat {"entry": "hubitat_barn"}`: hubitat “Barn”' in guide["contents"][0]["text"]
    backends = _data(await _call(hass, hass_admin_user, "list_backends"))["backends"]
    assert [(b["gateway_tool"], b["entry"]) for b in backends] == [
        ("hubitat", GATEWAY),
        ("hubitat", "hubitat_barn"),
        ("hubitat", "hubitat_garage"),
    ]


async def test_kind_name_reaches_a_single_entry(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """With one entry its own tool is listed; the kind's name reaches it too."""
    result = await _call(hass, hass_admin_user, "hubitat", {"tool": "list_things"})
    assert result["isError"] is False
    with pytest.raises(UnknownToolError):
        await _call(hass, hass_admin_user, "homecast", {})
