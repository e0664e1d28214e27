"""How a failed connection test to a clock reads in the config flow's form."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from custom_components.mcp_gateway.backends.robine_wake.config_flow import _robine_key
from custom_components.mcp_gateway.mcp.errors import McpError
from tests.flow_failures import (
    AUTH,
    AUTH_BASIC,
    AUTH_DIGEST,
    FORBIDDEN,
    NOT_FOUND,
    TOOL,
    assert_form_error,
)


@pytest.mark.parametrize(
    ("special", "raised", "key"),
    [
        # Robine Wake: a tool failure has its own message.
        (_robine_key, TOOL, "not_robine_wake"),
        (_robine_key, NOT_FOUND, "not_an_mcp_server"),
        # ... and so has a 401 that asks for a scheme it cannot send (none is one of them).
        (_robine_key, AUTH_BASIC, "invalid_auth"),
        (_robine_key, AUTH_DIGEST, "unsupported_auth"),
        (_robine_key, AUTH, "unsupported_auth"),
        (_robine_key, FORBIDDEN, "invalid_auth"),
    ],
)
def test_mcp_failures_read_as_form_errors(
    special: Callable[[McpError], str | None], raised: McpError, key: str
) -> None:
    """Each MCP failure becomes the form error the clock's flow shows, chained to the cause."""
    assert_form_error(special, raised, key)
