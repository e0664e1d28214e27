"""RFC 9728 protected-resource metadata for the gateway endpoint.

Served at the path-inserted location for our own URL only: the root document and core's
`/api/mcp` are not ours to claim. The authorization server is Home Assistant itself, which
already publishes `/.well-known/oauth-authorization-server` (RFC 8414).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final

from aiohttp import web
from homeassistant.helpers.http import HomeAssistantView

from ..const import GATEWAY_URL
from .view import RESOURCE_METADATA_PATH, json_response

RESOURCE_NAME: Final = "Home Assistant MCP Gateway"
# Home Assistant access tokens carry no scopes; permissions follow the HA user instead.
_CACHE_SECONDS: Final = 3600


class ProtectedResourceMetadataView(HomeAssistantView):
    """GET /.well-known/oauth-protected-resource/api/mcp_gateway."""

    url = RESOURCE_METADATA_PATH
    name = "mcp_gateway:protected_resource_metadata"
    requires_auth = False
    cors_allowed = True  # browser-based MCP clients read it cross-origin

    async def get(self, request: web.Request) -> web.Response:
        """The document, for the origin the client used (RFC 9728 §3.3 requires a match)."""
        base = str(request.url.origin())
        document = {
            "resource": f"{base}{GATEWAY_URL}",
            "authorization_servers": [base],
            "bearer_methods_supported": ["header"],
            "resource_name": RESOURCE_NAME,
        }
        return json_response(
            document, HTTPStatus.OK, {"Cache-Control": f"public, max-age={_CACHE_SECONDS}"}
        )
