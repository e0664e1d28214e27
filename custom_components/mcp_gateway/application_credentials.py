"""Application credentials: the Homecast OAuth fallback when a server offers no registration.

The credential gives the client id and secret; the endpoints are the server's, discovered by
the config flow (and stored in the entry for later refreshes).
"""

from __future__ import annotations

from homeassistant.components.application_credentials import ClientCredential
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_entry_oauth2_flow

from .backends.homecast.const import DATA_OAUTH_ENDPOINTS, DEFAULT_URL
from .backends.homecast.oauth import HomecastOAuth2Implementation

_DEFAULT_ORIGIN = DEFAULT_URL.rsplit("/", 1)[0]


async def async_get_auth_implementation(
    hass: HomeAssistant, auth_domain: str, credential: ClientCredential
) -> config_entry_oauth2_flow.AbstractOAuth2Implementation:
    """A PKCE implementation for the credential, on the endpoints of the server being set up."""
    endpoints = hass.data.get(DATA_OAUTH_ENDPOINTS) or {
        "authorize_url": f"{_DEFAULT_ORIGIN}/oauth/authorize",
        "token_url": f"{_DEFAULT_ORIGIN}/oauth/token",
    }
    return HomecastOAuth2Implementation(
        hass,
        auth_domain,
        credential.client_id,
        endpoints["authorize_url"],
        endpoints["token_url"],
        credential.client_secret,
        name=credential.name or "Homecast",
    )
