"""The HTTP+SSE transport (2024-11-05): endpoint event, answers over the stream, session bounds."""

from __future__ import annotations

from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import HomeAssistant
import orjson
import pytest

from custom_components.mcp_gateway.gateway.http.view import GatewayRuntime

from .conftest import URL, ClientFactory, FakeHandler, make_token, rpc

SSE = f"{URL}/sse"


async def _event(response: ClientResponse) -> tuple[str | None, str | None]:
    """The next event (name, data); comment lines are returned as ("comment", text)."""
    name = data = None
    while True:
        line = (await response.content.readline()).decode()
        if line == "":
            return None, None  # end of stream
        line = line.rstrip("\n")
        if line.startswith(":"):
            return "comment", line[1:].strip()
        if line == "":
            if name or data:
                return name, data
            continue
        field, _, value = line.partition(": ")
        if field == "event":
            name = value
        elif field == "data":
            data = value


async def _open(client: TestClient) -> tuple[ClientResponse, str]:
    response = await client.get(SSE)
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    name, endpoint = await _event(response)
    assert name == "endpoint"
    assert endpoint is not None
    assert endpoint.startswith(f"{URL}/messages/")
    return response, endpoint


async def test_messages_are_answered_over_the_stream(
    client: TestClient, handler: FakeHandler, hass_admin_user: Any
) -> None:
    """Messages posted to a session are answered over its stream."""
    stream, endpoint = await _open(client)
    init = rpc("initialize", {"protocolVersion": "2024-11-05", "clientInfo": {"name": "old"}})
    response = await client.post(endpoint, json=init)
    assert response.status == 202
    name, data = await _event(stream)
    assert name == "message"
    answer = orjson.loads(data)
    assert answer["result"]["protocolVersion"] == "2024-11-05"

    assert (
        await client.post(endpoint, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    ).status == 202
    batch = [
        rpc("tools/call", {"name": "add", "arguments": {"amount": 1}}, 1),
        rpc("ping", request_id=2),
    ]
    assert (await client.post(endpoint, json=batch)).status == 202
    name, data = await _event(stream)
    answers = orjson.loads(data)
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["structuredContent"] == {"total": 1}
    assert handler.contexts[-1].client_name == "old"
    assert handler.contexts[-1].user.id == hass_admin_user.id

    # A body that is no JSON is refused on the POST itself.
    response = await client.post(endpoint, data=b"{", headers={"Content-Type": "application/json"})
    assert response.status == 400
    assert (await response.json())["error"]["code"] == -32700
    stream.close()


async def test_sessions_belong_to_their_user(
    hass: HomeAssistant, client: TestClient, hass_client: ClientFactory, hass_read_only_user: Any
) -> None:
    """A session refuses messages from another user."""
    stream, endpoint = await _open(client)
    other = await hass_client(await make_token(hass, hass_read_only_user))
    response = await other.post(endpoint, json=rpc("ping"))
    assert response.status == 404
    response = await client.post(f"{URL}/messages/not-a-session", json=rpc("ping"))
    assert response.status == 404
    stream.close()


async def test_session_bounds(
    gateway: GatewayRuntime, client: TestClient, hass_client: ClientFactory, hass: HomeAssistant
) -> None:
    """Sessions per user are bounded: the oldest closes, past the total 503."""
    manager = gateway.sessions
    manager.max_per_user = 2
    first, first_endpoint = await _open(client)
    second, _ = await _open(client)
    # A third stream of the same user evicts the least recently active one.
    third, _ = await _open(client)
    assert await _event(first) == (None, None)
    assert (await client.post(first_endpoint, json=rpc("ping"))).status == 404
    assert len(manager.sessions) == 2
    # Overall bound: refused with 503 and Retry-After.
    manager.max_sessions = 2
    manager.max_per_user = 5
    response = await client.get(SSE)
    assert response.status == 503
    assert response.headers["Retry-After"] == "60"
    # Home Assistant stopping ends every stream.
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    await hass.async_block_till_done()
    assert await _event(second) == (None, None)
    assert await _event(third) == (None, None)
    assert manager.sessions == {}


async def test_idle_sessions_expire(gateway: GatewayRuntime, client: TestClient) -> None:
    """Idle sessions expire; active ones stay."""
    manager = gateway.sessions
    now = [0.0]
    manager.clock = lambda: now[0]
    stream, endpoint = await _open(client)
    busy, busy_endpoint = await _open(client)
    now[0] = manager.idle_timeout - 1
    assert (await client.post(busy_endpoint, json=rpc("ping"))).status == 202  # activity
    assert (await _event(busy))[0] == "message"
    now[0] = manager.idle_timeout + 1
    manager.expire()
    assert await _event(stream) == (None, None)
    assert (await client.post(endpoint, json=rpc("ping"))).status == 404
    assert (await client.post(busy_endpoint, json=rpc("ping"))).status == 202
    busy.close()


async def test_revoking_the_token_ends_the_stream(
    hass: HomeAssistant, gateway: GatewayRuntime, hass_client: ClientFactory, hass_admin_user: Any
) -> None:
    """Revoking the token ends its stream."""
    refresh = await hass.auth.async_create_refresh_token(hass_admin_user, "https://client.example/")
    client = await hass_client(hass.auth.async_create_access_token(refresh))
    stream, _ = await _open(client)
    gateway.sessions.expire()  # still valid: nothing happens
    assert len(gateway.sessions.sessions) == 1
    hass.auth.async_remove_refresh_token(refresh)
    gateway.sessions.expire()
    assert await _event(stream) == (None, None)


async def test_keepalive_comments(gateway: GatewayRuntime, client: TestClient) -> None:
    """An idle stream gets keepalive comments."""
    gateway.sessions.keepalive = 0.01
    stream, _ = await _open(client)
    assert await _event(stream) == ("comment", "keepalive")
    stream.close()


@pytest.mark.parametrize("size", [40])
async def test_a_slow_reader_does_not_lose_answers(
    gateway: GatewayRuntime, client: TestClient, size: int
) -> None:
    """A slow reader gets every answer."""
    # More answers than the queue holds: producers wait for the reader instead of dropping.
    stream, endpoint = await _open(client)
    for request_id in range(size):
        assert (await client.post(endpoint, json=rpc("ping", request_id=request_id))).status == 202
    seen = set()
    while len(seen) < size:
        name, data = await _event(stream)
        assert name == "message"
        seen.add(orjson.loads(data)["id"])
    assert seen == set(range(size))
    stream.close()
