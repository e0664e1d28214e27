"""HTTP and JSON-RPC layer of the simulated Hubitat MCP Rule Server (stateless, no SSE)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
import json
import logging
from typing import Any

from aiohttp import web

from ..base import (
    CLOCK,
    FAULTS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    STATS,
    RpcFailure,
    SimClock,
    make_app,
    on_cleanup,
    parse_json_body,
    rpc_error,
    rpc_result,
)
from .catalog import CORE_TOOLS, list_tools
from .hub import Hub
from .tools import SERVER_VERSION, ToolError, Tools, ToolThrew

_LOGGER = logging.getLogger(__name__)

SERVER_NAME = "hubitat-mcp-rule-server"
MODERN = "2026-07-28"
SUPPORTED_VERSIONS = (MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
INITIALIZE_VERSIONS = SUPPORTED_VERSIONS[1:]
HEADER_MISMATCH = -32020
UNSUPPORTED_VERSION = -32022
RESOURCE_NOT_FOUND = -32002
RESULT_LIMIT = 120_000  # a tools/call result above this is replaced by a notice
RESPONSE_LIMIT = 124_000  # any response above this becomes -32603
TTL_MS = 300_000
META_VERSION = "io.modelcontextprotocol/protocolVersion"
INSTRUCTIONS = (
    "Hubitat Elevation hub. Device tools sit behind hub_read_devices / hub_manage_devices. "
    "Every write tool needs bestPracticeKey (see hub_get_tool_guide best_practices). "
    "Batch multi-device commands; at most 2 writes may run at once."
)
GUIDE_SECTIONS = ("best_practices", "devices", "gateways", "safety")


@dataclass
class Options:
    """What create_app was given (reachable as app[OPTIONS])."""

    token: str
    app_id: str
    structured_content: bool
    enforce_origin: bool
    modern: bool = True


HUB = web.AppKey("hubitat_hub", Hub)
TOOLS = web.AppKey("hubitat_tools", Tools)
OPTIONS = web.AppKey("hubitat_options", Options)


def create_app(
    *,
    devices: int = 40,
    seed: int = 1,
    token: str = "sim-token",
    app_id: str | int = "42",
    hub_id: str | None = None,
    hub_name: str = "Home Hub",
    gateways: bool = True,
    best_practice_gate: bool = True,
    command_delay: float | None = 0.1,
    write_cap: int = 2,
    structured_content: bool = False,
    enforce_origin: bool = False,
    timezone: str = "America/Chicago",
    hidden_devices: int = 2,
    backup_age_hours: float | None = 3.0,
    clock: SimClock | None = None,
    zigbee_id: str | None = "",
    hub_security_blocks: bool = False,
    has_hsm: bool = True,
    realistic_devices: bool = False,
    custom_rule_engine: bool = False,
    modern: bool = True,
) -> web.Application:
    """A simulated hub serving `/apps/api/<app_id>/mcp`.

    command_delay: seconds until a command takes effect; 0 = at once (after the reply's
    snapshot), None = queued until `app[HUB].apply_pending()`.
    modern: False is an app from before the 2026-07-28 era, which refuses that version as
    any unknown one (clients then initialize with an older one).

    The app's endpoint as hubitat-mcp-server.groovy mappings declares it (path /mcp, POST
    handleMcpRequest), plus the cloud relay's path.
    """
    app = make_app(clock)
    hub = Hub(
        app[CLOCK],
        devices=devices,
        seed=seed,
        hub_id=hub_id,
        hub_name=hub_name,
        command_delay=command_delay,
        timezone=timezone,
        hidden_devices=hidden_devices,
        backup_age_hours=backup_age_hours,
        realistic_devices=realistic_devices,
    )
    if zigbee_id != "":  # "" keeps the default (the hub id); None and "unavailable" as real hubs
        hub.zigbee_id = zigbee_id
    hub.hub_security_blocks = hub_security_blocks
    if not has_hsm:
        hub.hsm_status = None
    app[HUB] = hub
    app[TOOLS] = Tools(
        hub,
        gateways=gateways,
        best_practice_gate=best_practice_gate,
        write_cap=write_cap,
        app_id=str(app_id),
        custom_rule_engine=custom_rule_engine,
    )
    on_cleanup(app, _close_engine)
    app[OPTIONS] = Options(token, str(app_id), structured_content, enforce_origin, modern)
    app.router.add_route("*", "/apps/api/{app_id}/mcp", _handle)
    # The cloud relay's shape: /api/<hubUid>/apps/<appId>/mcp (same app behind it).
    app.router.add_route("*", "/api/{hub_uid}/apps/{app_id}/mcp", _handle)
    app.router.add_route("*", "/_sim/hubitat/{action}", _control)
    return app


async def _close_engine(app: web.Application) -> None:
    await app[TOOLS].engine.close()


def mcp_path(app_id: str | int = "42") -> str:
    """The local endpoint path of hubitat-mcp-server.groovy mappings: /apps/api/<appId>/mcp."""
    return f"/apps/api/{app_id}/mcp"


# ---- HTTP ----


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(
        status=status, body=json.dumps(body).encode(), content_type="application/json"
    )


def _authorized(request: web.Request, options: Options) -> bool:
    token = request.query.get("access_token")
    header = request.headers.get("Authorization", "")
    if header[:7].lower() == "bearer ":
        token = token or header[7:].strip()
    return token == options.token


async def _handle(request: web.Request) -> web.StreamResponse:
    """The app's `/apps/api/<id>/mcp` endpoint (hubitat-mcp-server.groovy handleMcpRequest),
    behind the platform's app routing and OAuth check."""
    app = request.app
    options = app[OPTIONS]
    refused = _refused(request)
    if refused is not None:
        return refused
    app[HUB].mcp_requests += 1
    raw = await request.read()
    try:
        body = parse_json_body(raw)
    except RpcFailure as err:
        return _json(rpc_error(None, err.code, err.message))
    version = request.headers.get("MCP-Protocol-Version")
    if version is not None and (
        version not in SUPPORTED_VERSIONS or (version == MODERN and not options.modern)
    ):
        return _json(
            rpc_error(
                _id_of(body),
                UNSUPPORTED_VERSION,
                f"Unsupported protocol version: {version}",
                {"requested": version, "supported": list(_versions(options))},
            ),
            400,
        )
    modern = version == MODERN
    if isinstance(body, list):
        return await _handle_batch(app, body, modern=modern)
    app[STATS].record_message(body)
    if modern and isinstance(body, dict) and "id" in body:
        mismatch = _header_mismatch(request, body)
        if mismatch:
            return _json(rpc_error(body.get("id"), HEADER_MISMATCH, mismatch), 400)
    reply, status = await _process(app, body, modern=modern)
    if reply is None:
        return web.Response(status=202)
    return _guard(reply, status)


def _versions(options: Options) -> tuple[str, ...]:
    return SUPPORTED_VERSIONS if options.modern else INITIALIZE_VERSIONS


def _refused(request: web.Request) -> web.Response | None:
    """The answer before the app reads the body: an unknown app or hub, a revoked or wrong
    token, a method other than POST, or a foreign Origin when origins are enforced."""
    app = request.app
    options = app[OPTIONS]
    hub_uid = request.match_info.get("hub_uid")
    if request.match_info["app_id"] != options.app_id or hub_uid not in (None, app[HUB].hub_id):
        return web.Response(status=404, text="App not found")
    if app[FAULTS].revoked or not _authorized(request, options):
        # The platform's OAuth layer answers before the app sees the request.
        return _json({"error": True, "type": "AccessDenied", "message": "Unauthorized"}, 401)
    if request.method != "POST":
        return web.Response(status=405, headers={"Allow": "POST"}, text="Method Not Allowed")
    origin = request.headers.get("Origin")
    if origin and not _origin_ok(origin):
        if options.enforce_origin:
            return _json(rpc_error(None, INVALID_REQUEST, "Origin not allowed"), 403)
        _LOGGER.error("Origin %s is not a known identity of this hub (served anyway)", origin)
    return None


async def _handle_batch(app: web.Application, body: list[Any], *, modern: bool) -> web.Response:
    """A JSON-RPC batch: refused in the modern era, else every message answered in order."""
    if modern:
        return _json(rpc_error(None, INVALID_REQUEST, "Batch bodies need a legacy era"), 400)
    if not body:
        return _json(rpc_error(None, INVALID_REQUEST, "Empty batch"))
    replies = []
    for message in body:
        app[STATS].record_message(message)
        reply, _ = await _process(app, message, modern=False)
        if reply is not None:
            replies.append(reply)
    return _guard(replies) if replies else web.Response(status=202)


def _guard(reply: Any, status: int = 200) -> web.Response:
    """The universal response-size guard (replaces the body, drops a derived status)."""
    data = json.dumps(reply).encode()
    if len(data) > RESPONSE_LIMIT:
        request_id = reply.get("id") if isinstance(reply, dict) else None
        return _json(
            rpc_error(
                request_id,
                INTERNAL_ERROR,
                "Response too large",
                {"estimatedBytes": len(data), "sizeLimitBytes": RESPONSE_LIMIT},
            )
        )
    return web.Response(status=status, body=data, content_type="application/json")


def _origin_ok(origin: str) -> bool:
    host = origin.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0].lower()
    return host in ("127.0.0.1", "localhost", "cloud.hubitat.com")


def _id_of(body: Any) -> Any:
    return body.get("id") if isinstance(body, dict) else None


def _decode_name(value: str) -> str:
    """`=?base64?...?=` sentinels carry names that are not header-safe."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2]).decode()
        except (binascii.Error, UnicodeDecodeError):
            return value
    return value


def _header_mismatch(request: web.Request, body: dict[str, Any]) -> str | None:
    method = body.get("method")
    header_method = request.headers.get("Mcp-Method")
    if header_method is None or header_method != method:
        return f"Mcp-Method header '{header_method}' does not match body method '{method}'"
    raw_params = body.get("params")
    params = raw_params if isinstance(raw_params, dict) else {}
    field = {"tools/call": "name", "resources/read": "uri"}.get(str(method))
    if field:
        name = request.headers.get("Mcp-Name")
        if name is None or _decode_name(name) != params.get(field):
            return f"Mcp-Name header does not match params.{field}"
    raw_meta = params.get("_meta")
    meta = raw_meta if isinstance(raw_meta, dict) else {}
    if META_VERSION in meta and meta[META_VERSION] != MODERN:
        return "params._meta protocol version does not match MCP-Protocol-Version"
    return None


# ---- JSON-RPC ----


async def _process(
    app: web.Application, message: Any, *, modern: bool
) -> tuple[dict[str, Any] | None, int]:
    """One message -> (reply or None for a notification, HTTP status)."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return rpc_error(_id_of(message), INVALID_REQUEST, "Invalid Request"), 200
    method = message.get("method")
    if "id" not in message:
        return None, 202
    request_id = message["id"]
    if not isinstance(method, str):
        return rpc_error(request_id, INVALID_REQUEST, "Invalid Request: method missing"), 200
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return rpc_error(request_id, INVALID_PARAMS, "params must be an object"), 200
    try:
        result = await _dispatch(app, method, params, modern=modern)
    except RpcFailure as err:
        status = 404 if modern and err.code == METHOD_NOT_FOUND else 200
        return rpc_error(request_id, err.code, err.message, err.data), status
    except Exception as err:
        _LOGGER.exception("Simulated hub failed on %s", method)
        return rpc_error(request_id, INTERNAL_ERROR, f"Internal error: {err}"), 200
    meta = dict(result.get("_meta") or {})
    meta["io.modelcontextprotocol/serverInfo"] = {"name": SERVER_NAME, "version": SERVER_VERSION}
    result["_meta"] = meta
    if modern:
        # jsonRpcResult: a caller-set resultType (MRTR's "input_required") wins.
        result.setdefault("resultType", "complete")
    return rpc_result(request_id, result), 200


def _server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": SERVER_VERSION}


def _capabilities() -> dict[str, Any]:
    return {"tools": {}, "resources": {"subscribe": False, "listChanged": False}}


async def _dispatch(
    app: web.Application, method: str, params: dict[str, Any], *, modern: bool
) -> dict[str, Any]:
    tools = app[TOOLS]
    if method == "initialize":
        requested = params.get("protocolVersion")
        version = requested if requested in INITIALIZE_VERSIONS else INITIALIZE_VERSIONS[0]
        return {
            "protocolVersion": version,
            "capabilities": _capabilities(),
            "serverInfo": _server_info(),
            "instructions": INSTRUCTIONS,
        }
    if method == "server/discover":
        return {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": _capabilities(),
            "serverInfo": _server_info(),
            "instructions": INSTRUCTIONS,
            "resultType": "complete",
            "ttlMs": TTL_MS,
            "cacheScope": "server",
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        # The whole catalog in one page; a stale cursor gets the same full list.
        return {
            "tools": list_tools(gateways=tools.gateways),
            "ttlMs": TTL_MS,
            "cacheScope": "server",
        }
    if method == "tools/call":
        return await _call_tool(app, params, modern=modern)
    if method == "resources/list":
        return {"resources": _resources(), "ttlMs": TTL_MS, "cacheScope": "server"}
    if method == "resources/templates/list":
        return {"resourceTemplates": [], "ttlMs": TTL_MS, "cacheScope": "server"}
    if method == "resources/read":
        return await _read_resource(app, str(params.get("uri", "")))
    raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {method}")


async def _call_tool(
    app: web.Application, params: dict[str, Any], *, modern: bool
) -> dict[str, Any]:
    """hubitat-mcp-server.groovy handleToolsCall (MRTR in the 2026-07-28 era) / the legacy path."""
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise RpcFailure(INVALID_PARAMS, "params.name is required")
    args = params.get("arguments")
    args = {} if args is None else args
    hub = app[HUB]
    hub.mcp_tool_calls += 1
    is_error = False
    request_state = params.get("requestState")
    if request_state is not None and not modern:
        raise RpcFailure(
            INVALID_PARAMS,
            f"Invalid params: requestState requires MCP-Protocol-Version {MODERN}.",
        )
    try:
        if modern:
            outcome = await app[TOOLS].call_modern(name, args, request_state)
            if isinstance(outcome, dict):
                return outcome  # input_required: nothing ran
            payload, is_error = outcome
        else:
            try:
                payload = await app[TOOLS].call(name, args)
            except ToolError as err:
                payload, is_error = err.payload, True
    except ToolThrew as err:
        # handleToolsCallLegacy's catch-all: plain text, not JSON, and no size guard.
        return {"content": [{"type": "text", "text": f"Tool error: {err}"}], "isError": True}
    # _advertisesOutputSchema: with publishOutputSchemas on (structured_content here) and
    # gateways on, core tools advertise their output schema (every core tool declares one);
    # gateways and the tools behind them never do.
    schema = app[OPTIONS].structured_content and app[TOOLS].gateways and name in CORE_TOOLS
    # _renderToolResult: structuredContent only on a result that is not an error.
    result = _tool_result(payload, is_error, structured=schema and not is_error)
    # hubitat-mcp-server.groovy _renderToolResult: the whole JSON-RPC response as it would go
    # on the wire (the result's JSON escaped inside its text) is measured against the limit.
    wire = len(json.dumps({"jsonrpc": "2.0", "id": 0, "result": result}).encode())
    if wire > RESULT_LIMIT:
        notice = {
            "response_too_large": True,
            "truncated": True,
            "estimatedBytes": wire,
            "sizeLimitBytes": RESULT_LIMIT,
            "tool": str(args.get("tool") or name) if isinstance(args, dict) else name,
            "suggestion": "Ask for less: a smaller limit, format='ids' or 'summary', or filters "
            "such as changedSince, roomFilter or capabilityFilter.",
        }
        result = {"content": [{"type": "text", "text": json.dumps(notice)}]}
        if is_error or schema:
            result["isError"] = True
    return result


def _tool_result(payload: Any, is_error: bool, *, structured: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": json.dumps(payload)}]}
    if is_error:
        result["isError"] = True
    if structured:
        result["structuredContent"] = payload
    return result


def _resources() -> list[dict[str, Any]]:
    guide = [
        {
            "uri": f"hubitat://guide/{section}",
            "name": f"Tool guide: {section}",
            "mimeType": "text/markdown",
        }
        for section in GUIDE_SECTIONS
    ]
    return [
        *guide,
        {"uri": "hubitat://context-summary", "name": "Hub summary", "mimeType": "text/plain"},
        {"uri": "hubitat://context", "name": "Hub context", "mimeType": "application/json"},
    ]


async def _read_resource(app: web.Application, uri: str) -> dict[str, Any]:
    tools = app[TOOLS]
    hub = app[HUB]
    if uri.startswith("hubitat://guide/") and uri.rsplit("/", 1)[-1] in GUIDE_SECTIONS:
        guide = await tools.call("hub_get_tool_guide", {"section": uri.rsplit("/", 1)[-1]})
        contents = {"uri": uri, "mimeType": "text/markdown", "text": guide["content"]}
    elif uri == "hubitat://context-summary":
        text = (
            f"{hub.hub_name}: {len(hub.visible_devices())} devices, {len(hub.rooms)} rooms, "
            f"mode {hub.mode_name}, HSM {hub.hsm_status}"
        )
        contents = {"uri": uri, "mimeType": "text/plain", "text": text}
    elif uri == "hubitat://context":
        data = {
            "mode": hub.mode_name,
            "hsm": hub.hsm_status,
            "rooms": [{"id": str(r.id), "name": r.name} for r in hub.rooms.values()],
            "deviceCount": len(hub.visible_devices()),
        }
        contents = {"uri": uri, "mimeType": "application/json", "text": json.dumps(data)}
    else:
        raise RpcFailure(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
    return {"contents": [contents], "ttlMs": 0, "cacheScope": "server"}


# ---- control routes ----


async def _control(request: web.Request) -> web.Response:
    """Inject what happens outside MCP: POST /_sim/hubitat/<action> with a JSON body.

    attribute {deviceId, attribute, value} | button {deviceId, button, action} |
    pair {kind, label, room?} | remove {deviceId} | mode {mode} | hsm {status} |
    hsm_alert {alert} | hub_security {blocks} | rm_fails {fails} | history_fails {deviceIds} |
    throws {tool, message} (message null: it no longer throws) |
    settings {enableCustomRuleEngine?, loopGuardMax?} |
    advance {seconds} | activity {count} (random changes) | apply (queued commands) ;
    GET /_sim/hubitat/state.
    """
    hub = request.app[HUB]
    action = request.match_info["action"]
    if action == "state":
        return web.json_response(
            {
                "devices": len(hub.visible_devices()),
                "mode": hub.mode_name,
                "hsm": hub.hsm_status,
                "adminCalls": [name for name, _ in hub.admin_calls],
                "writesInFlight": hub.writes_in_flight,
                "activeWrites": len(request.app[TOOLS].active_writes()),
            }
        )
    if request.method != "POST":
        return web.json_response({"error": "POST a JSON body"}, status=405)
    try:
        body = await request.json()
        handler = _CONTROLS.get(action)
        if handler is not None:
            return web.json_response(handler(request.app, body))
    except (KeyError, ValueError, TypeError) as err:
        return web.json_response({"error": f"bad request: {err!r}"}, status=400)
    return web.json_response({"error": f"unknown action {action}"}, status=404)


def _c_attribute(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    event = app[HUB].set_attribute(int(body["deviceId"]), body["attribute"], body["value"])
    return {"event": event is not None}


def _c_button(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    attr = {"push": "pushed", "hold": "held", "doubleTap": "doubleTapped"}.get(
        body.get("action", "push"), "released"
    )
    app[HUB].set_attribute(int(body["deviceId"]), attr, int(body.get("button", 1)))
    return {"event": True}


def _c_pair(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    device = app[HUB].pair_device(body["kind"], body["label"], body.get("room"))
    return {"deviceId": str(device.id)}


def _c_remove(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    app[HUB].remove_device(int(body["deviceId"]))
    return {"removed": True}


def _c_mode(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    app[HUB].set_mode(body["mode"])
    return {"mode": app[HUB].mode_name}


def _c_hsm(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    app[HUB].set_hsm_status(body["status"])
    return {"hsm": app[HUB].hsm_status}


def _c_hsm_alert(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    app[HUB].trigger_hsm_alert(body["alert"])
    return {"alert": app[HUB].hsm_alert}


def _c_settings(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    # What the user sets on the app's page (hubitat-mcp-server.groovy mainPage).
    engine = app[TOOLS].engine
    if "enableCustomRuleEngine" in body:
        engine.enabled = bool(body["enableCustomRuleEngine"])
    if "loopGuardMax" in body:
        engine.loop_guard_max = int(body["loopGuardMax"])
    return {"enableCustomRuleEngine": engine.enabled}


def _c_hub_security(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    app[HUB].hub_security_blocks = bool(body["blocks"])
    return {"blocks": app[HUB].hub_security_blocks}


def _c_rm_fails(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    app[HUB].rm_fails = bool(body["fails"])
    return {"fails": app[HUB].rm_fails}


def _c_history_fails(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    hub = app[HUB]
    hub.history_fails = {int(device_id) for device_id in body["deviceIds"]}
    return {"deviceIds": sorted(hub.history_fails)}


def _c_throws(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    hub = app[HUB]
    if body.get("message") is None:
        hub.tools_throw.pop(str(body["tool"]), None)
    else:
        hub.tools_throw[str(body["tool"])] = str(body["message"])
    return {"throws": hub.tools_throw}


def _c_advance(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    hub = app[HUB]
    hub.clock.advance(float(body["seconds"]))
    return {"now": hub.now().isoformat()}


def _c_activity(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    events = app[HUB].random_activity(int(body.get("count", 1)))
    return {"events": len(events)}


def _c_apply(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    return {"applied": app[HUB].apply_pending()}


# The control actions, one step each of what happens on a hub outside MCP.
_CONTROLS: dict[str, Callable[[web.Application, dict[str, Any]], dict[str, Any]]] = {
    "attribute": _c_attribute,
    "button": _c_button,
    "pair": _c_pair,
    "remove": _c_remove,
    "mode": _c_mode,
    "hsm": _c_hsm,
    "hsm_alert": _c_hsm_alert,
    "settings": _c_settings,
    "hub_security": _c_hub_security,
    "rm_fails": _c_rm_fails,
    "history_fails": _c_history_fails,
    "throws": _c_throws,
    "advance": _c_advance,
    "activity": _c_activity,
    "apply": _c_apply,
}
