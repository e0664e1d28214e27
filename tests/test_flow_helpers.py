"""The config flow helpers the backends share: how a failed connection test reads in a form."""

from __future__ import annotations

from collections.abc import Callable
import logging

import pytest

from custom_components.mcp_gateway.framework.flow import (
    FormError,
    async_check,
    connection_error_key,
    connection_test,
)
from custom_components.mcp_gateway.mcp.errors import (
    McpError,
)
from tests.flow_failures import (
    AUTH,
    NOT_ALLOWED,
    NOT_FOUND,
    PROTOCOL,
    RATE,
    REFUSED,
    RPC,
    SERVER_ERROR,
    TIMEOUT,
    TOOL,
    assert_form_error,
)


def _shared(err: McpError) -> str | None:
    return None


@pytest.mark.parametrize(
    ("special", "raised", "key"),
    [
        # The shared reading (a backend's own, in tests/<kind>/test_flow_errors.py, starts
        # from it).
        (_shared, AUTH, "invalid_auth"),
        (_shared, TIMEOUT, "timeout"),
        (_shared, REFUSED, "cannot_connect"),
        (_shared, NOT_FOUND, "not_an_mcp_server"),
        (_shared, NOT_ALLOWED, "not_an_mcp_server"),
        (_shared, SERVER_ERROR, "cannot_connect"),
        (_shared, RATE, "rate_limited"),
        (_shared, PROTOCOL, "not_an_mcp_server"),
        (_shared, RPC, "not_an_mcp_server"),
        (_shared, TOOL, "cannot_connect"),
    ],
)
def test_mcp_failures_read_as_form_errors(
    special: Callable[[McpError], str | None], raised: McpError, key: str
) -> None:
    """Each MCP failure becomes the shared form error, chained to the cause."""
    assert_form_error(special, raised, key)


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
