"""The integration's actions, registered once in async_setup as the quality scale asks.

Each backend that offers actions lists them in its own `services.py` (`ACTIONS`), named by its
row of the backend registry; this module only registers them.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback

from .backends.registry import BACKENDS
from .const import DOMAIN


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register every backend's actions."""
    for action in (action for row in BACKENDS for action in row.actions):
        hass.services.async_register(
            DOMAIN,
            action.name,
            action.handler,
            schema=action.schema,
            supports_response=action.supports_response,
        )
