"""get_history: state changes of the integration's entities, from Home Assistant's recorder.

Same filters as get_state; the database read runs in the recorder's executor, and each entity's
points come as compact [time, state] pairs, the newest `limit` of them, with the entity's unit.
Where the recorder holds less than the period asked (it started later, purged, or the entity is
excluded), the answer says from when it holds data and offers the backend's own history as a
ready gateway call: an empty stretch must never read as "nothing happened". Where the backend's
answer can be read (Hubitat's events, a Homecast accessory's series), the first few such calls
run here, in parallel under one short timeout and through the same checks as the caller's own
call, and their events from before the recorder's first point are merged, labelled with their
source: one call answers "any motion in the last hour?" or "the basement temperature this
morning" whole. An entity HA's state machine shows unchanged since before the period needs no
recorder to be told whole.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from homeassistant.auth.models import User
from homeassistant.const import ATTR_UNIT_OF_MEASUREMENT, Platform
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util

from ...core.localtime import holds_instant, local_iso, local_iso_text
from ...framework.base import BackendRuntime
from ...framework.entity import key_of_unique_id
from ...mcp.client import ToolResult
from ...permissions.exposure import require_assistant_call
from ...permissions.policy import PermissionDenied
from ...permissions.visibility import readable_entities
from ..catalog.gateway_tool import listed_names
from ..catalog.store import BackendCatalog, GatewayCatalog, ToolFailure
from ..finding import homes
from ..finding.query import FILTER_PROPERTIES, EntityQuery
from ..finding.selection import EntityRef, candidate_entities, select_entities
from ..finding.unexposed import no_match_hint
from .staleness import history_stale_marker

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

DEFAULT_HISTORY_HOURS: Final = 24
MAX_HISTORY_HOURS: Final = 24 * 30
MAX_HISTORY_ENTITIES: Final = 50
DEFAULT_HISTORY_POINTS: Final = 100
# The recorder's state at the start of a window carries the start's own time; a first point
# later than this after the start means the recorder holds nothing of the entity before it.
_SAME_INSTANT: Final = timedelta(seconds=1)
COVERAGE_NOTE: Final = (
    "Home Assistant's recorder holds less than this period for some entities "
    "(recorded_from, not_recorded): before that, no point means unknown, not unchanged. "
    "backend_history is a ready call for the backend's own history of them."
)
MERGED_NOTE: Final = (
    "Home Assistant's recorder holds less than this period for some entities "
    "(recorded_from, not_recorded): before that, no point means unknown, not unchanged. "
    "backend.events are the backend's own events of the period before that ([time, value] in "
    "the backend's words, newest first): the answer is whole with them; backend_history is a "
    "ready call for the backend's own history of the others."
)
# Backend histories read into one answer: at most this many calls, in parallel, each bounded.
MAX_MERGED: Final = 12
MERGE_TIMEOUT: Final = 8.0
MERGED_EVENTS: Final = 100
EXCLUDED: Final = "excluded from Home Assistant's recorder"
NOTHING_HELD: Final = "Home Assistant's recorder holds no state of it in this period"


GET_HISTORY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        **FILTER_PROPERTIES,
        "hours": {
            "type": "number",
            "minimum": 0.01,
            "maximum": MAX_HISTORY_HOURS,
            "description": f"How far back from end (default {DEFAULT_HISTORY_HOURS}).",
        },
        "start": {"type": "string", "description": "ISO 8601 start (overrides hours)."},
        "end": {"type": "string", "description": "ISO 8601 end (default now)."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 1000,
            "description": f"Newest points per entity (default {DEFAULT_HISTORY_POINTS}).",
        },
    },
    "required": [],
    "additionalProperties": False,
}


class HistoryQuery(NamedTuple):
    """One get_history call's arguments, parsed once, immutable as EntityQuery (the times are
    read, and refused, after the entities are found: _period)."""

    filters: EntityQuery
    start: str | None
    end: str | None
    hours: float
    limit: int

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> HistoryQuery:
        """The query of a call's (schema-checked) arguments."""
        return cls(
            EntityQuery.parse(args),
            args.get("start"),
            args.get("end"),
            args.get("hours", DEFAULT_HISTORY_HOURS),
            args.get("limit", DEFAULT_HISTORY_POINTS),
        )


def _parse_time(value: str, name: str) -> datetime:
    try:
        parsed = dt_util.parse_datetime(value)
    except ValueError:  # well-formed but impossible, e.g. month 13
        parsed = None
    if parsed is None:
        raise ToolFailure(f"{name} is not an ISO 8601 date-time: {value}", code="invalid")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt_util.get_default_time_zone())
    return parsed


async def async_get_history(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """State changes from HA's recorder for entities the caller may read."""
    if "recorder" not in hass.config.components:
        raise ToolFailure("Home Assistant's recorder is not running.", code="unavailable")
    query = HistoryQuery.parse(args)
    refs = sorted(_history_refs(hass, ctx.user, query.filters), key=lambda ref: ref.entity_id)
    start, end = _period(query)
    limit = query.limit

    from homeassistant.helpers.recorder import get_instance

    states = await get_instance(hass).async_add_executor_job(
        _significant_states, hass, start, end, [ref.entity_id for ref in refs]
    )
    # The home where it tells entities apart: once when they share one, else per entity.
    in_home = {ref.entity_id: ref.home(hass) for ref in refs} if homes.several_homes(hass) else {}
    per_entity = len(set(in_home.values())) > 1
    entities: dict[str, dict[str, Any]] = {}
    partial: list[EntityRef] = []
    held_from: dict[str, datetime] = {}
    mark_stale = history_stale_marker(hass)
    for ref in refs:
        entity = _entity_history(hass, ref.entity_id, states.get(ref.entity_id, []), start)
        if entity.gap:
            partial.append(ref)
            if entity.held_from is not None:
                held_from[ref.entity_id] = entity.held_from
        home = in_home[ref.entity_id] if per_entity else None
        entities[ref.entity_id] = answer = entity.answer(limit, home)
        mark_stale(ref, answer)
    result: dict[str, Any] = {"start": local_iso(start), "end": local_iso(end)}
    if in_home and not per_entity:
        result["home"] = next(iter(in_home.values()))
    if partial:
        result["coverage"] = await _add_backend_history(
            hass,
            ctx.user,
            entities,
            partial,
            start=start,
            end=end,
            held_from=held_from,
            limit=limit,
        )
    result["entities"] = entities
    return result


def _history_refs(hass: HomeAssistant, user: User, query: EntityQuery) -> list[EntityRef]:
    """The entities asked for that the caller may read: at least one, at most
    MAX_HISTORY_ENTITIES."""
    refs = readable_entities(
        hass, user, select_entities(hass, candidate_entities(hass, query), query).refs
    )
    if not refs:
        raise ToolFailure(no_match_hint(hass, user, query), code="not_found")
    if len(refs) > MAX_HISTORY_ENTITIES:
        raise ToolFailure(
            f"{len(refs)} entities match; narrow the filters to at most "
            f"{MAX_HISTORY_ENTITIES} (e.g. entity_ids, domain or area).",
            code="too_many",
        )
    return refs


def _period(query: HistoryQuery) -> tuple[datetime, datetime]:
    """The period asked: start and end, or `hours` back from end (default now)."""
    end = _parse_time(query.end, "end") if query.end is not None else dt_util.utcnow()
    if query.start is not None:
        start = _parse_time(query.start, "start")
    else:
        try:
            start = end - timedelta(hours=query.hours)
        except OverflowError as err:
            raise ToolFailure("end is too early.", code="invalid") from err
    if start >= end:
        raise ToolFailure("start must be before end.", code="invalid")
    return start, end


@dataclass(slots=True)
class _EntityHistory:
    """One entity's part of the answer: its newest points, and what the recorder lacks."""

    points: list[list[str]]
    unit: Any
    gap: dict[str, str]
    # Where the recorder holds the entity only from later than the period's start: from when.
    held_from: datetime | None = None

    def answer(self, limit: int, home: str | None) -> dict[str, Any]:
        """The newest `limit` points; the home where entities' homes differ."""
        entity: dict[str, Any] = {"count": len(self.points), "points": self.points[-limit:]}
        if home is not None:
            entity["home"] = home
        if len(self.points) > limit:
            entity["truncated"] = True
        if self.unit:
            entity["unit"] = self.unit
        entity.update(self.gap)
        return entity


def _entity_history(
    hass: HomeAssistant,
    entity_id: str,
    items: Sequence[State | dict[str, Any]],
    start: datetime,
) -> _EntityHistory:
    """The recorder's points of one entity, told whole where HA's state machine can."""
    current = hass.states.get(entity_id)
    show = local_iso_text if current is not None and holds_instant(current) else str
    points = [_point(item, show) for item in items]
    gap = _coverage(hass, entity_id, items, start)
    if gap and current is not None and current.last_changed <= start:
        # HA's own state machine knows it held this state since before the window,
        # whatever the recorder kept (purged, excluded): the window is known whole.
        points.insert(0, [local_iso(start), show(current.state)])
        gap = {}
    unit = current.attributes.get(ATTR_UNIT_OF_MEASUREMENT) if current is not None else None
    first = _when(items[0]) if gap.get("recorded_from") else None
    return _EntityHistory(points, unit, gap, first if isinstance(first, datetime) else None)


async def _add_backend_history(
    hass: HomeAssistant,
    user: User,
    entities: Mapping[str, dict[str, Any]],
    partial: Sequence[EntityRef],
    *,
    start: datetime,
    end: datetime,
    held_from: Mapping[str, datetime],
    limit: int,
) -> str:
    """Where the recorder holds less than the period: the backend's own events of what it
    lacks merged in, or a ready call for them; the coverage note that says which."""
    offers = await _backend_history(hass, user, partial, start)
    merged = await _merge(offers, (start, end), held_from, min(limit, MERGED_EVENTS))
    for entity_id, offer in offers.items():
        entity = entities[entity_id]
        if entity_id in merged:
            entity.update(merged[entity_id])
        if "backend" not in entity:
            entity["backend_history"] = offer.call
    merging = any("backend" in entity for entity in entities.values())
    return MERGED_NOTE if merging else COVERAGE_NOTE


def _significant_states(
    hass: HomeAssistant, start: datetime, end: datetime, entity_ids: list[str]
) -> Mapping[str, Sequence[State | dict[str, Any]]]:
    """Runs in the recorder's executor: the database read blocks."""
    from homeassistant.components.recorder import history

    return history.get_significant_states(
        hass,
        start,
        end,
        entity_ids,
        include_start_time_state=True,
        significant_changes_only=False,
        minimal_response=True,
        no_attributes=True,
    )


def _when(item: State | Mapping[str, Any]) -> datetime | str | None:
    if isinstance(item, State):
        return item.last_changed
    changed = item.get("last_changed")
    if isinstance(changed, str):
        # minimal_response gives later points as UTC ISO text.
        return dt_util.parse_datetime(changed) or changed
    return changed if isinstance(changed, datetime) else None


def _point(item: State | Mapping[str, Any], show: Callable[[str], str]) -> list[str]:
    """[time, state]: the compact form an AI reads fastest; instants in HA's zone."""
    when = _when(item)
    state = item.state if isinstance(item, State) else str(item.get("state"))
    return [local_iso(when) if isinstance(when, datetime) else str(when), show(state)]


def _coverage(
    hass: HomeAssistant, entity_id: str, items: Sequence[State | Mapping[str, Any]], start: datetime
) -> dict[str, str]:
    """From when the recorder holds the entity, where that is after `start` (else nothing).

    The recorder answers a window with the state at its start (timed at the start) when it
    holds one: a first point later than that means nothing older is held, because the
    recorder started later, purged it, or the entity is new or excluded.
    """
    from homeassistant.components.recorder import is_entity_recorded

    if not is_entity_recorded(hass, entity_id):
        return {"not_recorded": EXCLUDED}
    if not items:
        return {"not_recorded": NOTHING_HELD}
    first = _when(items[0])
    if isinstance(first, datetime) and first > start + _SAME_INSTANT:
        return {"recorded_from": local_iso(first)}
    return {}


@dataclass(frozen=True, slots=True)
class _Offer:
    """A backend history call the caller may make: as offered, and as run when merged."""

    call: dict[str, Any]
    runtime: BackendRuntime
    source: str
    name: str
    args: dict[str, Any]


async def _merge(
    offers: Mapping[str, _Offer],
    period: tuple[datetime, datetime],
    held_from: Mapping[str, datetime],
    most: int,
) -> dict[str, dict[str, Any]]:
    """Entity id → its backend's events merged into the answer (or why they are not), for
    the first MAX_MERGED offers whose backend's answers the gateway reads: the newest `most`
    of those before the recorder's first point of it (the recorder's own points follow)."""
    chosen = [
        (entity_id, offer)
        for entity_id, offer in offers.items()
        if type(offer.runtime).history_events is not BackendRuntime.history_events
    ][:MAX_MERGED]
    if not chosen:
        return {}
    start, end = period
    timeout = min([MERGE_TIMEOUT, *(offer.runtime.client.timeout for _, offer in chosen)])
    answers = await asyncio.gather(
        *(
            asyncio.wait_for(offer.runtime.async_call_tool(offer.name, offer.args), timeout)
            for _, offer in chosen
        ),
        return_exceptions=True,
    )
    merged: dict[str, dict[str, Any]] = {}
    for (entity_id, offer), answer in zip(chosen, answers, strict=True):
        if isinstance(answer, asyncio.CancelledError):
            raise answer
        events = _read(offer, answer, timeout)
        if isinstance(events, str):
            merged[entity_id] = {"backend_error": f"{offer.source} could not be read: {events}"}
            continue
        if events is None:
            continue
        # Newest first; what the recorder lacks: before its first point, within the period.
        until = min(end, held_from.get(entity_id, end))
        shown = sorted((e for e in events if e[0] < until), key=lambda e: e[0], reverse=True)
        listed = shown[:most]
        backend: dict[str, Any] = {
            "source": offer.source,
            "count": len(shown),
            # The backend was read from the period's start; cut, from its oldest event listed.
            "covers_from": local_iso(listed[-1][0] if len(shown) > most else start),
            "events": [[local_iso(when), value] for when, value in listed],
        }
        if len(shown) > most:
            backend["truncated"] = True
        merged[entity_id] = {"backend": backend}
    return merged


def _read(
    offer: _Offer, answer: ToolResult | BaseException, timeout: float
) -> list[tuple[datetime, str]] | str | None:
    """One backend answer's events, or why it cannot be read (the entity keeps the offer)."""
    if isinstance(answer, TimeoutError):
        return f"no answer in {timeout:g} s"
    if isinstance(answer, BaseException):
        return str(answer) or type(answer).__name__
    if answer.is_error:
        return answer.text or "the call failed"
    try:
        return offer.runtime.history_events(answer)
    except ValueError as err:
        return str(err)


async def _backend_history(
    hass: HomeAssistant, user: User, refs: Sequence[EntityRef], start: datetime
) -> dict[str, _Offer]:
    """Entity id → the gateway call that reads its backend's own history from `start`, for
    the entities whose backend keeps one and that this user may call it for (the same checks
    as the call itself: tier, entity permissions, exposure)."""
    catalog = GatewayCatalog.get(hass)
    listed = listed_names(catalog.exposed_backends())
    registry = er.async_get(hass)
    catalogs: dict[str, BackendCatalog | None] = {}
    offers: dict[str, _Offer] = {}
    for ref in refs:
        runtime = ref.backend.runtime
        registered = registry.async_get(ref.entity_id)
        if runtime is None or registered is None or ref.backend.gateway_name not in listed:
            continue
        spec = runtime.publisher.spec(
            Platform(registered.domain), key_of_unique_id(runtime.entry, registered.unique_id)
        )
        found = runtime.history_call(spec, start) if spec is not None else None
        if found is None:
            continue
        name, args = found
        gateway = ref.backend.gateway_name
        if gateway not in catalogs:
            catalogs[gateway] = await catalog.async_backend_catalog(ref.backend)
        backend_catalog = catalogs[gateway]
        tool = backend_catalog.tools.get(name) if backend_catalog is not None else None
        if tool is None:
            continue
        what = f"{gateway}/{name}"
        try:
            require_assistant_call(
                hass,
                user,
                runtime,
                tool_class=runtime.call_class(tool.tool_class, name, args),
                name=name,
                args=args,
                what=what,
            )
        except PermissionDenied:
            continue
        tool_name, entry = listed[gateway]
        arguments: dict[str, Any] = {} if entry is None else {"entry": entry}
        offers[ref.entity_id] = _Offer(
            {"name": tool_name, "arguments": {**arguments, "tool": name, "args": args}},
            runtime,
            f"{ref.backend.entry.title} ({name})",
            name,
            args,
        )
    return offers
