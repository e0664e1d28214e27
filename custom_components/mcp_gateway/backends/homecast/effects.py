"""What a Homecast call changes, entity by entity, for the gateway's approval and exposure.

A set_state update acts on the accessory it names, through the property it writes: the lock
through `lock_target`, the security system through `alarm_target`, a cover through `target`
(`target_position` on older servers). A scene's or automation's actions (create_scene,
update_scene, create_automation, update_automation, the Homecast automations) are stored to
run later, each an accessory and the properties it sets (homecast-web local-mcp.ts scene
actions; local-hc-automations.ts `device` actions). run_scene runs the scene entity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from homeassistant.const import Platform

from ...framework.base import CallEffect, EntityChange
from .addresses import accessory_keys, homes_named, update_keys
from .api import HomecastState
from .scenes import scene_key

# A property an update writes, the platform of the entity it changes, and its HA state.
_LOCK_KEYS: Final = frozenset({"lock_target"})
_ALARM_KEYS: Final = frozenset({"alarm_target"})
_POSITION_KEYS: Final = frozenset({"target", "target_position"})
_ALARM_STATES: Final[Mapping[Any, str]] = {
    "home": "armed_home",
    "away": "armed_away",
    "night": "armed_night",
    "off": "disarmed",
    0: "armed_home",
    1: "armed_away",
    2: "armed_night",
    3: "disarmed",
}
_ADDRESS: Final = frozenset({"home", "room", "accessory", "type"})
_STORES: Final = frozenset(
    {
        "create_scene",
        "update_scene",
        "create_automation",
        "update_automation",
        "create_hc_automation",
        "update_hc_automation",
    }
)

# The controllable entities of one device key: (platform, spec key).
type DeviceEntities = Callable[[str], list[tuple[Platform, str]]]


def call_effect(
    name: str,
    arguments: Mapping[str, Any],
    data: HomecastState | None,
    entities: DeviceEntities,
) -> CallEffect | None:
    """The changes a call makes now and stores; None for a tool this table does not know."""
    if name == "set_state":
        updates = arguments.get("updates")
        changes = [
            change
            for update in (updates if isinstance(updates, list) else [])
            if isinstance(update, Mapping)
            for key in update_keys(data, update)
            for change in _writes(key, update, entities)
        ]
        return CallEffect(changes=tuple(changes))
    if name == "run_scene":
        homes, _ = homes_named(data, arguments.get("home", ""))
        scene = arguments.get("name")
        if not isinstance(scene, str):
            return CallEffect()
        keys = [scene_key(home, scene) for home in homes]
        return CallEffect(changes=tuple(EntityChange(Platform.SCENE, key) for key in keys))
    if name in _STORES:
        return CallEffect(stored=tuple(_stored(arguments, data, entities)))
    return None


def _stored(
    arguments: Mapping[str, Any], data: HomecastState | None, entities: DeviceEntities
) -> Iterator[EntityChange]:
    """Every accessory action a scene or automation stores, in every home it may name."""
    actions = arguments.get("actions")
    if not isinstance(actions, list):
        return
    homes, _ = homes_named(data, arguments.get("home", ""))
    for action in actions:
        if not isinstance(action, Mapping) or action.get("type", "device") != "device":
            continue
        ref = action.get("accessory")
        if not isinstance(ref, str):
            continue
        for home in homes:
            for key in accessory_keys(home, ref):
                yield from _writes(key, action, entities)


def _writes(
    key: str, update: Mapping[str, Any], entities: DeviceEntities
) -> Iterator[EntityChange]:
    """The entities of one accessory an update's properties change, with the state each
    asks for; a property of no known entity changes every controllable one, to a state not
    known."""
    props = {k: v for k, v in update.items() if k not in _ADDRESS}
    owned = entities(key)
    said = ", ".join(f"{k}={v}" for k, v in props.items())
    seen: dict[tuple[Platform, str], EntityChange] = {}
    for change in _each(owned, props, said):
        # One change per entity: the first property that says the most about it.
        seen.setdefault((change.platform, change.key), change)
    yield from seen.values()


def _each(
    owned: list[tuple[Platform, str]], props: Mapping[str, Any], said: str
) -> Iterator[EntityChange]:
    for prop, value in props.items():
        if prop in _LOCK_KEYS:
            target = "locked" if value in (True, 1, "locked", "secured") else "unlocked"
            yield from _on(owned, {Platform.LOCK}, target, None, said)
        elif prop in _ALARM_KEYS:
            state = _ALARM_STATES.get(value.lower() if isinstance(value, str) else value)
            yield from _on(owned, {Platform.ALARM_CONTROL_PANEL}, state, None, said)
        elif prop in _POSITION_KEYS and isinstance(value, int | float):
            yield from _on(owned, {Platform.COVER, Platform.VALVE}, None, float(value), said)
        else:
            platforms = {platform for platform, _ in owned}
            yield from _on(owned, platforms, _other(owned, prop), None, said)


def _other(owned: list[tuple[Platform, str]], prop: str) -> str | None:
    """A property that is not a lock's, alarm's or position's: on a lock, alarm or cover an
    unknown state (the most sensitive), elsewhere the property itself."""
    sensitive = {Platform.LOCK, Platform.ALARM_CONTROL_PANEL, Platform.COVER}
    return None if any(platform in sensitive for platform, _ in owned) else prop


def _on(
    owned: list[tuple[Platform, str]],
    platforms: set[Platform],
    target: str | None,
    position: float | None,
    said: str,
) -> Iterator[EntityChange]:
    for platform, key in owned:
        if platform in platforms:
            yield EntityChange(platform, key, target, position, said)
