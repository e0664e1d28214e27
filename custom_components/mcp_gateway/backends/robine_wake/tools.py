"""How the gateway classifies the Robine Wake's tools."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base import ToolClass, ToolTier
from . import model

_READ = ToolClass(ToolTier.READ)
_CONTROL = ToolClass(ToolTier.CONTROL)

# Reads cannot change the clock (preview persists nothing); alarm edits and the session
# buttons are what a household member does; only deleting loses data the user set up.
TOOL_CLASSES: Final[Mapping[str, ToolClass]] = {
    model.TOOL_GET_STATE: _READ,
    model.TOOL_LIST_ALARMS: _READ,
    model.TOOL_LIST_SOUNDS: _READ,
    model.TOOL_PREVIEW_ALARM: _READ,
    model.TOOL_CREATE_ALARM: _CONTROL,
    model.TOOL_UPDATE_ALARM: _CONTROL,
    model.TOOL_DELETE_ALARM: ToolClass(ToolTier.CONTROL, destructive=True),
    model.TOOL_TRIGGER_ALARM: _CONTROL,
    model.TOOL_SNOOZE_SESSION: _CONTROL,
    model.TOOL_DISMISS_SESSION: _CONTROL,
}


def classify(tool: Mapping[str, Any]) -> ToolClass:
    """The table's class; an unknown tool is admin unless the device marks it read-only."""
    known = TOOL_CLASSES.get(str(tool.get("name")))
    if known is not None:
        return known
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True:
        return _READ
    destructive = isinstance(annotations, Mapping) and annotations.get("destructiveHint") is True
    return ToolClass(ToolTier.ADMIN, destructive=destructive)
