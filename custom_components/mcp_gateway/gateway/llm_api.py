"""The gateway's tools for Home Assistant's own assistants, as an LLM API.

HA's conversation agents (and HA's own MCP server) reach tools through `helpers.llm`: an
`llm.API` registered with `async_register_api` hands out `llm.Tool`s per conversation. This
API offers exactly what the MCP gateway offers the same Home Assistant user, and runs it through
the same handler, so permissions, exposure and the logbook are the gateway's own.

Written against what HA 2025.4 and later share: `llm.API` (a kw-only dataclass with `hass`, `id`,
`name` and `async_get_api_instance`), `llm.APIInstance(api, api_prompt, llm_context, tools)`,
`llm.Tool` (`name`, `description`, `parameters`, `async_call(hass, tool_input, llm_context)`),
`llm.ToolInput.tool_name/tool_args` and `llm.LLMContext.context/platform`. Fields that came or
went between versions (`LLMContext.user_prompt`, `ToolInput.external`) are not used; HA 2026.x
additions (`llm.ToolResult`, `Tool.integration`) are used where they exist.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import json
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.util.json import JsonObjectType
import voluptuous as vol

from ..core.const import DOMAIN
from ..mcp.server import LEGACY_VERSIONS, RequestContext, ServerHandler
from ..mcp.types import CallToolResult, Tool
from ..permissions.limits import charge_user
from .catalog.store import ToolFailure

LLM_API_ID: Final = DOMAIN
LLM_API_NAME: Final = "MCP Gateway"
API_PROMPT: Final = (
    # No backend by name: the registry (backends/registry.py) is the one list of them.
    "These tools reach the devices of the MCP backends Home Assistant connects through the "
    "MCP Gateway, as the user asking. Use get_state to read entities (filter by area, name or "
    "available=false for offline devices), set_state to change them, search_tools to find a "
    "backend's own tool (rules, scenes, alarms), and the backend's gateway tool to run it."
)

# HA 2026.x wraps a tool's answer in llm.ToolResult and logs a bare dict as deprecated (an
# error from 2027.11); 2025.4 has no ToolResult and takes the dict itself.
_TOOL_RESULT: Final[Callable[..., Any] | None] = getattr(llm, "ToolResult", None)

_TYPES: Final[Mapping[str, Any]] = {
    "string": str,
    "integer": int,
    "number": vol.Coerce(float),
    "boolean": bool,
}


def voluptuous_schema(schema: Mapping[str, Any]) -> vol.Schema:
    """A portable JSON schema (schemas/subset.py) as the voluptuous schema HA's llm helpers take.

    HA's agents turn it back into JSON schema with voluptuous_openapi; types, enums, bounds,
    nesting, required keys and descriptions survive the round trip.
    """
    return vol.Schema(_object(schema))


def _object(schema: Mapping[str, Any]) -> dict[Any, Any]:
    required = set(schema.get("required", ()))
    fields: dict[Any, Any] = {}
    for name, item in schema.get("properties", {}).items():
        marker = vol.Required if name in required else vol.Optional
        fields[marker(name, description=item.get("description"))] = _value(item)
    return fields


def _value(schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "object":
        return vol.Schema(_object(schema))
    if kind == "array":
        return [_value(schema.get("items", {"type": "string"}))]
    if kind == "string" and isinstance(enum := schema.get("enum"), list):
        return vol.In(list(enum))
    base = _TYPES.get(str(kind), str)
    if kind in ("integer", "number") and ("minimum" in schema or "maximum" in schema):
        return vol.All(base, vol.Range(min=schema.get("minimum"), max=schema.get("maximum")))
    return base


def rate_limited_result(wait: int) -> CallToolResult:
    """The tool result of a call refused by the rate limit (the gateway's ToolFailure shape)."""
    failure = ToolFailure(
        f"Rate limit exceeded; retry in {wait} s", code="rate_limited", retry_after=wait
    )
    return {
        "content": [{"type": "text", "text": json.dumps(failure.as_structured())}],
        "isError": True,
    }


class GatewayLlmTool(llm.Tool):
    """One gateway tool (core or a backend's gateway tool), run as the conversation's user."""

    # HA 2026.x reports a tool without its integration (an error from 2027.10); 2025.4 ignores it.
    integration: str | None = DOMAIN

    def __init__(self, api: GatewayLlmApi, definition: Tool) -> None:
        """Take the tool's MCP definition."""
        self.api = api
        self.name = str(definition["name"])
        self.description = str(definition.get("description") or "")
        self.parameters = voluptuous_schema(definition.get("inputSchema", {}))

    async def async_call(
        self, hass: HomeAssistant, tool_input: llm.ToolInput, llm_context: llm.LLMContext
    ) -> Any:
        """Run it through the gateway; its answer (or error) is what the model reads.

        An llm.ToolResult (flagged as an error when the gateway's answer is one) where HA has
        it, else the answer's dict.
        """
        ctx = await self.api.request_context(llm_context)
        if (wait := charge_user(hass, ctx.user)) is not None:
            # The gateway's per-user limit, as over HTTP: a model in a loop cannot outrun it.
            result = rate_limited_result(wait)
        else:
            result = await self.api.handler().call_tool(ctx, self.name, dict(tool_input.tool_args))
        data = self._answer(result)
        if _TOOL_RESULT is None:
            return data
        return _TOOL_RESULT(data=data, error=bool(result.get("isError")))

    @staticmethod
    def _answer(result: CallToolResult) -> JsonObjectType:
        structured = result.get("structuredContent")
        if isinstance(structured, dict):
            return structured
        texts = [part.get("text", "") for part in result.get("content", ()) if part]
        text = "\n".join(t for t in texts if isinstance(t, str))
        try:
            parsed: Any = json.loads(text)
        except ValueError:
            parsed = None
        # The gateway's own results, errors included, are one JSON object as text.
        if isinstance(parsed, dict):
            return parsed
        if result.get("isError"):
            return {"error": {"message": text or "The tool failed."}}
        return {"result": text if parsed is None else parsed}


@dataclass(kw_only=True)
class GatewayLlmApi(llm.API):
    """The gateway's tools for HA's assistants, with the conversation user's permissions."""

    handler: Callable[[], ServerHandler]

    async def request_context(self, llm_context: llm.LLMContext) -> RequestContext:
        """The gateway request of a conversation: its user, and its agent as the client."""
        context = llm_context.context
        user_id = context.user_id if context is not None else None
        user: User | None = await self.hass.auth.async_get_user(user_id) if user_id else None
        if user is None:
            # The gateway's permissions are a user's; a satellite's anonymous request has none.
            raise HomeAssistantError(translation_domain=DOMAIN, translation_key="llm_api_no_user")
        return RequestContext(
            protocol_version=LEGACY_VERSIONS[0],
            client_name=f"Home Assistant {llm_context.platform}",
            user=user,
            request_id=None,
        )

    async def async_get_api_instance(self, llm_context: llm.LLMContext) -> llm.APIInstance:
        """The tools this conversation's user may use, as the MCP gateway would list them."""
        try:
            ctx = await self.request_context(llm_context)
        except HomeAssistantError:
            tools: list[llm.Tool] = []
        else:
            listed = await self.handler().list_tools(ctx)
            tools = [GatewayLlmTool(self, definition) for definition in listed]
        return llm.APIInstance(
            api=self, api_prompt=API_PROMPT, llm_context=llm_context, tools=tools
        )


@callback
def async_register_llm_api(
    hass: HomeAssistant, handler: Callable[[], ServerHandler]
) -> Callable[[], None]:
    """Offer the gateway's tools to HA's assistants; returns the unregister callback."""
    return llm.async_register_api(
        hass, GatewayLlmApi(hass=hass, id=LLM_API_ID, name=LLM_API_NAME, handler=handler)
    )
