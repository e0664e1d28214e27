"""Broadcasts read as value changes for the coordinator, which alone writes its data.

Each broadcast names an accessory by its HomeKit UUID (and, mostly, its home): it concerns the
accessory of a followed home whose uid is that UUID's tail, under the key get_state would have
shown it with (vocabulary.simplify). A member's change is its groups' too, as HomeKit shows a
group: on when any member is, a level as the member's. What this module reads of the
coordinator's data it only reads; `HomecastCoordinator.apply_changes` writes, keeps pushes over
polls that read older values, and tells the entities of the devices that really changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from homeassistant.core import callback

from .api import Accessory, Home, HomecastState
from .coordinator import ValueChange
from .vocabulary import EVENT_KEY, is_press, simplify, uuid_tail

if TYPE_CHECKING:
    from .coordinator import HomecastCoordinator

# Values a group takes from its members as HomeKit shows it: on while any member is on.
_ANY_MEMBER: frozenset[str] = frozenset({"on", "active"})


@dataclass(slots=True)
class Counters:
    """What the pushes did, for diagnostics."""

    messages: int = 0
    applied: int = 0
    duplicates: int = 0
    ignored: int = 0
    resyncs: int = 0


@dataclass(slots=True)
class PushChanges:
    """Turns each value broadcast into `ValueChange`s and hands them to the coordinator."""

    coordinator: HomecastCoordinator
    resync: Callable[[], None]
    counters: Counters = field(default_factory=Counters)

    def _find(self, home_id: Any, accessory_id: Any) -> tuple[Home, Accessory] | None:
        """The followed home and accessory a broadcast names; None when we do not follow it."""
        data: HomecastState | None = self.coordinator.data
        if data is None or not isinstance(accessory_id, str) or not accessory_id:
            return None
        if isinstance(home_id, str) and home_id:
            home = data.homes.get(home_id.lower())
            homes = [home] if home is not None else []
        else:
            # No home: a relay write (homeId null), or a reachability update.
            homes = [h for h in data.homes.values() if not h.missing]
        tail = uuid_tail(accessory_id)
        found: list[tuple[Home, Accessory]] = []
        for home in homes:
            for acc in home.accessories.values():
                if acc.uid == tail or (acc.uid.endswith(tail) and acc.key.endswith(tail)):
                    found.append((home, acc))
        if len(found) == 1:
            return found[0]
        if found:
            # Two accessories share the tail: only a read can tell which one changed.
            self.resync()
        return None

    def _target(
        self, message: Mapping[str, Any], id_field: str
    ) -> tuple[Home, Accessory, str] | None:
        """The followed accessory (or group) a broadcast names, and its characteristic; None,
        counted as ignored, when we follow no such accessory or it names no characteristic."""
        char_type = message.get("characteristicType")
        found = self._find(message.get("homeId"), message.get(id_field))
        if found is None or not isinstance(char_type, str):
            self.counters.ignored += 1
            return None
        return (*found, char_type)

    @callback
    def apply_characteristic(self, message: Mapping[str, Any]) -> None:
        """One characteristic_update: the accessory it names, and the groups it is in."""
        if (target := self._target(message, "accessoryId")) is None:
            return
        home, acc, char_type = target
        value = message.get("value")
        if is_press(char_type):
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2:
                self._hand([ValueChange(home.uuid, acc.uid, EVENT_KEY, value, press=True)])
            return
        simple = simplify(char_type, value)
        if simple is None or simple[0] not in acc.values:
            self.counters.ignored += 1
            return
        key, new = simple
        changes = [ValueChange(home.uuid, acc.uid, key, new)]
        for group in _groups_of(home, acc):
            if key not in group.values:
                continue
            if key in _ANY_MEMBER:
                members = [
                    new if member is acc else member.values[key]
                    for member in _members(home, group)
                    if key in member.values
                ]
                changes.append(ValueChange(home.uuid, group.uid, key, any(map(bool, members))))
            else:
                changes.append(ValueChange(home.uuid, group.uid, key, new))
        self._hand(changes)

    @callback
    def apply_group(self, message: Mapping[str, Any]) -> None:
        """A service group written as a whole: the group and each of its members."""
        if (target := self._target(message, "groupId")) is None:
            return
        home, group, char_type = target
        simple = simplify(char_type, message.get("value"))
        if simple is None:
            self.counters.ignored += 1
            return
        key, new = simple
        members = [acc for acc in (group, *_members(home, group)) if key in acc.values]
        if not members:
            self.counters.ignored += 1
            return
        self._hand([ValueChange(home.uuid, acc.uid, key, new) for acc in members])

    def _hand(self, changes: list[ValueChange]) -> None:
        if self.coordinator.apply_changes(changes):
            self.counters.applied += 1
        else:
            self.counters.duplicates += 1


def _members(home: Home, group: Accessory) -> list[Accessory]:
    keys = set(group.members)
    return [a for a in home.accessories.values() if a.key in keys and not a.group]


def _groups_of(home: Home, acc: Accessory) -> list[Accessory]:
    return [g for g in home.accessories.values() if g.group and acc.key in g.members]
