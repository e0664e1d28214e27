"""The gateway's Streamable HTTP endpoint, and the admission steps every gateway view shares.

Admission, in order: the Origin rule (403 before anything runs), Home Assistant authentication
(401 with the RFC 9728 pointer), the per-user rate limit (429). The views authenticate
themselves (`requires_auth = False`) because HA's own 401 carries no `WWW-Authenticate`, and
MCP clients need that header to find the OAuth login.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
import contextlib
from dataclasses import dataclass, field
import functools
from http import HTTPStatus
import json
import logging
import secrets
from typing import TYPE_CHECKING, Any, Final

from aiohttp import hdrs, web
from homeassistant.auth.models import User
from homeassistant.components.http.const import KEY_HASS_REFRESH_TOKEN_ID, KEY_HASS_USER
from homeassistant.core import HomeAssistant
from homeassistant.helpers.http import KEY_AUTHENTICATED, KEY_HASS
from homeassistant.helpers.json import json_bytes
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN, GATEWAY_URL
from ...core.settings import GatewaySettings, gateway_settings
from ...mcp.server import (
    FORBIDDEN_CODE,
    INVALID_REQUEST,
    MAX_BATCH_ITEMS,
    PARSE_ERROR,
    McpServer,
    error_body,
    parse_json,
)
from ...mcp.types import ServerRequest
from ...permissions.limits import UserRates
from ..approval.phones import note_caller_token
from .cors import CorsView
from .origins import check_origin, public_base

if TYPE_CHECKING:
    from .sse import SseSessionManager


DATA_GATEWAY: HassKey[GatewayRuntime] = HassKey(f"{DOMAIN}_gateway")

WELL_KNOWN_PREFIX: Final = "/.well-known/oauth-protected-resource"
RESOURCE_METADATA_PATH: Final = f"{WELL_KNOWN_PREFIX}{GATEWAY_URL}"

MAX_BODY_BYTES: Final = 1024 * 1024
_READ_CHUNK: Final = 64 * 1024
_USER_AGENT_CHARS: Final = 200
# Streamable HTTP's session header: issued only to clients that declared elicitation.
MCP_SESSION_ID: Final = "Mcp-Session-Id"
# Server-defined JSON-RPC codes for refusals made before any MCP processing.
BUSY_CODE: Final = -32000
RATE_LIMITED_CODE: Final = -32029
_JSON_TYPES: Final = frozenset({"application/json", "application/*", "*/*"})
_EVENT_STREAM: Final = "text/event-stream"
# Client names remembered from `initialize` (per token and User-Agent), and the capabilities
# of clients that declared elicitation (per session id issued to them), at most this many.
_MAX_CLIENT_NAMES: Final = 512
# Seconds between comment lines on a POST's event stream, so proxies keep it open while the
# client's person is being asked.
STREAM_KEEPALIVE: Final = 15.0

_LOGGER = logging.getLogger(__name__)


@dataclass(slots=True)
class GatewayRuntime:
    """What the gateway views share: the server core, the SSE sessions, the rate limiter."""

    hass: HomeAssistant
    server: McpServer
    sessions: SseSessionManager
    rates: UserRates = field(default_factory=UserRates)
    stream_keepalive: float = STREAM_KEEPALIVE
    _client_names: dict[tuple[str | None, str | None], str] = field(
        default_factory=dict, init=False
    )
    # Session id -> (the refresh token it was issued to, what that client declared).
    _client_capabilities: dict[str, tuple[str | None, dict[str, Any]]] = field(
        default_factory=dict, init=False
    )

    def client_hint(self, request: web.Request, payload: Any) -> str | None:
        """The client's name for requests that carry none (stateless legacy requests).

        The endpoint keeps no sessions, but a client that initialized with a token keeps
        using it with the same User-Agent: remember its clientInfo.name for that pair, so
        the logbook names "Claude" rather than an HTTP library.
        """
        agent = user_agent(request)
        key = (request.get(KEY_HASS_REFRESH_TOKEN_ID), agent)
        if isinstance(payload, dict) and payload.get("method") == "initialize":
            params = payload.get("params")
            info = params.get("clientInfo") if isinstance(params, dict) else None
            name = info.get("name") if isinstance(info, dict) else None
            if isinstance(name, str) and name:
                self._client_names.pop(key, None)
                self._client_names[key] = name[:_USER_AGENT_CHARS]
                if len(self._client_names) > _MAX_CLIENT_NAMES:
                    del self._client_names[next(iter(self._client_names))]
        return self._client_names.get(key, agent)

    def remember_capabilities(self, request: web.Request, payload: Any) -> str | None:
        """An initialize that declared elicitation: a session id for that client (None: none).

        Never guessed from the token and User-Agent (two clients may share both): only the
        client that holds the id, with the token it was issued to, may be asked questions.
        """
        if not isinstance(payload, dict) or payload.get("method") != "initialize":
            return None
        params = payload.get("params")
        capabilities = params.get("capabilities") if isinstance(params, dict) else None
        if not isinstance(capabilities, dict) or not isinstance(
            elicitation := capabilities.get("elicitation"), dict
        ):
            return None
        session_id = secrets.token_urlsafe(24)
        # Only what the server acts on is kept: whether (and how) it may ask.
        token = request.get(KEY_HASS_REFRESH_TOKEN_ID)
        self._client_capabilities[session_id] = (token, {"elicitation": elicitation})
        if len(self._client_capabilities) > _MAX_CLIENT_NAMES:
            del self._client_capabilities[next(iter(self._client_capabilities))]
        return session_id

    def client_capabilities(self, request: web.Request) -> Mapping[str, Any]:
        """What the client holding this request's session id declared at initialize."""
        session_id = request.headers.get(MCP_SESSION_ID)
        remembered = self._client_capabilities.get(session_id or "")
        if remembered is None or remembered[0] != request.get(KEY_HASS_REFRESH_TOKEN_ID):
            return {}
        return remembered[1]

    @property
    def clock(self) -> Callable[[], float]:
        """The rate limit's clock (tests replace it to drive the limit)."""
        return self.rates.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self.rates.clock = clock

    def retry_after(self, user: User, settings: GatewaySettings, cost: int = 1) -> int | None:
        """Charge `cost` requests to the user; seconds to wait when over the limit, else None."""
        return self.rates.retry_after(user.id, settings.rate_limit_per_minute, cost)


def dumps(value: Any) -> bytes:
    """JSON bytes with Home Assistant's fast encoder, or the standard one for what it refuses.

    orjson refuses integers beyond 64 bits, and such numbers can come from clients or backends.
    """
    try:
        return json_bytes(value)
    except TypeError:
        return json.dumps(value, ensure_ascii=False, default=str).encode()


def json_response(
    body: Any, status: int = HTTPStatus.OK, headers: dict[str, str] | None = None
) -> web.Response:
    """A JSON response."""
    return web.Response(
        body=dumps(body), status=status, content_type="application/json", headers=headers
    )


def malformed_host() -> web.Response:
    """400 for a Host header that names no host: no document can be published for it."""
    return json_response(
        {"error": "invalid_request", "error_description": "Malformed Host header"},
        HTTPStatus.BAD_REQUEST,
    )


def resource_metadata_url(hass: HomeAssistant, request: web.Request) -> str | None:
    """Where this request's client finds our RFC 9728 document (on a trusted base URL)."""
    if (base := public_base(hass, request)) is None:
        return None
    return f"{base}{RESOURCE_METADATA_PATH}"


async def admit(request: web.Request) -> tuple[GatewayRuntime, User] | web.Response:
    """Run the shared admission steps; a response means the request is refused."""
    hass = request.app[KEY_HASS]
    runtime = hass.data[DATA_GATEWAY]
    settings = gateway_settings(hass)
    if not check_origin(hass, request, settings):
        body = error_body(None, FORBIDDEN_CODE, "Origin not allowed")
        return json_response(body, HTTPStatus.FORBIDDEN)
    if not request.get(KEY_AUTHENTICATED, False):
        metadata_url = resource_metadata_url(hass, request)
        params = [f'resource_metadata="{metadata_url}"'] if metadata_url else []
        challenge = f"Bearer {', '.join(params)}".rstrip()
        if hdrs.AUTHORIZATION in request.headers:
            # A wrong token is a failed login: raising lets HA's ban middleware count it.
            invalid = ", ".join([*params, 'error="invalid_token"'])
            raise web.HTTPUnauthorized(
                headers={hdrs.WWW_AUTHENTICATE: f"Bearer {invalid}"},
                text='{"error":"invalid_token"}',
                content_type="application/json",
            )
        # No credentials at all is how MCP clients start OAuth discovery: no alarm for that.
        return json_response(
            {"error": "unauthorized", "error_description": "A Home Assistant token is required"},
            HTTPStatus.UNAUTHORIZED,
            {hdrs.WWW_AUTHENTICATE: challenge},
        )
    user: User = request[KEY_HASS_USER]
    note_caller_token(hass, request.get(KEY_HASS_REFRESH_TOKEN_ID))
    if (refused := charge(runtime, user, settings)) is not None:
        return refused
    return runtime, user


def charge(
    runtime: GatewayRuntime, user: User, settings: GatewaySettings, cost: int = 1
) -> web.Response | None:
    """Charge requests to the user's rate limit; a 429 with Retry-After when over it."""
    if (wait := runtime.retry_after(user, settings, cost)) is None:
        return None
    body = error_body(None, RATE_LIMITED_CODE, f"Rate limit exceeded; retry in {wait} s")
    return json_response(body, HTTPStatus.TOO_MANY_REQUESTS, {hdrs.RETRY_AFTER: str(wait)})


def charge_batch(
    hass: HomeAssistant, runtime: GatewayRuntime, user: User, payload: Any
) -> web.Response | None:
    """A batch's items count one request each: admission charged the first, charge the rest.

    A batch longer than the server takes is refused there; it costs one more than it may hold.
    """
    if not isinstance(payload, list) or len(payload) < 2:
        return None
    cost = min(len(payload), MAX_BATCH_ITEMS + 1) - 1
    return charge(runtime, user, gateway_settings(hass), cost)


def _too_large() -> web.Response:
    return json_response(
        error_body(None, INVALID_REQUEST, f"Request body exceeds {MAX_BODY_BYTES} bytes"),
        HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
    )


async def read_body(request: web.Request) -> bytes | web.Response:
    """The request body up to MAX_BODY_BYTES, else a 413 response."""
    if request.content_length is not None:
        # The declared length is what aiohttp reads, never more.
        if request.content_length > MAX_BODY_BYTES:
            return _too_large()
        return await request.read()
    chunks: list[bytes] = []
    size = 0
    # Read in chunks so a chunked (length-less) body is capped too.
    async for chunk in request.content.iter_chunked(_READ_CHUNK):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def check_content_type(request: web.Request) -> web.Response | None:
    """415 for a declared body type other than JSON; a missing type is tolerated."""
    declared = request.headers.get(hdrs.CONTENT_TYPE)
    # The exact common value needs no parsing.
    if declared in (None, "application/json") or request.content_type == "application/json":
        return None
    body = error_body(None, INVALID_REQUEST, "Content-Type must be application/json")
    return json_response(body, HTTPStatus.UNSUPPORTED_MEDIA_TYPE)


def user_agent(request: web.Request) -> str | None:
    """The client's User-Agent, as a fallback client name."""
    agent = request.headers.get(hdrs.USER_AGENT)
    return agent[:_USER_AGENT_CHARS] if agent else None


async def decode_body(request: web.Request) -> Any | web.Response:
    """Read, size-check and JSON-decode a POST body; a response means it was refused."""
    if (refused := check_content_type(request)) is not None:
        return refused
    body = await read_body(request)
    if isinstance(body, web.Response):
        return body
    try:
        return parse_json(body)
    except ValueError:
        return json_response(error_body(None, PARSE_ERROR, "Parse error"), HTTPStatus.BAD_REQUEST)


def _accepts_json(request: web.Request) -> bool:
    accept = request.headers.get(hdrs.ACCEPT)
    return True if not accept else _json_acceptable(accept)


def _accepts_events(request: web.Request) -> bool:
    accept = request.headers.get(hdrs.ACCEPT)
    return accept is not None and _events_acceptable(accept)


@functools.lru_cache(maxsize=32)
def _media_types(accept: str) -> frozenset[str]:
    # A client sends the same Accept on every request: parsed once.
    return frozenset(part.split(";", 1)[0].strip().lower() for part in accept.split(","))


def _json_acceptable(accept: str) -> bool:
    return bool(_media_types(accept) & _JSON_TYPES)


def _events_acceptable(accept: str) -> bool:
    return _EVENT_STREAM in _media_types(accept)


def sse_event(data: bytes, name: str = "message") -> bytes:
    """One Server-Sent Event."""
    return b"event: " + name.encode() + b"\ndata: " + data + b"\n\n"


class PostStream:
    """A POST's answer as an event stream, opened the first time the server sends the
    client a request during it (a question for its person); else the answer stays JSON."""

    def __init__(self, view: CorsView, request: web.Request, keepalive: float) -> None:
        self._view = view
        self._request = request
        self._keepalive = keepalive
        self._lock = asyncio.Lock()
        self._pinger: asyncio.Task[None] | None = None
        self.response: web.StreamResponse | None = None
        self.broken = False

    async def send(self, message: ServerRequest) -> bool:
        """Send a JSON-RPC message as an event; False once the client cannot be reached."""
        return await self._write(sse_event(dumps(message)))

    async def _write(self, data: bytes) -> bool:
        async with self._lock:
            if self.broken:
                return False
            try:
                if self.response is None:
                    response = web.StreamResponse(
                        headers={
                            hdrs.CONTENT_TYPE: _EVENT_STREAM,
                            hdrs.CACHE_CONTROL: "no-cache",
                            "X-Accel-Buffering": "no",  # proxies must not hold events back
                        }
                    )
                    self._view.add_cors_headers(self._request, response)
                    await response.prepare(self._request)
                    self.response = response
                    self._pinger = asyncio.create_task(self._ping())
                await self.response.write(data)
            except (ConnectionError, RuntimeError) as err:
                # RuntimeError: aiohttp's "connection lost" on a transport already closed.
                _LOGGER.debug("MCP client left its POST stream: %s", err)
                self.broken = True
                return False
            return True

    async def _ping(self) -> None:
        while not self.broken:
            await asyncio.sleep(self._keepalive)
            await self._write(b": keepalive\n\n")

    def stop(self) -> None:
        """No more keepalives."""
        if self._pinger is not None:
            self._pinger.cancel()

    async def finish(self, body: Any) -> web.StreamResponse:
        """The final answer as the stream's last event."""
        assert self.response is not None
        if self._pinger is not None:
            self._pinger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pinger
        if body is not None:
            await self._write(sse_event(dumps(body)))
        if not self.broken:
            with contextlib.suppress(ConnectionError, RuntimeError):
                await self.response.write_eof()
        return self.response


class McpGatewayView(CorsView):
    """POST /api/mcp_gateway: Streamable HTTP, stateless, JSON answers."""

    url = GATEWAY_URL
    name = "api:mcp_gateway"
    requires_auth = False  # admit() authenticates, to answer 401 with WWW-Authenticate

    async def post(self, request: web.Request) -> web.StreamResponse:
        """One JSON-RPC message (or a batch, for old protocol versions)."""
        admitted = await admit(request)
        if isinstance(admitted, web.Response):
            return admitted
        runtime, user = admitted
        if not _accepts_json(request):
            body = error_body(None, INVALID_REQUEST, "This server answers application/json")
            return json_response(body, HTTPStatus.NOT_ACCEPTABLE)
        payload = await decode_body(request)
        if isinstance(payload, web.Response):
            return payload
        if (refused := charge_batch(request.app[KEY_HASS], runtime, user, payload)) is not None:
            return refused
        # A client that takes an event stream may be asked questions during its request.
        stream = PostStream(self, request, runtime.stream_keepalive)
        try:
            reply = await runtime.server.handle_http(
                payload,
                headers=request.headers.items(),
                user=user,
                client_hint=runtime.client_hint(request, payload),
                outbound=stream if _accepts_events(request) else None,
                client_capabilities=runtime.client_capabilities(request),
            )
        except BaseException:
            stream.stop()
            raise
        if stream.response is not None:
            return await stream.finish(reply.body)
        if reply.body is None:
            return web.Response(status=reply.status)
        response = json_response(reply.body, reply.status)
        if reply.status == HTTPStatus.OK and (
            session_id := runtime.remember_capabilities(request, payload)
        ):
            response.headers[MCP_SESSION_ID] = session_id
        return response

    async def get(self, request: web.Request) -> web.StreamResponse:
        """No server-initiated stream: the endpoint is stateless."""
        return await self._not_allowed(request)

    async def delete(self, request: web.Request) -> web.StreamResponse:
        """No sessions to end."""
        return await self._not_allowed(request)

    @staticmethod
    async def _not_allowed(request: web.Request) -> web.StreamResponse:
        admitted = await admit(request)
        if isinstance(admitted, web.Response):
            return admitted
        return web.Response(status=HTTPStatus.METHOD_NOT_ALLOWED, headers={hdrs.ALLOW: "POST"})
