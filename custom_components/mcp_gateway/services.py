"""The integration's actions, registered once in async_setup as the quality scale asks.

Each backend that offers actions keeps them in its own `services.py`; this module only wires
them up.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback

from .backends.homecast.services import async_register_services as _homecast
from .backends.robine_wake.services import async_register_services as _robine_wake


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register every backend's actions."""
    _homecast(hass)
    _robine_wake(hass)
