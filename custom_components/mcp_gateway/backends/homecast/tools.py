"""How the gateway classifies Homecast's tools (read / control / admin, destructive)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ...framework.base import ToolClass, ToolTier

READ: Final = ToolClass(ToolTier.READ)
CONTROL: Final = ToolClass(ToolTier.CONTROL)
ADMIN: Final = ToolClass(ToolTier.ADMIN)
DESTRUCTIVE: Final = ToolClass(ToolTier.ADMIN, destructive=True)

TOOL_CLASSES: Final[Mapping[str, ToolClass]] = {
    # Reads: state, automation lists and recorded history.
    "get_state": READ,
    "get_automations": READ,
    "get_hc_automations": READ,
    "query_history": READ,
    "get_history": READ,
    # Device control: what a person does with a switch or a scene button.
    "set_state": CONTROL,
    "run_scene": CONTROL,
    # Changing what the home does (definitions), not its state.
    "create_scene": ADMIN,
    "update_scene": ADMIN,
    "delete_scene": DESTRUCTIVE,
    "create_automation": ADMIN,
    "update_automation": ADMIN,
    "delete_automation": DESTRUCTIVE,
    "create_hc_automation": ADMIN,
    "update_hc_automation": ADMIN,
    "delete_hc_automation": DESTRUCTIVE,
    "create_virtual_accessory": ADMIN,
    "update_virtual_accessory": ADMIN,
    "delete_virtual_accessory": DESTRUCTIVE,
}


def classify(tool: Mapping[str, Any]) -> ToolClass:
    """A tool's class: from the table; else read when the server marks it read-only, else admin."""
    name = str(tool.get("name", ""))
    if name in TOOL_CLASSES:
        return TOOL_CLASSES[name]
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True:
        return READ
    destructive = isinstance(annotations, Mapping) and annotations.get("destructiveHint") is True
    return DESTRUCTIVE if destructive else ADMIN
