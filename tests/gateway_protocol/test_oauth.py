"""Tokens from Home Assistant's own OAuth login, as MCP clients obtain them from the URL alone.

Discovery runs from our 401 to our protected-resource document, to the gateway's
authorization-server metadata, to registration; the login is HA's own. The official SDK's
`OAuthClientProvider` drives the whole chain here, with only the user's part (HA's login page,
which runs HA's /auth/login_flow) played by the test. Client ids that are a client's URL with
the redirect URI under it (Claude.ai, ChatGPT) work without registration too.
"""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.auth.providers.homeassistant import HassAuthProvider
from homeassistant.core import HomeAssistant
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl
import pytest
from yarl import URL as YURL

from .conftest import (
    HA_HAS_PKCE,
    URL,
    ClientFactory,
    FakeHandler,
    base_url,
    login_flow,
    rpc,
)

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
    assert issuer == f"{base_url(anon)}{URL}"
    # RFC 8414 section 3: the path-inserted well-known location of that issuer.
    response = await anon.get(f"/.well-known/oauth-authorization-server{URL}")
    assert response.status == 200
    server = await response.json()
    assert server["issuer"] == issuer
    assert server["token_endpoint"] == f"{base_url(anon)}/auth/token"
    assert server["authorization_endpoint"] == f"{base_url(anon)}/auth/authorize"
    return server


async def _login_page(
    anon: TestClient, client_id: str, redirect_uri: str, challenge: dict[str, str] | None = None
) -> str:
    """What HA's login page (/auth/authorize) does when the user signs in: the code.

    `challenge`: the PKCE parameters of /auth/authorize, which the 2026.10 page forwards.
    """
    _, step = await login_flow(anon, client_id, redirect_uri, "claude-user", challenge)
    assert step["type"] == "create_entry", step
    code: str = step["result"]
    return code


async def _oauth_login(
    anon: TestClient, client_id: str = CLIENT_ID, redirect_uri: str = REDIRECT_URI
) -> dict[str, Any]:
    """Log in through /auth/login_flow and exchange the code at /auth/token."""
    code = await _login_page(anon, client_id, redirect_uri)
    response = await anon.post(
        "/auth/token",
        data={"grant_type": "authorization_code", "code": code, "client_id": client_id},
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
    """A token from HA's OAuth login reaches the gateway; once revoked it is refused."""
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
    """An access token got through a refresh works too."""
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


class _MemoryStorage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.mark.usefixtures("user_with_password")
async def test_the_sdk_logs_in_with_the_url_alone(
    hass: HomeAssistant, anon: TestClient, handler: FakeHandler
) -> None:
    """OAuthClientProvider: discovery, registration, HA's login, token, tools/list."""
    base = base_url(anon)
    redirect_uri = "http://127.0.0.1:33418/callback"  # a native client's loopback listener
    opened: list[YURL] = []

    async def redirect_handler(url: str) -> None:
        opened.append(YURL(url))  # the browser the client opens

    async def callback_handler() -> tuple[str, str | None]:
        authorize = opened[-1]
        # HA's own login page, on HA's own URL, for the registered client id.
        assert str(authorize.with_query(None)) == f"{base}/auth/authorize"
        query = authorize.query
        assert query["redirect_uri"] == redirect_uri
        # The SDK always sends an S256 challenge; HA's page forwards it where HA implements PKCE
        # (2026.10: then /auth/token requires the SDK's verifier); 2025.4's page drops it.
        assert query["code_challenge_method"] == "S256"
        challenge = {
            key: query[key] for key in ("code_challenge", "code_challenge_method") if HA_HAS_PKCE
        }
        code = await _login_page(anon, query["client_id"], query["redirect_uri"], challenge)
        # HA's page then sends the browser to redirect_uri?code=…&state=…
        return code, query.get("state")

    storage = _MemoryStorage()
    provider = OAuthClientProvider(
        server_url=f"{base}{URL}",
        client_metadata=OAuthClientMetadata(
            client_name="SDK end-to-end", redirect_uris=[AnyUrl(redirect_uri)]
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with (
        streamablehttp_client(f"{base}{URL}", auth=provider) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await session.list_tools()
        assert {tool.name for tool in tools.tools} >= {"echo", "add"}
        result = await session.call_tool("echo", {"text": "logged in"})
        assert result.structuredContent is not None
        assert result.structuredContent["text"] == "logged in"

    # Registered without a secret, as the redirect's origin, which HA's page names to the user.
    assert storage.client is not None
    assert storage.client.client_id == "http://127.0.0.1:33418/"
    assert storage.client.client_secret is None
    assert len(opened) == 1
    assert opened[0].query["client_id"] == "http://127.0.0.1:33418/"
    # The token is a normal HA token of the user who logged in, for that client id.
    assert storage.tokens is not None
    refresh = hass.auth.async_validate_access_token(storage.tokens.access_token)
    assert refresh is not None
    assert refresh.client_id == "http://127.0.0.1:33418/"
    assert refresh.user.name == "claude-user"
    assert handler.contexts[-1].user.id == refresh.user.id
