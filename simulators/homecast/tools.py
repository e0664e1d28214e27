"""The 17 Homecast MCP tools: catalog (personalised per credential) and their behaviour.

Handlers raise `ToolError` for a failure the service reports as a tool result with
`isError: true` and the text "Error: <message>".
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
import math
import re
from typing import Any

from .model import (
    HVAC_MODES,
    VIRTUAL_KEYS,
    VIRTUAL_TYPES,
    Accessory,
    Home,
    Room,
    Scene,
    Virtual,
    WriteError,
    add_virtual,
    check_value,
    format_value,
    normalize_key,
    render_accessory,
    uuid_with_tail,
)
from .state import (
    ADMIN_SCOPE,
    HISTORY_CHARS,
    NUMERIC_CHARS,
    READ_SCOPE,
    RELAY_WRITE_TIMEOUT,
    WRITE_SCOPE,
    Grant,
    HomecastSim,
    Record,
)


class ToolError(Exception):
    """A tool failure reported as an isError result."""


Handler = Callable[[HomecastSim, Grant, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    """One tool: schema, hints, the scope it needs and its handler."""

    name: str
    summary: str
    schema: dict[str, Any]
    handler: Handler
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False

    @property
    def read_scope_enough(self) -> bool:
        """Whether mcp:read suffices (only the three listing tools, per the scope table).

        homecast-web src/server/local-oauth.ts normalizeScope: mcp:read is read.
        """
        return self.name in ("get_state", "get_automations", "get_hc_automations")


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


_STR = {"type": "string"}
_HOME = {"type": "string", "description": "Home key from get_state (a home name also works)."}
_ARRAY_OBJ = {"type": "array", "items": {"type": "object"}}

# ---------------------------------------------------------------------------------------------
# helpers


def _text(args: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = args.get(key)
    if value is None:
        if required:
            raise ToolError(f"'{key}' is required")
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise ToolError(f"'{key}' must be a non-empty string")
    return value


def _home(sim: HomecastSim, grant: Grant, ref: str, *, write: bool) -> Home:
    try:
        home = sim.home(ref)
    except KeyError:
        home = None
    if home is None or grant.right(home) is None:
        raise ToolError(f"HOME_NOT_FOUND: no home matches '{ref}'")
    if write and not grant.can_write(home):
        raise ToolError(f"Permission denied: this token has view-only access to {home.slug}")
    if not home.relay_online:
        raise ToolError(f"RELAY_NOT_CONNECTED: the relay Mac for {home.slug} is not connected")
    return home


def _keyed_home(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Home:
    """The home of a scene or HomeKit automation tool. The community server finds it by its
    key alone (local-mcp.ts run_scene, local-automations.ts resolveHome:
    homes.find(h => uniqueKey(h.name, h.id) === home))."""
    ref = _text(args, "home", required=True) or ""
    if sim.community and not any(home.slug == ref for home in sim.homes):
        raise ToolError(f"Home not found: {ref}")
    return _home(sim, grant, ref, write=True)


def _name_ok(name: str) -> bool:
    return bool(name) and name[-1].isalnum()


def _suggest(name: str) -> str:
    cleaned = re.sub(r"[^\w\s]", "", name).strip()
    return re.sub(r"\s+", " ", cleaned) or "Automation 1"


def _device(home: Home, ref: Any, *, allow_virtual: bool) -> Accessory:
    if not isinstance(ref, str):
        raise ToolError("'accessory' must be an accessory key")
    acc = home.find(ref)
    if acc is None or (acc.virtual is not None and not allow_virtual):
        raise ToolError(f"Accessory '{ref}' not found in {home.slug}")
    return acc


def _props(acc: Accessory, props: dict[str, Any]) -> dict[str, Any]:
    """Validate a set_state-style property dict against an accessory (or each group member)."""
    if not props:
        raise ToolError(f"no properties given for {acc.slug}")
    out: dict[str, Any] = {}
    targets = acc.members if acc.members else [acc]
    try:
        for key, value in props.items():
            norm_key, norm_value = normalize_key(key, value)
            for target in targets:
                out[norm_key] = check_value(target, norm_key, norm_value)
    except WriteError as err:
        raise ToolError(str(err)) from err
    return out


def _duration(value: Any, what: str) -> None:
    if isinstance(value, bool):
        raise ToolError(f"{what} must be seconds or {{hours, minutes, seconds}}")
    if isinstance(value, int | float) and value >= 0:
        return
    parts_ok = isinstance(value, dict) and value and set(value) <= {"hours", "minutes", "seconds"}
    if parts_ok and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
    ):
        return
    raise ToolError(f"{what} must be seconds or {{hours, minutes, seconds}}")


def _parse_time(value: Any, what: str) -> datetime:
    if not isinstance(value, str):
        raise ToolError(f"'{what}' must be an ISO 8601 string")
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as err:
        raise ToolError(f"'{what}' is not ISO 8601: {value}") from err
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


def _char_matches(char: str, wanted: list[str]) -> bool:
    for raw in wanted:
        w = raw.strip().lower()
        if char in (w, HISTORY_CHARS.get(w)):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# get_state / set_state


def _matches(needle: str | None, key: str, name: str) -> bool:
    """get_state's filters: no filter, or a substring of the key or the lowercased name."""
    return not needle or needle in key or needle in name.lower()


def _home_body(
    sim: HomecastSim, home: Home, rf: str | None, nf: str | None, tf: str | None
) -> tuple[dict[str, Any], int]:
    """One home's room -> accessory view under the room, name and type filters."""
    body: dict[str, Any] = {}
    count = 0
    for room in home.rooms:
        if not _matches(rf, room.slug, room.name):
            continue
        for acc in room.accessories:
            rendered = render_accessory(home, room, acc, sim.vocabulary)
            if tf and rendered["type"] != tf:
                continue
            if not _matches(nf, acc.slug, acc.name):
                continue
            body.setdefault(room.slug, {})[acc.slug] = rendered
            count += 1
    return body, count


async def get_state(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Nested home -> room -> accessory view; filters are case-insensitive substrings.

    homecast-web src/server/local-rest.ts handleGetState / getState, through src/server/local-mcp.ts
    callTool.
    """
    filters = {k: _text(args, k) for k in ("filter_by_home", "filter_by_room", "filter_by_name")}
    hf, rf, nf = (
        (filters[k] or "").lower() or None
        for k in ("filter_by_home", "filter_by_room", "filter_by_name")
    )
    # The type filter is an exact match on get_state's own type names ("light", not "lightbulb").
    tf = (_text(args, "filter_by_type") or "").lower() or None
    filtered = any((hf, rf, nf, tf))
    result: dict[str, Any] = {}
    homes: dict[str, str] = {}
    count = 0
    for home in sim.visible_homes(grant):
        if not _matches(hf, home.slug, home.name):
            continue
        if not home.relay_online:
            continue  # the service silently leaves out homes whose relay is not connected
        body, found = _home_body(sim, home, rf, nf, tf)
        count += found
        if filtered and not body:
            continue
        body["_scenes"] = [s.name for s in home.scenes]
        result[home.slug] = body
        homes[home.slug] = home.uuid
    result["_homes"] = homes
    result["_meta"] = {
        "fetched_at": sim.now_iso(),
        "message": f"Found {count} accessories across {len(homes)} home(s)",
    }
    return result


COMMUNITY_SETTABLE = frozenset(
    {
        "on",
        "brightness",
        "hue",
        "saturation",
        "color_temp",
        "active",
        "heat_target",
        "cool_target",
        "hvac_mode",
        "lock_target",
        "alarm_target",
        "speed",
        "volume",
        "mute",
        "target",
    }
)


def _check_updates(updates: Any) -> list[dict[str, Any]]:
    """handleSetState's argument check: a non-empty array of objects naming home, room and
    accessory."""
    if not isinstance(updates, list) or not updates:
        raise ToolError("'updates' must be a non-empty array")
    for index, update in enumerate(updates):
        if not isinstance(update, dict):
            raise ToolError(f"updates[{index}] must be an object")
        for key in ("home", "room", "accessory"):
            if not isinstance(update.get(key), str):
                raise ToolError(f"updates[{index}]: '{key}' is required")
    return updates


def _update_props(sim: HomecastSim, update: dict[str, Any]) -> dict[str, Any]:
    """The properties one update sets."""
    props = {k: v for k, v in update.items() if k not in ("home", "room", "accessory")}
    if sim.community:
        # handleSetState keeps only its settableProps: virtual values, thermostat keys
        # and the rest are dropped without a word, and the accessory still counts.
        props = {k: v for k, v in props.items() if k in COMMUNITY_SETTABLE and v is not None}
    return props


def _update_target(
    sim: HomecastSim, home: Home, update: dict[str, Any], props: dict[str, Any]
) -> tuple[Room, Accessory]:
    """The room and accessory an update names; WriteError when either is missing or there is
    nothing to set."""
    room = home.find_room(update["room"])
    if room is None:
        raise WriteError("ACCESSORY_NOT_FOUND", f"room '{update['room']}' not found")
    acc = home.find(update["accessory"], room)
    if acc is None:
        raise WriteError("ACCESSORY_NOT_FOUND", f"'{update['accessory']}' not found in {room.slug}")
    if not props:
        if sim.community:
            raise WriteError("NOTHING", "")  # the relay is sent no property for it
        raise WriteError("INVALID_VALUE", f"nothing to set on {acc.slug}")
    return room, acc


def _accepted_values(acc: Accessory, props: dict[str, Any]) -> dict[str, Any]:
    """HomeKitManager.swift setState's per-property check, on every member of a group; an
    unreachable target fails the write after the relay's timeout."""
    targets = acc.members if acc.members else [acc]
    accepted: dict[str, Any] = {}
    for key, value in props.items():
        norm_key, norm_value = normalize_key(key, value)
        for target in targets:
            accepted[norm_key] = check_value(target, norm_key, norm_value)
    if any(not t.reachable for t in targets):
        raise WriteError(
            "ACCESSORY_UNREACHABLE",
            f"{acc.name} did not confirm the write within "
            f"{RELAY_WRITE_TIMEOUT:.0f}s — it may be unreachable.",
        )
    return accepted


@dataclass
class _SetTally:
    """set_state's running result: counts, change lines and failures grouped by home."""

    updated: int = 0
    failed: int = 0
    changes: list[str] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)
    waited: bool = False  # a write the relay waits for until its timeout

    def fail(self, home: str, message: str) -> None:
        self.failed += 1
        self.errors.setdefault(home, []).append(message)

    def applied(self, line: str) -> None:
        self.updated += 1
        self.changes.append(line)


def _apply_update(sim: HomecastSim, grant: Grant, update: dict[str, Any], tally: _SetTally) -> None:
    """One update of set_state: it succeeds or fails alone."""
    ref = update["home"]
    props = _update_props(sim, update)
    shown = ", ".join(f"{k}={format_value(v)}" for k, v in props.items())
    try:
        home = _home(sim, grant, ref, write=True)
    except ToolError as err:
        tally.fail(ref, str(err))
        return
    try:
        room, acc = _update_target(sim, home, update, props)
        accepted = _accepted_values(acc, props)
    except WriteError as err:
        if err.code == "ACCESSORY_UNREACHABLE":
            tally.waited = True
        if sim.community:
            tally.applied(f"{ref}/{update['room']}/{update['accessory']}: {shown}")
        else:
            tally.fail(home.slug, str(err))
        return
    sim.write(home, acc, accepted)
    tally.applied(f"{home.slug}/{room.slug}/{acc.slug}: {shown}")


async def set_state(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Apply updates; each update succeeds or fails alone, failures grouped by home.

    The relay (HomeKitManager.swift setState) writes every property at once and reports a
    write an accessory did not confirm within writeTimeoutSeconds in its `failed` list. The
    cloud passes those on per home; the community server (local-rest.ts handleSetState)
    counts every update of a home as applied once the relay answered, whatever it failed.
    """
    updates = _check_updates(args.get("updates"))
    tally = _SetTally()
    for update in updates:
        _apply_update(sim, grant, update, tally)
    if tally.waited:
        await asyncio.sleep(sim.relay_write_timeout)
    message = f"Updated {tally.updated} of {len(updates)} accessories"
    if tally.failed:
        message += f"; {tally.failed} failed"
    return {
        "updated": tally.updated,
        "failed": tally.failed,
        "changes": tally.changes,
        "errors": [f"{home}: {'; '.join(msgs)}" for home, msgs in tally.errors.items()],
        "message": message,
    }


# ---------------------------------------------------------------------------------------------
# history


def _history_home(sim: HomecastSim, grant: Grant, ref: str | None) -> Home:
    homes = sim.visible_homes(grant)
    if ref is None:
        if not homes:
            raise ToolError("HOME_NOT_FOUND: this token can see no homes")
        return homes[0]
    needle = ref.lower()
    for home in homes:
        if needle in home.name.lower() or needle in home.slug:
            return home
    raise ToolError(f"HOME_NOT_FOUND: no home matches '{ref}'")


def _analytics_off(home: Home) -> dict[str, Any]:
    # The service answers normally (not an error) and tells the owner where to turn it on.
    return {
        "enabled": False,
        "home": home.slug,
        "message": (
            f"History is not recorded for {home.name}. The home owner can turn on Analytics "
            "in Settings > Homes > " + home.name + "."
        ),
    }


def _state_segments(
    records: list[Record], prior: Any, start: float, end: float
) -> list[tuple[float, float, Any]]:
    """(from, to, state) spans covering [start, end) for an on/off or mode series."""
    spans: list[tuple[float, float, Any]] = []
    cursor, state = start, prior
    for rec in records:
        if rec.at > cursor and state is not None:
            spans.append((cursor, rec.at, state))
        cursor, state = max(cursor, rec.at), rec.value
    if state is not None and end > cursor:
        spans.append((cursor, end, state))
    return spans


def _buckets(
    records: list[Record], prior: Any, start: float, end: float, *, size: float, numeric: bool
) -> list[list[Any]]:
    out: list[list[Any]] = []
    first = math.floor(start / size) * size
    spans = [] if numeric else _state_segments(records, prior, start, end)
    t = first
    while t < end:
        upper = t + size
        inside = [r for r in records if t <= r.at < upper]
        if numeric:
            vals = [float(r.value) for r in inside]
            if vals:
                out.append([_iso(t), min(vals), round(sum(vals) / len(vals), 2), max(vals)])
        else:
            ms: dict[str, int] = {}
            for lo, hi, state in spans:
                overlap = min(hi, upper) - max(lo, t)
                if overlap > 0:
                    label = format_value(state)
                    ms[label] = ms.get(label, 0) + int(overlap * 1000)
            if ms or inside:
                out.append([_iso(t), len(inside), ms])
        t = upper
    return out


def _history_range(sim: HomecastSim, args: dict[str, Any]) -> tuple[datetime, datetime]:
    """handleQueryHistory's window: `end` defaults to now, `start` to 24 hours before it."""
    end = _parse_time(args["end"], "end") if args.get("end") else sim.clock.now()
    start = _parse_time(args["start"], "start") if args.get("start") else end - timedelta(hours=24)
    if start >= end:
        raise ToolError("'start' must be before 'end'")
    return start, end


def _history_resolution(args: dict[str, Any], span: float) -> str:
    """handleQueryHistory's resolution; `auto` picks raw up to 2 days, hourly up to 60."""
    resolution = args.get("resolution", "auto")
    if resolution not in ("auto", "raw", "hourly", "daily"):
        raise ToolError("'resolution' must be auto, raw, hourly or daily")
    if resolution == "auto":
        return "raw" if span <= 2 * 86400 else "hourly" if span <= 60 * 86400 else "daily"
    return str(resolution)


def _points_cap(args: dict[str, Any]) -> int:
    """handleQueryHistory's max_points_per_series: a positive number, at most 2000."""
    cap = args.get("max_points_per_series", 500)
    if isinstance(cap, bool) or not isinstance(cap, int | float) or cap < 1:
        raise ToolError("'max_points_per_series' must be a positive number")
    return min(int(cap), 2000)


def _accessory_wanted(acc: Accessory, wanted: list[str]) -> bool:
    """An accessory filter entry matches by id, or as a substring of its key or name."""
    if not wanted:
        return True
    return any(w == acc.uuid.lower() or w in acc.slug or w in acc.name.lower() for w in wanted)


def _series_points(
    records: list[Record], char: str, resolution: str, t0: float, t1: float
) -> list[list[Any]]:
    """One characteristic's points in [t0, t1): raw changes or hourly/daily buckets."""
    all_char = [r for r in records if r.characteristic == char]
    window = [r for r in all_char if t0 <= r.at < t1]
    if resolution == "raw":
        return [[_iso(r.at), r.value] for r in window]
    before = [r for r in all_char if r.at < t0]
    prior = before[-1].value if before else None
    size = 3600.0 if resolution == "hourly" else 86400.0
    return _buckets(window, prior, t0, t1, size=size, numeric=char in NUMERIC_CHARS)


def _series_entry(
    home: Home, acc: Accessory, char: str, points: list[list[Any]], limit: int
) -> dict[str, Any]:
    """A series cut to `limit` points; a cut series carries the `continue_from` time."""
    entry: dict[str, Any] = {
        "accessory": acc.slug,
        "name": acc.name,
        "room": home.room_of(acc).slug,
        "characteristic": char,
        "kind": "numeric" if char in NUMERIC_CHARS else "state",
    }
    if len(points) > limit:
        entry["continue_from"] = points[limit][0]
        points = points[:limit]
    entry["points"] = points
    entry["count"] = len(points)
    return entry


async def query_history(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Many series at once, raw or as precomputed hourly/daily buckets, paged by continue_from.

    As homecast-web's handleQueryHistory (src/server/local-rest.ts): one home (the first unless
    `home` matches another), every recorded accessory unless `accessories` are given, each of
    them matching by id, or as a substring of an accessory's key or name."""
    home = _history_home(sim, grant, _text(args, "home"))
    if not home.analytics:
        return _analytics_off(home)
    start, end = _history_range(sim, args)
    resolution = _history_resolution(args, (end - start).total_seconds())
    cap = _points_cap(args)
    budget = 50_000
    wanted_acc = [str(a).lower() for a in args.get("accessories") or []]
    wanted_char = [str(c) for c in args.get("characteristics") or []]
    by_accessory: dict[str, list[Record]] = {}
    for rec in sim.ensure_history(home):
        by_accessory.setdefault(rec.accessory, []).append(rec)
    t0, t1 = start.timestamp(), end.timestamp()
    series: list[dict[str, Any]] = []
    truncated = False
    for acc in home.devices():
        if not _accessory_wanted(acc, wanted_acc):
            continue
        mine = by_accessory.get(acc.uuid, [])
        for char in sorted({r.characteristic for r in mine}):
            if wanted_char and not _char_matches(char, wanted_char):
                continue
            points = _series_points(mine, char, resolution, t0, t1)
            if not points:
                continue
            entry = _series_entry(home, acc, char, points, min(cap, budget))
            truncated = truncated or "continue_from" in entry
            budget -= entry["count"]
            series.append(entry)
            if budget <= 0:
                break
    total = sum(s["count"] for s in series)
    return {
        "home": home.slug,
        "start": start.isoformat(timespec="seconds"),
        "end": end.isoformat(timespec="seconds"),
        "resolution": resolution,
        "series": series,
        "truncated": truncated,
        "message": f"{len(series)} series, {total} points",
    }


def _positive(value: Any, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ToolError(f"'{what}' must be a positive number")


def _find_history_accessory(
    sim: HomecastSim, grant: Grant, needle: str, home_ref: str | None
) -> tuple[Home, Accessory] | None:
    """handleGetHistory's lookup: the first accessory, across the homes `home` matches (all
    without it), whose id is the needle or whose key or name contains it."""
    ref = home_ref.lower() if home_ref else None
    for home in sim.visible_homes(grant):
        if ref and ref not in home.name.lower() and ref not in home.slug:
            continue
        for acc in home.devices():
            if needle == acc.uuid.lower() or needle in acc.slug or needle in acc.name.lower():
                return home, acc
    return None


def _characteristic_history(
    char: str, window: list[Record], max_points: int | float, opening: Record | None
) -> dict[str, Any]:
    """One characteristic's series, thinned to about max_points, as handleGetHistory shapes
    it: numeric values with a min/avg/max/latest summary, or on/off and mode transitions with
    the value held when the window opened."""
    step = max(1, math.ceil(len(window) / int(max_points)))
    sample = window[::step]
    if char not in NUMERIC_CHARS:
        return {
            "characteristic": char,
            "kind": "string",
            "unit": None,
            "resolution": "raw",
            "transitions": [[_iso(r.at), r.value] for r in sample],
            "openingValue": opening.value if opening is not None else None,
        }
    vals = [float(r.value) for r in window]
    summary = (
        {
            "min": min(vals),
            "max": max(vals),
            "avg": round(sum(vals) / len(vals), 2),
            "latest": window[-1].value,
        }
        if window
        else None
    )
    return {
        "characteristic": char,
        "kind": "numeric",
        "unit": None,
        "resolution": "raw",
        "values": [[_iso(r.at), r.value] for r in sample],
        "summary": summary,
    }


async def get_history(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """One accessory's recorded changes: numeric values with a summary, or state transitions.

    As homecast-web's handleGetHistory (src/server/local-rest.ts): `accessory` is required and
    reads the first accessory, across the homes `home` matches (all without it), whose id is
    it or whose key or name contains it; every recorded characteristic (at most 24) or the one
    `characteristic` names, as a `series` list."""
    needle = (_text(args, "accessory", required=True) or "").lower()
    home_ref = _text(args, "home")
    hours = args.get("hours", 24)
    max_points = args.get("max_points", 200)
    _positive(hours, "hours")
    _positive(max_points, "max_points")
    found = _find_history_accessory(sim, grant, needle, home_ref)
    if found is None:
        raise ToolError(f"Accessory '{args['accessory']}' not found")
    home, acc = found
    if not home.analytics:
        return _analytics_off(home)
    end = sim.clock.now().timestamp()
    start = end - float(hours) * 3600
    wanted = _text(args, "characteristic")
    mine = [r for r in sim.ensure_history(home) if r.accessory == acc.uuid]
    chars = sorted({r.characteristic for r in mine})
    if wanted:
        chars = [c for c in chars if _char_matches(c, [wanted])]
        if not chars:
            return {"error": f'Characteristic "{wanted}" is not recordable on {acc.name}'}
    series: list[dict[str, Any]] = []
    for char in chars[:24]:
        records = [r for r in mine if r.characteristic == char]
        window = [r for r in records if start <= r.at < end]
        before = [r for r in records if r.at < start]
        series.append(
            _characteristic_history(char, window, max_points, before[-1] if before else None)
        )
    recorded = [s for s in series if s.get("values") or s.get("transitions")]
    message = (
        f"{len(recorded)} of {len(series)} characteristics have recorded history in the last "
        f"{hours:g}h"
        if recorded
        else "No recorded history in this range. History is opt-in: the home owner enables "
        "it in Settings → Homes → the home."
    )
    return {
        "home": home.slug,
        "accessory": {"key": acc.slug, "name": acc.name, "id": acc.uuid},
        "from": _iso(start),
        "to": _iso(end),
        "series": series,
        "_meta": {"message": message},
    }


# ---------------------------------------------------------------------------------------------
# scenes


def _scene_actions(home: Home, actions: Any) -> list[dict[str, Any]]:
    if not isinstance(actions, list) or not actions:
        raise ToolError("'actions' must be a non-empty array")
    out: list[dict[str, Any]] = []
    for action in actions:
        if not isinstance(action, dict):
            raise ToolError("each action must be an object")
        # HomeKit cannot see virtual accessories, so their keys do not resolve here.
        acc = _device(home, action.get("accessory"), allow_virtual=False)
        props = {k: v for k, v in action.items() if k not in ("accessory", "type")}
        _props(acc, props)
        out.append({"accessory": acc.slug, **props})
    return out


def _editable_scene(home: Home, name: str, verb: str) -> Scene:
    scene = home.find_scene(name)
    if scene is None:
        available = ", ".join(s.name for s in home.scenes)
        raise ToolError(f"Scene '{name}' not found in {home.slug}. Available: {available}")
    if scene.builtin:
        raise ToolError(f"'{scene.name}' is a built-in scene and cannot be {verb}")
    if scene.owner:
        raise ToolError(
            f"Scene '{scene.name}' belongs to the automation '{scene.owner}'; "
            f"change the automation instead"
        )
    return scene


def _needs_scene_support(home: Home) -> None:
    if not home.scene_management:
        raise ToolError("The relay app for this home is too old for scene management; update it")


async def run_scene(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Execute a scene: its actions reach the devices after the relay delay.

    homecast-web src/server/local-mcp.ts callTool case 'run_scene' (scenes.list, scene.execute).
    """
    home = _keyed_home(sim, grant, args)
    name = _text(args, "name", required=True) or ""
    scene = home.find_scene(name)
    if scene is None:
        available = ", ".join(s.name for s in home.scenes)
        raise ToolError(f"Scene '{name}' not found. Available: {available}")
    for action in scene.actions:
        acc = home.find(str(action.get("accessory", "")))
        if acc is None or not acc.reachable:
            continue  # HomeKit runs the rest of the scene
        props = {k: v for k, v in action.items() if k != "accessory"}
        sim.write(
            home, acc, {normalize_key(k, v)[0]: normalize_key(k, v)[1] for k, v in props.items()}
        )
    return {"success": True, "home": home.slug, "scene": scene.name, "message": f"Ran {scene.name}"}


async def create_scene(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """A new scene from set_state-style actions.

    homecast-web src/server/local-mcp.ts callTool case 'create_scene' (scene.create).
    """
    home = _keyed_home(sim, grant, args)
    _needs_scene_support(home)
    name = (_text(args, "name", required=True) or "").strip()
    if not _name_ok(name):
        raise ToolError(f"Scene names must end with a letter or number; try '{_suggest(name)}'")
    if home.find_scene(name):
        raise ToolError(f"A scene named '{name}' already exists in {home.slug}")
    actions = _scene_actions(home, args.get("actions"))
    scene = Scene(uuid_with_tail(sim.rng), name, actions)
    home.scenes.append(scene)
    # The seed gives scenes no id (they are addressed by name), so neither does this.
    return {"success": True, "scene": {"name": name, "actions": actions}}


async def update_scene(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Rename a scene and/or replace its actions.

    homecast-web src/server/local-mcp.ts callTool case 'update_scene' (scene.update).
    """
    home = _keyed_home(sim, grant, args)
    _needs_scene_support(home)
    scene = _editable_scene(home, _text(args, "name", required=True) or "", "modified")
    new_name = _text(args, "new_name")
    if new_name is None and "actions" not in args:
        raise ToolError("nothing to change: give new_name and/or actions")
    actions = _scene_actions(home, args["actions"]) if "actions" in args else scene.actions
    if new_name is not None:
        new_name = new_name.strip()
        if not _name_ok(new_name):
            raise ToolError(
                f"Scene names must end with a letter or number; try '{_suggest(new_name)}'"
            )
        other = home.find_scene(new_name)
        if other is not None and other is not scene:
            raise ToolError(f"A scene named '{new_name}' already exists in {home.slug}")
        scene.name = new_name
    scene.actions = actions
    return {"success": True, "scene": {"name": scene.name, "actions": actions}}


async def delete_scene(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Remove a scene for good.

    homecast-web src/server/local-mcp.ts callTool case 'delete_scene' (scene.delete).
    """
    home = _keyed_home(sim, grant, args)
    _needs_scene_support(home)
    scene = _editable_scene(home, _text(args, "name", required=True) or "", "deleted")
    home.scenes.remove(scene)
    return {"success": True, "deleted": scene.name}


# ---------------------------------------------------------------------------------------------
# HomeKit automations

_HK_EVENTS = ("characteristic", "significantTime", "calendar", "duration")


def _hk_conditions(home: Home, conditions: Any) -> None:
    if conditions is None:
        return
    if not isinstance(conditions, list):
        raise ToolError("'conditions' must be an array")
    for cond in conditions:
        if not isinstance(cond, dict):
            raise ToolError("each condition must be an object")
        if {"above", "below"} & cond.keys() or cond.get("operator"):
            raise ToolError(
                "HomeKit conditions test equality only; use create_hc_automation for thresholds "
                "or OR/NOT logic"
            )
        if cond.get("type") != "characteristic" or "value" not in cond:
            raise ToolError(
                "HomeKit conditions are {type: characteristic, accessory, characteristic, value}"
            )
        acc = _device(home, cond.get("accessory"), allow_virtual=False)
        if cond.get("characteristic") not in acc.values:
            raise ToolError(f"{acc.slug} has no characteristic '{cond.get('characteristic')}'")


def _hk_trigger(home: Home, trigger: Any) -> None:
    if not isinstance(trigger, dict):
        raise ToolError("'trigger' must be an object")
    kind = trigger.get("type")
    if kind == "timer":
        if "fireDate" in trigger:
            _parse_time(trigger["fireDate"], "fireDate")
            return
        hour, minute = trigger.get("hour"), trigger.get("minute")
        if not (
            isinstance(hour, int)
            and 0 <= hour <= 23
            and isinstance(minute, int)
            and 0 <= minute <= 59
        ):
            raise ToolError("timer triggers need hour (0-23) and minute (0-59), or fireDate")
        return
    if kind != "event":
        raise ToolError("trigger type must be 'timer' or 'event'")
    events = trigger.get("events")
    if not isinstance(events, list) or not events:
        raise ToolError("event triggers need a non-empty 'events' array")
    for event in events:
        etype = event.get("type") if isinstance(event, dict) else None
        if etype in ("presence", "location"):
            raise ToolError(
                "Presence and location triggers can only be created in the Apple Home app"
            )
        if etype not in _HK_EVENTS:
            raise ToolError(f"unsupported event type {etype!r}; use one of {', '.join(_HK_EVENTS)}")
        if etype == "characteristic":
            acc = _device(home, event.get("accessory"), allow_virtual=False)
            if event.get("characteristic") not in acc.values or "value" not in event:
                raise ToolError(
                    f"characteristic events need a characteristic of {acc.slug} and a value"
                )
        if etype == "significantTime" and event.get("significantEvent") not in (
            "sunrise",
            "sunset",
        ):
            raise ToolError("significantEvent must be sunrise or sunset")
    _hk_conditions(home, trigger.get("conditions"))


def _hk_home(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Home:
    home = _keyed_home(sim, grant, args)
    if home.view_only:
        raise ToolError(
            "INSUFFICIENT_HOMEKIT_PRIVILEGES: the relay's Apple ID has view-only access to "
            f"{home.name}; give it edit access in Apple Home"
        )
    return home


def _hk_find(home: Home, ident: str) -> dict[str, Any]:
    for auto in home.automations:
        if auto["id"] == ident:
            return auto
    raise ToolError(f"Automation '{ident}' not found in {home.slug}")


async def get_automations(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """HomeKit automations by home key.

    homecast-web src/server/local-automations.ts handleGetAutomations.
    """
    hf = (_text(args, "filter_by_home") or "").lower()
    out: dict[str, Any] = {}
    view_only: list[str] = []
    for home in sim.visible_homes(grant):
        if hf and hf not in home.slug and hf not in home.name.lower():
            continue
        if not home.relay_online:
            continue  # HomeKit automations are read through the relay
        out[home.slug] = [dict(a) for a in home.automations]
        if home.view_only:
            view_only.append(home.slug)
    out["_meta"] = {"view_only_homes": view_only}
    return out


async def create_automation(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """A HomeKit automation (equality only, device properties only).

    homecast-web src/server/local-automations.ts handleCreateAutomation.
    """
    home = _hk_home(sim, grant, args)
    name = (_text(args, "name", required=True) or "").strip()
    if not _name_ok(name):
        raise ToolError(f"HomeKit rejects names ending in punctuation; try '{_suggest(name)}'")
    _hk_trigger(home, args.get("trigger"))
    actions = _scene_actions(home, args.get("actions"))
    auto = {
        "id": uuid_with_tail(sim.rng),
        "name": name,
        "enabled": True,
        "editable": True,
        "trigger": args["trigger"],
        "actions": actions,
        "last_fired": None,
    }
    home.automations.append(auto)
    return {"success": True, "automation": dict(auto)}


async def update_automation(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Change given fields; a new trigger recreates the automation under a new id.

    homecast-web src/server/local-automations.ts handleUpdateAutomation.
    """
    home = _hk_home(sim, grant, args)
    auto = _hk_find(home, _text(args, "id", required=True) or "")
    if not auto["editable"] and ("trigger" in args or "actions" in args):
        raise ToolError(
            f"'{auto['name']}' was made in the Home app with a trigger Homecast cannot edit; "
            "only name and enabled can change"
        )
    name = _text(args, "name")
    if name is not None and not _name_ok(name.strip()):
        raise ToolError(f"HomeKit rejects names ending in punctuation; try '{_suggest(name)}'")
    if "enabled" in args and not isinstance(args["enabled"], bool):
        raise ToolError("'enabled' must be a boolean")
    if "trigger" in args:
        _hk_trigger(home, args["trigger"])
    actions = _scene_actions(home, args["actions"]) if "actions" in args else None
    old_id = auto["id"]
    if name is not None:
        for scene in home.scenes:
            if scene.owner == auto["name"]:
                scene.owner = name.strip()
        auto["name"] = name.strip()
    if "enabled" in args:
        auto["enabled"] = args["enabled"]
    if actions is not None:
        auto["actions"] = actions
    if "trigger" in args:
        auto["trigger"] = args["trigger"]
        auto["id"] = uuid_with_tail(sim.rng)  # HomeKit deletes and recreates it
    return {
        "success": True,
        "id": auto["id"],
        "id_changed": auto["id"] != old_id,
        "automation": dict(auto),
    }


async def delete_automation(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Remove a HomeKit automation (and the scene that belongs to it).

    homecast-web src/server/local-automations.ts handleDeleteAutomation.
    """
    home = _hk_home(sim, grant, args)
    auto = _hk_find(home, _text(args, "id", required=True) or "")
    home.automations.remove(auto)
    home.scenes = [s for s in home.scenes if s.owner != auto["name"]]
    return {"success": True, "deleted": auto["id"]}


# ---------------------------------------------------------------------------------------------
# Homecast automations

_HC_MODES = ("single", "restart", "queued", "parallel")
_VIRTUAL_OPS = (
    "set",
    "turn_on",
    "turn_off",
    "toggle",
    "increment",
    "decrement",
    "reset",
    "start",
    "pause",
    "resume",
    "cancel",
    "finish",
)
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _virtual(home: Home, ref: Any) -> Accessory:
    if isinstance(ref, str):
        for acc in home.virtuals():
            if ref.lower() in (acc.slug, acc.uuid.lower()):
                return acc
    raise ToolError(f"Virtual accessory '{ref}' not found in {home.slug}")


def _subject(home: Home, item: dict[str, Any]) -> Accessory:
    """The accessory, virtual accessory or service group a trigger/condition watches."""
    if "virtual" in item:
        return _virtual(home, item["virtual"])
    if "service_group" in item:
        ref = str(item["service_group"]).lower()
        for acc in home.all_accessories():
            if acc.members and ref in (acc.uuid.lower(), acc.slug):
                return acc
        raise ToolError(f"Service group '{item['service_group']}' not found in {home.slug}")
    return _device(home, item.get("accessory"), allow_virtual=True)


def _threshold(item: dict[str, Any], what: str) -> None:
    if "above" not in item and "below" not in item:
        raise ToolError(f"numeric {what}s need 'above' and/or 'below'")
    for key in ("above", "below"):
        if key in item and (isinstance(item[key], bool) or not isinstance(item[key], int | float)):
            raise ToolError(f"'{key}' must be a number")


def _hc_triggers(home: Home, triggers: Any) -> None:
    if not isinstance(triggers, list) or not triggers:
        raise ToolError("'triggers' must be a non-empty array")
    for trig in triggers:
        kind = trig.get("type") if isinstance(trig, dict) else None
        if kind in ("device", "numeric"):
            _subject(home, trig)
            if not isinstance(trig.get("characteristic"), str):
                raise ToolError(f"{kind} triggers need a characteristic")
            if kind == "numeric":
                _threshold(trig, "trigger")
            if "for" in trig:
                _duration(trig["for"], "'for'")
        elif kind == "time":
            if not isinstance(trig.get("at"), str) or not _HHMM.match(trig["at"]):
                raise ToolError("time triggers need 'at' as HH:MM")
            days = trig.get("weekdays", [])
            if not isinstance(days, list) or any(d not in range(7) for d in days):
                raise ToolError("weekdays are 0 (Sunday) to 6")
        elif kind == "sun":
            if trig.get("event") not in ("sunrise", "sunset"):
                raise ToolError("sun triggers need event sunrise or sunset")
        elif kind == "webhook":
            if not isinstance(trig.get("webhook_id"), str):
                raise ToolError("webhook triggers need a webhook_id")
        else:
            raise ToolError(f"unknown trigger type {kind!r}")


def _hc_conditions(home: Home, conditions: Any) -> None:
    if not isinstance(conditions, list):
        raise ToolError("'conditions' must be an array")
    for cond in conditions:
        if not isinstance(cond, dict):
            raise ToolError("each condition must be an object")
        if "operator" in cond:
            if cond["operator"] not in ("and", "or", "not"):
                raise ToolError("operator must be and, or or not")
            _hc_conditions(home, cond.get("conditions"))
            continue
        _hc_condition(home, cond)


def _hc_condition(home: Home, cond: dict[str, Any]) -> None:
    """One leaf condition (not an and/or/not group), checked by its type."""
    kind = cond.get("type")
    if kind == "device":
        _subject(home, cond)
        if "value" not in cond:
            raise ToolError("device conditions need a value")
    elif kind == "numeric":
        _subject(home, cond)
        _threshold(cond, "condition")
    elif kind == "virtual":
        _virtual(home, cond.get("virtual"))
        if not {"equals", "above", "below"} & cond.keys():
            raise ToolError("virtual conditions need equals, above or below")
    elif kind == "time":
        for key in ("after", "before"):
            if key in cond and not _HHMM.match(str(cond[key])):
                raise ToolError(f"'{key}' must be HH:MM")
    elif kind == "sun":
        for key in ("after", "before"):
            if key in cond and cond[key] not in ("sunrise", "sunset"):
                raise ToolError(f"'{key}' must be sunrise or sunset")
    elif kind == "template":
        if not isinstance(cond.get("expression"), str):
            raise ToolError("template conditions need an expression")
    else:
        raise ToolError(f"unknown condition type {kind!r}")


def _hc_actions(home: Home, actions: Any) -> None:
    if not isinstance(actions, list) or not actions:
        raise ToolError("'actions' must be a non-empty array")
    for action in actions:
        kind = action.get("type") if isinstance(action, dict) else None
        if kind == "device":
            acc = _device(home, action.get("accessory"), allow_virtual=False)
            _props(acc, {k: v for k, v in action.items() if k not in ("type", "accessory")})
        elif kind == "virtual":
            _virtual(home, action.get("virtual"))
            if action.get("operation") not in _VIRTUAL_OPS:
                raise ToolError(f"operation must be one of {', '.join(_VIRTUAL_OPS)}")
            if action["operation"] == "set" and "value" not in action:
                raise ToolError("the set operation needs a value")
        elif kind == "scene":
            if home.find_scene(str(action.get("scene", ""))) is None:
                raise ToolError(f"Scene '{action.get('scene')}' not found in {home.slug}")
        elif kind == "delay":
            _duration(action.get("seconds", action.get("duration")), "delay")
        elif kind == "notify":
            if not isinstance(action.get("message"), str):
                raise ToolError("notify actions need a message")
        else:
            raise ToolError(f"unknown action type {kind!r}")


def _hc_find(home: Home, ident: str) -> dict[str, Any]:
    for auto in home.hc_automations:
        if auto["id"] == ident:
            return auto
    raise ToolError(f"Homecast automation '{ident}' not found in {home.slug}")


def _hc_common(args: dict[str, Any]) -> None:
    if "mode" in args and args["mode"] not in _HC_MODES:
        raise ToolError(f"mode must be one of {', '.join(_HC_MODES)}")
    if "enabled" in args and not isinstance(args["enabled"], bool):
        raise ToolError("'enabled' must be a boolean")
    if "description" in args and not isinstance(args["description"], str):
        raise ToolError("'description' must be a string")


async def get_hc_automations(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Homecast automations by home key.

    homecast-web src/server/local-hc-automations.ts handleGetHcAutomations.
    """
    hf = (_text(args, "filter_by_home") or "").lower()
    return {
        home.slug: [dict(a) for a in home.hc_automations]
        for home in sim.visible_homes(grant)
        if not hf or hf in home.slug or hf in home.name.lower()
    }


async def create_hc_automation(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """A Homecast automation (runs on the relay Mac).

    homecast-web src/server/local-hc-automations.ts handleCreateHcAutomation.
    """
    home = _home(sim, grant, _text(args, "home", required=True) or "", write=True)
    name = (_text(args, "name", required=True) or "").strip()
    _hc_common(args)
    _hc_triggers(home, args.get("triggers"))
    _hc_actions(home, args.get("actions"))
    _hc_conditions(home, args.get("conditions", []))
    auto = {
        "id": uuid_with_tail(sim.rng).lower(),
        "name": name,
        "description": args.get("description", ""),
        "enabled": args.get("enabled", True),
        "mode": args.get("mode", "single"),
        "triggers": args["triggers"],
        "conditions": args.get("conditions", []),
        "actions": args["actions"],
        "last_triggered": None,
        "trigger_count": 0,
        "editable_via_mcp": True,
    }
    home.hc_automations.append(auto)
    return {"success": True, "automation": dict(auto)}


async def update_hc_automation(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Merge the given parts into the stored automation; the id stays.

    homecast-web src/server/local-hc-automations.ts handleUpdateHcAutomation.
    """
    home = _home(sim, grant, _text(args, "home", required=True) or "", write=True)
    auto = _hc_find(home, _text(args, "id", required=True) or "")
    _hc_common(args)
    if "name" in args:
        _text(args, "name", required=True)
    if "triggers" in args:
        _hc_triggers(home, args["triggers"])
    if "actions" in args:
        _hc_actions(home, args["actions"])
    if "conditions" in args:
        _hc_conditions(home, args["conditions"])
    for key in ("name", "description", "enabled", "mode", "triggers", "conditions", "actions"):
        if key in args:
            auto[key] = args[key]
    if {"triggers", "conditions", "actions"} & args.keys():
        # Resending the lists replaced the parts this grammar could not express.
        auto["editable_via_mcp"] = not _has_unsupported(auto)
    return {"success": True, "automation": dict(auto)}


def _has_unsupported(node: Any) -> bool:
    if isinstance(node, dict):
        return "_unsupported" in node or any(_has_unsupported(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_unsupported(v) for v in node)
    return False


async def delete_hc_automation(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Remove a Homecast automation.

    homecast-web src/server/local-hc-automations.ts handleDeleteHcAutomation.
    """
    home = _home(sim, grant, _text(args, "home", required=True) or "", write=True)
    auto = _hc_find(home, _text(args, "id", required=True) or "")
    home.hc_automations.remove(auto)
    return {"success": True, "deleted": auto["id"]}


# ---------------------------------------------------------------------------------------------
# virtual accessories


def _virtual_view(acc: Accessory) -> dict[str, Any]:
    assert acc.virtual is not None
    key = VIRTUAL_KEYS[acc.virtual.kind]
    return {
        "id": acc.uuid,
        "slug": acc.slug,
        "name": acc.name,
        "type": acc.virtual.kind,
        key: acc.values.get(key),
        **acc.virtual.describe(),
    }


def _number_opt(args: dict[str, Any], key: str) -> float | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ToolError(f"'{key}' must be a number")
    return value


def _options(value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(o, str) and o for o in value):
        raise ToolError("'options' must be a non-empty array of names")
    if len(set(value)) != len(value):
        raise ToolError("'options' must not repeat a name")
    return list(value)


def _check_initial(acc: Accessory, initial: Any) -> Any:
    # The start value must be something set_state could write, even when automations may not.
    spec = acc.virtual
    assert spec is not None  # only virtual accessories have a start value
    try:
        controllable = spec.controllable
        spec.controllable = True
        try:
            return check_value(acc, VIRTUAL_KEYS[spec.kind], initial)
        finally:
            spec.controllable = controllable
    except WriteError as err:
        raise ToolError(f"invalid initial value: {err}") from err


async def create_virtual_accessory(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """A value the home remembers, shown in get_state beside real devices.

    homecast-web src/server/local-hc-automations.ts handleCreateVirtualAccessory.
    """
    home = _home(sim, grant, _text(args, "home", required=True) or "", write=True)
    name = (_text(args, "name", required=True) or "").strip()
    kind = args.get("type")
    if kind not in VIRTUAL_TYPES:
        raise ToolError(f"type must be one of {', '.join(VIRTUAL_TYPES)}")
    spec = Virtual(
        kind=kind,
        minimum=_number_opt(args, "min"),
        maximum=_number_opt(args, "max"),
        step=_number_opt(args, "step"),
        duration=_number_opt(args, "duration"),
        unit=_text(args, "unit"),
        controllable=bool(args.get("controllable", True)),
    )
    if kind == "mode":
        spec.options = _options(args.get("options"))
    elif "options" in args:
        raise ToolError("only mode accessories take options")
    if kind == "number" and (
        spec.minimum is None or spec.maximum is None or spec.minimum >= spec.maximum
    ):
        raise ToolError("number accessories need min < max")
    if any(a.name.lower() == name.lower() for a in home.virtuals()):
        raise ToolError(f"A virtual accessory named '{name}' already exists in {home.slug}")
    acc = add_virtual(sim.rng, home, name, spec)
    if args.get("initial") is not None:
        try:
            acc.values[VIRTUAL_KEYS[kind]] = spec.initial = _check_initial(acc, args["initial"])
        except ToolError:
            virtual_room = home.room_of(acc)
            virtual_room.accessories.remove(acc)
            raise
    sim.notify_tools_changed()
    return {"success": True, "accessory": _virtual_view(acc)}


async def update_virtual_accessory(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Change a virtual accessory's definition (never its type).

    homecast-web src/server/local-hc-automations.ts handleUpdateVirtualAccessory.
    """
    home = _home(sim, grant, _text(args, "home", required=True) or "", write=True)
    acc = _virtual(home, _text(args, "id", required=True))
    spec = acc.virtual
    assert spec is not None
    if "type" in args and args["type"] != spec.kind:
        raise ToolError(
            f"type cannot change ({spec.kind} -> {args['type']}); delete and recreate instead"
        )
    key = VIRTUAL_KEYS[spec.kind]
    if "options" in args:
        if spec.kind != "mode":
            raise ToolError("only mode accessories take options")
        spec.options = _options(args["options"])
        acc.options[key] = list(spec.options)
        # Never leave a value that nothing can select.
        if spec.initial not in spec.options:
            spec.initial = spec.options[0]
        if acc.values.get(key) not in spec.options:
            acc.values[key] = spec.options[0]
    for arg, attr in (
        ("min", "minimum"),
        ("max", "maximum"),
        ("step", "step"),
        ("duration", "duration"),
    ):
        if arg in args:
            setattr(spec, attr, _number_opt(args, arg))
    if "unit" in args:
        spec.unit = _text(args, "unit")
    if "controllable" in args:
        spec.controllable = bool(args["controllable"])
    if args.get("initial") is not None:
        spec.initial = _check_initial(acc, args["initial"])
    if "name" in args:
        acc.name = (_text(args, "name", required=True) or "").strip()
    return {"success": True, "accessory": _virtual_view(acc)}


async def delete_virtual_accessory(sim: HomecastSim, grant: Grant, args: dict[str, Any]) -> Any:
    """Remove a virtual accessory (automations that use it stop resolving it).

    homecast-web src/server/local-hc-automations.ts handleDeleteVirtualAccessory.
    """
    home = _home(sim, grant, _text(args, "home", required=True) or "", write=True)
    acc = _virtual(home, _text(args, "id", required=True))
    home.room_of(acc).accessories.remove(acc)
    return {"success": True, "deleted": acc.slug}


# ---------------------------------------------------------------------------------------------
# catalog

_UPDATE_ITEM = _obj(
    {
        "home": _STR,
        "room": _STR,
        "accessory": _STR,
        "on": {"type": "boolean"},
        "brightness": {"type": "integer", "minimum": 0, "maximum": 100},
        "hue": {"type": "integer", "minimum": 0, "maximum": 360},
        "saturation": {"type": "integer", "minimum": 0, "maximum": 100},
        "color_temp": {"type": "integer", "minimum": 140, "maximum": 500},
        "active": {"type": "boolean"},
        "heat_target": {"type": "number"},
        "cool_target": {"type": "number"},
        "hvac_mode": {"type": "string", "enum": ["off", *HVAC_MODES]},
        "lock_target": {"type": ["boolean", "integer"]},
        "alarm_target": {"type": ["string", "integer"]},
        "speed": {"type": "integer", "minimum": 0, "maximum": 100},
        "volume": {"type": "integer", "minimum": 0, "maximum": 100},
        "mute": {"type": "boolean"},
        "target": {"type": "integer", "minimum": 0, "maximum": 100},
        "virtual_mode": _STR,
        "virtual_count": {"type": "integer"},
        "virtual_number": {"type": "number"},
        "virtual_text": _STR,
        "virtual_datetime": _STR,
        "virtual_timer": _STR,
    },
    ["home", "room", "accessory"],
)
_HC_PARTS = {
    "home": _HOME,
    "name": _STR,
    "triggers": _ARRAY_OBJ,
    "actions": _ARRAY_OBJ,
    "conditions": _ARRAY_OBJ,
    "enabled": {"type": "boolean"},
    "mode": {"type": "string", "enum": list(_HC_MODES)},
    "description": _STR,
}
_VIRTUAL_PARTS = {
    "home": _HOME,
    "name": _STR,
    "options": {"type": "array", "items": _STR},
    "initial": {},
    "min": {"type": "number"},
    "max": {"type": "number"},
    "step": {"type": "number"},
    "unit": _STR,
    "duration": {"type": "number"},
    "controllable": {"type": "boolean"},
}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "get_state",
        "Current state of the accessories in the account's homes, nested by home, room and "
        "accessory key, with each accessory's settable keys.",
        _obj(
            {
                "filter_by_home": _STR,
                "filter_by_room": _STR,
                "filter_by_type": {"type": "string", "description": "e.g. light, climate, lock"},
                "filter_by_name": _STR,
            }
        ),
        get_state,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "set_state",
        "Change devices and virtual accessories; each update names home, room and accessory.",
        _obj({"updates": {"type": "array", "items": _UPDATE_ITEM, "minItems": 1}}, ["updates"]),
        set_state,
    ),
    Tool(
        "query_history",
        "Recorded history of many accessories at once (raw changes or hourly/daily summaries), "
        "paged with continue_from. Needs Analytics enabled for the home.",
        _obj(
            {
                "home": _STR,
                "accessories": {"type": "array", "items": _STR},
                "characteristics": {"type": "array", "items": _STR},
                "start": _STR,
                "end": _STR,
                "resolution": {"type": "string", "enum": ["auto", "raw", "hourly", "daily"]},
                "max_points_per_series": {"type": "number", "maximum": 2000},
            }
        ),
        query_history,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "get_history",
        "How one accessory's characteristics changed over the last hours.",
        _obj(
            {
                "accessory": _STR,
                "home": _STR,
                "characteristic": _STR,
                "hours": {"type": "number"},
                "max_points": {"type": "number"},
            },
            ["accessory"],
        ),
        get_history,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "run_scene",
        "Run a HomeKit scene of a home by its name.",
        _obj({"home": _HOME, "name": _STR}, ["home", "name"]),
        run_scene,
    ),
    Tool(
        "create_scene",
        "Save a new scene made of set_state-style actions ({accessory: key, ...properties}).",
        _obj({"home": _HOME, "name": _STR, "actions": _ARRAY_OBJ}, ["home", "name", "actions"]),
        create_scene,
    ),
    Tool(
        "update_scene",
        "Rename a scene and/or replace all of its actions.",
        _obj(
            {"home": _HOME, "name": _STR, "new_name": _STR, "actions": _ARRAY_OBJ},
            ["home", "name"],
        ),
        update_scene,
    ),
    Tool(
        "delete_scene",
        "Delete a scene for good.",
        _obj({"home": _HOME, "name": _STR}, ["home", "name"]),
        delete_scene,
        destructive=True,
    ),
    Tool(
        "get_automations",
        "HomeKit automations by home, in the shape create_automation accepts.",
        _obj({"filter_by_home": _STR}),
        get_automations,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "create_automation",
        "Create a HomeKit automation (runs on the home hub; equality conditions only).",
        _obj(
            {"home": _HOME, "name": _STR, "trigger": {"type": "object"}, "actions": _ARRAY_OBJ},
            ["home", "name", "trigger", "actions"],
        ),
        create_automation,
    ),
    Tool(
        "update_automation",
        "Change a HomeKit automation; a new trigger gives it a new id.",
        _obj(
            {
                "home": _HOME,
                "id": _STR,
                "name": _STR,
                "trigger": {"type": "object"},
                "actions": _ARRAY_OBJ,
                "enabled": {"type": "boolean"},
            },
            ["home", "id"],
        ),
        update_automation,
    ),
    Tool(
        "delete_automation",
        "Delete a HomeKit automation for good.",
        _obj({"home": _HOME, "id": _STR}, ["home", "id"]),
        delete_automation,
        destructive=True,
    ),
    Tool(
        "get_hc_automations",
        "Homecast automations by home, in the shape create_hc_automation accepts.",
        _obj({"filter_by_home": _STR}),
        get_hc_automations,
        read_only=True,
        idempotent=True,
    ),
    Tool(
        "create_hc_automation",
        "Create a Homecast automation: thresholds, AND/OR/NOT, delays, notifications, "
        "virtual accessories.",
        _obj(_HC_PARTS, ["home", "name", "triggers", "actions"]),
        create_hc_automation,
    ),
    Tool(
        "update_hc_automation",
        "Change parts of a Homecast automation; omitted parts stay as they are.",
        _obj({**_HC_PARTS, "id": _STR}, ["home", "id"]),
        update_hc_automation,
    ),
    Tool(
        "delete_hc_automation",
        "Delete a Homecast automation for good.",
        _obj({"home": _HOME, "id": _STR}, ["home", "id"]),
        delete_hc_automation,
        destructive=True,
    ),
    Tool(
        "create_virtual_accessory",
        "Create a virtual accessory (switch, mode, number, counter, timer, text or date).",
        _obj(
            {**_VIRTUAL_PARTS, "type": {"type": "string", "enum": list(VIRTUAL_TYPES)}},
            ["home", "name", "type"],
        ),
        create_virtual_accessory,
    ),
    Tool(
        "update_virtual_accessory",
        "Change a virtual accessory's definition (not its value, not its type).",
        _obj({**_VIRTUAL_PARTS, "id": _STR}, ["home", "id"]),
        update_virtual_accessory,
    ),
    Tool(
        "delete_virtual_accessory",
        "Delete a virtual accessory by key or id.",
        _obj({"home": _HOME, "id": _STR}, ["home", "id"]),
        delete_virtual_accessory,
        destructive=True,
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}


def describe(sim: HomecastSim, grant: Grant, tool: Tool) -> str:
    """The tool description, personalised with the homes and rooms this credential sees.

    homecast-web src/server/local-mcp.ts listToolsPersonalized with getHomeContextBlock.
    """
    homes = sim.visible_homes(grant)
    if tool.name == "get_state":
        lines = [f"{h.slug} (rooms: {', '.join(r.name for r in h.rooms) or 'none'})" for h in homes]
        return tool.summary + " Homes: " + "; ".join(lines) + "."
    if tool.name == "get_automations":
        lines = [
            f"{h.slug} (rooms: {', '.join(r.name for r in h.rooms) or 'none'}"
            + ("; HomeKit automations read-only)" if h.view_only else ")")
            for h in homes
        ]
        return tool.summary + " Homes: " + "; ".join(lines) + "."
    return tool.summary


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def camel_schema(schema: Any) -> Any:
    """A schema with its property names camelCased (graphql-mcp keeps GraphQL field names).

    The cloud's GraphQL-backed MCP surface; its source is not public, so no upstream function is
    named.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {_camel(k): camel_schema(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("required"), list):
        out["required"] = [_camel(k) for k in schema["required"]]
    if "items" in schema:
        out["items"] = camel_schema(schema["items"])
    return out


def from_camel(schema: Any, args: Any) -> Any:
    """Arguments sent to a camelCase surface, as the handlers read them (snake_case).

    A field the schema does not declare is dropped: the typed input never sees it.

    The cloud's GraphQL-backed MCP surface; its source is not public, so no upstream function is
    named.
    """
    if isinstance(args, list) and isinstance(schema, dict):
        return [from_camel(schema.get("items"), item) for item in args]
    if not isinstance(args, dict) or not isinstance(schema, dict):
        return args
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return args
    by_camel = {_camel(k): k for k in properties}
    return {
        by_camel[k]: from_camel(properties[by_camel[k]], v)
        for k, v in args.items()
        if k in by_camel
    }


def list_tools(sim: HomecastSim, grant: Grant) -> list[dict[str, Any]]:
    """tools/list entries for this credential.

    homecast-web src/server/local-mcp.ts handleJsonRpc 'tools/list' (listToolsPersonalized).
    """
    return [
        {
            "name": tool.name,
            "description": describe(sim, grant, tool),
            "inputSchema": camel_schema(tool.schema) if sim.camel_case else tool.schema,
            "annotations": {
                "readOnlyHint": tool.read_only,
                "destructiveHint": tool.destructive,
                "idempotentHint": tool.idempotent,
                "openWorldHint": False,
            },
        }
        for tool in TOOLS
        if tool.name not in sim.absent_tools
    ]


def scope_allows(grant: Grant, tool: Tool) -> bool:
    """mcp:read covers only the three listing tools; mcp:write and mcp:admin cover all.

    homecast-web src/server/local-oauth.ts normalizeScope (mcp:read, mcp:write, mcp:admin).
    """
    if {WRITE_SCOPE, ADMIN_SCOPE} & grant.scopes:
        return True
    return READ_SCOPE in grant.scopes and tool.read_scope_enough
