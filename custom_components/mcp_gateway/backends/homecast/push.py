"""Live updates from Homecast's WebSocket: each characteristic change applied as it arrives.

Neither Homecast MCP endpoint sends state notifications, but both editions keep a WebSocket
that broadcasts every observed characteristic change:

- the cloud at `wss://<host>/ws?token=…&device_id=…&client_type=homeassistant` (pyhomecast
  `websocket.py` `_build_ws_url`; homecast-web `src/server/websocket.ts` `establishConnection`).
  It takes the credential in the URL and closes with 4001 when it refuses it. Homecast's own HA
  integration (homecast-hass) connects with its OAuth access token; an `hc_` token is tried the
  same way and, when refused, the entry keeps polling.
- the community server (the Mac app) on its own port, advertised as `wsPort` by `GET /health`
  (`LocalHTTPServer.swift`; HTTP port + 1 where it is not advertised). Its broadcasts go to every
  connected client (`broadcastToWSClients`), with no authentication and whatever the subscription
  (`local-server.ts` answers `subscribe` without auth); its `authenticate` only accepts the
  app's own JWTs, never an `hc_` token, and gates HomeKit actions we do not send over it.

Messages (`local-broadcast.ts`, `websocket.ts`): `characteristic_update {accessoryId, homeId,
characteristicType, value}` with the relay's characteristic names and raw HomeKit values,
`service_group_update`, `reachability_update`, `relay_status_update`, server `ping`, `reconnect`.
Each update is simplified the way get_state simplifies (`local-rest.ts` getSimpleName /
formatValue) and applied to the accessory it names in the coordinator's data; the entry then
polls only as a safety net (every 300 s, as homecast-hass), and at its own interval again
whenever the socket is down. Every (re)connection is followed by a full read, so nothing
changed while the socket was down is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
import itertools
import json
import logging
import time
from typing import TYPE_CHECKING, Any, Final
import uuid

import aiohttp
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from yarl import URL

from ...core.const import DOMAIN
from ...mcp.errors import McpError

# get_state's own renaming (aliases, older names), so a pushed value lands under the same key.
from .api import (
    EVENT_KEY,
    Accessory,
    ButtonPress,
    Home,
    HomecastState,
    _normalize as normalize_values,
    uuid_tail,
)

if TYPE_CHECKING:
    from ..base import McpGatewayConfigEntry
    from .coordinator import HomecastCoordinator

_LOGGER = logging.getLogger(__name__)

PING_INTERVAL: Final = 30.0  # pyhomecast _PING_INTERVAL; websocket.ts pings every 30 s
RENEW_INTERVAL: Final = 240.0  # pyhomecast _RENEW_INTERVAL (80 % of the 300 s TTL)
SUBSCRIPTION_TTL: Final = 300
SAFETY_POLL: Final = 300.0  # homecast-hass UPDATE_INTERVAL_WS
# Seconds between reconnection attempts: doubling from the first, at most the last.
RECONNECT_FIRST: Final = 1.0
RECONNECT_MAX: Final = 60.0  # pyhomecast _MAX_RECONNECT_DELAY
CONNECT_TIMEOUT: Final = 10.0
# Failed attempts in a row (about 8 minutes of backoff) before a repair issue says so.
UNAVAILABLE_NOTICE_AFTER: Final = 10
_ISSUE_REFUSED: Final = "homecast_push_refused"
_ISSUE_UNAVAILABLE: Final = "homecast_push_unavailable"
# Silence (no message, not even a pong) after which the socket is taken for dead.
SILENCE_LIMIT: Final = 2 * PING_INTERVAL + 15.0
# Close code of the cloud socket for a refused credential (websocket.ts onclose: 4001).
CLOSE_AUTH_FAILED: Final = 4001

# homecast-web src/server/local-rest.ts CHAR_TO_SIMPLE ("matches cloud server").
_CHAR_TO_SIMPLE: Final = {
    "on": "on",
    "power_state": "on",
    "active": "active",
    "status_active": "status_active",
    "brightness": "brightness",
    "hue": "hue",
    "saturation": "saturation",
    "color_temperature": "color_temp",
    "current_temperature": "current_temp",
    "heating_threshold": "heat_target",
    "cooling_threshold": "cool_target",
    "target_temperature": "target_temp",
    "lock_current_state": "locked",
    "lock_target_state": "lock_target",
    "security_system_current_state": "alarm_state",
    "security_system_target_state": "alarm_target",
    "motion_detected": "motion",
    "contact_state": "contact",
    "battery_level": "battery",
    "status_low_battery": "low_battery",
    "volume": "volume",
    "mute": "mute",
}
_UUID_TO_SIMPLE: Final = {
    "000000b1-0000-1000-8000-0026bb765291": "hvac_state",
    "000000b2-0000-1000-8000-0026bb765291": "hvac_mode",
}
_SKIP_CHARS: Final = frozenset(
    {
        "name",
        "manufacturer",
        "model",
        "serial_number",
        "firmware_revision",
        "hardware_revision",
        "identify",
    }
)
# HomeKit's ProgrammableSwitchEvent. The relay's CharacteristicMapper has no name for it, so it
# would arrive by this raw UUID; the relay does not observe it today (HomeKitManager.swift
# keyCharacteristicTypes), so no edition broadcasts presses. Taken as a press if one ever does.
_INPUT_EVENT_UUID: Final = "00000073-0000-1000-8000-0026bb765291"
_PRESS_MEMORY: Final = 5

_ALARM_STATES: Final = {0: "home", 1: "away", 2: "night", 3: "off", 4: "triggered"}
_ALARM_TARGETS: Final = {0: "home", 1: "away", 2: "night", 3: "off"}
_HVAC_STATES: Final = {0: "inactive", 1: "idle", 2: "heating", 3: "cooling"}
_HVAC_MODES: Final = {0: "auto", 1: "heat", 2: "cool"}


def _simple_name(char_type: str) -> str | None:
    """local-rest.ts getSimpleName: the get_state key of a relay characteristic name."""
    if char_type in _CHAR_TO_SIMPLE:
        return _CHAR_TO_SIMPLE[char_type]
    if char_type.lower() in _UUID_TO_SIMPLE:
        return _UUID_TO_SIMPLE[char_type.lower()]
    if char_type in _SKIP_CHARS:
        return None
    if "-" in char_type and len(char_type) > 20:
        return None
    return char_type


def _enum(states: Mapping[int, str], value: Any) -> Any:
    try:
        return states.get(int(value), f"unknown_{value}")
    except (TypeError, ValueError):
        return f"unknown_{value}"


def _format(value: Any, name: str) -> Any:
    """local-rest.ts formatValue: a raw HomeKit value as get_state reports it."""
    if value is None:
        return None
    try:
        if name == "alarm_state":
            return _enum(_ALARM_STATES, value)
        if name == "alarm_target":
            return _enum(_ALARM_TARGETS, value)
        if name == "hvac_state":
            return _enum(_HVAC_STATES, value)
        if name == "hvac_mode":
            return _enum(_HVAC_MODES, value)
        if name == "locked":
            return value == 1 or value is True
        if name in ("on", "active", "motion", "mute", "low_battery"):
            return bool(value)
        if name in ("brightness", "battery", "volume"):
            return round(float(value))
        if "temp" in name or name in ("heat_target", "cool_target"):
            return round(float(value) * 10) / 10
    except (TypeError, ValueError):
        return None
    return value


def simplify(char_type: str, value: Any) -> tuple[str, Any] | None:
    """(our value key, value) for a broadcast characteristic; None: get_state never shows it."""
    name = _simple_name(char_type)
    if name is None:
        return None
    formatted = _format(value, name)
    if formatted is None:
        return None
    values, _, _ = normalize_values({name: formatted})
    return next(iter(values.items()))


def is_press(char_type: str) -> bool:
    """Whether a broadcast characteristic is a stateless switch's press."""
    return char_type == EVENT_KEY or char_type.lower() == _INPUT_EVENT_UUID


@dataclass(slots=True)
class PushStatus:
    """What the live-update channel does, for diagnostics (no secrets)."""

    mode: str = "polling"  # "push" while subscribed, else "polling"
    reason: str = "starting"
    connected_since: float | None = None
    connections: int = 0
    messages: int = 0
    applied: int = 0
    duplicates: int = 0
    ignored: int = 0
    resyncs: int = 0
    last_error: str | None = None
    subscribed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "reason": self.reason,
            "connected_for_s": (
                round(time.monotonic() - self.connected_since)
                if self.connected_since is not None
                else None
            ),
            "connections": self.connections,
            "messages": self.messages,
            "applied": self.applied,
            "duplicates": self.duplicates,
            "ignored": self.ignored,
            "resyncs": self.resyncs,
            "last_error": self.last_error,
            "subscribed_homes": len(self.subscribed),
        }


class PushRefused(Exception):
    """The server refused the credential on its socket."""


class PushUnavailable(Exception):
    """The socket cannot be reached or answered in a way we cannot use."""


@dataclass(frozen=True, slots=True)
class _Applied:
    """One value a push set, re-applied over a poll that was already under way."""

    seq: int
    home: str
    uid: str
    key: str
    value: Any


class HomecastPush:
    """The WebSocket of one entry, feeding its coordinator."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        coordinator: HomecastCoordinator,
        *,
        mcp_url: str,
        community: bool,
        token: Callable[[], Awaitable[str]],
        poll_interval: float,
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.coordinator = coordinator
        self.community = community
        self._mcp_url = URL(mcp_url)
        self._token = token
        self.poll_interval = poll_interval
        self.status = PushStatus()
        self._seq = itertools.count(1)
        self._presses = itertools.count(1)
        # Pushes since the oldest poll still under way started (see poll_started / reapply).
        self._recent: list[_Applied] = []
        self._polls_running: list[int] = []
        self._last_seq = 0
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._task: asyncio.Task[None] | None = None
        self._live = False  # the current connection has subscribed

    # -- lifecycle --------------------------------------------------------------------------

    @callback
    def async_start(self) -> None:
        """Run the socket for as long as the entry is loaded and HA runs.

        A task of its own, not one of HA's background tasks: it never ends by itself, and
        HA's "wait for background tasks" would wait for it forever. Unloading the entry or
        stopping HA cancels it.
        """
        self._task = self.hass.loop.create_task(
            self._run(), name=f"{DOMAIN} homecast push {self.entry.entry_id}"
        )
        self.entry.async_on_unload(
            self.hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, self._on_stop)
        )

    async def _on_stop(self, _event: Event) -> None:
        await self.async_stop()

    async def async_stop(self) -> None:
        """Close the socket (the entry's unload also cancels the task)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._ws is not None and not self._ws.closed:
            await self._ws.close()

    async def _run(self) -> None:
        delay = RECONNECT_FIRST
        refused = failures = 0
        while True:
            self._live = False
            outcome: tuple[str, str | None] = ("disconnected", None)
            try:
                await self._session()
            except PushRefused as err:
                outcome = ("refused", str(err))
            except PushUnavailable as err:
                outcome = ("unavailable", str(err))
            except (aiohttp.ClientError, TimeoutError, OSError, McpError) as err:
                outcome = ("disconnected", type(err).__name__)
            if self._live:
                # The session had subscribed: this is a new outage, not more of the last one.
                delay = RECONNECT_FIRST
                refused = failures = 0
            reason, self.status.last_error = outcome
            if reason == "refused":
                refused += 1
                if refused >= 2:
                    # The second refusal came with a freshly read credential: stop asking.
                    self._down(reason, issue=_ISSUE_REFUSED)
                    return
                delay = RECONNECT_FIRST
                self._down(reason)
            else:
                failures += 1
                notice = failures >= UNAVAILABLE_NOTICE_AFTER
                self._down(reason, issue=_ISSUE_UNAVAILABLE if notice else None)
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX)

    # -- one connection ---------------------------------------------------------------------

    async def _session(self) -> None:
        session = async_get_clientsession(self.hass)
        url = await self._socket_url(session)
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                ws = await session.ws_connect(url, heartbeat=None)
        except aiohttp.WSServerHandshakeError as err:
            # Never the exception text: the cloud URL carries the credential.
            if err.status in (401, 403):
                raise PushRefused(f"handshake HTTP {err.status}") from None
            raise PushUnavailable(f"handshake HTTP {err.status}") from None
        self._ws = ws
        try:
            await self._subscribe(ws)
            await self._listen(ws)
        finally:
            self._ws = None
            if not ws.closed:
                await ws.close()

    async def _socket_url(self, session: aiohttp.ClientSession) -> URL:
        origin = self._mcp_url.origin()
        if self.community:
            port = await self._community_ws_port(session)
            return origin.with_scheme("wss" if origin.scheme == "https" else "ws").with_port(port)
        token = await self._token()
        scheme = "wss" if origin.scheme == "https" else "ws"
        return (
            origin.with_scheme(scheme)
            .with_path("/ws")
            .with_query(
                token=token,
                device_id=f"ha_{self.entry.entry_id[:12]}",
                client_type="homeassistant",
                device_name="Home Assistant",
            )
        )

    async def _community_ws_port(self, session: aiohttp.ClientSession) -> int:
        """The socket's port as the Mac app advertises it (LocalHTTPServer.swift /health)."""
        origin = self._mcp_url.origin()
        fallback = (origin.port or 5656) + 1
        try:
            async with session.get(
                origin.with_path("/health"), timeout=aiohttp.ClientTimeout(total=CONNECT_TIMEOUT)
            ) as resp:
                body = await resp.json(content_type=None) if resp.status == 200 else None
        except (aiohttp.ClientError, TimeoutError, ValueError):
            return fallback
        if not isinstance(body, Mapping) or "wsPort" not in body:
            return fallback
        port = body.get("wsPort")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            # 0: the app's socket is not listening (wsPort is set once it is ready).
            raise PushUnavailable("the server advertises no WebSocket")
        return port

    async def _subscribe(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """Subscribe to the followed homes; wait for the answer (or a refusal)."""
        homes = sorted(self._homes())
        request_id = str(uuid.uuid4())
        await ws.send_json(
            {
                "id": request_id,
                "type": "request",
                "action": "subscribe",
                "payload": {
                    "scopes": [{"type": "home", "id": home} for home in homes],
                    "ttl": SUBSCRIPTION_TTL,
                },
            }
        )
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while True:
            message = await self._receive(ws, deadline - time.monotonic())
            if message is None:
                raise PushUnavailable("no answer to subscribe")
            if message.get("type") == "response" and message.get("id") == request_id:
                if message.get("error"):
                    code = _error_code(message)
                    if code in ("AUTH_REQUIRED", "AUTH_FAILED", "UNAUTHORIZED"):
                        raise PushRefused(code)
                    raise PushUnavailable(f"subscribe refused: {code}")
                break
            await self._handle(ws, message)
        self.status.subscribed = homes
        self._live = True
        self.status.connections += 1
        self.status.connected_since = time.monotonic()
        self.status.last_error = None
        self._up()
        # Whatever changed while no socket listened: one full read, then pushes on top.
        self.status.resyncs += 1
        await self.coordinator.async_refresh()

    async def _listen(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        next_ping = time.monotonic() + PING_INTERVAL
        next_renew = time.monotonic() + RENEW_INTERVAL
        last_heard = time.monotonic()
        while True:
            now = time.monotonic()
            if now - last_heard > SILENCE_LIMIT:
                raise PushUnavailable("the socket went silent")
            if now >= next_ping:
                await ws.send_json({"type": "ping"})
                next_ping = now + PING_INTERVAL
            if now >= next_renew:
                await self._renew(ws)
                next_renew = now + RENEW_INTERVAL
            message = await self._receive(ws, min(next_ping, next_renew) - time.monotonic())
            if message is None:
                continue
            last_heard = time.monotonic()
            await self._handle(ws, message)

    async def _renew(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        homes = sorted(self._homes())
        await ws.send_json(
            {
                "id": str(uuid.uuid4()),
                "type": "request",
                "action": "subscribe",
                "payload": {
                    "scopes": [{"type": "home", "id": home} for home in homes],
                    "ttl": SUBSCRIPTION_TTL,
                },
            }
        )
        self.status.subscribed = homes

    async def _receive(
        self, ws: aiohttp.ClientWebSocketResponse, wait: float
    ) -> dict[str, Any] | None:
        """The next JSON message; None when `wait` seconds passed first. Raises when closed."""
        try:
            msg = await ws.receive(timeout=max(wait, 0.001))
        except TimeoutError:
            return None
        if msg.type == aiohttp.WSMsgType.TEXT:
            try:
                data = json.loads(msg.data)
            except ValueError:
                self.status.ignored += 1
                return {}
            return data if isinstance(data, dict) else {}
        if msg.type in (
            aiohttp.WSMsgType.CLOSE,
            aiohttp.WSMsgType.CLOSING,
            aiohttp.WSMsgType.CLOSED,
        ):
            code = ws.close_code
            if code == CLOSE_AUTH_FAILED:
                raise PushRefused("closed 4001")
            raise PushUnavailable(f"closed {code}")
        if msg.type == aiohttp.WSMsgType.ERROR:
            raise PushUnavailable("socket error")
        return {}

    # -- messages ---------------------------------------------------------------------------

    async def _handle(self, ws: aiohttp.ClientWebSocketResponse, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if not kind:
            return
        self.status.messages += 1
        if kind == "ping":
            await ws.send_json({"type": "pong"})
        elif kind == "reconnect":
            # The cloud asks for a fresh connection (websocket.ts gracefulReconnect).
            raise PushUnavailable("the server asked to reconnect")
        elif kind == "auth_required":
            raise PushRefused("auth_required")
        elif kind == "subscription_invalidated":
            await self._renew(ws)
        elif kind == "characteristic_update":
            self.apply_characteristic(message)
        elif kind == "service_group_update":
            self.apply_group(message)
        elif kind in ("reachability_update", "relay_status_update"):
            # Availability comes from a read (as homecast-hass does): a short, debounced poll.
            self.status.resyncs += 1
            await self.coordinator.async_request_refresh()

    def _homes(self) -> set[str]:
        data: HomecastState | None = self.coordinator.data
        followed = set(data.homes) if data is not None else set()
        return followed or set(self.coordinator.homes or ())

    def _find(self, home_id: Any, accessory_id: Any) -> tuple[Home, Accessory] | None:
        """The followed home and accessory a broadcast names; None when we do not follow it."""
        data: HomecastState | None = self.coordinator.data
        if data is None or not isinstance(accessory_id, str) or not accessory_id:
            return None
        if isinstance(home_id, str) and home_id:
            home = data.homes.get(home_id.lower())
            homes = [home] if home is not None else []
        else:
            # A relay write may carry no home (local-broadcast.ts broadcastRelayWrite).
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
            self._resync()
        return None

    @callback
    def apply_characteristic(self, message: Mapping[str, Any]) -> None:
        """Apply one characteristic_update to the accessory it names."""
        char_type = message.get("characteristicType")
        target = self._find(message.get("homeId"), message.get("accessoryId"))
        if target is None or not isinstance(char_type, str):
            self.status.ignored += 1
            return
        home, acc = target
        value = message.get("value")
        if is_press(char_type):
            if isinstance(value, int) and not isinstance(value, bool):
                # Each message is one press, whatever the value before it.
                press = ButtonPress(f"push:{next(self._presses)}", value)
                acc.events = (*acc.events, press)[-_PRESS_MEMORY:]
                acc.values[EVENT_KEY] = value
                self._notify(home, [acc])
            return
        simple = simplify(char_type, value)
        if simple is None:
            self.status.ignored += 1
            return
        key, new = simple
        self._remember(home, acc, key, new)
        changed = self._set(acc, key, new)
        for group in self._groups_of(home, acc):
            member_values = [
                m.values.get(key) for m in self._members(home, group) if key in m.values
            ]
            if key in ("on", "active"):
                changed |= self._set(group, key, any(bool(v) for v in member_values))
            else:
                changed |= self._set(group, key, new)
        if changed:
            self._notify(home, [acc, *self._groups_of(home, acc)])
        else:
            self.status.duplicates += 1

    @callback
    def apply_group(self, message: Mapping[str, Any]) -> None:
        """A service group written as a whole: the group and each of its members."""
        char_type = message.get("characteristicType")
        target = self._find(message.get("homeId"), message.get("groupId"))
        if target is None or not isinstance(char_type, str):
            self.status.ignored += 1
            return
        home, group = target
        simple = simplify(char_type, message.get("value"))
        if simple is None:
            self.status.ignored += 1
            return
        key, new = simple
        members = self._members(home, group)
        changed = False
        for acc in (group, *members):
            self._remember(home, acc, key, new)
            changed |= self._set(acc, key, new)
        if changed:
            self._notify(home, [group, *members])
        else:
            self.status.duplicates += 1

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
        self.status.applied += 1
        self.coordinator.notify_push({f"{home.tail}_{acc.uid}" for acc in accs})

    def _resync(self) -> None:
        self.status.resyncs += 1
        self.hass.async_create_task(self.coordinator.async_request_refresh())

    # -- polls and pushes in either order ---------------------------------------------------

    def _remember(self, home: Home, acc: Accessory, key: str, value: Any) -> None:
        seq = next(self._seq)
        self._last_seq = seq
        if self._polls_running:
            self._recent.append(_Applied(seq, home.uuid, acc.uid, key, value))

    def poll_started(self) -> int:
        """A poll begins: pushes from now on are newer than what it may read."""
        self._polls_running.append(self._last_seq)
        return self._last_seq

    def poll_finished(self, started: int, state: HomecastState | None) -> None:
        """Lay the pushes received while the poll ran over what it read (they are newer)."""
        if started in self._polls_running:
            self._polls_running.remove(started)
        if state is not None:
            for item in self._recent:
                if item.seq <= started:
                    continue
                home = state.homes.get(item.home)
                acc = home.accessories.get(item.uid) if home is not None else None
                if acc is not None:
                    acc.values[item.key] = item.value
        oldest = min(self._polls_running, default=None)
        self._recent = [] if oldest is None else [i for i in self._recent if i.seq > oldest]

    # -- mode -------------------------------------------------------------------------------

    def _up(self) -> None:
        self.status.mode = "push"
        self.status.reason = "subscribed"
        for kind in (_ISSUE_REFUSED, _ISSUE_UNAVAILABLE):
            ir.async_delete_issue(self.hass, DOMAIN, self._issue_id(kind))
        self.coordinator.update_interval = _seconds(max(self.poll_interval, SAFETY_POLL))

    def _down(self, reason: str, *, issue: str | None = None) -> None:
        was_push = self.status.mode == "push"
        self.status.mode = "polling"
        self.status.reason = reason
        self.status.connected_since = None
        self.coordinator.update_interval = _seconds(self.poll_interval)
        if issue is not None:
            ir.async_create_issue(
                self.hass,
                DOMAIN,
                self._issue_id(issue),
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=issue,
                translation_placeholders={
                    "title": self.entry.title,
                    "interval": str(round(self.poll_interval)),
                },
            )
        if was_push:
            # Back to the entry's own interval now, with a read of what the socket missed.
            self.status.resyncs += 1
            self.hass.async_create_task(self.coordinator.async_request_refresh())

    def _issue_id(self, kind: str) -> str:
        return f"{kind}_{self.entry.entry_id}"


def _error_code(message: Mapping[str, Any]) -> str:
    error = message.get("error")
    if isinstance(error, Mapping):
        return str(error.get("code") or "error")
    return "error"


def _seconds(value: float) -> timedelta:
    return timedelta(seconds=value)
