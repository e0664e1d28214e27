"""Multi round-trip requests (2026-07-28): `input_required` results are continued, never empty."""

from __future__ import annotations

from typing import Any

import aiohttp
from aiohttp import web
import pytest

from custom_components.mcp_gateway.mcp import client as client_module
from custom_components.mcp_gateway.mcp.client import McpClient
from custom_components.mcp_gateway.mcp.errors import McpInputRequiredError, McpProtocolError

from .conftest import FakeMcp, rpc_error, rpc_result

DISCOVER = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
DONE = {"resultType": "complete", "content": [{"type": "text", "text": '{"success": true}'}]}


def script(fake: FakeMcp, answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A modern server answering tools/call with `answers` in turn; returns the calls' params."""
    calls: list[dict[str, Any]] = []

    async def on_post(request: web.Request, body: Any) -> web.StreamResponse:
        if body["method"] == "server/discover":
            return rpc_result(body, DISCOVER)
        if body["method"] == "tools/call":
            calls.append(body["params"])
            return rpc_result(body, answers[min(len(calls), len(answers)) - 1])
        return rpc_error(body, -32601, "Method not found", status=404)

    fake.on_post = on_post
    return calls


@pytest.fixture(autouse=True)
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    pauses: list[float] = []

    async def record(delay: float) -> None:
        pauses.append(delay)

    monkeypatch.setattr(client_module, "_sleep", record)
    return pauses


async def test_state_only_result_is_continued_with_the_same_arguments(
    fake: FakeMcp, http: aiohttp.ClientSession
) -> None:
    """A result with only requestState is continued with the same arguments until complete."""
    calls = script(
        fake,
        [
            {"resultType": "input_required", "requestState": "mrtr-1"},
            {"resultType": "input_required", "requestState": "mrtr-1"},  # still working
            DONE,
        ],
    )
    client = McpClient(http, fake.url, limits={"write": 2})
    result = await client.call_tool("hub_set_rule", {"confirm": True}, kind="write")
    assert result.data == {"success": True}
    assert [c.get("requestState") for c in calls] == [None, "mrtr-1", "mrtr-1"]
    assert all(c["name"] == "hub_set_rule" for c in calls)
    assert all(c["arguments"] == {"confirm": True} for c in calls)
    ids = [s.body["id"] for s in fake.posts("tools/call")]
    assert len(set(ids)) == 3  # each retry is a new request


async def test_input_requests_fail_clearly(fake: FakeMcp, http: aiohttp.ClientSession) -> None:
    """A result asking for input requests fails clearly, naming them."""
    ask = {
        "resultType": "input_required",
        "requestState": "s",
        "inputRequests": {"ok": {"method": "elicitation/create", "params": {"message": "Sure?"}}},
    }
    calls = script(fake, [ask])
    client = McpClient(http, fake.url)
    with pytest.raises(McpInputRequiredError) as err:
        await client.call_tool("hub_set_rule", {})
    assert "elicitation/create" in str(err.value)
    assert err.value.request_state == "s"
    assert len(calls) == 1


async def test_malformed_or_endless_input_required(
    fake: FakeMcp, http: aiohttp.ClientSession, pauses: list[float]
) -> None:
    """input_required without state, or forever, is a protocol error."""
    script(fake, [{"resultType": "input_required"}])
    with pytest.raises(McpProtocolError, match="without requestState"):
        await McpClient(http, fake.url).call_tool("t", {})
    calls = script(fake, [{"resultType": "input_required", "requestState": "again"}])
    with pytest.raises(McpProtocolError, match="still input_required"):
        await McpClient(http, fake.url).call_tool("t", {})
    assert len(calls) == client_module._MAX_INPUT_ROUNDS + 1
    assert max(pauses) == client_module._MAX_INPUT_ROUND_PAUSE
