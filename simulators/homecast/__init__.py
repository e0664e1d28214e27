"""Homecast MCP simulator: the cloud (Streamable HTTP, sessions, SSE, hc_ tokens and OAuth 2.1)
or, with `community=True`, the Homecast Mac app's community server (plain JSON-RPC, protocol
2024-11-05, no sessions, a bad token answered 200 `{"error": "Authentication required"}`).

Build it with `create_app(**options)`; the account state is `app[HOMECAST]` (a `HomecastSim`).
Run it alone with `python -m simulators.homecast --port 8766` (`--community`,
`--no-auth`, `--state FILE` to replay a captured get_state answer exactly).

Options: seed, homes, accessories_per_home, vocabulary ("current" | "legacy" | "community"),
state_file, sse, sessions, strict_accept, session_ttl, write_delay, token, analytics, clock,
community, community_auth, push (the edition's live-update WebSocket, push.py; on by
default), push_api_tokens.

Failure switches on HomecastSim, each as upstream fails: relay_write_timeout (a write to an
unreachable accessory is answered after it, as HomeKitManager.swift's writeTimeoutSeconds),
absent_tools (an older server without these tools), failing_tools (tool -> message, an isError
result as local-mcp.ts handleJsonRpc answers a throwing tool).

Test helpers on HomecastSim: home(), accessory(), values(), external_change(), press(),
set_reachable(), set_relay_online(), pair_accessory(), remove_accessory(), rename_accessory(),
add_scene(), rename_scene(), remove_scene(), add_home(), flush(), pending_writes, listeners,
add_token(), revoke_token(), revoke_refresh_token(), revoke_client(), consent,
expire_sessions(), notify_tools_changed().
Control routes: POST /_sim/homecast/{change,press,reachable,pair,remove,expire_sessions,
revoke,token,flush} with a JSON body.
"""

from __future__ import annotations

from .model import CURRENT, LEGACY, Accessory, Home, Virtual, WriteError, slug
from .push import PUSH, PushHub
from .server import HOMECAST, TRANSPORT, Transport, create_app
from .state import CONTROL, READ_SCOPE, VIEW, WRITE_SCOPE, Grant, HomecastSim
from .tools import TOOLS, TOOLS_BY_NAME

__all__ = [
    "CONTROL",
    "CURRENT",
    "HOMECAST",
    "LEGACY",
    "PUSH",
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
    "PushHub",
    "Transport",
    "Virtual",
    "WriteError",
    "create_app",
    "slug",
]
