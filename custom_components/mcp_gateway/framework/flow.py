"""What the backends' config flow mixins share.

A connection test raises `FormError`, whose key is the error its form shows; `connection_test`
reads MCP failures the same way for every backend (a backend names only where it differs), and
`async_check` turns a failed test into the form's errors. `BackendFlowMixin` holds the steps'
common endings: storing a reauth or reconfigure only while it still reaches the same device.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
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
from homeassistant.helpers.typing import UNDEFINED, UndefinedType
import voluptuous as vol

from ..mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpRateLimitError,
    McpRpcError,
    McpTimeoutError,
)

_LOGGER = logging.getLogger(__name__)

URL_FIELD = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
SECRET_FIELD = TextSelector(TextSelectorConfig(type=TextSelectorType.PASSWORD))


class FormError(Exception):
    """A form's input or connection test failed; `key` is the form's error."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def connection_error_key(err: McpError) -> str:
    """The form error every backend shows for an MCP failure during a connection test."""
    if isinstance(err, McpAuthError):
        return "invalid_auth"
    if isinstance(err, McpTimeoutError):
        return "timeout"
    if isinstance(err, McpRateLimitError):
        return "rate_limited"
    if isinstance(err, McpConnectionError):
        # A 404/405 means something answers on that address, but no MCP endpoint there.
        return "not_an_mcp_server" if err.status in (404, 405) else "cannot_connect"
    if isinstance(err, McpProtocolError | McpRpcError):
        return "not_an_mcp_server"
    return "cannot_connect"


def _no_special_key(err: McpError) -> str | None:
    return None


@contextmanager
def connection_test(
    what: str, special_key: Callable[[McpError], str | None] = _no_special_key
) -> Iterator[None]:
    """Raise any failure inside as a `FormError`.

    `special_key` gives a backend's own reading of an MCP failure (None: the shared one);
    anything that is not an MCP failure is logged, since no form message can explain it.
    """
    try:
        yield
    except McpError as err:
        _LOGGER.debug("%s connection test failed: %s", what, err)
        raise FormError(special_key(err) or connection_error_key(err)) from err
    except Exception:
        _LOGGER.exception("Unexpected error testing the %s connection", what)
        raise FormError("unknown") from None


async def async_check[T](errors: dict[str, str], check: Awaitable[T]) -> T | None:
    """What a check returns; None when it fails, with its error put into `errors`."""
    try:
        return await check
    except FormError as err:
        errors["base"] = err.key
        return None


def seconds_field(minimum: int, maximum: int) -> NumberSelector:
    """A box for a whole number of seconds (poll intervals)."""
    return NumberSelector(
        NumberSelectorConfig(
            min=minimum,
            max=maximum,
            step=1,
            unit_of_measurement="s",
            mode=NumberSelectorMode.BOX,
        )
    )


class BackendFlowMixin(ConfigFlow):
    """Step endings the backends' flow mixins share."""

    async def _async_update_same_device(
        self,
        entry: ConfigEntry,
        device_id: str,
        *,
        data: Mapping[str, Any] | UndefinedType = UNDEFINED,
        data_updates: Mapping[str, Any] | UndefinedType = UNDEFINED,
    ) -> ConfigFlowResult:
        """Store a reauth's or reconfigure's new data, unless it now reaches another device."""
        await self.async_set_unique_id(device_id)
        self._abort_if_unique_id_mismatch(reason="unique_id_mismatch")
        return self.async_update_reload_and_abort(entry, data=data, data_updates=data_updates)

    def _async_show_reauth_form(
        self, step_id: str, data_schema: vol.Schema, errors: dict[str, str]
    ) -> ConfigFlowResult:
        """The credential form of a reauth, naming the entry it is for."""
        return self.async_show_form(
            step_id=step_id,
            data_schema=data_schema,
            description_placeholders={"name": self._get_reauth_entry().title},
            errors=errors,
        )
