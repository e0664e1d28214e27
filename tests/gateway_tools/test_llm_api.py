"""HA's own assistants reach the gateway's tools through HA's LLM API, as their user."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
import voluptuous as vol

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.settings import CONF_EXPOSED_ONLY
from custom_components.mcp_gateway.gateway.llm_api import (
    API_PROMPT,
    LLM_API_ID,
    GatewayLlmApi,
    GatewayLlmTool,
    voluptuous_schema,
)
from custom_components.mcp_gateway.gateway.tools.get_state import GET_STATE_SCHEMA
from custom_components.mcp_gateway.gateway.tools.set_state import SET_STATE_SCHEMA
from custom_components.mcp_gateway.permissions.exposure import require_exposed
from custom_components.mcp_gateway.permissions.policy import PermissionDenied
from custom_components.mcp_gateway.registry import BACKENDS

from .conftest import FakeRuntime

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"
GATEWAY = "hubitat_test_hub"

try:  # HA 2026.x renders tool parameters as JSON schema with probatio (mcp_server/server.py)
    from probatio import to_openapi as convert
except ImportError:  # HA 2025.4 does it with voluptuous_openapi (helpers/llm.py)
    from voluptuous_openapi import convert


def llm_context(user_id: str | None) -> llm.LLMContext:
    """An LLMContext on any HA version (2025.4 has user_prompt, later ones do not)."""
    values: dict[str, Any] = {
        "platform": "test_agent",
        "context": Context(user_id=user_id),
        "user_prompt": "turn on the kitchen plug",
        "language": "en",
        "assistant": "conversation",
        "device_id": None,
    }
    return llm.LLMContext(**{f.name: values[f.name] for f in fields(llm.LLMContext)})


async def _instance(hass: HomeAssistant, user_id: str | None) -> llm.APIInstance:
    return await llm.async_get_api(hass, LLM_API_ID, llm_context(user_id))


async def call(instance: llm.APIInstance, name: str, args: dict[str, Any]) -> Any:
    """APIInstance.async_call_tool without its conversation trace, and the answer's data.

    The trace imports HA's conversation component, whose requirement hassil is a core
    dependency on 2025.4 but only the component's own requirement (not installed here) on 2026.x.
    """
    tool = next((tool for tool in instance.tools if tool.name == name), None)
    if tool is None:  # as helpers/llm.py APIInstance.async_call_tool refuses it
        raise HomeAssistantError(f'Tool "{name}" not found')
    result = await tool.async_call(
        instance.api.hass, llm.ToolInput(name, args), instance.llm_context
    )
    tool_result = getattr(llm, "ToolResult", None)
    if tool_result is None:  # 2025.4: the answer is the dict itself
        return result
    # 2026.x deprecates a bare dict; an error answer is flagged as one.
    assert isinstance(result, tool_result)
    assert result.error == ("error" in result.data)
    return result.data


async def test_api_is_registered(hass: HomeAssistant, fake_entry: MockConfigEntry) -> None:
    """HA's assistants (and HA's mcp_server) can pick it like Assist."""
    apis = {api.id: api.name for api in llm.async_get_apis(hass)}
    assert apis[LLM_API_ID] == "MCP Gateway"


async def test_admin_controls_through_the_llm_api(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """The admin's conversation lists every tool and runs set_state and a backend tool."""
    instance = await _instance(hass, hass_admin_user.id)
    names = [tool.name for tool in instance.tools]
    assert names == [
        "search_tools",
        "get_state",
        "set_state",
        "get_history",
        "list_backends",
        "automations",
        GATEWAY,
    ]
    # Each tool names its integration (HA 2026.x reports tools that do not).
    assert {getattr(tool, "integration", None) for tool in instance.tools} == {"mcp_gateway"}
    result = await call(instance, "set_state", {"updates": [{"entity_id": PLUG, "state": "on"}]})
    assert result["updated"] == 1
    assert hass.states.get(PLUG).state == "on"
    backend = await call(instance, GATEWAY, {"tool": "set_mode", "args": '{"mode": "away"}'})
    assert backend == {"ok": True, "tool": "set_mode"}
    runtime: FakeRuntime = fake_entry.runtime_data
    assert runtime.calls[-1] == ("set_mode", {"mode": "away"})


async def test_read_only_user_only_reads(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_read_only_user: MockUser
) -> None:
    """A read-only user's assistant gets read tools; a write is refused, nothing changes."""
    instance = await _instance(hass, hass_read_only_user.id)
    names = {tool.name for tool in instance.tools}
    assert "set_state" not in names
    assert {"get_state", "search_tools", GATEWAY} <= names
    state = await call(instance, "get_state", {"area": "kitchen"})
    assert [item["entity_id"] for item in state["entities"]] == [PLUG]
    with pytest.raises(HomeAssistantError, match="not found"):
        await call(instance, "set_state", {"updates": [{"entity_id": PLUG, "state": "on"}]})
    refused = await call(instance, GATEWAY, {"tool": "set_mode", "args": '{"mode": "away"}'})
    assert refused["error"]["code"] == "forbidden"
    assert hass.states.get(PLUG).state == "off"


async def test_no_user_no_tools(hass: HomeAssistant, fake_entry: MockConfigEntry) -> None:
    """Without a user there are no permissions to apply: no tools, and a call is refused."""
    instance = await _instance(hass, None)
    assert instance.tools == []
    api = next(api for api in llm.async_get_apis(hass) if api.id == LLM_API_ID)
    assert isinstance(api, GatewayLlmApi)
    with pytest.raises(HomeAssistantError, match="need a Home Assistant user") as refused:
        await GatewayLlmTool(api, {"name": "get_state"}).async_call(
            hass, llm.ToolInput("get_state", {}), llm_context(None)
        )
    # Translated, as every error a user sees (the text above is strings.json's).
    assert refused.value.translation_domain == DOMAIN
    assert refused.value.translation_key == "llm_api_no_user"


def test_prompt_names_no_backend() -> None:
    """A new backend edits no prompt: the text says what the tools do, not which backends."""
    assert all(
        kind.replace("_", " ") not in API_PROMPT.lower() for kind in (row.kind for row in BACKENDS)
    )
    assert "get_state" in API_PROMPT


def test_parameters_survive_hass_conversion() -> None:
    """HA's agents convert the parameters back to JSON schema: names, types, enums, required."""
    converted = convert(voluptuous_schema(SET_STATE_SCHEMA))
    updates = converted["properties"]["updates"]
    assert converted["required"] == ["updates"]
    assert updates["type"] == "array"
    item = updates["items"]
    # An update names its entity by entity_id or by name (and home).
    assert item.get("required", []) == []
    assert item["properties"]["name"]["type"] == "string"
    assert converted["properties"]["home"]["type"] == "string"
    assert item["properties"]["brightness_pct"]["type"] == "number"
    assert item["properties"]["brightness_pct"]["maximum"] == 100
    assert item["properties"]["state"]["description"].startswith("on/off")
    state = convert(voluptuous_schema(GET_STATE_SCHEMA))
    assert state["properties"]["available"] == {
        "type": "boolean",
        "description": GET_STATE_SCHEMA["properties"]["available"]["description"],
    }
    assert state["properties"]["domain"]["items"] == {"type": "string"}


async def test_exposure_follows_ha_settings(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Only entities exposed to assistants are reachable, unless the gateway setting says all."""
    assert await async_setup_component(hass, "homeassistant", {})
    async_expose_entity(hass, "conversation", PLUG, False)
    instance = await _instance(hass, hass_admin_user.id)
    state = await call(instance, "get_state", {})
    # The plug is hidden from assistants; the lamp is exposed by HA's defaults for lights,
    # a plain sensor without a device class is not.
    assert [item["entity_id"] for item in state["entities"]] == [LAMP]
    refused = await call(instance, "set_state", {"updates": [{"entity_id": PLUG, "state": "on"}]})
    assert refused["error"]["code"] == "failed"
    assert hass.states.get(PLUG).state == "off"
    # A backend tool addressing the hidden plug's device is refused too.
    device_call = await call(
        instance, GATEWAY, {"tool": "switch_thing", "args": '{"device": "1", "on": true}'}
    )
    assert device_call["error"]["code"] == "forbidden"
    assert "not exposed" in device_call["error"]["message"]

    settings = MockConfigEntry(
        domain="mcp_gateway", data={"backend": "gateway"}, options={CONF_EXPOSED_ONLY: False}
    )
    settings.add_to_hass(hass)
    everything = await call(instance, "get_state", {})
    assert [item["entity_id"] for item in everything["entities"]] == [LAMP, THERMO, PLUG]


async def test_a_device_is_exposed_through_any_of_its_entities(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """HA exposes entities, not devices: one exposed entity makes its device reachable."""
    assert await async_setup_component(hass, "homeassistant", {})
    async_expose_entity(hass, "conversation", PLUG, False)
    async_expose_entity(hass, "conversation", LAMP, True)
    require_exposed(hass, hass_admin_user, {"1": [PLUG, LAMP]}, "tool")
    with pytest.raises(PermissionDenied, match=f"addresses {PLUG}, not exposed"):
        require_exposed(hass, hass_admin_user, {"1": [LAMP], "2": [PLUG]}, "tool")
    # An address no entity stands for has no exposure to consult: refused, admins included.
    with pytest.raises(PermissionDenied, match="no Home Assistant entity"):
        require_exposed(hass, hass_admin_user, {"1": [LAMP], "023": []}, "tool")


async def test_a_backend_failure_reads_as_an_error(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A backend's plain-text failure reaches the model as an error carrying that text."""
    instance = await _instance(hass, hass_admin_user.id)
    answer = await call(instance, GATEWAY, {"tool": "broken_tool"})
    assert answer == {"error": {"message": "Error: relay offline"}}


@pytest.mark.parametrize(
    ("result", "answer"),
    [
        # structuredContent says it all: it is the answer.
        (
            {"content": [{"type": "text", "text": "2 alarms"}], "structuredContent": {"n": 2}},
            {"n": 2},
        ),
        # The gateway's own results are one JSON object as text.
        ({"content": [{"type": "text", "text": '{"ok": true}'}]}, {"ok": True}),
        # Anything else is wrapped, parsed where it is JSON, so the model reads one object.
        ({"content": [{"type": "text", "text": "[1, 2]"}]}, {"result": [1, 2]}),
        ({"content": [{"type": "text", "text": "Done."}]}, {"result": "Done."}),
        (
            {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"result": "a\nb"},
        ),
        # An error without words still says it failed.
        ({"content": [], "isError": True}, {"error": {"message": "The tool failed."}}),
    ],
)
def test_answers_are_one_object(result: dict[str, Any], answer: dict[str, Any]) -> None:
    """HA's assistants take a JSON object: each shape of MCP result becomes one."""
    assert GatewayLlmTool._answer(result) == answer


def test_choices_and_bounds_are_checked_as_declared() -> None:
    """An enum is a choice and numeric bounds hold, in HA's own validation of tool input."""
    schema = voluptuous_schema(
        {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": ["home", "away"]},
                "level": {"type": "integer", "minimum": 0, "maximum": 10},
            },
            "required": ["mode"],
        }
    )
    assert schema({"mode": "away", "level": 3}) == {"mode": "away", "level": 3}
    for bad in ({"mode": "party"}, {"mode": "home", "level": 11}, {"level": 1}):
        with pytest.raises(vol.Invalid):
            schema(bad)
    assert convert(schema)["properties"]["mode"]["enum"] == ["home", "away"]
