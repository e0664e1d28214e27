"""Everyday requests on the demo's home, over the real wire: each within two tool calls.

Each test is one request as a person says it (two homes, history, modes, alarms, scenes, locks).
The assistant does it as a model would, from tools/list and the answers alone; the test then
holds what it was told against the simulated devices: nothing in an answer may state what the
devices did not do.
"""

from __future__ import annotations

from typing import Any

import pytest

from .assistant import Assistant, Home, entities, results


async def _hub_mode_select(assistant: Assistant) -> dict[str, Any]:
    data, _ = await assistant.call(
        "get_state", {"backend": "hubitat", "domain": ["select"], "name": "mode"}
    )
    found = entities(data)
    assert len(found) == 1, found
    return found[0]


async def test_switch_the_hub_to_night_mode(home: Home) -> None:
    """ "Switch the hub over to Night mode." """
    select = await _hub_mode_select(home.assistant)
    data, _ = await home.assistant.call(
        "set_state", {"updates": [{"entity_id": select["entity_id"], "value": "Night"}]}
    )
    [result] = results(data)
    assert result["status"] == "done", data
    assert home.sims.hubitat.hub.mode_name == "Night"


async def test_which_mode_is_the_hub_in(home: Home) -> None:
    """ "What mode is the house on right now?" """
    select = await _hub_mode_select(home.assistant)
    assert select["state"] == home.sims.hubitat.hub.mode_name


async def test_which_alarms_are_on_the_bedside_clock(home: Home) -> None:
    """ "Which alarms do I have on the bedside clock?" """
    clock = home.assistant.gateway("robine wake")
    data, is_error = await home.assistant.call(clock, {"tool": "list_alarms"})
    assert not is_error, data
    told = sorted((alarm["label"], alarm["time"]) for alarm in data["alarms"])
    device = home.sims.robine_wake.device
    assert told == sorted((alarm.label, alarm.time) for alarm in device.alarms.values())


async def test_wake_me_at_quarter_past_seven_on_saturdays(home: Home) -> None:
    """ "Wake me at 7:15 on Saturdays." — found through search, created in one call."""
    found, _ = await home.assistant.call("search_tools", {"query": "wake me at 7:15 on Saturdays"})
    best = found["results"][0]
    assert best["tool"] == "create_alarm", found
    data, is_error = await home.assistant.call(
        best["call"]["name"],
        {"tool": best["tool"], "args": {"label": "Saturday", "time": "07:15", "days": ["sat"]}},
    )
    assert not is_error, data
    device = home.sims.robine_wake.device
    stored = [a for a in device.alarms.values() if a.time == "07:15" and a.days == ["sat"]]
    assert len(stored) == 1
    # The answer names no device as offline: the clock did what was asked.
    assert "may not have acted" not in str(data)


async def test_a_few_more_minutes_while_the_alarm_rings(home: Home) -> None:
    """ "The alarm's going off, give me a few more minutes." """
    device = home.sims.robine_wake.device
    device.trigger(next(iter(device.alarms)))
    found, _ = await home.assistant.call(
        "search_tools", {"query": "the alarm's going off, give me a few more minutes"}
    )
    best = found["results"][0]
    if best.get("gateway") is None:
        pytest.fail(f"a core tool first for a snooze: {found}")
    assert best["tool"] == "snooze_session", found
    data, is_error = await home.assistant.call(
        best["call"]["name"], {"tool": best["tool"], "args": {}}
    )
    assert not is_error, data
    assert device.active_session is not None
    assert device.active_session.state == "snoozed"
