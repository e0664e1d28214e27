"""The transport-free server core: eras, negotiation, JSON-RPC shape, dispatch, result shaping."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from custom_components.mcp_gateway.mcp.server import (
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    McpServer,
    McpServerError,
    Reply,
    SessionState,
    parse_json,
)

from .conftest import FakeHandler, rpc

MODERN = "2026-07-28"


@pytest.fixture
def server(handler: FakeHandler) -> McpServer:
    return McpServer(handler, name="test", version="1.2.3", title="Test", instructions="Be nice.")


def modern(
    method: str, params: dict[str, Any] | None = None, request_id: int = 7, **meta: Any
) -> dict:
    envelope = {
        META_PROTOCOL_VERSION: MODERN,
        META_CLIENT_CAPABILITIES: {},
        META_CLIENT_INFO: {"name": "modern-client", "version": "1"},
    }
    envelope.update(meta)
    return rpc(method, {**(params or {}), "_meta": envelope}, request_id)


def modern_headers(
    method: str, name: str | None = None, version: str = MODERN
) -> list[tuple[str, str]]:
    headers = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    if name is not None:
        headers.append(("Mcp-Name", name))
    return headers


@pytest.mark.parametrize(
    ("requested", "negotiated"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2025-11-25"),  # modern is not reached through initialize
        ("1999-01-01", "2025-11-25"),
        (None, "2025-11-25"),
    ],
)
async def test_initialize_echoes_a_supported_version_else_the_newest(
    server: McpServer, requested: str | None, negotiated: str
) -> None:
    """initialize echoes a supported version, else offers the newest."""
    params = {"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "c"}}
    reply = await server.handle_http(rpc("initialize", params))
    assert reply.status == 200
    result = reply.body["result"]
    assert result["protocolVersion"] == negotiated
    assert result["serverInfo"] == {"name": "test", "version": "1.2.3", "title": "Test"}
    assert result["instructions"] == "Be nice."
    assert set(result["capabilities"]) == {"tools", "resources", "prompts"}
    assert "resultType" not in result


async def test_legacy_version_header_rules(server: McpServer, handler: FakeHandler) -> None:
    """Legacy requests follow the version header rules and keep the client name."""
    # Missing header: treated as 2025-03-26.
    reply = await server.handle_http(rpc("tools/list"), client_hint="agent/1")
    assert reply.status == 200
    assert handler.contexts[-1].protocol_version == "2025-03-26"
    assert handler.contexts[-1].client_name == "agent/1"
    # A supported header is used as the request's version.
    await server.handle_http(rpc("tools/list"), headers=[("mcp-protocol-version", "2025-06-18")])
    assert handler.contexts[-1].protocol_version == "2025-06-18"
    # An unsupported one is a 400 naming the supported versions.
    reply = await server.handle_http(
        rpc("tools/list", request_id=3), headers=[("MCP-Protocol-Version", "2024-01-01")]
    )
    assert reply.status == 400
    assert reply.body["id"] == 3
    assert reply.body["error"]["code"] == -32600
    assert reply.body["error"]["data"]["supported"] == ["2026-07-28", *LEGACY_VERSIONS]
    # initialize itself is not bound by the header (it precedes negotiation).
    reply = await server.handle_http(
        rpc("initialize", {"protocolVersion": "2025-06-18"}),
        headers=[("MCP-Protocol-Version", "2024-01-01")],
    )
    assert reply.status == 200


async def test_ping_and_notifications_and_client_responses(server: McpServer) -> None:
    """ping answers {}; notifications and client responses get 202."""
    reply = await server.handle_http(rpc("ping"))
    assert reply == Reply(200, {"jsonrpc": "2.0", "id": 1, "result": {}})
    reply = await server.handle_http({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert reply == Reply(202)
    reply = await server.handle_http({"jsonrpc": "2.0", "id": 5, "result": {}})
    assert reply == Reply(202)


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0"},
        {},
    ],
)
async def test_malformed_messages_are_400_invalid_request(server: McpServer, message: dict) -> None:
    """Malformed messages are 400 invalid request."""
    reply = await server.handle_http(message)
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32600


@pytest.mark.parametrize("payload", [1, "x", None, True])
async def test_non_object_bodies_are_invalid(server: McpServer, payload: Any) -> None:
    """Bodies that are not JSON-RPC objects are invalid."""
    reply = await server.handle_http(payload)
    assert reply.status == 400
    assert reply.body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Body must be a JSON-RPC object"},
    }


def test_parse_json_rejects_non_json() -> None:
    """parse_json refuses what is not JSON and parses what is."""
    with pytest.raises(ValueError):
        parse_json(b"{")
    with pytest.raises(ValueError):
        parse_json(b"\xff\xfe")
    with pytest.raises(ValueError):
        parse_json(b"[" * 100_000)
    assert parse_json(b'{"a": 1}') == {"a": 1}


async def test_batches_only_up_to_2025_03_26(server: McpServer) -> None:
    """Batches are answered only for 2025-03-26 and older; later versions refuse them."""
    batch = [
        rpc("ping", request_id=1),
        {"jsonrpc": "2.0", "method": "notifications/x"},
        rpc("tools/list", request_id=2),
    ]
    reply = await server.handle_http(batch)  # headerless = 2025-03-26
    assert reply.status == 200
    assert [answer["id"] for answer in reply.body] == [1, 2]
    reply = await server.handle_http(batch, headers=[("MCP-Protocol-Version", "2024-11-05")])
    assert reply.status == 200
    for version in ("2025-06-18", "2025-11-25", MODERN):
        reply = await server.handle_http(batch, headers=[("MCP-Protocol-Version", version)])
        assert reply.status == 400
        assert reply.body["error"]["code"] == -32600
    reply = await server.handle_http(batch, headers=[("MCP-Protocol-Version", "1.0")])
    assert reply.status == 400
    assert "supported" in reply.body["error"]["data"]
    # Only notifications: nothing to answer.
    reply = await server.handle_http([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert reply == Reply(202)
    reply = await server.handle_http([])
    assert reply.status == 400
    # initialize must not be batched; a bad member gets its own error.
    reply = await server.handle_http([rpc("initialize", {"protocolVersion": "2025-03-26"}), 5])
    assert [answer["error"]["code"] for answer in reply.body] == [-32600, -32600]


async def test_tools_call_and_errors(server: McpServer, handler: FakeHandler) -> None:
    """tools/call returns results, and unknown tools or bad arguments are -32602."""
    reply = await server.handle_http(rpc("tools/call", {"name": "add", "arguments": {"amount": 2}}))
    assert reply.body["result"]["structuredContent"] == {"total": 2}
    # Unknown tool, missing name, non-object arguments: -32602, still HTTP 200 in the legacy era.
    reply = await server.handle_http(rpc("tools/call", {"name": "nope"}))
    assert reply.status == 200
    assert reply.body["error"] == {"code": -32602, "message": "Unknown tool: nope"}
    reply = await server.handle_http(rpc("tools/call", {}))
    assert reply.body["error"]["code"] == -32602
    reply = await server.handle_http(rpc("tools/call", {"name": "add", "arguments": [1]}))
    assert reply.body["error"]["code"] == -32602
    # A tool's own failure is a result.
    reply = await server.handle_http(rpc("tools/call", {"name": "fail"}))
    assert reply.body["result"]["isError"] is True
    # Unknown method.
    reply = await server.handle_http(rpc("logging/setLevel", {"level": "info"}))
    assert reply.status == 200
    assert reply.body["error"]["code"] == -32601
    # A cursor we never issued.
    reply = await server.handle_http(rpc("tools/list", {"cursor": "abc"}))
    assert reply.body["error"]["code"] == -32602


async def test_handler_bugs_become_internal_errors_and_are_logged(
    server: McpServer, handler: FakeHandler, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in a handler is a logged -32603 internal error without its text."""
    with caplog.at_level(logging.ERROR):
        reply = await server.handle_http(rpc("tools/call", {"name": "boom"}))
    assert reply.status == 200
    assert reply.body["error"] == {"code": -32603, "message": "Internal error"}
    assert "a bug in a tool" not in str(reply.body)
    assert "MCP tools/call failed" in caplog.text

    async def malformed(ctx: Any, name: str, arguments: dict) -> Any:
        return {"no": "content"}

    handler.call_tool = malformed  # type: ignore[method-assign]
    caplog.clear()
    reply = await server.handle_http(rpc("tools/call", {"name": "x"}))
    assert reply.body["error"]["code"] == -32603
    assert "malformed result" in caplog.text

    async def refuses(ctx: Any) -> Any:
        raise McpServerError(-32001, "Not for you", {"why": "test"})

    handler.list_tools = refuses  # type: ignore[method-assign]
    reply = await server.handle_http(rpc("tools/list"))
    assert reply.body["error"] == {
        "code": -32001,
        "message": "Not for you",
        "data": {"why": "test"},
    }


async def test_response_size_guard(handler: FakeHandler) -> None:
    """A result over the size limit becomes a truncated error result."""
    server = McpServer(handler, name="t", version="1", max_result_bytes=4000)
    handler.big_size = 1000
    reply = await server.handle_http(rpc("tools/call", {"name": "big"}))
    assert reply.body["result"]["structuredContent"] == {"blob": "x" * 1000}
    handler.big_size = 5000
    reply = await server.handle_http(rpc("tools/call", {"name": "big"}))
    result = reply.body["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["truncated"] is True
    assert result["structuredContent"]["limitBytes"] == 4000
    assert result["structuredContent"]["resultBytes"] > 5000
    assert "withheld" in result["content"][0]["text"]
    assert "x" * 100 not in str(result)


async def test_resources_and_prompts(server: McpServer) -> None:
    """Resources list, read and report a missing one; templates and prompts are empty."""
    reply = await server.handle_http(rpc("resources/list"))
    assert reply.body["result"]["resources"][0]["uri"] == "mcp-gateway://guide"
    reply = await server.handle_http(rpc("resources/read", {"uri": "mcp-gateway://guide"}))
    assert reply.body["result"]["contents"][0]["text"] == "# Guide"
    reply = await server.handle_http(rpc("resources/read", {"uri": "mcp-gateway://nope"}))
    assert reply.body["error"]["code"] == -32002
    reply = await server.handle_http(rpc("resources/templates/list"))
    assert reply.body["result"] == {"resourceTemplates": []}
    reply = await server.handle_http(rpc("prompts/list"))
    assert reply.body["result"] == {"prompts": []}
    reply = await server.handle_http(rpc("prompts/get", {"name": "x"}))
    assert reply.body["error"]["code"] == -32602


# --- modern era ---------------------------------------------------------------------------


async def test_discover(server: McpServer) -> None:
    """server/discover lists the modern and legacy versions."""
    reply = await server.handle_http(
        modern("server/discover"), headers=modern_headers("server/discover")
    )
    assert reply.status == 200
    result = reply.body["result"]
    assert result["supportedVersions"][0] == MODERN
    assert set(LEGACY_VERSIONS) <= set(result["supportedVersions"])
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 0
    assert result["cacheScope"] == "private"
    assert result["_meta"][META_SERVER_INFO]["name"] == "test"
    assert result["instructions"] == "Be nice."


async def test_modern_requests_carry_result_type_and_client_info(
    server: McpServer, handler: FakeHandler
) -> None:
    """Modern requests carry resultType and the client's info from the envelope."""
    reply = await server.handle_http(
        modern("tools/list"), headers=modern_headers("tools/list"), client_hint="ua"
    )
    assert reply.status == 200
    assert reply.body["result"]["resultType"] == "complete"
    assert len(reply.body["result"]["tools"]) == len(handler.tools)
    assert handler.contexts[-1].protocol_version == MODERN
    assert handler.contexts[-1].client_name == "modern-client"
    message = modern("tools/call", {"name": "echo", "arguments": {"text": "é"}})
    del message["params"]["_meta"][META_CLIENT_INFO]  # optional: falls back to the hint
    reply = await server.handle_http(
        message, headers=modern_headers("tools/call", "echo"), client_hint="ua"
    )
    assert reply.body["result"]["structuredContent"]["text"] == "é"
    assert reply.body["result"]["resultType"] == "complete"
    assert "ttlMs" not in reply.body["result"]
    assert handler.contexts[-1].client_name == "ua"


@pytest.mark.parametrize(
    ("message", "headers", "status", "code"),
    [
        # Envelope problems: -32602.
        (rpc("tools/list", {}, 4), modern_headers("tools/list"), 400, -32602),
        (
            rpc("server/discover", {"_meta": {META_PROTOCOL_VERSION: MODERN}}, 4),
            modern_headers("server/discover"),
            400,
            -32602,
        ),
        (
            rpc("server/discover", {"_meta": {META_CLIENT_CAPABILITIES: {}}}, 4),
            modern_headers("server/discover"),
            400,
            -32602,
        ),
        # Headers that disagree with the body: -32020.
        (modern("tools/list", request_id=4), modern_headers("prompts/list"), 400, -32020),
        (modern("tools/list", request_id=4), [("MCP-Protocol-Version", MODERN)], 400, -32020),
        (modern("tools/list", request_id=4), [("Mcp-Method", "tools/list")], 400, -32020),
        (
            modern("tools/call", {"name": "echo"}, 4),
            modern_headers("tools/call", "add"),
            400,
            -32020,
        ),
        (
            modern("tools/call", {"name": "echo"}, 4),
            modern_headers("tools/call"),
            400,
            -32020,
        ),
        (
            modern("tools/list", request_id=4),
            [*modern_headers("tools/list"), ("mcp-method", "tools/list")],
            400,
            -32020,
        ),
        # Unsupported versions: -32022.
        (
            modern("server/discover", request_id=4, **{META_PROTOCOL_VERSION: "2099-01-01"}),
            modern_headers("server/discover", version="2099-01-01"),
            400,
            -32022,
        ),
        (
            modern("server/discover", request_id=4, **{META_PROTOCOL_VERSION: 2026}),
            [("MCP-Protocol-Version", "2026"), ("Mcp-Method", "server/discover")],
            400,
            -32020,
        ),
        # Unknown and removed methods: 404 + -32601.
        (modern("nope/nothing", request_id=4), modern_headers("nope/nothing"), 404, -32601),
        (modern("initialize", request_id=4), modern_headers("initialize"), 404, -32601),
        (modern("ping", request_id=4), modern_headers("ping"), 404, -32601),
        (modern("logging/setLevel", request_id=4), modern_headers("logging/setLevel"), 404, -32601),
        # Handler errors follow the same table.
        (
            modern("tools/call", {"name": "nope"}, 4),
            modern_headers("tools/call", "nope"),
            400,
            -32602,
        ),
        (
            modern("resources/read", {"uri": "x://y"}, 4),
            modern_headers("resources/read", "x://y"),
            200,
            -32002,
        ),
    ],
)
async def test_modern_ladder(
    server: McpServer, message: dict, headers: list, status: int, code: int
) -> None:
    """Modern requests missing parts get the status and code of each rung of the ladder."""
    reply = await server.handle_http(message, headers=headers)
    assert reply.status == status
    assert reply.body["error"]["code"] == code
    assert reply.body["id"] == 4
    if code == -32022:
        assert reply.body["error"]["data"]["supported"][0] == MODERN
        assert reply.body["error"]["data"]["requested"] == "2099-01-01"


async def test_mcp_name_may_be_base64_wrapped(server: McpServer) -> None:
    """The Mcp-Name header may be base64-wrapped; a mismatch is -32020."""
    message = modern("tools/call", {"name": "echo", "arguments": {"text": "a"}})
    headers = modern_headers("tools/call", "=?base64?ZWNobw==?=")
    reply = await server.handle_http(message, headers=headers)
    assert reply.status == 200
    reply = await server.handle_http(message, headers=modern_headers("tools/call", "=?base64?!!?="))
    assert reply.body["error"]["code"] == -32020


async def test_modern_notifications_and_malformed(server: McpServer) -> None:
    """Modern notifications are 202; malformed modern requests are 400."""
    note = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"_meta": {META_PROTOCOL_VERSION: MODERN}},
    }
    assert await server.handle_http(note, headers=[("MCP-Protocol-Version", MODERN)]) == Reply(202)
    reply = await server.handle_http(
        {**note, "jsonrpc": "x"}, headers=[("MCP-Protocol-Version", MODERN)]
    )
    assert reply.status == 400
    reply = await server.handle_http(note, headers=[("MCP-Protocol-Version", "2099-01-01")])
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32022
    reply = await server.handle_http(
        {"jsonrpc": "2.0", "id": [1], "method": "server/discover"},
        headers=modern_headers("server/discover"),
    )
    assert reply.status == 400
    assert reply.body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid JSON-RPC request"},
    }


async def test_discover_without_header_or_envelope_is_modern(server: McpServer) -> None:
    """server/discover without version header or envelope is treated as modern."""
    # A bare discover is judged by the modern rules (and fails them), never as legacy.
    reply = await server.handle_http(rpc("server/discover", {}))
    assert reply.status == 400
    assert reply.body["error"]["code"] == -32602
    # Under a legacy header it is simply an unknown method.
    reply = await server.handle_http(
        rpc("server/discover", {}), headers=[("MCP-Protocol-Version", "2025-11-25")]
    )
    assert reply.status == 200
    assert reply.body["error"]["code"] == -32601


# --- stateful sessions (HTTP+SSE) -----------------------------------------------------------


async def test_session_negotiates_and_remembers_the_client(
    server: McpServer, handler: FakeHandler
) -> None:
    """A session negotiates its version and remembers the client for later requests."""
    state = SessionState()
    reply = await server.handle_session(
        rpc("initialize", {"protocolVersion": "2025-03-26", "clientInfo": {"name": "old-client"}}),
        session=state,
    )
    assert reply.status == 202
    assert reply.body["result"]["protocolVersion"] == "2025-03-26"
    assert state == SessionState("2025-03-26", "old-client")
    reply = await server.handle_session(rpc("tools/list"), session=state, user="u")
    assert handler.contexts[-1].client_name == "old-client"
    assert handler.contexts[-1].protocol_version == "2025-03-26"
    assert handler.contexts[-1].user == "u"
    # Batches at 2025-03-26; notifications get no answer.
    reply = await server.handle_session(
        [rpc("ping", request_id=1), rpc("ping", request_id=2)], session=state
    )
    assert [answer["id"] for answer in reply.body] == [1, 2]
    reply = await server.handle_session(
        {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=state
    )
    assert reply == Reply(202)
    reply = await server.handle_session([], session=state)
    assert reply.body["error"]["code"] == -32600
    reply = await server.handle_session(
        [{"jsonrpc": "2.0", "method": "notifications/x"}], session=state
    )
    assert reply == Reply(202)
    # After a newer negotiation, batches are refused.
    await server.handle_session(rpc("initialize", {"protocolVersion": "2025-06-18"}), session=state)
    reply = await server.handle_session([rpc("ping")], session=state)
    assert reply.body["error"]["code"] == -32600


async def test_a_batch_yields_to_the_loop_between_items(server: McpServer) -> None:
    """Other work (HA's own requests) runs between a batch's items, not only after them."""
    order: list[str] = []

    async def other() -> None:
        for _ in range(3):
            order.append("other")
            await asyncio.sleep(0)

    batch = [rpc("tools/call", {"name": "add", "arguments": {"amount": 1}}, i) for i in range(3)]
    original = server.handler.call_tool

    async def recording(ctx: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        order.append("item")
        return await original(ctx, name, arguments)

    server.handler.call_tool = recording  # type: ignore[method-assign]
    task = asyncio.create_task(other())
    reply = await server.handle_http(batch, headers=[("MCP-Protocol-Version", "2025-03-26")])
    await task
    assert reply.status == 200
    assert order.count("item") == 3
    first, last = order.index("item"), len(order) - 1 - order[::-1].index("item")
    assert "other" in order[first:last]


async def test_batch_length_and_reply_are_capped(server: McpServer, handler: FakeHandler) -> None:
    """A batch over the item cap is refused before any item runs; replies are capped too."""
    batch = [rpc("tools/call", {"name": "add", "arguments": {"amount": 1}}, i) for i in range(21)]
    reply = await server.handle_http(batch, headers=[("MCP-Protocol-Version", "2025-03-26")])
    assert reply.status == 400
    assert reply.body["error"]["data"] == {"maxBatchItems": 20}
    assert handler.total == 0
    state = SessionState(protocol_version="2025-03-26")
    reply = await server.handle_session(batch, session=state)
    assert reply.body["error"]["code"] == -32600
    assert handler.total == 0
    # The answers stop at the reply cap: the item that crosses it is withheld, the rest not run.
    handler.big_size = 1500
    server.max_batch_reply_bytes = 5000
    big = [rpc("tools/call", {"name": "big", "arguments": {}}, i) for i in range(3)]
    added = [rpc("tools/call", {"name": "add", "arguments": {"amount": 1}}, 9)]
    reply = await server.handle_session(big + added, session=state)
    answers = reply.body
    assert [a["id"] for a in answers] == [0, 1, 2, 9]
    assert "result" in answers[0]
    assert "was withheld" in answers[1]["error"]["message"]
    assert answers[2]["error"]["message"].startswith("Not run")
    assert answers[3]["error"]["message"].startswith("Not run")
    assert handler.total == 0  # the add beyond the cap never ran


@pytest.mark.parametrize(
    "body",
    [
        b'"\\ud800"',
        b'{"\\udbff": 1}',
        b'[1, {"a": ["\\udc00"]}]',
        b'{"id": "\\ud83d\\u0041"}',
    ],
)
def test_parse_json_refuses_lone_surrogates(body: bytes) -> None:
    """parse_json refuses lone surrogates."""
    with pytest.raises(ValueError, match="surrogate"):
        parse_json(body)


def test_parse_json_keeps_pairs_and_escaped_backslashes() -> None:
    """parse_json keeps surrogate pairs and escaped backslashes."""
    assert parse_json(b'"\\ud83d\\ude00"') == "\U0001f600"
    assert parse_json(b'"\\\\ud800"') == "\\ud800"
