"""Streamable HTTP transport: SSE answers, stream resumption and every error path."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import aiohttp
from aiohttp import web
import pytest

from custom_components.mcp_gateway.mcp import client as client_module
from custom_components.mcp_gateway.mcp.client import McpClient
from custom_components.mcp_gateway.mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpProtocolError,
    McpRateLimitError,
    McpResponseTooLargeError,
    McpRpcError,
    McpTimeoutError,
)

from .conftest import FakeMcp, data_event, rpc_error, rpc_result, sse, stream_response

TOOL_OK = {"content": [{"type": "text", "text": "done"}]}


def answer_calls(fake: FakeMcp, handler: Any) -> None:
    """Legacy handshake as usual; `tools/call` answered by `handler(request, body)`."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body.get("method") == "tools/call":
            return await handler(request, body)
        return await fake.default_post(request, body)

    fake.on_post = on_post


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the client's resume delays instead of waiting them out."""
    recorded: list[float] = []

    async def fake_sleep(delay: float) -> None:
        recorded.append(delay)

    monkeypatch.setattr(client_module, "_sleep", fake_sleep)
    return recorded


# -- SSE answers --------------------------------------------------------------------------------


async def test_sse_answer_skips_everything_but_our_response(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Priming event, comments, notifications, server requests and foreign ids are skipped."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        rid = body["id"]
        stream = sse(
            "id: p1\nretry: 3000\ndata: ",  # priming: id only, empty data
            ": keep-alive",
            data_event({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
            data_event({"jsonrpc": "2.0", "id": 99, "method": "sampling/createMessage"}),
            data_event({"jsonrpc": "2.0", "id": rid + 1000, "result": {"wrong": True}}),
            "event: heartbeat\ndata: not json at all",  # another event type: not ours
            data_event({"jsonrpc": "2.0", "id": rid, "result": TOOL_OK}, event_id="p2"),
        )
        return await stream_response(request, stream)

    answer_calls(fake, handler)
    client = McpClient(http, fake.url)
    result = await client.call_tool("x")
    assert result.text == "done"
    assert len(fake.posts("tools/call")) == 1


async def test_sse_answer_in_tiny_chunks_with_crlf(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Events split across writes, CRLF line ends and multi-line data still decode."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        payload = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": TOOL_OK}, indent=1)
        lines = "".join(f"data: {line}\r\n" for line in payload.split("\n"))
        raw = (": hi\r\n\r\n" + lines + "\r\n").encode()
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8"})
        await resp.prepare(request)
        for i in range(0, len(raw), 3):
            await resp.write(raw[i : i + 3])
        await resp.write_eof()
        return resp

    answer_calls(fake, handler)
    assert (await McpClient(http, fake.url).call_tool("x")).text == "done"


async def test_sse_large_single_line(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """A data line far beyond aiohttp's 128 KiB readline limit."""
    big = "x" * 600_000

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        message = {
            "jsonrpc": "2.0",
            "id": body["id"],
            "result": {"content": [{"type": "text", "text": big}]},
        }
        return await stream_response(request, sse(data_event(message)))

    answer_calls(fake, handler)
    client = McpClient(http, fake.url)
    assert (await client.call_tool("x")).text == big
    assert client.stats.bytes_received > 600_000


async def test_sse_rpc_error(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """A JSON-RPC error inside the stream becomes McpRpcError."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        error = {"code": -32602, "message": "Unknown tool", "data": {"name": "x"}}
        return await stream_response(
            request, sse(data_event({"jsonrpc": "2.0", "id": body["id"], "error": error}))
        )

    answer_calls(fake, handler)
    with pytest.raises(McpRpcError) as err:
        await McpClient(http, fake.url).call_tool("x")
    assert (err.value.code, err.value.message, err.value.data) == (
        -32602,
        "Unknown tool",
        {"name": "x"},
    )


async def test_sse_stream_without_our_response(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The stream ends after answering some other id and gave no event id: protocol error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        other = {"jsonrpc": "2.0", "id": body["id"] + 1, "result": TOOL_OK}
        return await stream_response(request, sse(data_event(other)))

    answer_calls(fake, handler)
    with pytest.raises(McpProtocolError, match="ended without a response"):
        await McpClient(http, fake.url).call_tool("x")


async def test_sse_truncated_stream(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The stream ends in the middle of an event: nothing usable, protocol error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        half = f'data: {{"jsonrpc": "2.0", "id": {body["id"]}, "resu'
        return await stream_response(request, half.encode())

    answer_calls(fake, handler)
    with pytest.raises(McpProtocolError):
        await McpClient(http, fake.url).call_tool("x")


async def test_sse_connection_dropped(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The connection breaks mid-stream with no event id to resume from: connection error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, b": started\n\n", close=True)

    answer_calls(fake, handler)
    with pytest.raises(McpConnectionError):
        await McpClient(http, fake.url).call_tool("x")


async def test_sse_event_not_a_message_object(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """An event whose JSON is not an object is a protocol error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse("data: [1, 2]"))

    answer_calls(fake, handler)
    with pytest.raises(McpProtocolError, match="not a JSON-RPC message"):
        await McpClient(http, fake.url).call_tool("x")


async def test_sse_malformed_event(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """An event whose data is not JSON is a protocol error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse("data: {not json"))

    answer_calls(fake, handler)
    with pytest.raises(McpProtocolError, match="malformed JSON"):
        await McpClient(http, fake.url).call_tool("x")


async def test_sse_resume_with_last_event_id(
    fake: FakeMcp, http: aiohttp.ClientSession, sleeps: list[float]
) -> None:
    """Stream closed before the answer: wait `retry`, GET with Last-Event-ID, get the answer."""
    pending: dict[str, int] = {}

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        pending["id"] = body["id"]
        return await stream_response(request, sse("id: ev-7\nretry: 250\ndata: "))

    async def on_get(request: web.Request, body: Any) -> web.StreamResponse:
        answer = {"jsonrpc": "2.0", "id": pending["id"], "result": TOOL_OK}
        return await stream_response(request, sse(data_event(answer, event_id="ev-8")))

    answer_calls(fake, handler)
    fake.on_get = on_get
    client = McpClient(http, fake.url)
    assert (await client.call_tool("x")).text == "done"
    assert sleeps == [0.25]
    gets = [s for s in fake.seen if s.method == "GET"]
    assert len(gets) == 1
    assert gets[0].headers["Last-Event-ID"] == "ev-7"
    assert gets[0].headers["Mcp-Session-Id"] == "sess-1"
    assert gets[0].headers["MCP-Protocol-Version"] == "2025-11-25"
    assert gets[0].headers["Accept"] == "text/event-stream"
    assert len(fake.posts("tools/call")) == 1  # resumed, never re-sent


async def test_sse_resume_default_delay_and_chain(
    fake: FakeMcp, http: aiohttp.ClientSession, sleeps: list[float]
) -> None:
    """Without `retry` the default delay applies; a resumed stream may itself be resumed."""
    pending: dict[str, int] = {}
    gets: list[str] = []

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        pending["id"] = body["id"]
        return await stream_response(request, sse("id: a\ndata: "))

    async def on_get(request: web.Request, body: Any) -> web.StreamResponse:
        gets.append(request.headers["Last-Event-ID"])
        if len(gets) == 1:
            return await stream_response(request, sse("id: b\ndata: "))
        answer = {"jsonrpc": "2.0", "id": pending["id"], "result": TOOL_OK}
        return await stream_response(request, sse(data_event(answer)))

    answer_calls(fake, handler)
    fake.on_get = on_get
    assert (await McpClient(http, fake.url).call_tool("x")).text == "done"
    assert gets == ["a", "b"]
    assert sleeps == [1.0, 1.0]


async def test_sse_resume_refused(
    fake: FakeMcp, http: aiohttp.ClientSession, sleeps: list[float]
) -> None:
    """The server answers the resume GET with 405: protocol error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse("id: a\nretry: 5\ndata: "))

    answer_calls(fake, handler)  # no on_get: the fake answers GET with 405
    with pytest.raises(McpProtocolError) as err:
        await McpClient(http, fake.url).call_tool("x")
    assert err.value.status == 405
    assert sleeps == [0.005]


async def test_sse_resume_wrong_content_type(
    fake: FakeMcp, http: aiohttp.ClientSession, sleeps: list[float]
) -> None:
    """A resume GET answered with JSON instead of a stream is a protocol error."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse("id: a\nretry: 5\ndata: "))

    async def on_get(request: web.Request, body: Any) -> web.StreamResponse:
        return web.json_response({})

    answer_calls(fake, handler)
    fake.on_get = on_get
    with pytest.raises(McpProtocolError, match="not an event stream"):
        await McpClient(http, fake.url).call_tool("x")


async def test_sse_resume_gives_up(
    fake: FakeMcp, http: aiohttp.ClientSession, sleeps: list[float]
) -> None:
    """A server that keeps dropping the stream without answering is given up on."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse("id: a\nretry: 1\ndata: "))

    async def on_get(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse(": nothing yet"))

    answer_calls(fake, handler)
    fake.on_get = on_get
    with pytest.raises(McpProtocolError, match="resumptions"):
        await McpClient(http, fake.url).call_tool("x")
    assert len([s for s in fake.seen if s.method == "GET"]) == len(sleeps) == 5


# -- JSON answers and HTTP errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        pytest.param(
            lambda b: web.Response(text="{broken", content_type="application/json"),
            McpProtocolError,
            "malformed JSON",
            id="malformed-json",
        ),
        pytest.param(
            lambda b: web.json_response([{"jsonrpc": "2.0", "id": b["id"], "result": {}}]),
            McpProtocolError,
            "not the response",
            id="json-array",
        ),
        pytest.param(
            lambda b: web.json_response({"jsonrpc": "2.0", "id": b["id"] + 5, "result": {}}),
            McpProtocolError,
            "not the response",
            id="wrong-id",
        ),
        pytest.param(
            lambda b: web.json_response({"jsonrpc": "2.0", "id": b["id"]}),
            McpProtocolError,
            "neither",
            id="no-result",
        ),
        pytest.param(
            lambda b: web.json_response(
                {"jsonrpc": "2.0", "id": b["id"], "result": {"content": 3}}
            ),
            McpProtocolError,
            "content",
            id="bad-content",
        ),
        pytest.param(
            lambda b: web.json_response({"jsonrpc": "2.0", "id": b["id"], "error": "bad"}),
            McpProtocolError,
            "malformed JSON-RPC error",
            id="bad-error-object",
        ),
        pytest.param(
            lambda b: web.Response(text="<html>hi</html>", content_type="text/html"),
            McpProtocolError,
            "content type 'text/html'",
            id="wrong-content-type",
        ),
        pytest.param(
            lambda b: web.Response(status=202), McpProtocolError, "202", id="accepted-no-body"
        ),
        pytest.param(
            lambda b: web.Response(status=400, text="bad"), McpProtocolError, "400", id="http-400"
        ),
        pytest.param(
            lambda b: web.Response(status=500, text="oops"),
            McpConnectionError,
            "500",
            id="http-500",
        ),
        pytest.param(lambda b: web.Response(status=502), McpConnectionError, "502", id="http-502"),
        pytest.param(
            lambda b: rpc_error(b, -32603, "Internal error", status=500),
            McpRpcError,
            "Internal error",
            id="http-500-with-rpc-error",
        ),
        pytest.param(
            lambda b: rpc_error(b, -32602, "Unknown tool: x", data={"tool": "x"}),
            McpRpcError,
            "Unknown tool",
            id="rpc-error",
        ),
        pytest.param(
            lambda b: rpc_error(None, -32700, "Parse error"),
            McpRpcError,
            "Parse error",
            id="rpc-error-null-id",
        ),
        pytest.param(
            # A gate in front of the server refusing the credential in a plain body, HTTP 200
            # (Homecast's community server: src/server/local-server.ts).
            lambda b: web.json_response({"error": "Authentication required"}),
            McpAuthError,
            "Authentication required",
            id="plain-auth-refusal",
        ),
        pytest.param(
            lambda b: web.json_response({"error": "Server not configured"}),
            McpProtocolError,
            "malformed JSON-RPC error",
            id="plain-other-error",
        ),
    ],
)
async def test_bad_answers(
    fake: FakeMcp,
    http: aiohttp.ClientSession,
    make: Any,
    error: type[Exception],
    match: str,
) -> None:
    """Each malformed or failed answer maps onto its error type, and is never retried."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return make(body)

    answer_calls(fake, handler)
    with pytest.raises(error, match=match):
        await McpClient(http, fake.url).call_tool("x", kind="write")
    assert len(fake.posts("tools/call")) == 1


async def test_http_error_statuses_are_kept(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The HTTP status travels on the error for callers that branch on it."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(status=503)

    answer_calls(fake, handler)
    with pytest.raises(McpConnectionError) as err:
        await McpClient(http, fake.url).call_tool("x")
    assert err.value.status == 503


async def test_rpc_error_fields(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """code, message and data are exposed."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return rpc_error(body, -32002, "Resource not found", data={"uri": "a://b"})

    answer_calls(fake, handler)
    with pytest.raises(McpRpcError) as err:
        await McpClient(http, fake.url).call_tool("x")
    assert err.value.code == -32002
    assert err.value.message == "Resource not found"
    assert err.value.data == {"uri": "a://b"}


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_errors(fake: FakeMcp, http: aiohttp.ClientSession, status: int) -> None:
    """401 and 403 are McpAuthError carrying the status."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(status=status)

    answer_calls(fake, handler)
    with pytest.raises(McpAuthError) as err:
        await McpClient(http, fake.url).call_tool("x")
    assert err.value.status == status
    assert err.value.challenge is None


async def test_auth_error_carries_the_challenge(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The 401's WWW-Authenticate tells a caller which scheme the server wants."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(status=401, headers={"WWW-Authenticate": 'Bearer realm="clock"'})

    answer_calls(fake, handler)
    with pytest.raises(McpAuthError) as err:
        await McpClient(http, fake.url).call_tool("x")
    assert err.value.challenge == 'Bearer realm="clock"'


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("7", 7.0),
        ("0.5", 0.5),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
        ("soon", None),
        (None, None),
    ],
)
async def test_rate_limited(
    fake: FakeMcp, http: aiohttp.ClientSession, header: str | None, expected: float | None
) -> None:
    """429 is McpRateLimitError with Retry-After in seconds (a past date counts as 0)."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        headers = {"Retry-After": header} if header is not None else {}
        return web.Response(status=429, headers=headers)

    answer_calls(fake, handler)
    with pytest.raises(McpRateLimitError) as err:
        await McpClient(http, fake.url).call_tool("x", kind="write")
    assert err.value.retry_after == expected
    assert len(fake.posts("tools/call")) == 1


async def test_timeout_default_and_per_call(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """A server that never answers: the client default applies, and a per-call override."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        await fake.release.wait()  # parked until teardown
        return rpc_result(body, TOOL_OK)

    answer_calls(fake, handler)
    client = McpClient(http, fake.url, timeout=0.2)
    await client.connect()
    with pytest.raises(McpTimeoutError):
        await client.call_tool("x")
    assert isinstance(McpTimeoutError("x"), McpConnectionError)

    patient = McpClient(http, fake.url, timeout=60.0)
    with pytest.raises(McpTimeoutError):
        await patient.call_tool("x", timeout=0.1)


async def test_timeout_while_streaming(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The timeout covers reading the stream, not only the headers."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b"id: 1\ndata: \n\n")
        await fake.release.wait()
        return resp

    answer_calls(fake, handler)
    with pytest.raises(McpTimeoutError):
        await McpClient(http, fake.url).call_tool("x", timeout=0.2)


async def test_connection_refused(http: aiohttp.ClientSession) -> None:
    """Nothing listening: McpConnectionError, and the client stays unconnected."""
    app = web.Application()
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    await runner.cleanup()  # the port is free again: connecting is refused
    client = McpClient(http, f"http://127.0.0.1:{port}/mcp")
    with pytest.raises(McpConnectionError) as err:
        await client.connect()
    assert err.value.status is None
    assert not isinstance(err.value, McpTimeoutError)
    assert client.protocol_version is None


async def test_endpoint_not_found(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """A wrong path (404 without a session): connection error with status 404."""
    client = McpClient(http, fake.url.replace("/mcp", "/nothing-here"))
    with pytest.raises(McpConnectionError) as err:
        await client.connect()
    assert err.value.status == 404


async def test_stats_count_traffic(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """requests and bytes_sent match what the server saw; bytes_received counts bodies."""
    client = McpClient(http, fake.url)
    await client.call_tool("echo", {"text": "abc"})
    assert client.stats.requests == len(fake.seen) == 4
    assert client.stats.bytes_sent == sum(s.size for s in fake.seen)
    assert client.stats.bytes_received > 0


async def test_request(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """request() returns the result dict and raises the server's JSON-RPC error."""
    client = McpClient(http, fake.url)
    assert await client.request("tools/list") == {"tools": [{"name": "echo", "inputSchema": {}}]}
    with pytest.raises(McpRpcError) as err:
        await client.request("prompts/list")
    assert err.value.code == -32601


async def test_list_tools_follows_cursor(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """Pages are fetched until nextCursor is absent."""
    pages = {None: (["a", "b"], "p2"), "p2": (["c"], "p3"), "p3": (["d"], None)}

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] != "tools/list":
            return await fake.default_post(request, body)
        names, cursor = pages[(body.get("params") or {}).get("cursor")]
        result: dict[str, Any] = {"tools": [{"name": n} for n in names]}
        if cursor:
            result["nextCursor"] = cursor
        return rpc_result(body, result)

    fake.on_post = on_post
    tools = await McpClient(http, fake.url).list_tools()
    assert [t["name"] for t in tools] == ["a", "b", "c", "d"]
    assert [(s.body.get("params") or {}).get("cursor") for s in fake.posts("tools/list")] == [
        None,
        "p2",
        "p3",
    ]


@pytest.mark.parametrize(
    "result",
    [{"tools": [], "nextCursor": "same"}, {"tools": "nope"}, {"tools": [], "nextCursor": 5}],
)
async def test_list_tools_bad_pages(
    fake: FakeMcp, http: aiohttp.ClientSession, result: dict[str, Any]
) -> None:
    """A cursor that repeats, or a malformed page, is a protocol error (no endless loop)."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] != "tools/list":
            return await fake.default_post(request, body)
        return rpc_result(body, result)

    fake.on_post = on_post
    with pytest.raises(McpProtocolError):
        await McpClient(http, fake.url).list_tools()


async def test_write_cap(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """limits={"write": 2}: three concurrent writes, never more than two in flight."""
    in_flight = 0
    most = 0
    two_arrived = asyncio.Event()
    gate = asyncio.Event()

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        if in_flight == 2:
            two_arrived.set()
        await gate.wait()
        in_flight -= 1
        return rpc_result(body, TOOL_OK)

    answer_calls(fake, handler)
    client = McpClient(http, fake.url, limits={"write": 2})
    await client.connect()
    sent_before = client.stats.requests
    tasks = [asyncio.create_task(client.call_tool("w", kind="write")) for _ in range(3)]
    try:
        await two_arrived.wait()
        # The third write is queued inside the client: it has not even been sent.
        assert client.stats.requests - sent_before == 2
        assert not any(task.done() for task in tasks)
    finally:
        gate.set()
        results = await asyncio.gather(*tasks)
    assert [r.text for r in results] == ["done"] * 3
    assert most == 2
    assert len(fake.posts("tools/call")) == 3


async def test_reads_are_not_capped_by_write_limit(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """The same setup with reads reaches three in flight: the cap is per kind."""
    in_flight = 0
    three_arrived = asyncio.Event()

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        nonlocal in_flight
        in_flight += 1
        if in_flight == 3:
            three_arrived.set()
        await three_arrived.wait()
        return rpc_result(body, TOOL_OK)

    answer_calls(fake, handler)
    client = McpClient(http, fake.url, limits={"write": 2})
    results = await asyncio.gather(*(client.call_tool("r", kind="read") for _ in range(3)))
    assert len(results) == 3
    assert three_arrived.is_set()


async def test_sse_resume_beyond_deadline_times_out(
    fake: FakeMcp, http: aiohttp.ClientSession, sleeps: list[float]
) -> None:
    """A `retry` longer than the call's remaining time: time out now instead of waiting."""

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return await stream_response(request, sse("id: a\nretry: 60000\ndata: "))

    answer_calls(fake, handler)
    with pytest.raises(McpTimeoutError):
        await McpClient(http, fake.url, timeout=5.0).call_tool("x")
    assert sleeps == []
    assert [s.method for s in fake.seen].count("GET") == 0


async def test_notification_answered_with_json_body(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Some servers answer a notification 200 with a JSON body: accepted and drained."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if "id" not in body:
            return web.json_response({"jsonrpc": "2.0", "result": {}})
        return await fake.default_post(request, body)

    fake.on_post = on_post
    client = McpClient(http, fake.url, prefer_modern=False)
    await client.connect()
    assert fake.seen[-1].rpc_method == "notifications/initialized"
    assert client.session_id is not None


# -- the answer cap -----------------------------------------------------------------------------


async def test_an_endless_event_stream_is_cut_at_the_cap(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """Events that never answer (or one huge event) stop being read past the cap."""
    sent = 0

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        nonlocal sent
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        progress = data_event({"jsonrpc": "2.0", "method": "notifications/progress"}).encode()
        try:
            for _ in range(100_000):
                await resp.write(progress * 100)
                sent += len(progress) * 100
        except (ConnectionResetError, RuntimeError):
            pass
        return resp

    answer_calls(fake, handler)
    client = McpClient(http, fake.url, max_response_bytes=256 * 1024)
    with pytest.raises(McpResponseTooLargeError) as caught:
        await client.call_tool("x")
    assert caught.value.limit == 256 * 1024
    assert "262144 bytes" in str(caught.value)
    # The chunk that crossed the cap is whatever aiohttp had buffered: far from the stream.
    assert client.stats.bytes_received < 1024 * 1024


async def _refused_past_cap(fake: FakeMcp, http: aiohttp.ClientSession, handler: Any) -> McpClient:
    """A client whose handshake passes and whose call meets a 100,000-byte cap, after that
    call was refused as too large."""
    answer_calls(fake, handler)
    limits = iter([10**9, 10**9, 100_000])
    client = McpClient(http, fake.url, max_response_bytes=lambda: next(limits, 100_000))
    with pytest.raises(McpResponseTooLargeError):
        await client.call_tool("x")
    return client


@pytest.mark.parametrize("declared", [True, False])
async def test_a_json_answer_past_the_cap_is_refused(
    fake: FakeMcp, http: aiohttp.ClientSession, declared: bool
) -> None:
    """With a Content-Length it is refused before reading; without, once the cap is crossed."""
    message = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "x" * 300_000}]},
        }
    ).encode()

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        if declared:
            return web.Response(body=message, content_type="application/json")
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        await resp.write(message)
        await resp.write_eof()
        return resp

    client = await _refused_past_cap(fake, http, handler)
    assert client.stats.bytes_received < 300_000


async def test_a_compressed_answer_is_capped_as_it_unpacks(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """A small gzip body that unpacks past the cap is refused once the cap is crossed, though
    its Content-Length is far below it."""
    message = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"content": [{"type": "text", "text": "z" * 2_000_000}]},
        }
    ).encode()
    packed = gzip.compress(message)
    assert len(packed) < 100_000

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        return web.Response(
            body=packed,
            headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
        )

    client = await _refused_past_cap(fake, http, handler)
    assert client.stats.bytes_received < 1_000_000


async def test_an_answer_within_the_cap_is_read_whole(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """The cap refuses only what exceeds it."""
    big = "y" * 200_000

    async def handler(request: web.Request, body: Any) -> web.StreamResponse:
        message = {
            "jsonrpc": "2.0",
            "id": body["id"],
            "result": {"content": [{"type": "text", "text": big}]},
        }
        return web.json_response(message)

    answer_calls(fake, handler)
    client = McpClient(http, fake.url, max_response_bytes=256 * 1024)
    assert (await client.call_tool("x")).text == big
