"""Actions of the homecast backend.

TODO(backend owner): placeholder keeps the package importable.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant, callback


@callback
def async_register_services(hass: HomeAssistant) -> None:
    """Register the backend's actions."""
