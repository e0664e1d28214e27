"""The integration's actions, registered once in async_setup as the quality scale asks.

Each backend that offers actions lists them in its own `services.py` (`ACTIONS`); this module
only registers them.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback

from .backends.homecast.services import ACTIONS as HOMECAST_ACTIONS
from .backends.robine_wake.services import ACTIONS as ROBINE_WAKE_ACTIONS
from .const import DOMAIN


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register every backend's actions."""
    for action in (*HOMECAST_ACTIONS, *ROBINE_WAKE_ACTIONS):
        hass.services.async_register(
            DOMAIN,
            action.name,
            action.handler,
            schema=action.schema,
            supports_response=action.supports_response,
        )
