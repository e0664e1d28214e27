"""Work one caller can make Home Assistant do is bounded: batches, SSE sessions, rate, input.

Each test runs an attack against the real gateway and checks it is refused (or bounded), and
that other callers are unaffected.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from custom_components.mcp_gateway.backends.hubitat.const import KIND as HUBITAT_KIND
from custom_components.mcp_gateway.core.settings import CONF_RATE_LIMIT
from custom_components.mcp_gateway.gateway.calls import execute as execute_module
from custom_components.mcp_gateway.gateway.catalog import store as catalog_module
from custom_components.mcp_gateway.gateway.http import sse as sse_module
from custom_components.mcp_gateway.gateway.http.view import DATA_GATEWAY
from custom_components.mcp_gateway.mcp.server import MAX_BATCH_ITEMS

from .conftest import HUBITAT, URL, SecurityHome, error_code

# No MCP-Protocol-Version: the spec makes that a 2025-03-26 client, which may batch.
LEGACY = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _call(request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _ping(request_id: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


async def _post(home: SecurityHome, kind: str, body: Any) -> tuple[int, Any, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    response = await home.clients[kind].post(URL, data=data, headers=LEGACY)
    text = await response.text()
    return response.status, json.loads(text) if text else None, response.headers


def _set_rate_limit(home: SecurityHome, per_minute: int | None) -> None:
    options = {} if per_minute is None else {CONF_RATE_LIMIT: per_minute}
    home.hass.config_entries.async_update_entry(home.settings_entry(), options=options)


async def test_a_long_batch_is_refused_before_anything_runs(home: SecurityHome) -> None:
    """A batch over the item cap is refused before anything runs."""
    state = home.hass.states.get(home.policy_light)
    assert state is not None
    target = "off" if state.state == "on" else "on"
    switch = {"updates": [{"entity_id": home.policy_light, "state": target}]}
    batch = [_call(i, "set_state", switch) for i in range(MAX_BATCH_ITEMS + 1)]
    status, body, _ = await _post(home, "read_only", batch)
    assert status == 400
    assert body["error"]["code"] == -32600
    assert body["error"]["data"] == {"maxBatchItems": MAX_BATCH_ITEMS}
    # A 1,000-item batch: refused just the same.
    status, _, _ = await _post(home, "admin", [_ping(i) for i in range(1000)])
    assert status == 400
    await home.hass.async_block_till_done()
    assert home.hass.states.get(home.policy_light).state == state.state  # type: ignore[union-attr]


async def test_batch_items_are_charged_one_by_one(home: SecurityHome) -> None:
    """A read-only user cannot run 72,500 calls against a 60/minute limit in batches."""
    _set_rate_limit(home, 30)
    status, body, _ = await _post(home, "read_only", [_ping(i) for i in range(20)])
    assert status == 200
    assert len(body) == 20
    status, body, headers = await _post(home, "read_only", [_ping(i) for i in range(20)])
    assert status == 429
    assert int(headers["Retry-After"]) >= 1
    assert body["error"]["code"] == -32029
    # Ten items were left of thirty, and the refused batch counted as one request: single
    # requests still pass until the nine left are used up.
    for request_id in range(9):
        assert (await _post(home, "read_only", _ping(request_id)))[0] == 200
    assert (await _post(home, "read_only", _ping(99)))[0] == 429
    # Other users have budgets of their own.
    assert (await _post(home, "user", [_ping(i) for i in range(20)]))[0] == 200


async def test_the_rate_limit_is_on_by_default(home: SecurityHome) -> None:
    """The rate limit is on by default, per user."""
    # A stopped clock: tokens must not refill while 121 requests run on a slow machine.
    home.hass.data[DATA_GATEWAY].clock = lambda: 1000.0
    _set_rate_limit(home, None)
    for _ in range(6):
        status, _, _ = await _post(home, "read_only", [_ping(i) for i in range(20)])
        assert status == 200
    status, _, headers = await _post(home, "read_only", _ping(1))
    assert status == 429
    assert "Retry-After" in headers
    assert (await _post(home, "admin", _ping(1)))[0] == 200


async def test_a_batch_reply_is_bounded(home: SecurityHome) -> None:
    """1,000 get_state calls would give a 54 MB answer: the batch's answer is capped
    and the items beyond the cap are not even run."""
    runtime = home.hass.data[DATA_GATEWAY]
    runtime.server.max_batch_reply_bytes = 16 * 1024
    batch = [_call(i, "get_state", {}) for i in range(MAX_BATCH_ITEMS)]
    status, body, _ = await _post(home, "read_only", batch)
    assert status == 200
    assert [answer["id"] for answer in body] == list(range(MAX_BATCH_ITEMS))
    ran = [answer for answer in body if "result" in answer]
    withheld = [a for a in body if "error" in a and "was withheld" in a["error"]["message"]]
    not_run = [a for a in body if "error" in a and a["error"]["message"].startswith("Not run")]
    assert len(ran) + len(withheld) >= 1
    assert len(withheld) <= 1
    assert not_run
    assert len(ran) + len(withheld) + len(not_run) == MAX_BATCH_ITEMS
    assert len(json.dumps(ran)) <= runtime.server.max_batch_reply_bytes


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
        b'{"jsonrpc":"2.0","id":1,"method":"\\ud800"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\udfff"}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"get_state","arguments":{"entity_ids":["\\ud800x"]}}}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"get_state","arguments":{"\\udc00":1}}}',
        b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"\\ud83d","method":"x"}]',
    ],
)
async def test_a_lone_surrogate_is_invalid_input(
    home: SecurityHome, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    """A "\\ud800" anywhere is a parse error, not HTTP 500 and a traceback."""
    with caplog.at_level(logging.WARNING):
        status, answer, _ = await _post(home, "read_only", body)
    assert status == 400
    assert answer["error"]["code"] == -32700
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_surrogate_pair_is_text(home: SecurityHome) -> None:
    """A proper pair (an emoji) is ordinary text, not refused."""
    status, answer, _ = await _post(
        home, "read_only", b'{"jsonrpc":"2.0","id":"\\ud83d\\ude00","method":"ping"}'
    )
    assert status == 200
    assert answer["id"] == "\U0001f600"


async def test_an_unread_sse_session_is_bounded_and_freed(home: SecurityHome) -> None:
    """300 x 512 KiB messages posted to an unread session do not grow HA by 190 MiB."""
    client = home.clients["read_only"]
    stream = await client.get(f"{URL}/sse")
    assert stream.status == 200
    line = b""
    while not line.startswith(b"data: "):
        line = await stream.content.readline()
    endpoint = line[len(b"data: ") :].strip().decode()
    manager = home.hass.data[DATA_GATEWAY].sessions
    (session,) = manager.sessions.values()
    # The session is busy with earlier requests: nothing it gets now is answered yet.
    for _ in range(sse_module.MAX_IN_FLIGHT):
        await session.in_flight.acquire()
    big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 512 * 1024}}
    accepted = refused = 0
    for _ in range(300):
        response = await client.post(endpoint, json=big)
        await response.read()
        if response.status == 202:
            accepted += 1
        else:
            assert response.status == 429
            assert "Retry-After" in response.headers
            refused += 1
    assert accepted * 512 * 1024 <= sse_module.MAX_PENDING_BYTES
    assert 0 < accepted <= sse_module.MAX_PENDING
    assert refused == 300 - accepted
    # Another session, and another user, are unaffected.
    assert (await _post(home, "user", _ping(1)))[0] == 200
    # Closing the stream frees everything the session held.
    stream.close()
    for _ in range(100):
        if not manager.sessions:
            break
        await asyncio.sleep(0.01)
    assert manager.sessions == {}
    assert session.closed
    assert session.pending_bytes == 0
    assert session.queue.qsize() <= 1  # only the writer's wake-up marker, if unread
    await home.hass.async_block_till_done()
    assert not session.tasks


async def test_a_hung_backend_costs_one_timeout(
    home: SecurityHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hung hub must not answer after about 21 s, a catalog refresh and a call each waiting
    their full timeout: one deadline covers both, and the call is never even sent."""
    runtime = home.hubitat_entry.runtime_data
    args = {"tool": "hub_get_info", "args": {}}
    assert error_code(await home.call("admin", HUBITAT, args)) is None
    monkeypatch.setattr(catalog_module, "CATALOG_TTL", 0)  # every call refreshes the catalog
    monkeypatch.setattr(execute_module, "BACKEND_CALL_TIMEOUT", 0.3)
    sent: list[Any] = []
    original = runtime.client.call_tool

    async def spy(name: str, arguments: Any = None, **kwargs: Any) -> Any:
        sent.append((name, (arguments or {}).get("tool")))
        return await original(name, arguments, **kwargs)

    monkeypatch.setattr(runtime.client, "call_tool", spy)
    home.sims[HUBITAT_KIND].faults.hang = True
    result = await home.call("admin", HUBITAT, args)
    assert error_code(result) == "timeout"
    assert not [call for call in sent if "hub_get_info" in call]
