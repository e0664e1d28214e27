"""search_tools: the core tool that finds tools by what they do, across the core tools and every
backend catalog the caller sees, with a ready call for the best."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ...framework.base import ToolTier
from ...permissions.policy import allowed_tiers
from .gateway_tool import listed_names
from .ranking import first_line, rank_hits
from .store import BackendTool, CoreTool, GatewayCatalog

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

DEFAULT_SEARCH_LIMIT: Final = 5
MAX_SEARCH_LIMIT: Final = 20

SEARCH_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What you want to do, in plain words."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SEARCH_LIMIT,
            "description": f"Results (default {DEFAULT_SEARCH_LIMIT}).",
        },
        "schemas": {
            "type": "boolean",
            "description": "true: every result with its input schema (default: the best only).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def search_tool(catalog: GatewayCatalog, core_tools: Mapping[str, CoreTool]) -> CoreTool:
    """search_tools over the catalog and `core_tools`, the core tools on offer (itself
    among them once it is added)."""

    async def run(hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]) -> dict[str, Any]:
        return await _async_search(catalog, core_tools, ctx.user, args)

    return CoreTool(
        name="search_tools",
        title="Search tools",
        description=(
            "Find tools by what they do, across the core tools and every backend: one line "
            "per match, best first."
        ),
        input_schema=SEARCH_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=run,
    )


async def _async_search(
    catalog: GatewayCatalog,
    core_tools: Mapping[str, CoreTool],
    user: User,
    args: dict[str, Any],
) -> dict[str, Any]:
    """The hits for `query`, best first: one line each; the best (or, with `schemas`, each)
    with its input schema, and a ready call where the listing alone does not say it."""
    tiers = allowed_tiers(user)
    core = [tool for tool in core_tools.values() if tool.tier in tiers]
    visible = await catalog.async_visible(user)
    index, refs = catalog.search_index(user, core, visible)
    listed = listed_names([backend for backend, _, _ in visible])
    subs: dict[tuple[str, str], BackendTool] = {
        (backend.gateway_name, tool.name): tool for backend, _, tools in visible for tool in tools
    }
    limit = args.get("limit") or DEFAULT_SEARCH_LIMIT
    hits = rank_hits(index, refs, subs, args["query"], limit, core=core_tools)
    results = []
    for position, (gateway, name) in enumerate(hits):
        with_schema = position == 0 or bool(args.get("schemas"))
        if gateway is None:
            core_tool = core_tools[name]
            item: dict[str, Any] = {
                "tool": name,
                "about": first_line(core_tool.description),
                "tier": str(core_tool.tier),
            }
            if with_schema:
                item["inputSchema"] = core_tool.input_schema
            results.append(item)
            continue
        sub = subs[(gateway, name)]
        item = {
            "tool": name,
            "gateway": gateway,
            "about": first_line(sub.description) or sub.title,
            "tier": str(sub.tool_class.tier),
        }
        if sub.tool_class.destructive:
            item["destructive"] = True
        # A kind with several entries is listed as one tool that takes the entry: every
        # hit of such a kind says which, as its entry's own name is not in tools/list.
        tool_name, entry = listed.get(gateway, (gateway, None))
        if with_schema:
            item["inputSchema"] = sub.input_schema
        if with_schema or entry is not None:
            takes = bool(sub.input_schema.get("properties"))
            call: dict[str, Any] = {} if entry is None else {"entry": entry}
            call |= {"tool": name, "args": "{...}" if takes else "{}"}
            if sub.tool_class.destructive:
                call["confirm"] = True
            item["call"] = {"name": tool_name, "arguments": call}
        results.append(item)
    return {"query": args["query"], "count": len(results), "results": results}
