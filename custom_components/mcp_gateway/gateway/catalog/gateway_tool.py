"""The gateway tools: one per exposed backend entry (or per kind with several), and its calls.

A gateway tool names its backend's tools but never inlines their schemas (tools/list stays
small); its arguments ask for a listing, a description of some tools, or one tool's run.
`GATEWAY_TOOL_SCHEMA` is their one declaration: tools/list publishes that object and
`checked_arguments` validates against it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
import json
from typing import Any, Final

from homeassistant.util import slugify

from ...framework.base import ToolTier
from ...mcp.types import Tool, ToolAnnotations
from .schemas.validate import lift_single_items, schema_errors
from .store import BackendTool, ExposedBackend, ToolFailure, tool_annotations

# Tools one selective catalog call may describe.
MAX_DESCRIBE: Final = 50

GATEWAY_TOOL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "tool": {
            "type": "string",
            "description": "Tool to run; no arguments: every tool with its schema.",
        },
        # Free-form objects are what no strict function-calling dialect accepts
        # (OpenAI strict, Gemini): the schema declares JSON text, the one type both take,
        # and says (as schemas/convert.py notes other types) that the object itself is taken too.
        "args": {
            "type": "string",
            "description": "That tool's arguments as JSON text (also accepts object).",
        },
        "describe": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": MAX_DESCRIBE,
            "description": "Tools to describe.",
        },
        "confirm": {
            "type": "boolean",
            "description": "true to run a destructive tool.",
        },
    },
    "required": [],
    "additionalProperties": False,
}


# Fewer names than this are listed as they are.
_FACTOR_FROM: Final = 8


def tool_listing(names: Sequence[str]) -> str:
    """The tools' names for a description; a prefix they all share is written once.

    Hubitat's ~120 tools all begin `hub_`: said once, that is 500 bytes less in tools/list.
    `full_tool_name` takes the short names back.
    """
    head, sep, _ = names[0].partition("_") if names else ("", "", "")
    prefix = head + sep
    if not sep or len(names) < _FACTOR_FROM or not all(n.startswith(prefix) for n in names):
        return f"Tools: {', '.join(names)}."
    short = ", ".join(name.removeprefix(prefix) for name in names)
    return f'Tools, each named "{prefix}" + one of: {short}.'


def full_tool_name(tools: Collection[str], name: str) -> str:
    """A tool's own name, also from the short form a listing shows (`get_info` for
    `hub_get_info`): when exactly one tool is a one-word prefix plus the name."""
    if name in tools:
        return name
    found = [
        tool for tool in tools if tool.endswith(f"_{name}") and "_" not in tool[: -len(name) - 1]
    ]
    return found[0] if len(found) == 1 else name


def checked_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A gateway tool's arguments as the handler runs them, checked against GATEWAY_TOOL_SCHEMA.

    Empty values are dropped and `args` given as JSON text comes back as its object
    (gateway_arguments); anything invalid raises ToolFailure ("invalid").
    """
    try:
        checked = gateway_arguments(arguments)
    except ValueError as err:
        raise ToolFailure(str(err), code="invalid") from err
    if _plain_call(checked):
        return checked  # what nearly every call is, and what the schema accepts as it is
    # The schema asks for `args` as JSON text, now parsed: the schema judges the rest, and
    # `args` must be what that text is asked to hold (or the object a client sent instead).
    args = checked.pop("args", None)
    checked = lift_single_items(GATEWAY_TOOL_SCHEMA, checked)
    errors = schema_errors(GATEWAY_TOOL_SCHEMA, checked)
    if args is not None:
        if not isinstance(args, dict):
            errors.append("arguments.args must be object")
        checked["args"] = args
    if errors:
        raise ToolFailure(f"Invalid arguments: {'; '.join(errors)}.", code="invalid")
    if "describe" in checked and ("tool" in checked or "args" in checked):
        raise ToolFailure(
            'Give "describe" to read tools\' schemas, or "tool" with "args" to run one.',
            code="invalid",
        )
    return checked


def _plain_call(checked: dict[str, Any]) -> bool:
    """`{"tool": text, "args": object}`, perhaps with `"confirm": true`: valid as it stands."""
    if type(checked.get("tool")) is not str or type(checked.get("args")) is not dict:
        return False
    return len(checked) == 2 or (len(checked) == 3 and checked.get("confirm") is True)


def gateway_tool_definition(
    backend: ExposedBackend, tools: Sequence[BackendTool], *, catalog_known: bool = True
) -> Tool:
    """The gateway tool of one entry: names its tools (never their schemas, to keep lists small)."""
    kind_label = backend.kind.replace("_", " ").title()
    title = backend.entry.title or kind_label
    if kind_label.casefold() not in title.casefold():
        title = f"{title} ({kind_label})"
    if tools:
        listing = tool_listing([tool.name for tool in tools])
    elif backend.runtime is None or not catalog_known:
        listing = "The backend is not connected right now; see list_backends."
    else:
        listing = "No tools of this backend are available to you."
    # How to call it is the schema's to say (its properties' descriptions), not repeated here.
    kind = backend.kind.replace("_", " ")
    description = f"Gateway to the {kind} backend '{backend.entry.title}'. {listing}"
    return {
        "name": backend.gateway_name,
        "title": title,
        "description": description,
        "inputSchema": GATEWAY_TOOL_SCHEMA,
        "annotations": _annotations(title, tools),
    }


def _annotations(title: str, tools: Collection[BackendTool]) -> ToolAnnotations:
    """A gateway tool's hints from the tools it runs: read-only only if every one is, and
    destructive if any is (or any admin tool where it is not read-only)."""
    read_only = bool(tools) and all(t.tool_class.tier is ToolTier.READ for t in tools)
    destructive = any(t.tool_class.destructive for t in tools) or (
        not read_only and any(t.tool_class.tier is ToolTier.ADMIN for t in tools)
    )
    return tool_annotations(
        title=title,
        read_only=read_only,
        destructive=destructive,
        idempotent=False,
        open_world=True,
    )


def listed_names(backends: Sequence[ExposedBackend]) -> dict[str, tuple[str, str | None]]:
    """Gateway name → (the tool tools/list shows for it, the `entry` argument that tool needs).

    A kind with one exposed entry keeps that entry's own gateway tool; a kind with several is
    one tool named after the kind, taking the entry, so tools/list does not grow per entry.
    """
    kinds = Counter(backend.kind for backend in backends)
    return {
        backend.gateway_name: (backend.kind, backend.gateway_name)
        if kinds[backend.kind] > 1
        else (backend.gateway_name, None)
        for backend in backends
    }


def kind_tool_definition(
    kind: str, members: Sequence[tuple[ExposedBackend, bool, Sequence[BackendTool]]]
) -> Tool:
    """One tool for every exposed entry of a backend kind: names the entries and their tools.

    `members` holds each entry with whether its catalog is known and the tools the user may
    call. Entries of one kind share most tools, so the union of names is listed once.
    """
    kind_label = kind.replace("_", " ").title()
    tools: dict[str, BackendTool] = {}
    noted: list[str] = []
    for backend, catalog_known, visible in members:
        for tool in visible:
            tools.setdefault(tool.name, tool)
        # The entries are the schema's enum; only what their names do not say is added here.
        notes = [] if _title_in_name(backend) else [backend.entry.title]
        if backend.runtime is None or not catalog_known:
            notes.append("not connected")
        if notes:
            noted.append(f"{backend.gateway_name}: {', '.join(notes)}")
    listing = tool_listing(list(tools)) if tools else "No tools of these backends are available."
    entries = f" ({'; '.join(noted)})" if noted else ""
    description = f"Gateway to the {kind.replace('_', ' ')} backends{entries}. {listing}"
    schema = GATEWAY_TOOL_SCHEMA
    title = f"{kind_label} backends"
    return {
        "name": kind,
        "title": title,
        "description": description,
        "inputSchema": {
            **schema,
            "properties": {
                "entry": {
                    "type": "string",
                    "enum": [backend.gateway_name for backend, _, _ in members],
                    "description": "Backend entry.",
                },
                **schema["properties"],
            },
            "required": ["entry"],
        },
        "annotations": _annotations(title, tools.values()),
    }


def _title_in_name(backend: ExposedBackend) -> bool:
    """Whether the entry's name already says its title (`hubitat_hub_1` for "Hub 1"): then
    the title in brackets beside it would only repeat it."""
    title = slugify(backend.entry.title or "", separator="_")
    return bool(title) and backend.gateway_name.endswith(title)


def gateway_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A gateway tool's arguments as the handler checks them.

    `args` may come as JSON text (what the advertised schema asks, so strict function-calling
    dialects accept it) or as an object; empty values are how clients that must fill every
    property leave one out.
    """
    cleaned = {key: value for key, value in arguments.items() if value not in ("", [], None)}
    if cleaned.get("confirm") is False:
        del cleaned["confirm"]
    args = cleaned.get("args")
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError as err:
            raise ValueError(f'"args" is not valid JSON: {err}') from err
        if not isinstance(parsed, dict):
            raise ValueError('"args" must be a JSON object, e.g. {"id": "5"}.')  # noqa: TRY004
        cleaned["args"] = parsed
    return cleaned
