"""What the gateway offers: the core tools, one gateway tool per exposed backend entry, search.

`tools/list` stays small whatever the backends hold: a gateway tool names its backend's tools
but never inlines their schemas; those come from calling the gateway tool with no arguments, or
from `search_tools`. Backend catalogs are cached per entry and rebuilt only when a backend's
own `tools/list` changes.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
import functools
import hashlib
import json
import logging
import math
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.util import slugify
from homeassistant.util.hass_dict import HassKey

from ..backends import BACKENDS
from ..backends.base import BackendRuntime, ToolClass, ToolTier
from ..const import CONF_BACKEND, CONF_GATEWAY_EXPOSED, DOMAIN
from .policy import allowed_tiers
from .schemas import portable_schema
from .search import Bm25Index, SearchDocument

if TYPE_CHECKING:
    from ..mcp.server import RequestContext

_LOGGER = logging.getLogger(__name__)

MAX_TOOL_NAME: Final = 64
# A backend's tools/list is cached by its runtime; this only bounds a stuck one.
LIST_TOOLS_TIMEOUT: Final = 10.0
# Some runtimes ask their backend on every listing (to notice changes); asking at most this
# often keeps a busy AI client from turning each of its tools/list into backend traffic.
CATALOG_TTL: Final = 30.0

DATA_CATALOG: HassKey[GatewayCatalog] = HassKey(f"{DOMAIN}_gateway_catalog")

type CoreToolFn = Callable[[HomeAssistant, RequestContext, dict[str, Any]], Awaitable[Any]]


class ToolFailure(Exception):
    """A tool ran but could not do what was asked: becomes an `isError` result."""

    def __init__(self, message: str, *, code: str = "failed", **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details

    def as_structured(self) -> dict[str, Any]:
        """The error as structuredContent."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = self.details
        return {"error": error}


@dataclass(frozen=True, slots=True, kw_only=True)
class CoreTool:
    """A tool the gateway implements itself."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    tier: ToolTier
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    open_world: bool = False
    run: CoreToolFn

    def definition(self) -> dict[str, Any]:
        """The MCP Tool dict."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": tool_annotations(
                title=self.title,
                read_only=self.read_only,
                destructive=self.destructive,
                idempotent=self.idempotent,
                open_world=self.open_world,
            ),
        }


def tool_annotations(
    *, title: str, read_only: bool, destructive: bool, idempotent: bool, open_world: bool
) -> dict[str, Any]:
    """All four hints, always explicit: clients' defaults are the unsafe ones."""
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    }


@dataclass(frozen=True, slots=True)
class BackendTool:
    """One tool of a backend, with its place in the permission model."""

    name: str
    definition: dict[str, Any]
    tool_class: ToolClass
    # The schema every model provider accepts (see schemas.py), computed once per catalog.
    portable: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, name: str, definition: dict[str, Any], tool_class: ToolClass) -> BackendTool:
        """The tool with its portable schema worked out."""
        raw = definition.get("inputSchema")
        return cls(name, definition, tool_class, portable_schema(raw))

    @property
    def title(self) -> str:
        """The tool's own title, else its annotation title, else its name."""
        title = self.definition.get("title")
        if not isinstance(title, str):
            ann = self.definition.get("annotations")
            title = ann.get("title") if isinstance(ann, Mapping) else None
        return title if isinstance(title, str) else self.name

    @property
    def description(self) -> str:
        """The backend's description (may be empty)."""
        description = self.definition.get("description")
        return description if isinstance(description, str) else ""

    @property
    def raw_input_schema(self) -> dict[str, Any]:
        """The backend's own schema, or an empty object schema when it has none."""
        schema = self.definition.get("inputSchema")
        if isinstance(schema, dict):
            return schema
        return {"type": "object", "properties": {}, "required": []}

    @property
    def input_schema(self) -> dict[str, Any]:
        """The schema the AI sees: the backend's, in the subset every provider accepts."""
        return self.portable or portable_schema(self.raw_input_schema)

    def summary(self, *, with_schema: bool = True) -> dict[str, Any]:
        """What the AI needs to call it."""
        item: dict[str, Any] = {"name": self.name}
        if self.title != self.name:
            item["title"] = self.title
        item["description"] = self.description
        item["tier"] = str(self.tool_class.tier)
        if self.tool_class.destructive:
            item["destructive"] = True
        if with_schema:
            item["inputSchema"] = self.input_schema
        return item


# A paragraph repeated in this many tool descriptions is shown once, as a shared note.
SHARED_NOTE_MIN: Final = 3


def catalog_listing(tools: Sequence[BackendTool]) -> dict[str, Any]:
    """Tools with schemas for a gateway's catalog call, boilerplate paragraphs hoisted.

    Backends repeat checklists in every write tool's description (Hubitat: ~600 bytes each,
    dozens of times); listing each once keeps the catalog readable and a fraction of the size.
    """
    summaries = [tool.summary() for tool in tools]
    counts: dict[str, int] = {}
    for item in summaries:
        for paragraph in set(_paragraphs(item["description"])):
            counts[paragraph] = counts.get(paragraph, 0) + 1
    notes: dict[str, str] = {}
    for paragraph, count in counts.items():
        if count >= SHARED_NOTE_MIN and len(paragraph) > 80:
            notes[paragraph] = f"note_{len(notes) + 1}"
    if notes:
        for item in summaries:
            kept: list[str] = []
            refs: list[str] = []
            for paragraph in _paragraphs(item["description"]):
                if paragraph in notes:
                    refs.append(notes[paragraph])
                else:
                    kept.append(paragraph)
            item["description"] = "\n\n".join(kept)
            if refs:
                item["notes"] = refs
    listing: dict[str, Any] = {"tools": summaries}
    if notes:
        listing["notes"] = {key: text for text, key in notes.items()}
    return listing


def _paragraphs(text: str) -> list[str]:
    return [part.strip() for part in text.split("\n\n") if part.strip()]


@dataclass(slots=True)
class BackendCatalog:
    """A backend's tools as of one fingerprint of its `tools/list`."""

    fingerprint: str
    tools: dict[str, BackendTool]
    source: list[dict[str, Any]] | None = None
    checked_at: float = 0.0
    # The runtime it came from: a reloaded entry has a new one and is listed afresh.
    owner: object = None


@dataclass(frozen=True, slots=True)
class ExposedBackend:
    """A backend entry reachable through the gateway."""

    entry: ConfigEntry
    kind: str
    gateway_name: str

    @property
    def runtime(self) -> BackendRuntime | None:
        """The runtime while the entry is loaded."""
        if self.entry.state is not ConfigEntryState.LOADED:
            return None
        runtime = getattr(self.entry, "runtime_data", None)
        return runtime if isinstance(runtime, BackendRuntime) else None


@dataclass(slots=True)
class _SearchCache:
    key: tuple[Any, ...]
    index: Bm25Index
    refs: dict[str, tuple[str | None, str]] = field(default_factory=dict)


def gateway_tool_names(entries: Sequence[ConfigEntry]) -> dict[str, str]:
    """Entry id → gateway tool name: `<backend>_<title>`, ≤ 64 chars, unique, stable in order."""
    key = tuple(
        (entry.entry_id, str(entry.data.get(CONF_BACKEND)), entry.title or "") for entry in entries
    )
    return dict(_gateway_tool_names(key))


@functools.lru_cache(maxsize=8)
def _gateway_tool_names(entries: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str], ...]:
    # Cached: slugify is the costliest step of dispatching a call, and titles rarely change.
    names: dict[str, str] = {}
    taken: set[str] = set()
    for entry_id, kind, title in entries:
        slug = slugify(title, separator="_") or "entry"
        # "Hubitat Home" under hubitat would otherwise become hubitat_hubitat_home.
        base = slug if slug == kind or slug.startswith(f"{kind}_") else f"{kind}_{slug}"
        base = base[:MAX_TOOL_NAME].rstrip("_")
        name, number = base, 1
        while name in taken:
            number += 1
            suffix = f"_{number}"
            name = base[: MAX_TOOL_NAME - len(suffix)].rstrip("_") + suffix
        taken.add(name)
        names[entry_id] = name
    return tuple(names.items())


def is_exposed(entry: ConfigEntry) -> bool:
    """The per-entry option; exposed unless turned off."""
    return entry.options.get(CONF_GATEWAY_EXPOSED, True) is not False


def backend_entries(hass: HomeAssistant) -> list[ConfigEntry]:
    """All backend entries (loaded or not), in creation order."""
    return [
        entry
        for entry in hass.config_entries.async_entries(DOMAIN)
        if entry.data.get(CONF_BACKEND) in BACKENDS
    ]


def _fingerprint(tools: list[dict[str, Any]]) -> str:
    payload = json.dumps(tools, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


class GatewayCatalog:
    """Per-hass cache of backend catalogs and search indexes."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        self._catalogs: dict[str, BackendCatalog] = {}
        # Concurrent requests after the TTL ask a backend once, not once each.
        self._locks: dict[str, asyncio.Lock] = {}
        # One index per tier set: users of the same role see the same tools.
        self._search: dict[tuple[str, ...], _SearchCache] = {}

    @classmethod
    def get(cls, hass: HomeAssistant) -> GatewayCatalog:
        """The hass-wide instance."""
        if (catalog := hass.data.get(DATA_CATALOG)) is None:
            catalog = hass.data[DATA_CATALOG] = cls(hass)
        return catalog

    def exposed_backends(self) -> list[ExposedBackend]:
        """Backend entries the gateway exposes (names are assigned over all entries)."""
        entries = backend_entries(self.hass)
        names = gateway_tool_names(entries)
        return [
            ExposedBackend(entry, str(entry.data[CONF_BACKEND]), names[entry.entry_id])
            for entry in entries
            if is_exposed(entry)
        ]

    async def async_backend_catalog(self, backend: ExposedBackend) -> BackendCatalog | None:
        """The entry's catalog: refreshed when the backend's list changed, else the cached one.

        A backend that cannot list its tools right now keeps its last known catalog.
        """
        entry_id = backend.entry.entry_id
        runtime = backend.runtime
        if runtime is None:
            return self._catalogs.get(entry_id)
        if (cached := self._fresh(entry_id, runtime)) is not None:
            return cached
        async with self._locks.setdefault(entry_id, asyncio.Lock()):
            if (cached := self._fresh(entry_id, runtime)) is not None:
                return cached
            return await self._async_refresh(backend, runtime)

    def fresh_catalog(
        self, backend: ExposedBackend, runtime: BackendRuntime
    ) -> BackendCatalog | None:
        """The entry's cached catalog while it is current, without waiting for anything."""
        return self._fresh(backend.entry.entry_id, runtime)

    def _fresh(self, entry_id: str, runtime: BackendRuntime) -> BackendCatalog | None:
        cached = self._catalogs.get(entry_id)
        if (
            cached is not None
            and cached.owner is runtime
            and self.hass.loop.time() - cached.checked_at < CATALOG_TTL
        ):
            return cached
        return None

    async def _async_refresh(
        self, backend: ExposedBackend, runtime: BackendRuntime
    ) -> BackendCatalog | None:
        entry_id = backend.entry.entry_id
        cached = self._catalogs.get(entry_id)
        now = self.hass.loop.time()
        try:
            async with asyncio.timeout(LIST_TOOLS_TIMEOUT):
                tools = await runtime.async_list_tools()
        except Exception as err:  # any backend failure keeps the last catalog
            _LOGGER.debug("Cannot list the tools of %s: %s", backend.gateway_name, err)
            return cached
        if cached is not None and cached.owner is runtime and cached.source is tools:
            cached.checked_at = now
            return cached
        fingerprint = _fingerprint(tools)
        if cached is not None and cached.owner is runtime and cached.fingerprint == fingerprint:
            cached.source, cached.checked_at = tools, now
            return cached
        catalog = BackendCatalog(
            fingerprint, self._classify(runtime, tools), tools, now, owner=runtime
        )
        self._catalogs[entry_id] = catalog
        return catalog

    @staticmethod
    def _classify(runtime: BackendRuntime, tools: list[dict[str, Any]]) -> dict[str, BackendTool]:
        classified: dict[str, BackendTool] = {}
        for tool in tools:
            name = tool.get("name")
            if not isinstance(name, str) or not name or name in classified:
                continue
            try:
                tool_class = runtime.tool_class(tool)
            except Exception:  # a broken table must fail closed, not open
                _LOGGER.exception("Classifying %s failed; treating it as admin", name)
                tool_class = ToolClass(ToolTier.ADMIN)
            classified[name] = BackendTool.of(name, tool, tool_class)
        return classified

    async def async_visible(
        self, user: User
    ) -> list[tuple[ExposedBackend, BackendCatalog | None, list[BackendTool]]]:
        """Each exposed backend with the tools this user may call."""
        tiers = allowed_tiers(user)
        backends = self.exposed_backends()
        catalogs = await asyncio.gather(*(self.async_backend_catalog(b) for b in backends))
        visible = []
        for backend, catalog in zip(backends, catalogs, strict=True):
            tools = (
                [tool for tool in catalog.tools.values() if tool.tool_class.tier in tiers]
                if catalog is not None
                else []
            )
            visible.append((backend, catalog, tools))
        return visible

    def search_index(
        self,
        user: User,
        core_tools: Sequence[CoreTool],
        visible: Sequence[tuple[ExposedBackend, BackendCatalog | None, list[BackendTool]]],
    ) -> tuple[Bm25Index, dict[str, tuple[str | None, str]]]:
        """A BM25 index over what this user may call; cached per tier set and catalog state.

        Returns the index and, per document key, (gateway tool name or None, tool name).
        """
        tiers = allowed_tiers(user)
        key: tuple[Any, ...] = (
            tuple(sorted(tiers)),
            tuple(tool.name for tool in core_tools),
            tuple(
                (backend.gateway_name, catalog.fingerprint if catalog else None)
                for backend, catalog, _ in visible
            ),
        )
        role_key = tuple(sorted(tiers))
        if (cached := self._search.get(role_key)) is not None and cached.key == key:
            return cached.index, cached.refs
        documents: list[SearchDocument] = []
        refs: dict[str, tuple[str | None, str]] = {}
        for tool in core_tools:
            refs[tool.name] = (None, tool.name)
            documents.append(SearchDocument(tool.name, tool.name, tool.title, tool.description))
        for backend, _, tools in visible:
            for sub in tools:
                doc_key = f"{backend.gateway_name}/{sub.name}"
                refs[doc_key] = (backend.gateway_name, sub.name)
                # The gateway's name joins the text so "hubitat mode" finds Hubitat's tools.
                documents.append(
                    SearchDocument(
                        doc_key,
                        sub.name,
                        f"{sub.title} {backend.kind} {backend.entry.title}",
                        sub.description,
                    )
                )
        index = Bm25Index(documents)
        self._search[role_key] = _SearchCache(key, index, refs)
        return index, refs


def gateway_tool_definition(
    backend: ExposedBackend, tools: Sequence[BackendTool], *, catalog_known: bool = True
) -> dict[str, Any]:
    """The gateway tool of one entry: names its tools (never their schemas, to keep lists small)."""
    kind_label = backend.kind.replace("_", " ").title()
    title = backend.entry.title or kind_label
    if kind_label.casefold() not in title.casefold():
        title = f"{title} ({kind_label})"
    if tools:
        names = ", ".join(tool.name for tool in tools)
        listing = f"Tools: {names}."
    elif backend.runtime is None or not catalog_known:
        listing = "The backend is not connected right now; see list_backends."
    else:
        listing = "No tools of this backend are available to you."
    description = (
        f"Gateway to the {backend.kind.replace('_', ' ')} backend '{backend.entry.title}'. "
        "Call with no arguments for every tool's description and input schema, or with "
        '{"describe": [<names>]} for some; call with {"tool": <name>, "args": {...}} to run '
        f'one (add "confirm": true for destructive tools). {listing}'
    )
    read_only = bool(tools) and all(t.tool_class.tier is ToolTier.READ for t in tools)
    destructive = any(t.tool_class.destructive for t in tools) or (
        not read_only and any(t.tool_class.tier is ToolTier.ADMIN for t in tools)
    )
    return {
        "name": backend.gateway_name,
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "description": "Tool to run; omit to list them."},
                # Free-form objects are what no strict function-calling dialect accepts
                # (OpenAI strict, Gemini): the arguments travel as JSON text (objects too).
                "args": {
                    "type": "string",
                    "description": 'That tool\'s arguments as a JSON object, e.g. {"id": "5"}.',
                },
                "describe": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Tools to describe (omit all arguments to describe all).",
                },
                "confirm": {
                    "type": "boolean",
                    "description": "true to allow a destructive tool.",
                },
            },
            "required": [],
            "additionalProperties": False,
        },
        "annotations": tool_annotations(
            title=title,
            read_only=read_only,
            destructive=destructive,
            idempotent=False,
            open_world=True,
        ),
    }


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
) -> dict[str, Any]:
    """One tool for every exposed entry of a backend kind: names the entries and their tools.

    `members` holds each entry with whether its catalog is known and the tools the user may
    call. Entries of one kind share most tools, so the union of names is listed once.
    """
    kind_label = kind.replace("_", " ").title()
    tools: dict[str, BackendTool] = {}
    entries: list[str] = []
    for backend, catalog_known, visible in members:
        for tool in visible:
            tools.setdefault(tool.name, tool)
        note = "" if backend.runtime is not None and catalog_known else ", not connected"
        entries.append(f"{backend.gateway_name} ({backend.entry.title}{note})")
    listing = (
        f"Tools: {', '.join(tools)}." if tools else "No tools of these backends are available."
    )
    description = (
        f"Gateway to the {kind.replace('_', ' ')} backends: {'; '.join(entries)}. Give "
        '"entry" (one of those names) and: no more arguments for every tool\'s description '
        'and input schema, {"describe": [<names>]} for some, or {"tool": <name>, "args": '
        '{...}} to run one (add "confirm": true for destructive tools). ' + listing
    )
    read_only = bool(tools) and all(t.tool_class.tier is ToolTier.READ for t in tools.values())
    destructive = any(t.tool_class.destructive for t in tools.values()) or (
        not read_only and any(t.tool_class.tier is ToolTier.ADMIN for t in tools.values())
    )
    definition = gateway_tool_definition(members[0][0], [])
    schema = definition["inputSchema"]
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
                    "description": "Which backend entry.",
                },
                **schema["properties"],
            },
            "required": ["entry"],
        },
        "annotations": tool_annotations(
            title=title,
            read_only=read_only,
            destructive=destructive,
            idempotent=False,
            open_world=True,
        ),
    }


# --- argument validation ---------------------------------------------------------------------

_JSON_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


def lift_single_items(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Plain intents written loosely become what the schema asks for, at any depth.

    Models often write `"domain": "light"` for `["light"]`, or a number where a text is asked
    (`"value": 5` for a select or number entity); the intent is plain, so accept it rather than
    fail the call. Anything else is left for schema_errors to judge.
    """
    lifted = _lift(schema, arguments)
    return lifted if isinstance(lifted, dict) else arguments


def _lift(schema: Any, value: Any) -> Any:
    # Schemas are JSON objects (dicts); checked by exact kind first, since every gateway call
    # passes through here.
    if not isinstance(schema, dict):
        return value
    kind = schema.get("type")
    if isinstance(value, str):
        items = schema.get("items") if kind == "array" else None
        return [value] if isinstance(items, dict) and items.get("type") == "string" else value
    if kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, list):
        items = schema.get("items")
        return [_lift(items, item) for item in value] if isinstance(items, dict) else value
    if isinstance(value, dict) and isinstance(properties := schema.get("properties"), dict):
        return {key: _lift(properties.get(key), item) for key, item in value.items()}
    return value


def schema_errors(schema: Mapping[str, Any], value: Any, path: str = "arguments") -> list[str]:
    """Check a value against the JSON Schema subset our core tools use; messages name the path."""
    errors: list[str] = []
    if not _type_matches(schema, value):
        types = schema["type"]
        names = [types] if isinstance(types, str) else list(types)
        return [f"{path} must be {' or '.join(names)}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(json.dumps(item) for item in schema["enum"])
        errors.append(f"{path} must be one of {allowed}")
    if "anyOf" in schema:
        branches = [schema_errors(branch, value, path) for branch in schema["anyOf"]]
        if all(branches):
            # A branch whose type matched has the useful complaint ("must be ≥ 5").
            typed = [
                found
                for branch, found in zip(schema["anyOf"], branches, strict=True)
                if _type_matches(branch, value)
            ]
            errors.append(min(typed or branches, key=len)[0])
    if isinstance(value, bool):
        return errors
    if isinstance(value, int | float):
        if not math.isfinite(value):
            # Python's JSON parser lets NaN and Infinity through; no tool means them.
            return [*errors, f"{path} must be a finite number"]
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path} must be ≥ {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path} must be ≤ {schema['maximum']}")
    elif isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path} must have at most {schema['maxLength']} characters")
    elif isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path} must have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path} must have at most {schema['maxItems']} items")
        if isinstance(items := schema.get("items"), dict):
            for index, item in enumerate(value):
                errors.extend(schema_errors(items, item, f"{path}[{index}]"))
    elif isinstance(value, dict):
        properties: Mapping[str, Any] = schema.get("properties", {})
        errors.extend(
            f"{path}.{name} is required" for name in schema.get("required", ()) if name not in value
        )
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                errors.extend(schema_errors(properties[name], item, f"{path}.{name}"))
            elif extra is False:
                errors.append(
                    f"{path}.{name} is not accepted (accepted: {', '.join(properties) or 'none'})"
                )
            elif isinstance(extra, dict):
                errors.extend(schema_errors(extra, item, f"{path}.{name}"))
    return errors


def _type_matches(schema: Mapping[str, Any], value: Any) -> bool:
    types = schema.get("type")
    if types is None:
        return True
    if isinstance(types, str):
        return _is_type(value, types)
    return any(_is_type(value, name) for name in types)


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _JSON_TYPES.get(name, (object,)))
