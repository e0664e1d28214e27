"""Diagnostics for a config entry: the backend's own facts, with every secret redacted."""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.core import HomeAssistant

from .core.const import CONF_BACKEND
from .core.settings import KIND_GATEWAY
from .framework.base import McpGatewayConfigEntry

# Keys that may hold credentials or identify a person, wherever they appear.
TO_REDACT = {
    "token",
    "access_token",
    "refresh_token",
    "password",
    "url",
    "host",
    "auth_implementation",
    "client_secret",
    "bestPracticeKey",
    "webhook_id",
    "latitude",
    "longitude",
}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: McpGatewayConfigEntry
) -> dict[str, Any]:
    """Return redacted diagnostics for one entry."""
    if entry.data.get(CONF_BACKEND) == KIND_GATEWAY:
        # The gateway's settings entry runs nothing: its options are all there is to show.
        return {"entry": {"data": dict(entry.data), "options": dict(entry.options)}}
    runtime = entry.runtime_data
    health = runtime.health()
    return async_redact_data(
        {
            "entry": {"data": dict(entry.data), "options": dict(entry.options)},
            "health": {
                "available": health.available,
                "protocol_version": health.protocol_version,
                "latency_ms": health.latency_ms,
                "details": health.details,
            },
            "entities": {
                "derived": len(runtime.publisher.specs),
                # Held back by Home Assistant's cap on an entry's enabled entities (2026.x).
                "waiting_for_room": runtime.publisher.withheld,
            },
            "backend": runtime.diagnostics(),
        },
        TO_REDACT,
    )
