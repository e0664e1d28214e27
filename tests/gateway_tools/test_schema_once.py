"""Every tool's input schema is declared once: tools/list publishes what the calls validate."""

from __future__ import annotations

import json
from typing import Any
from unittest.mock import patch

from homeassistant.core import HomeAssistant
from hypothesis import example, given, strategies as st
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.catalog import gateway_tool
from custom_components.mcp_gateway.gateway.catalog.gateway_tool import (
    GATEWAY_TOOL_SCHEMA,
    checked_arguments,
)
from custom_components.mcp_gateway.gateway.catalog.schemas.subset import schema_problems
from custom_components.mcp_gateway.gateway.catalog.store import ToolFailure
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext

from .conftest import add_fake_entry

GATEWAY = "hubitat_test_hub"


def _ctx(user: MockUser) -> RequestContext:
    return RequestContext(
        protocol_version="2025-11-25", client_name="pytest", user=user, request_id=1
    )


def _error(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True, result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


async def test_each_listed_schema_is_the_one_its_calls_accept(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A property no published schema has is refused, naming exactly the published ones."""
    await add_fake_entry(hass, "Barn", unique_id="hub-2")
    handler = GatewayHandler(hass)
    tools = await handler.list_tools(_ctx(hass_admin_user))
    assert {tool["name"] for tool in tools} >= {"get_state", "set_state", "hubitat"}
    for tool in tools:
        schema = tool["inputSchema"]
        assert schema_problems(schema) == [], tool["name"]
        arguments: dict[str, Any] = {"not_a_property": 1}
        published = list(schema["properties"])
        if "entry" in published:
            # A kind's tool takes the entry first, then is the gateway tool of that entry.
            arguments["entry"] = GATEWAY
            published.remove("entry")
        error = _error(await handler.call_tool(_ctx(hass_admin_user), tool["name"], arguments))
        assert error["code"] == "invalid"
        accepted = f"(accepted: {', '.join(published) or 'none'})"
        assert f"arguments.not_a_property is not accepted {accepted}" in error["message"]


async def test_the_gateway_tool_publishes_the_schema_it_validates(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change to the one declaration shows in tools/list and in the calls alike."""
    handler = GatewayHandler(hass)
    monkeypatch.setitem(GATEWAY_TOOL_SCHEMA["properties"]["describe"], "maxItems", 1)
    tools = await handler.list_tools(_ctx(hass_admin_user))
    gateway = next(tool for tool in tools if tool["name"] == GATEWAY)
    assert gateway["inputSchema"] is GATEWAY_TOOL_SCHEMA
    assert gateway["inputSchema"]["properties"]["describe"]["maxItems"] == 1
    two = {"describe": ["list_things", "switch_thing"]}
    error = _error(await handler.call_tool(_ctx(hass_admin_user), GATEWAY, two))
    assert error == {
        "code": "invalid",
        "message": "Invalid arguments: arguments.describe must have at most 1 items.",
    }


@pytest.mark.parametrize(
    "case",
    [
        # `args` is JSON text in the schema; what the text (or a client's object) holds must be
        # an object.
        ({"tool": "list_things", "args": 5}, "invalid", "arguments.args must be object"),
        ({"tool": "list_things", "args": "[1]"}, "invalid", '"args" must be a JSON object'),
        ({"describe": ["list_things"] * 51}, "invalid", "describe must have at most 50 items"),
        # No portable schema bounds a string's length: an empty name is no tool.
        ({"describe": [""]}, "unknown_tool", "hubitat_test_hub has no tool ''"),
    ],
)
async def test_gateway_tool_arguments_outside_the_schema(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    case: tuple[dict[str, Any], str, str],
) -> None:
    """What the published schema (and the JSON text it asks for) refuses, the call refuses."""
    arguments, code, message = case
    error = _error(await GatewayHandler(hass).call_tool(_ctx(hass_admin_user), GATEWAY, arguments))
    assert error["code"] == code
    assert message in error["message"]


_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(max_size=6),
    st.lists(st.text(max_size=4), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


def _outcome(arguments: dict[str, Any]) -> Any:
    try:
        return checked_arguments(dict(arguments))
    except ToolFailure as err:
        return (err.code, str(err))


@given(
    st.fixed_dictionaries(
        {},
        optional={
            # Mostly what each property should hold, sometimes anything.
            "tool": st.one_of(st.text(min_size=1, max_size=6), _VALUES),
            "args": st.one_of(st.dictionaries(st.text(max_size=4), st.integers()), _VALUES),
            "describe": st.one_of(st.lists(st.text(min_size=1, max_size=4)), _VALUES),
            "confirm": _VALUES,
            "extra": _VALUES,
        },
    )
)
@example({"tool": "t", "describe": ["t"]})
@example({"tool": "t", "args": {}, "confirm": 1})
def test_the_plain_call_shortcut_decides_as_the_schema_does(arguments: dict[str, Any]) -> None:
    """`{"tool", "args"}` (the shape of nearly every call) skips the generic validator; for
    any arguments, checked or refused, the outcome is the validator's own."""
    with patch.object(gateway_tool, "_plain_call", return_value=False):
        expected = _outcome(arguments)
    assert _outcome(arguments) == expected


@pytest.mark.parametrize(
    ("arguments", "fast"),
    [
        ({"tool": "t", "args": {}}, True),
        ({"tool": "t", "args": {"id": "5"}, "confirm": True}, True),
        ({"tool": "t", "args": {}, "describe": ["t"]}, False),
        ({"tool": "t", "args": {}, "confirm": "yes"}, False),
        ({"tool": "t"}, False),
        ({"tool": 5, "args": {}}, False),
    ],
)
def test_which_calls_take_the_shortcut(arguments: dict[str, Any], fast: bool) -> None:
    """Only what the schema plainly accepts as it is skips the validator."""
    assert gateway_tool._plain_call(arguments) is fast
