"""A gateway tool call that runs no tool: the backend's tools this user may use, with their
schemas, all or those it names; short tool names back to the backend's own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.auth.models import User

from ...mcp.types import CallToolResult
from ...permissions.policy import allowed_tiers
from ..catalog.gateway_tool import full_tool_name
from ..catalog.store import BackendCatalog, ExposedBackend, ToolFailure, catalog_listing
from .results import tool_result


def listing(
    user: User,
    backend: ExposedBackend,
    backend_catalog: BackendCatalog,
    arguments: Mapping[str, Any],
) -> CallToolResult:
    """The user's tools of a backend with their schemas: all, or those `describe` names.

    A `tool` or described name that is no tool of this user's raises ToolFailure naming theirs.
    """
    # Only a listing (or a wrong name) needs the user's whole view of the catalog.
    tiers = allowed_tiers(user)
    visible = {t.name: t for t in backend_catalog.tools.values() if t.tool_class.tier in tiers}
    name = arguments.get("tool")
    asked: list[str] | None = arguments.get("describe") if name is None else [name]
    if unknown := [n for n in asked or () if n not in visible]:
        raise ToolFailure(
            f"{backend.gateway_name} has no tool {', '.join(map(repr, unknown))}"
            f" for you. Its tools: {', '.join(visible) or 'none for you'}.",
            code="unknown_tool",
        )
    if "args" in arguments:
        raise ToolFailure('Give "tool" with "args".', code="invalid")
    listed = [visible[n] for n in dict.fromkeys(asked)] if asked else visible.values()
    return tool_result(
        {
            "gateway": backend.gateway_name,
            "backend": backend.kind,
            **catalog_listing(list(listed)),
        }
    )


def full_names(arguments: dict[str, Any], tools: Mapping[str, Any]) -> dict[str, Any]:
    """`tool` and `describe` with the backend's own names, also where the listing's short
    form was used (gateway_tool.tool_listing)."""
    if (name := arguments.get("tool")) is not None:
        arguments["tool"] = full_tool_name(tools, name)
    if (names := arguments.get("describe")) is not None:
        arguments["describe"] = [full_tool_name(tools, item) for item in names]
    return arguments
