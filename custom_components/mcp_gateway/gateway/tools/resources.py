"""The gateway's resources: a usage guide and a live, permission-filtered context snapshot."""

from __future__ import annotations

from collections.abc import Sequence
import json
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar

from ...core.localtime import local_state
from ...framework.base import ToolTier
from ...mcp.types import ReadResourceResult, Resource
from ...permissions.policy import ROLE_LABELS, allowed_tiers, describe_tiers, user_role
from ...permissions.visibility import readable_entities
from ..catalog.gateway_tool import listed_names
from ..catalog.store import ExposedBackend, GatewayCatalog
from ..finding.selection import every_entity

GUIDE_URI: Final = "mcp-gateway://guide"
CONTEXT_URI: Final = "mcp-gateway://context"
# The snapshot is a primer, not a dump: beyond this get_state pages through the rest.
CONTEXT_MAX_ENTITIES: Final = 300

SET_STATE_VOCABULARY: Final = (
    "- light: state on/off, brightness_pct (0-100), color_temp_kelvin, hs_color, transition",
    "- switch: state on/off; fan: state on/off, percentage",
    "- cover, valve: state open/closed/stop, position (0-100 % open)",
    "- lock: state locked/unlocked/open, code",
    "- climate: state on/off or an HVAC mode, temperature, target_temp_low/high, fan_mode",
    "- alarm_control_panel: state disarmed/armed_home/armed_away/armed_night/armed_vacation, code",
    "- select, number, text, datetime, time: value; button: state pressed; scene: state on",
    "- sensor, binary_sensor, event: read-only",
)

# When the HA-level answers are the whole answer, and when a backend tool adds something.
TRUST: Final = (
    "- `get_state` is each device's state as its backend last reported it (pushed or polled), "
    "in Home Assistant's units (`unit`). A staleness mark means the device has not checked in "
    "for longer than its kind normally goes, since the time it gives, and its backend holds "
    "nothing newer (a backend's own health check may count a shorter silence).",
    "- A hub's mode and security monitor, and an alarm clock's next ring and alarms, are "
    "entities (select, alarm_control_panel, sensor, switch): `get_state` reads them.",
    "- `get_history` is HA's recorder, and where that holds less than the period asked it adds "
    "the backends' own history (`backend.events`, labelled with their source; `recorded_from` "
    'and `covers_from` then say what each covers): one call answers "what was it this '
    'morning" or "did the door open". Only a `backend_history` it offers is worth a second '
    "call.",
    "- An empty answer's `hint` (or `unexposed`) names entities Home Assistant hides from "
    "assistants and the setting that changes it: backend tools are refused for them too.",
    "- Backend tools add what Home Assistant does not model: rules and automations, scene "
    "contents, hub variables, an alarm's time and sound, logs, diagnostics.",
)
TRUST_WRITES: Final = (
    "- `set_state` says what the device did: `ok` once it reported the change, otherwise a "
    "`status` and `note` saying what is pending. No read-back is needed.",
)

RESOURCES: Final[tuple[Resource, ...]] = (
    {
        "uri": GUIDE_URI,
        "name": "guide",
        "title": "How to use this gateway",
        "description": "Tools, tiers and conventions of this Home Assistant MCP gateway.",
        "mimeType": "text/markdown",
    },
    {
        "uri": CONTEXT_URI,
        "name": "context",
        "title": "Home context",
        "description": "Backends and the states of the entities you may read, by area.",
        "mimeType": "application/json",
    },
)


def list_resources() -> list[Resource]:
    """The resource list (the same for every user; contents are filtered when read)."""
    return [resource.copy() for resource in RESOURCES]


async def async_read_resource(
    hass: HomeAssistant, user: User, uri: str
) -> ReadResourceResult | None:
    """The ReadResourceResult of a URI, or None when it is not ours."""
    if uri == GUIDE_URI:
        text, mime = await _async_guide(hass, user), "text/markdown"
    elif uri == CONTEXT_URI:
        snapshot = await async_context_snapshot(hass, user)
        text, mime = json.dumps(snapshot, separators=(",", ":")), "application/json"
    else:
        return None
    return {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}


async def _async_guide(hass: HomeAssistant, user: User) -> str:
    tiers = allowed_tiers(user)
    visible = await GatewayCatalog.get(hass).async_visible(user)
    listed = listed_names([backend for backend, _, _ in visible])
    gateways = "\n".join(
        f"- `{_call_as(*listed[backend.gateway_name])}`: {backend.kind.replace('_', ' ')} "
        f"“{backend.entry.title}”, {len(tools)} tools for you"
        for backend, _, tools in visible
    )
    lines = [
        "# Home Assistant MCP gateway",
        "",
        f"You act as {ROLE_LABELS[user_role(user)]} of Home Assistant; tool tiers you may "
        f"use: {describe_tiers(tiers)}. Everything you do runs with that user's Home "
        "Assistant permissions, and every change is written to Home Assistant's logbook.",
        "",
        "## Core tools",
        "- `search_tools {query}`: find any tool (core or backend) by what it does; the best "
        "match comes with its input schema and how to call it.",
        "- `get_state`: entity states; filter by area or floor (names, aliases or parts), "
        "name words, domain, backend, `available: false` for offline devices; pick fields.",
    ]
    if ToolTier.CONTROL in tiers:
        lines.append(
            "- `set_state {updates: [...]}`: change entities (state on/off, brightness_pct, "
            "position, temperature, value, …), many per call."
        )
    lines += [
        "- `get_history`: state changes of entities, HA's recorder and the backends' own "
        "history in one answer.",
        "- `list_backends`: health and latency of each backend.",
        "",
        "## Which answers to trust",
        _authoritative(visible),
        *TRUST,
        *(TRUST_WRITES if ToolTier.CONTROL in tiers else ()),
        "",
        "## Backend gateways",
        "Call a gateway tool with `{}` for all its tools and their input schemas (it can be "
        'large), or `{"describe": [names]}` for the ones you need (its description names '
        'them all; `search_tools` finds them), then with `{"tool": name, "args": "{...}"}` '
        "(the arguments as JSON text; an object works too). "
        'Destructive tools also need `"confirm": true`: ask the user first.',
    ]
    if ToolTier.CONTROL in tiers:
        lines.append(
            "Prefer `set_state` for entities; use a backend's own tools for what Home "
            "Assistant does not model (rules, scenes, alarms, …)."
        )
        lines += ["", "## set_state, per domain", *SET_STATE_VOCABULARY]
    lines += [
        "",
        gateways or "No backend is exposed.",
    ]
    return "\n".join(lines) + "\n"


def _authoritative(visible: Sequence[tuple[ExposedBackend, Any, Any]]) -> str:
    """The core tools are the answer; the backends' own tools that repeat them, by name."""
    repeats = sorted(
        {
            name
            for backend, _, _ in visible
            if backend.runtime is not None
            for name in backend.runtime.repeats_core
        }
    )
    named = f" ({', '.join(repeats)})" if repeats else ""
    return (
        "The core tools' answers are authoritative: checking them with a backend's own "
        f"tools{named} costs calls and returns the same values."
    )


def _call_as(tool: str, entry: str | None) -> str:
    return tool if entry is None else f'{tool} {{"entry": "{entry}"}}'


async def async_context_snapshot(hass: HomeAssistant, user: User) -> dict[str, Any]:
    """Backends plus `{area: {entity_id: [name, state]}}` for what the user may read."""
    visible = await GatewayCatalog.get(hass).async_visible(user)
    backends = [
        {
            "gateway_tool": backend.gateway_name,
            "title": backend.entry.title,
            "backend": backend.kind,
            "connected": backend.runtime is not None,
        }
        for backend, _, _ in visible
    ]
    refs = sorted(readable_entities(hass, user, every_entity(hass)), key=lambda ref: ref.entity_id)
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    areas: dict[str, dict[str, list[Any]]] = {}
    for ref in refs[:CONTEXT_MAX_ENTITIES]:
        state = hass.states.get(ref.entity_id)
        area = area_names.get(ref.area_id or "", "No area")
        name = state.attributes.get(ATTR_FRIENDLY_NAME) if state else None
        areas.setdefault(area, {})[ref.entity_id] = [
            name,
            local_state(state) if state is not None else "unknown",
        ]
    snapshot: dict[str, Any] = {
        "role": str(user_role(user)),
        "backends": backends,
        "areas": areas,
        "entities": len(refs),
    }
    if len(refs) > CONTEXT_MAX_ENTITIES:
        snapshot["truncated"] = _truncation_note(refs)
    return snapshot


def _truncation_note(refs: Sequence[Any]) -> str:
    return (
        f"Only the first {CONTEXT_MAX_ENTITIES} of {len(refs)} entities are shown; use "
        "get_state with filters for the rest."
    )
