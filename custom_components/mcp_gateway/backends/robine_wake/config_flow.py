"""Config flow steps of the Robine Wake backend (a mixin of the integration's flow class).

The user gives the clock's address; the admin password is asked for only when the clock answers
401. Every step tests the connection with get_state, and the entry's unique id is the clock's own
id (get_state's `device.id`, else serverInfo's), so reauth and reconfigure can tell when an
address now points at a different clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.config_entries import ConfigEntry, ConfigFlowResult
from homeassistant.core import HomeAssistant
import voluptuous as vol
from yarl import URL

from ...const import BACKEND_ROBINE_WAKE, CONF_BACKEND
from ...mcp.errors import McpError, McpToolError
from ..flow import (
    SECRET_FIELD,
    URL_FIELD,
    BackendFlowMixin,
    FormError,
    async_check,
    connection_test,
    seconds_field,
)
from .api import RobineWakeApi
from .const import (
    CONF_PASSWORD,
    CONF_POLL_INTERVAL,
    CONF_URL,
    DEFAULT_MODEL,
    DEFAULT_POLL_INTERVAL,
    MAX_POLL_INTERVAL,
    MIN_POLL_INTERVAL,
)
from .model import DEFAULT_PATH, DeviceIdentity
from .runtime import make_client


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
    """Where a failed get_state reads differently from the shared connection errors."""
    if isinstance(err, McpToolError):
        return "not_robine_wake"
    return None


async def _probe(hass: HomeAssistant, url: str, password: str | None) -> DeviceIdentity:
    """Read get_state; return the clock's identity or raise FormError."""
    client = make_client(hass, url, password)
    try:
        with connection_test("Robine Wake", _robine_key):
            identity = await RobineWakeApi(client).identity()
    finally:
        await client.close()
    if identity is None:
        raise FormError("not_robine_wake")
    return identity


def _with_password(data: Mapping[str, Any], password: str | None) -> dict[str, Any]:
    """Entry data with this admin password, or with none (the clock has none)."""
    kept = {key: value for key, value in data.items() if key != CONF_PASSWORD}
    if password:
        kept[CONF_PASSWORD] = password
    return kept


# The example address of the URL hint: hassfest refuses URLs inside translations.
_URL_HINTS: dict[str, str] = {"example_url": "http://clock.local:8080"}


class RobineWakeFlowMixin(BackendFlowMixin):
    """Steps: robine_wake, robine_wake_password, robine_wake_reauth(_confirm), _reconfigure."""

    _rw_url: str | None = None

    async def async_step_robine_wake(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the clock's address."""
        errors: dict[str, str] = {}
        if user_input is not None and (url := _normalized_url(user_input[CONF_URL], errors)):
            identity = await async_check(errors, _probe(self.hass, url, None))
            if identity is not None:
                return await self._rw_create(url, None, identity)
            if errors["base"] == "invalid_auth":
                # The clock has an admin password: ask for it rather than fail.
                self._rw_url = url
                return await self.async_step_robine_wake_password()
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
        """The clock answered 401: ask for its admin password."""
        assert self._rw_url is not None
        errors: dict[str, str] = {}
        if user_input is not None:
            password = user_input[CONF_PASSWORD]
            identity = await async_check(errors, _probe(self.hass, self._rw_url, password))
            if identity is not None:
                return await self._rw_create(self._rw_url, password, identity)
        return self.async_show_form(
            step_id="robine_wake_password",
            data_schema=vol.Schema({vol.Required(CONF_PASSWORD): SECRET_FIELD}),
            description_placeholders={"url": self._rw_url},
            errors=errors,
        )

    async def _rw_create(
        self, url: str, password: str | None, identity: DeviceIdentity
    ) -> ConfigFlowResult:
        await self.async_set_unique_id(identity.id)
        # The same clock under a new address (DHCP): follow it instead of adding it twice.
        self._abort_if_unique_id_configured(updates={CONF_URL: url})
        data = _with_password({CONF_BACKEND: BACKEND_ROBINE_WAKE, CONF_URL: url}, password)
        return self.async_create_entry(title=identity.name or DEFAULT_MODEL, data=data)

    # --- reauth ----------------------------------------------------------------------------

    async def async_step_robine_wake_reauth(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The clock refused the stored credentials (or started wanting some)."""
        return await self.async_step_robine_wake_reauth_confirm()

    async def async_step_robine_wake_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the admin password (empty: the clock no longer has one)."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            password = user_input.get(CONF_PASSWORD) or None
            identity = await async_check(errors, _probe(self.hass, entry.data[CONF_URL], password))
            if identity is not None:
                return await self._async_update_same_device(
                    entry, identity.id, data=_with_password(entry.data, password)
                )
        return self._async_show_reauth_form(
            "robine_wake_reauth_confirm",
            vol.Schema({vol.Optional(CONF_PASSWORD): SECRET_FIELD}),
            errors,
        )

    # --- reconfigure -----------------------------------------------------------------------

    async def async_step_robine_wake_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A new address (and password) for the same clock."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None and (url := _normalized_url(user_input[CONF_URL], errors)):
            password = user_input.get(CONF_PASSWORD) or entry.data.get(CONF_PASSWORD)
            identity = await async_check(errors, _probe(self.hass, url, password))
            if identity is not None:
                return await self._async_update_same_device(
                    entry, identity.id, data=_with_password({**entry.data, CONF_URL: url}, password)
                )
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
            CONF_POLL_INTERVAL,
            default=entry.options.get(CONF_POLL_INTERVAL, DEFAULT_POLL_INTERVAL),
        ): seconds_field(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL),
    }
