"""Home Assistant-side constants of the Robine Wake backend (wire facts live in model.py)."""

from __future__ import annotations

from collections.abc import Iterable
import re
from typing import Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import CONF_PASSWORD, CONF_SCAN_INTERVAL, CONF_URL, Platform
from yarl import URL

__all__ = ["CONF_PASSWORD", "CONF_SCAN_INTERVAL", "CONF_URL"]

# entry.data[CONF_BACKEND] of its entries, and its row in registry.py: said only here.
KIND: Final = "robine_wake"

PLATFORMS: Final = (
    Platform.BINARY_SENSOR,
    Platform.BUTTON,
    Platform.EVENT,
    Platform.SENSOR,
    Platform.SWITCH,
    Platform.TIME,
)

# The scheme the clock's 401 asked for (model.AuthScheme); absent: Basic, as before it was read.
CONF_AUTH_SCHEME: Final = "auth_scheme"
# Unique ids of clocks that name no device id (50-002 defines none): the address they answer on.
ADDRESS_UID_PREFIX: Final = "address:"
# Ringing must show within the poll interval; 5 s is 12 get_state calls a minute, a tenth of
# the device's default budget, leaving room for list_alarms, actions and the gateway.
DEFAULT_SCAN_INTERVAL: Final = 5
# At the fastest allowed interval polls take 30 of the device's 120 requests a minute.
MIN_SCAN_INTERVAL: Final = 2
# While a session rings or snoozes the clock is read this often (its spec has no push: GET /mcp
# is 405), so a snooze or dismissal made on the clock shows within about a second. A minute of
# it is 60 reads, half the device's default budget, and only while someone is being woken.
SESSION_SCAN_INTERVAL: Final = 1.0
MAX_SCAN_INTERVAL: Final = 300
# Without a Retry-After the device's window is one minute.
RATE_LIMIT_FALLBACK_WAIT: Final = 60.0

# The one HA device of an entry (the clock); alarms are entities of it.
DEVICE_KEY: Final = "clock"
MANUFACTURER: Final = "Robine"
DEFAULT_MODEL: Final = "Robine Wake"

SESSION_IDLE: Final = "idle"
EVENT_RINGING: Final = "ringing"
EVENT_SNOOZED: Final = "snoozed"
EVENT_DISMISSED: Final = "dismissed"
EVENT_ENDED: Final = "ended"
EVENT_TYPES: Final = (EVENT_RINGING, EVENT_SNOOZED, EVENT_DISMISSED, EVENT_ENDED)


def password_issue_id(entry: ConfigEntry) -> str:
    """Repair issue: the clock started asking for a password this entry does not have."""
    return f"robine_wake_password_required_{entry.entry_id}"


def address_uid(url: str) -> str:
    """The unique id of a clock that names no id of its own: where it answers (host:port)."""
    parsed = URL(url)
    return f"{ADDRESS_UID_PREFIX}{(parsed.host or '').lower()}:{parsed.port}"


def is_address_uid(unique_id: str | None) -> bool:
    """Whether an entry identifies its clock by address (no device id when it was added)."""
    return bool(unique_id) and str(unique_id).startswith(ADDRESS_UID_PREFIX)


# The title a nameless clock was given before it was "Robine Wake": its address in brackets.
_ADDRESS_TITLE: Final = re.compile(r"Robine Wake \([^()]*\)")


def unnamed_title(taken: Iterable[str]) -> str:
    """A clock that names itself nothing is "Robine Wake", a second one "Robine Wake 2": the
    title names its device and so its entity ids (an address in them reads as noise)."""
    titles = set(taken)
    number = 1
    while (title := DEFAULT_MODEL if number == 1 else f"{DEFAULT_MODEL} {number}") in titles:
        number += 1
    return title


def is_address_title(title: str) -> bool:
    """Whether a title is the address-named one earlier versions gave a nameless clock."""
    return _ADDRESS_TITLE.fullmatch(title) is not None
