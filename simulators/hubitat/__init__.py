"""Simulated Hubitat Elevation hub running the MCP Rule Server app.

Follows the app's public source (kingpanther13/Hubitat-local-MCP-server): gateway catalog,
best-practice key gate, write cap, -32602 validation errors, size guards, query-token or bearer
auth, and a generated population of devices whose commands land after a delay. Use
`create_app(**options)` and `app[HUB]`.
"""

from __future__ import annotations

from .catalog import BEST_PRACTICE_KEY, CORE_TOOLS, GATEWAYS, TOOLS as TOOL_DEFS
from .hub import Hub
from .server import HUB, OPTIONS, SUPPORTED_VERSIONS, TOOLS, create_app, mcp_path

__all__ = [
    "BEST_PRACTICE_KEY",
    "CORE_TOOLS",
    "GATEWAYS",
    "HUB",
    "OPTIONS",
    "SUPPORTED_VERSIONS",
    "TOOLS",
    "TOOL_DEFS",
    "Hub",
    "create_app",
    "mcp_path",
]
