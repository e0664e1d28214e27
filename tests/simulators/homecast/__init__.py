"""Homecast cloud MCP simulator (Streamable HTTP, sessions, SSE, hc_ tokens and OAuth 2.1).

Build it with `create_app(**options)`; the account state is `app[HOMECAST]` (a `HomecastSim`).
Run it alone with `python -m tests.simulators.homecast --port 8766`.
"""

from __future__ import annotations

from .model import CURRENT, LEGACY, Accessory, Home, Virtual, WriteError, slug
from .server import HOMECAST, TRANSPORT, Transport, create_app
from .state import CONTROL, READ_SCOPE, VIEW, WRITE_SCOPE, Grant, HomecastSim
from .tools import TOOLS, TOOLS_BY_NAME

__all__ = [
    "CONTROL",
    "CURRENT",
    "HOMECAST",
    "LEGACY",
    "READ_SCOPE",
    "TOOLS",
    "TOOLS_BY_NAME",
    "TRANSPORT",
    "VIEW",
    "WRITE_SCOPE",
    "Accessory",
    "Grant",
    "Home",
    "HomecastSim",
    "Transport",
    "Virtual",
    "WriteError",
    "create_app",
    "slug",
]
