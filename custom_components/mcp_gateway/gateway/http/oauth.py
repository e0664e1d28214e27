"""The gateway's OAuth authorization-server metadata (RFC 8414) and client registration (RFC 7591).

Home Assistant is the authorization server: its login page, `/auth/token` and `/auth/revoke`
issue and revoke the tokens. What MCP clients miss in HA's own
`/.well-known/oauth-authorization-server` (2025.4: no `issuer`, relative URLs; no release has a
`registration_endpoint`) is published here, under the gateway's own issuer
(`<base>/api/mcp_gateway`), which our protected-resource document names.

Registration stores nothing. HA accepts any client id on the scheme and host of the redirect
URI (IndieAuth, `homeassistant/components/auth/indieauth.py`, `verify_redirect_uri`), and its
login page names that client id, so the answer is the redirect's origin: the user sees which
host will receive the code. PKCE and other capabilities are advertised only when HA's own
metadata declares them, since HA's token endpoint is the one that would have to enforce them.
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
import time
from typing import Any, Final
from urllib.parse import urlsplit

from aiohttp import hdrs, web
from homeassistant.components.auth import indieauth
from homeassistant.helpers.http import KEY_HASS

from ...core.compat import async_ha_oauth_metadata
from ...core.const import GATEWAY_URL
from ...core.settings import gateway_settings
from ...mcp.server import parse_json
from ...permissions.limits import RateLimiter
from .cors import CorsView
from .origins import check_origin, is_loopback_host, public_base, request_host
from .view import json_response, malformed_host

AUTHORIZATION_SERVER_PATH: Final = f"/.well-known/oauth-authorization-server{GATEWAY_URL}"
REGISTER_URL: Final = f"{GATEWAY_URL}/register"

# What HA's own metadata may declare and we pass on (`_declared_capabilities`): HA's endpoints,
# not ours, enforce them, so they are advertised only on releases whose HA declares them.
# HA 2025.4 declares neither (ignores code_verifier; reads only HTML link tags at a client id).
# HA 2026.10 declares both: its login flow binds an S256 challenge to the code and /auth/token
# checks the verifier (auth/login_flow.py LoginFlowIndexView.post, auth/__init__.py
# TokenView._async_handle_auth_code), and indieauth.fetch_redirect_uris falls back to a JSON
# client-id metadata document.
_CACHE_SECONDS: Final = 3600

# Registration bounds: a real client registers a handful of redirect URIs once per install.
MAX_REGISTRATION_BYTES: Final = 16 * 1024
MAX_REDIRECT_URIS: Final = 5
MAX_URI_CHARS: Final = 2000
MAX_CLIENT_NAME_CHARS: Final = 200
REGISTRATIONS_PER_MINUTE: Final = 10
_GRANT_TYPES: Final = ("authorization_code", "refresh_token")


class AuthorizationServerMetadataView(CorsView):
    """GET /.well-known/oauth-authorization-server/api/mcp_gateway."""

    url = AUTHORIZATION_SERVER_PATH
    name = "mcp_gateway:authorization_server_metadata"
    requires_auth = False
    cors_public = True

    async def get(self, request: web.Request) -> web.Response:
        """The document, with absolute URLs on HA's trusted base for this request."""
        hass = request.app[KEY_HASS]
        if request_host(request) is None:
            return malformed_host()
        if (base := public_base(hass, request)) is None:
            return json_response({"error": "no_url_available"}, HTTPStatus.NOT_FOUND)
        document: dict[str, Any] = {
            "issuer": f"{base}{GATEWAY_URL}",
            "authorization_endpoint": f"{base}/auth/authorize",
            "token_endpoint": f"{base}/auth/token",
            "revocation_endpoint": f"{base}/auth/revoke",
            "registration_endpoint": f"{base}{REGISTER_URL}",
            "response_types_supported": ["code"],
            "grant_types_supported": list(_GRANT_TYPES),
            # HA's token endpoint authenticates no client: every client is public.
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "service_documentation": "https://developers.home-assistant.io/docs/auth_api",
        }
        document.update(_declared_capabilities(await async_ha_oauth_metadata(request)))
        return json_response(
            document, HTTPStatus.OK, {hdrs.CACHE_CONTROL: f"public, max-age={_CACHE_SECONDS}"}
        )


def _declared_capabilities(declared: dict[str, Any]) -> dict[str, Any]:
    """The capabilities HA declares, passed on only in their RFC 8414 / draft shapes."""
    capabilities: dict[str, Any] = {}
    methods = declared.get("code_challenge_methods_supported")
    if isinstance(methods, list) and methods and all(isinstance(m, str) for m in methods):
        capabilities["code_challenge_methods_supported"] = methods
    if declared.get("client_id_metadata_document_supported") is True:
        capabilities["client_id_metadata_document_supported"] = True
    return capabilities


class RegistrationError(Exception):
    """A refused registration: an RFC 7591 error code and a description."""

    def __init__(self, code: str, description: str, status: int = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.status = status


class ClientRegistrationView(CorsView):
    """POST /api/mcp_gateway/register: RFC 7591 dynamic registration, stateless."""

    url = REGISTER_URL
    name = "mcp_gateway:register"
    requires_auth = False

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """The limiter counts registrations per client address."""
        self._limiter = RateLimiter(REGISTRATIONS_PER_MINUTE, clock=clock)

    async def post(self, request: web.Request) -> web.Response:
        """Answer a client id HA's login accepts for the redirect URIs, or an RFC 7591 error."""
        hass = request.app[KEY_HASS]
        if not check_origin(hass, request, gateway_settings(hass)):
            return _error("access_denied", "Origin not allowed", HTTPStatus.FORBIDDEN)
        if (wait := self._limiter.acquire(request.remote or "")) is not None:
            response = _error("slow_down", "Too many registrations", HTTPStatus.TOO_MANY_REQUESTS)
            response.headers[hdrs.RETRY_AFTER] = str(wait)
            return response
        try:
            metadata = await _read_metadata(request)
            return await _register(request, metadata)
        except RegistrationError as err:
            return _error(err.code, err.description, err.status)


def _error(code: str, description: str, status: int) -> web.Response:
    return json_response(
        {"error": code, "error_description": description},
        status,
        {hdrs.CACHE_CONTROL: "no-store"},
    )


async def _read_metadata(request: web.Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise RegistrationError("invalid_client_metadata", "Content-Type must be application/json")
    if (request.content_length or 0) > MAX_REGISTRATION_BYTES:
        raise _too_large()
    body = bytearray()
    async for chunk in request.content.iter_chunked(4096):
        body.extend(chunk)
        if len(body) > MAX_REGISTRATION_BYTES:
            raise _too_large()
    try:
        # The gateway's own decoder: a lone surrogate, bad UTF-8 or deep nesting is a
        # malformed body, as on the gateway endpoint, not text to fail on later.
        metadata = parse_json(bytes(body))
    except ValueError as err:
        raise RegistrationError("invalid_client_metadata", "Body is not JSON") from err
    if not isinstance(metadata, dict):
        raise RegistrationError("invalid_client_metadata", "Body must be a JSON object")
    return metadata


def _too_large() -> RegistrationError:
    return RegistrationError(
        "invalid_client_metadata",
        f"Registration request exceeds {MAX_REGISTRATION_BYTES} bytes",
        HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
    )


def _string_list(metadata: dict[str, Any], key: str, default: list[str]) -> list[str]:
    value = metadata.get(key, default)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise RegistrationError("invalid_client_metadata", f"{key} must be a list of strings")
    return value


def client_id_for(redirect_uri: str) -> str:
    """The client id HA accepts for this redirect URI, or a RegistrationError saying why not.

    HA compares the client id's scheme and host with the redirect's
    (`indieauth.verify_redirect_uri`) and refuses hosts that are public IP addresses
    (`indieauth.verify_client_id`); other schemes (custom app schemes) would need a page at
    the client id listing them, which a registration cannot create.
    """
    if len(redirect_uri) > MAX_URI_CHARS:
        raise RegistrationError("invalid_redirect_uri", "Redirect URI too long")
    # urlsplit silently drops tabs and new lines; a browser would not.
    if any(ord(char) <= 32 or ord(char) == 127 for char in redirect_uri):
        raise RegistrationError("invalid_redirect_uri", "Redirect URI has spaces or controls")
    try:
        parts = urlsplit(redirect_uri)
        _ = parts.port  # raises ValueError for a malformed port
    except ValueError as err:
        raise RegistrationError("invalid_redirect_uri", "Malformed redirect URI") from err
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise RegistrationError(
            "invalid_redirect_uri",
            "Home Assistant accepts only http and https redirect URIs from a registration",
        )
    if not parts.hostname or parts.username is not None or parts.password is not None:
        raise RegistrationError("invalid_redirect_uri", "Redirect URI needs a host and no user")
    if parts.fragment or "#" in redirect_uri:
        raise RegistrationError("invalid_redirect_uri", "Redirect URI must not have a fragment")
    if scheme == "http" and not is_loopback_host(parts.hostname):
        raise RegistrationError(
            "invalid_redirect_uri", "Plain http redirect URIs are accepted on loopback only"
        )
    client_id = f"{scheme}://{parts.netloc.lower()}/"
    if not indieauth.verify_client_id(client_id):
        raise RegistrationError(
            "invalid_redirect_uri",
            "Home Assistant refuses this host in a client id (a public IP address)",
        )
    return client_id


async def _register(request: web.Request, metadata: dict[str, Any]) -> web.Response:
    redirect_uris = _string_list(metadata, "redirect_uris", [])
    if not 1 <= len(redirect_uris) <= MAX_REDIRECT_URIS:
        raise RegistrationError(
            "invalid_redirect_uri", f"Give 1 to {MAX_REDIRECT_URIS} redirect URIs"
        )
    client_ids = {client_id_for(uri) for uri in redirect_uris}
    if len(client_ids) != 1:
        raise RegistrationError(
            "invalid_redirect_uri", "All redirect URIs must share one scheme, host and port"
        )
    (client_id,) = client_ids
    hass = request.app[KEY_HASS]
    for uri in redirect_uris:
        # HA's own check, as its login flow will make it (same origin: nothing is fetched).
        if not await indieauth.verify_redirect_uri(hass, client_id, uri):
            raise RegistrationError("invalid_redirect_uri", "Home Assistant refuses this redirect")
    if "authorization_code" not in _string_list(metadata, "grant_types", ["authorization_code"]):
        raise RegistrationError("invalid_client_metadata", "Only authorization_code is supported")
    if "code" not in _string_list(metadata, "response_types", ["code"]):
        raise RegistrationError(
            "invalid_client_metadata", "Only the code response type is supported"
        )
    answer: dict[str, Any] = {
        "client_id": client_id,
        "client_id_issued_at": int(time.time()),
        "redirect_uris": redirect_uris,
        # Replaced whatever was asked (RFC 7591 3.2.1): HA issues no client secrets.
        "token_endpoint_auth_method": "none",
        "grant_types": list(_GRANT_TYPES),
        "response_types": ["code"],
    }
    name = metadata.get("client_name")
    if name is not None:
        if not isinstance(name, str) or len(name) > MAX_CLIENT_NAME_CHARS:
            raise RegistrationError(
                "invalid_client_metadata",
                f"client_name must be a string of at most {MAX_CLIENT_NAME_CHARS} characters",
            )
        answer["client_name"] = name
    return json_response(
        answer, HTTPStatus.CREATED, {hdrs.CACHE_CONTROL: "no-store", hdrs.PRAGMA: "no-cache"}
    )
