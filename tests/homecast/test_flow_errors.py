"""How a failed connection test to Homecast reads in the config flow's form."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from custom_components.mcp_gateway.backends.homecast.api import HomecastReplyError
from custom_components.mcp_gateway.backends.homecast.config_flow import _homecast_key
from custom_components.mcp_gateway.mcp.errors import McpError
from tests.flow_failures import (
    AUTH,
    NOT_FOUND,
    PROTOCOL,
    RATE,
    SERVER_ERROR,
    TIMEOUT,
    TOOL,
    assert_form_error,
)


@pytest.mark.parametrize(
    ("special", "raised", "key"),
    [
        # Homecast: any HTTP failure but a 429 or a timeout is unreachable.
        (_homecast_key, NOT_FOUND, "cannot_connect"),
        (_homecast_key, SERVER_ERROR, "cannot_connect"),
        (_homecast_key, TIMEOUT, "timeout"),
        (_homecast_key, RATE, "rate_limited"),
        (_homecast_key, HomecastReplyError("no _homes"), "not_homecast"),
        (_homecast_key, PROTOCOL, "not_an_mcp_server"),
        (_homecast_key, TOOL, "cannot_connect"),
        (_homecast_key, AUTH, "invalid_auth"),
    ],
)
def test_mcp_failures_read_as_form_errors(
    special: Callable[[McpError], str | None], raised: Exception, key: str
) -> None:
    """Each MCP failure becomes the form error Homecast's flow shows, chained to the cause."""
    assert_form_error(special, raised, key)
