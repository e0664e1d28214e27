"""How gateway answers read: compact search lines, tool ranking, readable logbook targets,
and entities' levels in the units set_state takes.

Every byte an assistant reads costs its user time and tokens; these helpers keep answers to what
a model needs to choose and call a tool, and what a person needs to read an audit line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import json
import re
from typing import TYPE_CHECKING, Any, Final

from homeassistant.const import ATTR_FRIENDLY_NAME, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import device_registry as dr, entity_registry as er

from ...backends.base import ToolTier
from ...core.words import tokenize
from .search import Intent, Request

if TYPE_CHECKING:
    from .search import Bm25Index
    from .store import BackendTool, CoreTool

# A search line says what the tool does in about one sentence.
ABOUT_CHARS: Final = 160
# Plain requests rarely mean administration: admin tools rank a little lower, so "reboot the
# hub" still finds hub_reboot but "set an alarm" does not find an admin tool.
TIER_WEIGHT: Final[Mapping[ToolTier, float]] = {
    ToolTier.READ: 1.0,
    ToolTier.CONTROL: 1.0,
    ToolTier.ADMIN: 0.8,
}
# A tool the gateway guards with confirm ranks well below what was asked, unless deleting is
# what was asked; one the backend merely hints may destroy (a mode or an alarm replaced)
# ranks a little lower.
DESTRUCTIVE_WEIGHT: Final = 0.5
DESTRUCTIVE_HINT_WEIGHT: Final = 0.9
# How well a tool's kind fits what the request means to do: (request, tool) → weight.
# A question wants a read; a change may create (setting an alarm stores one) but rarely
# deletes; a request to create or delete wants exactly that.
INTENT_FIT: Final[Mapping[Intent, Mapping[Intent, float]]] = {
    Intent.READ: {Intent.READ: 1.0, Intent.CHANGE: 0.5, Intent.CREATE: 0.5, Intent.DELETE: 0.4},
    Intent.CHANGE: {Intent.READ: 0.5, Intent.CHANGE: 1.0, Intent.CREATE: 0.9, Intent.DELETE: 0.4},
    Intent.CREATE: {Intent.READ: 0.5, Intent.CHANGE: 0.7, Intent.CREATE: 1.0, Intent.DELETE: 0.3},
    Intent.DELETE: {Intent.READ: 0.5, Intent.CHANGE: 0.7, Intent.CREATE: 0.3, Intent.DELETE: 1.0},
}
# The core tools work over every backend with HA's permissions: where a backend's own tool
# does the same, the core one comes first.
CORE_WEIGHT: Final = 1.2
# A tool named for the very action asked for ("stop" → dismiss_session) is preferred.
ACTION_WEIGHT: Final = 1.25
_CREATES: Final = frozenset({"create", "add", "new", "import", "clone", "install"})
_DELETES: Final = frozenset({"delete", "remove", "uninstall", "erase"})
# Logbook lines name at most this many devices, then "and N more".
LOGBOOK_NAMES: Final = 4

_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def _number(value: Any) -> float | int:
    number = float(value)
    return int(number) if number.is_integer() else number


# An entity's levels as every gateway answer shows them: named and scaled as set_state takes
# them (HA's light attribute `brightness` is 0-255, set_state's brightness_pct is percent), each
# with its unit said once per answer (level_units). HA attribute → (level name, conversion).
_LEVELS: Final[Mapping[str, tuple[str, Callable[[Any], Any]]]] = {
    "brightness": ("brightness_pct", lambda value: round(float(value) * 100 / 255)),
    "color_temp_kelvin": ("color_temp_kelvin", int),
    "hs_color": ("hs_color", lambda value: [round(float(part), 1) for part in value]),
    "percentage": ("percentage", lambda value: round(float(value))),
    "current_position": ("position", lambda value: round(float(value))),
    "current_tilt_position": ("tilt_position", lambda value: round(float(value))),
    "temperature": ("temperature", _number),
    "target_temp_low": ("target_temp_low", _number),
    "target_temp_high": ("target_temp_high", _number),
    "current_temperature": ("current_temperature", _number),
    "humidity": ("humidity", lambda value: round(float(value))),
    "current_humidity": ("current_humidity", lambda value: round(float(value))),
}
# Attributes shown through a level instead (or not at all: mireds, the old unit of colour
# temperature, beside the kelvin that set_state takes).
RAW_LEVEL_ATTRIBUTES: Final = frozenset({*_LEVELS, "color_temp", "min_mireds", "max_mireds"})
# Temperatures are in Home Assistant's unit system (climate entities convert to it).
_TEMPERATURES: Final = frozenset(
    {"temperature", "target_temp_low", "target_temp_high", "current_temperature"}
)
LEVEL_NAMES: Final = frozenset(name for name, _ in _LEVELS.values())
LEVEL_UNITS: Final[Mapping[str, str]] = {
    "brightness_pct": "%",
    "color_temp_kelvin": "K",
    "hs_color": "[hue °, saturation %]",
    "percentage": "%",
    "position": "%",
    "tilt_position": "%",
    "humidity": "%",
    "current_humidity": "%",
}


def entity_levels(state: State) -> dict[str, Any]:
    """The entity's levels (brightness, position, setpoint…) as set_state takes them.

    Only what the state reports: a light that is off has no brightness, and a value HA holds
    in another shape is left out rather than guessed.
    """
    levels: dict[str, Any] = {}
    for attribute, (name, convert) in _LEVELS.items():
        if (value := state.attributes.get(attribute)) is None:
            continue
        if name in _TEMPERATURES and state.domain != "climate":
            continue  # another domain's attribute of that name is no setpoint
        try:
            levels[name] = convert(value)
        except (TypeError, ValueError):
            continue
    return levels


def level_of(attribute: str) -> str | None:
    """The level HA's attribute is shown as (`brightness` → `brightness_pct`), if any."""
    found = _LEVELS.get(attribute)
    return found[0] if found is not None else None


def level_units(names: Iterable[str], temperature_unit: str) -> dict[str, str]:
    """The unit of each level among `names` (said once per answer)."""
    units: dict[str, str] = {}
    for name in names:
        if name in _TEMPERATURES:
            units[name] = temperature_unit
        elif (unit := LEVEL_UNITS.get(name)) is not None:
            units[name] = unit
    return units


def first_line(text: str) -> str:
    """The first sentence of a description (or its first ABOUT_CHARS characters)."""
    line = text.strip().split("\n", 1)[0].strip()
    if len(line) > ABOUT_CHARS and (cut := _SENTENCE_END.search(line)) is not None:
        line = line[: cut.start()]
    if len(line) > ABOUT_CHARS:
        line = line[: ABOUT_CHARS - 1].rstrip() + "…"
    return line


def tool_intent(name: str, annotations: Any, tier: ToolTier) -> Intent:
    """What a tool does, from its own read-only hint (else its tier) and its name's verb."""
    read_only = annotations.get("readOnlyHint") if isinstance(annotations, Mapping) else None
    if read_only is True or (read_only is None and tier is ToolTier.READ):
        return Intent.READ
    words = set(tokenize(name))
    if words & _DELETES:
        return Intent.DELETE
    if words & _CREATES:
        return Intent.CREATE
    return Intent.CHANGE


def rank_hits(
    index: Bm25Index,
    refs: Mapping[str, tuple[str | None, str]],
    subs: Mapping[tuple[str, str], BackendTool],
    query: str,
    limit: int,
    *,
    core: Mapping[str, CoreTool],
) -> list[tuple[str | None, str]]:
    """The best `limit` tools for the query: BM25, weighed by what the request means to do.

    The request's intent (read, change, create, delete) against each tool's kind, the tool's
    tier and how destructive it is reorder BM25's candidates; text decides among equals.
    """
    request = Request.parse(query)
    asked = request.actions()
    # What the request says, each word in its usual meaning ("set" → create).
    meant = set(request.terms) | {synonyms[0] for _, synonyms in request.expanded() if synonyms}
    weighed: list[tuple[float, int, tuple[str | None, str]]] = []
    for order, hit in enumerate(index.search(request, max(limit * 4, 20))):
        gateway, name = refs[hit.key]
        if gateway is None:
            if (tool := core.get(name)) is None:
                continue
            kind = Intent.READ if tool.read_only else tool_intent(name, None, ToolTier.CONTROL)
            weight = CORE_WEIGHT
            destructive, hinted = tool.destructive, tool.destructive
        elif (sub := subs.get((gateway, name))) is not None:
            annotations = sub.definition.get("annotations")
            kind = tool_intent(name, annotations, sub.tool_class.tier)
            # Creating or deleting things is what administration does: no discount then.
            plain = request.intent not in (Intent.CREATE, Intent.DELETE)
            weight = TIER_WEIGHT.get(sub.tool_class.tier, 1.0) if plain else 1.0
            destructive = sub.tool_class.destructive
            hinted = isinstance(annotations, Mapping) and annotations.get("destructiveHint") is True
        else:
            continue
        if request.intent is not None:
            weight *= INTENT_FIT[request.intent][kind]
        named = set(tokenize(name))
        if asked and asked & named:
            weight *= ACTION_WEIGHT
        # A tool named, word for word, for what was asked ("back up the hub" →
        # hub_create_backup) is what the user wants, guarded or not.
        exact = named <= meant
        if request.intent is not Intent.DELETE and not exact:
            if destructive:
                weight *= DESTRUCTIVE_WEIGHT
            elif hinted:
                weight *= DESTRUCTIVE_HINT_WEIGHT
        weighed.append((hit.score * weight, order, (gateway, name)))
    weighed.sort(key=lambda item: (-item[0], item[1]))
    return [ref for _, _, ref in weighed[:limit]]


def devices_phrase(
    hass: HomeAssistant, groups: Iterable[Sequence[str]], subject: str | None = None
) -> str:
    """ " on Kitchen lamp, Hall light and 3 more": what a call addressed, by name.

    Each group is the entities of one device, named once by the device (a clock's 21
    entities are one clock), or one entity, named by itself; `subject` is what the backend
    calls the thing acted on where no entity says it (a rule, an alarm), named first.
    """
    names: list[str] = [subject] if subject else []
    entities = er.async_get(hass)
    devices = dr.async_get(hass)
    for group in groups:
        if not group:
            continue
        name: str | None = None
        if len(group) > 1 and (entry := entities.async_get(group[0])) and entry.device_id:
            device = devices.async_get(entry.device_id)
            name = (device.name_by_user or device.name) if device else None
        if name is None:
            state = hass.states.get(group[0])
            name = str(state.attributes.get(ATTR_FRIENDLY_NAME) or group[0]) if state else group[0]
        if name not in names:
            names.append(name)
    if not names:
        return ""
    shown = names[:LOGBOOK_NAMES]
    if len(names) > len(shown):
        return f" on {', '.join(shown)} and {len(names) - len(shown)} more"
    if len(shown) > 1:
        return f" on {', '.join(shown[:-1])} and {shown[-1]}"
    return f" on {shown[0]}"


def gateway_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A gateway tool's arguments as the handler checks them.

    `args` may come as JSON text (what the advertised schema asks, so strict function-calling
    dialects accept it) or as an object; empty values are how clients that must fill every
    property leave one out.
    """
    cleaned = {key: value for key, value in arguments.items() if value not in ("", [], None)}
    if cleaned.get("confirm") is False:
        del cleaned["confirm"]
    args = cleaned.get("args")
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError as err:
            raise ValueError(f'"args" is not valid JSON: {err}') from err
        if not isinstance(parsed, dict):
            raise ValueError('"args" must be a JSON object, e.g. {"id": "5"}.')  # noqa: TRY004
        cleaned["args"] = parsed
    return cleaned


def note_unavailable(
    hass: HomeAssistant, result: dict[str, Any], entity_ids: Sequence[str]
) -> dict[str, Any]:
    """A backend's "ok" for a device HA sees offline is no proof it acted: say so.

    A device is offline when every entity of it the call addressed that HA runs is
    unavailable; an entity disabled (by default or by the user) has no state and says
    nothing, nor does one unavailable while its device's others report. The note goes into
    structuredContent and the text the model reads, next to the backend's own answer (which
    stays as it was).
    """
    if result.get("isError"):
        return result
    offline = _offline_names(hass, entity_ids)
    if not offline:
        return result
    note = (
        f"{', '.join(offline)} {'is' if len(offline) == 1 else 'are'} unavailable in Home "
        "Assistant (offline or unreachable): the backend may have accepted this without the "
        "device acting. Check with get_state."
    )
    annotated = dict(result)
    annotated["content"] = [*result.get("content", ()), {"type": "text", "text": note}]
    if isinstance(structured := result.get("structuredContent"), dict):
        annotated["structuredContent"] = {**structured, "gateway_note": note}
    return annotated


def _offline_names(hass: HomeAssistant, entity_ids: Sequence[str]) -> list[str]:
    """The devices (or lone entities) among these that HA sees offline, by name."""
    entities = er.async_get(hass)
    groups: dict[str, list[State]] = {}
    for entity_id in entity_ids:
        entry = entities.async_get(entity_id)
        if entry is not None and entry.disabled_by is not None:
            continue
        if (state := hass.states.get(entity_id)) is None:
            continue  # not running in HA: nothing to judge by
        device = entry.device_id if entry is not None else None
        groups.setdefault(device or f"entity:{entity_id}", []).append(state)
    devices = dr.async_get(hass)
    names: list[str] = []
    for key, states in groups.items():
        if any(state.state != STATE_UNAVAILABLE for state in states):
            continue
        device_entry = None if key.startswith("entity:") else devices.async_get(key)
        if len(states) > 1 and device_entry is not None:
            name = device_entry.name_by_user or device_entry.name or states[0].entity_id
        else:
            name = str(states[0].attributes.get(ATTR_FRIENDLY_NAME) or states[0].entity_id)
        if name not in names:
            names.append(name)
    return names
