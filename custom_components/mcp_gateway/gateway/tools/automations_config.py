"""An automation's config read for the gateway: what it reaches, whether a user may build it,
and what it does in people's words.

The config is Home Assistant's own (as its automation editor stores it: `triggers`,
`conditions`, `actions`, or the singular keys of older configs). Entities are reached by id,
by device, area, floor or label targets, and from templates; each is read (triggers,
conditions, the conditions and waits inside actions) or controlled (the rest of the actions).
An assistant may build through an automation only what it could do directly: every entity
one its user may read or control, and exposed to assistants while exposure applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import re
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_DEVICE_CLASS
from homeassistant.core import HomeAssistant, split_entity_id, valid_entity_id
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)

from ...core.const import CONF_BACKEND, DOMAIN
from ...core.settings import GatewaySettings
from ...permissions.policy import readable_subjects
from ...permissions.visibility import (
    can_control_entity,
    can_read_entity,
    exposure_applies,
    is_exposed_entity,
    may_see_entities,
)
from ..approval.rules import SENSITIVE_COVER_CLASSES
from ..catalog.store import GatewayCatalog, ToolFailure
from ..finding import homes

TRIGGER_KEYS: Final = ("triggers", "trigger")
CONDITION_KEYS: Final = ("conditions", "condition")
ACTION_KEYS: Final = ("actions", "action")
# Keys inside actions whose contents only read: conditions and waits.
_READING_KEYS: Final = frozenset(
    {"if", "conditions", "condition", "while", "until", "wait_for_trigger", "wait_template"}
)
_TARGET_KEYS: Final = ("entity_id", "device_id", "area_id", "floor_id", "label_id")
_TEMPLATE: Final = re.compile(r"{{|{%")
_ENTITY_IN_TEXT: Final = re.compile(r"\b([a-z_]+\.[a-z0-9_]+)\b")
# Services that let people in, by domain; covers only for garage doors, gates and doors.
_SENSITIVE_SERVICES: Final[Mapping[str, frozenset[str]]] = {
    "lock": frozenset({"unlock", "open"}),
    "alarm_control_panel": frozenset({"alarm_disarm"}),
    "cover": frozenset({"open_cover", "set_cover_position", "toggle"}),
}
_SENSITIVE_DEVICE_ACTIONS: Final = frozenset({"unlock", "open", "disarm"})


@dataclass(slots=True)
class References:
    """What an automation reaches: entities read, entities controlled, templates."""

    read: set[str] = field(default_factory=set)
    control: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)
    templates: list[str] = field(default_factory=list)
    # Services called on controlled entities, to tell sensitive actions: (service, entities).
    calls: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    @property
    def entities(self) -> set[str]:
        """Every entity reached."""
        return self.read | self.control


def section(config: Mapping[str, Any], keys: tuple[str, str]) -> list[Any]:
    """One of the config's lists (plural key, else the singular one), always a list."""
    for key in keys:
        if (value := config.get(key)) is not None:
            return list(value) if isinstance(value, list) else [value]
    return []


def references(hass: HomeAssistant, config: Mapping[str, Any]) -> References:
    """Every entity the automation reads or controls, its targets expanded."""
    found = References()
    for item in section(config, TRIGGER_KEYS) + section(config, CONDITION_KEYS):
        _walk(hass, item, found, control=False)
    for item in section(config, ACTION_KEYS):
        _walk(hass, item, found, control=True)
    found.read -= found.control
    return found


def _walk(hass: HomeAssistant, node: Any, found: References, *, control: bool) -> None:
    if isinstance(node, str):
        if _TEMPLATE.search(node):
            found.templates.append(node)
        return
    if isinstance(node, list):
        for item in node:
            _walk(hass, item, found, control=control)
        return
    if not isinstance(node, Mapping):
        return
    service = node.get("action", node.get("service"))
    domain = (
        str(service).split(".", 1)[0]
        if isinstance(service, str) and "." in service
        else (node.get("domain") if isinstance(node.get("domain"), str) else None)
    )
    reached = _targets(hass, node, domain if control else None, found)
    if control and isinstance(service, str):
        found.calls.append((service, tuple(sorted(reached))))
    elif control and isinstance(node.get("type"), str) and node.get("device_id"):
        found.calls.append((f"device.{node['type']}", tuple(sorted(reached))))
    if control and isinstance(scene := node.get("scene"), str):
        found.control.add(scene)
        found.calls.append(("scene.turn_on", (scene,)))
    (found.control if control else found.read).update(reached)
    for key, value in node.items():
        if key in _TARGET_KEYS:
            continue
        if key in ("target", "data") and isinstance(value, Mapping):
            # Targets were read above; their values may still hold templates.
            rest = {k: v for k, v in value.items() if k not in _TARGET_KEYS}
            _walk(hass, rest, found, control=control)
            continue
        _walk(hass, value, found, control=control and key not in _READING_KEYS)


def _ids(value: Any) -> list[str]:
    if isinstance(value, str):
        if _TEMPLATE.search(value):
            return []
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _targets(
    hass: HomeAssistant, node: Mapping[str, Any], domain: str | None, found: References
) -> set[str]:
    """The entities a node names itself or through its target: by id, device, area, floor,
    label; a target's devices, areas… reach the entities of the called service's domain."""
    where: dict[str, Any] = dict(node)
    if isinstance(target := node.get("target"), Mapping):
        where.update(target)
    if isinstance(data := node.get("data"), Mapping):
        where.update({k: v for k, v in data.items() if k in _TARGET_KEYS})
    for key in _TARGET_KEYS:
        value = where.get(key)
        if isinstance(value, str) and _TEMPLATE.search(value):
            found.templates.append(value)
    reached: set[str] = set()
    for given in _ids(where.get("entity_id")):
        if given in ("all", "none"):
            if given == "all":
                reached.update(_of_domain(hass, domain))
            continue
        entity_id = _registry_id(hass, given)
        if not valid_entity_id(entity_id) or (
            hass.states.get(entity_id) is None and er.async_get(hass).async_get(entity_id) is None
        ):
            found.unknown.add(entity_id)
            continue
        reached.add(entity_id)
    entities = er.async_get(hass)
    devices = set(_ids(where.get("device_id")))
    areas = set(_ids(where.get("area_id")))
    floors = set(_ids(where.get("floor_id")))
    labels = set(_ids(where.get("label_id")))
    if floors:
        areas.update(
            area.id for area in ar.async_get(hass).async_list_areas() if area.floor_id in floors
        )
    if areas:
        device_registry = dr.async_get(hass)
        devices.update(
            device.id
            for area_id in areas
            for device in dr.async_entries_for_area(device_registry, area_id)
        )
    # A device trigger or condition names its entity (entity_id): that one is reached.
    named = bool(where.get("entity_id")) and not isinstance(node.get("target"), Mapping)
    for entry in entities.entities.values():
        if (
            (entry.device_id in devices and not named)
            or (entry.area_id in areas)
            or (labels and labels & set(entry.labels))
        ) and (domain is None or domain in ("homeassistant", entry.domain)):
            reached.add(entry.entity_id)
    for device_id in devices:
        if dr.async_get(hass).async_get(device_id) is None:
            found.unknown.add(f"device {device_id}")
    return reached


def _registry_id(hass: HomeAssistant, value: str) -> str:
    """An entity id, also where the editor stored the registry's own id (device triggers)."""
    if valid_entity_id(value):
        return value
    entry = er.async_get(hass).async_get(value)
    return entry.entity_id if entry is not None else value


def _of_domain(hass: HomeAssistant, domain: str | None) -> list[str]:
    if domain is None or domain == "homeassistant":
        return []
    return hass.states.async_entity_ids(domain)


# --- who may build it ------------------------------------------------------------------------


def may_edit(user: User, settings: GatewaySettings) -> bool:
    """HA lets administrators edit automations; the owner may let other users' assistants."""
    return user.is_admin or settings.automations_for_users


def require_editor(user: User, settings: GatewaySettings) -> None:
    """Only those who may edit automations save, change or delete them."""
    if not may_edit(user, settings):
        raise ToolFailure(
            "Permission denied: Home Assistant lets only administrators edit automations, and "
            "the gateway's settings do not let other users' assistants do it.",
            code="forbidden",
        )


def require_reachable(hass: HomeAssistant, user: User, found: References) -> None:
    """Every entity the automation reaches is one the user's assistant could reach directly:
    readable (or controllable, for actions) and exposed while exposure applies; templates
    only for administrators, and only over such entities."""
    if found.unknown:
        raise ToolFailure(
            f"Unknown entities or devices: {', '.join(sorted(found.unknown))}. Use entity ids "
            "from get_state.",
            code="invalid",
        )
    if found.templates and not user.is_admin:
        raise ToolFailure(
            "Permission denied: templates can read any entity, so only an administrator's "
            "assistant may use them in an automation. Use triggers, conditions and actions "
            "that name their entities.",
            code="forbidden",
        )
    template_entities = {
        match
        for text in found.templates
        for match in _ENTITY_IN_TEXT.findall(text)
        if hass.states.get(match) is not None
    }
    unreadable = [e for e in found.read | template_entities if not can_read_entity(user, e)]
    uncontrolled = [e for e in found.control if not can_control_entity(user, e)]
    if unreadable or uncontrolled:
        subjects = readable_subjects(user, [*unreadable, *uncontrolled])
        raise ToolFailure(
            f"Permission denied: the automation reaches {', '.join(subjects)}, which this "
            "Home Assistant user may not "
            f"{'control' if uncontrolled else 'read'}.",
            code="forbidden",
        )
    if exposure_applies(hass):
        hidden = sorted(
            e for e in found.entities | template_entities if not is_exposed_entity(hass, e)
        )
        if hidden:
            raise ToolFailure(
                f"Permission denied: the automation reaches {', '.join(hidden)}, which "
                "Home Assistant does not expose to assistants (Settings → Voice assistants → "
                "Expose).",
                code="forbidden",
            )


def may_read_all(hass: HomeAssistant, user: User, found: References) -> bool:
    """Whether the user's assistant may see this automation: every entity it reaches readable
    and exposed (while exposure applies)."""
    return may_see_entities(hass, user, found.entities)


# --- sensitive actions -----------------------------------------------------------------------


def sensitive_actions(
    hass: HomeAssistant, settings: GatewaySettings, found: References
) -> list[tuple[str, str]]:
    """(verb, entity) of each action that lets people in or needs approval by the settings:
    unlocking, disarming, opening a garage door, gate or door."""
    sensitive: list[tuple[str, str]] = []
    for service, entity_ids in found.calls:
        domain, _, verb = service.partition(".")
        for entity_id in entity_ids:
            entity_domain = split_entity_id(entity_id)[0] if valid_entity_id(entity_id) else ""
            if entity_id in settings.approval_entities:
                sensitive.append((verb.replace("_", " "), entity_id))
            elif domain == "device" and verb in _SENSITIVE_DEVICE_ACTIONS:
                sensitive.append((verb, entity_id))
            elif (
                domain == "homeassistant"
                and entity_domain in _SENSITIVE_SERVICES
                and verb in ("turn_on", "turn_off", "toggle")
                and (
                    entity_domain != "cover"
                    or _cover_class(hass, entity_id) in SENSITIVE_COVER_CLASSES
                )
            ):
                # HA's generic services reach a lock, alarm or door too (a toggle may open it).
                sensitive.append((verb.replace("_", " "), entity_id))
            elif domain in ("homeassistant", entity_domain) and verb in _SENSITIVE_SERVICES.get(
                entity_domain, frozenset()
            ):
                if entity_domain == "cover" and _cover_class(hass, entity_id) not in (
                    SENSITIVE_COVER_CLASSES
                ):
                    continue
                sensitive.append((_VERBS.get(verb, verb.replace("_", " ")), entity_id))
    return list(dict.fromkeys(sensitive))


def _cover_class(hass: HomeAssistant, entity_id: str) -> Any:
    state = hass.states.get(entity_id)
    return state.attributes.get(ATTR_DEVICE_CLASS) if state is not None else None


# --- in people's words -----------------------------------------------------------------------

_VERBS: Final = {
    "turn_on": "turn on",
    "turn_off": "turn off",
    "toggle": "toggle",
    "open_cover": "open",
    "close_cover": "close",
    "set_cover_position": "open",
    "alarm_disarm": "disarm",
    "alarm_arm_away": "arm (away)",
    "alarm_arm_home": "arm (home)",
    "alarm_arm_night": "arm (night)",
    "open_valve": "open",
    "close_valve": "close",
    "set_temperature": "set the temperature of",
    "set_hvac_mode": "set the mode of",
    "select_option": "select an option of",
    "set_value": "set",
    "press": "press",
}


def backend_labels(hass: HomeAssistant, entity_ids: Iterable[str]) -> list[str]:
    """The backends (their kinds, as people say them) whose entities these are."""
    entries = _backend_entries(hass)
    registry = er.async_get(hass)
    found = []
    for entity_id in entity_ids:
        entry = registry.async_get(entity_id)
        if entry is not None and (kind := entries.get(entry.config_entry_id or "")):
            found.append(_label(kind))
    return sorted(set(found))


def _backend_entries(hass: HomeAssistant) -> dict[str, str]:
    return {
        entry.entry_id: str(entry.data.get(CONF_BACKEND))
        for entry in hass.config_entries.async_entries(DOMAIN)
        if entry.data.get(CONF_BACKEND)
    }


def _label(kind: str) -> str:
    return kind.replace("_", " ").title()


class Namer:
    """Entities by name, with their home where there are several and their backend."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        self._registry = er.async_get(hass)
        self._backends = {
            backend.entry.entry_id: backend
            for backend in GatewayCatalog.get(hass).exposed_backends()
        }
        self._several = homes.several_homes(hass)

    def name(self, entity_id: str) -> str:
        """The entity as people call it: its device's name where the entity's own part only
        repeats it ("Kitchen Motion Sensor", not "… Motion Sensor Motion"), its home where
        another home has one of the same name, its backend."""
        state = self.hass.states.get(entity_id)
        name = str(state.name) if state is not None else entity_id
        entry = self._registry.async_get(entity_id)
        device = (
            dr.async_get(self.hass).async_get(entry.device_id)
            if entry and entry.device_id
            else None
        )
        device_name = (device.name_by_user or device.name) if device is not None else None
        if device_name and name.startswith(device_name):
            own = name[len(device_name) :].strip().casefold()
            if own and own in device_name.casefold():
                name = device_name
        backend = self._backends.get(entry.config_entry_id or "") if entry else None
        if backend is None:
            return name
        if self._several and self._twins(entity_id, state.name if state else name):
            home = homes.home_of(self.hass, backend, entry.device_id if entry else None)
            if not name.casefold().startswith(home.casefold()):
                name = f"{home} {name}"
        return f"{name} ({_label(backend.kind)})"

    def _twins(self, entity_id: str, name: str) -> bool:
        """Whether another entity of the domain has this name (in another home)."""
        domain = entity_id.split(".", 1)[0]
        return any(
            state.name == name and state.entity_id != entity_id
            for state in self.hass.states.async_all(domain)
        )

    def names(self, entity_ids: Iterable[str]) -> str:
        listed = [self.name(e) for e in sorted(set(entity_ids))]
        if not listed:
            return "something"
        return listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} and {listed[-1]}"


def summary(hass: HomeAssistant, config: Mapping[str, Any]) -> str:
    """The automation in one sentence: "When …, if …, turn on …"."""
    namer = Namer(hass)
    triggers = [_trigger(hass, namer, t) for t in section(config, TRIGGER_KEYS)]
    conditions = [_condition(hass, namer, c) for c in section(config, CONDITION_KEYS)]
    actions = [_action(hass, namer, a) for a in section(config, ACTION_KEYS)]
    text = f"When {' or '.join(triggers) or 'nothing triggers it'}"
    if conditions:
        text += f", if {' and '.join(conditions)}"
    text += f", {', then '.join(actions) or 'do nothing'}"
    return text


def _entities_of(
    hass: HomeAssistant, node: Mapping[str, Any], domain: str | None = None
) -> set[str]:
    return _targets(hass, node, domain, References())


def _state_word(value: Any) -> str:
    if isinstance(value, list):
        return " or ".join(_state_word(v) for v in value)
    text = str(value)
    return {"on": "on", "off": "off"}.get(text, text)


def _duration(value: Any) -> str:
    if isinstance(value, Mapping):
        parts = [f"{v} {k}" for k, v in value.items() if v]
        return " ".join(parts)
    return str(value)


def _trigger(hass: HomeAssistant, namer: Namer, trigger: Any) -> str:
    if not isinstance(trigger, Mapping):
        return "a trigger"
    kind = trigger.get("trigger", trigger.get("platform"))
    who = namer.names(_entities_of(hass, trigger))
    text: str
    if kind == "state":
        to = trigger.get("to")
        if to in ("on", "off"):
            text = f"{who} turns {to}"
        elif to is not None:
            text = f"{who} becomes {_state_word(to)}"
        else:
            text = f"{who} changes"
        if "from" in trigger:
            text += f" from {_state_word(trigger['from'])}"
    elif kind == "numeric_state":
        text = who
        if "above" in trigger:
            text += f" rises above {trigger['above']}"
        if "below" in trigger:
            text += f"{' or' if 'above' in trigger else ''} drops below {trigger['below']}"
    elif kind == "sun":
        text = f"at {trigger.get('event', 'sunset')}"
        if trigger.get("offset"):
            text += f" (offset {trigger['offset']})"
    elif kind == "time":
        text = f"at {trigger.get('at')}"
    elif kind == "time_pattern":
        pattern = ", ".join(
            f"{k} {trigger[k]}" for k in ("hours", "minutes", "seconds") if k in trigger
        )
        text = f"on the time pattern {pattern}"
    elif kind == "homeassistant":
        text = f"Home Assistant {'starts' if trigger.get('event') == 'start' else 'shuts down'}"
    elif kind == "device":
        text = f"{who}: {str(trigger.get('type', 'event')).replace('_', ' ')}"
    elif kind == "event":
        text = f"the event {trigger.get('event_type')} fires"
    elif kind == "zone":
        moves = "enters" if trigger.get("event") == "enter" else "leaves"
        text = f"{who} {moves} {trigger.get('zone')}"
    elif kind == "template":
        text = "a template becomes true"
    else:
        text = f"a {kind} trigger fires"
    if trigger.get("for"):
        text += f" for {_duration(trigger['for'])}"
    return text


def condition_words(hass: HomeAssistant, namer: Namer, condition: Any) -> str:
    """One condition in words."""
    return _condition(hass, namer, condition)


def _condition(hass: HomeAssistant, namer: Namer, condition: Any) -> str:
    if isinstance(condition, str):
        return "a template is true"
    if not isinstance(condition, Mapping):
        return "a condition holds"
    kind = condition.get("condition")
    if kind in ("and", "or"):
        inner = [_condition(hass, namer, c) for c in section(condition, CONDITION_KEYS)]
        return f"({f' {kind} '.join(inner)})"
    if kind == "not":
        inner = [_condition(hass, namer, c) for c in section(condition, CONDITION_KEYS)]
        return f"not ({' or '.join(inner)})"
    who = namer.names(_entities_of(hass, condition))
    if kind == "state":
        return f"{who} is {_state_word(condition.get('state'))}"
    if kind == "numeric_state":
        parts = []
        if "above" in condition:
            parts.append(f"above {condition['above']}")
        if "below" in condition:
            parts.append(f"below {condition['below']}")
        return f"{who} is {' and '.join(parts)}"
    if kind == "sun":
        parts = []
        if condition.get("after"):
            parts.append(f"after {condition['after']}")
        if condition.get("before"):
            parts.append(f"before {condition['before']}")
        return " and ".join(parts) or "the sun is somewhere"
    if kind == "time":
        parts = []
        if condition.get("after"):
            parts.append(f"after {condition['after']}")
        if condition.get("before"):
            parts.append(f"before {condition['before']}")
        if condition.get("weekday"):
            days = condition["weekday"]
            parts.append(f"on {', '.join(days) if isinstance(days, list) else days}")
        return " and ".join(parts) or "at any time"
    if kind == "device":
        return f"{who}: {str(condition.get('type', 'condition')).replace('_', ' ')}"
    if kind == "zone":
        return f"{who} is in {condition.get('zone')}"
    if kind == "template":
        return "a template is true"
    return f"a {kind} condition holds"


def _action(hass: HomeAssistant, namer: Namer, action: Any) -> str:
    if not isinstance(action, Mapping):
        return "a step"
    service = action.get("action", action.get("service"))
    if isinstance(service, str):
        domain, _, verb = service.partition(".")
        targets = _entities_of(hass, action, domain)
        if domain == "notify":
            return "send a notification"
        if domain == "scene" and verb == "turn_on":
            return f"activate {namer.names(targets)}"
        if domain == "script" and verb not in ("turn_on", "turn_off", "toggle"):
            return f"run the script {verb}"
        words = _VERBS.get(verb, f"call {service} on")
        text = f"{words} {namer.names(targets)}"
        data = action.get("data")
        if isinstance(data, Mapping) and data:
            shown = ", ".join(
                f"{key} {value}" for key, value in data.items() if key not in _TARGET_KEYS
            )
            if shown:
                text += f" ({shown})"
        return text
    if "delay" in action:
        return f"wait {_duration(action['delay'])}"
    if "scene" in action:
        return f"activate {namer.name(str(action['scene']))}"
    if action.get("device_id") and action.get("type"):
        who = namer.names(_entities_of(hass, action))
        return f"{who}: {str(action['type']).replace('_', ' ')}"
    if "if" in action:
        then = [_action(hass, namer, a) for a in section(action, ("then", "then"))]
        return f"if its conditions hold, {', then '.join(then)}"
    if "choose" in action:
        return "choose what to do by conditions"
    if "wait_for_trigger" in action or "wait_template" in action:
        return "wait for something to happen"
    if "repeat" in action:
        return "repeat some steps"
    if "event" in action:
        return f"fire the event {action['event']}"
    if "stop" in action:
        return "stop"
    return "a step"
