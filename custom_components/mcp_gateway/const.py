"""Constants shared across the integration."""

from __future__ import annotations

from typing import Final

DOMAIN: Final = "mcp_gateway"

# Which backend a config entry talks to; stored in entry.data.
CONF_BACKEND: Final = "backend"
BACKEND_HUBITAT: Final = "hubitat"
BACKEND_HOMECAST: Final = "homecast"
BACKEND_ROBINE_WAKE: Final = "robine_wake"

GATEWAY_URL: Final = "/api/mcp_gateway"

# Option every backend entry has: whether the MCP gateway exposes it.
CONF_GATEWAY_EXPOSED: Final = "gateway_exposed"
