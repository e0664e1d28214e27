"""Config flow steps of the Robine Wake backend (a mixin of the integration's flow class).

The user gives the clock's address; the admin password is asked for only when the clock answers
401. Every step tests the connection with get_state, and the entry's unique id is the clock's own
id (get_state's `device.id`, else serverInfo's), so reauth and reconfigure can tell when an
address now points at a different clock.
"""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.config_entries import ConfigEntry, ConfigFlow, ConfigFlowResult
from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import voluptuous as vol
from yarl import URL

from ...const import BACKEND_ROBINE_WAKE, CONF_BACKEND
from ...mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpProtocolError,
    McpRateLimitError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
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

_LOGGER = logging.getLogger(__name__)

_URL_FIELD = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
_PASSWORD_FIELD = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))


class _ProbeError(Exception):
    """A connection test failed; `key` is the form error."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


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


async def _probe(flow: ConfigFlow, url: str, password: str | None) -> DeviceIdentity:
    """Read get_state; return the clock's identity or raise McpAuthError / _ProbeError."""
    client = make_client(flow.hass, url, password)
    try:
        identity = await RobineWakeApi(client).identity()
    except McpAuthError:
        raise
    except McpTimeoutError as err:
        raise _ProbeError("timeout") from err
    except McpRateLimitError as err:
        raise _ProbeError("rate_limited") from err
    except McpConnectionError as err:
        # A 404/405 means something answers on that address, but no MCP endpoint there.
        key = "not_an_mcp_server" if err.status in (404, 405) else "cannot_connect"
        raise _ProbeError(key) from err
    except (McpProtocolError, McpRpcError) as err:
        raise _ProbeError("not_an_mcp_server") from err
    except McpToolError as err:
        raise _ProbeError("not_robine_wake") from err
    except Exception:
        _LOGGER.exception("Unexpected error testing the Robine Wake connection")
        raise _ProbeError("unknown") from None
    finally:
        await client.close()
    if identity is None:
        raise _ProbeError("not_robine_wake")
    return identity


class RobineWakeFlowMixin(ConfigFlow):
    """Steps: robine_wake, robine_wake_password, robine_wake_reauth(_confirm), _reconfigure."""

    _rw_url: str | None = None

    async def async_step_robine_wake(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the clock's address."""
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                url = normalize_url(user_input[CONF_URL])
            except ValueError:
                errors[CONF_URL] = "invalid_url"
            else:
                try:
                    identity = await _probe(self, url, None)
                except McpAuthError:
                    self._rw_url = url
                    return await self.async_step_robine_wake_password()
                except _ProbeError as err:
                    errors["base"] = err.key
                else:
                    return await self._rw_create(url, None, identity)
        return self.async_show_form(
            step_id="robine_wake",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema({vol.Required(CONF_URL): _URL_FIELD}), user_input
            ),
            errors=errors,
        )

    async def async_step_robine_wake_password(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The clock answered 401: ask for its admin password."""
        assert self._rw_url is not None
        errors: dict[str, str] = {}
        if user_input is not None:
            password = user_input[CONF_PASSWORD]
            try:
                identity = await _probe(self, self._rw_url, password)
            except McpAuthError:
                errors["base"] = "invalid_auth"
            except _ProbeError as err:
                errors["base"] = err.key
            else:
                return await self._rw_create(self._rw_url, password, identity)
        return self.async_show_form(
            step_id="robine_wake_password",
            data_schema=vol.Schema({vol.Required(CONF_PASSWORD): _PASSWORD_FIELD}),
            description_placeholders={"url": self._rw_url},
            errors=errors,
        )

    async def _rw_create(
        self, url: str, password: str | None, identity: DeviceIdentity
    ) -> ConfigFlowResult:
        await self.async_set_unique_id(identity.id)
        # The same clock under a new address (DHCP): follow it instead of adding it twice.
        self._abort_if_unique_id_configured(updates={CONF_URL: url})
        data: dict[str, Any] = {CONF_BACKEND: BACKEND_ROBINE_WAKE, CONF_URL: url}
        if password:
            data[CONF_PASSWORD] = password
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
            try:
                identity = await _probe(self, entry.data[CONF_URL], password)
            except McpAuthError:
                errors["base"] = "invalid_auth"
            except _ProbeError as err:
                errors["base"] = err.key
            else:
                await self.async_set_unique_id(identity.id)
                self._abort_if_unique_id_mismatch(reason="unique_id_mismatch")
                data = {k: v for k, v in entry.data.items() if k != CONF_PASSWORD}
                if password:
                    data[CONF_PASSWORD] = password
                return self.async_update_reload_and_abort(entry, data=data)
        return self.async_show_form(
            step_id="robine_wake_reauth_confirm",
            data_schema=vol.Schema({vol.Optional(CONF_PASSWORD): _PASSWORD_FIELD}),
            description_placeholders={"name": entry.title},
            errors=errors,
        )

    # --- reconfigure -----------------------------------------------------------------------

    async def async_step_robine_wake_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A new address (and password) for the same clock."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            password = user_input.get(CONF_PASSWORD) or entry.data.get(CONF_PASSWORD)
            try:
                url = normalize_url(user_input[CONF_URL])
            except ValueError:
                errors[CONF_URL] = "invalid_url"
            else:
                try:
                    identity = await _probe(self, url, password)
                except McpAuthError:
                    errors["base"] = "invalid_auth"
                except _ProbeError as err:
                    errors["base"] = err.key
                else:
                    await self.async_set_unique_id(identity.id)
                    self._abort_if_unique_id_mismatch(reason="unique_id_mismatch")
                    data: dict[str, Any] = {**entry.data, CONF_URL: url}
                    if password:
                        data[CONF_PASSWORD] = password
                    return self.async_update_reload_and_abort(entry, data=data)
        return self.async_show_form(
            step_id="robine_wake_reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                vol.Schema(
                    {
                        vol.Required(CONF_URL): _URL_FIELD,
                        vol.Optional(CONF_PASSWORD): _PASSWORD_FIELD,
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
        ): NumberSelector(
            NumberSelectorConfig(
                min=MIN_POLL_INTERVAL,
                max=MAX_POLL_INTERVAL,
                step=1,
                unit_of_measurement="s",
                mode=NumberSelectorMode.BOX,
            )
        ),
    }
