"""get_state: the current states of the integration's entities, projected and paged.

Each entity carries only the fields asked for (empty ones left out); a page ends at a limit or
near STATE_PAGE_CHARS of JSON, whichever comes first, and says where the next one starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import itertools
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, device_registry as dr
from homeassistant.util import dt as dt_util

from ...mcp import codec
from ...permissions.visibility import readable_entities
from ..finding import homes
from ..finding.query import FILTER_PROPERTIES, MAX_ENTITY_IDS, EntityQuery
from ..finding.selection import EntityRef, candidate_entities, select_entities
from ..finding.unexposed import no_match_hint, unexposed_hint, unexposed_matches
from .levels import LEVEL_NAMES, level_units
from .staleness import Heard, mark_stale
from .state_items import (
    KEPT_FIELDS,
    KeptItem,
    Source,
    build_item,
    item_cache,
    writers as item_writers,
)

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

# A page can hold every entity one filter names.
MAX_STATE_LIMIT: Final = MAX_ENTITY_IDS
DEFAULT_STATE_LIMIT: Final = MAX_STATE_LIMIT
# A page stops growing at about this many characters of JSON: the result carries it once (as
# text), and with the escaping of a JSON string must stay well inside the server's size guard.
STATE_PAGE_CHARS: Final = 128_000
SIZE_SAMPLE: Final = 8

BASIC_FIELDS: Final = (
    "entity_id",
    "name",
    "state",
    "levels",
    "area",
    "home",
    "unit",
    "backend",
)


GET_STATE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        **FILTER_PROPERTIES,
        "fields": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "Fields per entity (default entity_id, name, state, levels, area, home, "
                "unit, backend); levels are set_state's (brightness_pct…). "
                "Also: domain, device, last_changed, attributes (all), or any attribute name."
            ),
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_STATE_LIMIT,
            "description": "Page size (pages also end near 100 KB).",
        },
        "offset": {"type": "integer", "minimum": 0},
    },
    "required": [],
    "additionalProperties": False,
}


class StateQuery(NamedTuple):
    """One get_state call's arguments, parsed once (immutable, as EntityQuery)."""

    filters: EntityQuery
    # None: the basic fields.
    fields: tuple[str, ...] | None
    limit: int
    offset: int

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> StateQuery:
        """The query of a call's (schema-checked) arguments."""
        fields = args.get("fields")
        return cls(
            EntityQuery.parse(args),
            tuple(fields) if fields else None,
            args.get("limit") or DEFAULT_STATE_LIMIT,
            args.get("offset") or 0,
        )


async def async_get_state(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Current states of the integration's entities the caller may read."""
    query = StateQuery.parse(args)
    filters = query.filters
    # Filters first, on the index's narrowed candidates; the permission check is per entity
    # that matched (and the list is already in entity id order).
    selection = select_entities(hass, candidate_entities(hass, filters), filters)
    refs = readable_entities(hass, ctx.user, selection.refs)
    offset = query.offset
    page = refs[offset : offset + query.limit]
    layout = _layout(hass, page, query.fields)
    entities = _page_items(hass, page, layout.item_fields)
    result = _page_head(refs, entities, layout)
    result["entities"] = entities
    _add_page_notes(hass, result, entities, offset=offset, total=len(refs))
    if selection.notes:
        result["note"] = " ".join(selection.notes)
    # What the filters matched that assistants may not see, to those who may read it.
    if not refs:
        result["hint"] = no_match_hint(hass, ctx.user, filters)
    elif filters.names_entities and (
        hidden := unexposed_hint(hass, ctx.user, unexposed_matches(hass, ctx.user, filters))
    ):
        result["unexposed"] = hidden
    return result


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where a page says each field: the backend and home once at the top when the page
    shares them (None: per entity, or not at all), the rest per entity."""

    backend: str | None
    home: str | None
    item_fields: list[str]


def _layout(hass: HomeAssistant, page: Sequence[EntityRef], asked: Sequence[str] | None) -> _Layout:
    """The fields each entity carries, and those said once for the page."""
    fields = asked or BASIC_FIELDS
    backend = _shared_backend(page) if "backend" in fields else None
    # The home only where it tells entities apart (several homes), or when asked for.
    with_home = "home" in fields and ("home" in (asked or ()) or homes.several_homes(hass))
    home = _shared_home(hass, page) if with_home else None
    item_fields = [
        f
        for f in fields
        if not (backend is not None and f == "backend")
        and not (f == "home" and (home is not None or not with_home))
    ]
    return _Layout(backend, home, item_fields)


def _shared_backend(page: Sequence[EntityRef]) -> str | None:
    """One backend on the page: said once at the top, not per entity."""
    page_backends = {ref.backend.gateway_name for ref in page}
    return page_backends.pop() if len(page_backends) == 1 else None


def _shared_home(hass: HomeAssistant, page: Sequence[EntityRef]) -> str | None:
    """One home on the page: said once at the top too."""
    page_homes = {ref.home(hass) for ref in page}
    return page_homes.pop() if len(page_homes) == 1 else None


def _page_items(
    hass: HomeAssistant, page: Sequence[EntityRef], item_fields: Sequence[str]
) -> list[dict[str, Any]]:
    """The page's entities, projected, until the page is about STATE_PAGE_CHARS long."""
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    devices = dr.async_get(hass)
    fields = tuple(item_fields)
    writers = item_writers(fields)
    # Fields read from the state and the few page-wide names below only: each entity's item
    # is built once per state change and copied on later reads.
    kept = KEPT_FIELDS.issuperset(fields)
    with_area, with_home, with_backend = ("area" in fields, "home" in fields, "backend" in fields)
    cache = item_cache(hass)
    tz = dt_util.get_default_time_zone()
    heard = Heard(hass, dt_util.utcnow(), tz) if "state" in item_fields else None
    entities: list[dict[str, Any]] = []
    measured = 0
    size = 0.0
    state_of, kept_item = hass.states.get, cache.items.get
    for index, ref in enumerate(page):
        if entities and size > STATE_PAGE_CHARS:
            break
        state = state_of(ref.entity_id)
        if kept and state is not None:
            # What the item says besides its state: a rename of its area, home or backend
            # is a different item.
            names = (
                area_names.get(ref.area_id) if with_area and ref.area_id else None,
                ref.home(hass) if with_home else None,
                ref.backend.gateway_name if with_backend else None,
            )
            known = kept_item(ref.entity_id)
            # Its marks are of this State in this zone: what marks_of would give.
            if (
                known is None
                or known.marks.state is not state
                or known.marks.tz is not tz
                or known.fields != fields
                or known.names != names
            ):
                marks = cache.marks_of(state, tz)
                built = build_item(Source(hass, ref, state, marks, area_names, devices), writers)
                known = cache.items[ref.entity_id] = KeptItem(marks, fields, names, built)
            item = known.item.copy()
        else:
            shown = cache.marks_of(state, tz) if state is not None else None
            item = build_item(Source(hass, ref, state, shown, area_names, devices), writers)
        if heard is not None and "state" in item:
            mark_stale(heard, ref, item)
        # Every SIZE_SAMPLE-th item is measured and each counts as the mean of those: the
        # estimate costs a fraction of encoding the page, and the size guard leaves margin.
        if index % SIZE_SAMPLE == 0:
            measured += _estimated_size(item)
        size += measured / (index // SIZE_SAMPLE + 1)
        entities.append(item)
    return entities


def _page_head(
    refs: Sequence[EntityRef], entities: Sequence[dict[str, Any]], layout: _Layout
) -> dict[str, Any]:
    """The counts, and what every entity on the page shares."""
    result: dict[str, Any] = {"total": len(refs), "count": len(entities)}
    if layout.backend is not None:
        result["backend"] = layout.backend
    if layout.home is not None:
        result["home"] = layout.home
    return result


def _add_page_notes(
    hass: HomeAssistant,
    result: dict[str, Any],
    entities: Sequence[dict[str, Any]],
    *,
    offset: int,
    total: int,
) -> None:
    """Each level's unit once per page, not per entity; where the next page starts."""
    # The keys of every item in one C-level pass, not a Python test per key.
    shown = LEVEL_NAMES.intersection(itertools.chain.from_iterable(entities))
    if units := level_units(sorted(shown), hass.config.units.temperature_unit):
        result["units"] = units
    if offset + len(entities) < total:
        result["next_offset"] = offset + len(entities)


def _estimated_size(item: Mapping[str, Any]) -> int:
    """Roughly the item's JSON length, cheaply: string values are measured by joining them
    (one C-level pass); only an item with other values (attribute dicts, numbers) has those
    encoded to be measured."""
    try:
        values = len("".join(item.values()))
    except TypeError:
        values = sum(
            len(value) if isinstance(value, str) else len(_compact_json(value))
            for value in item.values()
        )
    return 2 + 6 * len(item) + len("".join(item)) + values


def _compact_json(value: Any) -> bytes:
    return codec.dumps(value)
