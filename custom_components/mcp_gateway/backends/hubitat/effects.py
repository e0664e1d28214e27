"""What a hub call changes, entity by entity, for the gateway's approval and exposure.

A device command acts on the device's controllable entity (the lock, the garage door), never
on its sensors; HSM arm commands act on the HSM panel; a custom rule's actions are stored to
run later (hubitat-mcp-rule.groovy executeAction: device_command, lock, unlock, set_hsm,
activate_scene, the capture/restore of device states, and the nested actions of
if_then_else and repeat). A rule imported or copied carries actions no argument shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from homeassistant.const import Platform

from ...framework.base import REPORTING_PLATFORMS, CallEffect, EntityChange
from .tools import HSM_PANEL, canonical_id, resolve_device

# Commands that change nothing a person would approve (the device is only asked again).
_READS: Final = frozenset({"refresh", "poll"})
# Lock and cover commands as the state HA's entity then shows.
_TARGETS: Final[Mapping[Platform, Mapping[str, str]]] = {
    Platform.LOCK: {"lock": "locked", "unlock": "unlocked"},
    Platform.COVER: {"open": "open", "close": "closed", "stoppositionchange": "stop"},
    Platform.VALVE: {"open": "open", "close": "closed"},
}
# HSM arm commands (hub_set_hsm armCommand, a rule's set_hsm status) as the panel's state.
_HSM_TARGETS: Final[Mapping[str, str]] = {
    "armaway": "armed_away",
    "armhome": "armed_home",
    "armnight": "armed_night",
    "disarm": "disarmed",
    "disarmall": "disarmed",
}
# Tools that store actions the call's arguments do not show.
_UNREAD_STORES: Final = frozenset(
    {"hub_import_custom_rule", "hub_clone_custom_rule", "hub_import_native_app"}
)
_RULE_STORES: Final = frozenset({"hub_create_custom_rule", "hub_update_custom_rule"})

# The controllable entities of one device key: (platform, spec key).
type DeviceEntities = Callable[[str], list[tuple[Platform, str]]]


def call_effect(
    name: str,
    arguments: Mapping[str, Any],
    known: Mapping[str, Any],
    entities: DeviceEntities,
) -> CallEffect | None:
    """The changes a call makes now and stores; None for a tool this table does not know."""
    if name == "hub_call_device_command":
        return CallEffect(changes=tuple(_commands(arguments, known, entities)))
    if name == "hub_set_hsm":
        return CallEffect(changes=(_hsm(arguments.get("armCommand")),))
    if name == "hub_manage_mode":
        return CallEffect()  # the location mode: no entity of a person's safety
    if name in _RULE_STORES:
        actions = arguments.get("actions")
        return CallEffect(stored=tuple(_actions(actions, known, entities)))
    if name in _UNREAD_STORES:
        return CallEffect(unread=True)
    return None


def _commands(
    arguments: Mapping[str, Any], known: Mapping[str, Any], entities: DeviceEntities
) -> Iterator[EntityChange]:
    """hub_call_device_command: one command, or each of a batch's `commands`."""
    items: list[Any] = [arguments]
    if isinstance(batch := arguments.get("commands"), list):
        items = [*([arguments] if "deviceId" in arguments else []), *batch]
    for item in items:
        if isinstance(item, Mapping):
            yield from _device_changes(
                item.get("deviceId"), item.get("command"), item.get("parameters"), known, entities
            )


def _device_changes(
    address: Any,
    command: Any,
    parameters: Any,
    known: Mapping[str, Any],
    entities: DeviceEntities,
    *,
    exact: bool = True,
) -> Iterator[EntityChange]:
    """What one command changes on every device its address may reach (`exact` False: an
    action whose resulting state the table cannot tell, as restoring captured states)."""
    key = canonical_id(address)
    if key is None:
        return
    verb = str(command).strip().lower() if command is not None else None
    if verb in _READS:
        return
    said = _said(command, parameters)
    if not exact:
        verb = None
    for device in resolve_device(known, key):
        for platform, spec_key in entities(device):
            target, position = _target(platform, verb, parameters)
            yield EntityChange(platform, spec_key, target, position, said)


def _target(
    platform: Platform, verb: str | None, parameters: Any
) -> tuple[str | None, float | None]:
    """The state a command asks of an entity of this platform (None: not known)."""
    if verb is None:
        return None, None
    if platform in (Platform.COVER, Platform.VALVE) and verb == "setposition":
        values = parameters if isinstance(parameters, list) else [parameters]
        try:
            return None, float(values[0])
        except (TypeError, ValueError, IndexError):
            return None, None
    table = _TARGETS.get(platform)
    if table is None:
        return verb, None  # a light or switch: nothing the approval rule weighs
    return table.get(verb), None


def _said(command: Any, parameters: Any) -> str:
    text = str(command) if command is not None else "a command"
    if isinstance(parameters, list) and parameters:
        text += f" {', '.join(str(value) for value in parameters)}"
    return text


def _hsm(command: Any) -> EntityChange:
    verb = str(command).strip().lower() if isinstance(command, str) else ""
    return EntityChange(
        *HSM_PANEL,
        _HSM_TARGETS.get(verb),
        action=str(command) if command else "any command",
    )


def _actions(
    actions: Any, known: Mapping[str, Any], entities: DeviceEntities
) -> Iterator[EntityChange]:
    """Every device action of a rule, nested ones included."""
    if isinstance(actions, list):
        for action in actions:
            yield from _actions(action, known, entities)
        return
    if not isinstance(actions, Mapping):
        return
    kind = str(actions.get("type", "")).strip()
    if kind == "set_hsm":
        yield _hsm(actions.get("status"))
    command = actions.get("command") or (kind if kind in ("lock", "unlock") else None)
    if kind == "activate_scene":
        yield from _device_changes(actions.get("sceneDeviceId"), "on", None, known, entities)
    exact = kind in ("device_command", "lock", "unlock", "valve", "set_shade")
    if "deviceId" in actions:
        # Actions the table does not know (a toggle, restoring states): an unknown state.
        yield from _device_changes(
            actions["deviceId"],
            command or kind,
            actions.get("parameters"),
            known,
            entities,
            exact=exact,
        )
    if isinstance(ids := actions.get("deviceIds"), list):
        for address in ids:
            yield from _device_changes(address, kind, None, known, entities, exact=False)
    for nested in ("thenActions", "elseActions", "actions"):
        if nested in actions:
            yield from _actions(actions[nested], known, entities)


def controllable(platform: Platform) -> bool:
    """Whether a command can change an entity of this platform."""
    return platform not in REPORTING_PLATFORMS
