"""The gateway's OAuth documents, its client registration, trusted URLs, Origin and CORS.

- RFC 8414 metadata under the gateway's issuer, with HA's endpoints as absolute URLs, and
  PKCE advertised only when HA's own metadata declares it;
- RFC 7591 registration that stores nothing and answers a client id HA's login accepts;
- the URLs published in the 401 and the documents come from HA's configured URLs, never
  from a foreign Host header (loopback hosts excepted);
- a loopback Origin on a loopback Host is accepted; every other Origin rule stays;
- CORS preflights allow the MCP headers for the origins the gateway allows.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any
from unittest.mock import patch

from aiohttp import web
from aiohttp.test_utils import TestClient
from homeassistant.auth.providers.homeassistant import HassAuthProvider
from homeassistant.components.auth import login_flow as ha_login_flow
from homeassistant.core import HomeAssistant
from homeassistant.core_config import async_process_ha_core_config
from homeassistant.helpers.network import NoURLAvailableError
import pytest
from yarl import URL as YURL

from custom_components.mcp_gateway.core.settings import CONF_ALLOWED_ORIGINS
from custom_components.mcp_gateway.gateway.http import oauth
from custom_components.mcp_gateway.gateway.http.view import GatewayRuntime
from tests.simulation import gateway_entry

from .conftest import ACCEPT, HA_HAS_PKCE, URL, base_url, login_flow, rpc

AS_PATH = "/.well-known/oauth-authorization-server/api/mcp_gateway"
PRM_PATH = "/.well-known/oauth-protected-resource/api/mcp_gateway"
REGISTER = "/api/mcp_gateway/register"


async def _register(anon: TestClient, metadata: Any, **headers: str) -> tuple[int, Any]:
    response = await anon.post(
        REGISTER,
        data=metadata if isinstance(metadata, bytes) else json.dumps(metadata),
        headers={"Content-Type": "application/json", **headers},
    )
    return response.status, await response.json()


@pytest.fixture
async def login_user(hass: HomeAssistant, local_auth: HassAuthProvider) -> None:
    await hass.async_add_executor_job(local_auth.data.add_auth, "connector", "s3cret-pass")
    await local_auth.data.async_save()


async def _log_in(anon: TestClient, client_id: str, redirect_uri: str, **challenge: str) -> Any:
    """HA's login page, as the connector user."""
    return await login_flow(anon, client_id, redirect_uri, "connector", challenge)


# --- RFC 8414 metadata ------------------------------------------------------------------------


async def test_authorization_server_metadata(anon: TestClient) -> None:
    """The authorization-server metadata points at HA's login, token and revoke endpoints.

    PKCE and client-id metadata documents are advertised exactly on the release whose HA
    implements them (2026.10; see test_advertised_pkce_is_what_home_assistant_enforces).
    """
    base = base_url(anon)
    response = await anon.get(AS_PATH)
    assert response.status == 200
    assert response.headers["Cache-Control"] == "public, max-age=3600"
    document = await response.json()
    expected: dict[str, Any] = {
        "issuer": f"{base}/api/mcp_gateway",
        "authorization_endpoint": f"{base}/auth/authorize",
        "token_endpoint": f"{base}/auth/token",
        "revocation_endpoint": f"{base}/auth/revoke",
        "registration_endpoint": f"{base}/api/mcp_gateway/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "service_documentation": "https://developers.home-assistant.io/docs/auth_api",
    }
    if HA_HAS_PKCE:
        expected["code_challenge_methods_supported"] = ["S256"]
        expected["client_id_metadata_document_supported"] = True
    assert document == expected
    ha_document = await (await anon.get("/.well-known/oauth-authorization-server")).json()
    if HA_HAS_PKCE:
        # HA 2026.10's own document: absolute endpoints, PKCE S256, client-id metadata documents.
        # (on HA's configured URL, not the request's: the gateway's own uses the request's.)
        assert YURL(ha_document["token_endpoint"]).is_absolute()
        assert YURL(ha_document["token_endpoint"]).path == "/auth/token"
        assert ha_document["code_challenge_methods_supported"] == ["S256"]
        assert ha_document["client_id_metadata_document_supported"] is True
    else:
        # HA 2025.4's own document: relative URLs, no issuer, no PKCE — what clients could not use.
        assert ha_document["token_endpoint"] == "/auth/token"
        assert "issuer" not in ha_document
        assert "code_challenge_methods_supported" not in ha_document
        assert "client_id_metadata_document_supported" not in ha_document


async def _start_login(
    anon: TestClient, client_id: str, redirect_uri: str, challenge: dict[str, str]
) -> int:
    """The status of starting HA's login flow with a PKCE challenge."""
    response = await anon.post(
        "/auth/login_flow",
        json={
            "client_id": client_id,
            "handler": ["homeassistant", None],
            "redirect_uri": redirect_uri,
            **challenge,
        },
    )
    await response.read()
    return response.status


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


async def _token(anon: TestClient, code: str, client_id: str, **verifier: str) -> tuple[int, Any]:
    response = await anon.post(
        "/auth/token",
        data={"grant_type": "authorization_code", "code": code, "client_id": client_id, **verifier},
    )
    return response.status, await response.json()


@pytest.mark.usefixtures("login_user")
async def test_advertised_pkce_is_what_home_assistant_enforces(anon: TestClient) -> None:
    """What the gateway says about PKCE is what HA's login and token endpoints do."""
    document = await (await anon.get(AS_PATH)).json()
    client_id, redirect_uri = "http://127.0.0.1:33419/", "http://127.0.0.1:33419/cb"
    verifier = "v" * 43
    challenge = {"code_challenge": _s256(verifier), "code_challenge_method": "S256"}
    if HA_HAS_PKCE:
        assert document["code_challenge_methods_supported"] == ["S256"]
        # The challenge is bound to the code: no verifier, or a wrong one, gets no token.
        for wrong in ({}, {"code_verifier": "w" * 43}):
            status, body = await _log_in(anon, client_id, redirect_uri, **challenge)
            assert status == 200, body
            status, body = await _token(anon, body["result"], client_id, **wrong)
            assert status == 400, body
            assert "access_token" not in body
        # "plain" (RFC 7636's default) is refused at the login page.
        plain = {"code_challenge": "p" * 43, "code_challenge_method": "plain"}
        assert await _start_login(anon, client_id, redirect_uri, plain) == 400
        status, body = await _log_in(anon, client_id, redirect_uri, **challenge)
        status, body = await _token(anon, body["result"], client_id, code_verifier=verifier)
        assert status == 200, body
        assert body["access_token"]
    else:
        assert "code_challenge_methods_supported" not in document
        # The login page cannot even carry a challenge, and the token endpoint takes any
        # verifier: advertising PKCE here would promise a check nobody makes.
        assert await _start_login(anon, client_id, redirect_uri, challenge) == 400
        status, body = await _log_in(anon, client_id, redirect_uri)
        status, body = await _token(anon, body["result"], client_id, code_verifier="w" * 43)
        assert status == 200, body
        assert body["access_token"]


async def test_pkce_is_advertised_only_when_home_assistant_declares_it(anon: TestClient) -> None:
    """PKCE and client-id metadata documents are passed on only as HA's metadata declares them."""

    async def declaring(self: Any, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "authorization_endpoint": "/auth/authorize",
                "code_challenge_methods_supported": ["S256"],
            }
        )

    with patch.object(ha_login_flow.WellKnownOAuthInfoView, "get", declaring):
        document = await (await anon.get(AS_PATH)).json()
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["authorization_endpoint"] == f"{base_url(anon)}/auth/authorize"
    assert "client_id_metadata_document_supported" not in document

    async def metadata_documents(self: Any, request: web.Request) -> web.Response:
        return web.json_response({"client_id_metadata_document_supported": True})

    with patch.object(ha_login_flow.WellKnownOAuthInfoView, "get", metadata_documents):
        document = await (await anon.get(AS_PATH)).json()
    assert document["client_id_metadata_document_supported"] is True
    assert "code_challenge_methods_supported" not in document

    async def odd_shapes(self: Any, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "client_id_metadata_document_supported": "yes",
                "code_challenge_methods_supported": "S256",
            }
        )

    with patch.object(ha_login_flow.WellKnownOAuthInfoView, "get", odd_shapes):
        document = await (await anon.get(AS_PATH)).json()
    assert "client_id_metadata_document_supported" not in document
    assert "code_challenge_methods_supported" not in document

    async def broken(self: Any, request: web.Request) -> web.Response:
        return web.Response(body=b"not json", content_type="application/json")

    with patch.object(ha_login_flow.WellKnownOAuthInfoView, "get", broken):
        document = await (await anon.get(AS_PATH)).json()
    assert "code_challenge_methods_supported" not in document
    # A release without that view (or with another shape) still gets the gateway's document.
    with patch.object(ha_login_flow, "WellKnownOAuthInfoView", None):
        response = await anon.get(AS_PATH)
    assert response.status == 200
    assert (await response.json())["issuer"] == f"{base_url(anon)}/api/mcp_gateway"


# --- Trusted URLs ------------------------------------------------------------------------------


@pytest.fixture
async def configured(hass: HomeAssistant) -> None:
    await async_process_ha_core_config(
        hass, {"internal_url": "http://ha.local:8123", "external_url": "https://ha.example.org"}
    )


async def _published(anon: TestClient, host: str) -> tuple[str, str, str]:
    """(resource_metadata of the 401, PRM resource, AS issuer) for a request with that Host."""
    response = await anon.post(
        URL, json=rpc("tools/list"), headers={"Accept": ACCEPT, "Host": host}
    )
    assert response.status == 401
    challenge = response.headers["WWW-Authenticate"]
    prm = await (await anon.get(PRM_PATH, headers={"Host": host})).json()
    metadata = await (await anon.get(AS_PATH, headers={"Host": host})).json()
    return challenge, prm["resource"], metadata["issuer"]


@pytest.mark.usefixtures("configured")
async def test_a_foreign_host_header_never_reaches_the_published_urls(anon: TestClient) -> None:
    """A forged Host header never reaches the URLs the gateway publishes."""
    challenge, resource, issuer = await _published(anon, "evil.example")
    assert "evil" not in challenge + resource + issuer
    # The client gets HA's real (external) address and can see it is not where it went.
    assert challenge == f'Bearer resource_metadata="https://ha.example.org{PRM_PATH}"'
    assert resource == issuer == "https://ha.example.org/api/mcp_gateway"


@pytest.mark.usefixtures("configured")
@pytest.mark.parametrize(
    ("host", "base"),
    [
        ("ha.local:8123", "http://ha.local:8123"),
        ("ha.example.org", "https://ha.example.org"),
        ("HA.example.org", "https://ha.example.org"),
        # Loopback is used as the client reached it, port included (a local proxy).
        ("localhost:9999", "http://localhost:9999"),
        ("127.0.0.1:8443", "http://127.0.0.1:8443"),
        ("[::1]:7000", "http://[::1]:7000"),
    ],
)
async def test_configured_and_loopback_hosts_are_used(
    anon: TestClient, host: str, base: str
) -> None:
    """Configured and loopback hosts are used for the published URLs."""
    challenge, resource, issuer = await _published(anon, host)
    assert challenge == f'Bearer resource_metadata="{base}{PRM_PATH}"'
    assert resource == issuer == f"{base}/api/mcp_gateway"


async def test_without_any_url_nothing_is_published(anon: TestClient) -> None:
    """Without any known URL the challenge is plain Bearer and the documents are 404."""
    with patch(
        "custom_components.mcp_gateway.gateway.http.origins.get_url",
        side_effect=NoURLAvailableError,
    ):
        response = await anon.post(
            URL, json=rpc("ping"), headers={"Accept": ACCEPT, "Host": "evil.example"}
        )
        assert response.status == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
        response = await anon.post(
            URL,
            json=rpc("ping"),
            headers={"Accept": ACCEPT, "Host": "evil.example", "Authorization": "Bearer x"},
        )
        assert response.headers["WWW-Authenticate"] == 'Bearer error="invalid_token"'
        for path in (PRM_PATH, AS_PATH):
            response = await anon.get(path, headers={"Host": "evil.example"})
            assert response.status == 404
            assert await response.json() == {"error": "no_url_available"}


# --- Origin ------------------------------------------------------------------------------------


async def _status(client: TestClient, **headers: str) -> int:
    response = await client.post(
        URL,
        json=rpc("ping"),
        headers={"Accept": ACCEPT, "Content-Type": "application/json", **headers},
    )
    return response.status


@pytest.mark.usefixtures("configured")
async def test_loopback_origin_on_a_loopback_host_is_accepted(client: TestClient) -> None:
    """A loopback origin on a loopback host is allowed; a foreign one is 403."""
    # The conformance suite's localhost-host-valid-accepted, through a proxy on another port.
    assert await _status(client, Host="localhost:3001", Origin="http://localhost:3001") == 200
    assert await _status(client, Host="127.0.0.1:3001", Origin="http://localhost:5173") == 200
    assert await _status(client, Host="[::1]:3001", Origin="http://127.0.0.1:3001") == 200
    # Every other rule stays: a foreign origin on a loopback host ...
    assert await _status(client, Host="localhost:3001", Origin="http://evil.example") == 403
    assert await _status(client, Host="localhost:3001", Origin="null") == 403
    # ... a loopback origin on a non-loopback host (DNS rebinding sends the attacker's name) ...
    assert await _status(client, Host="evil.example:3001", Origin="http://localhost:3001") == 403
    assert await _status(client, Host="evil.example:3001", Origin="http://evil.example:3001") == 403
    assert await _status(client, Host="ha.example.org", Origin="http://127.0.0.1:8123") == 403
    # ... and HA's own URLs are still accepted on their own host.
    assert await _status(client, Host="ha.example.org", Origin="https://ha.example.org") == 200


# --- CORS -------------------------------------------------------------------------------------


async def _preflight(anon: TestClient, path: str, origin: str, method: str = "POST") -> Any:
    return await anon.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version",
        },
    )


async def test_cors_preflight_allows_the_mcp_headers_for_allowed_origins(
    hass: HomeAssistant, anon: TestClient, client: TestClient
) -> None:
    """A CORS preflight from an allowed origin allows the MCP headers and POST."""
    gateway_entry({CONF_ALLOWED_ORIGINS: ["https://inspector.example"]}).add_to_hass(hass)
    response = await _preflight(anon, URL, "https://inspector.example")
    assert response.status == 204
    headers = response.headers
    assert headers["Access-Control-Allow-Origin"] == "https://inspector.example"
    allowed = {name.strip().lower() for name in headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type", "mcp-protocol-version", "mcp-session-id"} <= allowed
    assert "POST" in headers["Access-Control-Allow-Methods"]
    # An origin the gateway refuses gets no CORS at all.
    response = await _preflight(anon, URL, "https://evil.example")
    assert response.status == 403
    assert "Access-Control-Allow-Origin" not in response.headers
    # HA's own preflight refuses MCP-Protocol-Version (why the gateway answers its own).
    response = await _preflight(anon, "/auth/token", "https://inspector.example")
    assert (
        "mcp-protocol-version"
        not in response.headers.get("Access-Control-Allow-Headers", "").lower()
    )

    # Actual responses carry the origin and expose what a browser client must read.
    response = await anon.post(
        URL, json=rpc("ping"), headers={"Accept": ACCEPT, "Origin": "https://inspector.example"}
    )
    assert response.status == 401
    assert response.headers["Access-Control-Allow-Origin"] == "https://inspector.example"
    assert "WWW-Authenticate" in response.headers["Access-Control-Expose-Headers"]
    response = await anon.post(
        URL,
        json=rpc("ping"),
        headers={
            "Accept": ACCEPT,
            "Origin": "https://inspector.example",
            "Authorization": "Bearer x",
        },
    )
    assert response.status == 401  # raised, not returned: the headers are there too
    assert response.headers["Access-Control-Allow-Origin"] == "https://inspector.example"
    response = await client.post(
        URL, json=rpc("ping"), headers={"Accept": ACCEPT, "Origin": "https://inspector.example"}
    )
    assert response.status == 200
    assert response.headers["Access-Control-Allow-Origin"] == "https://inspector.example"
    response = await client.post(
        URL, json=rpc("ping"), headers={"Accept": ACCEPT, "Origin": "https://evil.example"}
    )
    assert response.status == 403
    assert "Access-Control-Allow-Origin" not in response.headers


async def test_cors_on_the_public_documents_allows_any_origin(anon: TestClient) -> None:
    """The public documents allow any origin."""
    for path in (PRM_PATH, AS_PATH):
        response = await _preflight(anon, path, "https://anywhere.example", "GET")
        assert response.status == 204, path
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        assert "mcp-protocol-version" in response.headers["Access-Control-Allow-Headers"].lower()
        response = await anon.get(path, headers={"Origin": "https://anywhere.example"})
        assert response.headers["Access-Control-Allow-Origin"] == "*"
    # A preflight must name the method it asks for.
    response = await anon.options(AS_PATH, headers={"Origin": "https://anywhere.example"})
    assert response.status == 403


# --- RFC 7591 registration --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("redirect_uris", "client_id"),
    [
        (["https://claude.ai/api/mcp/auth_callback"], "https://claude.ai/"),
        (["https://chatgpt.com/connector_platform_oauth_redirect"], "https://chatgpt.com/"),
        (["http://127.0.0.1:33418/callback"], "http://127.0.0.1:33418/"),
        (
            ["http://localhost:6274/oauth/callback", "http://localhost:6274/debug"],
            "http://localhost:6274/",
        ),
        (["http://[::1]:8080/cb"], "http://[::1]:8080/"),
        (["https://App.Example:8443/cb?x=1"], "https://app.example:8443/"),
    ],
)
@pytest.mark.usefixtures("login_user")
async def test_registration_answers_the_redirects_origin(
    anon: TestClient, redirect_uris: list[str], client_id: str
) -> None:
    """Registration answers the client id for the redirects with their metadata, and no secret."""
    status, answer = await _register(
        anon,
        {
            "redirect_uris": redirect_uris,
            "client_name": "A client",
            "token_endpoint_auth_method": "client_secret_post",
            "grant_types": ["authorization_code", "refresh_token"],
            "scope": "ignored",
        },
    )
    assert status == 201, answer
    assert answer["client_id"] == client_id
    assert answer["redirect_uris"] == redirect_uris
    assert answer["client_name"] == "A client"
    # Replaced, not refused: HA issues no secrets and authenticates no client.
    assert answer["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in answer
    assert answer["grant_types"] == ["authorization_code", "refresh_token"]
    assert answer["response_types"] == ["code"]
    assert isinstance(answer["client_id_issued_at"], int)
    # HA's login flow accepts that client id for each of those redirect URIs ...
    for redirect_uri in redirect_uris:
        response = await anon.post(
            "/auth/login_flow",
            json={
                "client_id": client_id,
                "handler": ["homeassistant", None],
                "redirect_uri": redirect_uri,
            },
        )
        assert response.status == 200, await response.text()


@pytest.mark.usefixtures("login_user")
async def test_home_assistant_refuses_the_client_id_for_another_origin(anon: TestClient) -> None:
    """The client id is bound to the redirect's origin by HA itself, not by the gateway."""
    status, answer = await _register(anon, {"redirect_uris": ["http://127.0.0.1:33418/cb"]})
    assert status == 201
    # Another port is another origin: HA looks for a page at the client id (there is none)
    # and refuses, after the password (HA 2025.4 checks the redirect when issuing the code).
    status, body = await _log_in(anon, answer["client_id"], "http://127.0.0.1:33419/cb")
    assert (status, body) == (403, {"message": "Invalid redirect URI"})


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://claude.ai/cb"}, "invalid_client_metadata"),
        ({"redirect_uris": [1]}, "invalid_client_metadata"),
        ({"redirect_uris": [f"https://a.example/{i}" for i in range(6)]}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/callback"]},
            "invalid_redirect_uri",
        ),
        ({"redirect_uris": ["http://claude.ai/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://8.8.8.8/cb"]}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["https://a.example/cb", "https://b.example/cb"]},
            "invalid_redirect_uri",
        ),
        (
            {"redirect_uris": ["https://a.example/cb", "https://a.example:444/cb"]},
            "invalid_redirect_uri",
        ),
        ({"redirect_uris": ["https://a.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://user:pw@a.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://a.example:99999/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https:///cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["/relative/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://a.example/" + "x" * 2000]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://a.exa\nmple/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": [" https://a.example/cb"]}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]},
            "invalid_client_metadata",
        ),
        (
            {"redirect_uris": ["https://a.example/cb"], "response_types": ["token"]},
            "invalid_client_metadata",
        ),
        ({"redirect_uris": ["https://a.example/cb"], "client_name": 5}, "invalid_client_metadata"),
        (
            {"redirect_uris": ["https://a.example/cb"], "client_name": "x" * 201},
            "invalid_client_metadata",
        ),
        ([], "invalid_client_metadata"),
        (b"{not json", "invalid_client_metadata"),
    ],
)
async def test_registration_refusals(anon: TestClient, metadata: Any, error: str) -> None:
    """Registration metadata that RFC 7591 refuses is 400 with the matching error."""
    status, answer = await _register(anon, metadata)
    assert status == 400
    assert answer["error"] == error
    assert answer["error_description"]


async def test_registration_refuses_size_type_origin_and_rate(
    hass: HomeAssistant, gateway: GatewayRuntime, anon: TestClient
) -> None:
    """Oversized, wrongly typed, foreign-origin and too frequent registrations are refused."""
    now = [5000.0]
    gateway.clock = lambda: now[0]
    good = {"redirect_uris": ["https://claude.ai/cb"]}
    big = {**good, "padding": "x" * oauth.MAX_REGISTRATION_BYTES}
    status, answer = await _register(anon, big)
    assert (status, answer["error"]) == (413, "invalid_client_metadata")
    response = await anon.post(
        REGISTER, data=json.dumps(good), headers={"Content-Type": "text/plain"}
    )
    assert response.status == 400
    # A web page the gateway does not trust cannot register from a browser.
    status, answer = await _register(anon, good, Origin="https://evil.example")
    assert (status, answer["error"]) == (403, "access_denied")
    # At most REGISTRATIONS_PER_MINUTE per client address, then 429 with Retry-After.
    now[0] += 60  # a full budget again
    statuses = [(await _register(anon, good))[0] for _ in range(oauth.REGISTRATIONS_PER_MINUTE)]
    assert statuses == [201] * oauth.REGISTRATIONS_PER_MINUTE
    response = await anon.post(REGISTER, json=good)
    assert response.status == 429
    assert response.headers["Retry-After"] == "6"
    assert (await response.json())["error"] == "slow_down"
    now[0] += 6
    assert (await _register(anon, good))[0] == 201
