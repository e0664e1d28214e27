"""Fuzzing the endpoint: random and mutated bodies and headers never give a 5xx or a logged error.

Hypothesis runs in a worker thread and sends each example through HA's real HTTP server on the
event loop, so the whole stack (middlewares, views, core, handler) is exercised.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from hypothesis import HealthCheck, given, settings, strategies as st
import pytest

from custom_components.mcp_gateway.core.settings import CONF_RATE_LIMIT, MAX_RATE_LIMIT
from custom_components.mcp_gateway.mcp.server import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    RequestContext,
    UnknownToolError,
)
from tests.simulation import gateway_entry

from .conftest import URL, FakeHandler, rpc


class QuietHandler(FakeHandler):
    """The fake handler without its deliberately buggy tool."""

    async def call_tool(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        if name == "boom":
            raise UnknownToolError(name)
        return await super().call_tool(ctx, name, arguments)


@pytest.fixture
def handler() -> FakeHandler:
    return QuietHandler()


@pytest.fixture(autouse=True)
def _no_rate_limit(hass: HomeAssistant) -> None:
    """Thousands of examples from one user: the (default-on) rate limit set to its maximum."""
    gateway_entry({CONF_RATE_LIMIT: MAX_RATE_LIMIT}).add_to_hass(hass)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
_meta = {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {}}
_SEEDS: list[dict[str, Any]] = [
    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}}),
    rpc("tools/list"),
    rpc("tools/call", {"name": "echo", "arguments": {"text": "x"}}),
    rpc("tools/call", {"name": "add", "arguments": {"amount": 2}}),
    rpc("tools/call", {"name": "big", "arguments": {}}),
    rpc("resources/read", {"uri": "mcp-gateway://guide"}),
    rpc("prompts/get", {"name": "p", "arguments": {}}),
    rpc("ping"),
    rpc("ping", request_id=2**64),  # beyond what fast JSON encoders carry
    rpc("tools/call", {"name": "add", "arguments": {"amount": 2**70}}),
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    rpc("server/discover", {"_meta": _meta}),
    rpc("tools/call", {"name": "echo", "arguments": {"text": "y"}, "_meta": _meta}),
]


@st.composite
def _mutated(draw: st.DrawFn) -> Any:
    message: dict[str, Any] = json.loads(json.dumps(draw(st.sampled_from(_SEEDS))))
    for _ in range(draw(st.integers(0, 3))):
        target = message
        params = message.get("params")
        if isinstance(params, dict) and draw(st.booleans()):
            target = params
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        keys = list(target)
        if action == "replace" and keys:
            target[draw(st.sampled_from(keys))] = draw(_json)
        elif action == "delete" and keys:
            del target[draw(st.sampled_from(keys))]
        else:
            target[draw(st.text(max_size=8))] = draw(_json)
    if draw(st.integers(0, 9)) == 0:
        return [message, draw(_json)]
    return message


_header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=24)
_headers = st.fixed_dictionaries(
    {},
    optional={
        "MCP-Protocol-Version": st.sampled_from(SUPPORTED_VERSIONS) | _header_text,
        "Mcp-Method": st.sampled_from(["tools/call", "tools/list", "server/discover"])
        | _header_text,
        "Mcp-Name": st.sampled_from(["echo", "=?base64?ZWNobw==?="]) | _header_text,
        "Accept": st.sampled_from(["application/json", "text/event-stream", "*/*"]) | _header_text,
        "Content-Type": st.sampled_from(["application/json", "text/plain"]) | _header_text,
    },
)
_bodies = (
    st.binary(max_size=200)
    | _json.map(lambda value: json.dumps(value).encode())
    | _mutated().map(lambda value: json.dumps(value).encode())
)


async def test_fuzzed_requests_never_fail_the_server(
    hass: HomeAssistant, client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Fuzzed HTTP requests never get a 5xx, and every JSON-RPC answer is well formed."""
    loop = asyncio.get_running_loop()
    statuses: dict[int, int] = {}

    async def send(body: bytes, headers: dict[str, str]) -> None:
        response = await client.post(URL, data=body, headers=headers)
        text = await response.text()
        statuses[response.status] = statuses.get(response.status, 0) + 1
        assert response.status < 500, (response.status, body, headers, text)
        if response.status in (200, 400, 404):
            answer = json.loads(text)
            for message in answer if isinstance(answer, list) else [answer]:
                assert message["jsonrpc"] == "2.0"
                assert ("result" in message) != ("error" in message)

    @settings(
        max_examples=2000,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(body=_bodies, headers=_headers)
    def check(body: bytes, headers: dict[str, str]) -> None:
        asyncio.run_coroutine_threadsafe(send(body, headers), loop).result()

    with caplog.at_level(logging.WARNING):
        await hass.async_add_executor_job(check)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    assert sum(statuses.values()) >= 2000
    # The examples reached the interesting paths, not just the JSON parser.
    assert {200, 400} <= set(statuses)


async def test_fuzzed_session_messages_never_fail_the_sse_transport(
    hass: HomeAssistant, client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Fuzzed SSE session messages are 202 or 400, never an error logged by the transport."""
    loop = asyncio.get_running_loop()
    stream = await client.get(f"{URL}/sse")
    assert (await stream.content.readline()).startswith(b"event: endpoint")
    endpoint = (await stream.content.readline()).decode().removeprefix("data: ").strip()
    await stream.content.readline()
    statuses: dict[int, int] = {}

    async def send(body: bytes) -> None:
        response = await client.post(
            endpoint, data=body, headers={"Content-Type": "application/json"}
        )
        statuses[response.status] = statuses.get(response.status, 0) + 1
        assert response.status in (202, 400), (response.status, body)

    @settings(
        max_examples=400, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(body=_bodies)
    def check(body: bytes) -> None:
        asyncio.run_coroutine_threadsafe(send(body), loop).result()

    with caplog.at_level(logging.WARNING):
        await hass.async_add_executor_job(check)
        # One last request, answered after every earlier one: the stream still works.
        await send(json.dumps(rpc("ping", request_id="last")).encode())
        while True:
            line = (await stream.content.readline()).decode()
            if line.startswith("data: ") and '"id":"last"' in line:
                break
        await hass.async_block_till_done(wait_background_tasks=True)
    stream.close()
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert {202, 400} <= set(statuses)
