"""A backend's answer that lists devices (`lists_devices`), cut to what the caller may read
and what is exposed to assistants, with a note of how much was withheld."""

from __future__ import annotations

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ...framework.base import BackendRuntime, UnknownListing
from ...mcp.client import ToolResult
from ...mcp.types import CallToolResult
from ...permissions.exposure import CallerView
from ..catalog.store import ExposedBackend
from .results import error_result, tool_result


def filtered(
    hass: HomeAssistant,
    user: User,
    backend: ExposedBackend,
    runtime: BackendRuntime,
    name: str,
    *,
    result: CallToolResult,
) -> CallToolResult:
    """A listing's answer with only what the caller may read and what is exposed, and a
    note of how much was withheld; an answer the backend cannot filter is refused."""
    answer = ToolResult(result.get("content", []), result.get("structuredContent"))
    try:
        data, withheld = runtime.filter_listing(name, answer.data, CallerView(hass, user, runtime))
    except UnknownListing:
        return error_result(
            f"{backend.entry.title} answered {name} in a form the gateway cannot filter "
            "for this user's permissions and exposure, so it is withheld.",
            code="forbidden",
        )
    if withheld and isinstance(data, dict):
        data["_gateway"] = {
            "withheld": withheld,
            "note": f"{withheld} item(s) this user may not read, or not exposed to "
            "assistants, were left out.",
        }
    return tool_result(data) if isinstance(data, dict) else tool_result({"result": data})
