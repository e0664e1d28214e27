"""Pure pieces of the client: ToolResult, the SSE decoder, Retry-After, and the auth helpers."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
import json
from typing import Any

import aiohttp
from aiohttp import web
from freezegun.api import FrozenDateTimeFactory
from hypothesis import given, settings, strategies as st
import pytest

from custom_components.mcp_gateway.mcp.client import (
    BasicAuth,
    BearerAuth,
    McpClient,
    QueryTokenAuth,
    ToolResult,
    _parse_retry_after,
)
from custom_components.mcp_gateway.mcp.errors import McpProtocolError, McpToolError
from custom_components.mcp_gateway.mcp.sse import SseDecoder, SseEvent

from .conftest import FakeMcp, rpc_result

# -- ToolResult ---------------------------------------------------------------------------------


def test_tool_result_prefers_structured_content() -> None:
    """structuredContent wins over the text."""
    result = ToolResult.from_result(
        {
            "content": [{"type": "text", "text": '{"a": 1}'}],
            "structuredContent": {"a": 2},
            "_meta": {"k": "v"},
            "resultType": "complete",
        }
    )
    assert result.data == {"a": 2}
    assert result.structured == {"a": 2}
    assert result.meta == {"k": "v"}
    assert result.is_error is False


@pytest.mark.parametrize(
    ("texts", "data"),
    [
        (['{"on": true}'], {"on": True}),
        (["[1, 2]"], [1, 2]),
        (["42"], 42),
        (["hello"], "hello"),
        (["line 1", "line 2"], "line 1\nline 2"),
        ([], ""),
    ],
)
def test_tool_result_data_from_text(texts: list[str], data: Any) -> None:
    """Without structuredContent: JSON parsed from the joined text, else the text itself."""
    content = [{"type": "text", "text": t} for t in texts]
    content.append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
    result = ToolResult.from_result({"content": content})
    assert result.text == "\n".join(texts)
    assert result.data == data
    assert len(result.content) == len(texts) + 1


def test_tool_result_is_error_and_frozen() -> None:
    """isError must be exactly true; results are immutable."""
    assert ToolResult.from_result({"content": [], "isError": True}).is_error is True
    assert ToolResult.from_result({"content": [], "isError": "yes"}).is_error is False
    result = ToolResult.from_result({})
    assert result.content == []
    assert result.meta is None
    with pytest.raises(AttributeError):
        result.text = "changed"  # type: ignore[misc]


@pytest.mark.parametrize(
    "raw",
    [
        {"content": [{"type": "text", "text": "x"}], "isError": False},
        {"content": [], "isError": True, "structuredContent": {"a": 1}, "_meta": {"m": 2}},
    ],
)
def test_tool_result_reads_every_field(raw: dict[str, Any]) -> None:
    """from_result() keeps each part of the MCP result the gateway passes on."""
    result = ToolResult.from_result({**raw, "resultType": "complete"})
    assert result.content == raw["content"]
    assert result.structured == raw.get("structuredContent")
    assert result.is_error is raw["isError"]
    assert result.meta == raw.get("_meta")


def test_tool_result_rejects_non_list_content() -> None:
    """A result whose content is not a list is not valid MCP."""
    with pytest.raises(McpProtocolError):
        ToolResult.from_result({"content": {"type": "text"}})


async def test_call_raises_tool_error_with_result(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """call() turns isError into McpToolError carrying the text and the ToolResult."""

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "tools/call":
            return rpc_result(
                body, {"content": [{"type": "text", "text": "device offline"}], "isError": True}
            )
        return await fake.default_post(request, body)

    fake.on_post = on_post
    client = McpClient(http, fake.url)
    with pytest.raises(McpToolError) as err:
        await client.call("switch", {"id": 3}, kind="write")
    assert str(err.value) == "device offline"
    assert err.value.result.is_error is True
    assert err.value.result.text == "device offline"
    # call_tool() hands the same result back without raising.
    assert (await client.call_tool("switch", {"id": 3})).is_error is True


# -- SSE decoder --------------------------------------------------------------------------------


def test_sse_decoder_fields() -> None:
    """id, retry, event, comments, multi-line data and the priming event."""
    decoder = SseDecoder()
    events = decoder.feed(
        b"\xef\xbb\xbf: comment\n"
        b"id: 1\nretry: 1500\ndata:\n\n"  # priming: not dispatched, but id and retry kept
        b"event: message\ndata: a\ndata:b\n\n"
        b"id\ndata: c\n\n"  # an empty id resets the last event id
        b"retry: soon\nfoo: bar\nid: x\0y\ndata: d\n\n"  # invalid retry and id are ignored
    )
    assert events == [
        SseEvent(event="message", data="a\nb", id="1"),
        SseEvent(event="message", data="c", id=None),
        SseEvent(event="message", data="d", id=None),
    ]
    assert decoder.retry == 1500


def test_sse_decoder_incomplete_event_is_not_dispatched() -> None:
    """Without the blank line that ends it, an event is never handed over."""
    decoder = SseDecoder()
    assert decoder.feed(b"data: {}\n") == []
    assert decoder.feed(b"\n") == [SseEvent(event="message", data="{}", id=None)]
    assert decoder.feed(b"data: half") == []


def test_sse_decoder_cr_split_from_lf() -> None:
    """A CRLF split between two chunks is one line end, not two."""
    decoder = SseDecoder()
    assert decoder.feed(b"data: x\r") == []
    assert decoder.feed(b"\ndata: y\r") == []
    assert decoder.feed(b"\n\r\n") == [SseEvent(event="message", data="x\ny", id=None)]


_EVENTS = st.lists(
    st.tuples(
        st.one_of(st.none(), st.text(alphabet="abc123-", min_size=1, max_size=5)),
        st.lists(
            st.text(
                alphabet=st.characters(blacklist_characters="\r\n\0", blacklist_categories=["Cs"]),
                max_size=20,
            ),
            min_size=1,
            max_size=3,
        ),
    ),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(events=_EVENTS, newline=st.sampled_from(["\n", "\r\n", "\r"]), data=st.data())
def test_sse_decoder_chunking_does_not_matter(
    events: list[tuple[str | None, list[str]]], newline: str, data: st.DataObject
) -> None:
    """However the bytes are cut, the same events come out as from one whole feed."""
    text = ""
    for event_id, lines in events:
        if event_id:
            text += f"id: {event_id}{newline}"
        text += "".join(f"data: {line}{newline}" for line in lines) + newline
    raw = text.encode()
    whole = SseDecoder().feed(raw)

    cuts = sorted(data.draw(st.lists(st.integers(0, len(raw)), max_size=8)))
    decoder = SseDecoder()
    pieces: list[SseEvent] = []
    start = 0
    for cut in [*cuts, len(raw)]:
        pieces.extend(decoder.feed(raw[start:cut]))
        start = cut
    if newline == "\r":
        # A trailing lone CR waits for a possible LF; end-of-stream never completes it.
        pieces.extend(decoder.feed(b"\n"))
        whole.extend(SseDecoder().feed(raw + b"\n")[len(whole) :])
    assert pieces == whole
    expected = ["\n".join(lines) for _, lines in events if "\n".join(lines)]
    assert [e.data for e in whole] == expected


# -- Retry-After --------------------------------------------------------------------------------


def test_retry_after_http_date(freezer: FrozenDateTimeFactory) -> None:
    """An HTTP date in the future is turned into seconds from now."""
    freezer.move_to("2026-03-01 12:00:00+00:00")
    later = datetime(2026, 3, 1, 12, 2, 0, tzinfo=UTC)
    assert _parse_retry_after(format_datetime(later, usegmt=True)) == 120.0
    assert _parse_retry_after(format_datetime(later - timedelta(hours=1), usegmt=True)) == 0.0
    assert _parse_retry_after("Sun, 01 Mar 2026 12:00:30 -0000") == 30.0  # zone-less date
    assert _parse_retry_after(" 30 ") == 30.0
    assert _parse_retry_after("-5") == 0.0
    assert _parse_retry_after("") is None
    assert _parse_retry_after("Thursday") is None


# -- Authentication -----------------------------------------------------------------------------


async def test_bearer_auth(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """Every request carries the bearer token, including DELETE on close."""
    client = McpClient(http, fake.url, auth=BearerAuth("s3cret"))
    await client.list_tools()
    await client.close()
    assert len(fake.seen) == 5
    assert all(s.headers["Authorization"] == "Bearer s3cret" for s in fake.seen)


async def test_query_token_auth(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """The token rides in the query string (custom parameter name kept), not in a header."""
    client = McpClient(http, fake.url + "?keep=1", auth=QueryTokenAuth("tok", param="key"))
    await client.list_tools()
    assert all(s.query == {"keep": "1", "key": "tok"} for s in fake.seen)
    assert all("Authorization" not in s.headers for s in fake.seen)
    assert client.url.endswith("/mcp?keep=1")  # the configured URL stays token-free

    default = McpClient(http, fake.url, auth=QueryTokenAuth("t2"))
    await default.list_tools()
    assert fake.seen[-1].query == {"access_token": "t2"}


async def test_basic_auth(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """HTTP Basic with user and password."""
    await McpClient(http, fake.url, auth=BasicAuth("maker", "pa:ss")).list_tools()
    scheme, _, encoded = fake.seen[0].headers["Authorization"].partition(" ")
    assert scheme == "Basic"
    assert base64.b64decode(encoded).decode() == "maker:pa:ss"


def test_secrets_stay_out_of_reprs() -> None:
    """Logging an auth object must not leak the secret."""
    for auth, secret in (
        (BearerAuth("tok-123"), "tok-123"),
        (QueryTokenAuth("tok-456"), "tok-456"),
        (BasicAuth("user", "pw-789"), "pw-789"),
    ):
        assert secret not in repr(auth)


async def test_error_messages_redact_query_token(http: aiohttp.ClientSession) -> None:
    """aiohttp may quote the whole URL in an error; the token is blanked out."""
    client = McpClient(http, "http://127.0.0.1:0/mcp", auth=QueryTokenAuth("leaky-token"))
    assert client._redact("GET http://h/mcp?access_token=leaky-token failed") == (
        "GET http://h/mcp?access_token=*** failed"
    )


async def test_extra_headers_sent(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """Fixed extra headers (e.g. a backend's API version) go on every request."""
    await McpClient(http, fake.url, headers={"X-Api": "2"}).list_tools()
    assert all(s.headers["X-Api"] == "2" for s in fake.seen)
    assert json.loads(json.dumps(fake.seen[0].body))["method"] == "server/discover"
