"""The simulated account: homes, tokens, pending writes and recorded history.

`HomecastSim` is what tests reach through `app[HOMECAST]`: plain methods to inspect state and
to make the outside world happen (someone presses a switch, pairs or removes an accessory).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
import json
from pathlib import Path
import random
import secrets
from typing import Any

from simulators.base import SimClock

from .model import (
    COMMUNITY,
    CURRENT,
    CURRENT_NAMES,
    HVAC_MODES,
    HVAC_STATES,
    LEGACY,
    LEGACY_NAMES,
    VIRTUAL_KEYS,
    Accessory,
    Home,
    Room,
    Scene,
    Virtual,
    apply_values,
    deslug,
    generate_homes,
    make_accessory,
    uuid_with_tail,
)

READ_SCOPE = "mcp:read"
WRITE_SCOPE = "mcp:write"
ADMIN_SCOPE = "mcp:admin"
VIEW = "view"
CONTROL = "control"
ACCESS_TOKEN_LIFETIME = 3600.0
# How long the relay waits for one accessory write before reporting it failed
# (HomeKitManager.swift writeTimeoutSeconds; the writes of a set_state run concurrently).
RELAY_WRITE_TIMEOUT = 10.0

# get_state key -> characteristic type the history store records it under.
HISTORY_CHARS = {
    "on": "power_state",
    "active": "active",
    "current_temp": "current_temperature",
    "relative_humidity": "relative_humidity",
    "motion": "motion_detected",
    "contact": "contact_state",
    "locked": "lock_current_state",
    "brightness": "brightness",
    "speed": "rotation_speed",
    "current_position": "current_position",
    "hvac_mode": "target_heater_cooler_state",
    "alarm_state": "security_system_current_state",
    "current_ambient_light_level": "current_ambient_light_level",
    "volume": "volume",
}
NUMERIC_CHARS = frozenset(
    {
        "current_temperature",
        "relative_humidity",
        "brightness",
        "rotation_speed",
        "current_position",
        "current_ambient_light_level",
        "volume",
    }
)
HISTORY_DAYS = 7


@dataclass
class Grant:
    """What one credential may do: scopes and per-home rights (home UUID -> view/control)."""

    scopes: frozenset[str]
    homes: dict[str, str] | None = None  # None: every home, with control
    expires_at: float | None = None  # SimClock timestamp; None: until revoked
    client_id: str | None = None

    def right(self, home: Home) -> str | None:
        """The right on `home`, or None when the home is invisible to this credential.

        The per-home view/control permission of a token (homecast-web
        src/components/settings/ApiAccessSection.tsx homePermissions).
        """
        if self.homes is None:
            return CONTROL
        return self.homes.get(home.uuid)

    def can_write(self, home: Home) -> bool:
        """Whether mutating tools may touch `home`.

        The scope (homecast-web src/server/local-oauth.ts normalizeScope: mcp:write is write) and
        the home's control permission.
        """
        return self.right(home) == CONTROL and bool({WRITE_SCOPE, ADMIN_SCOPE} & self.scopes)


@dataclass
class Record:
    """One recorded characteristic change."""

    at: float
    accessory: str  # UUID
    characteristic: str
    value: Any


@dataclass
class Session:
    """One MCP session."""

    id: str
    protocol_version: str
    created_at: float
    queues: list[asyncio.Queue[dict[str, Any] | None]] = field(default_factory=list)


class HomecastSim:
    """The whole simulated Homecast account."""

    def __init__(
        self,
        *,
        clock: SimClock,
        seed: int = 1,
        homes: int = 2,
        accessories_per_home: int = 24,
        vocabulary: str = CURRENT,
        state_file: str | Path | None = None,
        write_delay: float = 0.1,
        token: str = "hc_test_token",
        analytics: bool = True,
        community: bool = False,
    ) -> None:
        self.clock = clock
        self.rng = random.Random(seed * 7919 + 1)
        self.seed = seed
        self.write_delay = write_delay
        if state_file is not None:
            self.homes, self.vocabulary = load_state_file(Path(state_file), self.rng)
        else:
            if vocabulary not in (CURRENT, LEGACY, COMMUNITY):
                raise ValueError(f"unknown vocabulary {vocabulary!r}")
            self.homes = generate_homes(seed, homes, accessories_per_home, analytics=analytics)
            self.vocabulary = COMMUNITY if community else vocabulary
        # The Mac app's community server (see server._community_post).
        self.community = community
        self.tokens: dict[str, Grant] = {}
        if token:
            self.add_token(token)
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh_tokens: dict[str, dict[str, Any]] = {}
        # Consent the simulated user gives on the OAuth screen: home key -> view/control.
        self.consent: dict[str, str] | None = None
        self.sessions: dict[str, Session] = {}
        self.history: dict[str, list[Record]] = {}
        self._history_ready: set[str] = set()
        # Writes accepted but not applied yet, in order, each with its timer.
        self._pending: list[tuple[Callable[[], None], asyncio.TimerHandle]] = []
        self.listeners: list[Callable[[Home, Accessory, dict[str, Any]], None]] = []
        # Whether the changes being recorded are the relay's own write (not HomeKit's report).
        self.relay_writing = False
        # Failure switches, each the way upstream fails:
        # - relay_write_timeout: a write to an unreachable accessory is answered after it
        #   (tests shorten it; the real relay waits 10 s);
        # - absent_tools: an older server without these tools (not listed; a call is answered
        #   as an unknown tool: local-mcp.ts callTool's default case on the community server);
        # - failing_tools: tool -> message, answered as a tool error ("Error: <message>",
        #   local-mcp.ts handleJsonRpc's catch), as when the relay's HomeKit call throws.
        self.relay_write_timeout = RELAY_WRITE_TIMEOUT
        # The cloud's MCP surface as graphql-mcp builds it: argument names camelCased in the
        # schemas (homecast-web commit bbd2446 names `virtualMode`, `filterByHome`), and a
        # field a schema does not declare ignored without a word.
        self.camel_case = False
        self.absent_tools: set[str] = set()
        self.failing_tools: dict[str, str] = {}

    # ------------------------------------------------------------------ lookup

    def home(self, ref: str) -> Home:
        """A home by key, display name or UUID (KeyError when unknown).

        Simulator lookup for tests, no upstream function.
        """
        needle = ref.strip().lower()
        for home in self.homes:
            if needle in (home.slug, home.name.lower(), home.uuid.lower()):
                return home
        raise KeyError(ref)

    def accessory(self, home: str, ref: str) -> Accessory:
        """An accessory by key, name or UUID within a home (KeyError when unknown).

        Simulator lookup for tests, no upstream function.
        """
        found = self.home(home).find(ref)
        if found is None:
            raise KeyError(ref)
        return found

    def values(self, home: str, ref: str) -> dict[str, Any]:
        """A copy of an accessory's stored values (current vocabulary).

        Simulator lookup for tests, no upstream function.
        """
        return dict(self.accessory(home, ref).values)

    # ------------------------------------------------------------------ outside world

    def external_change(self, home: str, ref: str, **values: Any) -> None:
        """Someone changes a device by hand (or a sensor fires): immediate, recorded.

        Test hook, no upstream function: a change HomeKit reports to the relay.
        """
        h = self.home(home)
        acc = self.accessory(home, ref)
        changed = apply_values(acc, values)
        self.record(h, acc, changed)

    def press(self, home: str, ref: str, event: int = 0) -> None:
        """A doorbell ring or button press (0 single, 1 double, 2 long).

        Test hook, no upstream function: a stateless programmable switch event (never broadcast, see
        push.py).
        """
        self.external_change(home, ref, programmable_switch_event=event)

    def set_reachable(self, home: str, ref: str, reachable: bool) -> None:
        """Make an accessory stop (or resume) answering the hub.

        Test hook, no upstream function: HomeKit's reachability, broadcast as
        src/server/local-broadcast.ts reachability_update.
        """
        self.accessory(home, ref).reachable = reachable

    def set_relay_online(self, home: str, online: bool) -> None:
        """The relay Mac serving a home disconnects (or comes back).

        Test hook, no upstream function: src/server/local-rest.ts getState leaves out homes whose
        relay is not connected.
        """
        self.home(home).relay_online = online

    def pair_accessory(self, home: str, room: str, name: str, kind: str, variant: int = 0) -> str:
        """A new accessory paired in the Home app; returns its key.

        Test hook, no upstream function.
        """
        h = self.home(home)
        target = h.find_room(room)
        if target is None:
            target = Room(uuid=uuid_with_tail(self.rng), name=room)
            h.rooms.append(target)
        acc = make_accessory(self.rng, target, kind, name, variant)
        target.accessories.append(acc)
        self.notify_tools_changed()
        return acc.slug

    def remove_accessory(self, home: str, ref: str) -> None:
        """An accessory removed from the Home app (groups lose it as a member).

        Test hook, no upstream function.
        """
        h = self.home(home)
        acc = self.accessory(home, ref)
        for room in h.rooms:
            room.accessories = [a for a in room.accessories if a is not acc]
            for other in room.accessories:
                if other.members and acc in other.members:
                    other.members = [m for m in other.members if m is not acc]
            room.accessories = [a for a in room.accessories if a.members != []]

    def rename_accessory(self, home: str, ref: str, name: str) -> str:
        """Renamed in the Home app: the key changes with the name; returns the new key.

        Test hook, no upstream function: a change in the Home app; slug.ts uniqueKey makes the new
        key.
        """
        acc = self.accessory(home, ref)
        acc.name = name
        return acc.slug

    def add_scene(self, home: str, name: str) -> None:
        """A scene saved in the Home app (no actions).

        Test hook, no upstream function.
        """
        self.home(home).scenes.append(Scene(uuid_with_tail(self.rng), name, []))

    def rename_scene(self, home: str, name: str, new_name: str) -> None:
        """A scene renamed in the Home app: same HomeKit scene, only its name changes.

        Test hook, no upstream function.
        """
        scene = self.home(home).find_scene(name)
        if scene is None:
            raise KeyError(name)
        scene.name = new_name

    def remove_scene(self, home: str, name: str) -> None:
        """A scene deleted in the Home app.

        Test hook, no upstream function.
        """
        h = self.home(home)
        scene = h.find_scene(name)
        if scene is None:
            raise KeyError(name)
        h.scenes.remove(scene)

    def add_home(self, name: str) -> str:
        """A home shared with the account; returns its key.

        Test hook, no upstream function.
        """
        home = Home(uuid=uuid_with_tail(self.rng), name=name, analytics=False)
        home.rooms.append(Room(uuid=uuid_with_tail(self.rng), name="Living Room"))
        self.homes.append(home)
        self.notify_tools_changed()
        return home.slug

    # ------------------------------------------------------------------ writes with delay

    def schedule(self, apply: Callable[[], None]) -> None:
        """Run a relay write after the configured delay (immediately with delay 0).

        The relay's asynchronous write (src/server/homekit-write.ts executeHomeKitWrite); the delay
        is the simulator's.
        """
        if self.write_delay <= 0:
            apply()
            return

        def _run() -> None:
            self._pending = [p for p in self._pending if p[0] is not apply]
            apply()

        handle = asyncio.get_running_loop().call_later(self.write_delay, _run)
        self._pending.append((apply, handle))

    @property
    def pending_writes(self) -> int:
        """Writes accepted but not yet visible in get_state.

        Simulator-only: writes the relay has not applied yet.
        """
        return len(self._pending)

    def flush(self) -> None:
        """Apply every pending write now, in order (tests drive the delay with this).

        Simulator-only: tests drive the relay delay with this.
        """
        pending, self._pending = self._pending, []
        for apply, handle in pending:
            handle.cancel()
            apply()

    def write(self, home: Home, acc: Accessory, changes: dict[str, Any]) -> None:
        """Schedule validated changes of one accessory (a group writes to each member).

        src/server/homekit-write.ts executeHomeKitWrite; a service group writes to each member
        (broadcastRelayGroupWrite).
        """
        targets = acc.members if acc.members else [acc]

        def _apply() -> None:
            # The relay's own write: announced by broadcastRelayWrite, not by HomeKit.
            self.relay_writing = True
            try:
                for target in targets:
                    self.record(home, target, apply_values(target, changes))
            finally:
                self.relay_writing = False

        self.schedule(_apply)

    # ------------------------------------------------------------------ history

    def record(self, home: Home, acc: Accessory, changed: dict[str, tuple[Any, Any]]) -> None:
        """Store changes in the history (when Analytics is on) and tell listeners.

        src/server/local-history.ts recordHistoryEvent (only with Analytics on), then
        src/server/local-broadcast.ts.
        """
        now = self.clock.now().timestamp()
        if home.analytics:
            self.ensure_history(home)
            for key, (_, new) in changed.items():
                char = HISTORY_CHARS.get(key)
                if char is not None:
                    self.history[home.uuid].append(Record(now, acc.uuid, char, new))
        if changed:
            for listener in list(self.listeners):
                listener(home, acc, {k: new for k, (_, new) in changed.items()})

    def ensure_history(self, home: Home) -> list[Record]:
        """Synthesize a week of past readings on first use (deterministic per seed).

        Simulator-only: a past the src/server/local-history.ts store would hold.
        """
        if home.uuid in self._history_ready:
            return self.history[home.uuid]
        self._history_ready.add(home.uuid)
        rng = random.Random(f"{self.seed}-{home.uuid}")
        end = self.clock.now().timestamp()
        start = end - HISTORY_DAYS * 86400
        records: list[Record] = []
        for acc in home.devices():
            if "current_temp" in acc.values:
                base = float(acc.values["current_temp"])
                t = start
                while t < end:
                    records.append(
                        Record(
                            t, acc.uuid, "current_temperature", round(base + rng.uniform(-2, 2), 1)
                        )
                    )
                    t += 1800
            if acc.kind in ("light", "switch", "outlet"):
                t, on = start + rng.uniform(0, 3600), False
                while t < end:
                    on = not on
                    records.append(Record(t, acc.uuid, "power_state", on))
                    t += rng.uniform(1800, 6 * 3600)
            if acc.kind == "motion":
                t = start + rng.uniform(0, 3600)
                while t < end:
                    records.append(Record(t, acc.uuid, "motion_detected", True))
                    records.append(Record(t + 60, acc.uuid, "motion_detected", False))
                    t += rng.uniform(900, 4 * 3600)
        records.sort(key=lambda r: r.at)
        self.history.setdefault(home.uuid, [])
        self.history[home.uuid] = records + self.history[home.uuid]
        return self.history[home.uuid]

    # ------------------------------------------------------------------ credentials

    def add_token(
        self,
        token: str,
        *,
        scopes: tuple[str, ...] = (READ_SCOPE, WRITE_SCOPE),
        homes: dict[str, str] | None = None,
        lifetime: float | None = None,
        client_id: str | None = None,
    ) -> Grant:
        """Accept `token`; `homes` maps home keys/names to view/control (None: all, control).

        Test hook, no upstream function: an `hc_` access token the account creates.
        """
        rights = None
        if homes is not None:
            rights = {self.home(ref).uuid: right for ref, right in homes.items()}
        expires = None if lifetime is None else self.clock.now().timestamp() + lifetime
        grant = Grant(frozenset(scopes), rights, expires, client_id)
        self.tokens[token] = grant
        return grant

    def revoke_token(self, token: str) -> None:
        """Refuse an access token from now on.

        Test hook, no upstream function: the user revokes a token.
        """
        self.tokens.pop(token, None)

    def revoke_refresh_token(self, token: str) -> None:
        """Refuse a refresh token from now on.

        Test hook, no upstream function: the user revokes a token.
        """
        self.refresh_tokens.pop(token, None)

    def revoke_client(self, client_id: str) -> None:
        """The user removes an OAuth app: its access and refresh tokens stop working.

        Test hook, no upstream function: the user removes an OAuth app.
        """
        self.tokens = {k: g for k, g in self.tokens.items() if g.client_id != client_id}
        self.refresh_tokens = {
            k: v for k, v in self.refresh_tokens.items() if v["client_id"] != client_id
        }

    def grant_for(self, token: str) -> Grant | None:
        """The grant of a live token, or None (unknown, revoked or expired).

        Simulator-side bearer check before the MCP handler (homecast-web src/server/local-mcp.ts
        handleMCP).
        """
        grant = self.tokens.get(token)
        if grant is None:
            return None
        if grant.expires_at is not None and self.clock.now().timestamp() >= grant.expires_at:
            return None
        return grant

    def issue_oauth(
        self, client_id: str, scopes: frozenset[str], homes: dict[str, str] | None
    ) -> dict[str, Any]:
        """A fresh access + refresh token pair for an OAuth client.

        homecast-web src/server/local-oauth.ts handleToken (authorization_code and refresh_token
        grants).
        """
        access = "hca_" + secrets.token_urlsafe(24)
        refresh = "hcr_" + secrets.token_urlsafe(32)
        self.tokens[access] = Grant(
            scopes, homes, self.clock.now().timestamp() + ACCESS_TOKEN_LIFETIME, client_id
        )
        self.refresh_tokens[refresh] = {"client_id": client_id, "scopes": scopes, "homes": homes}
        return {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": int(ACCESS_TOKEN_LIFETIME),
            "refresh_token": refresh,
            "scope": " ".join(sorted(scopes)),
        }

    # ------------------------------------------------------------------ sessions

    def expire_sessions(self) -> int:
        """Forget every MCP session (the next request with an old id gets 404).

        Test hook, no upstream function: the server forgets its MCP sessions (a restart).
        """
        count = len(self.sessions)
        for session in self.sessions.values():
            for queue in session.queues:
                queue.put_nowait(None)
        self.sessions.clear()
        return count

    def notify_tools_changed(self) -> None:
        """Tell open GET streams that tools/list changed (descriptions embed homes and rooms).

        The cloud's notifications/tools/list_changed (its source is not public); descriptions embed
        homes and rooms as homecast-web src/server/local-mcp.ts listToolsPersonalized does.
        """
        message = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        for session in self.sessions.values():
            for queue in session.queues:
                queue.put_nowait(message)

    def visible_homes(self, grant: Grant) -> list[Home]:
        """Homes this credential can see.

        The homes the credential's per-home permissions cover (homecast-web
        src/components/settings/ApiAccessSection.tsx homePermissions).
        """
        return [h for h in self.homes if grant.right(h) is not None]

    def now_iso(self) -> str:
        """Current simulated time, ISO-8601.

        Simulator clock, no upstream function.
        """
        return self.clock.now().isoformat(timespec="seconds")

    def shift(self, seconds: float) -> datetime:
        """The simulated time `seconds` from now.

        Simulator clock, no upstream function.
        """
        return self.clock.now() + timedelta(seconds=seconds)


# ---------------------------------------------------------------------------------------------
# Loading a get_state-shaped file

# The value key of each kind of virtual accessory (what recognises one in a capture).
_VIRTUAL_BY_KEY = {key: kind for kind, key in VIRTUAL_KEYS.items() if kind != "switch"}
_NOT_VALUES = frozenset({"type", "name", "group", "accessories"})


def load_state_file(path: Path, rng: random.Random) -> tuple[list[Home], str]:
    """Homes from a saved get_state answer, served back exactly as the file has them.

    Keys, `name`s and value names stay the file's own (a real capture replays as captured);
    values are stored in the current vocabulary so writes behave as on a live server.

    Replays the answer of homecast-web src/server/local-rest.ts getState (handleGetState).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    uuids: dict[str, str] = data.get("_homes", {})
    homes: list[Home] = []
    for home_key, body in data.items():
        if home_key.startswith("_") or not isinstance(body, dict):
            continue
        tail = home_key.rsplit("_", 1)[-1]
        home_uuid = uuids.get(home_key) or uuid_with_tail(rng, tail)
        home = Home(uuid=home_uuid, name=deslug(home_key), key=home_key)
        for room_key, accessories in body.items():
            if room_key.startswith("_") or not isinstance(accessories, dict):
                continue
            room_tail = room_key.rsplit("_", 1)[-1]
            # `unknown_0000` is the no-room listing (an empty id); it stays "" for its virtuals.
            room_uuid = "" if room_key == "unknown_0000" else uuid_with_tail(rng, room_tail)
            room = Room(uuid=room_uuid, name=deslug(room_key), key=room_key)
            home.rooms.append(room)
            for acc_key, props in accessories.items():
                acc = _load_accessory(rng, home, room, acc_key, props)
                room.accessories.append(acc)
        # A group's members are also listed on their own: share one object so writes agree.
        standalone = {a.slug: a for a in home.all_accessories() if a.members is None}
        for acc in home.all_accessories():
            if acc.members:
                acc.members = [standalone.get(m.slug, m) for m in acc.members]
        for name in body.get("_scenes", []):
            home.scenes.append(Scene(uuid_with_tail(rng), name, []))
        homes.append(home)
    return homes, CURRENT


def _loaded_values(props: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A captured accessory's values under the simulator's keys, and the served name of each
    key that was captured under another (legacy hvac names, raw characteristic names)."""
    values: dict[str, Any] = {}
    wire: dict[str, str] = {}
    for k, v in props.items():
        if k.startswith("_") or k in _NOT_VALUES:
            continue
        if k == LEGACY_NAMES["hvac_mode"]:
            values["hvac_mode"] = {v2: k2 for k2, v2 in HVAC_MODES.items()}.get(v, "auto")
            wire["hvac_mode"] = k
        elif k == LEGACY_NAMES["hvac_state"]:
            values["hvac_state"] = {v2: k2 for k2, v2 in HVAC_STATES.items()}.get(v, "inactive")
            wire["hvac_state"] = k
        elif k in CURRENT_NAMES:
            values[CURRENT_NAMES[k]] = v
            wire[CURRENT_NAMES[k]] = k
        else:
            values[k] = v
    return values, wire


def _mark_virtual(acc: Accessory, values: dict[str, Any], settable: list[str]) -> None:
    """A captured accessory with a virtual accessory's value key is a virtual one."""
    virtual = next((kind for k, kind in _VIRTUAL_BY_KEY.items() if k in values), None)
    if virtual is not None:
        acc.virtual = Virtual(kind=virtual, controllable=VIRTUAL_KEYS[virtual] in settable)
        if not acc.virtual.controllable:
            acc.settable = [VIRTUAL_KEYS[virtual]]  # known, but refused as not adjustable


def _load_accessory(
    rng: random.Random, home: Home, room: Room, key: str, props: dict[str, Any]
) -> Accessory:
    full = str(props.get("name", ""))
    names = full.split(".")
    display = deslug(key)
    if len(names) >= 3 and not full.startswith(f"{home.slug}.{room.slug}."):
        # An older capture with display names: keep them for lookups by name.
        display = names[-1]
        home.name, room.name = names[0], names[1]
    values, wire = _loaded_values(props)
    settable = [CURRENT_NAMES.get(k, k) for k in props.get("_settable", [])]
    kind = str(props.get("type", "other"))
    acc = Accessory(
        uuid=uuid_with_tail(rng, key.rsplit("_", 1)[-1]),
        name=display,
        kind=kind,
        values=values,
        settable=settable,
        room_uuid=room.uuid,
        # Nothing read back: the relay could not reach it.
        reachable=bool(values) or kind in ("doorbell", "button") or bool(props.get("group")),
        key=key,
        served_name=full if "name" in props else None,
        wire=wire,
    )
    for opt_key, allowed in props.get("_options", {}).items():
        if opt_key == LEGACY_NAMES["hvac_mode"]:
            acc.options["hvac_mode"] = ["auto", "heat", "cool"]
        else:
            acc.options[CURRENT_NAMES.get(opt_key, opt_key)] = allowed
    _mark_virtual(acc, values, settable)
    if props.get("group") and isinstance(props.get("accessories"), dict):
        acc.members = [
            _load_accessory(rng, home, room, k, v) for k, v in props["accessories"].items()
        ]
    return acc
