"""MCP protocol code: a Streamable HTTP client and a transport-free server core.

Nothing in this package imports Home Assistant, so it can be tested and reused on its own.
"""
