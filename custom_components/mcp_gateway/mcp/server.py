"""Transport-free MCP server core: JSON-RPC shape, version eras, dispatch, result shaping.

The HTTP views hand it decoded bodies and the few headers that matter; it answers with a JSON
value and the HTTP status that value should travel with. What the tools, resources and prompts
are is the `ServerHandler`'s business. Nothing here imports Home Assistant.

Two eras share one endpoint:
- legacy (2024-11-05 … 2025-11-25): `initialize` negotiates a version, later requests name it in
  the `MCP-Protocol-Version` header (missing means 2025-03-26), JSON-RPC errors travel with
  HTTP 200, and batches exist up to 2025-03-26;
- modern (2026-07-28): every request carries its version in `params._meta`, mirrored in
  headers; `server/discover` replaces `initialize`; results carry `resultType`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
import functools
import logging
import re
from typing import Any, Final, Protocol, TypeGuard

from . import codec
from .elicitation import (
    Continuations,
    Elicit,
    InputRequired,
    Outbound,
    PendingRequests,
    UnknownRequestStateError,
    call_fingerprint,
    legacy_elicit,
    supports_elicitation,
)
from .types import (
    CallToolResult,
    DiscoverResult,
    ErrorObject,
    GetPromptResult,
    Implementation,
    InitializeResult,
    InputRequiredResult,
    JsonRpcErrorResponse,
    JsonRpcResponse,
    Prompt,
    ReadResourceResult,
    RequestId,
    Resource,
    ServerCapabilities,
    ServerResult,
    Tool,
)

_LOGGER = logging.getLogger(__name__)

MODERN_VERSIONS: Final = ("2026-07-28",)
# Newest first: `initialize` answers with the first one when it cannot echo the client's.
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
SUPPORTED_VERSIONS: Final = (*MODERN_VERSIONS, *LEGACY_VERSIONS)
# A legacy request without MCP-Protocol-Version is a 2025-03-26 client (spec rule).
HEADERLESS_VERSION: Final = "2025-03-26"
# JSON-RPC batches were removed in 2025-06-18.
BATCH_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26"})

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# Server-defined: authenticated, but not allowed (the gateway's origin and user checks).
FORBIDDEN_CODE: Final = -32001
RESOURCE_NOT_FOUND: Final = -32002
HEADER_MISMATCH: Final = -32020
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022

META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"

HEADER_PROTOCOL_VERSION: Final = "mcp-protocol-version"
HEADER_METHOD: Final = "mcp-method"
HEADER_NAME: Final = "mcp-name"
_ROUTING_HEADERS: Final = frozenset({HEADER_PROTOCOL_VERSION, HEADER_METHOD, HEADER_NAME})
# Methods whose target is mirrored in the Mcp-Name header, and the param that holds it.
_NAME_PARAMS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

# Modern-era status for JSON-RPC error codes; everything else travels with 200.
_MODERN_STATUS: Final = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    -32021: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
# Results a client may cache get explicit (conservative) hints in the modern era.
_CACHEABLE: Final = frozenset(
    {
        "server/discover",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
    }
)

DEFAULT_MAX_RESULT_BYTES: Final = 256 * 1024
# A batch is one client's burst: its length and its whole answer are bounded, so one request
# cannot keep the event loop (and the memory) of the host busy for long.
MAX_BATCH_ITEMS: Final = 20
DEFAULT_MAX_BATCH_REPLY_BYTES: Final = 1024 * 1024
# A \uD800-\uDFFF escape: only bodies holding one can decode to a lone surrogate.
_SURROGATE_ESCAPE: Final = re.compile(rb"\\u[dD][89abcdefABCDEF]")

_B64_PREFIX: Final = "=?base64?"
_B64_SUFFIX: Final = "?="


@dataclass(frozen=True, slots=True)
class RequestContext:
    """Who asks, in which protocol version, for one request."""

    protocol_version: str  # negotiated / per-request version
    client_name: str | None  # clientInfo.name when known, else the transport's hint
    user: Any  # opaque to the core: the HA User of the request
    request_id: str | int | None
    # Ask the client's person a question mid-call (mcp/elicitation.py); None when the client
    # cannot be asked (no elicitation capability, an old version, no stream to ask over).
    elicit: Elicit | None = None


class ServerHandler(Protocol):
    """What the server exposes; the gateway implements it over Home Assistant."""

    async def list_tools(self, ctx: RequestContext) -> list[Tool]:
        """Full MCP Tool dicts the caller may use."""

    async def call_tool(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> CallToolResult:
        """A CallToolResult dict."""

    async def list_resources(self, ctx: RequestContext) -> list[Resource]:
        """MCP Resource dicts."""

    async def read_resource(self, ctx: RequestContext, uri: str) -> ReadResourceResult:
        """A ReadResourceResult dict."""

    async def list_prompts(self, ctx: RequestContext) -> list[Prompt]:
        """MCP Prompt dicts."""

    async def get_prompt(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> GetPromptResult:
        """A GetPromptResult dict."""


class McpServerError(Exception):
    """A JSON-RPC error a handler raises on purpose; the core sends it as is."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class UnknownToolError(McpServerError):
    """tools/call named a tool the caller cannot see."""

    def __init__(self, name: str) -> None:
        super().__init__(INVALID_PARAMS, f"Unknown tool: {name}")


class InvalidParamsError(McpServerError):
    """The request's params are not acceptable."""

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(INVALID_PARAMS, message, data)


class ResourceNotFoundError(McpServerError):
    """resources/read named a URI that does not exist (for this caller)."""

    def __init__(self, uri: str) -> None:
        super().__init__(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


class _MethodNotFound(McpServerError):
    def __init__(self, method: str) -> None:
        super().__init__(METHOD_NOT_FOUND, f"Method not found: {method}")


@dataclass(frozen=True, slots=True)
class Reply:
    """What a transport sends back: a JSON value (None = no body) and its HTTP status."""

    status: int
    body: Any = None


@dataclass(slots=True)
class SessionState:
    """What a stateful transport (HTTP+SSE) remembers between the messages of one client."""

    protocol_version: str = LEGACY_VERSIONS[-1]
    client_name: str | None = None
    client_capabilities: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Era:
    """How one message is treated: its version, whether modern, and the client's name."""

    version: str
    modern: bool
    client_name: str | None
    session: SessionState | None = None
    # How to send the client a request during this message, and what it declared it handles.
    outbound: Outbound | None = None
    capabilities: Mapping[str, Any] | None = None


def error_body(request_id: Any, code: int, message: str, data: Any = None) -> JsonRpcErrorResponse:
    """A JSON-RPC error response."""
    error: ErrorObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def parse_json(body: bytes) -> Any:
    """Decode a request body; raise ValueError for anything that is not JSON text.

    A lone UTF-16 surrogate (`"\\ud800"`) is valid JSON but no Unicode text: nothing later
    could encode it (answers, logs, HA's own JSON), so it is refused here as malformed.
    """
    try:
        value = codec.loads(body)
    except (UnicodeDecodeError, RecursionError) as err:
        # Deep nesting and bad UTF-8 are client faults like any other malformed body.
        raise ValueError(str(err)) from err
    if _SURROGATE_ESCAPE.search(body) and _has_lone_surrogate(value):
        raise ValueError("lone UTF-16 surrogate")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string (key or value) in a decoded JSON value holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode()
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


_MAX_ID: Final = 2**63 - 1


def _valid_id(value: Any) -> TypeGuard[RequestId]:
    # MCP narrows JSON-RPC ids to strings and integers; bool is an int subclass in Python.
    # Integers beyond 64 bits are refused: many peers (and fast encoders) cannot carry them.
    if isinstance(value, str):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and -_MAX_ID <= value <= _MAX_ID


def _decode_header(value: str | None) -> str | None:
    """Undo the `=?base64?…?=` wrapping clients use for non-ASCII header values."""
    if value is None or not (value.startswith(_B64_PREFIX) and value.endswith(_B64_SUFFIX)):
        return value
    payload = value[len(_B64_PREFIX) : -len(_B64_SUFFIX)]
    try:
        return base64.b64decode(payload, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def _client_name(info: Any) -> str | None:
    if isinstance(info, Mapping) and isinstance(name := info.get("name"), str) and name:
        return name[:200]
    return None


@dataclass(slots=True)
class _Headers:
    """The routing headers of one HTTP request, folded, with duplicates noted."""

    values: dict[str, str] = field(default_factory=dict)
    duplicated: str | None = None

    @classmethod
    def fold(cls, pairs: Iterable[tuple[str, str]]) -> _Headers:
        headers = cls()
        for name, value in pairs:
            key = name.lower()
            if key not in _ROUTING_HEADERS:
                continue
            if key in headers.values and headers.duplicated is None:
                headers.duplicated = key
            headers.values[key] = value
        return headers


class McpServer:
    """Serves MCP messages for one handler; transports call `handle_http` / `handle_session`."""

    def __init__(
        self,
        handler: ServerHandler,
        *,
        name: str,
        version: str,
        title: str | None = None,
        instructions: str | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_batch_reply_bytes: int = DEFAULT_MAX_BATCH_REPLY_BYTES,
        dumps: Callable[[Any], bytes] | None = None,
    ) -> None:
        self.handler = handler
        self.server_info: Implementation = {"name": name, "version": version}
        if title:
            self.server_info["title"] = title
        self.instructions = instructions
        self.max_result_bytes = max_result_bytes
        self.max_batch_reply_bytes = max_batch_reply_bytes
        self._dumps = dumps or codec.dumps
        self.capabilities: ServerCapabilities = {
            "tools": {"listChanged": False},
            "resources": {"subscribe": False, "listChanged": False},
            "prompts": {"listChanged": False},
        }
        # Questions asked of clients: legacy ones wait for a POSTed response, modern calls
        # stay suspended until the client calls again with its answer.
        self.pending = PendingRequests()
        self.continuations = Continuations()

    # --- entry points ----------------------------------------------------------------------

    async def handle_http(
        self,
        payload: Any,
        *,
        headers: Iterable[tuple[str, str]] = (),
        user: Any = None,
        client_hint: str | None = None,
        outbound: Outbound | None = None,
        client_capabilities: Mapping[str, Any] | None = None,
    ) -> Reply:
        """One Streamable HTTP POST (stateless): a decoded body in, a reply out.

        `outbound` sends the client requests during a legacy request (the POST's answer as an
        event stream); `client_capabilities` is what the client declared at initialize, as
        far as the transport remembers it.
        """
        folded = _Headers.fold(headers)
        header_version = folded.values.get(HEADER_PROTOCOL_VERSION)
        if isinstance(payload, list):
            return await self._http_batch(payload, header_version, user, client_hint)
        if not isinstance(payload, dict):
            return Reply(400, error_body(None, INVALID_REQUEST, "Body must be a JSON-RPC object"))
        if self._is_modern(payload, header_version):
            return await self._http_modern(payload, folded, user, client_hint)
        return await self._http_legacy(
            payload,
            header_version,
            user,
            client_hint,
            outbound=outbound,
            capabilities=client_capabilities,
        )

    async def handle_session(
        self,
        payload: Any,
        *,
        session: SessionState,
        user: Any = None,
        outbound: Outbound | None = None,
    ) -> Reply:
        """One message (or batch) of a stateful legacy session, e.g. the HTTP+SSE transport.

        A reply with status 202 has its body (when not None) delivered over the session's stream.
        `outbound` sends the client requests over that stream.
        """
        era = _Era(
            session.protocol_version,
            False,
            session.client_name,
            session,
            outbound,
            session.client_capabilities,
        )
        if isinstance(payload, list):
            if session.protocol_version not in BATCH_VERSIONS:
                return Reply(
                    202,
                    error_body(
                        None,
                        INVALID_REQUEST,
                        f"Batches are not supported in protocol {session.protocol_version}",
                    ),
                )
            if refused := _batch_refusal(payload):
                return Reply(202, refused)
            return Reply(202, await self._batch(payload, era, user) or None)
        return Reply(202, await self._legacy(payload, era, user, False))

    # --- eras ------------------------------------------------------------------------------

    @staticmethod
    def _is_modern(payload: dict[str, Any], header_version: str | None) -> bool:
        if header_version in MODERN_VERSIONS:
            return True
        if header_version in LEGACY_VERSIONS:
            return False
        # No or an unknown header: the body decides (an envelope, or discover, is modern).
        params = payload.get("params")
        has_envelope = isinstance(params, dict) and (
            isinstance(meta := params.get("_meta"), dict) and META_PROTOCOL_VERSION in meta
        )
        return has_envelope or payload.get("method") == "server/discover"

    async def _http_batch(
        self, payload: list[Any], header_version: str | None, user: Any, hint: str | None
    ) -> Reply:
        version = header_version or HEADERLESS_VERSION
        if version not in SUPPORTED_VERSIONS:
            return self._unsupported_header(version)
        if version not in BATCH_VERSIONS:
            message = f"JSON-RPC batches are not supported in protocol {version}"
            return Reply(400, error_body(None, INVALID_REQUEST, message))
        if refused := _batch_refusal(payload):
            return Reply(400, refused)
        answers = await self._batch(payload, _Era(version, False, hint), user)
        return Reply(200, answers) if answers else Reply(202)

    async def _batch(self, payload: list[Any], era: _Era, user: Any) -> list[JsonRpcResponse]:
        """Answer a batch's items in order, within the batch reply's size.

        Each item yields to the event loop first, so other requests (and HA) run between them.
        Once the answers reach max_batch_reply_bytes, the items left are not run: each gets an
        error saying so, and the client can send them again on their own.
        """
        answers: list[JsonRpcResponse] = []
        size = 0
        for item in payload:
            await asyncio.sleep(0)
            if size > self.max_batch_reply_bytes:
                message = (
                    f"Not run: the batch's answers reached {self.max_batch_reply_bytes} bytes; "
                    "send this request again on its own"
                )
                answers.append(error_body(_id_or_none(item), INTERNAL_ERROR, message))
                continue
            if (answer := await self._legacy(item, era, user, True)) is None:
                continue
            size += len(self._dumps(answer))
            if size > self.max_batch_reply_bytes:
                # This answer is what crossed the limit; its request has run, say so.
                message = (
                    f"The answer exceeded the batch's {self.max_batch_reply_bytes} bytes and "
                    "was withheld; the request has run"
                )
                answer = error_body(answer.get("id"), INTERNAL_ERROR, message)
            answers.append(answer)
        return answers

    async def _http_legacy(
        self,
        payload: dict[str, Any],
        header_version: str | None,
        user: Any,
        hint: str | None,
        *,
        outbound: Outbound | None = None,
        capabilities: Mapping[str, Any] | None = None,
    ) -> Reply:
        if (
            payload.get("method") != "initialize"
            and header_version is not None
            and header_version not in SUPPORTED_VERSIONS
        ):
            return self._unsupported_header(header_version, _id_or_none(payload))
        version = header_version or HEADERLESS_VERSION
        era = _Era(version, False, hint, None, outbound, capabilities)
        answer = await self._legacy(payload, era, user, False)
        if answer is None:
            return Reply(202)
        # Only malformed messages are transport errors; everything else is a JSON-RPC answer.
        if "error" in answer and answer["error"]["code"] in (PARSE_ERROR, INVALID_REQUEST):
            return Reply(400, answer)
        return Reply(200, answer)

    @staticmethod
    def _unsupported_header(version: str, request_id: Any = None) -> Reply:
        message = f"Unsupported MCP-Protocol-Version: {version[:64]}"
        data = {"supported": list(SUPPORTED_VERSIONS), "requested": version[:64]}
        return Reply(400, error_body(request_id, INVALID_REQUEST, message, data))

    async def _legacy(
        self, message: Any, era: _Era, user: Any, in_batch: bool
    ) -> JsonRpcResponse | None:
        """Answer one legacy message; None for notifications and posted responses."""
        if not isinstance(message, dict):
            return error_body(None, INVALID_REQUEST, "Message must be a JSON-RPC object")
        if "method" not in message:
            # A client's response to a server request: handed to the question waiting for it;
            # one that answers nothing waiting (late, unknown, another user's) is dropped.
            if _valid_id(message.get("id")) and ("result" in message or "error" in message):
                self.pending.resolve(message, user)
                return None
            return error_body(_id_or_none(message), INVALID_REQUEST, "Invalid JSON-RPC message")
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return error_body(_id_or_none(message), INVALID_REQUEST, "Invalid JSON-RPC request")
        if "id" not in message:
            return None  # a notification: nothing to answer, nothing we act on
        request_id = message["id"]
        if not _valid_id(request_id):
            return error_body(None, INVALID_REQUEST, "Request id must be a string or an integer")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error_body(request_id, INVALID_REQUEST, "params must be an object")
        method: str = message["method"]
        result: ServerResult
        try:
            if method == "initialize" and in_batch:
                return error_body(request_id, INVALID_REQUEST, "initialize must not be batched")
            if method == "initialize":
                result = self._initialize(params, era)
            elif method == "ping":
                result = {}
            else:
                ctx = RequestContext(
                    era.version, era.client_name, user, request_id, self._legacy_elicit(era, user)
                )
                result = await self._dispatch(method, params, ctx)
        except McpServerError as err:
            return error_body(request_id, err.code, err.message, err.data)
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    def _legacy_elicit(self, era: _Era, user: Any) -> Elicit | None:
        """`ctx.elicit` for a legacy request: only with a stream to ask over, a version that
        has elicitation and a client that declared it."""
        if era.outbound is None or not supports_elicitation(era.version, era.capabilities):
            return None
        return functools.partial(legacy_elicit, self.pending, era.outbound, user)

    def _initialize(self, params: dict[str, Any], era: _Era) -> InitializeResult:
        requested = params.get("protocolVersion")
        version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]
        if era.session is not None:
            era.session.protocol_version = version
            era.session.client_name = _client_name(params.get("clientInfo"))
            capabilities = params.get("capabilities")
            era.session.client_capabilities = (
                dict(capabilities) if isinstance(capabilities, dict) else {}
            )
        result: InitializeResult = {
            "protocolVersion": version,
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    async def _http_modern(
        self, payload: dict[str, Any], headers: _Headers, user: Any, hint: str | None
    ) -> Reply:
        if "id" not in payload:
            return self._modern_notification(payload, headers)
        request_id = payload.get("id")
        if (
            not _valid_id(request_id)
            or payload.get("jsonrpc") != "2.0"
            or not isinstance(payload.get("method"), str)
            or not isinstance(payload.get("params", {}), dict)
        ):
            reply_id = request_id if _valid_id(request_id) else None
            return _modern_error(reply_id, INVALID_REQUEST, "Invalid JSON-RPC request")
        method: str = payload["method"]
        params: dict[str, Any] = payload.get("params") or {}
        meta = params.get("_meta")
        if not isinstance(meta, dict):
            message = (
                f"params._meta must be an object with {META_PROTOCOL_VERSION} "
                f"and {META_CLIENT_CAPABILITIES}"
            )
            return _modern_error(request_id, INVALID_PARAMS, message)
        missing = [k for k in (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES) if k not in meta]
        if missing:
            message = f"params._meta is missing {', '.join(missing)}"
            return _modern_error(request_id, INVALID_PARAMS, message)
        version = meta[META_PROTOCOL_VERSION]
        if mismatch := self._header_mismatch(method, params, version, headers):
            return _modern_error(request_id, HEADER_MISMATCH, mismatch)
        if not isinstance(version, str):
            return _modern_error(
                request_id, INVALID_PARAMS, "The protocol version must be a string"
            )
        if version not in MODERN_VERSIONS:
            data = {"supported": list(SUPPORTED_VERSIONS), "requested": version[:64]}
            return _modern_error(
                request_id, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data
            )
        client = _client_name(meta.get(META_CLIENT_INFO)) or hint
        ctx = RequestContext(version, client, user, request_id)
        result: ServerResult
        try:
            if method == "server/discover":
                discovered: DiscoverResult = {
                    "supportedVersions": list(SUPPORTED_VERSIONS),
                    "capabilities": self.capabilities,
                }
                if self.instructions:
                    discovered["instructions"] = self.instructions
                result = discovered
            elif method == "tools/call":
                capabilities = meta.get(META_CLIENT_CAPABILITIES)
                outcome = await self._modern_tool_call(params, ctx, capabilities)
                if isinstance(outcome, InputRequired):
                    answer: InputRequiredResult = {
                        **outcome.result(),
                        "_meta": {META_SERVER_INFO: self.server_info},
                    }
                    response: JsonRpcResponse = {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": answer,
                    }
                    return Reply(200, response)
                result = outcome
            else:
                result = await self._dispatch(method, params, ctx)
        except McpServerError as err:
            return _modern_error(request_id, err.code, err.message, err.data)
        # The modern envelope's members, added to whichever result it is.
        complete: dict[str, Any] = {**result, "resultType": "complete"}
        if method in _CACHEABLE:
            complete.setdefault("ttlMs", 0)
            complete.setdefault("cacheScope", "private")
        result_meta = complete.get("_meta")
        complete["_meta"] = {
            **(result_meta if isinstance(result_meta, dict) else {}),
            META_SERVER_INFO: self.server_info,
        }
        response = {"jsonrpc": "2.0", "id": request_id, "result": complete}
        return Reply(200, response)

    @staticmethod
    def _modern_notification(payload: dict[str, Any], headers: _Headers) -> Reply:
        if payload.get("jsonrpc") != "2.0" or not isinstance(payload.get("method"), str):
            return _modern_error(None, INVALID_REQUEST, "Invalid JSON-RPC notification")
        version = headers.values.get(HEADER_PROTOCOL_VERSION)
        if version is not None and version not in SUPPORTED_VERSIONS:
            data = {"supported": list(SUPPORTED_VERSIONS), "requested": version[:64]}
            return _modern_error(
                None, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data
            )
        return Reply(202)

    @staticmethod
    def _header_mismatch(
        method: str, params: dict[str, Any], version: Any, headers: _Headers
    ) -> str | None:
        """Why the routing headers disagree with the body, or None when they agree."""
        if headers.duplicated is not None:
            return f"The {headers.duplicated} header appears more than once"
        values = headers.values
        header_version = values.get(HEADER_PROTOCOL_VERSION)
        if header_version is None or header_version != version:
            return "MCP-Protocol-Version does not match params._meta's protocol version"
        if values.get(HEADER_METHOD) != method:
            return "Mcp-Method does not match the request's method"
        if (key := _NAME_PARAMS.get(method)) is not None:
            target = params.get(key)
            if target is not None and _decode_header(values.get(HEADER_NAME)) != target:
                return f"Mcp-Name does not match params.{key}"
        return None

    async def _modern_tool_call(
        self, params: dict[str, Any], ctx: RequestContext, capabilities: Any
    ) -> CallToolResult | InputRequired:
        """tools/call in the modern era: the handler may ask a question (`input_required`),
        and stays suspended until the client calls again with its answer and requestState."""
        name = _str_param(params, "name")
        arguments = _object_param(params, "arguments")
        fingerprint = call_fingerprint("tools/call", name, arguments)
        state = params.get("requestState")
        if state is not None:
            if not isinstance(state, str):
                raise InvalidParamsError("params.requestState must be a string")
            try:
                outcome = await self.continuations.resume(
                    ctx.user, fingerprint, state, params.get("inputResponses")
                )
            except UnknownRequestStateError:
                # Expired, used once already, from before a restart, another caller's or for
                # other arguments: nothing runs, the client starts over.
                raise InvalidParamsError(
                    "Invalid or expired requestState: call the tool again without it"
                ) from None
        else:

            async def run(elicit: Elicit | None) -> CallToolResult:
                with _handler_failures("tools/call"):
                    return await self._call_tool(params, replace(ctx, elicit=elicit))

            can_ask = supports_elicitation(ctx.protocol_version, capabilities)
            outcome = await self.continuations.start(ctx.user, fingerprint, run, can_ask)
        return outcome

    def close(self) -> None:
        """Drop every question waiting for an answer (the host stops): nothing runs on."""
        self.continuations.close()

    # --- methods ---------------------------------------------------------------------------

    async def _dispatch(
        self, method: str, params: dict[str, Any], ctx: RequestContext
    ) -> ServerResult:
        """Run one request method through the handler; McpServerError for client faults."""
        handler = self.handler
        with _handler_failures(method):
            if method == "tools/list":
                _no_cursor(params)
                return {"tools": await handler.list_tools(ctx)}
            if method == "tools/call":
                return await self._call_tool(params, ctx)
            if method == "resources/list":
                _no_cursor(params)
                return {"resources": await handler.list_resources(ctx)}
            if method == "resources/templates/list":
                _no_cursor(params)
                return {"resourceTemplates": []}
            if method == "resources/read":
                return await handler.read_resource(ctx, _str_param(params, "uri"))
            if method == "prompts/list":
                _no_cursor(params)
                return {"prompts": await handler.list_prompts(ctx)}
            if method == "prompts/get":
                name = _str_param(params, "name")
                return await handler.get_prompt(ctx, name, _object_param(params, "arguments"))
        raise _MethodNotFound(method)

    async def _call_tool(self, params: dict[str, Any], ctx: RequestContext) -> CallToolResult:
        name = _str_param(params, "name")
        arguments = _object_param(params, "arguments")
        result = await self.handler.call_tool(ctx, name, arguments)
        return self._guard_tool_result(name, result)

    def _guard_tool_result(self, name: str, result: CallToolResult) -> CallToolResult:
        """Check the handler's result and keep it within the response size limit."""
        if not isinstance(result, dict) or not isinstance(result.get("content"), list):
            _LOGGER.error("Tool %s returned a malformed result", name)
            raise McpServerError(INTERNAL_ERROR, "Internal error")
        if _surely_within(result, self.max_result_bytes):
            return result
        size = _result_size(result, self._dumps)
        if size <= self.max_result_bytes:
            return result
        # An explicit, readable stand-in: the AI learns that data was withheld and why.
        text = (
            f"The result of {name} is {size} bytes, more than this gateway returns at once "
            f"({self.max_result_bytes} bytes), so it was withheld. If the tool changes "
            "anything, it has run. Ask for less: use filters, fields or a shorter period."
        )
        return {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {
                "truncated": True,
                "resultBytes": size,
                "limitBytes": self.max_result_bytes,
            },
            "isError": True,
        }


@contextmanager
def _handler_failures(method: str) -> Iterator[None]:
    """A handler's failure as the client sees it: its McpServerError as it is, anything
    else as an internal error."""
    try:
        yield
    except McpServerError:
        raise
    except Exception:
        # A handler bug must not take the transport down, nor leak its details to clients.
        _LOGGER.exception("MCP %s failed", method)
        raise McpServerError(INTERNAL_ERROR, "Internal error") from None


def _surely_within(result: CallToolResult, limit: int) -> bool:
    """Whether a result of text parts only fits whatever its text holds: a character is at
    most 6 bytes encoded (`\u001f`), so most results need no measuring at all."""
    if "structuredContent" in result:
        return False
    chars = 0
    for part in result["content"]:
        if (text := _plain_text(part)) is None:
            return False
        chars += len(text)
    return 64 + 6 * chars + 32 * len(result["content"]) <= limit


def _plain_text(part: Any) -> str | None:
    """The text of a part that is `{"type": "text", "text": …}` and nothing more."""
    text = part.get("text") if isinstance(part, dict) else None
    return text if isinstance(text, str) and len(part) <= 2 else None


def _result_size(result: CallToolResult, dumps: Callable[[Any], bytes]) -> int:
    """About the encoded size of a tool result, without encoding it a first time.

    Text parts (most results are one) are measured as their string encodes, escapes and
    all (one pass in the encoder: measuring the UTF-8 and counting the characters to escape
    took four times as long); only other parts and structuredContent are encoded whole to
    be measured. The view encodes the response once.
    """
    size = 64
    for part in result["content"]:
        if (text := _plain_text(part)) is not None:
            size += 30 + len(dumps(text))  # the string's two quotes included
        else:
            size += len(dumps(part))
    if "structuredContent" in result:
        size += len(dumps(result["structuredContent"]))
    return size


def _id_or_none(message: Any) -> Any:
    request_id = message.get("id") if isinstance(message, dict) else None
    return request_id if _valid_id(request_id) else None


def _batch_refusal(payload: list[Any]) -> JsonRpcErrorResponse | None:
    """The error for a batch refused as a whole (empty, or longer than MAX_BATCH_ITEMS)."""
    if not payload:
        return error_body(None, INVALID_REQUEST, "Empty batch")
    if len(payload) > MAX_BATCH_ITEMS:
        message = f"A batch holds at most {MAX_BATCH_ITEMS} messages; this one has {len(payload)}"
        return error_body(None, INVALID_REQUEST, message, {"maxBatchItems": MAX_BATCH_ITEMS})
    return None


def _modern_error(request_id: Any, code: int, message: str, data: Any = None) -> Reply:
    return Reply(_MODERN_STATUS.get(code, 200), error_body(request_id, code, message, data))


def _str_param(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str):
        raise InvalidParamsError(f"params.{key} must be a string")
    return value


def _object_param(params: dict[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InvalidParamsError(f"params.{key} must be an object")
    return value


def _no_cursor(params: dict[str, Any]) -> None:
    # Catalogs come in one page, so no cursor we could have issued exists.
    if params.get("cursor") is not None:
        raise InvalidParamsError("Unknown cursor: this server returns every item in one page")
