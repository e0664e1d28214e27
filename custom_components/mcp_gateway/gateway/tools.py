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
import logging
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_FRIENDLY_NAME, ATTR_UNIT_OF_MEASUREMENT
from homeassistant.core import Context, HomeAssistant, State
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
from homeassistant.util import dt as dt_util
import voluptuous as vol

from ..backends.base import ToolTier
from ..localtime import local_state
from .catalog import CoreTool, ExposedBackend, GatewayCatalog, ToolFailure
from .policy import async_record_write, can_read_entity

if TYPE_CHECKING:
    from ..mcp.server import RequestContext

_LOGGER = logging.getLogger(__name__)

# Every service call reaches a backend through an entity; this bounds a stuck one.
SERVICE_TIMEOUT: Final = 30.0
MAX_STATE_LIMIT: Final = 1000
DEFAULT_STATE_LIMIT: Final = MAX_STATE_LIMIT
# A page stops growing at about this many characters of JSON: the result carries it twice
# (structuredContent and text), and must stay well inside the server's response size guard.
STATE_PAGE_CHARS: Final = 96_000
DEFAULT_HISTORY_HOURS: Final = 24
MAX_HISTORY_HOURS: Final = 24 * 30
MAX_HISTORY_ENTITIES: Final = 50
DEFAULT_HISTORY_POINTS: Final = 100
MAX_SET_UPDATES: Final = 50

BASIC_FIELDS: Final = ("entity_id", "name", "state", "area", "unit")


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


def exposed_entities(hass: HomeAssistant, backends: Iterable[ExposedBackend]) -> list[EntityRef]:
    """The registry entities of the given backend entries (disabled ones skipped)."""
    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    refs: list[EntityRef] = []
    for backend in backends:
        for entry in er.async_entries_for_config_entry(entities, backend.entry.entry_id):
            if entry.disabled_by is not None:
                continue
            area_id = entry.area_id
            if area_id is None and entry.device_id is not None:
                device = devices.async_get(entry.device_id)
                area_id = device.area_id if device is not None else None
            refs.append(EntityRef(entry.entity_id, backend, area_id, entry.device_id))
    return refs


def readable_entities(hass: HomeAssistant, user: User) -> list[EntityRef]:
    """Every exposed entity this user may read."""
    backends = GatewayCatalog.get(hass).exposed_backends()
    return [ref for ref in exposed_entities(hass, backends) if can_read_entity(user, ref.entity_id)]


# --- shared filters --------------------------------------------------------------------------

_FILTER_PROPERTIES: Final[dict[str, Any]] = {
    "backend": {
        "type": "string",
        "description": "Gateway tool name, entry title or backend kind (hubitat, homecast, …).",
    },
    "area": {"type": "string", "description": "Area name or id."},
    "domain": {
        "type": "array",
        "items": {"type": "string"},
        "description": 'Entity domains, e.g. ["light", "switch"].',
    },
    "name": {"type": "string", "description": "Case-insensitive part of the name or entity id."},
    "entity_ids": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_STATE_LIMIT},
}


def _casefold(value: str) -> str:
    return value.strip().casefold()


def filter_entities(
    hass: HomeAssistant, refs: Sequence[EntityRef], args: Mapping[str, Any]
) -> list[EntityRef]:
    """Apply get_state's filters; an unknown backend or area is an error that lists the known."""
    selected = list(refs)
    if (backend := args.get("backend")) is not None:
        wanted = _casefold(backend)
        all_backends = GatewayCatalog.get(hass).exposed_backends()
        matching = {
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
        if not matching:
            known = ", ".join(b.gateway_name for b in all_backends) or "none"
            raise ToolFailure(f"Unknown backend '{backend}'. Backends: {known}.", code="not_found")
        selected = [ref for ref in selected if ref.backend.entry.entry_id in matching]
    if (area := args.get("area")) is not None:
        areas = ar.async_get(hass)
        wanted = _casefold(area)
        area_ids = {a.id for a in areas.async_list_areas() if wanted in (a.id, _casefold(a.name))}
        if not area_ids:
            known = ", ".join(sorted(a.name for a in areas.async_list_areas())) or "none"
            raise ToolFailure(f"Unknown area '{area}'. Areas: {known}.", code="not_found")
        selected = [ref for ref in selected if ref.area_id in area_ids]
    if domains := args.get("domain"):
        wanted_domains = {_casefold(domain) for domain in domains}
        selected = [ref for ref in selected if ref.domain in wanted_domains]
    if (name := args.get("name")) is not None:
        wanted = _casefold(name)
        selected = [ref for ref in selected if wanted in _searchable_name(hass, ref)]
    if (entity_ids := args.get("entity_ids")) is not None:
        wanted_ids = set(entity_ids)
        selected = [ref for ref in selected if ref.entity_id in wanted_ids]
    return selected


def _searchable_name(hass: HomeAssistant, ref: EntityRef) -> str:
    state = hass.states.get(ref.entity_id)
    name = state.attributes.get(ATTR_FRIENDLY_NAME, "") if state else ""
    return f"{_casefold(str(name))} {ref.entity_id}"


# --- get_state -------------------------------------------------------------------------------


GET_STATE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        **_FILTER_PROPERTIES,
        "fields": {
            "type": "array",
            "items": {"type": "string"},
            "description": (
                "Fields per entity (default entity_id, name, state, area, unit). Also: backend, "
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
    refs = filter_entities(hass, readable_entities(hass, ctx.user), args)
    refs.sort(key=lambda ref: ref.entity_id)
    limit = args.get("limit", DEFAULT_STATE_LIMIT)
    offset = args.get("offset", 0)
    fields = args.get("fields") or BASIC_FIELDS
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    devices = dr.async_get(hass)
    entities: list[dict[str, Any]] = []
    size = 0
    for ref in refs[offset : offset + limit]:
        if entities and size > STATE_PAGE_CHARS:
            break
        item = _project(ref, hass.states.get(ref.entity_id), fields, area_names, devices)
        size += _estimated_size(item)
        entities.append(item)
    result: dict[str, Any] = {"total": len(refs), "count": len(entities), "entities": entities}
    if offset + len(entities) < len(refs):
        result["next_offset"] = offset + len(entities)
    return result


def _estimated_size(item: Mapping[str, Any]) -> int:
    """Roughly the item's JSON length; exact encoding per entity would cost more than it saves."""
    return 2 + sum(len(key) + len(str(value)) + 6 for key, value in item.items())


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
                value = state.last_changed.isoformat() if state is not None else None
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
        return value.isoformat()
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
        "type": ["string", "number"],
        "description": "select option, number, text or ISO datetime value.",
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
    fields = {key: value for key, value in update.items() if key != "entity_id"}
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
    """Apply updates through HA services, each as the caller; failures are reported per update."""
    user: User = ctx.user
    known = {ref.entity_id: ref for ref in readable_entities(hass, user)}
    context = Context(user_id=user.id)
    results = await asyncio.gather(
        *(_apply_update(hass, ctx, known, update, context) for update in args["updates"])
    )
    failed = sum(1 for result in results if not result["ok"])
    summary = {"updated": len(results) - failed, "failed": failed, "results": results}
    if failed and failed == len(results):
        first = next(result["error"] for result in results)
        raise ToolFailure(
            f"No update was applied: {first}" if len(results) == 1 else "No update was applied.",
            code="failed",
            **summary,
        )
    return summary


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
        return {"entity_id": entity_id, "ok": False, "error": f"{entity_id} is not available"}
    try:
        calls = service_calls(ref.domain, update)
    except _BadUpdate as err:
        return {"entity_id": entity_id, "ok": False, "error": f"{entity_id}: {err}"}
    done: list[str] = []
    error: str | None = None
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
            error = f"Permission denied: this Home Assistant user may not control {entity_id}"
        except TimeoutError:
            error = f"{entity_id}: {domain}.{service} timed out"
        except (HomeAssistantError, vol.Invalid) as err:
            error = f"{entity_id}: {domain}.{service} failed: {err}"
        else:
            done.append(f"{domain}.{service}")
            continue
        break
    summary = ", ".join(done) if done else "nothing"
    async_record_write(
        hass,
        user=ctx.user,
        client_name=ctx.client_name,
        tool="set_state",
        summary=f"set_state {entity_id}: {_describe(update)}",
        success=error is None,
        backend=ref.backend.gateway_name,
        entity_id=entity_id,
        context=context,
    )
    if error is not None:
        return {"entity_id": entity_id, "ok": False, "error": error, "done": summary}
    state = hass.states.get(entity_id)
    return {
        "entity_id": entity_id,
        "ok": True,
        "services": done,
        "state": state.state if state is not None else None,
    }


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
    refs = filter_entities(hass, readable_entities(hass, ctx.user), args)
    if not refs:
        raise ToolFailure("No readable entity matches these filters.", code="not_found")
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
    return {"start": start.isoformat(), "end": end.isoformat(), "entities": entities}


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
        return [item.last_changed.isoformat(), item.state]
    changed = item.get("last_changed")
    when = changed.isoformat() if isinstance(changed, datetime) else str(changed)
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
    for backend, backend_catalog, tools in await catalog.async_visible(ctx.user):
        item: dict[str, Any] = {
            "gateway_tool": backend.gateway_name,
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
            "read: what is on, open, locked, temperatures. Filter by backend, area, domain, "
            "name or entity_ids; pick fields."
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
