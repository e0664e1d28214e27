"""The Homecast account's rows of the security matrix (tests/security/), which collects them
per registered backend."""

from __future__ import annotations

from typing import Any

# One read every reading user may make, as the gateway tool's arguments.
READ: dict[str, Any] = {"tool": "get_state", "args": {}}
# An integration action that reads the backend (name, data), if the backend has one.
ACTION_READ: tuple[str, dict[str, Any]] | None = None

# History reads span the account's home this entry does not follow, so only administrators
# use them. Listings (get_state, …) are filtered per caller instead (test_scope.py).
ACCOUNT_WIDE = {"get_history", "query_history"}


def refusal(caller: str, tool: str) -> str | None:
    """The error code a call of `tool` with empty arguments gives `caller` beyond what its
    tier and the tool's flags decide (None: nothing more)."""
    if caller != "admin" and tool in ACCOUNT_WIDE:
        return "forbidden"
    # run_scene without a home addresses no home of this entry: no entity to check.
    if caller != "admin" and tool == "run_scene":
        return "forbidden"
    return None
