"""The gateway over HTTP: every status code it answers, auth, Origin, limits, RFC 9728."""

from __future__ import annotations

from collections.abc import AsyncIterator
import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.core_config import async_process_ha_core_config
import pytest

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.settings import CONF_ALLOWED_ORIGINS, CONF_RATE_LIMIT
from custom_components.mcp_gateway.gateway.http.view import MAX_BODY_BYTES, GatewayRuntime
from tests.simulation import gateway_entry

from .conftest import ACCEPT, URL, ClientFactory, FakeHandler, base_url, make_token, rpc

WELL_KNOWN = "/.well-known/oauth-protected-resource/api/mcp_gateway"


def _settings_entry(hass: HomeAssistant, **options: Any) -> None:
    gateway_entry(options).add_to_hass(hass)


async def _post(client: TestClient, body: Any, **headers: str) -> tuple[int, Any, Any]:
    data = body if isinstance(body, bytes) else json.dumps(body)
    response = await client.post(
        URL,
        data=data,
        headers={"Content-Type": "application/json", "Accept": ACCEPT, **headers},
    )
    text = await response.text()
    return response.status, (json.loads(text) if text else None), response.headers


async def test_200_202_and_the_user_reaches_the_handler(
    hass: HomeAssistant, client: TestClient, handler: FakeHandler, hass_admin_user: Any
) -> None:
    """A request answers 200 (a notification 202) and reaches the handler as the token's user."""
    status, body, headers = await _post(
        client, rpc("initialize", {"protocolVersion": "2025-11-25"})
    )
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert "Mcp-Session-Id" not in headers
    assert body["result"]["protocolVersion"] == "2025-11-25"
    status, body, _ = await _post(client, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert (status, body) == (202, None)
    status, body, _ = await _post(
        client,
        rpc("tools/list"),
        **{"MCP-Protocol-Version": "2025-11-25", "User-Agent": "pytest-agent"},
    )
    assert status == 200
    assert len(body["result"]["tools"]) == len(handler.tools)
    ctx = handler.contexts[-1]
    assert ctx.user.id == hass_admin_user.id
    assert ctx.client_name == "pytest-agent"
    assert ctx.protocol_version == "2025-11-25"


async def test_400_for_unparseable_and_invalid_bodies(client: TestClient) -> None:
    """Unparseable JSON is 400 parse error; an invalid JSON-RPC body is 400 too."""
    status, body, _ = await _post(client, b"{not json")
    assert status == 400
    assert body["error"]["code"] == -32700
    status, body, _ = await _post(client, b"\xff\xfe\x00")
    assert status == 400
    status, body, _ = await _post(client, {"jsonrpc": "2.0", "id": 1})
    assert status == 400
    assert body["error"]["code"] == -32600
    status, body, _ = await _post(
        client, rpc("tools/list"), **{"MCP-Protocol-Version": "1900-01-01"}
    )
    assert status == 400
    assert "2025-11-25" in body["error"]["data"]["supported"]
    status, body, _ = await _post(client, [rpc("ping")], **{"MCP-Protocol-Version": "2025-06-18"})
    assert status == 400


async def test_404_for_unknown_methods_in_the_modern_era(client: TestClient) -> None:
    """An unknown method is 404 in the modern era; a header mismatch is 400 -32020."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    status, body, _ = await _post(
        client,
        rpc("no/such", {"_meta": meta}, 9),
        **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "no/such"},
    )
    assert status == 404
    assert body == {
        "jsonrpc": "2.0",
        "id": 9,
        "error": {"code": -32601, "message": "Method not found: no/such"},
    }
    status, body, _ = await _post(
        client,
        rpc("tools/list", {"_meta": meta}, 9),
        **{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"},
    )
    assert status == 400
    assert body["error"]["code"] == -32020


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
async def test_405_for_other_methods(client: TestClient, method: str) -> None:
    """GET and other methods are 405 with Allow: POST."""
    response = await client.request(method, URL)
    assert response.status == 405
    if method != "PUT":  # aiohttp itself refuses methods we do not route
        assert response.headers["Allow"] == "POST"


async def test_406_and_415(client: TestClient) -> None:
    """A wrong Accept is 406, a wrong Content-Type 415; the right ones are 200."""
    status, body, _ = await _post(client, rpc("ping"), Accept="text/html")
    assert status == 406
    status, _, _ = await _post(client, rpc("ping"), Accept="text/html, application/*;q=0.1")
    assert status == 200
    status, body, _ = await _post(client, rpc("ping"), **{"Content-Type": "text/plain"})
    assert status == 415
    assert body["error"]["code"] == -32600
    # No Content-Type at all is tolerated.
    response = await client.post(
        URL, data=json.dumps(rpc("ping")).encode(), skip_auto_headers=["Content-Type"]
    )
    assert "Content-Type" not in response.request_info.headers
    assert response.status == 200


async def test_413_for_bodies_over_one_mib(client: TestClient, handler: FakeHandler) -> None:
    """A body over 1 MiB, announced or chunked, is 413 before the handler sees it."""
    text = "y" * MAX_BODY_BYTES
    status, body, _ = await _post(
        client, rpc("tools/call", {"name": "echo", "arguments": {"text": text}})
    )
    assert status == 413
    assert handler.contexts == []

    async def chunks() -> AsyncIterator[bytes]:
        # No Content-Length: the cap must hold for a chunked body too.
        for _ in range(20):
            yield b" " * (64 * 1024)
        yield json.dumps(rpc("ping")).encode()

    response = await client.post(URL, data=chunks(), headers={"Content-Type": "application/json"})
    assert response.status == 413

    async def few_chunks() -> AsyncIterator[bytes]:
        body = json.dumps(rpc("ping")).encode()
        yield body[:5]
        yield body[5:]

    # A chunked body within the cap is read whole and answered.
    response = await client.post(
        URL, data=few_chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.request_info.headers.get("Transfer-Encoding") == "chunked"
    assert response.status == 200
    assert (await response.json())["result"] == {}
    # Just under the cap is accepted; echoing it twice (text + structured) trips the
    # response size guard, which answers with an explicit truncation result.
    small = "z" * (MAX_BODY_BYTES - 200)
    status, body, _ = await _post(
        client, rpc("tools/call", {"name": "echo", "arguments": {"text": small}})
    )
    assert status == 200
    assert handler.contexts[-1].request_id == 1
    assert body["result"]["isError"] is True
    assert body["result"]["structuredContent"]["truncated"] is True


async def test_401_without_token_points_at_the_resource_metadata(
    hass: HomeAssistant, anon: TestClient
) -> None:
    """Without a token every path is 401 with a challenge naming the resource metadata."""
    status, body, headers = await _post(anon, rpc("tools/list"))
    assert status == 401
    expected = f'Bearer resource_metadata="{base_url(anon)}{WELL_KNOWN}"'
    assert headers["WWW-Authenticate"] == expected
    assert body["error"] == "unauthorized"
    # Every method is protected the same way, and the SSE endpoint too.
    for method, path in (
        ("GET", URL),
        ("DELETE", URL),
        ("GET", f"{URL}/sse"),
        ("POST", f"{URL}/messages/x"),
    ):
        response = await anon.request(method, path)
        assert response.status == 401, (method, path)
        assert response.headers["WWW-Authenticate"] == expected
    # A missing token is how clients start OAuth discovery: no failed-login alarm.
    assert "persistent_notification" not in hass.config.components or not hass.states.async_all(
        "persistent_notification"
    )


async def test_401_for_a_wrong_token_counts_as_a_failed_login(
    hass: HomeAssistant, anon: TestClient, handler: FakeHandler, caplog: pytest.LogCaptureFixture
) -> None:
    """A wrong token is 401 invalid_token, counted as a failed login."""
    status, body, headers = await _post(anon, rpc("tools/list"), Authorization="Bearer not-a-token")
    assert status == 401
    assert headers["WWW-Authenticate"].endswith(', error="invalid_token"')
    assert headers["WWW-Authenticate"].startswith('Bearer resource_metadata="')
    assert body == {"error": "invalid_token"}
    assert handler.contexts == []
    assert "Login attempt or request with invalid authentication" in caplog.text


async def test_403_for_foreign_origins_before_anything_runs(
    hass: HomeAssistant, anon: TestClient, client: TestClient, handler: FakeHandler
) -> None:
    """A foreign Origin is 403 before authentication or the handler run."""
    # Refused before auth: even an unauthenticated request gets 403, not 401.
    status, body, _ = await _post(anon, rpc("tools/list"), Origin="http://evil.example")
    assert status == 403
    status, body, _ = await _post(client, rpc("tools/list"), Origin="http://evil.example")
    assert status == 403
    assert body["error"]["message"] == "Origin not allowed"
    response = await client.get(f"{URL}/sse", headers={"Origin": "http://evil.example"})
    assert response.status == 403
    assert handler.contexts == []
    # HA's own configured URLs are fine ...
    await async_process_ha_core_config(
        hass, {"internal_url": "http://ha.local:8123", "external_url": "https://ha.example.org"}
    )
    for origin in ("http://ha.local:8123", "https://ha.example.org", "https://HA.example.org:443"):
        status, _, _ = await _post(client, rpc("tools/list"), Origin=origin)
        assert status == 200, origin
    status, _, _ = await _post(client, rpc("tools/list"), Origin="http://ha.local:8124")
    assert status == 403
    # ... and so are the allow-list option's.
    _settings_entry(
        hass, **{CONF_ALLOWED_ORIGINS: ["http://localhost:*", "https://inspector.example"]}
    )
    for origin in ("http://localhost:6274", "https://inspector.example"):
        status, _, _ = await _post(client, rpc("tools/list"), Origin=origin)
        assert status == 200, origin
    status, _, _ = await _post(client, rpc("tools/list"), Origin="null")
    assert status == 403


async def test_429_per_user_with_retry_after(
    hass: HomeAssistant,
    gateway: GatewayRuntime,
    client: TestClient,
    hass_client: ClientFactory,
    hass_read_only_user: Any,
) -> None:
    """Past the per-user limit a request is 429 with Retry-After; other users are unaffected."""
    now = [1000.0]
    gateway.clock = lambda: now[0]
    _settings_entry(hass, **{CONF_RATE_LIMIT: 2})
    assert (await _post(client, rpc("ping")))[0] == 200
    assert (await _post(client, rpc("ping")))[0] == 200
    status, body, headers = await _post(client, rpc("ping"))
    assert status == 429
    assert headers["Retry-After"] == "30"
    assert body["error"]["code"] == -32029
    # Another user has a budget of their own.
    other = await hass_client(await make_token(hass, hass_read_only_user))
    assert (await _post(other, rpc("ping")))[0] == 200
    # The budget refills with time.
    now[0] += 29.0
    status, _, headers = await _post(client, rpc("ping"))
    assert (status, headers["Retry-After"]) == (429, "1")
    now[0] += 1.0
    assert (await _post(client, rpc("ping")))[0] == 200
    # Changing the limit takes effect at once; 0 (older forms' "no limit") is the default.
    hass.config_entries.async_update_entry(
        hass.config_entries.async_entries(DOMAIN)[0], options={CONF_RATE_LIMIT: 0}
    )
    for _ in range(5):
        assert (await _post(client, rpc("ping")))[0] == 200


async def test_well_known_protected_resource_metadata(
    hass: HomeAssistant, anon: TestClient
) -> None:
    """The protected-resource metadata names the endpoint and the gateway as its server."""
    response = await anon.get(WELL_KNOWN)
    assert response.status == 200
    document = await response.json()
    base = base_url(anon)
    assert document["resource"] == f"{base}/api/mcp_gateway"
    # The authorization server it names is the gateway's issuer (test_oauth_server.py).
    assert document["authorization_servers"] == [f"{base}/api/mcp_gateway"]
    assert document["bearer_methods_supported"] == ["header"]
    # We never claim the root document (HA 2026.x serves its own there, for HA itself) or
    # core's path.
    root = await anon.get("/.well-known/oauth-protected-resource")
    assert root.status == 404 or (await root.json())["resource"] != f"{base}/api/mcp_gateway"
    assert (await anon.get("/.well-known/oauth-protected-resource/api/mcp")).status == 404


async def test_client_names_from_initialize_are_remembered_per_token_and_agent(
    hass: HomeAssistant,
    gateway: GatewayRuntime,
    client: TestClient,
    handler: FakeHandler,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The client name from initialize is remembered per token and user agent."""
    init = rpc("initialize", {"protocolVersion": "2025-11-25", "clientInfo": {"name": "Claude"}})
    await _post(client, init, **{"User-Agent": "claude-agent/1"})
    await _post(client, rpc("tools/list"), **{"User-Agent": "claude-agent/1"})
    assert handler.contexts[-1].client_name == "Claude"
    # Another program with the same token is not mistaken for it.
    await _post(client, rpc("tools/list"), **{"User-Agent": "curl/8"})
    assert handler.contexts[-1].client_name == "curl/8"
    # The memory is bounded: the oldest name goes first.
    from custom_components.mcp_gateway.gateway.http import view

    monkeypatch.setattr(view, "_MAX_CLIENT_NAMES", 2)
    for number in range(3):
        named = rpc("initialize", {"clientInfo": {"name": f"c{number}"}})
        await _post(client, named, **{"User-Agent": f"agent/{number}"})
    assert len(gateway._client_names) == 2
    await _post(client, rpc("tools/list"), **{"User-Agent": "claude-agent/1"})
    assert handler.contexts[-1].client_name == "claude-agent/1"
    await _post(client, rpc("tools/list"), **{"User-Agent": "agent/2"})
    assert handler.contexts[-1].client_name == "c2"


async def test_numbers_beyond_64_bits_never_break_the_answer(
    client: TestClient, handler: FakeHandler
) -> None:
    """Ids and numbers beyond 64 bits are answered, never a broken reply."""
    # An id no peer can carry is an invalid request, answered (not a 500).
    status, body, _ = await _post(
        client, b'{"jsonrpc": "2.0", "id": 1180591620717411303424, "method": "ping"}'
    )
    assert status == 400
    assert body == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Request id must be a string or an integer"},
    }
    status, body, _ = await _post(
        client, b'{"jsonrpc": "2.0", "id": 9223372036854775807, "method": "ping"}'
    )
    assert (status, body["id"]) == (200, 9223372036854775807)
    # A result with such a number (here the sum a tool computed) still goes out, exactly.
    request = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"amount": 2**70}},
    }
    status, body, _ = await _post(client, request)
    assert status == 200
    assert body["result"]["structuredContent"] == {"total": 2**70}
