"""The Home Assistant-level tools: state, control and history of the integration's entities.

They work on the entities of every exposed backend entry, through HA itself: states come from
the state machine, writes are HA service calls under the caller's context (so HA's own entity
permissions apply), history comes from HA's recorder. Nothing here talks to a backend directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
import json
import logging
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.const import (
    ATTR_FRIENDLY_NAME,
    ATTR_UNIT_OF_MEASUREMENT,
    STATE_UNAVAILABLE,
)
from homeassistant.core import Context, HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
)
from homeassistant.helpers.event import async_track_state_change_event
from homeassistant.util import dt as dt_util
import voluptuous as vol

from ..backends.base import ToolTier
from ..localtime import local_iso, local_state
from . import matching
from .catalog import CoreTool, ExposedBackend, GatewayCatalog, ToolFailure, listed_names
from .exposure import exposure_applies, is_exposed_entity
from .index import EntityIndex
from .policy import async_record_write, can_read_entity

if TYPE_CHECKING:
    from ..mcp.server import RequestContext

_LOGGER = logging.getLogger(__name__)

# Every service call reaches a backend through an entity; this bounds a stuck one.
SERVICE_TIMEOUT: Final = 30.0
MAX_STATE_LIMIT: Final = 1000
DEFAULT_STATE_LIMIT: Final = MAX_STATE_LIMIT
# A page stops growing at about this many characters of JSON: the result carries it once (as
# text), and with the escaping of a JSON string must stay well inside the server's size guard.
STATE_PAGE_CHARS: Final = 128_000
SIZE_SAMPLE: Final = 8
DEFAULT_HISTORY_HOURS: Final = 24
MAX_HISTORY_HOURS: Final = 24 * 30
MAX_HISTORY_ENTITIES: Final = 50
DEFAULT_HISTORY_POINTS: Final = 100
MAX_SET_UPDATES: Final = 50

BASIC_FIELDS: Final = ("entity_id", "name", "state", "area", "unit", "backend")


@dataclass(frozen=True, slots=True)
class EntityRef:
    """One of the integration's entities, with where it lives."""

    entity_id: str
    backend: ExposedBackend
    area_id: str | None
    device_id: str | None

    @property
    def domain(self) -> str:
        """The entity's platform domain."""
        return self.entity_id.split(".", 1)[0]


def exposed_entities(
    hass: HomeAssistant,
    backends: Iterable[ExposedBackend],
    *,
    entity_ids: Iterable[str] | None = None,
    domains: Iterable[str] | None = None,
) -> list[EntityRef]:
    """The enabled registry entities of the given backend entries, in entity id order.

    `entity_ids` / `domains` narrow through the index first, so only those are built.
    """
    by_entry = {backend.entry.entry_id: backend for backend in backends}
    index = EntityIndex.get(hass)
    return [
        EntityRef(
            entity.entity_id, by_entry[entity.entry_id], index.area_of(entity), entity.device_id
        )
        for entity in index.entities(by_entry, entity_ids=entity_ids, domains=domains)
    ]


def readable_entities(
    hass: HomeAssistant, user: User, refs: Iterable[EntityRef] | None = None
) -> list[EntityRef]:
    """The given refs (default: every exposed entity) this user may read (and, by the
    settings, exposed to assistants)."""
    if refs is None:
        refs = exposed_entities(hass, GatewayCatalog.get(hass).exposed_backends())
    exposed = exposure_applies(hass)
    return [
        ref
        for ref in refs
        if can_read_entity(user, ref.entity_id)
        and (not exposed or is_exposed_entity(hass, ref.entity_id))
    ]


def candidate_entities(hass: HomeAssistant, args: Mapping[str, Any]) -> list[EntityRef]:
    """Exposed entities narrowed by the index on the exact filters (entity_ids, domain)."""
    domains = _given(args, "domain")
    return exposed_entities(
        hass,
        GatewayCatalog.get(hass).exposed_backends(),
        entity_ids=_given(args, "entity_ids"),
        domains={_casefold(domain) for domain in domains} if domains else None,
    )


# --- shared filters --------------------------------------------------------------------------

_FILTER_PROPERTIES: Final[dict[str, Any]] = {
    "backend": {
        "type": "string",
        "description": "Gateway tool name, entry title or backend kind (hubitat, homecast, …).",
    },
    "area": {
        "type": "string",
        "description": 'Area name, alias or id, or part of it ("bedroom").',
    },
    "floor": {"type": "string", "description": "Floor name, alias or id."},
    "domain": {
        "type": "array",
        "items": {"type": "string"},
        "description": 'Entity domains, e.g. ["light", "switch"].',
    },
    "name": {
        "type": "string",
        "description": (
            "Words of the name, alias, device, area or entity id, any case and order "
            '("front door", "kitchen lights").'
        ),
    },
    "available": {
        "type": "boolean",
        "description": "false: only unavailable (offline) entities; true: only available ones.",
    },
    "entity_ids": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_STATE_LIMIT},
}


def _casefold(value: str) -> str:
    return value.strip().casefold()


def _given(args: Mapping[str, Any], key: str) -> Any:
    """A filter's value; empty strings and lists mean "not given" (strict-mode clients fill
    every property, and an empty one is how they leave it out)."""
    value = args.get(key)
    return None if value in ("", []) else value


@dataclass(slots=True)
class Selection:
    """Filtered entities, and what the filters found out along the way (for the AI)."""

    refs: list[EntityRef]
    notes: list[str]


def filter_entities(
    hass: HomeAssistant, refs: Sequence[EntityRef], args: Mapping[str, Any]
) -> list[EntityRef]:
    """Apply get_state's filters; an unknown backend or area is an error that lists the known."""
    return select_entities(hass, refs, args).refs


def select_entities(
    hass: HomeAssistant, refs: Sequence[EntityRef], args: Mapping[str, Any]
) -> Selection:
    """Apply the shared filters, matching the way people name things (see matching.py)."""
    selected = list(refs)
    notes: list[str] = []
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    if (backend := _given(args, "backend")) is not None:
        selected = _by_backend(hass, selected, backend)
    if (floor := _given(args, "floor")) is not None:
        found = matching.best(matching.floors(hass), floor)
        if not found:
            known = ", ".join(sorted(f.name for f in matching.floors(hass))) or "none"
            raise ToolFailure(f"Unknown floor '{floor}'. Floors: {known}.", code="not_found")
        area_ids = matching.areas_on_floors(hass, {f.id for f in found})
        selected = [ref for ref in selected if ref.area_id in area_ids]
    # The area goes last: when its whole-name match leaves nothing, partial matches may not.
    area = _given(args, "area")
    before_filters = selected
    if domains := _given(args, "domain"):
        wanted_domains = {_casefold(domain) for domain in domains}
        selected = [ref for ref in selected if ref.domain in wanted_domains]
    if (name := _given(args, "name")) is not None:
        wanted = matching.words(name)
        raw = _casefold(name)
        selected = [
            ref
            for ref in selected
            if matching.words_match(wanted, _words(hass, ref, area_names))
            or raw in _searchable_name(hass, ref)
        ]
    if (available := args.get("available")) is not None:
        selected = [ref for ref in selected if _is_available(hass, ref) is available]
    if (entity_ids := _given(args, "entity_ids")) is not None:
        wanted_ids = set(entity_ids)
        selected = [ref for ref in selected if ref.entity_id in wanted_ids]
    if area is not None:
        selected = _by_area(
            hass, selected, before_filters, area, area_names=area_names, notes=notes
        )
    return Selection(selected, notes)


def _by_area(
    hass: HomeAssistant,
    selected: list[EntityRef],
    every: list[EntityRef],
    area: str,
    *,
    area_names: Mapping[str, str],
    notes: list[str],
) -> list[EntityRef]:
    """The selected entities in the area(s) the words name: whole names first, then parts.

    Entities without an area are found by the area's words in their name too ("Bedroom Robine
    Wake" when nobody assigned the clock to an area). An area nothing could match is an error
    that lists the areas.
    """
    wanted = matching.words(area)

    def unassigned(refs: Sequence[EntityRef]) -> list[EntityRef]:
        return [
            ref
            for ref in refs
            if ref.area_id is None and matching.words_match(wanted, _words(hass, ref, area_names))
        ]

    tiers = matching.tiers(matching.areas(hass), area)
    if not tiers and not unassigned(every):
        known = ", ".join(sorted(area_names.values())) or "none"
        raise ToolFailure(f"Unknown area '{area}'. Areas: {known}.", code="not_found")
    for rank, tier in enumerate(tiers):
        ids = {found.id for found in tier}
        in_area = [ref for ref in selected if ref.area_id in ids]
        chosen = in_area + [ref for ref in unassigned(selected) if ref not in in_area]
        if not chosen:
            continue
        if rank > 0:
            exact = ", ".join(found.name for found in tiers[0])
            notes.append(f"Nothing matches in {exact}; found in areas named like '{area}'.")
        if len(tier) > 1:
            notes.append(f"Areas matching '{area}': {', '.join(a.name for a in tier)}.")
        return chosen
    if not tiers:
        notes.append(f"No area matches '{area}'; these entities have it in their name.")
    return unassigned(selected)


def _by_backend(hass: HomeAssistant, refs: list[EntityRef], backend: str) -> list[EntityRef]:
    wanted = _casefold(backend)
    all_backends = GatewayCatalog.get(hass).exposed_backends()
    matching_ids = {
        b.entry.entry_id
        for b in all_backends
        if wanted
        in (
            _casefold(b.gateway_name),
            _casefold(b.entry.title),
            b.kind,
            _casefold(b.entry.entry_id),
        )
    }
    if not matching_ids:
        known = ", ".join(b.gateway_name for b in all_backends) or "none"
        raise ToolFailure(f"Unknown backend '{backend}'. Backends: {known}.", code="not_found")
    return [ref for ref in refs if ref.backend.entry.entry_id in matching_ids]


def _words(hass: HomeAssistant, ref: EntityRef, area_names: Mapping[str, str]) -> set[str]:
    return matching.entity_words(
        hass,
        ref.entity_id,
        hass.states.get(ref.entity_id),
        area_names.get(ref.area_id) if ref.area_id else None,
        ref.device_id,
    )


def _is_available(hass: HomeAssistant, ref: EntityRef) -> bool:
    state = hass.states.get(ref.entity_id)
    return state is not None and state.state != STATE_UNAVAILABLE


def _searchable_name(hass: HomeAssistant, ref: EntityRef) -> str:
    state = hass.states.get(ref.entity_id)
    name = state.attributes.get(ATTR_FRIENDLY_NAME, "") if state else ""
    return f"{_casefold(str(name))} {ref.entity_id}"


def empty_hint(hass: HomeAssistant, refs: Sequence[EntityRef], args: Mapping[str, Any]) -> str:
    """What exists instead, for an answer without entities: closest names, areas with entities."""
    names = {}
    for ref in refs:
        state = hass.states.get(ref.entity_id)
        if state is not None:
            names[ref.entity_id] = str(state.attributes.get(ATTR_FRIENDLY_NAME, ref.entity_id))
    parts: list[str] = []
    query = " ".join(str(_given(args, key) or "") for key in ("area", "name")).strip()
    if query and (close := matching.closest_names(query, names)):
        parts.append(f"Closest names: {', '.join(close)}.")
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    used = sorted({area_names[ref.area_id] for ref in refs if ref.area_id in area_names})
    if used:
        parts.append(f"Areas with entities: {', '.join(used)}.")
    if not parts:
        parts.append(f"{len(refs)} entities exist; loosen the filters.")
    return "No entity matches these filters. " + " ".join(parts)


# --- get_state -------------------------------------------------------------------------------


GET_STATE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        **_FILTER_PROPERTIES,
        "fields": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "Fields per entity (default entity_id, name, state, area, unit, backend). Also: "
                "domain, device, last_changed, attributes (all), or any attribute name."
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


async def async_get_state(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Current states of the integration's entities the caller may read."""
    # Filters first, on the index's narrowed candidates; the permission check is per entity
    # that matched (and the list is already in entity id order).
    selection = select_entities(hass, candidate_entities(hass, args), args)
    refs = readable_entities(hass, ctx.user, selection.refs)
    limit = args.get("limit") or DEFAULT_STATE_LIMIT
    offset = args.get("offset") or 0
    fields = _given(args, "fields") or BASIC_FIELDS
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    devices = dr.async_get(hass)
    page = refs[offset : offset + limit]
    # One backend on the page: said once at the top, not per entity.
    page_backends = {ref.backend.gateway_name for ref in page}
    shared_backend = "backend" in fields and len(page_backends) == 1
    item_fields = [f for f in fields if not (shared_backend and f == "backend")]
    entities: list[dict[str, Any]] = []
    measured = 0
    size = 0.0
    for index, ref in enumerate(page):
        if entities and size > STATE_PAGE_CHARS:
            break
        item = _project(ref, hass.states.get(ref.entity_id), item_fields, area_names, devices)
        # Every SIZE_SAMPLE-th item is measured and each counts as the mean of those: the
        # estimate costs a fraction of encoding the page, and the size guard leaves margin.
        if index % SIZE_SAMPLE == 0:
            measured += _estimated_size(item)
        size += measured / (index // SIZE_SAMPLE + 1)
        entities.append(item)
    result: dict[str, Any] = {"total": len(refs), "count": len(entities)}
    if shared_backend:
        result["backend"] = page_backends.pop()
    result["entities"] = entities
    if offset + len(entities) < len(refs):
        result["next_offset"] = offset + len(entities)
    if selection.notes:
        result["note"] = " ".join(selection.notes)
    if not refs:
        result["hint"] = empty_hint(hass, readable_entities(hass, ctx.user), args)
    return result


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


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _project(
    ref: EntityRef,
    state: State | None,
    fields: Sequence[str],
    area_names: Mapping[str, str],
    devices: dr.DeviceRegistry,
) -> dict[str, Any]:
    """One entity, only the asked fields; empty values are left out to stay compact."""
    attributes = state.attributes if state is not None else {}
    item: dict[str, Any] = {"entity_id": ref.entity_id}
    for name in fields:
        value: Any
        match name:
            case "entity_id":
                continue
            case "name":
                value = attributes.get(ATTR_FRIENDLY_NAME)
            case "state":
                # Timestamps in HA's zone, not UTC (localtime.py).
                value = local_state(state) if state is not None else "unknown"
            case "area":
                value = area_names.get(ref.area_id) if ref.area_id else None
            case "unit":
                value = attributes.get(ATTR_UNIT_OF_MEASUREMENT)
            case "backend":
                value = ref.backend.gateway_name
            case "domain":
                value = ref.domain
            case "device":
                device = devices.async_get(ref.device_id) if ref.device_id else None
                value = (device.name_by_user or device.name) if device else None
            case "last_changed":
                value = local_iso(state.last_changed) if state is not None else None
            case "attributes":
                value = {
                    key: _jsonable(val)
                    for key, val in attributes.items()
                    if key != ATTR_FRIENDLY_NAME
                }
            case _:
                value = _jsonable(attributes.get(name))
        if value is not None:
            item[name] = value
    return item


def _jsonable(value: Any) -> Any:
    """State attributes may hold datetimes, enums, sets: make them plain JSON."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, datetime):
        return local_iso(value) if value.tzinfo is not None else value.isoformat()
    if isinstance(value, Mapping):
        return {str(key): _jsonable(val) for key, val in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(item) for item in value]
    return str(value)


# --- set_state -------------------------------------------------------------------------------

_UPDATE_PROPERTIES: Final[dict[str, Any]] = {
    "entity_id": {"type": "string"},
    "state": {
        "type": "string",
        "description": (
            "on/off; open/closed/stop (cover, valve); locked/unlocked/open (lock); disarmed, "
            "armed_home/away/night/vacation (alarm); an HVAC mode (climate); pressed (button); "
            "on (scene)."
        ),
    },
    "brightness": {"type": "number", "minimum": 0, "maximum": 100, "description": "Percent."},
    "color_temp_kelvin": {"type": "integer", "minimum": 1000, "maximum": 12000},
    "hs_color": {
        "type": "array",
        "items": {"type": "number"},
        "minItems": 2,
        "maxItems": 2,
        "description": "[hue 0-360, saturation 0-100].",
    },
    "transition": {"type": "number", "minimum": 0, "maximum": 3600},
    "position": {"type": "integer", "minimum": 0, "maximum": 100},
    "percentage": {"type": "integer", "minimum": 0, "maximum": 100, "description": "Fan speed."},
    "temperature": {"type": "number"},
    "target_temp_low": {"type": "number"},
    "target_temp_high": {"type": "number"},
    "hvac_mode": {"type": "string"},
    "fan_mode": {"type": "string"},
    "value": {
        "type": "string",
        "description": "A select option, number, text or ISO datetime, as text.",
    },
    "code": {"type": "string", "description": "Alarm or lock code, when one is needed."},
}

SET_STATE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "updates": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_SET_UPDATES,
            "items": {
                "type": "object",
                "properties": _UPDATE_PROPERTIES,
                "required": ["entity_id"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["updates"],
    "additionalProperties": False,
}

type ServiceCall = tuple[str, str, dict[str, Any]]
# Turns (state, the other fields) into service calls, popping the fields it used.
type Builder = Callable[[str | None, dict[str, Any]], list[ServiceCall]]

_ALARM_SERVICES: Final = {
    "disarmed": "alarm_disarm",
    "armed_home": "alarm_arm_home",
    "armed_away": "alarm_arm_away",
    "armed_night": "alarm_arm_night",
    "armed_vacation": "alarm_arm_vacation",
    "armed_custom_bypass": "alarm_arm_custom_bypass",
    "triggered": "alarm_trigger",
}
_READ_ONLY_DOMAINS: Final = frozenset({"sensor", "binary_sensor", "event"})


class _BadUpdate(ValueError):
    """An update the vocabulary cannot express for that entity."""


def service_calls(domain: str, update: Mapping[str, Any]) -> list[ServiceCall]:
    """Translate one update of the shared vocabulary into the HA service calls it means."""
    # "" is how a client that must fill every property leaves one out.
    fields = {key: value for key, value in update.items() if key != "entity_id" and value != ""}
    if not fields:
        raise _BadUpdate("nothing to change: give a state or a value")
    if domain in _READ_ONLY_DOMAINS:
        raise _BadUpdate(f"a {domain} entity is read-only")
    builder = _BUILDERS.get(domain)
    if builder is None:
        raise _BadUpdate(f"entities of domain {domain} cannot be set through set_state")
    state = fields.pop("state", None)
    calls = builder(state, fields)
    if fields:
        raise _BadUpdate(f"{', '.join(sorted(fields))} do not apply to a {domain} entity")
    return calls


def _take(fields: dict[str, Any], *names: str) -> dict[str, Any]:
    """Pop the named fields that are present (what is left over is reported as not applying)."""
    return {name: fields.pop(name) for name in names if name in fields}


def _expect(state: str | None, allowed: Iterable[str], domain: str) -> None:
    if state is not None and state not in allowed:
        raise _BadUpdate(f"state of a {domain} must be one of {', '.join(allowed)}")


def _on_off(domain: str) -> Builder:
    def build(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
        _expect(state, ("on", "off"), domain)
        if state is None:
            raise _BadUpdate("give state on or off")
        return [(domain, f"turn_{state}", {})]

    return build


def _light(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("on", "off"), "light")
    data = _take(fields, "brightness", "color_temp_kelvin", "hs_color", "transition")
    if state == "off":
        extra = set(data) - {"transition"}
        if extra:
            raise _BadUpdate(f"{', '.join(sorted(extra))} cannot be set while turning off")
        return [("light", "turn_off", data)]
    if "brightness" in data:
        data["brightness_pct"] = data.pop("brightness")
    if state is None and not data:
        raise _BadUpdate("give state on/off or a light setting")
    return [("light", "turn_on", data)]


def _fan(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("on", "off"), "fan")
    data = _take(fields, "percentage")
    if state == "off":
        if data:
            raise _BadUpdate("percentage cannot be set while turning off")
        return [("fan", "turn_off", {})]
    if state == "on":
        return [("fan", "turn_on", data)]
    if not data:
        raise _BadUpdate("give state on/off or a percentage")
    return [("fan", "set_percentage", data)]


def _opening(domain: str) -> Builder:
    def build(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
        _expect(state, ("open", "closed", "stop"), domain)
        calls: list[ServiceCall] = []
        if state is not None:
            service = {"open": "open", "closed": "close", "stop": "stop"}[state]
            calls.append((domain, f"{service}_{domain}", {}))
        if "position" in fields:
            calls.append((domain, f"set_{domain}_position", {"position": fields.pop("position")}))
        if not calls:
            raise _BadUpdate("give state open/closed/stop or a position")
        return calls

    return build


def _lock(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("locked", "unlocked", "open"), "lock")
    if state is None:
        raise _BadUpdate("give state locked, unlocked or open")
    service = {"locked": "lock", "unlocked": "unlock", "open": "open"}[state]
    return [("lock", service, _take(fields, "code"))]


def _climate(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    calls: list[ServiceCall] = []
    hvac_mode = fields.pop("hvac_mode", None)
    if state in ("on", "off") and hvac_mode is None:
        calls.append(("climate", f"turn_{state}", {}))
    elif state is not None:
        hvac_mode = hvac_mode or state
    temperatures = _take(fields, "temperature", "target_temp_low", "target_temp_high")
    if temperatures:
        # One call sets mode and target together, as a thermostat's own panel does.
        if hvac_mode is not None:
            temperatures["hvac_mode"] = hvac_mode
        calls.append(("climate", "set_temperature", temperatures))
    elif hvac_mode is not None:
        calls.append(("climate", "set_hvac_mode", {"hvac_mode": hvac_mode}))
    if "fan_mode" in fields:
        calls.append(("climate", "set_fan_mode", {"fan_mode": fields.pop("fan_mode")}))
    if not calls:
        raise _BadUpdate("give a state/hvac_mode, a temperature or a fan_mode")
    return calls


def _alarm(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, tuple(_ALARM_SERVICES), "alarm_control_panel")
    if state is None:
        raise _BadUpdate(f"give a state: {', '.join(_ALARM_SERVICES)}")
    return [("alarm_control_panel", _ALARM_SERVICES[state], _take(fields, "code"))]


def _valued(domain: str, service: str, key: str) -> Builder:
    def build(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
        value = fields.pop("value", state)
        if value is None:
            raise _BadUpdate("give a value")
        if domain == "number" and isinstance(value, str):
            try:
                value = float(value)
            except ValueError as err:
                raise _BadUpdate("value of a number must be numeric") from err
        if domain == "text":
            value = str(value)
        return [(domain, service, {key: value})]

    return build


def _press(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("pressed", "press"), "button")
    return [("button", "press", {})]


def _scene(state: str | None, fields: dict[str, Any]) -> list[ServiceCall]:
    _expect(state, ("on", "activated"), "scene")
    return [("scene", "turn_on", {})]


_BUILDERS: Final[dict[str, Builder]] = {
    "light": _light,
    "switch": _on_off("switch"),
    "fan": _fan,
    "cover": _opening("cover"),
    "valve": _opening("valve"),
    "lock": _lock,
    "climate": _climate,
    "alarm_control_panel": _alarm,
    "select": _valued("select", "select_option", "option"),
    "number": _valued("number", "set_value", "value"),
    "text": _valued("text", "set_value", "value"),
    "datetime": _valued("datetime", "set_value", "datetime"),
    "button": _press,
    "scene": _scene,
}


async def async_set_state(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Apply updates through HA services, each as the caller; each reports what really happened.

    An unavailable entity is not sent anything (HA's services would skip it silently and
    report success); a sent update is "done" only once the state shows it.
    """
    user: User = ctx.user
    wanted = [update["entity_id"] for update in args["updates"]]
    known = {
        ref.entity_id: ref
        for ref in readable_entities(hass, user, candidate_entities(hass, {"entity_ids": wanted}))
    }
    context = Context(user_id=user.id)
    results = await asyncio.gather(
        *(_apply_update(hass, ctx, known, update, context) for update in args["updates"])
    )
    counts = dict.fromkeys((DONE, IN_PROGRESS, NOT_CONFIRMED, FAILED), 0)
    for result in results:
        counts[result["status"]] += 1
    summary: dict[str, Any] = {
        "updated": counts[DONE],
        "failed": counts[FAILED],
    }
    if pending := counts[IN_PROGRESS] + counts[NOT_CONFIRMED]:
        summary["not_confirmed"] = pending
    summary["results"] = results
    if counts[FAILED] == len(results):
        first = next(result["error"] for result in results)
        raise ToolFailure(
            f"No update was applied: {first}" if len(results) == 1 else "No update was applied.",
            code="failed",
            **summary,
        )
    return summary


# Outcomes of one update, as set_state reports them.
DONE: Final = "done"
IN_PROGRESS: Final = "in_progress"  # the device reports it is getting there (opening, locking)
NOT_CONFIRMED: Final = "sent_not_confirmed"  # HA accepted it; the state has not followed
FAILED: Final = "failed"
# How long a sent update may take to show in the state before it is "not confirmed".
CONFIRM_SECONDS: Final = 3.0

type Expectation = Callable[[State], str | None]


async def _apply_update(
    hass: HomeAssistant,
    ctx: RequestContext,
    known: Mapping[str, EntityRef],
    update: Mapping[str, Any],
    context: Context,
) -> dict[str, Any]:
    entity_id: str = update["entity_id"]
    ref = known.get(entity_id)
    if ref is None:
        # Unknown, not ours, unexposed and unreadable look the same: nothing is revealed.
        return _failed(entity_id, f"{entity_id} is not available")
    try:
        calls = service_calls(ref.domain, update)
    except _BadUpdate as err:
        return _failed(entity_id, f"{entity_id}: {err}")
    before = hass.states.get(entity_id)
    if before is None or before.state == STATE_UNAVAILABLE:
        return _failed(
            entity_id,
            f"{_name(before, entity_id)} is unavailable (its device is offline or "
            "unreachable); nothing was sent.",
        )
    expect = expectation(ref.domain, update, before)
    changed = asyncio.Event()
    unsub = async_track_state_change_event(hass, entity_id, lambda _event: changed.set())
    try:
        done, error = await _run_calls(hass, entity_id, calls, context)
        status = FAILED
        if error is None:
            status = await _await_state(hass, entity_id, expect, changed)
    finally:
        unsub()
    async_record_write(
        hass,
        user=ctx.user,
        client_name=ctx.client_name,
        tool="set_state",
        summary=f"set_state {_name(before, entity_id)}: {_describe(update)}"
        + ("" if status in (DONE, FAILED) else " (sent, not confirmed)"),
        success=error is None,
        backend=ref.backend.gateway_name,
        entity_id=entity_id,
        context=context,
    )
    if error is not None:
        return {**_failed(entity_id, error), "done": ", ".join(done) if done else "nothing"}
    state = hass.states.get(entity_id)
    result: dict[str, Any] = {
        "entity_id": entity_id,
        "ok": status == DONE,
        "status": status,
        "state": local_state(state) if state is not None else None,
    }
    if status == NOT_CONFIRMED:
        result["note"] = (
            f"Sent, not confirmed: {_name(state, entity_id)} did not show the change within "
            f"{CONFIRM_SECONDS:g} s; check again with get_state."
        )
    elif status == IN_PROGRESS:
        result["note"] = f"Sent; {_name(state, entity_id)} is still {result['state']}."
    return result


def _failed(entity_id: str, error: str) -> dict[str, Any]:
    return {"entity_id": entity_id, "ok": False, "status": FAILED, "error": error}


def _name(state: State | None, entity_id: str) -> str:
    if state is None:
        return entity_id
    return str(state.attributes.get(ATTR_FRIENDLY_NAME) or entity_id)


async def _run_calls(
    hass: HomeAssistant, entity_id: str, calls: Sequence[ServiceCall], context: Context
) -> tuple[list[str], str | None]:
    """The service calls in order until one fails: (what ran, the error or None)."""
    done: list[str] = []
    for domain, service, data in calls:
        try:
            async with asyncio.timeout(SERVICE_TIMEOUT):
                await hass.services.async_call(
                    domain,
                    service,
                    {"entity_id": entity_id, **data},
                    blocking=True,
                    context=context,
                )
        except Unauthorized:
            return done, f"Permission denied: this Home Assistant user may not control {entity_id}"
        except TimeoutError:
            return done, f"{entity_id}: {domain}.{service} timed out"
        except (HomeAssistantError, vol.Invalid) as err:
            return done, f"{entity_id}: {domain}.{service} failed: {err}"
        done.append(f"{domain}.{service}")
    return done, None


async def _await_state(
    hass: HomeAssistant, entity_id: str, expect: Expectation, changed: asyncio.Event
) -> str:
    """Wait (briefly) until the state shows the update: done, in progress or not confirmed."""
    loop = hass.loop
    deadline = loop.time() + CONFIRM_SECONDS
    while True:
        state = hass.states.get(entity_id)
        outcome = expect(state) if state is not None else None
        if outcome == DONE:
            return DONE
        remaining = deadline - loop.time()
        if remaining <= 0:
            return outcome or NOT_CONFIRMED
        changed.clear()
        try:
            async with asyncio.timeout(remaining):
                await changed.wait()
        except TimeoutError:
            state = hass.states.get(entity_id)
            outcome = expect(state) if state is not None else None
            return outcome or NOT_CONFIRMED


_TRANSITIONS: Final = {
    "open": ("opening",),
    "closed": ("closing",),
    "locked": ("locking",),
    "unlocked": ("unlocking",),
}


def expectation(domain: str, update: Mapping[str, Any], before: State) -> Expectation:
    """How to tell, from the entity's state, that the update took effect.

    Returns DONE when it shows, IN_PROGRESS for the way there (opening, arming), else None.
    """
    wanted = update.get("state")
    checks: list[Callable[[State], bool]] = []
    transitional: tuple[str, ...] = ()
    if domain in ("light", "switch", "fan") and wanted in ("on", "off"):
        checks.append(lambda s: s.state == wanted)
    elif domain == "light" and wanted is None:
        checks.append(lambda s: s.state == "on")
    elif domain in ("cover", "valve", "lock") and isinstance(wanted, str) and wanted != "stop":
        # A lock told to open ends open or, once the latch falls back, unlocked.
        targets = ("open", "unlocked") if (domain, wanted) == ("lock", "open") else (wanted,)
        checks.append(lambda s: s.state in targets)
        transitional = _TRANSITIONS.get(wanted, ()) + (("unlocking",) if domain == "lock" else ())
    elif domain == "alarm_control_panel" and isinstance(wanted, str):
        checks.append(lambda s: s.state == wanted)
        transitional = ("arming", "pending")
    elif domain == "climate":
        mode = update.get("hvac_mode") or (wanted if wanted not in (None, "on") else None)
        if mode is not None:
            checks.append(lambda s: s.state == mode)
        if (temperature := update.get("temperature")) is not None:
            checks.append(lambda s: _close(s.attributes.get("temperature"), temperature))
    elif domain in ("select", "text") and (value := update.get("value", wanted)) is not None:
        checks.append(lambda s: s.state == str(value))
    elif domain == "number" and (value := update.get("value", wanted)) is not None:
        checks.append(lambda s: _close(s.state, value))
    if "position" in update and domain in ("cover", "valve"):
        position = update["position"]
        checks.append(lambda s: _close(s.attributes.get("current_position"), position))
        transitional = ("opening", "closing")
    if not checks:
        # Nothing to compare (a button press, a scene, a datetime): any new state shows it ran.
        return lambda s: DONE if s.last_updated != before.last_updated else None

    def check(state: State) -> str | None:
        if all(test(state) for test in checks):
            return DONE
        return IN_PROGRESS if state.state in transitional else None

    return check


def _close(value: Any, wanted: Any) -> bool:
    try:
        return abs(float(value) - float(wanted)) < 0.51
    except (TypeError, ValueError):
        return False


def _describe(update: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{key}={value}" for key, value in update.items() if key not in ("entity_id", "code")
    )


# --- get_history -----------------------------------------------------------------------------

GET_HISTORY_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        **_FILTER_PROPERTIES,
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
    refs = readable_entities(
        hass, ctx.user, filter_entities(hass, candidate_entities(hass, args), args)
    )
    if not refs:
        raise ToolFailure(
            empty_hint(hass, readable_entities(hass, ctx.user), args), code="not_found"
        )
    if len(refs) > MAX_HISTORY_ENTITIES:
        raise ToolFailure(
            f"{len(refs)} entities match; narrow the filters to at most "
            f"{MAX_HISTORY_ENTITIES} (e.g. entity_ids, domain or area).",
            code="too_many",
        )
    end = _parse_time(args["end"], "end") if "end" in args else dt_util.utcnow()
    if "start" in args:
        start = _parse_time(args["start"], "start")
    else:
        try:
            start = end - timedelta(hours=args.get("hours", DEFAULT_HISTORY_HOURS))
        except OverflowError as err:
            raise ToolFailure("end is too early.", code="invalid") from err
    if start >= end:
        raise ToolFailure("start must be before end.", code="invalid")
    limit = args.get("limit", DEFAULT_HISTORY_POINTS)
    entity_ids = sorted(ref.entity_id for ref in refs)

    from homeassistant.helpers.recorder import get_instance

    states = await get_instance(hass).async_add_executor_job(
        _significant_states, hass, start, end, entity_ids
    )
    entities: dict[str, Any] = {}
    for entity_id in entity_ids:
        points = [_point(item) for item in states.get(entity_id, [])]
        entities[entity_id] = {"count": len(points), "points": points[-limit:]}
        if len(points) > limit:
            entities[entity_id]["truncated"] = True
    return {"start": local_iso(start), "end": local_iso(end), "entities": entities}


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


def _point(item: State | Mapping[str, Any]) -> list[str]:
    """[time, state]: the compact form an AI reads fastest."""
    if isinstance(item, State):
        return [local_iso(item.last_changed), item.state]
    changed = item.get("last_changed")
    if isinstance(changed, str):
        # minimal_response gives later points as UTC ISO text.
        changed = dt_util.parse_datetime(changed) or changed
    when = local_iso(changed) if isinstance(changed, datetime) else str(changed)
    return [when, str(item.get("state"))]


# --- list_backends ---------------------------------------------------------------------------

LIST_BACKENDS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {},
    "required": [],
    "additionalProperties": False,
}


async def async_list_backends(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Health of every exposed entry, and how many of its tools this caller may use."""
    catalog = GatewayCatalog.get(hass)
    backends = []
    visible = await catalog.async_visible(ctx.user)
    listed = listed_names([backend for backend, _, _ in visible])
    for backend, backend_catalog, tools in visible:
        # The tool tools/list shows for it, and the entry to pass when its kind is one tool.
        tool_name, entry = listed[backend.gateway_name]
        item: dict[str, Any] = {"gateway_tool": tool_name}
        if entry is not None:
            item["entry"] = entry
        item |= {
            "title": backend.entry.title,
            "backend": backend.kind,
            "state": backend.entry.state.value,
            "tools": len(tools),
        }
        if (runtime := backend.runtime) is not None:
            try:
                health = runtime.health()
            except Exception:  # a broken health hook must not hide the others
                _LOGGER.exception("Health of %s failed", backend.gateway_name)
                item["available"] = False
            else:
                item["available"] = health.available
                item["protocol_version"] = health.protocol_version
                if health.latency_ms is not None:
                    item["latency_ms"] = round(health.latency_ms, 1)
                if health.details:
                    item["details"] = _jsonable(health.details)
        else:
            item["available"] = False
        if backend_catalog is None:
            item["catalog"] = "unknown"
        backends.append(item)
    return {"backends": backends}


HA_TOOLS: Final[tuple[CoreTool, ...]] = (
    CoreTool(
        name="get_state",
        title="Get entity states",
        description=(
            "Current state of the gateway's Home Assistant entities (all backends) that you may "
            "read: what is on, open, locked, temperatures, which devices are offline "
            "(available=false). Filter by area, floor, name, domain, backend or entity_ids; "
            "pick fields."
        ),
        input_schema=GET_STATE_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=async_get_state,
    ),
    CoreTool(
        name="set_state",
        title="Set entity states",
        description=(
            "Control entities through Home Assistant, several per call: turn lights and "
            "switches on/off, dim, lock, open/close covers and valves, set temperature, modes "
            'and values: updates=[{"entity_id": "light.kitchen", "state": "on", '
            '"brightness": 60}]. Runs as you, with your Home Assistant permissions.'
        ),
        input_schema=SET_STATE_SCHEMA,
        tier=ToolTier.CONTROL,
        read_only=False,
        open_world=True,
        run=async_set_state,
    ),
    CoreTool(
        name="get_history",
        title="Get entity history",
        description=(
            "State changes of entities from Home Assistant's recorder (any backend): same "
            "filters as get_state, plus hours or start/end."
        ),
        input_schema=GET_HISTORY_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=async_get_history,
    ),
    CoreTool(
        name="list_backends",
        title="List backends",
        description=(
            "Each backend behind this gateway: its gateway tool, health, protocol version, "
            "latency and how many of its tools you may use."
        ),
        input_schema=LIST_BACKENDS_SCHEMA,
        tier=ToolTier.READ,
        read_only=True,
        run=async_list_backends,
    ),
)
