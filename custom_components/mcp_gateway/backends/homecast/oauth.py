"""OAuth 2.1 for Homecast: RFC 8414 discovery, RFC 7591 dynamic registration, PKCE."""

from __future__ import annotations

from collections.abc import Mapping
import hashlib
from typing import Any, Self

import aiohttp
from homeassistant.core import HomeAssistant
from homeassistant.helpers.config_entry_oauth2_flow import LocalOAuth2ImplementationWithPkce
from yarl import URL

from .const import OAUTH_SCOPES

WELL_KNOWN = "/.well-known/oauth-authorization-server"
_TIMEOUT = aiohttp.ClientTimeout(total=15)


class OAuthDiscoveryError(Exception):
    """The server's OAuth metadata or registration could not be used."""


class HomecastOAuth2Implementation(LocalOAuth2ImplementationWithPkce):
    """A PKCE client of one Homecast server; `domain` is its key among HA's implementations."""

    def __init__(  # noqa: PLR0917 - mirrors the HA base class's positional signature
        self,
        hass: HomeAssistant,
        key: str,
        client_id: str,
        authorize_url: str,
        token_url: str,
        client_secret: str = "",
        *,
        name: str = "Homecast",
    ) -> None:
        super().__init__(hass, key, client_id, authorize_url, token_url, client_secret)
        self._name = name

    @property
    def name(self) -> str:
        """Shown when several implementations are offered."""
        return self._name

    @classmethod
    def for_client(cls, hass: HomeAssistant, client: Mapping[str, Any]) -> Self:
        """An implementation for a registered client; its key follows from client and server."""
        digest = hashlib.sha256(
            f"{client['token_url']}|{client['client_id']}".encode()
        ).hexdigest()[:12]
        return cls(
            hass,
            f"homecast_{digest}",
            str(client["client_id"]),
            str(client["authorize_url"]),
            str(client["token_url"]),
            str(client.get("client_secret") or ""),
        )

    @classmethod
    def from_stored(cls, hass: HomeAssistant, client: Mapping[str, Any]) -> Self:
        """Rebuild the implementation from what `stored()` kept in the entry."""
        return cls.for_client(hass, client)

    def stored(self) -> dict[str, str]:
        """What the entry keeps to rebuild this implementation after a restart."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "authorize_url": self.authorize_url,
            "token_url": self.token_url,
        }


async def async_discover(session: aiohttp.ClientSession, mcp_url: str) -> dict[str, Any]:
    """The authorization server metadata at the MCP server's origin."""
    url = URL(mcp_url).origin().with_path(WELL_KNOWN)
    try:
        async with session.get(url, timeout=_TIMEOUT) as resp:
            if resp.status != 200:
                raise OAuthDiscoveryError(f"{WELL_KNOWN} answered HTTP {resp.status}")
            metadata = await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as err:
        raise OAuthDiscoveryError(f"{WELL_KNOWN}: {err}") from err
    if not isinstance(metadata, dict) or not all(
        isinstance(metadata.get(key), str) for key in ("authorization_endpoint", "token_endpoint")
    ):
        raise OAuthDiscoveryError("OAuth metadata lacks authorization and token endpoints")
    methods = metadata.get("code_challenge_methods_supported")
    if isinstance(methods, list) and "S256" not in methods:
        raise OAuthDiscoveryError("the server does not support PKCE S256")
    return metadata


async def async_register(
    session: aiohttp.ClientSession, metadata: Mapping[str, Any], redirect_uri: str
) -> dict[str, str]:
    """Register Home Assistant as a public client; returns what `for_client` takes."""
    body = {
        "client_name": "Home Assistant (MCP Gateway)",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": OAUTH_SCOPES,
    }
    try:
        async with session.post(
            metadata["registration_endpoint"], json=body, timeout=_TIMEOUT
        ) as resp:
            if resp.status not in (200, 201):
                raise OAuthDiscoveryError(f"client registration answered HTTP {resp.status}")
            answer = await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as err:
        raise OAuthDiscoveryError(f"client registration failed: {err}") from err
    if not isinstance(answer, dict) or not isinstance(answer.get("client_id"), str):
        raise OAuthDiscoveryError("client registration returned no client_id")
    return {
        "client_id": answer["client_id"],
        "client_secret": str(answer.get("client_secret") or ""),
        "authorize_url": str(metadata["authorization_endpoint"]),
        "token_url": str(metadata["token_endpoint"]),
    }
