"""Pushed values written into the coordinator's data, and kept over polls that read older ones.

Each broadcast names an accessory by its HomeKit UUID (and, mostly, its home): the value lands
on the accessory of a followed home whose uid is that UUID's tail, under the key get_state
would have shown it with, and only that device's entities are told. Memory stays bounded
whatever a socket sends: a value is kept only under a key the accessory's last read already
had (a characteristic get_state never showed is not taken from a broadcast), and only scalars
get_state could show; the pushes remembered while polls run hold one value per key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import itertools
from typing import TYPE_CHECKING, Any, Final

from homeassistant.core import callback

from .api import Accessory, ButtonPress, Home, HomecastState, accessory_device_key
from .vocabulary import EVENT_KEY, is_press, simplify, uuid_tail

if TYPE_CHECKING:
    from .coordinator import HomecastCoordinator

# Presses remembered per accessory (its event entity fires each once).
_PRESS_MEMORY: Final = 5


@dataclass(slots=True)
class Counters:
    """What the pushes did, for diagnostics."""

    messages: int = 0
    applied: int = 0
    duplicates: int = 0
    ignored: int = 0
    resyncs: int = 0


@dataclass(frozen=True, slots=True)
class _Applied:
    """One value a push set, re-applied over a poll that was already under way."""

    seq: int
    value: Any


@dataclass(slots=True)
class PushApplier:
    """Writes pushed values into the coordinator's data and tells the devices' entities."""

    coordinator: HomecastCoordinator
    resync: Callable[[], None]
    counters: Counters = field(default_factory=Counters)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _presses: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # Pushes since the oldest poll still under way started: (home, uid, key) -> newest.
    _recent: dict[tuple[str, str, str], _Applied] = field(default_factory=dict)
    _polls_running: list[int] = field(default_factory=list)
    _last_seq: int = 0

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

    @callback
    def apply_characteristic(self, message: Mapping[str, Any]) -> None:
        """Apply one characteristic_update to the accessory it names."""
        char_type = message.get("characteristicType")
        target = self._find(message.get("homeId"), message.get("accessoryId"))
        if target is None or not isinstance(char_type, str):
            self.counters.ignored += 1
            return
        home, acc = target
        value = message.get("value")
        if is_press(char_type):
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2:
                # Each message is one press, whatever the value before it.
                press = ButtonPress(f"push:{next(self._presses)}", value)
                acc.events = (*acc.events, press)[-_PRESS_MEMORY:]
                acc.values[EVENT_KEY] = value
                self._notify(home, [acc])
            return
        simple = simplify(char_type, value)
        if simple is None or simple[0] not in acc.values:
            self.counters.ignored += 1
            return
        key, new = simple
        self._remember(home, acc, key, new)
        changed = self._set(acc, key, new)
        for group in self._groups_of(home, acc):
            member_values = [
                m.values.get(key) for m in self._members(home, group) if key in m.values
            ]
            if key not in group.values:
                continue
            if key in ("on", "active"):
                changed |= self._set(group, key, any(bool(v) for v in member_values))
            else:
                changed |= self._set(group, key, new)
        if changed:
            self._notify(home, [acc, *self._groups_of(home, acc)])
        else:
            self.counters.duplicates += 1

    @callback
    def apply_group(self, message: Mapping[str, Any]) -> None:
        """A service group written as a whole: the group and each of its members."""
        char_type = message.get("characteristicType")
        target = self._find(message.get("homeId"), message.get("groupId"))
        if target is None or not isinstance(char_type, str):
            self.counters.ignored += 1
            return
        home, group = target
        simple = simplify(char_type, message.get("value"))
        if simple is None:
            self.counters.ignored += 1
            return
        key, new = simple
        members = [acc for acc in (group, *self._members(home, group)) if key in acc.values]
        if not members:
            self.counters.ignored += 1
            return
        changed = False
        for acc in members:
            self._remember(home, acc, key, new)
            changed |= self._set(acc, key, new)
        if changed:
            self._notify(home, members)
        else:
            self.counters.duplicates += 1

    @staticmethod
    def _set(acc: Accessory, key: str, value: Any) -> bool:
        if key in acc.values and acc.values[key] == value:
            return False
        acc.values[key] = value
        return True

    @staticmethod
    def _members(home: Home, group: Accessory) -> list[Accessory]:
        keys = set(group.members)
        return [a for a in home.accessories.values() if a.key in keys and not a.group]

    @staticmethod
    def _groups_of(home: Home, acc: Accessory) -> list[Accessory]:
        return [g for g in home.accessories.values() if g.group and acc.key in g.members]

    def _notify(self, home: Home, accs: list[Accessory]) -> None:
        self.counters.applied += 1
        self.coordinator.notify_push({accessory_device_key(home, acc) for acc in accs})

    # -- polls and pushes in either order ---------------------------------------------------

    def _remember(self, home: Home, acc: Accessory, key: str, value: Any) -> None:
        seq = next(self._seq)
        self._last_seq = seq
        if self._polls_running:
            self._recent[(home.uuid, acc.uid, key)] = _Applied(seq, value)

    def poll_started(self) -> int:
        """A poll begins: pushes from now on are newer than what it may read."""
        self._polls_running.append(self._last_seq)
        return self._last_seq

    def poll_finished(self, started: int, state: HomecastState | None) -> None:
        """Lay the pushes received while the poll ran over what it read (they are newer)."""
        if started in self._polls_running:
            self._polls_running.remove(started)
        if state is not None:
            for (home_id, uid, key), item in self._recent.items():
                if item.seq <= started:
                    continue
                home = state.homes.get(home_id)
                acc = home.accessories.get(uid) if home is not None else None
                if acc is not None and key in acc.values:
                    acc.values[key] = item.value
        oldest = min(self._polls_running, default=None)
        self._recent = (
            {}
            if oldest is None
            else {where: item for where, item in self._recent.items() if item.seq > oldest}
        )
