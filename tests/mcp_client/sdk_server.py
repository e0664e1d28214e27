"""A tiny MCP server on the official Python SDK (an independent implementation) for our tests.

usage: python sdk_server.py PORT [--stateless] [--json]
Serves http://127.0.0.1:PORT/mcp with the tools add, echo, fail and info. Without flags it keeps
sessions and answers over SSE; `--stateless --json` gives plain JSON answers and no session.
"""

# No `from __future__ import annotations` here: FastMCP reads the tools' annotations as classes.
import sys

from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel


class Info(BaseModel):
    """Structured output, so the SDK sends structuredContent."""

    name: str
    length: int


def main() -> None:
    port = int(sys.argv[1])
    server = FastMCP(
        "sdk-test-server",
        instructions="Test server for the MCP Gateway client.",
        host="127.0.0.1",
        port=port,
        json_response="--json" in sys.argv,
        stateless_http="--stateless" in sys.argv,
        log_level="WARNING",
    )

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def fail(message: str) -> str:
        """Always fail with the given message."""
        raise ValueError(message)

    @server.tool()
    def info(name: str) -> Info:
        """Describe a name (structured output)."""
        return Info(name=name, length=len(name))

    server.run(transport="streamable-http")


if __name__ == "__main__":
    main()
