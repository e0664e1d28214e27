"""Live updates from Homecast's WebSocket: each characteristic change applied as it arrives.

Neither Homecast MCP endpoint sends state notifications; both editions keep a WebSocket that
broadcasts every observed characteristic change. The cloud's `/ws?token=…` (pyhomecast
`websocket.py`; homecast-web `src/server/websocket.ts`) closes with 4001 on a refused credential
(homecast-hass connects with its OAuth token; an `hc_` token is tried the same way), may move
the connection with `redirect` right after `connected` (followed at once, same host only), and
answers `subscribe` with the scopes granted: home ids go as HomeKit spells them (homecast-hass:
"cloud server matches on these"), and only when every followed home is granted does the entry
count as pushed. The community server (the Mac app, `LocalHTTPServer.swift`) broadcasts to
every client on the port `/health` advertises, without authentication.

Where the socket is: push_socket.py; the messages: push_wire.py; each value broadcast as the
`ValueChange`s the coordinator applies (it alone writes its data): push_changes.py; push or
polling, and the repairs: push_mode.py. Each (re)connection is followed by a full read.

The community socket is unauthenticated plain `ws`: nothing it sends may end the task. A frame
that cannot be read or applied is counted and skipped, frames are capped, and reconnections
back off until a connection has stayed up a minute (a server that answers `subscribe` and
closes gets ever rarer attempts, then a repair issue).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import asdict
import json
import logging
import time
from typing import TYPE_CHECKING, Any, Final

import aiohttp
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from yarl import URL

from ...core.const import DOMAIN
from ...mcp.errors import McpError
from .api import HomecastState
from .push_changes import PushChanges
from .push_mode import ISSUE_REFUSED, ISSUE_UNAVAILABLE, PushMode
from .push_socket import PushAddress, PushRefused, PushUnavailable
from .push_wire import (
    AUTH_REQUIRED,
    CHARACTERISTIC,
    CLOSE_AUTH_FAILED,
    GROUP,
    PING,
    REACHABILITY,
    RECONNECT,
    REDIRECT,
    REFUSALS,
    RELAY_STATUS,
    RESPONSE,
    SUBSCRIPTION_INVALIDATED,
    error_code,
    subscribe_request,
)

if TYPE_CHECKING:
    from ...framework.base import McpGatewayConfigEntry
    from .coordinator import HomecastCoordinator

_LOGGER = logging.getLogger(__name__)

# Ping every 20 s (the servers ping every 30 s): a socket that stops answering is given up
# within a minute (the silence limit, checked at each wake-up).
PING_INTERVAL: Final = 20.0
RENEW_INTERVAL: Final = 240.0  # pyhomecast _RENEW_INTERVAL (80 % of the 300 s TTL)
SUBSCRIPTION_TTL: Final = 300
# Seconds between reconnection attempts: doubling from the first, at most the last.
RECONNECT_FIRST: Final = 1.0
RECONNECT_MAX: Final = 60.0  # pyhomecast _MAX_RECONNECT_DELAY
# A connection that stayed up this long (seconds) ends an outage: the backoff starts afresh.
STABLE_AFTER: Final = 60.0
CONNECT_TIMEOUT: Final = 10.0
# The largest frame read; a broadcast is a few hundred bytes.
MAX_FRAME: Final = 64 * 1024
# Failed attempts in a row (about 8 minutes of backoff) before a repair issue says so.
UNAVAILABLE_NOTICE_AFTER: Final = 10
# Silence (no message, not even a pong) after which the socket is taken for dead.
SILENCE_LIMIT: Final = 40.0


class _Redirected(Exception):
    """The server moved this connection to another address of the same host."""


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
        self.address = PushAddress(URL(mcp_url), community, f"ha_{entry.entry_id[:12]}")
        self._token = token
        self.mode = PushMode(hass, entry, coordinator, poll_interval, self._resync)
        self.status = self.mode.status
        self.changes = PushChanges(coordinator, self._resync)
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._task: asyncio.Task[None] | None = None
        self._live = False  # the current connection has subscribed
        self._heard = False  # the current connection has received anything
        self._renewals: set[str] = set()
        self._requested: list[str] = []

    @property
    def _mcp_url(self) -> URL:
        return self.address.mcp_url

    @property
    def counters(self) -> dict[str, int]:
        """What the pushes did, for diagnostics."""
        return asdict(self.changes.counters)

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
        followed_redirect = False
        while True:
            self._live = self._heard = False
            started = time.monotonic()
            outcome: tuple[str, str | None] = ("disconnected", None)
            try:
                await self._session()
            except _Redirected:
                if not followed_redirect:
                    # The pod handoff: at once, once; a second one in a row waits its turn.
                    followed_redirect = True
                    continue
                outcome = ("redirected", "redirected again")
            except PushRefused as err:
                outcome = ("refused", str(err))
            except PushUnavailable as err:
                outcome = (err.reason, str(err))
            except (aiohttp.ClientError, TimeoutError, OSError, McpError) as err:
                outcome = ("disconnected", type(err).__name__)
            except Exception as err:
                _LOGGER.debug("Homecast live updates: unexpected %r", err)
                outcome = ("disconnected", type(err).__name__)
            followed_redirect = False
            if not self._heard:
                self.address.forget_redirect()  # the target said nothing: the front door
            if self._live and time.monotonic() - started >= STABLE_AFTER:
                # A connection that held: this is a new outage, not more of the last one.
                delay = RECONNECT_FIRST
                refused = failures = 0
            reason, self.status.last_error = outcome
            if reason == "refused":
                refused += 1
                if refused >= 2:
                    # The second refusal came with a freshly read credential: stop asking.
                    self.mode.down(reason, issue=ISSUE_REFUSED)
                    return
                self.mode.down(reason)
            else:
                failures += 1
                notice = failures >= UNAVAILABLE_NOTICE_AFTER
                self.mode.down(reason, issue=ISSUE_UNAVAILABLE if notice else None)
            await _pause(delay)
            delay = min(delay * 2, RECONNECT_MAX)

    # -- one connection ---------------------------------------------------------------------

    async def _session(self) -> None:
        session = async_get_clientsession(self.hass)
        url = await self._socket_url(session)
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                ws = await session.ws_connect(url, heartbeat=None, max_msg_size=MAX_FRAME)
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
        return await self.address.url(session, self._token)

    def _subscription(self) -> dict[str, Any]:
        self._requested = sorted(self._homes())
        return subscribe_request(self._requested, SUBSCRIPTION_TTL)

    async def _subscribe(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        """Subscribe to the followed homes; wait for the answer (or a refusal)."""
        request = self._subscription()
        await ws.send_json(request)
        deadline = time.monotonic() + CONNECT_TIMEOUT
        while True:
            message = await self._receive(ws, deadline - time.monotonic())
            if message is None:
                raise PushUnavailable("no answer to subscribe")
            if message.get("type") == RESPONSE and message.get("id") == request["id"]:
                if message.get("error"):
                    code = error_code(message)
                    if code in REFUSALS:
                        raise PushRefused(code)
                    raise PushUnavailable(f"subscribe refused: {code}")
                break
            await self._handle_safely(ws, message)
        self._live = True
        self.status.connections += 1
        self.status.connected_since = time.monotonic()
        self.status.last_error = None
        self.mode.granted(self._requested, message)
        # Whatever changed while no socket listened: one full read, then pushes on top.
        self.changes.counters.resyncs += 1
        await self.coordinator.async_refresh()

    async def _listen(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        next_ping = time.monotonic() + PING_INTERVAL
        next_renew = time.monotonic() + RENEW_INTERVAL
        last_heard = time.monotonic()
        while True:
            now = time.monotonic()
            if now - last_heard > SILENCE_LIMIT:
                raise PushUnavailable("the socket went silent", "silent")
            if now >= next_ping:
                await ws.send_json({"type": PING})
                next_ping = now + PING_INTERVAL
            if now >= next_renew:
                await self._renew(ws)
                next_renew = now + RENEW_INTERVAL
            message = await self._receive(ws, min(next_ping, next_renew) - time.monotonic())
            if message is None:
                continue
            last_heard = time.monotonic()
            await self._handle_safely(ws, message)

    async def _renew(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        request = self._subscription()
        self._renewals = {request["id"]}
        await ws.send_json(request)

    async def _receive(
        self, ws: aiohttp.ClientWebSocketResponse, wait: float
    ) -> dict[str, Any] | None:
        """The next JSON message; None when `wait` seconds passed first. Raises when closed."""
        try:
            msg = await ws.receive(timeout=max(wait, 0.001))
        except TimeoutError:
            return None
        if msg.type == aiohttp.WSMsgType.TEXT:
            self._heard = True
            try:
                data = json.loads(msg.data)
            except (ValueError, RecursionError):
                self.changes.counters.ignored += 1
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
            # A frame past MAX_FRAME ends here too (aiohttp closes with 1009).
            raise PushUnavailable("socket error")
        return {}

    async def _handle_safely(
        self, ws: aiohttp.ClientWebSocketResponse, message: dict[str, Any]
    ) -> None:
        """Handle one message; one that cannot be applied is counted, never fatal."""
        try:
            await self._handle(ws, message)
        except (PushRefused, PushUnavailable, _Redirected, aiohttp.ClientError, OSError):
            raise
        except Exception as err:
            self.changes.counters.ignored += 1
            _LOGGER.debug("Homecast live updates: skipped a message (%s)", type(err).__name__)

    async def _handle(self, ws: aiohttp.ClientWebSocketResponse, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if not kind:
            return
        self.changes.counters.messages += 1
        if kind == PING:
            await ws.send_json({"type": "pong"})
        elif kind == REDIRECT:
            if self.address.follow(message.get("target")):
                self.status.redirects += 1
                raise _Redirected
            self.changes.counters.ignored += 1
        elif kind == RECONNECT:
            # The cloud asks for a fresh connection (websocket.ts gracefulReconnect).
            raise PushUnavailable("the server asked to reconnect")
        elif kind == AUTH_REQUIRED:
            raise PushRefused("auth_required")
        elif kind == SUBSCRIPTION_INVALIDATED:
            await self._renew(ws)
        elif kind == RESPONSE and message.get("id") in self._renewals:
            self._renewals.clear()
            if not message.get("error"):
                self.mode.granted(self._requested, message)
        elif kind == CHARACTERISTIC:
            self.changes.apply_characteristic(message)
        elif kind == GROUP:
            self.changes.apply_group(message)
        elif kind in (REACHABILITY, RELAY_STATUS):
            # Availability comes from a read (as homecast-hass does): a short, debounced poll.
            self.changes.counters.resyncs += 1
            await self.coordinator.async_request_refresh()

    def _homes(self) -> set[str]:
        """The followed homes' ids as HomeKit spells them (upper-case UUIDs, as `_homes` gives
        them and the cloud compares them)."""
        data: HomecastState | None = self.coordinator.data
        followed = set(data.homes) if data is not None else set()
        return {home.upper() for home in followed or set(self.coordinator.homes or ())}

    def _resync(self) -> None:
        self.changes.counters.resyncs += 1
        self.hass.async_create_task(self.coordinator.async_request_refresh())


_pause = asyncio.sleep  # the wait between attempts
