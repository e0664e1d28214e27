"""RFC 9728 protected-resource metadata for the gateway endpoint.

Served at the path-inserted location for our own URL only: the root document and core's
`/api/mcp` are not ours to claim. The authorization server it names is the gateway's own issuer
(`oauth.py`), whose metadata points at Home Assistant's login and token endpoints.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final

from aiohttp import hdrs, web
from homeassistant.helpers.http import KEY_HASS

from ...core.const import GATEWAY_URL
from .cors import CorsView
from .origins import public_base, request_host
from .view import RESOURCE_METADATA_PATH, json_response, malformed_host

RESOURCE_NAME: Final = "Home Assistant MCP Gateway"
# Home Assistant access tokens carry no scopes; permissions follow the HA user instead.
_CACHE_SECONDS: Final = 3600


class ProtectedResourceMetadataView(CorsView):
    """GET /.well-known/oauth-protected-resource/api/mcp_gateway."""

    url = RESOURCE_METADATA_PATH
    name = "mcp_gateway:protected_resource_metadata"
    requires_auth = False
    cors_public = True  # browser-based MCP clients read it cross-origin

    async def get(self, request: web.Request) -> web.Response:
        """The document on HA's configured URL the client used (or a loopback one).

        RFC 9728 section 3.3: the resource must match the URL the client asked about, so a
        client that came through a host HA does not know gets HA's real one and stops there.
        """
        if request_host(request) is None:
            return malformed_host()
        if (base := public_base(request.app[KEY_HASS], request)) is None:
            return json_response({"error": "no_url_available"}, HTTPStatus.NOT_FOUND)
        document = {
            "resource": f"{base}{GATEWAY_URL}",
            "authorization_servers": [f"{base}{GATEWAY_URL}"],
            "bearer_methods_supported": ["header"],
            "resource_name": RESOURCE_NAME,
        }
        return json_response(
            document, HTTPStatus.OK, {hdrs.CACHE_CONTROL: f"public, max-age={_CACHE_SECONDS}"}
        )
