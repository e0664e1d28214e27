"""Constants of the Homecast backend."""

from __future__ import annotations

from typing import Final

from homeassistant.const import CONF_ACCESS_TOKEN, CONF_SCAN_INTERVAL, Platform

__all__ = ["CONF_ACCESS_TOKEN", "CONF_SCAN_INTERVAL"]

# entry.data[CONF_BACKEND] of its entries, and its row in registry.py: said only here.
KIND: Final = "homecast"

PLATFORMS: Final = (
    Platform.ALARM_CONTROL_PANEL,
    Platform.BINARY_SENSOR,
    Platform.BUTTON,
    Platform.CLIMATE,
    Platform.COVER,
    Platform.DATETIME,
    Platform.EVENT,
    Platform.FAN,
    Platform.LIGHT,
    Platform.LOCK,
    Platform.NUMBER,
    Platform.SCENE,
    Platform.SELECT,
    Platform.SENSOR,
    Platform.SWITCH,
    Platform.TEXT,
    Platform.VALVE,
)

DEFAULT_URL: Final = "https://api.homecast.cloud/mcp"
# The Homecast Mac app's community server (src/server/local-server.ts, port 5656).
COMMUNITY_URL_EXAMPLE: Final = "http://homecast-mac.local:5656/mcp"
DEFAULT_SCAN_INTERVAL: Final = 30
MIN_SCAN_INTERVAL: Final = 10
MAX_SCAN_INTERVAL: Final = 3600

# entry.data keys
CONF_AUTH_TYPE: Final = "auth_type"
AUTH_TOKEN: Final = "token"
AUTH_OAUTH: Final = "oauth"
CONF_HOMES: Final = "homes"  # UUIDs of the homes the entry follows
CONF_OAUTH_CLIENT: Final = "oauth_client"  # dynamically registered client and endpoints
CONF_OAUTH_ENDPOINTS: Final = "oauth_endpoints"  # endpoints for application credentials
CONF_SERVER: Final = "server"  # which Homecast server: absent = the cloud
SERVER_COMMUNITY: Final = "community"

OAUTH_SCOPES: Final = "mcp:read mcp:write"
# Where the OAuth metadata of the server being configured is kept for application credentials.
DATA_OAUTH_ENDPOINTS: Final = "mcp_gateway_homecast_oauth_endpoints"
