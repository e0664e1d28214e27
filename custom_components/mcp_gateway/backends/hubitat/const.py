"""Constants of the Hubitat backend."""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from homeassistant.const import CONF_HOST, CONF_SCAN_INTERVAL, CONF_TOKEN, CONF_URL, Platform

__all__ = ["CONF_HOST", "CONF_SCAN_INTERVAL", "CONF_TOKEN", "CONF_URL"]

# entry.data[CONF_BACKEND] of its entries, and its row in registry.py: said only here.
KIND: Final = "hubitat"

PLATFORMS: Final = (
    Platform.ALARM_CONTROL_PANEL,
    Platform.BINARY_SENSOR,
    Platform.BUTTON,
    Platform.CLIMATE,
    Platform.COVER,
    Platform.EVENT,
    Platform.FAN,
    Platform.LIGHT,
    Platform.LOCK,
    Platform.SELECT,
    Platform.SENSOR,
    Platform.SWITCH,
    Platform.VALVE,
)

# The acknowledgment the hub's write gate asks for (see the server's tool guide).
BEST_PRACTICE_KEY: Final = "bps-ack-299"

CONF_APP_ID: Final = "app_id"

# Options (prefixed: the options form is shared by every backend).
CONF_AS_SWITCH: Final = "hubitat_as_switch"
CONF_AS_LIGHT: Final = "hubitat_as_light"
CONF_SEND_KEY: Final = "hubitat_send_key"
# The user's consent to live updates: rules on the hub that call a webhook (push.py).
CONF_PUSH: Final = "hubitat_push"
# Entry data: the secret id of the entry's webhook.
CONF_WEBHOOK_ID: Final = "webhook_id"

DEFAULT_SCAN_INTERVAL: Final = 15  # seconds
# Per request; a hub busy with a large inventory page answers well within this.
REQUEST_TIMEOUT: Final = 10.0
MIN_SCAN_INTERVAL: Final = 5
MAX_SCAN_INTERVAL: Final = 3600

# How often a poll also lists every device id (to see additions/removals), rooms, rules
# and hub health; the polls in between only ask for what changed.
SWEEP_INTERVAL: Final = timedelta(minutes=5)

# The hub runs at most 2 writes at once and takes at most 20 commands per batch.
MAX_WRITES_IN_FLIGHT: Final = 2
MAX_BATCH: Final = 20
# How long the coalescer waits for more commands after the first one (seconds).
COALESCE_WINDOW: Final = 0.005

ISSUE_KEY_REFUSED: Final = "hubitat_key_refused"
ISSUE_LOCATION_EVENTS: Final = "hubitat_location_events"
ISSUE_RULES_FAILED: Final = "hubitat_rules_failed"
ISSUE_RULE_STATUS: Final = "hubitat_rule_status"
ISSUE_PUSH: Final = "hubitat_push"

# Device keys (EntitySpec.device.key) of the hub itself and of rules; devices use their id.
HUB_DEVICE_KEY: Final = "hub"


def rule_device_key(rule_id: str) -> str:
    """The device key of a rule."""
    return f"rule_{rule_id}"


# hub_list_device_events' largest `limit` (toolGetDeviceHistory: Math.min(limit ?: 100, 500)).
# A device's events are capped before the attribute filter (eventsSince max: limit), so reads
# ask for the most the hub gives.
EVENTS_LIMIT: Final = 500
