"""The Hubitat hub's rows of the security matrix (tests/security/), which collects them per
registered backend."""

from __future__ import annotations

from typing import Any

# One read every reading user may make, as the gateway tool's arguments.
READ: dict[str, Any] = {"tool": "hub_get_info", "args": {}}
# An integration action that reads the backend (name, data), if the backend has one.
ACTION_READ: tuple[str, dict[str, Any]] | None = None

# Reads of one hub-wide entity: the HSM panel, the mode select (the policy user may read
# neither).
HUB_ENTITY_READS = {"hub_get_hsm_status", "hub_list_modes"}


def refusal(caller: str, tool: str) -> str | None:
    """The error code a call of `tool` with empty arguments gives `caller` beyond what its
    tier and the tool's flags decide (None: nothing more)."""
    # hub_manage_mode is control only to activate a mode; without an action it is the admin's
    # create/rename/delete (backends/hubitat/tools.call_class).
    if caller != "admin" and tool == "hub_manage_mode":
        return "forbidden"
    # hub_set_hsm addresses the HSM panel, which the policy user may not control.
    if caller == "policy" and (tool == "hub_set_hsm" or tool in HUB_ENTITY_READS):
        return "forbidden"
    return None
