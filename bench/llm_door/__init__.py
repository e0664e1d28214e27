"""Benchmark only: HA's LLM tool path, reachable over HTTP, to attack it as an agent would.

A conversation agent (or HA's own MCP server) gets an LLM API's tools for its conversation's
user and calls them with `Tool.async_call`. `bench.attack` floods the "MCP Gateway" API that
way as a read-only user: POST /api/bench_llm_door {"tool": name, "args": {...}} runs one tool
through `helpers.llm` with the caller's user in the context, and answers what the model reads.
Configured from YAML: `bench_llm_door:`.
"""

from __future__ import annotations

from dataclasses import fields
from http import HTTPStatus
from typing import Any, Final

from aiohttp import web
from homeassistant.components.http import KEY_HASS, HomeAssistantView
from homeassistant.components.http.const import KEY_HASS_USER
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
from homeassistant.helpers.typing import ConfigType

DOMAIN: Final = "bench_llm_door"
URL: Final = "/api/bench_llm_door"
LLM_API: Final = "mcp_gateway"


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the view."""
    hass.http.register_view(LlmDoorView())
    return True


def _context(user_id: str) -> llm.LLMContext:
    """An LLMContext on any HA release (fields came and went between them)."""
    values: dict[str, Any] = {
        "platform": DOMAIN,
        "context": Context(user_id=user_id),
        "user_prompt": None,
        "language": "en",
        "assistant": "conversation",
        "device_id": None,
    }
    return llm.LLMContext(**{f.name: values[f.name] for f in fields(llm.LLMContext)})


class LlmDoorView(HomeAssistantView):
    """POST /api/bench_llm_door: one tool call through HA's LLM API, as the caller."""

    url = URL
    name = "api:bench_llm_door"
    requires_auth = True

    async def post(self, request: web.Request) -> web.Response:
        """Run the tool and answer the data the model would read."""
        hass = request.app[KEY_HASS]
        body = await request.json()
        instance = await llm.async_get_api(hass, LLM_API, _context(request[KEY_HASS_USER].id))
        tool = next((t for t in instance.tools if t.name == body["tool"]), None)
        if tool is None:
            return self.json({"error": "no such tool"}, HTTPStatus.NOT_FOUND)
        answer = await tool.async_call(
            hass, llm.ToolInput(body["tool"], body.get("args", {})), instance.llm_context
        )
        return self.json(getattr(answer, "data", answer))
