"""An MCP client over Streamable HTTP, on an injected aiohttp ClientSession.

One client talks to one MCP endpoint. It negotiates either the stateless 2026-07-28 form
(`server/discover`, per-request `_meta`) or the legacy `initialize` handshake (2024-11-05 …
2025-11-25, with an optional `Mcp-Session-Id`), reads answers given as JSON or as an SSE stream,
and maps every failure onto the errors in `errors.py`. It never re-sends a request that the
server may have acted on; the only retry is after a 404 on an expired session, which the spec
defines as "not processed".
"""

from __future__ import annotations

import asyncio
from base64 import b64encode
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
import functools
import itertools
import json
import logging
from typing import Any, Final, cast

import aiohttp
from aiohttp import hdrs
from yarl import URL

from . import codec
from .errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpInputRequiredError,
    McpProtocolError,
    McpRateLimitError,
    McpResponseTooLargeError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
)
from .sse import SseDecoder
from .types import (
    CallToolParams,
    ContentBlock,
    Implementation,
    InitializeParams,
    JsonRpcNotification,
    JsonRpcRequest,
    Meta,
    RequestId,
)

_LOGGER = logging.getLogger(__name__)

LATEST_LEGACY_VERSION: Final = "2025-11-25"
MODERN_VERSION: Final = "2026-07-28"
SUPPORTED_LEGACY_VERSIONS: Final = frozenset(
    {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
)
DEFAULT_TIMEOUT: Final = 10.0
# The most one answer (a JSON body, or one request's event stream) may hold before it is
# refused unread: far above what MCP servers send (the Hubitat app caps its own answers at
# 128 KiB), far below what would strain the host's memory.
DEFAULT_MAX_RESPONSE_BYTES: Final = 4 * 1024 * 1024
_READ_CHUNK: Final = 64 * 1024
DEFAULT_CLIENT_VERSION: Final = "0.1.0"

HEADER_SESSION: Final = "Mcp-Session-Id"
HEADER_VERSION: Final = "MCP-Protocol-Version"
HEADER_METHOD: Final = "Mcp-Method"
HEADER_NAME: Final = "Mcp-Name"
META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPS: Final = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

_ACCEPT_POST: Final = "application/json, text/event-stream"
# Without a `retry` field the spec leaves the delay to us; one second is gentle and short.
_DEFAULT_RETRY_MS: Final = 1000
# A stream that keeps dropping without ever answering is not going to answer.
_MAX_RESUMES: Final = 5
_MAX_PAGES: Final = 1000
# Multi round-trip requests (2026-07-28): a server still working on a continuation answers
# `input_required` again; this many retries (with a growing pause) before giving up.
_MAX_INPUT_ROUNDS: Final = 20
_INPUT_ROUND_PAUSE: Final = 0.25
_MAX_INPUT_ROUND_PAUSE: Final = 2.0
_CLOSE_TIMEOUT: Final = 5.0

# The wait before resuming a stream; a module attribute so tests can watch it without waiting.
_sleep = asyncio.sleep


# ---------------------------------------------------------------------------------------------
# Authentication
# ---------------------------------------------------------------------------------------------


class McpAuth:
    """How a request carries credentials. Subclasses add headers or query parameters."""

    __slots__ = ()

    def apply(self, headers: dict[str, str], url: URL) -> URL:
        """Add credentials to `headers` (in place) and return the URL to use."""
        return url


@dataclass(frozen=True, slots=True)
class BearerAuth(McpAuth):
    """`Authorization: Bearer <token>`."""

    token: str = field(repr=False)

    def apply(self, headers: dict[str, str], url: URL) -> URL:
        headers["Authorization"] = f"Bearer {self.token}"
        return url


@dataclass(frozen=True, slots=True)
class QueryTokenAuth(McpAuth):
    """The token as a query parameter (for servers that take `?access_token=`)."""

    token: str = field(repr=False)
    param: str = "access_token"

    def apply(self, headers: dict[str, str], url: URL) -> URL:
        return _with_query(url, self.param, self.token)


@functools.lru_cache(maxsize=16)
def _with_query(url: URL, param: str, token: str) -> URL:
    # Every request goes to the same URL: building it (yarl re-encodes the query) once will do.
    return url.update_query({param: token})


@dataclass(frozen=True, slots=True)
class BasicAuth(McpAuth):
    """HTTP Basic authentication."""

    user: str
    password: str = field(repr=False)

    def apply(self, headers: dict[str, str], url: URL) -> URL:
        raw = f"{self.user}:{self.password}".encode()
        headers["Authorization"] = f"Basic {b64encode(raw).decode('ascii')}"
        return url


# ---------------------------------------------------------------------------------------------
# Results and statistics
# ---------------------------------------------------------------------------------------------


_UNPARSED: Final = object()


# No slots: with them, assigning the `text` property would fail with a TypeError, not as a
# frozen field does.
@dataclass(frozen=True)
class ToolResult:
    """A `tools/call` result. `text` joins the text parts; `data` is the most useful form.

    Its parts are the server's as it sent them: passed on, not checked one by one.
    """

    content: list[ContentBlock]
    structured: Any = None
    is_error: bool = False
    meta: Meta | None = None
    # Both worked out on first use: the gateway passes most results on without reading them.
    _text: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)
    _data: Any = field(default=_UNPARSED, init=False, repr=False, compare=False)

    @property
    def text(self) -> str:
        """The text parts, joined by newlines."""
        if self._text is _UNPARSED:
            object.__setattr__(
                self,
                "_text",
                "\n".join(
                    part_text
                    for part in self.content
                    if isinstance(part, dict)
                    and part.get("type") == "text"
                    and isinstance(part_text := part.get("text"), str)
                ),
            )
        return cast(str, self._text)

    @property
    def data(self) -> Any:
        """structuredContent, else JSON parsed from the text, else the text."""
        if self._data is _UNPARSED:
            object.__setattr__(self, "_data", self._derive_data(self.text))
        return self._data

    def _derive_data(self, text: str) -> Any:
        if self.structured is not None:
            return self.structured
        try:
            return json.loads(text)
        except ValueError:
            return text

    @classmethod
    def from_result(cls, result: Mapping[str, Any]) -> ToolResult:
        """Build from the JSON `result` of `tools/call`; raises McpProtocolError if malformed."""
        content = result.get("content", [])
        if not isinstance(content, list):
            raise McpProtocolError("tools/call result has a non-list 'content'")
        meta = result.get("_meta")
        return cls(
            content=content,
            structured=result.get("structuredContent"),
            is_error=result.get("isError") is True,
            meta=meta if isinstance(meta, dict) else None,
        )


@dataclass(slots=True)
class McpStats:
    """Traffic counters (bodies only, not HTTP headers)."""

    requests: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0


# ---------------------------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _State:
    """What was negotiated. Replaced whole, so a request in flight keeps a consistent view."""

    modern: bool = False
    version: str | None = None
    session_id: str | None = None


_FRESH: Final = _State()
_PROBE: Final = _State(modern=True, version=MODERN_VERSION)


@dataclass(frozen=True, slots=True)
class _Exchange:
    """What one POST brought back: the JSON-RPC response (empty for notifications)."""

    message: dict[str, Any]
    headers: Mapping[str, str]


class _SessionExpired(Exception):
    """A 404 while holding a session: the server did not process the request."""

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self.session_id = session_id


class McpClient:
    """Client for one MCP endpoint. Safe for concurrent calls; `connect()` runs once."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        *,
        auth: McpAuth | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        client_name: str = "mcp_gateway",
        client_version: str = DEFAULT_CLIENT_VERSION,
        limits: Mapping[str, int] | None = None,
        prefer_modern: bool = True,
        headers: Mapping[str, str] | None = None,
        max_response_bytes: int | Callable[[], int] = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        """`max_response_bytes` caps each answer read (a callable is asked at every read)."""
        self._session = session
        self._max_response = max_response_bytes
        self._url = URL(url)
        self._auth = auth
        self._timeout = timeout
        self._client_timeout = aiohttp.ClientTimeout(total=timeout)
        self._client_info: Implementation = {"name": client_name, "version": client_version}
        self._prefer_modern = prefer_modern
        self._extra_headers = dict(headers or {})
        self._limits = {kind: asyncio.Semaphore(cap) for kind, cap in (limits or {}).items()}
        self._ids = itertools.count(1)
        self._lock = asyncio.Lock()
        self._connected = False
        self._state = _FRESH
        self._server_info: dict[str, Any] = {}
        self._capabilities: dict[str, Any] = {}
        self._instructions: str | None = None
        self.stats = McpStats()

    # -- negotiated state --------------------------------------------------------------------

    @property
    def timeout(self) -> float:
        """The configured seconds one request may take."""
        return self._timeout

    @property
    def max_response_bytes(self) -> int:
        """The most one answer may hold now, in bytes."""
        cap = self._max_response
        return cap() if callable(cap) else cap

    @property
    def url(self) -> str:
        """The endpoint as configured (credentials that auth adds are not in it)."""
        return str(self._url)

    @property
    def modern(self) -> bool:
        """True when the server speaks the stateless 2026-07-28 form."""
        return self._state.modern

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version, None before connecting."""
        return self._state.version

    @property
    def session_id(self) -> str | None:
        """The `Mcp-Session-Id` the server gave us, if any."""
        return self._state.session_id

    @property
    def server_info(self) -> dict[str, Any]:
        """The server's `serverInfo` (name, version, …)."""
        return self._server_info

    @property
    def capabilities(self) -> dict[str, Any]:
        """The server's declared capabilities."""
        return self._capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for models, if it gave any."""
        return self._instructions

    # -- lifecycle ---------------------------------------------------------------------------

    async def connect(self) -> None:
        """Negotiate with the server. Idempotent; concurrent callers share one handshake."""
        if self._connected:
            return
        async with self._lock:
            if self._handshake_done():  # by another caller while we waited for the lock
                return
            if self._prefer_modern and await self._discover():
                return
            await self._initialize()

    def _handshake_done(self) -> bool:
        # A call, not an attribute read: type checkers would keep the narrowing from before
        # the await and call the second check unreachable.
        return self._connected

    async def close(self) -> None:
        """End the session (DELETE, when the server gave one) and forget negotiated state."""
        async with self._lock:
            state = self._state
            self._connected = False
            self._state = _FRESH
            if state.session_id is None:
                return
            headers = self._base_headers(state)
            url = self._prepare(headers)
            try:
                async with asyncio.timeout(min(self._timeout, _CLOSE_TIMEOUT)):
                    async with self._session.delete(url, headers=headers) as resp:
                        self.stats.requests += 1
                        # 405 means the server does not let clients end sessions: fine.
                        _LOGGER.debug("DELETE of the MCP session answered %s", resp.status)
            except (TimeoutError, aiohttp.ClientError) as err:
                _LOGGER.debug("Could not end the MCP session: %s", self._redact(str(err)))

    # -- public calls ------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - part of the documented API
    ) -> dict[str, Any]:
        """Send a JSON-RPC request and return its `result` object."""
        if not self._connected:
            await self.connect()
        try:
            return await self._request_once(method, params, timeout)
        except _SessionExpired as expired:
            await self._reinitialize(expired.session_id)
        try:
            return await self._request_once(method, params, timeout)
        except _SessionExpired as expired:
            raise McpConnectionError(
                f"{method}: session not found (HTTP 404) again after a new initialize",
                status=404,
            ) from expired

    async def list_tools(
        self,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - part of the documented API
    ) -> list[dict[str, Any]]:
        """All tools, following `nextCursor` until the server has no more pages."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            result = await self.request(
                "tools/list", {"cursor": cursor} if cursor else None, timeout=timeout
            )
            page = result.get("tools")
            if not isinstance(page, list):
                raise McpProtocolError("tools/list result has no 'tools' list")
            tools.extend(tool for tool in page if isinstance(tool, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                return tools
            if not isinstance(cursor, str) or cursor in seen:
                raise McpProtocolError("tools/list returned a repeated or invalid nextCursor")
            seen.add(cursor)
        raise McpProtocolError(f"tools/list did not end after {_MAX_PAGES} pages")

    async def call_tool(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        kind: str = "read",
        timeout: float | None = None,  # noqa: ASYNC109 - part of the documented API
    ) -> ToolResult:
        """Call a tool. `kind` selects an in-flight cap from `limits`, if one is set."""
        params: CallToolParams = {"name": name, "arguments": dict(args or {})}
        semaphore = self._limits.get(kind)
        if semaphore is None:
            result = await self._call_rounds(params, timeout)
        else:
            # The whole continuation holds the slot: the server reserves one for it too.
            async with semaphore:
                result = await self._call_rounds(params, timeout)
        return ToolResult.from_result(result)

    async def _call_rounds(
        self,
        params: CallToolParams,
        timeout: float | None,  # noqa: ASYNC109 - passed on to each request
    ) -> dict[str, Any]:
        """`tools/call`, continuing a multi round-trip request (2026-07-28) to its end.

        An `input_required` result is no answer: the server ran nothing yet and may hold
        resources for the continuation (the Hubitat app reserves one of its two write slots
        for 3 minutes). Without `inputRequests` the spec lets the client retry the original
        request at once with the same arguments, echoing `requestState` verbatim; a server
        still working answers `input_required` again. `inputRequests` ask for elicitation,
        sampling or roots, capabilities we never declare, so they end in
        McpInputRequiredError rather than in an empty success.
        """
        result = await self.request("tools/call", params, timeout=timeout)
        for round_no in range(_MAX_INPUT_ROUNDS + 1):
            if result.get("resultType") != "input_required":
                return result
            requests = result.get("inputRequests")
            state = result.get("requestState")
            if requests:
                kinds = sorted(
                    {
                        str(item.get("method"))
                        for item in requests.values()
                        if isinstance(item, dict)
                    }
                    if isinstance(requests, dict)
                    else set()
                )
                raise McpInputRequiredError(
                    f"{params['name']}: the server asks for input this gateway cannot give "
                    f"({', '.join(kinds) or 'unknown requests'}); the call was not completed",
                    input_requests=requests,
                    request_state=state if isinstance(state, str) else None,
                )
            if not isinstance(state, str) or not state:
                raise McpProtocolError(
                    f"{params['name']}: input_required without requestState or inputRequests"
                )
            if round_no == _MAX_INPUT_ROUNDS:
                break
            if round_no:
                await _sleep(min(_INPUT_ROUND_PAUSE * round_no, _MAX_INPUT_ROUND_PAUSE))
            result = await self.request(
                "tools/call", {**params, "requestState": state}, timeout=timeout
            )
        raise McpProtocolError(
            f"{params['name']}: still input_required after {_MAX_INPUT_ROUNDS} continuations"
        )

    async def call(
        self,
        name: str,
        args: Mapping[str, Any] | None = None,
        *,
        kind: str = "read",
        timeout: float | None = None,  # noqa: ASYNC109 - part of the documented API
    ) -> Any:
        """Call a tool and return `ToolResult.data`; raise McpToolError when `isError`."""
        result = await self.call_tool(name, args, kind=kind, timeout=timeout)
        if result.is_error:
            raise McpToolError(result.text or f"Tool {name} failed", result)
        return result.data

    # -- handshakes (called with the lock held) ----------------------------------------------

    async def _discover(self) -> bool:
        """Try the 2026-07-28 form. True when the server takes it; False to fall back."""
        try:
            exchange = await self._post(
                _PROBE, self._request_body(_PROBE, "server/discover", None), None
            )
            result = _result_of(exchange.message)
        except (McpAuthError, McpRateLimitError, McpTimeoutError):
            raise
        except McpConnectionError as err:
            if err.status is None:
                raise  # unreachable: initialize would fail the same way
            _LOGGER.debug("server/discover refused (HTTP %s); using initialize", err.status)
            return False
        except McpError as err:
            _LOGGER.debug("server/discover failed (%s); using initialize", err)
            return False
        versions = _supported_versions(result)
        if MODERN_VERSION not in versions:
            _LOGGER.debug("server/discover offers %s; using initialize", versions)
            return False
        meta = _dict(result.get("_meta"))
        self._capabilities = _dict(result.get("capabilities"))
        self._server_info = _dict(result.get("serverInfo")) or _dict(meta.get(META_SERVER_INFO))
        self._instructions = _str_or_none(result.get("instructions"))
        self._state = _PROBE
        self._connected = True
        return True

    async def _initialize(self) -> None:
        params: InitializeParams = {
            "protocolVersion": LATEST_LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": self._client_info,
        }
        exchange = await self._post(_FRESH, self._request_body(_FRESH, "initialize", params), None)
        result = _result_of(exchange.message)
        version = result.get("protocolVersion")
        if version not in SUPPORTED_LEGACY_VERSIONS:
            raise McpProtocolError(f"Server chose unsupported protocol version {version!r}")
        state = _State(version=version, session_id=exchange.headers.get(HEADER_SESSION) or None)
        try:
            await self._notify_once(state, "notifications/initialized", None, None)
        except _SessionExpired as err:
            raise McpConnectionError(
                "the server forgot the session it just created", status=404
            ) from err
        self._capabilities = _dict(result.get("capabilities"))
        self._server_info = _dict(result.get("serverInfo"))
        self._instructions = _str_or_none(result.get("instructions"))
        self._state = state
        self._connected = True

    async def _reinitialize(self, stale_session: str) -> None:
        """Start a new session after a 404, unless a concurrent call already did."""
        async with self._lock:
            if self._state.session_id != stale_session:
                return
            _LOGGER.debug("MCP session expired; initializing again")
            self._connected = False
            await self._initialize()

    # -- one message -------------------------------------------------------------------------

    async def _request_once(
        self, method: str, params: Mapping[str, Any] | None, wait: float | None
    ) -> dict[str, Any]:
        state = self._state
        exchange = await self._post(state, self._request_body(state, method, params), wait)
        return _result_of(exchange.message)

    async def _notify_once(
        self,
        state: _State,
        method: str,
        params: Mapping[str, Any] | None,
        wait: float | None,
    ) -> None:
        body: JsonRpcNotification = {"jsonrpc": "2.0", "method": method}
        params = self._with_meta(state, params)
        if params is not None:
            body["params"] = params
        await self._post(state, body, wait)

    def _request_body(
        self, state: _State, method: str, params: Mapping[str, Any] | None
    ) -> JsonRpcRequest:
        body: JsonRpcRequest = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        params = self._with_meta(state, params)
        if params is not None:
            body["params"] = params
        return body

    def _with_meta(self, state: _State, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
        if not state.modern:
            return dict(params) if params is not None else None
        out = dict(params or {})
        meta = dict(out.get("_meta") or {})
        meta[META_VERSION] = MODERN_VERSION
        meta[META_CLIENT_INFO] = self._client_info
        meta[META_CLIENT_CAPS] = {}
        out["_meta"] = meta
        return out

    def _base_headers(self, state: _State) -> dict[str, str]:
        headers = dict(self._extra_headers)
        if state.version is not None:
            headers[HEADER_VERSION] = state.version
        if state.session_id is not None:
            headers[HEADER_SESSION] = state.session_id
        return headers

    def _prepare(self, headers: dict[str, str]) -> URL:
        return self._auth.apply(headers, self._url) if self._auth else self._url

    def _redact(self, text: str) -> str:
        """Keep credentials out of messages (aiohttp errors may quote the full URL)."""
        for secret in (getattr(self._auth, "token", None), getattr(self._auth, "password", None)):
            if secret:
                text = text.replace(secret, "***")
        return text

    async def _post(
        self, state: _State, body: JsonRpcRequest | JsonRpcNotification, wait: float | None
    ) -> _Exchange:
        """POST one message; for a request, return the matching response message."""
        headers = self._base_headers(state)
        headers["Accept"] = _ACCEPT_POST
        headers["Content-Type"] = "application/json"
        label = body["method"]
        if state.modern:
            headers[HEADER_METHOD] = label
            name = _routing_name(body)
            if name is not None:
                headers[HEADER_NAME] = name
        url = self._prepare(headers)
        payload = codec.dumps(body)
        # aiohttp's own total timeout (it replaces the session's default rather than adding a
        # second timer) covers connecting, sending and reading the whole body; the deadline
        # carries the same budget across stream resumptions.
        if wait is None:
            wait, client_timeout = self._timeout, self._client_timeout
        else:
            client_timeout = aiohttp.ClientTimeout(total=wait)
        deadline = asyncio.get_running_loop().time() + wait
        self.stats.requests += 1
        self.stats.bytes_sent += len(payload)
        # Once the server has answered with a status, it has the request: whatever fails after
        # that leaves the outcome unknown. Before, only a failure to connect proves it never
        # arrived.
        answered = False
        try:
            async with self._session.post(
                url, data=payload, headers=headers, timeout=client_timeout
            ) as resp:
                answered = True
                await self._check_status(resp, label, state)
                if "id" not in body:
                    if resp.content_type == "application/json":
                        # Nothing to use, but reading it lets the connection be reused.
                        self.stats.bytes_received += len(await self._read_body(resp, label))
                    return _Exchange({}, resp.headers)
                message = await self._read_response(resp, body["id"], label, state, deadline)
                return _Exchange(message, resp.headers)
        except TimeoutError as err:
            raise McpTimeoutError(
                f"{label}: no answer in time",
                may_have_run=answered or not isinstance(err, aiohttp.ConnectionTimeoutError),
            ) from err
        except aiohttp.ClientError as err:
            detail = self._redact(f"{err.__class__.__name__}: {err}")
            raise McpConnectionError(
                f"{label}: {detail}",
                may_have_run=answered or not isinstance(err, aiohttp.ClientConnectorError),
            ) from err

    async def _read_body(self, resp: aiohttp.ClientResponse, label: str) -> bytes:
        """The whole body, read in chunks and refused (connection dropped) past the cap."""
        cap = self.max_response_bytes
        if (length := resp.content_length) is not None:
            if length > cap:
                resp.close()
                raise self._too_large(label, cap)
            # Uncompressed, aiohttp reads exactly the declared length: one read will do. A
            # compressed body may unpack to far more than it declares: it is counted below.
            if resp.headers.get(hdrs.CONTENT_ENCODING, "identity").lower() == "identity":
                return await resp.read()
        body = bytearray()
        async for chunk in resp.content.iter_chunked(_READ_CHUNK):
            body += chunk
            if len(body) > cap:
                resp.close()
                raise self._too_large(label, cap)
        return bytes(body)

    @staticmethod
    def _too_large(label: str, cap: int) -> McpResponseTooLargeError:
        return McpResponseTooLargeError(
            f"{label}: the answer exceeds {cap} bytes and was not read", limit=cap
        )

    async def _check_status(
        self, resp: aiohttp.ClientResponse, label: str, state: _State | None
    ) -> None:
        """Raise the error an HTTP status means. `state` None: no session retry applies."""
        status = resp.status
        if status < 300:
            return
        if status in (401, 403):
            raise McpAuthError(
                f"{label}: HTTP {status}",
                status=status,
                challenge=resp.headers.get("WWW-Authenticate"),
            )
        if status == 429:
            retry_after = _parse_retry_after(resp.headers.get("Retry-After"))
            raise McpRateLimitError(f"{label}: HTTP 429", retry_after=retry_after)
        if status == 404 and state is not None and state.session_id is not None:
            raise _SessionExpired(state.session_id)
        raw = await self._read_body(resp, label)
        self.stats.bytes_received += len(raw)
        error = _rpc_error_in(raw)
        if error is not None:
            raise error
        if status >= 500 or status == 404:
            # A proxy's 502 or 504 may come after it passed the request on.
            raise McpConnectionError(
                f"{label}: HTTP {status}", status=status, may_have_run=status in (502, 504)
            )
        raise McpProtocolError(f"{label}: HTTP {status}", status=status)

    async def _read_response(
        self,
        resp: aiohttp.ClientResponse,
        request_id: RequestId,
        label: str,
        state: _State,
        deadline: float,
    ) -> dict[str, Any]:
        if resp.status in (202, 204):
            raise McpProtocolError(f"{label}: HTTP {resp.status} without a response")
        ctype = resp.content_type
        if ctype == "application/json":
            raw = await self._read_body(resp, label)
            self.stats.bytes_received += len(raw)
            try:
                message = codec.loads(raw)
            except ValueError as err:
                raise McpProtocolError(f"{label}: malformed JSON in the response") from err
            if (refusal := _gate_error(message, label, resp.status)) is not None:
                raise refusal
            if not isinstance(message, dict) or not _answers(message, request_id):
                raise McpProtocolError(f"{label}: the JSON body is not the response to it")
            return message
        if ctype == "text/event-stream":
            return await self._read_stream(resp, request_id, label, state, deadline)
        raise McpProtocolError(f"{label}: unexpected content type {ctype!r}")

    async def _read_stream(
        self,
        resp: aiohttp.ClientResponse,
        request_id: RequestId,
        label: str,
        state: _State,
        deadline: float,
    ) -> dict[str, Any]:
        """Read SSE until our response; resume with GET + Last-Event-ID if the stream ends."""
        decoder = SseDecoder()
        current = resp
        resumes = 0
        cap = self.max_response_bytes
        # Every event of this request's stream counts, skipped ones and resumed ones included:
        # a server that never answers cannot make us read without end.
        received = 0
        while True:
            broken: aiohttp.ClientError | None = None
            try:
                async for chunk in current.content.iter_any():
                    self.stats.bytes_received += len(chunk)
                    received += len(chunk)
                    if received > cap:
                        current.close()
                        raise self._too_large(label, cap)
                    for event in decoder.feed(chunk):
                        if event.event != "message":
                            _LOGGER.debug("%s: skipping SSE event %r", label, event.event)
                            continue
                        message = _match_event(event.data, request_id, label)
                        if message is not None:
                            if current.content.is_eof():
                                current.release()  # finished cleanly: keep the connection
                            else:
                                # The server may hold the stream open for other traffic.
                                current.close()
                            return message
            except TimeoutError:
                raise  # some aiohttp timeouts are also ClientConnectionErrors
            except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError) as err:
                broken = err
            finally:
                if current is not resp:
                    current.release()
            if decoder.last_event_id is None:
                if broken is not None:
                    raise McpConnectionError(
                        f"{label}: the event stream broke", may_have_run=True
                    ) from broken
                raise McpProtocolError(f"{label}: the event stream ended without a response")
            if resumes >= _MAX_RESUMES:
                raise McpProtocolError(f"{label}: no response after {resumes} stream resumptions")
            resumes += 1
            delay = (decoder.retry if decoder.retry is not None else _DEFAULT_RETRY_MS) / 1000
            if asyncio.get_running_loop().time() + delay >= deadline:
                raise TimeoutError  # the resume would start after the call's deadline
            _LOGGER.debug("%s: the stream ended early; resuming in %.3f s", label, delay)
            await _sleep(delay)
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise TimeoutError
            current = await self._resume(decoder.last_event_id, label, state, remaining)

    async def _resume(
        self, last_event_id: str, label: str, state: _State, remaining: float
    ) -> aiohttp.ClientResponse:
        headers = self._base_headers(state)
        headers["Accept"] = "text/event-stream"
        headers["Last-Event-ID"] = last_event_id
        url = self._prepare(headers)
        self.stats.requests += 1
        resp = await self._session.get(
            url, headers=headers, timeout=aiohttp.ClientTimeout(total=remaining)
        )
        try:
            await self._check_resumed(resp, label)
        except BaseException:
            resp.release()
            raise
        return resp

    async def _check_resumed(self, resp: aiohttp.ClientResponse, label: str) -> None:
        if resp.status == 405:
            raise McpProtocolError(
                f"{label}: the stream ended early and the server does not allow resuming",
                status=405,
            )
        await self._check_status(resp, label, None)
        if resp.content_type != "text/event-stream":
            raise McpProtocolError(
                f"{label}: resuming gave {resp.content_type!r}, not an event stream"
            )


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


# Some servers refuse a credential in a plain JSON body with HTTP 200 instead of a 401
# (Homecast's community server: `{"error": "Authentication required"}`).
_AUTH_REFUSALS: Final = ("authentication required", "unauthorized", "unauthorised")


def _gate_error(message: Any, label: str, status: int) -> McpError | None:
    """An auth refusal in a body that is not JSON-RPC at all, or None."""
    if not isinstance(message, dict) or "jsonrpc" in message:
        return None
    error = message.get("error")
    if isinstance(error, str) and any(word in error.lower() for word in _AUTH_REFUSALS):
        return McpAuthError(f"{label}: {error[:100]}", status=status)
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _routing_name(body: Mapping[str, Any]) -> str | None:
    params = body.get("params") or {}
    key = {"tools/call": "name", "resources/read": "uri"}.get(body["method"])
    if key is None:
        return None
    value = params.get(key)
    return value if isinstance(value, str) else None


def _supported_versions(result: Mapping[str, Any]) -> list[str]:
    """The versions a discover result advertises; tolerant of the names drafts used."""
    for key in ("supportedVersions", "supportedProtocolVersions", "protocolVersions"):
        value = result.get(key)
        if isinstance(value, list):
            return [v for v in value if isinstance(v, str)]
    single = result.get("protocolVersion")
    return [single] if isinstance(single, str) else []


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _answers(message: Mapping[str, Any], request_id: RequestId) -> bool:
    """Whether a message is the response to our request (an id-less error counts)."""
    if "method" in message:
        return False
    msg_id = message.get("id")
    return msg_id == request_id or (msg_id is None and "error" in message)


def _result_of(message: Mapping[str, Any]) -> dict[str, Any]:
    """The `result` of a response message, or the McpRpcError its `error` describes."""
    if "error" in message:
        raise _as_rpc_error(message["error"])
    result = message.get("result")
    if not isinstance(result, dict):
        raise McpProtocolError("response has neither a result object nor an error")
    return result


def _as_rpc_error(error: Any) -> McpError:
    if not isinstance(error, dict) or not isinstance(error.get("code"), int):
        return McpProtocolError(f"malformed JSON-RPC error: {error!r:.200}")
    message = error.get("message")
    return McpRpcError(error["code"], str(message) if message else "", error.get("data"))


def _rpc_error_in(raw: bytes) -> McpError | None:
    """A JSON-RPC error carried by a non-2xx HTTP answer, if the body holds one."""
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        return _as_rpc_error(message["error"])
    return None


def _match_event(data: str, request_id: RequestId, label: str) -> dict[str, Any] | None:
    """The response to our request if this event carries it; None for anything else."""
    try:
        message = json.loads(data)
    except ValueError as err:
        raise McpProtocolError(f"{label}: malformed JSON in an SSE event") from err
    if not isinstance(message, dict):
        raise McpProtocolError(f"{label}: an SSE event is not a JSON-RPC message")
    if "method" in message:
        # Server-to-client requests and notifications (progress, logging, sampling, …).
        _LOGGER.debug("%s: skipping server message %s", label, message.get("method"))
        return None
    if not _answers(message, request_id):
        _LOGGER.debug("%s: skipping a response to another request", label)
        return None
    return message


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait, from delta-seconds or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
