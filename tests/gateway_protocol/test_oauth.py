"""Tokens from Home Assistant's own OAuth login, as Claude.ai and ChatGPT obtain them.

The client's id is its URL and the redirect URI lives under it, so HA accepts the pair without
fetching anything. The resulting access token opens the gateway; once the refresh token is
revoked, the same access token is refused.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin, urlsplit

from aiohttp.test_utils import TestClient
from homeassistant.auth.providers.homeassistant import HassAuthProvider
from homeassistant.core import HomeAssistant
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
import pytest

from .conftest import URL, ClientFactory, FakeHandler, base_url, rpc

CLIENT_ID = "https://claude.ai"
REDIRECT_URI = "https://claude.ai/api/mcp/auth_callback"
CLIENTS = pytest.mark.parametrize(
    ("client_id", "redirect_uri"),
    [
        (CLIENT_ID, REDIRECT_URI),
        ("https://chatgpt.com", "https://chatgpt.com/connector_platform_oauth_redirect"),
    ],
)


async def _discover(anon: TestClient) -> dict[str, Any]:
    """Follow the discovery chain a client starts from our 401, as MCP clients do."""
    response = await anon.post(URL, json=rpc("initialize"), headers={"Accept": "application/json"})
    assert response.status == 401
    challenge = response.headers["WWW-Authenticate"]
    metadata_url = challenge.split('resource_metadata="', 1)[1].split('"', 1)[0]
    response = await anon.get(metadata_url.removeprefix(base_url(anon)))
    resource = await response.json()
    assert resource["resource"] == f"{base_url(anon)}{URL}"
    (issuer,) = resource["authorization_servers"]
    response = await anon.get(
        f"{issuer}/.well-known/oauth-authorization-server".removeprefix(base_url(anon))
    )
    assert response.status == 200
    server = await response.json()
    # HA 2025.4 gives endpoints relative to itself (no issuer, no PKCE fields): clients
    # resolve them against the authorization server's URL. 2026.x gives absolute ones, from the
    # URL HA knows itself by (here not the test server's port), with S256 PKCE.
    assert urlsplit(urljoin(issuer, server["token_endpoint"])).path == "/auth/token"
    assert urlsplit(urljoin(issuer, server["authorization_endpoint"])).path == "/auth/authorize"
    if server["token_endpoint"].startswith("http"):
        assert server["code_challenge_methods_supported"] == ["S256"]
    return server


async def _oauth_login(
    anon: TestClient, client_id: str = CLIENT_ID, redirect_uri: str = REDIRECT_URI
) -> dict[str, Any]:
    """Log in through /auth/login_flow and exchange the code at /auth/token."""
    response = await anon.post(
        "/auth/login_flow",
        json={
            "client_id": client_id,
            "handler": ["homeassistant", None],
            "redirect_uri": redirect_uri,
        },
    )
    assert response.status == 200
    flow = await response.json()
    response = await anon.post(
        f"/auth/login_flow/{flow['flow_id']}",
        json={"client_id": client_id, "username": "claude-user", "password": "s3cret-pass"},
    )
    step = await response.json()
    assert step["type"] == "create_entry", step
    response = await anon.post(
        "/auth/token",
        data={"grant_type": "authorization_code", "code": step["result"], "client_id": client_id},
    )
    assert response.status == 200
    return await response.json()


@pytest.fixture
async def user_with_password(hass: HomeAssistant, local_auth: HassAuthProvider) -> None:
    await hass.async_add_executor_job(local_auth.data.add_auth, "claude-user", "s3cret-pass")
    await local_auth.data.async_save()


@CLIENTS
@pytest.mark.usefixtures("user_with_password")
async def test_oauth_login_token_is_accepted_and_revocation_refuses_it(  # noqa: PLR0917
    hass: HomeAssistant,
    anon: TestClient,
    hass_client: ClientFactory,
    handler: FakeHandler,
    client_id: str,
    redirect_uri: str,
) -> None:
    server = await _discover(anon)
    assert server["authorization_endpoint"].endswith("/auth/authorize")
    tokens = await _oauth_login(anon, client_id, redirect_uri)
    access = tokens["access_token"]
    assert tokens["token_type"] == "Bearer"
    refresh = hass.auth.async_validate_access_token(access)
    assert refresh is not None
    assert refresh.client_id == client_id

    # The official SDK with that token: listed and called as the user who logged in.
    async with (
        streamablehttp_client(
            f"{base_url(anon)}{URL}", headers={"Authorization": f"Bearer {access}"}
        ) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        assert tools.tools
        result = await session.call_tool("echo", {"text": "via oauth"})
        assert result.structuredContent["text"] == "via oauth"
    assert handler.contexts[-1].user.id == refresh.user.id

    # The client revokes its refresh token (HA's /auth/revoke, as on sign-out).
    response = await anon.post("/auth/revoke", data={"token": tokens["refresh_token"]})
    assert response.status == 200
    assert hass.auth.async_get_refresh_token(refresh.id) is None

    client = await hass_client(access)
    response = await client.post(
        URL, json=rpc("tools/list"), headers={"Accept": "application/json"}
    )
    assert response.status == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    calls = len(handler.contexts)
    response = await client.get(f"{URL}/sse")
    assert response.status == 401
    assert len(handler.contexts) == calls


@pytest.mark.usefixtures("user_with_password")
async def test_a_refreshed_access_token_works_too(
    hass: HomeAssistant, anon: TestClient, hass_client: ClientFactory
) -> None:
    tokens = await _oauth_login(anon)
    response = await anon.post(
        "/auth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": CLIENT_ID,
        },
    )
    assert response.status == 200
    fresh = (await response.json())["access_token"]
    client = await hass_client(fresh)
    response = await client.post(URL, json=rpc("ping"), headers={"Accept": "application/json"})
    assert response.status == 200
    assert (await response.json())["result"] == {}
