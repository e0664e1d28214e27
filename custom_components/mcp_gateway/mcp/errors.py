"""Errors raised by the MCP client. Integrations translate these at one boundary."""

from __future__ import annotations

from typing import Any


class McpError(Exception):
    """Base class for everything the MCP client raises."""


class McpConnectionError(McpError):
    """The server could not be reached, or the transport failed mid-call.

    `status` is the HTTP status when the server did answer (a 5xx, or a 404 for the endpoint).
    `may_have_run` is True when the request may have reached the server before the transport
    failed (a dropped connection, a timeout after connecting): its outcome is unknown, and a
    write may have happened. False means it surely never arrived (no connection was made).
    """

    def __init__(
        self, message: str, *, status: int | None = None, may_have_run: bool = False
    ) -> None:
        super().__init__(message)
        self.status = status
        self.may_have_run = may_have_run


class McpTimeoutError(McpConnectionError):
    """The server did not answer within the call's timeout."""


class McpAuthError(McpError):
    """The server refused our credentials (HTTP 401 or 403).

    `challenge` is the 401's `WWW-Authenticate` header (the scheme the server asks for), if any.
    """

    def __init__(self, message: str, *, status: int, challenge: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.challenge = challenge


class McpRateLimitError(McpError):
    """The server asked us to slow down (HTTP 429)."""

    def __init__(self, message: str, *, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class McpProtocolError(McpError):
    """The reply is not valid MCP: malformed JSON, a missing response, a wrong content type.

    `status` is the HTTP status when the server refused the request (e.g. 400, 406).
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class McpResponseTooLargeError(McpProtocolError):
    """The server's answer grew past the client's cap (`limit` bytes) and was not read on.

    The server did answer: a tool it was asked to run has run.
    """

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class McpRpcError(McpError):
    """The server answered with a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC {code})")
        self.code = code
        self.message = message
        self.data = data


class McpToolError(McpError):
    """A tool call completed with `isError: true`; `result` is the parsed ToolResult."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class McpInputRequiredError(McpError):
    """A 2026-07-28 server asked for input this client cannot give (`inputRequests`).

    `input_requests` is the server's map (elicitation, sampling or roots requests) and
    `request_state` the opaque state it would take back; nothing was completed.
    """

    def __init__(
        self, message: str, *, input_requests: Any = None, request_state: str | None = None
    ) -> None:
        super().__init__(message)
        self.input_requests = input_requests
        self.request_state = request_state
