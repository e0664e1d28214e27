"""Which sign-ins and phones are a person's, as opposed to the AI app's.

An AI app holds a Home Assistant token: a long-lived access token, or an OAuth sign-in it
used to call the gateway. Whatever holds that token (a model making its own HTTP calls, say)
can do what the token's user can: fire events, run a repair flow, register a "phone" with the
mobile app. None of that may count as a person's approval. So:

- a sign-in answers for a person only when it is neither long-lived nor one that has called
  the gateway (`machine_token`); the sign-ins that have are noted in `.storage`, so a restart
  does not make the AI app's sign-in a person's again;
- a phone asks and answers only when an administrator picked it in the gateway settings, and
  the mobile app did not register it with such a token. The mobile app keeps no record of the
  token that registered a device, so the gateway notes it as the registration happens (the
  registration's config flow runs inside the app's HTTP request), in `.storage` too.
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
STORAGE_KEY: Final = f"{DOMAIN}.sign_ins"
STORAGE_VERSION: Final = 1
DATA_SIGN_INS: HassKey[SignIns] = HassKey(f"{DOMAIN}_sign_ins")


def machine_token(hass: HomeAssistant, token_id: str | None) -> bool:
    """Whether a refresh token is the AI app's kind: long-lived, or one that has called the
    gateway (even if it has been deleted since: a device it registered keeps its webhook)."""
    if not token_id:
        return False
    token = hass.auth.async_get_refresh_token(token_id)
    sign_ins = hass.data.get(DATA_SIGN_INS)
    return (
        (token is not None and token.token_type == TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN)
        or approval_manager(hass).is_caller_token(token_id)
        or (sign_ins is not None and token_id in sign_ins.callers)
    )


@callback
def note_caller_token(hass: HomeAssistant, token_id: str | None) -> None:
    """Remember a refresh token that called the gateway, beyond a restart too."""
    approval_manager(hass).note_caller_token(token_id)
    if token_id and (sign_ins := hass.data.get(DATA_SIGN_INS)) is not None:
        sign_ins.note_caller(token_id)


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


class _Stored(TypedDict):
    registrations: dict[str, _Registration]
    callers: list[str]


@dataclass(slots=True)
class SignIns:
    """The sign-ins that have called the gateway, and the token each mobile app device was
    registered with, noted as it registered."""

    store: Store[_Stored]
    registrations: dict[str, _Registration]
    callers: set[str]

    def registered_by_machine(self, hass: HomeAssistant, entry_id: str) -> bool:
        """Whether the AI app's kind of token registered this device."""
        found = self.registrations.get(entry_id)
        if found is None:  # registered before the gateway noted registrations
            return False
        return found["long_lived"] or machine_token(hass, found["token_id"])

    @callback
    def note_caller(self, token_id: str) -> None:
        """Note a sign-in that called the gateway."""
        if token_id not in self.callers:
            self.callers.add(token_id)
            self._save()

    @callback
    def note_registration(self, entry_id: str, token_id: str | None, long_lived: bool) -> None:
        """Note the token a device was registered with."""
        self.registrations[entry_id] = {"token_id": token_id, "long_lived": long_lived}
        self._save()

    @callback
    def forget_registration(self, entry_id: str) -> None:
        """Forget a device the mobile app removed."""
        if self.registrations.pop(entry_id, None) is not None:
            self._save()

    @callback
    def _save(self) -> None:
        self.store.async_delay_save(
            lambda: {"registrations": self.registrations, "callers": sorted(self.callers)}, 1
        )


async def async_setup_sign_ins(hass: HomeAssistant) -> None:
    """Load the notes, and note each device the mobile app registers from now on."""
    if DATA_SIGN_INS in hass.data:
        return
    store: Store[_Stored] = Store(hass, STORAGE_VERSION, STORAGE_KEY)
    stored = await store.async_load()
    if DATA_SIGN_INS in hass.data:  # set up meanwhile
        return
    registrations = stored.get("registrations") if isinstance(stored, Mapping) else None
    callers = stored.get("callers") if isinstance(stored, Mapping) else None
    if not isinstance(callers, list):
        callers = []
    sign_ins = hass.data[DATA_SIGN_INS] = SignIns(
        store,
        dict(registrations) if isinstance(registrations, Mapping) else {},
        {token_id for token_id in (callers or ()) if isinstance(token_id, str)},
    )
    # What called the gateway before the notes were loaded.
    for token_id in approval_manager(hass).caller_tokens():
        sign_ins.note_caller(token_id)

    @callback
    def _changed(change: ConfigEntryChange, entry: ConfigEntry) -> None:
        if entry.domain != MOBILE_APP:
            return
        if change is ConfigEntryChange.REMOVED:
            sign_ins.forget_registration(entry.entry_id)
            return
        if change is not ConfigEntryChange.ADDED:
            return
        # The registration's flow runs inside the app's POST /api/mobile_app/registrations:
        # its token is the request's.
        request = current_request.get()
        token_id = None if request is None else request.get(KEY_HASS_REFRESH_TOKEN_ID)
        token = hass.auth.async_get_refresh_token(token_id) if token_id else None
        sign_ins.note_registration(
            entry.entry_id,
            token_id,
            token is not None and token.token_type == TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN,
        )

    async_dispatcher_connect(hass, SIGNAL_CONFIG_ENTRY_CHANGED, _changed)


def registered_by_machine(hass: HomeAssistant, entry_id: str) -> bool:
    """Whether the AI app's kind of token registered this mobile app device; True while the
    notes are not loaded yet (nothing is asked on a phone not known to be a person's)."""
    sign_ins = hass.data.get(DATA_SIGN_INS)
    return sign_ins is None or sign_ins.registered_by_machine(hass, entry_id)


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
        name = entry.title or entry.data.get("device_name")
        phones.append((entry.entry_id, f"{name} ({owner})"))
    return sorted(phones, key=lambda item: item[1].casefold())
