"""MCP failures as a connection test meets them, and how one reads in a form.

Shared by the flow helpers' test and each backend's own reading of them (`tests/<kind>/`).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from custom_components.mcp_gateway.framework.flow import FormError, connection_test
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

AUTH = McpAuthError("HTTP 401", status=401)
AUTH_BASIC = McpAuthError("HTTP 401", status=401, challenge='Basic realm="x"')
AUTH_DIGEST = McpAuthError("HTTP 401", status=401, challenge='Digest realm="x", nonce="n"')
FORBIDDEN = McpAuthError("HTTP 403", status=403)
TIMEOUT = McpTimeoutError("no answer in time")
REFUSED = McpConnectionError("ClientConnectorError")
NOT_FOUND = McpConnectionError("HTTP 404", status=404)
NOT_ALLOWED = McpConnectionError("HTTP 405", status=405)
SERVER_ERROR = McpConnectionError("HTTP 503", status=503)
RATE = McpRateLimitError("HTTP 429", retry_after=3.0)
PROTOCOL = McpProtocolError("malformed JSON")
RPC = McpRpcError(-32601, "Method not found")
TOOL = McpToolError("relay offline")


def assert_form_error(
    special: Callable[[McpError], str | None], raised: Exception, key: str
) -> None:
    """`raised` in a connection test with the backend's `special` reading becomes the form
    error `key`, chained to the cause."""
    with pytest.raises(FormError) as err, connection_test("Test", special):
        raise raised
    assert err.value.key == key
    assert err.value.__cause__ is raised
