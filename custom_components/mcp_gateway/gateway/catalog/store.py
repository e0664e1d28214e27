"""What the gateway offers: its core tools, each backend's tools (cached per entry), search.

`tools/list` stays small whatever the backends hold: a gateway tool names its backend's tools
but never inlines their schemas; those come from calling the gateway tool with no arguments, or
from `search_tools`. Backend catalogs are cached per entry and rebuilt only when a backend's
own `tools/list` changes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
import functools
import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.util import slugify
from homeassistant.util.hass_dict import HassKey

from ...core.const import CONF_BACKEND, CONF_GATEWAY_EXPOSED, DOMAIN
from ...framework.base import BackendRuntime, ToolClass, ToolTier
from ...framework.kinds import is_backend_entry
from ...mcp.types import Tool, ToolAnnotations
from ...permissions.policy import allowed_tiers
from .schemas.convert import portable_schema
from .search import Bm25Index, SearchDocument

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

_LOGGER = logging.getLogger(__name__)

MAX_TOOL_NAME: Final = 64
# A backend's tools/list is cached by its runtime; this only bounds a stuck one.
LIST_TOOLS_TIMEOUT: Final = 10.0
# Some runtimes ask their backend on every listing (to notice changes); asking at most this
# often keeps a busy AI client from turning each of its tools/list into backend traffic.
CATALOG_TTL: Final = 30.0

DATA_CATALOG: HassKey[GatewayCatalog] = HassKey(f"{DOMAIN}_gateway_catalog")

type CoreToolFn = Callable[[HomeAssistant, RequestContext, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class PreparedCall:
    """A core tool call with its targets resolved: the arguments it then runs with (each
    target pinned, so what runs is what was weighed), and why it waits for a person."""

    arguments: dict[str, Any]
    # What a person approves, in their words (None: nothing to approve), and its entities.
    approval: str | None = None
    entity_ids: tuple[str, ...] = ()


type CorePrepareFn = Callable[[HomeAssistant, User, dict[str, Any]], PreparedCall]


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
    # A tool that changes things resolves its targets here and says what needs a person;
    # the handler asks for approval between this and `run`.
    prepare: CorePrepareFn | None = None

    def definition(self) -> Tool:
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
) -> ToolAnnotations:
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
    # The schema every model provider accepts (see schemas/subset.py), computed once per catalog.
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
    return [entry for entry in hass.config_entries.async_entries(DOMAIN) if is_backend_entry(entry)]


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
