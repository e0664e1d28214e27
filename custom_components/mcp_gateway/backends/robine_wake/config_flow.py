"""Config flow steps of the Robine Wake backend (a mixin of the integration's flow class).

The user gives the clock's address; credentials are asked for only when the clock answers 401,
in the scheme its WWW-Authenticate names (Basic or Bearer: 50-002 names none). Every step tests the
connection: the tool list recognises a Robine Wake (50-002's ten tools), get_state reads it. The
entry's unique id is the clock's own id when it names one (`device.id`, beyond the spec), else its
address, so reauth and reconfigure can tell when an address now points at a different clock, and
an address-identified clock that moved is followed by reconfigure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from homeassistant.config_entries import ConfigEntry, ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
import voluptuous as vol
from yarl import URL

from ...core.const import CONF_BACKEND, DOMAIN
from ...framework.entity import entry_uid
from ...framework.flow import (
    SECRET_FIELD,
    URL_FIELD,
    BackendFlowMixin,
    FormError,
    async_check,
    connection_test,
    seconds_field,
)
from ...mcp.errors import McpAuthError, McpError, McpToolError
from . import model
from .api import RobineWakeApi
from .const import (
    CONF_AUTH_SCHEME,
    CONF_PASSWORD,
    CONF_SCAN_INTERVAL,
    CONF_URL,
    DEFAULT_SCAN_INTERVAL,
    KIND,
    MAX_SCAN_INTERVAL,
    MIN_SCAN_INTERVAL,
    address_uid,
    is_address_uid,
    unnamed_title,
)
from .model import DEFAULT_PATH, AuthScheme
from .runtime import entry_scheme, make_client

# How the password step names the scheme the clock asked for.
_SCHEME_NAMES = {AuthScheme.BASIC: "HTTP Basic, user admin", AuthScheme.BEARER: "Bearer token"}


def normalize_url(raw: str) -> str:
    """`192.168.1.20`, `clock.local:8080` or a full URL → `http://host[:port]/mcp`.

    The clock serves plain HTTP on its LAN listener (50-002), so http is the default scheme;
    an address without a path gets the spec's /mcp.
    """
    text = raw.strip()
    if "://" not in text:
        text = f"http://{text}"
    url = URL(text)
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(raw)
    if url.path in ("", "/"):
        url = url.with_path(DEFAULT_PATH)
    return str(url.with_query(None).with_fragment(None))


def _normalized_url(raw: str, errors: dict[str, str]) -> str | None:
    """The normalized address; None with the address field's error when it is not one."""
    try:
        return normalize_url(raw)
    except ValueError:
        errors[CONF_URL] = "invalid_url"
        return None


def _robine_key(err: McpError) -> str | None:
    """Where a failed probe reads differently from the shared connection errors."""
    if isinstance(err, McpToolError):
        return "not_robine_wake"
    if (
        isinstance(err, McpAuthError)
        and err.status == 401
        and model.requested_scheme(err.challenge) is None
    ):
        return "unsupported_auth"
    return None


@dataclass(frozen=True, slots=True)
class _Clock:
    """What a connection test learnt about the clock at an address."""

    device_id: str | None  # only when the clock names itself (beyond 50-002)
    name: str | None


async def _probe(
    hass: HomeAssistant, url: str, secret: str | None, scheme: AuthScheme | None
) -> _Clock:
    """Recognise the clock by its tools and read get_state; raise FormError."""
    client = make_client(hass, url, secret, scheme)
    try:
        with connection_test("Robine Wake", _robine_key):
            recognised = model.offers_spec_tools(await client.list_tools())
            identity = await RobineWakeApi(client).identity() if recognised else None
    finally:
        await client.close()
    if not recognised:
        raise FormError("not_robine_wake")
    if identity is None:
        return _Clock(device_id=None, name=None)
    return _Clock(device_id=identity.id, name=identity.name)


def _asked_scheme(err: FormError) -> AuthScheme | None:
    """The scheme a clock's 401 asked for, when that is what failed the probe."""
    cause = err.__cause__
    if isinstance(cause, McpAuthError) and cause.status == 401:
        return model.requested_scheme(cause.challenge)
    return None


async def _probe_with(
    hass: HomeAssistant, url: str, secret: str | None, scheme: AuthScheme
) -> tuple[_Clock, AuthScheme]:
    """Probe with a secret; a clock that asks for another scheme than `scheme` gets that one."""
    try:
        return await _probe(hass, url, secret, scheme), scheme
    except FormError as err:
        asked = _asked_scheme(err)
        if not secret or asked is None or asked is scheme:
            raise
    return await _probe(hass, url, secret, asked), asked


def _with_credentials(
    data: Mapping[str, Any], secret: str | None, scheme: AuthScheme
) -> dict[str, Any]:
    """Entry data with this admin secret and its scheme, or with none (the clock has none)."""
    kept = {k: v for k, v in data.items() if k not in (CONF_PASSWORD, CONF_AUTH_SCHEME)}
    if secret:
        kept[CONF_PASSWORD] = secret
        kept[CONF_AUTH_SCHEME] = str(scheme)
    return kept


def _move_unique_ids(hass: HomeAssistant, entry: ConfigEntry, new_uid: str) -> None:
    """Carry the entry's entities and device over to a new unique id (a moved clock)."""
    old = f"{entry_uid(entry)}_"
    entities = er.async_get(hass)
    for entity in er.async_entries_for_config_entry(entities, entry.entry_id):
        if entity.unique_id.startswith(old):
            entities.async_update_entity(
                entity.entity_id,
                new_unique_id=f"{new_uid}_{entity.unique_id.removeprefix(old)}",
            )
    devices = dr.async_get(hass)
    for device in dr.async_entries_for_config_entry(devices, entry.entry_id):
        identifiers = {
            (domain, f"{new_uid}_{ident.removeprefix(old)}")
            if domain == DOMAIN and ident.startswith(old)
            else (domain, ident)
            for domain, ident in device.identifiers
        }
        if identifiers != device.identifiers:
            devices.async_update_device(device.id, new_identifiers=identifiers)


# The example address of the URL hint: hassfest refuses URLs inside translations.
_URL_HINTS: dict[str, str] = {"example_url": "http://clock.local:8080"}


class RobineWakeFlowMixin(BackendFlowMixin):
    """Steps: robine_wake, robine_wake_password, robine_wake_reauth(_confirm), _reconfigure."""

    _rw_url: str | None = None
    _rw_scheme: AuthScheme = AuthScheme.BASIC

    async def async_step_robine_wake(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the clock's address."""
        errors: dict[str, str] = {}
        if user_input is not None and (url := _normalized_url(user_input[CONF_URL], errors)):
            try:
                clock = await _probe(self.hass, url, None, None)
            except FormError as err:
                errors["base"] = err.key
                if (asked := _asked_scheme(err)) is not None:
                    # The clock has admin credentials: ask for them, in its scheme.
                    self._rw_url = url
                    self._rw_scheme = asked
                    return await self.async_step_robine_wake_password()
            else:
                return await self._rw_create(url, None, AuthScheme.BASIC, clock)
        return self.async_show_form(
            step_id="robine_wake",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema({vol.Required(CONF_URL): URL_FIELD}), user_input
            ),
            errors=errors,
            description_placeholders=_URL_HINTS,
        )

    async def async_step_robine_wake_password(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The clock answered 401: ask for its admin password (or token)."""
        assert self._rw_url is not None
        errors: dict[str, str] = {}
        if user_input is not None:
            secret = user_input[CONF_PASSWORD]
            probed = await async_check(
                errors, _probe_with(self.hass, self._rw_url, secret, self._rw_scheme)
            )
            if probed is not None:
                clock, self._rw_scheme = probed
                return await self._rw_create(self._rw_url, secret, self._rw_scheme, clock)
        return self.async_show_form(
            step_id="robine_wake_password",
            data_schema=vol.Schema({vol.Required(CONF_PASSWORD): SECRET_FIELD}),
            description_placeholders={
                "url": self._rw_url,
                "scheme": _SCHEME_NAMES[self._rw_scheme],
            },
            errors=errors,
        )

    async def _rw_create(
        self, url: str, secret: str | None, scheme: AuthScheme, clock: _Clock
    ) -> ConfigFlowResult:
        if clock.device_id is not None:
            await self.async_set_unique_id(clock.device_id)
            # The same clock under a new address (DHCP): follow it instead of adding it twice.
            self._abort_if_unique_id_configured(updates={CONF_URL: url})
        else:
            await self.async_set_unique_id(address_uid(url))
            self._abort_if_unique_id_configured()
        data = _with_credentials({CONF_BACKEND: KIND, CONF_URL: url}, secret, scheme)
        return self.async_create_entry(title=clock.name or self._unnamed_title(), data=data)

    def _unnamed_title(self) -> str:
        return unnamed_title(
            entry.title for entry in self._async_current_entries(include_ignore=False)
        )

    async def _rw_update(
        self, entry: ConfigEntry, url: str, clock: _Clock, data: Mapping[str, Any]
    ) -> ConfigFlowResult:
        """Store a reauth's or reconfigure's result, unless the address now reaches another clock.

        An entry identified by address follows its clock to the new address: there is no id
        to compare, the user's word is all there is. An entry with a device id compares it
        when the clock still names one.
        """
        if is_address_uid(entry.unique_id):
            new_uid = address_uid(url)
            if new_uid != entry.unique_id:
                other = self.hass.config_entries.async_entry_for_domain_unique_id(DOMAIN, new_uid)
                if other is not None:
                    return self.async_abort(reason="already_configured")
                _move_unique_ids(self.hass, entry, new_uid)
                return self.async_update_reload_and_abort(entry, unique_id=new_uid, data=data)
            return self.async_update_reload_and_abort(entry, data=data)
        if clock.device_id is None or entry.unique_id is None:
            return self.async_update_reload_and_abort(entry, data=data)
        return await self._async_update_same_device(entry, clock.device_id, data=data)

    # --- reauth ----------------------------------------------------------------------------

    async def async_step_robine_wake_reauth(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The clock refused the stored credentials (or started wanting some)."""
        return await self.async_step_robine_wake_reauth_confirm()

    async def async_step_robine_wake_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the admin password or token (empty: the clock no longer has one)."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            secret = user_input.get(CONF_PASSWORD) or None
            url = entry.data[CONF_URL]
            probed = await async_check(
                errors, _probe_with(self.hass, url, secret, entry_scheme(entry.data))
            )
            if probed is not None:
                clock, scheme = probed
                data = _with_credentials(entry.data, secret, scheme)
                return await self._rw_update(entry, url, clock, data)
        return self._async_show_reauth_form(
            "robine_wake_reauth_confirm",
            vol.Schema({vol.Optional(CONF_PASSWORD): SECRET_FIELD}),
            errors,
        )

    # --- reconfigure -----------------------------------------------------------------------

    async def async_step_robine_wake_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A new address (and credentials) for the same clock."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None and (url := _normalized_url(user_input[CONF_URL], errors)):
            secret = user_input.get(CONF_PASSWORD) or entry.data.get(CONF_PASSWORD)
            probed = await async_check(
                errors, _probe_with(self.hass, url, secret, entry_scheme(entry.data))
            )
            if probed is not None:
                clock, scheme = probed
                data = _with_credentials({**entry.data, CONF_URL: url}, secret, scheme)
                return await self._rw_update(entry, url, clock, data)
        return self.async_show_form(
            step_id="robine_wake_reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema(
                    {
                        vol.Required(CONF_URL): URL_FIELD,
                        vol.Optional(CONF_PASSWORD): SECRET_FIELD,
                    }
                ),
                {CONF_URL: entry.data[CONF_URL]},
            ),
            errors=errors,
        )


def robine_wake_options_schema(entry: ConfigEntry) -> dict[Any, Any]:
    """How often to read the clock: ringing shows within this interval."""
    return {
        vol.Optional(
            CONF_SCAN_INTERVAL,
            default=entry.options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL),
        ): seconds_field(MIN_SCAN_INTERVAL, MAX_SCAN_INTERVAL),
    }
