"""HTTP side of the Homecast simulator: Streamable HTTP MCP, bearer/OAuth auth, control routes."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass
import hashlib
import json
from pathlib import Path
import re
import secrets
from typing import Any
import uuid

from aiohttp import web
from yarl import URL

from simulators.base import (
    CLOCK,
    FAULTS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    STATS,
    RpcFailure,
    SimClock,
    make_app,
    on_shutdown,
    parse_json_body,
    rpc_error,
    rpc_result,
)

from .push import PUSH, community_ws_port, install
from .state import CONTROL, READ_SCOPE, VIEW, WRITE_SCOPE, Grant, HomecastSim, Session
from .tools import TOOLS_BY_NAME, ToolError, from_camel, list_tools, scope_allows

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
# Answer for a version we do not know: the one whose session rules this server follows.
FALLBACK_VERSION = "2025-03-26"
SERVER_INFO = {"name": "homecast", "version": "2026.11-sim"}
SESSION_NOT_FOUND = -32001
KNOWN_SCOPES = ("mcp:read", "mcp:write", "mcp:admin")
CODE_LIFETIME = 600.0


@dataclass
class Transport:
    """How the endpoint talks: SSE or JSON answers, sessions, Accept strictness."""

    sse: bool = True
    sessions: bool = True
    strict_accept: bool = True
    session_ttl: float | None = None  # idle seconds (SimClock) before a session is forgotten
    path: str = "/mcp"


HOMECAST = web.AppKey("homecast", HomecastSim)
COMMUNITY_AUTH = web.AppKey("homecast_community_auth", bool)
TRANSPORT = web.AppKey("homecast_transport", Transport)


def create_app(
    *,
    seed: int = 1,
    homes: int = 2,
    accessories_per_home: int = 24,
    vocabulary: str = "current",
    state_file: str | Path | None = None,
    sse: bool = True,
    sessions: bool = True,
    strict_accept: bool = True,
    session_ttl: float | None = None,
    write_delay: float = 0.1,
    token: str = "hc_test_token",
    analytics: bool = True,
    clock: SimClock | None = None,
    community: bool = False,
    community_auth: bool = True,
    push: bool = True,
    push_api_tokens: bool = False,
) -> web.Application:
    """A Homecast cloud endpoint at /mcp with its OAuth server; state at `app[HOMECAST]`.

    `community=True` serves the Homecast Mac app's community server instead (see
    `_community_post`); `community_auth` is its "require authentication" setting.
    `push` serves the edition's live-update WebSocket (push.py; False: none listens);
    `push_api_tokens` lets the cloud socket take `hc_` tokens (unknown upstream).
    """
    app = make_app(clock)
    app[HOMECAST] = HomecastSim(
        clock=app[CLOCK],
        seed=seed,
        homes=homes,
        accessories_per_home=accessories_per_home,
        vocabulary=vocabulary,
        state_file=state_file,
        write_delay=write_delay,
        token=token,
        analytics=analytics,
        community=community,
    )
    if push:
        hub = install(app, app[HOMECAST], community=community, api_tokens=push_api_tokens)
        hub.auth_enabled = community and community_auth
    if community:
        app[COMMUNITY_AUTH] = community_auth
        app[TRANSPORT] = Transport(sse=False, sessions=False, strict_accept=False)
        app.router.add_get("/health", _community_health)
        app.router.add_post("/mcp", _community_post)
        # Only POST /mcp reaches handleMCP; anything else falls through to "Not found".
        app.router.add_get("/mcp", _community_not_found)
        app.router.add_delete("/mcp", _community_not_found)
        app.router.add_route("*", "/_sim/homecast/{action}", _control)
        on_shutdown(app, _close_streams)
        return app
    app[TRANSPORT] = Transport(
        sse=sse, sessions=sessions, strict_accept=strict_accept, session_ttl=session_ttl
    )
    app.router.add_post("/mcp", _mcp_post)
    app.router.add_get("/mcp", _mcp_get)
    app.router.add_delete("/mcp", _mcp_delete)
    app.router.add_get("/.well-known/oauth-authorization-server", _as_metadata)
    app.router.add_get("/.well-known/oauth-protected-resource", _resource_metadata)
    app.router.add_get("/.well-known/oauth-protected-resource/mcp", _resource_metadata)
    app.router.add_post("/oauth/register", _register)
    app.router.add_get("/oauth/authorize", _authorize)
    app.router.add_post("/oauth/token", _token)
    app.router.add_post("/oauth/revoke", _revoke)
    app.router.add_route("*", "/_sim/homecast/{action}", _control)
    on_shutdown(app, _close_streams)
    return app


async def _community_health(request: web.Request) -> web.Response:
    """LocalHTTPServer.swift `/health` (answered by the app itself, no authentication)."""
    app = request.app
    port = request.url.port or 0
    return web.json_response(
        {
            "status": "ok",
            "mode": "community",
            "name": "Homecast simulator",
            "port": port,
            "wsPort": community_ws_port(app),
            "authEnabled": app[COMMUNITY_AUTH],
            "wsClients": len(app[PUSH].clients) if PUSH in app else 0,
            "bridgeAttached": True,
        }
    )


async def _close_streams(app: web.Application) -> None:
    app[HOMECAST].expire_sessions()


def _origin(request: web.Request) -> str:
    return str(request.url.origin())


# ---------------------------------------------------------------------------------------------
# The community server (the Homecast Mac app, http://<mac>:5656/mcp)

COMMUNITY_VERSION = "2024-11-05"
COMMUNITY_INFO = {"name": "homecast-community", "version": "1.0.0"}


def _community_json(body: Any) -> web.Response:
    # The app's HTTP front end answers every request 200 with the handler's JSON.
    return web.json_response(body, status=200)


async def _community_not_found(request: web.Request) -> web.Response:
    """src/server/local-server.ts: a path/method without a handler is `{error: Not found}`."""
    return _community_json({"error": "Not found"})


def _community_grant(request: web.Request) -> Grant | None:
    """The auth gate of src/server/local-server.ts `__localserver_http_handler`.

    With authentication on, a token not starting with `hc_` must be a valid OAuth token of
    the app; `hc_` tokens are let through here unchecked ("they have their own validation",
    which only /rest/ does). With it off, anyone gets in.
    """
    sim = request.app[HOMECAST]
    token = re.sub(r"^Bearer\s+", "", request.headers.get("Authorization", ""), flags=re.I)
    if request.app[COMMUNITY_AUTH] and not token.startswith("hc_"):
        return sim.grant_for(token) if token else None
    return Grant(frozenset({READ_SCOPE, WRITE_SCOPE}))


async def _community_post(request: web.Request) -> web.Response:
    """src/server/local-mcp.ts handleMCP: plain JSON-RPC, no sessions, no SSE, 2024-11-05."""
    sim = request.app[HOMECAST]
    grant = _community_grant(request)
    if grant is None:
        # Not JSON-RPC and not a 401: the gate's own answer.
        return _community_json({"error": "Authentication required"})
    try:
        message = parse_json_body(await request.read() or b"{}")
    except RpcFailure as err:
        return _community_json(rpc_error(None, PARSE_ERROR, err.message))
    request.app[STATS].record_message(message)
    if not isinstance(message, dict):
        return _community_json(rpc_error(None, PARSE_ERROR, "Parse error: not an object"))
    method = message.get("method")
    request_id = message.get("id")  # `request.id ?? null`: notifications get an answer too
    raw_params = message.get("params")
    params = raw_params if isinstance(raw_params, dict) else {}
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": COMMUNITY_VERSION,
            "serverInfo": COMMUNITY_INFO,
            "capabilities": {"tools": {}},
        }
    elif method in ("notifications/initialized", "ping"):
        result = {}
    elif method == "tools/list":
        result = {"tools": list_tools(sim, grant)}
    elif method == "tools/call":
        name = params.get("name")
        tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
        if name in sim.absent_tools:
            tool = None
        arguments = params.get("arguments") or {}
        try:
            if tool is None:
                raise ToolError(f"Unknown tool: {name}")
            if tool.name in sim.failing_tools:
                raise ToolError(sim.failing_tools[tool.name])
            data = await tool.handler(sim, grant, arguments if isinstance(arguments, dict) else {})
        except ToolError as err:
            result = {"content": [{"type": "text", "text": f"Error: {err}"}], "isError": True}
        else:
            # JSON.stringify(result, null, 2), and no isError on success.
            result = {"content": [{"type": "text", "text": json.dumps(data, indent=2)}]}
    else:
        return _community_json(
            rpc_error(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        )
    return _community_json(rpc_result(request_id, result))


# ---------------------------------------------------------------------------------------------
# auth


def _unauthorized(request: web.Request, description: str) -> web.Response:
    meta = f"{_origin(request)}/.well-known/oauth-protected-resource/mcp"
    challenge = (
        f'Bearer resource_metadata="{meta}", error="invalid_token", '
        f'error_description="{description}"'
    )
    return web.json_response(
        {"error": "invalid_token", "error_description": description},
        status=401,
        headers={"WWW-Authenticate": challenge},
    )


def _authenticate(request: web.Request) -> Grant | web.Response:
    sim = request.app[HOMECAST]
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return _unauthorized(request, "Missing bearer token")
    grant = None if request.app[FAULTS].revoked else sim.grant_for(token.strip())
    if grant is None:
        return _unauthorized(request, "Token is invalid, expired or revoked")
    return grant


# ---------------------------------------------------------------------------------------------
# MCP over Streamable HTTP


def _rpc_response(body: dict[str, Any], status: int) -> web.Response:
    return web.json_response(body, status=status)


def _session(request: web.Request, request_id: Any) -> Session | web.Response:
    sim = request.app[HOMECAST]
    transport = request.app[TRANSPORT]
    sid = request.headers.get("Mcp-Session-Id")
    if not sid:
        return _rpc_response(rpc_error(request_id, INVALID_REQUEST, "Missing Mcp-Session-Id"), 400)
    session = sim.sessions.get(sid)
    now = sim.clock.now().timestamp()
    ttl = transport.session_ttl
    if session is not None and ttl is not None and now - session.created_at > ttl:
        sim.sessions.pop(sid, None)
        session = None
    if session is None:
        return _rpc_response(rpc_error(request_id, SESSION_NOT_FOUND, "Session not found"), 404)
    session.created_at = now  # idle timer restarts on use
    return session


def _reply(
    request: web.Request,
    body: dict[str, Any],
    version: str,
    headers: dict[str, str] | None = None,
) -> web.Response:
    transport = request.app[TRANSPORT]
    headers = dict(headers or {})
    if not transport.sse:
        return web.json_response(body, headers=headers)
    event_id = uuid.uuid4().hex[:12]
    chunks = []
    if version >= "2025-11-25":
        # Newer revisions open the stream with an empty event so a client can resume.
        chunks.append(f"id: {event_id}-0\ndata: \n\n")
    chunks.append(f"event: message\nid: {event_id}-1\ndata: {json.dumps(body)}\n\n")
    headers["Cache-Control"] = "no-cache"
    return web.Response(
        body="".join(chunks).encode(), content_type="text/event-stream", headers=headers
    )


async def _mcp_post(request: web.Request) -> web.StreamResponse:
    """POST /mcp: one JSON-RPC message of the Streamable HTTP transport, after the bearer
    credential; sessions (Mcp-Session-Id) when the transport keeps them."""
    transport = request.app[TRANSPORT]
    grant = _authenticate(request)
    if isinstance(grant, web.Response):
        return grant
    accept = request.headers.get("Accept", "")
    if transport.strict_accept and not (
        "application/json" in accept and "text/event-stream" in accept
    ):
        return _rpc_response(
            rpc_error(
                None,
                INVALID_REQUEST,
                "Not Acceptable: Accept must list application/json and text/event-stream",
            ),
            406,
        )
    try:
        message = parse_json_body(await request.read())
    except RpcFailure as err:
        return _rpc_response(rpc_error(None, PARSE_ERROR, err.message), 400)
    refused = _message_refusal(request, message)
    if refused is not None:
        return refused
    method = message["method"]
    request_id = message.get("id")
    session: Session | None = None
    if transport.sessions and method != "initialize":
        found = _session_and_version(request, request_id)
        if isinstance(found, web.Response):
            return found
        session = found
    if "id" not in message:
        return web.Response(status=202)  # notification
    params = message.get("params") or {}
    headers: dict[str, str] = {}
    version = session.protocol_version if session else FALLBACK_VERSION
    try:
        if not isinstance(params, dict):
            raise RpcFailure(INVALID_PARAMS, "params must be an object")
        result, version = await _method_result(
            request, grant, method, params, headers=headers, version=version
        )
        body = rpc_result(request_id, result)
    except RpcFailure as err:
        body = rpc_error(request_id, err.code, err.message, err.data)
    return _reply(request, body, version, headers)


def _message_refusal(request: web.Request, message: Any) -> web.StreamResponse | None:
    """Record the message, then refuse a batch, anything but a JSON-RPC 2.0 object, and a
    message without a method (202 for a response to a request the server never sent)."""
    if isinstance(message, list):
        request.app[STATS].record_message(message[0] if message else None)
        # Like the SDK servers, batches are refused (removed from the protocol in 2025-06-18).
        return _rpc_response(
            rpc_error(None, INVALID_REQUEST, "Batch requests are not supported"), 400
        )
    request.app[STATS].record_message(message)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _rpc_response(rpc_error(None, INVALID_REQUEST, "Invalid JSON-RPC message"), 400)
    if not isinstance(message.get("method"), str):
        if "result" in message or "error" in message:
            return web.Response(status=202)  # a response to a server request we never sent
        return _rpc_response(rpc_error(message.get("id"), INVALID_REQUEST, "Missing method"), 400)
    return None


def _session_and_version(request: web.Request, request_id: Any) -> Session | web.Response:
    """The request's session, and a supported MCP-Protocol-Version header if it sends one."""
    found = _session(request, request_id)
    if isinstance(found, web.Response):
        return found
    header = request.headers.get("MCP-Protocol-Version")
    if header is not None and header not in SUPPORTED_VERSIONS:
        return _rpc_response(
            rpc_error(request_id, INVALID_REQUEST, f"Unsupported protocol version {header}"),
            400,
        )
    return found


async def _method_result(
    request: web.Request,
    grant: Grant,
    method: str,
    params: dict[str, Any],
    *,
    headers: dict[str, str],
    version: str,
) -> tuple[Any, str]:
    """initialize (a new session when the transport keeps them), ping, tools/list,
    tools/call; the result and the protocol version of the answer."""
    sim = request.app[HOMECAST]
    if method == "initialize":
        result, version = _initialize(params)
        if request.app[TRANSPORT].sessions:
            sid = uuid.uuid4().hex
            sim.sessions[sid] = Session(sid, version, sim.clock.now().timestamp())
            headers["Mcp-Session-Id"] = sid
        return result, version
    if method == "ping":
        return {}, version
    if method == "tools/list":
        return {"tools": list_tools(sim, grant)}, version
    if method == "tools/call":
        return await _call_tool(sim, grant, params), version
    raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {method}")


def _initialize(params: dict[str, Any]) -> tuple[dict[str, Any], str]:
    requested = params.get("protocolVersion")
    version = requested if requested in SUPPORTED_VERSIONS else FALLBACK_VERSION
    return (
        {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": SERVER_INFO,
            "instructions": (
                "Homecast controls Apple HomeKit homes. Call get_state first: homes, rooms and "
                "accessories are addressed by the keys it returns."
            ),
        },
        version,
    )


async def _call_tool(sim: HomecastSim, grant: Grant, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    tool = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
    if tool is None or name in sim.absent_tools:
        raise RpcFailure(INVALID_PARAMS, f"Unknown tool: {name}")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise RpcFailure(INVALID_PARAMS, "arguments must be an object")
    try:
        if not scope_allows(grant, tool):
            raise ToolError(f"Insufficient scope: {tool.name} requires {WRITE_SCOPE}")
        if tool.name in sim.failing_tools:
            raise ToolError(sim.failing_tools[tool.name])
        if sim.camel_case:
            arguments = from_camel(tool.schema, arguments)
        data = await tool.handler(sim, grant, arguments)
    except ToolError as err:
        return {"content": [{"type": "text", "text": f"Error: {err}"}], "isError": True}
    # The service answers with JSON text only (no structuredContent).
    return {"content": [{"type": "text", "text": json.dumps(data)}], "isError": False}


async def _mcp_get(request: web.Request) -> web.StreamResponse:
    transport = request.app[TRANSPORT]
    grant = _authenticate(request)
    if isinstance(grant, web.Response):
        return grant
    if not transport.sessions or not transport.sse:
        return web.Response(status=405, headers={"Allow": "POST"})
    if "text/event-stream" not in request.headers.get("Accept", ""):
        return web.Response(status=406, text="Accept must include text/event-stream")
    found = _session(request, None)
    if isinstance(found, web.Response):
        return found
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    found.queues.append(queue)
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    try:
        while (item := await queue.get()) is not None:
            await response.write(f"event: message\ndata: {json.dumps(item)}\n\n".encode())
    finally:
        if queue in found.queues:
            found.queues.remove(queue)
    return response


async def _mcp_delete(request: web.Request) -> web.StreamResponse:
    sim = request.app[HOMECAST]
    grant = _authenticate(request)
    if isinstance(grant, web.Response):
        return grant
    if not request.app[TRANSPORT].sessions:
        return web.Response(status=405, headers={"Allow": "POST"})
    found = _session(request, None)
    if isinstance(found, web.Response):
        return found
    for queue in found.queues:
        queue.put_nowait(None)
    sim.sessions.pop(found.id, None)
    return web.Response(status=200)


# ---------------------------------------------------------------------------------------------
# OAuth 2.1


async def _as_metadata(request: web.Request) -> web.Response:
    origin = _origin(request)
    return web.json_response(
        {
            "issuer": origin,
            "authorization_endpoint": f"{origin}/oauth/authorize",
            "token_endpoint": f"{origin}/oauth/token",
            "registration_endpoint": f"{origin}/oauth/register",
            "revocation_endpoint": f"{origin}/oauth/revoke",
            "scopes_supported": list(KNOWN_SCOPES),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        }
    )


async def _resource_metadata(request: web.Request) -> web.Response:
    origin = _origin(request)
    return web.json_response(
        {
            "resource": f"{origin}/mcp",
            "authorization_servers": [origin],
            "scopes_supported": list(KNOWN_SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "Homecast",
        }
    )


def _oauth_error(error: str, description: str, status: int = 400) -> web.Response:
    return web.json_response(
        {"error": error, "error_description": description},
        status=status,
        headers={"Cache-Control": "no-store"},
    )


async def _register(request: web.Request) -> web.Response:
    sim = request.app[HOMECAST]
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _oauth_error("invalid_client_metadata", "body must be JSON")
    if not isinstance(body, dict):
        return _oauth_error("invalid_client_metadata", "body must be a JSON object")
    uris = body.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        return _oauth_error("invalid_redirect_uri", "redirect_uris must be a non-empty list")
    for uri in uris:
        parsed = URL(uri)
        if not parsed.is_absolute() or parsed.fragment:
            return _oauth_error("invalid_redirect_uri", f"not an absolute URI: {uri}")
    method = body.get("token_endpoint_auth_method", "none")
    if method not in ("none", "client_secret_post"):
        return _oauth_error("invalid_client_metadata", f"unsupported auth method {method}")
    client_id = "hcc_" + secrets.token_urlsafe(12)
    client = {
        "client_id": client_id,
        "client_id_issued_at": int(sim.clock.now().timestamp()),
        "client_name": body.get("client_name", ""),
        "redirect_uris": uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "scope": body.get("scope", "mcp:read mcp:write"),
    }
    if method == "client_secret_post":
        client["client_secret"] = secrets.token_urlsafe(24)
    sim.clients[client_id] = client
    return web.json_response(client, status=201)


def _redirect(uri: str, **params: str) -> web.Response:
    location = URL(uri).update_query({k: v for k, v in params.items() if v})
    return web.Response(status=302, headers={"Location": str(location)})


async def _authorize(request: web.Request) -> web.Response:
    sim = request.app[HOMECAST]
    q = request.query
    client = sim.clients.get(q.get("client_id", ""))
    redirect_uri = q.get("redirect_uri", "")
    if client is None:
        return web.Response(status=400, text="Unknown client_id")
    if redirect_uri not in client["redirect_uris"]:
        # Never redirect to an unregistered URI.
        return web.Response(status=400, text="redirect_uri is not registered for this client")
    state = q.get("state", "")
    if q.get("response_type") != "code":
        return _redirect(redirect_uri, error="unsupported_response_type", state=state)
    if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
        return _redirect(
            redirect_uri,
            error="invalid_request",
            error_description="PKCE S256 required",
            state=state,
        )
    scopes = frozenset((q.get("scope") or "mcp:read mcp:write").split())
    if not scopes <= set(KNOWN_SCOPES):
        return _redirect(redirect_uri, error="invalid_scope", state=state)
    # Consent is given at once; tests choose the homes and rights through sim.consent.
    homes = None
    if sim.consent is not None:
        homes = {sim.home(ref).uuid: right for ref, right in sim.consent.items()}
    code = secrets.token_urlsafe(24)
    sim.codes[code] = {
        "client_id": client["client_id"],
        "redirect_uri": redirect_uri,
        "challenge": q["code_challenge"],
        "scopes": scopes,
        "homes": homes,
        "expires_at": sim.clock.now().timestamp() + CODE_LIFETIME,
    }
    return _redirect(redirect_uri, code=code, state=state)


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def _token(request: web.Request) -> web.Response:
    sim = request.app[HOMECAST]
    form = await request.post()
    grant_type = str(form.get("grant_type"))  # as the refusal below quotes it
    client = sim.clients.get(str(form.get("client_id", "")))
    if client is None:
        return _oauth_error("invalid_client", "unknown client_id", 401)
    if "client_secret" in client and form.get("client_secret") != client["client_secret"]:
        return _oauth_error("invalid_client", "bad client_secret", 401)
    if grant_type == "authorization_code":
        code = sim.codes.pop(str(form.get("code", "")), None)  # single use
        if code is None or code["expires_at"] <= sim.clock.now().timestamp():
            return _oauth_error("invalid_grant", "authorization code is invalid or expired")
        if code["client_id"] != client["client_id"] or code["redirect_uri"] != form.get(
            "redirect_uri"
        ):
            return _oauth_error(
                "invalid_grant", "code was issued to another client or redirect_uri"
            )
        verifier = str(form.get("code_verifier", ""))
        if not verifier or _s256(verifier) != code["challenge"]:
            return _oauth_error("invalid_grant", "PKCE verification failed")
        issued = sim.issue_oauth(client["client_id"], code["scopes"], code["homes"])
        return web.json_response(issued, headers={"Cache-Control": "no-store"})
    if grant_type == "refresh_token":
        # Rotation: a refresh token works once; a used or revoked one is refused.
        old = sim.refresh_tokens.pop(str(form.get("refresh_token", "")), None)
        if old is None or old["client_id"] != client["client_id"]:
            return _oauth_error("invalid_grant", "refresh token is invalid, used or revoked")
        scopes = old["scopes"]
        if form.get("scope"):
            asked = frozenset(str(form["scope"]).split())
            if not asked <= scopes:
                return _oauth_error("invalid_scope", "cannot widen scope on refresh")
            scopes = asked
        issued = sim.issue_oauth(client["client_id"], scopes, old["homes"])
        return web.json_response(issued, headers={"Cache-Control": "no-store"})
    return _oauth_error("unsupported_grant_type", f"unsupported grant_type {grant_type}")


async def _revoke(request: web.Request) -> web.Response:
    sim = request.app[HOMECAST]
    form = await request.post()
    token = str(form.get("token", ""))
    sim.revoke_token(token)
    sim.revoke_refresh_token(token)
    return web.Response(status=200)  # RFC 7009: 200 even for unknown tokens


# ---------------------------------------------------------------------------------------------
# simulator control (for demos and manual tests)


async def _control(request: web.Request) -> web.Response:
    """POST /_sim/homecast/<action> with a JSON body: the outside world acting on the homes."""
    sim = request.app[HOMECAST]
    action = request.match_info["action"]
    try:
        body = await request.json() if request.can_read_body else {}
        if action == "change":
            sim.external_change(body["home"], body["accessory"], **body["values"])
            return web.json_response(sim.values(body["home"], body["accessory"]))
        if action == "press":
            sim.press(body["home"], body["accessory"], int(body.get("event", 0)))
            return web.json_response({"ok": True})
        if action == "reachable":
            sim.set_reachable(body["home"], body["accessory"], bool(body["reachable"]))
            return web.json_response({"ok": True})
        if action == "pair":
            key = sim.pair_accessory(body["home"], body["room"], body["name"], body["type"])
            return web.json_response({"accessory": key})
        if action == "remove":
            sim.remove_accessory(body["home"], body["accessory"])
            return web.json_response({"ok": True})
        if action == "expire_sessions":
            return web.json_response({"expired": sim.expire_sessions()})
        if action == "revoke":
            sim.revoke_token(body["token"])
            return web.json_response({"ok": True})
        if action == "token":
            homes = body.get("homes")
            grant = sim.add_token(
                body["token"],
                scopes=tuple(body.get("scopes", (READ_SCOPE, WRITE_SCOPE))),
                homes=homes,
            )
            return web.json_response({"scopes": sorted(grant.scopes)})
        if action == "flush":
            sim.flush()
            return web.json_response({"ok": True})
    except (KeyError, TypeError, ValueError) as err:
        return web.json_response({"error": f"bad request: {err!r}"}, status=400)
    return web.json_response({"error": f"unknown action {action}"}, status=404)


__all__ = ["CONTROL", "HOMECAST", "TRANSPORT", "VIEW", "Transport", "create_app"]
