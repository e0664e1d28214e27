"""The deprecated HTTP+SSE transport of MCP 2024-11-05, for clients that speak nothing newer.

`GET /api/mcp_gateway/sse` opens a stream whose first event names a message endpoint;
messages POSTed there are answered over that stream. Same admission as the main endpoint
(Origin, HA auth, rate limit) on both, and a session belongs to the user who opened it.
Sessions are bounded in number (per user and overall) and in idle time, and end when the
token that opened them is revoked. The overall bound is shared so that no group of users can
lock out the owner: ordinary users together stop short of it by the administrators' reserve,
administrators other than the owner by the owner's (one user's share each).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
import logging
import secrets
import time
from typing import Any, Final

from aiohttp import hdrs, web
from homeassistant.auth.models import User
from homeassistant.components.http.const import KEY_HASS_REFRESH_TOKEN_ID
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.http import KEY_HASS, HomeAssistantView

from ...core.const import GATEWAY_URL
from ...mcp.server import SessionState, error_body
from .view import BUSY_CODE, MAX_BODY_BYTES, admit, charge_batch, decode_body, dumps, json_response

_LOGGER = logging.getLogger(__name__)

SSE_URL: Final = f"{GATEWAY_URL}/sse"
MESSAGES_PREFIX: Final = f"{GATEWAY_URL}/messages/"
MESSAGES_URL: Final = f"{MESSAGES_PREFIX}{{session_id}}"

MAX_SESSIONS: Final = 32
MAX_SESSIONS_PER_USER: Final = 4
IDLE_TIMEOUT: Final = 30 * 60.0  # seconds without a message from the client
KEEPALIVE: Final = 15.0  # seconds between comment lines, so proxies keep the stream open
# Requests of one session processed at once; more wait their turn.
MAX_IN_FLIGHT: Final = 8
# What one session may hold for its client at once: requests accepted but not answered yet
# plus answers not yet read from the stream, in number and in bytes (request bodies and
# answers). A client that does not read its stream is refused beyond this (429), so an unread
# session can never grow Home Assistant's memory past it.
MAX_PENDING: Final = 16
MAX_PENDING_BYTES: Final = 4 * 1024 * 1024
QUEUE_SIZE: Final = MAX_PENDING


@dataclass(slots=True, eq=False)
class SseSession:
    """One open stream: its owner, its protocol state and the answers waiting to be sent."""

    id: str
    user_id: str
    refresh_token_id: str | None
    last_active: float
    state: SessionState = field(default_factory=SessionState)
    queue: asyncio.Queue[bytes | None] = field(
        default_factory=lambda: asyncio.Queue(maxsize=QUEUE_SIZE)
    )
    in_flight: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(MAX_IN_FLIGHT))
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    closed: bool = False
    # Bytes held for the client: bodies of accepted requests, then their queued answers.
    pending_bytes: int = 0

    def has_room(self, size: int) -> bool:
        """Whether one more request of `size` bytes fits in what the session may hold."""
        held = len(self.tasks) + self.queue.qsize()
        return held < MAX_PENDING and self.pending_bytes + size <= MAX_PENDING_BYTES

    async def send(self, message: Any) -> bool:
        """Queue a JSON-RPC message (or batch) for the stream; False once it is closed."""
        if self.closed:
            return False
        data = dumps(message)
        self.pending_bytes += len(data)
        await self.queue.put(data)
        return True

    def taken(self, data: bytes) -> None:
        """The writer took an answer off the queue."""
        self.pending_bytes = max(0, self.pending_bytes - len(data))

    def close(self) -> None:
        """Stop the stream and free everything the session holds."""
        if self.closed:
            return
        self.closed = True
        for task in self.tasks:
            task.cancel()
        # Nobody will read the queued answers now: drop them all, then wake the writer.
        while not self.queue.empty():
            self.queue.get_nowait()
        self.pending_bytes = 0
        self.queue.put_nowait(None)


class SseSessionManager:
    """Open sessions, bounded in number and idle time."""

    def __init__(
        self,
        hass: HomeAssistant,
        *,
        max_sessions: int = MAX_SESSIONS,
        max_per_user: int = MAX_SESSIONS_PER_USER,
        idle_timeout: float = IDLE_TIMEOUT,
        keepalive: float = KEEPALIVE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hass = hass
        self.max_sessions = max_sessions
        self.max_per_user = max_per_user
        self.idle_timeout = idle_timeout
        self.keepalive = keepalive
        self.clock = clock
        self.sessions: dict[str, SseSession] = {}

    def ceiling(self, user: User) -> int:
        """How many sessions may be open in all for `user` to open one more.

        The owner may fill every slot; other administrators leave the owner's share, ordinary
        users the administrators' reserve. Each user keeps to their own share as well.
        """
        if user.is_owner:
            return self.max_sessions
        reserve = self.max_per_user if user.is_admin else 2 * self.max_per_user
        return max(0, self.max_sessions - reserve)

    def open(self, user: User, refresh_token_id: str | None) -> SseSession | None:
        """A new session for the user, or None when the server is full for them."""
        mine = [s for s in self.sessions.values() if s.user_id == user.id]
        if len(mine) >= self.max_per_user:
            # A client that lost its connection reconnects before we notice: make room.
            self.close(min(mine, key=lambda session: session.last_active))
        elif len(self.sessions) >= self.ceiling(user):
            return None
        session = SseSession(
            id=secrets.token_urlsafe(24),
            user_id=user.id,
            refresh_token_id=refresh_token_id,
            last_active=self.clock(),
        )
        self.sessions[session.id] = session
        return session

    def get(self, session_id: str, user: User) -> SseSession | None:
        """The user's open session of that id; another user's is as absent as a missing one."""
        session = self.sessions.get(session_id)
        if session is None or session.closed or session.user_id != user.id:
            return None
        return session

    def close(self, session: SseSession) -> None:
        """End a session."""
        session.close()
        self.sessions.pop(session.id, None)

    @callback
    def close_all(self, *_: Any) -> None:
        """End every session (Home Assistant stops)."""
        for session in list(self.sessions.values()):
            self.close(session)

    def expire(self) -> None:
        """End sessions idle too long or whose token was revoked."""
        now = self.clock()
        for session in list(self.sessions.values()):
            revoked = (
                session.refresh_token_id is not None
                and self.hass.auth.async_get_refresh_token(session.refresh_token_id) is None
            )
            if revoked or now - session.last_active > self.idle_timeout:
                self.close(session)


def _is_response(payload: Any) -> bool:
    """Whether a message is a JSON-RPC response (the client answering our request)."""
    return (
        isinstance(payload, dict)
        and "method" not in payload
        and ("result" in payload or "error" in payload)
    )


def _event(name: str, data: bytes) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


class McpGatewaySseView(HomeAssistantView):
    """GET /api/mcp_gateway/sse: the stream of one HTTP+SSE session."""

    url = SSE_URL
    name = "api:mcp_gateway:sse"
    requires_auth = False  # admit() authenticates, to answer 401 with WWW-Authenticate

    def __init__(self, manager: SseSessionManager) -> None:
        self.manager = manager

    async def get(self, request: web.Request) -> web.StreamResponse:
        """Announce the message endpoint, then relay answers until the session ends."""
        admitted = await admit(request)
        if isinstance(admitted, web.Response):
            return admitted
        _, user = admitted
        session = self.manager.open(user, request.get(KEY_HASS_REFRESH_TOKEN_ID))
        if session is None:
            body = error_body(None, BUSY_CODE, "Too many open MCP sessions")
            return json_response(body, HTTPStatus.SERVICE_UNAVAILABLE, {hdrs.RETRY_AFTER: "60"})
        response = web.StreamResponse(
            headers={
                hdrs.CONTENT_TYPE: "text/event-stream",
                hdrs.CACHE_CONTROL: "no-cache",
                "X-Accel-Buffering": "no",  # proxies must not hold events back
            }
        )
        try:
            await response.prepare(request)
            endpoint = f"{MESSAGES_PREFIX}{session.id}".encode()
            await response.write(_event("endpoint", endpoint))
            while True:
                try:
                    async with asyncio.timeout(self.manager.keepalive):
                        message = await session.queue.get()
                except TimeoutError:
                    self.manager.expire()
                    if session.closed:
                        break
                    await response.write(b": keepalive\n\n")
                    continue
                if message is None:
                    break
                session.taken(message)
                await response.write(_event("message", message))
        except ConnectionResetError:
            _LOGGER.debug("MCP SSE client of session %s went away", session.id[:6])
        finally:
            self.manager.close(session)
        return response


class McpGatewayMessagesView(HomeAssistantView):
    """POST /api/mcp_gateway/messages/{session_id}: a message for an open session."""

    url = MESSAGES_URL
    name = "api:mcp_gateway:messages"
    requires_auth = False

    def __init__(self, manager: SseSessionManager) -> None:
        self.manager = manager

    async def post(self, request: web.Request, session_id: str) -> web.StreamResponse:
        """Accept the message at once; its answer goes over the session's stream."""
        admitted = await admit(request)
        if isinstance(admitted, web.Response):
            return admitted
        runtime, user = admitted
        session = self.manager.get(session_id, user)
        if session is None:
            body = error_body(None, -32600, "Unknown or closed session")
            return json_response(body, HTTPStatus.NOT_FOUND)
        # A chunked body is counted at the most it may be: its size is known only once read.
        size = request.content_length or MAX_BODY_BYTES
        if not session.has_room(size):
            body = error_body(
                None,
                BUSY_CODE,
                "The session holds as many requests and answers as it may; read its stream",
            )
            return json_response(body, HTTPStatus.TOO_MANY_REQUESTS, {hdrs.RETRY_AFTER: "1"})
        payload = await decode_body(request)
        if isinstance(payload, web.Response):
            return payload
        if _is_response(payload):
            # The client's answer to a question of ours: handed over at once, outside the
            # in-flight limit, which the calls waiting for it may fill.
            session.last_active = self.manager.clock()
            await runtime.server.handle_session(payload, session=session.state, user=user)
            return web.Response(status=HTTPStatus.ACCEPTED)
        hass = request.app[KEY_HASS]
        if (refused := charge_batch(hass, runtime, user, payload)) is not None:
            return refused
        if session.closed or not session.has_room(size):
            # Closed, or filled up by others while this body was read.
            body = error_body(None, BUSY_CODE, "The session is closed or full")
            return json_response(body, HTTPStatus.TOO_MANY_REQUESTS, {hdrs.RETRY_AFTER: "1"})
        session.last_active = self.manager.clock()
        session.pending_bytes += size

        async def answer() -> None:
            try:
                async with session.in_flight:
                    reply = await runtime.server.handle_session(
                        payload, session=session.state, user=user, outbound=session
                    )
            finally:
                if not session.closed:
                    session.pending_bytes = max(0, session.pending_bytes - size)
            if reply.body is not None:
                await session.send(reply.body)

        task = hass.async_create_background_task(answer(), f"mcp_gateway SSE {session.id[:6]}")
        session.tasks.add(task)
        task.add_done_callback(session.tasks.discard)
        return web.Response(status=HTTPStatus.ACCEPTED)
