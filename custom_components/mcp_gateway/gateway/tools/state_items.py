"""What each entity says in a get_state answer: the fields asked for, read from its State
(name, state as shown, unit, levels worked out once per state change), and an item of the
default fields kept between reads and copied into each answer."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
import functools
from typing import Any, Final

from homeassistant.const import ATTR_FRIENDLY_NAME, ATTR_UNIT_OF_MEASUREMENT
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import device_registry as dr
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN
from ...core.localtime import local_iso, local_iso_text, local_state
from ..finding.selection import EntityRef
from .levels import LEVEL_NAMES, RAW_LEVEL_ATTRIBUTES, entity_levels, level_of


@dataclass(slots=True)
class Marks:
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
class KeptItem:
    """One entity as a page of these fields showed it, for these marks (its State) and these
    names of its area, home and backend; copied into every answer, never handed out."""

    marks: Marks
    fields: tuple[str, ...]
    names: tuple[str | None, str | None, str | None]
    item: dict[str, Any]


class ItemCache:
    """What reads keep of each entity between them, by entity id: its state's Marks and its
    last item."""

    def __init__(self) -> None:
        self.marks: dict[str, Marks] = {}
        self.items: dict[str, KeptItem] = {}

    def marks_of(self, state: State, tz: tzinfo) -> Marks:
        """The state's marks, worked out again only when the state (or HA's zone) changed."""
        marks = self.marks.get(state.entity_id)
        if marks is None or marks.state is not state or marks.tz is not tz:
            if len(self.marks) >= MAX_KEPT_ENTITIES:
                self.marks.clear()  # entities removed or renamed long ago: start afresh
                self.items.clear()
            attributes = state.attributes
            marks = self.marks[state.entity_id] = Marks(
                state,
                tz,
                attributes.get(ATTR_FRIENDLY_NAME),
                local_state(state, tz),
                attributes.get(ATTR_UNIT_OF_MEASUREMENT),
                entity_levels(state),
            )
        return marks


# How many entities a read cache (these items, the stale marks) holds before it starts afresh:
# far above any home's entity count, so only ids of entities gone long ago make it this big.
MAX_KEPT_ENTITIES: Final = 50_000
DATA_ITEMS: Final[HassKey[ItemCache]] = HassKey(f"{DOMAIN}_get_state_cache")


def item_cache(hass: HomeAssistant) -> ItemCache:
    """The hass-wide ItemCache."""
    if (cache := hass.data.get(DATA_ITEMS)) is None:
        cache = hass.data[DATA_ITEMS] = ItemCache()
    return cache


# Made once per entity on every page: a plain slotted class, cheaper to build than a frozen one.
@dataclass(slots=True)
class Source:
    """What one entity's fields are read from."""

    hass: HomeAssistant
    ref: EntityRef
    state: State | None
    marks: Marks | None
    area_names: Mapping[str, str]
    devices: dr.DeviceRegistry

    @property
    def attributes(self) -> Mapping[str, Any]:
        return self.state.attributes if self.state is not None else {}


Writer = Callable[[dict[str, Any], Source], None]


@functools.lru_cache(maxsize=64)
def writers(fields: tuple[str, ...]) -> tuple[Writer, ...]:
    """How each asked field is written into an entity, chosen once per set of fields (not
    once per field of every entity)."""
    return tuple(_writer(name) for name in fields if name != "entity_id")


def _writer(name: str) -> Writer:
    """Add what one asked field says of the entity: its value, or levels, or nothing."""
    if (direct := _MARK_WRITERS.get(name)) is not None:
        return direct
    if (read := _FIELD_VALUES.get(name)) is not None:
        return functools.partial(_write_value, name, read)
    if name in RAW_LEVEL_ATTRIBUTES or name in LEVEL_NAMES:
        return functools.partial(_write_asked_level, name)
    return functools.partial(_write_attribute, name)


def _write_levels(item: dict[str, Any], source: Source) -> None:
    if source.marks is not None:
        item.update(source.marks.levels)


def _write_name(item: dict[str, Any], source: Source) -> None:
    if source.marks is not None and (name := source.marks.name) is not None:
        item["name"] = name


def _write_state(item: dict[str, Any], source: Source) -> None:
    item["state"] = source.marks.shown if source.marks is not None else "unknown"


def _write_unit(item: dict[str, Any], source: Source) -> None:
    if source.marks is not None and (unit := source.marks.unit) is not None:
        item["unit"] = unit


# Fields whose values follow from the entity's marks (its State), its id and the names of
# its area, home and backend: an item of only these is kept between reads.
KEPT_FIELDS: Final = frozenset(
    {"entity_id", "name", "state", "levels", "unit", "area", "home", "backend", "domain"}
)


# The default fields read straight from the marks: one call per field of every entity.
_MARK_WRITERS: Final[Mapping[str, Writer]] = {
    "levels": _write_levels,
    "name": _write_name,
    "state": _write_state,
    "unit": _write_unit,
}


def _write_value(
    name: str, read: Callable[[Source], Any], item: dict[str, Any], source: Source
) -> None:
    if (value := read(source)) is not None:
        item[name] = value


def _write_asked_level(name: str, item: dict[str, Any], source: Source) -> None:
    item.update(_asked_level(source.state, name))


def _write_attribute(name: str, item: dict[str, Any], source: Source) -> None:
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


def _state_value(source: Source) -> Any:
    # Timestamps in HA's zone, not UTC (localtime.py).
    return source.marks.shown if source.marks is not None else "unknown"


def _device_name(source: Source) -> str | None:
    ref = source.ref
    device = source.devices.async_get(ref.device_id) if ref.device_id else None
    return (device.name_by_user or device.name) if device else None


def _all_attributes(source: Source) -> dict[str, Any]:
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
_FIELD_VALUES: Final[Mapping[str, Callable[[Source], Any]]] = {
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


def build_item(source: Source, writers: Sequence[Writer]) -> dict[str, Any]:
    """One entity with the page's fields, in the page's order."""
    item: dict[str, Any] = {"entity_id": source.ref.entity_id}
    for write in writers:
        write(item, source)
    return item


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
