"""Homecast's own set_state, checked against what the accessories report afterwards.

Neither edition's answer proves a write: the community server counts every update it forwards
as done (homecast-web src/server/local-rest.ts handleSetState: `updated++` for each update of a
home once the relay answered `state.set`, whatever the relay failed, and its settableProps
drop other keys without a word), while the Mac app's HomeKitManager.setState reports a
characteristic the accessory lacks as failed. So each update is read back: an accessory without
the characteristic cannot have applied it, one that shows the value did.
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import TYPE_CHECKING, Any, Final

from ...framework.base import CallConfirmation, Confirmation, async_confirm_by_reading
from .addresses import home_by_name
from .api import Accessory, HomecastState

if TYPE_CHECKING:
    from .coordinator import HomecastCoordinator

# How long the relay may take to apply a write (src/server/homekit-write.ts), read back
# every READ_EVERY seconds meanwhile.
CONFIRM_SECONDS: Final = 3.0
READ_EVERY: Final = 0.5
_ADDRESS: Final = frozenset({"home", "room", "accessory"})


async def async_confirm_set_state(
    coordinator: HomecastCoordinator, arguments: Mapping[str, Any]
) -> CallConfirmation | None:
    """Each update of a set_state call: confirmed, not applied, or not (yet) shown."""
    updates = arguments.get("updates")
    if not isinstance(updates, list) or not updates:
        return None
    items = await async_confirm_by_reading(
        lambda: [_check(coordinator.data, update) for update in updates],
        coordinator.async_refresh,
        seconds=CONFIRM_SECONDS,
        every=READ_EVERY,
    )
    statuses = {item["status"] for item in items}
    if Confirmation.NOT_APPLIED in statuses:
        status = Confirmation.NOT_APPLIED
        note = (
            "Not every update was applied, whatever Homecast's `updated` says: see each "
            "item's `device_reports`."
        )
    elif Confirmation.UNKNOWN in statuses:
        status = Confirmation.UNKNOWN
        note = f"Sent; not every accessory showed the change within {CONFIRM_SECONDS:g} s."
    else:
        status = Confirmation.CONFIRMED
        note = "Every accessory reports the values asked."
    return CallConfirmation(status, note, tuple(items))


def _check(data: HomecastState | None, update: Any) -> dict[str, Any]:
    """One update against the accessory's current values."""
    if not isinstance(update, Mapping):
        return {"status": Confirmation.UNKNOWN}
    item: dict[str, Any] = {"accessory": update.get("accessory")}
    acc = _accessory(data, update)
    wanted = {k: v for k, v in update.items() if k not in _ADDRESS}
    if acc is None or not wanted:
        return {**item, "status": Confirmation.UNKNOWN}
    ours = {server: key for key, server in acc.wire.items()}
    missing = [k for k in wanted if ours.get(k, k) not in acc.values]
    shown = {ours.get(k, k): acc.values[ours.get(k, k)] for k in wanted if k not in missing}
    if missing:
        return {
            **item,
            "status": Confirmation.NOT_APPLIED,
            "why": f"{acc.name} has no {', '.join(missing)}",
            "device_reports": dict(acc.values),
        }
    same = all(_same(acc.values[ours.get(k, k)], v) for k, v in wanted.items())
    status = Confirmation.CONFIRMED if same else Confirmation.UNKNOWN
    return {**item, "status": status, "device_reports": shown}


def _accessory(data: HomecastState | None, update: Mapping[str, Any]) -> Accessory | None:
    home = home_by_name(data, update.get("home"))
    ref = update.get("accessory")
    if home is None or not isinstance(ref, str):
        return None
    room = update.get("room")
    for acc in home.accessories.values():
        if acc.key == ref.strip().lower() and (not isinstance(room, str) or acc.room_key == room):
            return acc
    return home.find(ref)


def _same(reported: Any, wanted: Any) -> bool:
    """Whether a reported value is the one asked (numbers within HomeKit's rounding)."""
    if isinstance(reported, bool) or isinstance(wanted, bool):
        return bool(reported) == bool(wanted) if isinstance(reported, bool | int) else False
    if isinstance(reported, int | float) and isinstance(wanted, int | float):
        return math.isclose(reported, wanted, abs_tol=0.51)
    if isinstance(reported, str) and isinstance(wanted, str):
        return reported.casefold() == wanted.casefold()
    return bool(reported == wanted)
