"""The config flow helpers the backends share: how a failed connection test reads in a form."""

from __future__ import annotations

from collections.abc import Callable
import logging

import pytest

from custom_components.mcp_gateway.backends.flow import (
    FormError,
    async_check,
    connection_error_key,
    connection_test,
)
from custom_components.mcp_gateway.backends.homecast.api import HomecastReplyError
from custom_components.mcp_gateway.backends.homecast.config_flow import _homecast_key
from custom_components.mcp_gateway.backends.robine_wake.config_flow import _robine_key
from custom_components.mcp_gateway.mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpProtocolError,
    McpRateLimitError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
)


def _shared(err: McpError) -> str | None:
    return None


_AUTH = McpAuthError("HTTP 401", status=401)
_AUTH_BASIC = McpAuthError("HTTP 401", status=401, challenge='Basic realm="x"')
_AUTH_DIGEST = McpAuthError("HTTP 401", status=401, challenge='Digest realm="x", nonce="n"')
_FORBIDDEN = McpAuthError("HTTP 403", status=403)
_TIMEOUT = McpTimeoutError("no answer in time")
_REFUSED = McpConnectionError("ClientConnectorError")
_NOT_FOUND = McpConnectionError("HTTP 404", status=404)
_NOT_ALLOWED = McpConnectionError("HTTP 405", status=405)
_SERVER_ERROR = McpConnectionError("HTTP 503", status=503)
_RATE = McpRateLimitError("HTTP 429", retry_after=3.0)
_PROTOCOL = McpProtocolError("malformed JSON")
_RPC = McpRpcError(-32601, "Method not found")
_TOOL = McpToolError("relay offline")


@pytest.mark.parametrize(
    ("special", "raised", "key"),
    [
        # The shared reading (Hubitat's).
        (_shared, _AUTH, "invalid_auth"),
        (_shared, _TIMEOUT, "timeout"),
        (_shared, _REFUSED, "cannot_connect"),
        (_shared, _NOT_FOUND, "not_an_mcp_server"),
        (_shared, _NOT_ALLOWED, "not_an_mcp_server"),
        (_shared, _SERVER_ERROR, "cannot_connect"),
        (_shared, _RATE, "rate_limited"),
        (_shared, _PROTOCOL, "not_an_mcp_server"),
        (_shared, _RPC, "not_an_mcp_server"),
        (_shared, _TOOL, "cannot_connect"),
        # Robine Wake: a tool failure has its own message.
        (_robine_key, _TOOL, "not_robine_wake"),
        (_robine_key, _NOT_FOUND, "not_an_mcp_server"),
        # ... and so has a 401 that asks for a scheme it cannot send (none is one of them).
        (_robine_key, _AUTH_BASIC, "invalid_auth"),
        (_robine_key, _AUTH_DIGEST, "unsupported_auth"),
        (_robine_key, _AUTH, "unsupported_auth"),
        (_robine_key, _FORBIDDEN, "invalid_auth"),
        # Homecast: any HTTP failure but a 429 or a timeout is unreachable.
        (_homecast_key, _NOT_FOUND, "cannot_connect"),
        (_homecast_key, _SERVER_ERROR, "cannot_connect"),
        (_homecast_key, _TIMEOUT, "timeout"),
        (_homecast_key, _RATE, "rate_limited"),
        (_homecast_key, HomecastReplyError("no _homes"), "not_homecast"),
        (_homecast_key, _PROTOCOL, "not_an_mcp_server"),
        (_homecast_key, _TOOL, "cannot_connect"),
        (_homecast_key, _AUTH, "invalid_auth"),
    ],
)
def test_mcp_failures_read_as_form_errors(
    special: Callable[[McpError], str | None], raised: McpError, key: str
) -> None:
    """Each MCP failure becomes the form error its backend shows, chained to the cause."""
    with pytest.raises(FormError) as err, connection_test("Test", special):
        raise raised
    assert err.value.key == key
    assert err.value.__cause__ is raised


def test_shared_key_without_a_test() -> None:
    """The shared reading on its own, for an MCP failure of no more specific kind."""
    assert connection_error_key(McpError("odd")) == "cannot_connect"


def test_surprises_are_logged_as_unknown(caplog: pytest.LogCaptureFixture) -> None:
    """A bug is `unknown` in the form, and its traceback is in the log."""
    with (
        caplog.at_level(logging.ERROR),
        pytest.raises(FormError) as err,
        connection_test("Test"),
    ):
        raise RuntimeError("boom")
    assert err.value.key == "unknown"
    assert err.value.__cause__ is None
    assert "Unexpected error testing the Test connection" in caplog.text
    assert "RuntimeError: boom" in caplog.text


def test_a_passing_test_raises_nothing() -> None:
    """A passing check raises nothing and returns its value."""
    with connection_test("Test"):
        value = 1
    assert value == 1


async def test_async_check_value_or_error() -> None:
    """A check's value, or None with its error under `base`."""

    async def passes() -> str:
        return "hub"

    async def fails() -> str:
        raise FormError("timeout")

    errors: dict[str, str] = {}
    assert await async_check(errors, passes()) == "hub"
    assert errors == {}
    assert await async_check(errors, fails()) is None
    assert errors == {"base": "timeout"}
