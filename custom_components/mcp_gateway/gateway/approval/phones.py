"""Which sign-ins and phones are a person's, as opposed to the AI app's.

An AI app holds a Home Assistant token: a long-lived access token, or an OAuth sign-in it
used to call the gateway. Whatever holds that token (a model making its own HTTP calls, say)
can do what the token's user can: fire events, run a repair flow, register a "phone" with the
mobile app. None of that may count as a person's approval. So:

- a sign-in answers for a person only when it is neither long-lived nor one that has called
  the gateway (`machine_token`);
- a phone asks and answers only when an administrator picked it in the gateway settings, and
  the mobile app did not register it with such a token. The mobile app keeps no record of the
  token that registered a device, so the gateway notes it as the registration happens (the
  registration's config flow runs inside the app's HTTP request) and keeps the note in
  `.storage`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypedDict

from homeassistant.auth.models import TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN, User
from homeassistant.components.http.const import KEY_HASS_REFRESH_TOKEN_ID, KEY_HASS_USER
from homeassistant.config_entries import SIGNAL_CONFIG_ENTRY_CHANGED, ConfigEntry, ConfigEntryChange
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers.dispatcher import async_dispatcher_connect
from homeassistant.helpers.http import current_request
from homeassistant.helpers.storage import Store
from homeassistant.util import slugify
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN
from .manager import approval_manager

MOBILE_APP: Final = "mobile_app"
STORAGE_KEY: Final = f"{DOMAIN}.phone_registrations"
STORAGE_VERSION: Final = 1
DATA_REGISTRATIONS: HassKey[PhoneRegistrations] = HassKey(f"{DOMAIN}_phone_registrations")


def machine_token(hass: HomeAssistant, token_id: str | None) -> bool:
    """Whether a refresh token is the AI app's kind: long-lived, or one that has called the
    gateway since Home Assistant started. A token id that no longer exists counts as one."""
    if not token_id:
        return False
    token = hass.auth.async_get_refresh_token(token_id)
    return (
        token is None
        or token.token_type == TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN
        or approval_manager(hass).is_caller_token(token_id)
    )


@callback
def request_by_machine(hass: HomeAssistant) -> bool:
    """Whether the HTTP request being served (if any) is signed in with the AI app's kind of
    token (see machine_token)."""
    request = current_request.get()
    if request is None:
        return False
    return machine_token(hass, request.get(KEY_HASS_REFRESH_TOKEN_ID))


@callback
def signed_in_person(hass: HomeAssistant) -> User | None:
    """The user of the page being served, when a person's sign-in sends it: None outside an
    HTTP request, without a sign-in, or with the AI app's kind of token."""
    request = current_request.get()
    if request is None:
        return None
    user = request.get(KEY_HASS_USER)
    token_id = request.get(KEY_HASS_REFRESH_TOKEN_ID)
    if not isinstance(user, User) or not token_id or machine_token(hass, token_id):
        return None
    return user


class _Registration(TypedDict):
    token_id: str | None
    long_lived: bool


@dataclass(slots=True)
class PhoneRegistrations:
    """The token each mobile app device was registered with, noted as it registers."""

    store: Store[dict[str, _Registration]]
    by_entry: dict[str, _Registration]

    def registered_by_machine(self, hass: HomeAssistant, entry_id: str) -> bool:
        """Whether the AI app's kind of token registered this device."""
        found = self.by_entry.get(entry_id)
        if found is None:  # registered before the gateway noted registrations
            return False
        return found["long_lived"] or machine_token(hass, found["token_id"])

    @callback
    def note(self, entry_id: str, token_id: str | None, long_lived: bool) -> None:
        self.by_entry[entry_id] = {"token_id": token_id, "long_lived": long_lived}
        self.store.async_delay_save(lambda: self.by_entry, 1)

    @callback
    def forget(self, entry_id: str) -> None:
        if self.by_entry.pop(entry_id, None) is not None:
            self.store.async_delay_save(lambda: self.by_entry, 1)


async def async_setup_registrations(hass: HomeAssistant) -> None:
    """Load the notes and note each device the mobile app registers from now on."""
    if DATA_REGISTRATIONS in hass.data:
        return
    store: Store[dict[str, _Registration]] = Store(hass, STORAGE_VERSION, STORAGE_KEY)
    stored = await store.async_load()
    if DATA_REGISTRATIONS in hass.data:  # set up meanwhile
        return
    registrations = hass.data[DATA_REGISTRATIONS] = PhoneRegistrations(
        store, dict(stored) if isinstance(stored, Mapping) else {}
    )

    @callback
    def _changed(change: ConfigEntryChange, entry: ConfigEntry) -> None:
        if entry.domain != MOBILE_APP:
            return
        if change is ConfigEntryChange.REMOVED:
            registrations.forget(entry.entry_id)
            return
        if change is not ConfigEntryChange.ADDED:
            return
        # The registration's flow runs inside the app's POST /api/mobile_app/registrations:
        # its token is the request's.
        request = current_request.get()
        token_id = None if request is None else request.get(KEY_HASS_REFRESH_TOKEN_ID)
        token = hass.auth.async_get_refresh_token(token_id) if token_id else None
        registrations.note(
            entry.entry_id,
            token_id,
            token is not None and token.token_type == TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN,
        )

    async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, _changed)


def registered_by_machine(hass: HomeAssistant, entry_id: str) -> bool:
    """Whether the AI app's kind of token registered this mobile app device; True while the
    notes are not loaded yet (nothing is asked on a phone not known to be a person's)."""
    registrations = hass.data.get(DATA_REGISTRATIONS)
    return registrations is None or registrations.registered_by_machine(hass, entry_id)


def notify_service(entry: ConfigEntry) -> str:
    """The notify service the mobile app made for a device."""
    return f"{MOBILE_APP}_{slugify(str(entry.data.get('device_name', '')))}"


async def async_pickable_phones(hass: HomeAssistant) -> list[tuple[str, str]]:
    """The devices an administrator may pick to be asked (entry id, "device (user)"): every
    mobile app device, save those the AI app's kind of token registered."""
    phones: list[tuple[str, str]] = []
    for entry in hass.config_entries.async_entries(MOBILE_APP):
        if registered_by_machine(hass, entry.entry_id):
            continue
        user_id = entry.data.get("user_id")
        user = await hass.auth.async_get_user(user_id) if isinstance(user_id, str) else None
        owner = (user.name or user.id) if user is not None else "?"
        phones.append((entry.entry_id, f"{entry.title or entry.data.get('device_name')} ({owner})"))
    return sorted(phones, key=lambda item: item[1].casefold())
