"""get_history: state changes of the integration's entities, from Home Assistant's recorder.

Same filters as get_state; the database read runs in the recorder's executor, and each entity's
points come as compact [time, state] pairs, the newest `limit` of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from homeassistant.core import HomeAssistant, State
from homeassistant.util import dt as dt_util

from ..localtime import local_iso
from .catalog import ToolFailure
from .selection import (
    FILTER_PROPERTIES,
    candidate_entities,
    empty_hint,
    filter_entities,
    readable_entities,
)

if TYPE_CHECKING:
    from ..mcp.server import RequestContext

DEFAULT_HISTORY_HOURS: Final = 24
MAX_HISTORY_HOURS: Final = 24 * 30
MAX_HISTORY_ENTITIES: Final = 50
DEFAULT_HISTORY_POINTS: Final = 100


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
