"""The words of Homecast's live-update WebSocket, said once: message types, close codes, the
subscribe request. Each broadcast characteristic as get_state shows it: vocabulary.py.

Messages (homecast-web `src/server/websocket.ts`, `local-broadcast.ts`, `local-server.ts`):
`characteristic_update {accessoryId, homeId, characteristicType, value}` with the relay's
characteristic names and raw HomeKit values, `service_group_update`, `reachability_update`,
`relay_status_update`, server `ping`, `reconnect`, `redirect {target}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
import uuid

# Message types.
CHARACTERISTIC: Final = "characteristic_update"
GROUP: Final = "service_group_update"
REACHABILITY: Final = "reachability_update"
RELAY_STATUS: Final = "relay_status_update"
PING: Final = "ping"
RECONNECT: Final = "reconnect"
REDIRECT: Final = "redirect"
AUTH_REQUIRED: Final = "auth_required"
SUBSCRIPTION_INVALIDATED: Final = "subscription_invalidated"
RESPONSE: Final = "response"
# Error codes of a refused credential in a response.
REFUSALS: Final = frozenset({"AUTH_REQUIRED", "AUTH_FAILED", "UNAUTHORIZED"})
# Close code of the cloud socket for a refused credential (websocket.ts onclose: 4001).
CLOSE_AUTH_FAILED: Final = 4001


def error_code(message: Mapping[str, Any]) -> str:
    """The code of a response's error."""
    error = message.get("error")
    if isinstance(error, Mapping):
        return str(error.get("code") or "error")
    return "error"


def subscribe_request(homes: list[str], ttl: int) -> dict[str, Any]:
    """A subscribe request for these homes (pyhomecast subscribe)."""
    return {
        "id": str(uuid.uuid4()),
        "type": "request",
        "action": "subscribe",
        "payload": {"scopes": [{"type": "home", "id": home} for home in homes], "ttl": ttl},
    }
