"""The integration's actions, registered once in async_setup as the quality scale asks.

Each backend that offers actions lists them in its own `services.py` (`ACTIONS`), named by its
row of the backend registry; this module registers them. Each handler checks its caller with
the gateway's policy before anything else and refuses with `ActionUnauthorized`
(permissions/actions.py), which HA's REST API answers as 401 (400 with the reason on the
current release) and its websocket as `service_validation_error` with the translated reason.
Core's own commands stay as they are.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback

from .core.const import DOMAIN
from .registry import BACKENDS


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register every backend's actions."""
    actions = {action.name: action for row in BACKENDS for action in row.actions}
    for action in actions.values():
        hass.services.async_register(
            DOMAIN,
            action.name,
            action.handler,
            schema=action.schema,
            supports_response=action.supports_response,
        )
