"""get_state: the current states of the integration's entities, projected and paged.

Each entity carries only the fields asked for (empty ones left out); a page ends at a limit or
near STATE_PAGE_CHARS of JSON, whichever comes first, and says where the next one starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
import functools
import itertools
from typing import TYPE_CHECKING, Any, Final, NamedTuple
import weakref

from homeassistant.const import ATTR_FRIENDLY_NAME, ATTR_UNIT_OF_MEASUREMENT, Platform
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import area_registry as ar, device_registry as dr
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN
from ...core.localtime import local_iso, local_iso_text, local_state
from ...framework.base import BackendRuntime, Silence
from ...mcp import codec
from ...permissions.visibility import readable_entities
from ..finding import homes
from ..finding.query import FILTER_PROPERTIES, MAX_ENTITY_IDS, EntityQuery
from ..finding.selection import EntityRef, candidate_entities, select_entities, spec_key
from ..finding.unexposed import no_match_hint, unexposed_hint, unexposed_matches
from .levels import (
    LEVEL_NAMES,
    RAW_LEVEL_ATTRIBUTES,
    entity_levels,
    level_of,
    level_units,
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
    writers = _writers(fields)
    # Fields read from the state and the few page-wide names below only: each entity's item
    # is built once per state change and copied on later reads.
    kept = _KEPT_FIELDS.issuperset(fields)
    with_area, with_home, with_backend = ("area" in fields, "home" in fields, "backend" in fields)
    cache = _read_cache(hass)
    tz = dt_util.get_default_time_zone()
    heard = _Heard(hass, dt_util.utcnow(), tz, cache) if "state" in item_fields else None
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
                built = _build_item(_Source(hass, ref, state, marks, area_names, devices), writers)
                known = cache.items[ref.entity_id] = _Item(marks, fields, names, built)
            item = known.item.copy()
        else:
            shown = cache.marks_of(state, tz) if state is not None else None
            item = _build_item(_Source(hass, ref, state, shown, area_names, devices), writers)
        if heard is not None and "state" in item:
            _mark_stale(heard, ref, item)
        # Every SIZE_SAMPLE-th item is measured and each counts as the mean of those: the
        # estimate costs a fraction of encoding the page, and the size guard leaves margin.
        if index % SIZE_SAMPLE == 0:
            measured += _estimated_size(item)
        size += measured / (index // SIZE_SAMPLE + 1)
        entities.append(item)
    return entities


def _build_item(source: _Source, writers: Sequence[_Writer]) -> dict[str, Any]:
    """One entity with the page's fields, in the page's order."""
    item: dict[str, Any] = {"entity_id": source.ref.entity_id}
    for write in writers:
        write(item, source)
    return item


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


class _Heard:
    """Which entities' devices are silent, for one page: each backend's runtime found once per
    page, each entity's key in it once per registry change (`keys`, kept across reads), and
    its silence once per backend data and until the clock may change it (`silences`)."""

    def __init__(self, hass: HomeAssistant, now: datetime, tz: tzinfo, cache: _ReadCache) -> None:
        self.hass = hass
        self.now = now
        self.tz = tz
        self._keys = cache.keys
        self._silences = cache.silences
        self._runtimes: dict[str, tuple[BackendRuntime | None, object | None]] = {}

    def silence(self, ref: EntityRef) -> Silence | None:
        """The entity's device silent for longer than its kind goes (None: not, or unknown)."""
        entry_id = ref.backend.entry.entry_id
        if (seen := self._runtimes.get(entry_id)) is None:
            found_runtime = ref.backend.runtime
            epoch = found_runtime.silence_epoch() if found_runtime is not None else None
            seen = self._runtimes[entry_id] = (found_runtime, epoch)
        runtime, epoch = seen
        if runtime is None:
            return None
        known = self._keys.get(ref.entity_id)
        if known is None or known[0]() is not runtime or known[1] != ref.unique_id:
            known = self._keys[ref.entity_id] = (
                weakref.ref(runtime),
                ref.unique_id,
                spec_key(self.hass, runtime, ref),
            )
        found = known[2]
        if found is None:
            return None
        if epoch is None:
            return runtime.silence(*found, self.now)
        kept = self._silences.get(ref.entity_id)
        if (
            kept is not None
            and kept[0] is epoch
            and kept[1] is found
            and (kept[3] is None or self.now <= kept[3])
        ):
            return kept[2]
        silence, until = runtime.silence_until(*found, self.now)
        self._silences[ref.entity_id] = (epoch, found, silence, until)
        return silence


# An entity's key in its backend, as found for a runtime (weakly: a removed entry's runtime
# is not kept alive by it) and unique id.
_SpecKey = tuple[weakref.ref[BackendRuntime], str, tuple[Platform, str] | None]
# An entity's silence as its backend said it: for that data (the epoch) and key, until when
# the clock alone may change it (None: it cannot).
_KeptSilence = tuple[object, tuple[Platform, str], Silence | None, datetime | None]


def _mark_stale(
    heard: _Heard, ref: EntityRef, item: dict[str, Any], *, history: bool = False
) -> None:
    """A device silent for longer than its kind normally goes (its backend says) may show a
    value that is no longer true: say since when, and that reading again gives nothing newer."""
    if (silence := heard.silence(ref)) is None:
        return
    item["stale"] = dict(_stale_mark(silence, heard.tz, history))


def history_stale_marker(hass: HomeAssistant) -> Callable[[EntityRef, dict[str, Any]], None]:
    """Marks a history answer's entity whose device is silent as get_state marks its state:
    no change from a device nobody hears from is not "nothing happened"."""
    cache = _read_cache(hass)
    heard = _Heard(hass, dt_util.utcnow(), dt_util.get_default_time_zone(), cache)
    return functools.partial(_mark_stale, heard, history=True)


@functools.lru_cache(maxsize=4096)
def _stale_mark(silence: Silence, tz: tzinfo, history: bool = False) -> dict[str, Any]:
    # A silent device's mark is the same read after read: made once, copied per answer.
    if silence.since is None:
        note = (
            "its backend has never heard from the device: no change here is unknown, "
            "not nothing happened"
            if history
            else "its backend has never heard from the device: this value is no reading"
        )
    else:
        usual = f" (its kind checks in within {_span(silence.usual)})" if silence.usual else ""
        held = "no change after that is unknown" if history else "its backend holds nothing newer"
        note = f"no word from the device since then{usual}; {held}"
    return {
        "since": local_iso(silence.since, tz) if silence.since is not None else None,
        "note": note,
    }


def _span(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{hours / 24:g} days" if hours >= 48 and hours % 24 == 0 else f"{hours:g} h"


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


@dataclass(slots=True)
class _Marks:
    """What one entity's state says in every answer (its name, state as shown, unit, levels),
    worked out once per state change: Home Assistant replaces the State object on every
    change, so an answer reuses these while the entity's State is the same object."""

    state: State
    tz: tzinfo
    name: Any
    shown: str
    unit: Any
    levels: dict[str, Any]


@dataclass(slots=True)
class _Item:
    """One entity as a page of these fields showed it, for these marks (its State) and these
    names of its area, home and backend; copied into every answer, never handed out."""

    marks: _Marks
    fields: tuple[str, ...]
    names: tuple[str | None, str | None, str | None]
    item: dict[str, Any]


class _ReadCache:
    """What reads keep of each entity between them, by entity id: its state's _Marks, its
    last item, its key in its backend and its silence there (for the stale marks)."""

    def __init__(self) -> None:
        self.marks: dict[str, _Marks] = {}
        self.items: dict[str, _Item] = {}
        self.keys: dict[str, _SpecKey] = {}
        self.silences: dict[str, _KeptSilence] = {}

    def marks_of(self, state: State, tz: tzinfo) -> _Marks:
        """The state's marks, worked out again only when the state (or HA's zone) changed."""
        marks = self.marks.get(state.entity_id)
        if marks is None or marks.state is not state or marks.tz is not tz:
            if len(self.marks) >= _KEPT:
                self.marks.clear()  # entities removed or renamed long ago: start afresh
                self.items.clear()
                self.keys.clear()
                self.silences.clear()
            attributes = state.attributes
            marks = self.marks[state.entity_id] = _Marks(
                state,
                tz,
                attributes.get(ATTR_FRIENDLY_NAME),
                local_state(state, tz),
                attributes.get(ATTR_UNIT_OF_MEASUREMENT),
                entity_levels(state),
            )
        return marks


# Far above any home's entity count: only ids of entities gone long ago make it this big.
_KEPT: Final = 50_000
DATA_READ_CACHE: Final[HassKey[_ReadCache]] = HassKey(f"{DOMAIN}_get_state_cache")


def _read_cache(hass: HomeAssistant) -> _ReadCache:
    if (cache := hass.data.get(DATA_READ_CACHE)) is None:
        cache = hass.data[DATA_READ_CACHE] = _ReadCache()
    return cache


# Made once per entity on every page: a plain slotted class, cheaper to build than a frozen one.
@dataclass(slots=True)
class _Source:
    """What one entity's fields are read from."""

    hass: HomeAssistant
    ref: EntityRef
    state: State | None
    marks: _Marks | None
    area_names: Mapping[str, str]
    devices: dr.DeviceRegistry

    @property
    def attributes(self) -> Mapping[str, Any]:
        return self.state.attributes if self.state is not None else {}


_Writer = Callable[[dict[str, Any], _Source], None]


@functools.lru_cache(maxsize=64)
def _writers(fields: tuple[str, ...]) -> tuple[_Writer, ...]:
    """How each asked field is written into an entity, chosen once per set of fields (not
    once per field of every entity)."""
    return tuple(_writer(name) for name in fields if name != "entity_id")


def _writer(name: str) -> _Writer:
    """Add what one asked field says of the entity: its value, or levels, or nothing."""
    if (direct := _MARK_WRITERS.get(name)) is not None:
        return direct
    if (read := _FIELD_VALUES.get(name)) is not None:
        return functools.partial(_write_value, name, read)
    if name in RAW_LEVEL_ATTRIBUTES or name in LEVEL_NAMES:
        return functools.partial(_write_asked_level, name)
    return functools.partial(_write_attribute, name)


def _write_levels(item: dict[str, Any], source: _Source) -> None:
    if source.marks is not None:
        item.update(source.marks.levels)


def _write_name(item: dict[str, Any], source: _Source) -> None:
    if source.marks is not None and (name := source.marks.name) is not None:
        item["name"] = name


def _write_state(item: dict[str, Any], source: _Source) -> None:
    item["state"] = source.marks.shown if source.marks is not None else "unknown"


def _write_unit(item: dict[str, Any], source: _Source) -> None:
    if source.marks is not None and (unit := source.marks.unit) is not None:
        item["unit"] = unit


# Fields whose values follow from the entity's marks (its State), its id and the names of
# its area, home and backend: an item of only these is kept between reads.
_KEPT_FIELDS: Final = frozenset(
    {"entity_id", "name", "state", "levels", "unit", "area", "home", "backend", "domain"}
)


# The default fields read straight from the marks: one call per field of every entity.
_MARK_WRITERS: Final[Mapping[str, _Writer]] = {
    "levels": _write_levels,
    "name": _write_name,
    "state": _write_state,
    "unit": _write_unit,
}


def _write_value(
    name: str, read: Callable[[_Source], Any], item: dict[str, Any], source: _Source
) -> None:
    if (value := read(source)) is not None:
        item[name] = value


def _write_asked_level(name: str, item: dict[str, Any], source: _Source) -> None:
    item.update(_asked_level(source.state, name))


def _write_attribute(name: str, item: dict[str, Any], source: _Source) -> None:
    if (value := jsonable(source.attributes.get(name))) is not None:
        item[name] = value


def _asked_level(state: State | None, name: str) -> dict[str, Any]:
    """Asked by HA's name or the level's: the level, in set_state's unit."""
    if state is None:
        return {}
    return {
        key: level
        for key, level in entity_levels(state).items()
        if key == name or level_of(name) == key
    }


def _state_value(source: _Source) -> Any:
    # Timestamps in HA's zone, not UTC (localtime.py).
    return source.marks.shown if source.marks is not None else "unknown"


def _device_name(source: _Source) -> str | None:
    ref = source.ref
    device = source.devices.async_get(ref.device_id) if ref.device_id else None
    return (device.name_by_user or device.name) if device else None


def _all_attributes(source: _Source) -> dict[str, Any]:
    # Levels in set_state's units, never HA's raw 0-255 brightness beside them.
    value = {
        key: jsonable(val)
        for key, val in source.attributes.items()
        if key != ATTR_FRIENDLY_NAME and key not in RAW_LEVEL_ATTRIBUTES
    }
    if source.marks is not None:
        value.update(source.marks.levels)
    return value


# The fields with a value of their own; any other name is a level or an attribute.
_FIELD_VALUES: Final[Mapping[str, Callable[[_Source], Any]]] = {
    "name": lambda s: s.marks.name if s.marks is not None else None,
    "state": _state_value,
    "area": lambda s: s.area_names.get(s.ref.area_id) if s.ref.area_id else None,
    "unit": lambda s: s.marks.unit if s.marks is not None else None,
    "home": lambda s: s.ref.home(s.hass),
    "backend": lambda s: s.ref.backend.gateway_name,
    "domain": lambda s: s.ref.domain,
    "device": _device_name,
    "last_changed": lambda s: local_iso(s.state.last_changed) if s.state is not None else None,
    "attributes": _all_attributes,
}


def jsonable(value: Any) -> Any:
    """State attributes may hold datetimes, enums, sets: make them plain JSON, every instant
    (a datetime, or ISO text with an offset) in HA's zone."""
    if isinstance(value, str):
        return local_iso_text(value)
    if value is None or isinstance(value, int | float | bool):
        return value
    if isinstance(value, datetime):
        return local_iso(value) if value.tzinfo is not None else value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): jsonable(val) for key, val in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item) for item in value]
    return str(value)
