"""How the gateway classifies the Robine Wake's tools."""

from __future__ import annotations

from collections.abc import Mapping
import copy
from typing import Any, Final

from homeassistant.const import Platform

from ...framework.base import Shown, ToolClass, ToolTier, UnknownListing
from . import model
from .entities import alarm_key

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


# Tools that name one alarm by its id.
ALARM_TOOLS: Final = frozenset(
    {model.TOOL_UPDATE_ALARM, model.TOOL_DELETE_ALARM, model.TOOL_TRIGGER_ALARM}
)


def alarm_entities(alarm_id: str) -> list[tuple[Platform, str]]:
    """The entities that stand for one alarm."""
    return [
        (Platform.SWITCH, alarm_key(alarm_id, "enabled")),
        (Platform.SENSOR, alarm_key(alarm_id, "next")),
        (Platform.TIME, alarm_key(alarm_id, "time")),
    ]


def filter_alarms(data: Any, shown: Shown) -> tuple[Any, int]:
    """get_state / list_alarms with only the alarms `shown` admits, and no session of a
    withheld alarm (a session names its alarm)."""
    if not isinstance(data, dict):
        raise UnknownListing("not an object")
    answer = copy.deepcopy(data)
    hidden: set[str] = set()
    alarms = answer.get("alarms")
    if isinstance(alarms, list):
        kept = []
        for alarm in alarms:
            alarm_id = alarm.get(model.F_ID) if isinstance(alarm, Mapping) else None
            if isinstance(alarm_id, str) and shown.entities(alarm_entities(alarm_id)):
                kept.append(alarm)
            elif isinstance(alarm_id, str):
                hidden.add(alarm_id)
        withheld = len(alarms) - len(kept)
        answer["alarms"] = kept
    else:
        withheld = 0

    def of_hidden(session: Any) -> bool:
        return isinstance(session, Mapping) and session.get("alarm_id") in hidden

    if of_hidden(answer.get("active_session")):
        answer["active_session"] = None
        withheld += 1
    recent = answer.get("recent_sessions")
    if isinstance(recent, list):
        answer["recent_sessions"] = [s for s in recent if not of_hidden(s)]
        withheld += len(recent) - len(answer["recent_sessions"])
    return answer, withheld
