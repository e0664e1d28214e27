"""What a Homecast call reaches, and what of its answers a caller may be shown.

Homecast resolves a set_state update's home by slug, display name or UUID, its room by slug
or display name and its accessory by slug, display name or UUID inside that room (the cloud's
api/home.py, as simulators/homecast follows it; the community server's local-rest.ts
hands the room and accessory on to the relay, which resolves them the same way). Each address
is resolved here the same way, to every accessory it may reach, so that permission and
exposure are decided on what the call reaches, however it is spelt.
"""

from __future__ import annotations

from collections.abc import Mapping
import copy
import re
from typing import Any, Final

from ...core.words import words
from ...framework.base import Shown, UnknownListing
from .api import Accessory, Home, HomecastState, accessory_device_key
from .scenes import home_device_key
from .vocabulary import uuid_tail

# A HomeKit UUID written out in full (get_history's `accessory` may be one).
_FULL_UUID: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

# The device key of what lies outside the followed homes: no entity stands for it.
UNFOLLOWED: Final = "homes this entry does not follow"


def _needle(ref: Any) -> str:
    return str(ref).strip().lower()


def homes_named(data: HomecastState | None, ref: Any) -> tuple[list[Home], bool]:
    """The followed homes a home reference may mean, and whether it may also mean a home of
    the account this entry does not follow (whose names we do not know)."""
    needle = _needle(ref)
    homes = [
        home
        for home in (data.homes.values() if data is not None else ())
        if not home.missing and needle in (home.key, home.name.lower(), home.uuid.lower())
    ]
    unfollowed = (
        data is None or data.account_homes is None or bool(data.account_homes - data.homes.keys())
    )
    # A slug or UUID names one home; a display name may be shared with an unfollowed one.
    exact = any(needle in (home.key, home.uuid.lower()) for home in homes)
    return homes, unfollowed and not exact


def home_by_name(data: HomecastState | None, ref: Any) -> Home | None:
    """The one followed home a reference names the way people say it (any case, accents,
    apostrophes and separators: "rob's flat", "Rob's_Flat"), or None (none, or several)."""
    if data is None or not isinstance(ref, str) or not words(ref):
        return None
    wanted = words(ref)
    found = [
        home
        for home in data.homes.values()
        if not home.missing and wanted in (words(home.name), words(home.key), [home.uuid.lower()])
    ]
    return found[0] if len(found) == 1 else None


def with_home_key(data: HomecastState | None, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """The arguments with a `home` given by name as the home's key.

    The community server finds a home by its key alone (local-mcp.ts: uniqueKey(name, id) ===
    home), the cloud by key, name or UUID; a name the cloud might also find in a home this
    entry does not follow is, once it is a followed home's key, the call of that home only.
    """
    ref = arguments.get("home")
    home = home_by_name(data, ref)
    if home is None or ref == home.key:
        return arguments
    return {**arguments, "home": home.key}


def home_keys(data: HomecastState | None, ref: Any) -> list[str]:
    """The home devices a home reference (run_scene's `home`) may reach."""
    homes, other = homes_named(data, ref)
    keys = [home_device_key(home) for home in homes]
    if not homes:
        keys.append(f"home {str(ref)!r}")
    elif other:
        keys.append(UNFOLLOWED)
    return keys


def _history_homes(data: HomecastState | None, ref: Any) -> tuple[list[Home], bool]:
    """The followed homes a history read's `home` may mean, as the community server matches
    it (local-rest.ts handleGetHistory: key or name contains it; none given: every home), and
    whether it may also mean a home this entry does not follow."""
    followed = [h for h in (data.homes.values() if data is not None else ()) if not h.missing]
    unfollowed = (
        data is None or data.account_homes is None or bool(data.account_homes - data.homes.keys())
    )
    if not isinstance(ref, str) or not ref.strip():
        return followed, unfollowed
    needle = _needle(ref)
    # Even a followed home's own key may be part of an unfollowed home's key (a substring
    # match), whose names we do not know: such a read may reach it.
    return [h for h in followed if needle in h.key or needle in h.name.lower()], unfollowed


def history_keys(data: HomecastState | None, name: str, arguments: Mapping[str, Any]) -> list[str]:
    """The accessories a history read may reach, matched as the community server matches them.

    get_history reads the first accessory whose id equals `accessory` or whose key or name
    contains it, in the first home `home` matches (local-rest.ts handleGetHistory): every
    accessory it may match is addressed. query_history with `accessories` is addressed by its
    answer instead (filter_history keeps the series this caller may read); without them it
    reads every recorded accessory of a home, so it addresses them all.
    """
    homes, other = _history_homes(data, arguments.get("home"))
    if name == "query_history":
        wanted = arguments.get("accessories")
        if isinstance(wanted, list) and any(isinstance(w, str) and w.strip() for w in wanted):
            return []
        keys = [
            accessory_device_key(home, acc) for home in homes for acc in home.accessories.values()
        ]
        return [*keys, UNFOLLOWED] if other or not homes else keys
    ref = arguments.get("accessory")
    needle = _needle(ref) if isinstance(ref, str) else ""
    # A full UUID matches the accessory's own id upstream (`acc.id === wanted`); we know its
    # tail only, so every accessory with that tail may be the one.
    tail = uuid_tail(needle) if _FULL_UUID.fullmatch(needle) else None
    keys = []
    for home in homes:
        for acc in home.accessories.values():
            if needle and (
                acc.uid in (needle, tail) or needle in acc.key or needle in acc.name.lower()
            ):
                keys.extend(_with_members(home, acc))
    if other or not keys:
        keys.append(f"accessory {str(ref)!r}")
    return list(dict.fromkeys(keys))


def filter_history(data: HomecastState | None, answer: Any, shown: Shown) -> tuple[Any, int]:
    """query_history's answer ({home, series: [{accessory, …}], …}) with the series of the
    accessories `shown` admits: its `accessories` match by substring (local-rest.ts
    handleQueryHistory), so it may return more than was meant."""
    if not isinstance(answer, dict):
        raise UnknownListing("query_history: not an object")
    series = answer.get("series")
    if series is None:
        return answer, 0  # History off for the home: a message, no series.
    if not isinstance(series, list):
        raise UnknownListing("query_history: series is not a list")
    home = _followed(data, str(answer.get("home", "")))
    kept = []
    for entry in series:
        ref = entry.get("accessory") if isinstance(entry, Mapping) else None
        acc = home.find(ref) if home is not None and isinstance(ref, str) else None
        if (
            home is not None
            and acc is not None
            and all(shown.device(key) for key in _with_members(home, acc))
        ):
            kept.append(entry)
    withheld = len(series) - len(kept)
    if withheld:
        answer = {**copy.deepcopy(answer), "series": copy.deepcopy(kept)}
    return answer, withheld


def update_keys(data: HomecastState | None, update: Any) -> list[str]:
    """The accessories one set_state update may reach (a group: itself and its members)."""
    if not isinstance(update, Mapping):
        return ["a malformed update"]
    refs = [update.get(part, "") for part in ("home", "room", "accessory")]
    homes, other = homes_named(data, refs[0])
    keys: list[str] = []
    room, accessory = _needle(refs[1]), _needle(refs[2])
    for home in homes:
        for acc in home.accessories.values():
            in_room = room in (acc.room_key, acc.room_name.lower())
            if in_room and accessory in (acc.key, acc.name.lower(), acc.uid):
                keys.extend(_with_members(home, acc))
    if other or not keys:
        keys.append("/".join(str(ref) for ref in refs))
    return list(dict.fromkeys(keys))


def _with_members(home: Home, acc: Accessory) -> list[str]:
    keys = [accessory_device_key(home, acc)]
    for member in acc.members:
        found = next((a for a in home.accessories.values() if a.key == member), None)
        keys.append(accessory_device_key(home, found) if found else f"{home.key}/{member}")
    return keys


def filter_state(data: HomecastState | None, answer: Any, shown: Shown) -> tuple[Any, int]:
    """get_state's answer ({home: {room: {accessory: state}}, _scenes, _homes, _meta}) with
    the accessories, scenes and homes `shown` admits; how many it withheld."""
    if not isinstance(answer, dict):
        raise UnknownListing("get_state: not an object")
    answer = copy.deepcopy(answer)
    withheld = 0
    hidden_homes: list[str] = []
    for home_key in [key for key in answer if not key.startswith("_")]:
        home = _followed(data, home_key)
        withheld += _filter_home(home, home_key, answer[home_key], shown)
        if home is None and not any(not key.startswith("_") for key in answer[home_key]):
            del answer[home_key]
            hidden_homes.append(home_key)
    if isinstance(homes := answer.get("_homes"), dict):
        for home_key in hidden_homes:
            homes.pop(home_key, None)
    return answer, withheld


def _filter_home(home: Home | None, home_key: str, rooms: Any, shown: Shown) -> int:
    """One home's rooms with the accessories `shown` admits (an emptied room goes), and its
    scenes where its home is shown; how many it withheld."""
    if not isinstance(rooms, dict):
        raise UnknownListing(f"get_state: {home_key} is not an object")
    withheld = 0
    for room_key in [key for key in rooms if not key.startswith("_")]:
        accessories = rooms[room_key]
        if not isinstance(accessories, dict):
            raise UnknownListing(f"get_state: {home_key}.{room_key} is not an object")
        for acc_key in list(accessories):
            if not _accessory_shown(home, home_key, room_key, acc_key, shown):
                del accessories[acc_key]
                withheld += 1
        if not accessories:
            del rooms[room_key]
    if "_scenes" in rooms and (home is None or not shown.device(home_device_key(home))):
        del rooms["_scenes"]
        withheld += 1
    return withheld


def _followed(data: HomecastState | None, home_key: str) -> Home | None:
    for home in data.homes.values() if data is not None else ():
        if home.key == home_key and not home.missing:
            return home
    return None


def _accessory_shown(
    home: Home | None, home_key: str, room_key: str, acc_key: str, shown: Shown
) -> bool:
    if home is None:
        return shown.device(f"{home_key}/{room_key}/{acc_key}")
    acc = next(
        (a for a in home.accessories.values() if a.room_key == room_key and a.key == acc_key),
        None,
    )
    if acc is None:
        return shown.device(f"{home_key}/{room_key}/{acc_key}")
    return all(shown.device(key) for key in _with_members(home, acc))


def filter_automations(data: HomecastState | None, answer: Any, shown: Shown) -> tuple[Any, int]:
    """get_automations' or get_hc_automations' answer ({home: [automation], _meta}) with the
    automations whose home and every accessory they trigger on, test or act on `shown` admits."""
    if not isinstance(answer, dict):
        raise UnknownListing("get_automations: not an object")
    answer = copy.deepcopy(answer)
    withheld = 0
    for home_key in [key for key in answer if not key.startswith("_")]:
        automations = answer[home_key]
        if not isinstance(automations, list):
            raise UnknownListing(f"get_automations: {home_key} is not a list")
        home = _followed(data, home_key)
        home_shown = home is not None and shown.device(home_device_key(home))
        kept = [
            automation
            for automation in automations
            if home is not None
            and home_shown
            and all(
                shown.device(key) for ref in _accessory_refs(automation) for key in _acc(home, ref)
            )
        ]
        withheld += len(automations) - len(kept)
        if not shown.secrets():
            # A webhook trigger's id is what calling it takes: for administrators only.
            for automation in kept:
                _without_webhook_ids(automation)
        if home is None:
            del answer[home_key]
        else:
            answer[home_key] = kept
    return answer, withheld


def _without_webhook_ids(node: Any) -> None:
    if isinstance(node, dict):
        for key in node:
            if key == "webhook_id":
                node[key] = "(hidden)"
            else:
                _without_webhook_ids(node[key])
    elif isinstance(node, list):
        for item in node:
            _without_webhook_ids(item)


def accessory_keys(home: Home, ref: str) -> list[str]:
    """The accessories an action's `accessory` (slug, name or UUID, in any room) reaches."""
    return _acc(home, ref)


def _acc(home: Home, ref: str) -> list[str]:
    found = home.find(ref)
    return _with_members(home, found) if found is not None else [f"{home.key}/{ref}"]


def _accessory_refs(node: Any) -> list[str]:
    """Every `accessory` (or virtual accessory) an automation's triggers, conditions or
    actions name."""
    refs: list[str] = []
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("accessory", "virtual") and isinstance(value, str):
                refs.append(value)
            else:
                refs.extend(_accessory_refs(value))
    elif isinstance(node, list):
        for item in node:
            refs.extend(_accessory_refs(item))
    return refs
