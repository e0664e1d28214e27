"""Why an automation did or did not run, from Home Assistant's own traces.

HA keeps the last runs of each automation (five unless its config says otherwise): each
names what triggered it and how it ended (finished, stopped by a condition, already running
in single mode, an error). Where HA kept none, the automation never triggered since it was
loaded: the answer says whether it is off and what its trigger entities show now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
import re
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from ...core import compat
from .automations_config import CONDITION_KEYS, Namer, condition_words, references, section
from .automations_store import Automation

# How many runs an answer describes, newest first.
MAX_RUNS: Final = 5
# A condition of the automation itself, not a step inside one.
_TOP_CONDITION: Final = re.compile(r"condition/\d+")
# HA's script_execution values in words.
_ENDINGS: Final[Mapping[str, str]] = {
    "finished": "ran its actions to the end",
    "failed_conditions": "triggered, but a condition was false, so its actions did not run",
    "failed_single": "triggered while still running (mode single), so this run was dropped",
    "failed_max_runs": "triggered while already running as often as its mode allows",
    "cancelled": "was cancelled (mode restart, or it was turned off)",
    "aborted": "stopped at a stop action or a failed step",
    "error": "failed with an error",
    "disallowed_recursion_detected": "was not run: it would have triggered itself",
}


def _when(value: Any) -> str | None:
    if isinstance(value, datetime):
        return dt_util.as_local(value).isoformat(timespec="seconds")
    return str(value) if value else None


def describe_run(trace: Mapping[str, Any], conditions: Sequence[str] = ()) -> dict[str, Any]:
    """One run in words: when, by what, how it ended, the failing condition (by its path
    and, given the automation's conditions in words, what it says) or error."""
    execution = trace.get("script_execution")
    run: dict[str, Any] = {
        "started": _when((trace.get("timestamp") or {}).get("start")),
        "trigger": trace.get("trigger"),
    }
    if trace.get("not_triggered"):
        run["outcome"] = "a trigger fired, but its own condition kept the automation from running"
    elif trace.get("state") == "running":
        run["outcome"] = "is still running"
    else:
        run["outcome"] = _ENDINGS.get(str(execution), f"ended: {execution}")
    steps = trace.get("trace")
    if isinstance(steps, Mapping):
        failed = [
            path
            for path, elements in steps.items()
            if _TOP_CONDITION.fullmatch(str(path))
            and isinstance(elements, list)
            and elements
            and (elements[-1].get("result") or {}).get("result") is False
        ]
        if failed:
            run["false_conditions"] = [
                f"{path}: {conditions[index]}"
                if (index := int(path.split("/")[1])) < len(conditions)
                else path
                for path in failed
            ]
        errors = [
            f"{path}: {element['error']}"
            for path, elements in steps.items()
            if isinstance(elements, list)
            for element in elements
            if isinstance(element, Mapping) and element.get("error")
        ]
        if errors:
            run["errors"] = errors
    if trace.get("error"):
        run["error"] = str(trace["error"])
    return run


async def async_explain(hass: HomeAssistant, automation: Automation) -> dict[str, Any]:
    """The automation's recent runs in words, or why it has none."""
    answer: dict[str, Any] = {
        "automation": automation.alias,
        "entity_id": automation.entity_id,
        "enabled": automation.enabled,
        "last_triggered": automation.last_triggered,
    }
    traces = (
        await compat.async_automation_traces(hass, automation.config_id)
        if automation.config_id is not None
        else []
    )
    if traces:
        config = automation.config or {}
        namer = Namer(hass)
        conditions = [condition_words(hass, namer, c) for c in section(config, CONDITION_KEYS)]
        answer["runs"] = [describe_run(trace, conditions) for trace in traces[:MAX_RUNS]]
        return answer
    reasons = []
    if not automation.enabled:
        reasons.append("it is turned off, so its triggers are not listened to")
    reasons.append(
        "Home Assistant keeps no run of it since it was loaded: none of its triggers fired"
    )
    answer["why_not"] = reasons
    if automation.config is not None:
        # What its trigger and condition entities show now, to compare with what it waits for.
        found = references(hass, automation.config)
        namer = Namer(hass)
        answer["entities_now"] = {
            namer.name(entity_id): state.state
            for entity_id in sorted(found.read)
            if (state := hass.states.get(entity_id)) is not None
        }
    return answer
