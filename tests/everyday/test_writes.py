"""Writes whose answers must say what the devices did: a level in the unit it was asked in,
an arm state only once the hub reports it."""

from __future__ import annotations

from typing import Any

from .assistant import Home, entities, results


def _update_fields(assistant: Any) -> dict[str, Any]:
    updates = assistant.schema("set_state")["properties"]["updates"]
    return dict(updates["items"]["properties"])


async def test_dim_the_office_light_to_forty_percent(home: Home) -> None:
    """ "Dim the office light to 40 percent." """
    data, _ = await home.assistant.call("get_state", {"area": "office", "domain": ["light"]})
    [light] = entities(data)
    # The percent key set_state's schema offers: its name and range say it is a percentage.
    fields = _update_fields(home.assistant)
    key = "brightness_pct"
    assert (fields[key]["minimum"], fields[key]["maximum"]) == (0, 100), fields[key]
    data, _ = await home.assistant.call(
        "set_state", {"updates": [{"entity_id": light["entity_id"], key: 40}]}
    )
    [result] = results(data)
    assert result["status"] == "done", data
    device = next(d for d in home.sims.hubitat.hub.devices.values() if d.label == light["name"])
    assert device.attributes["level"].value == 40
    # A level the answer reports is the one the device has, in the unit it was asked in.
    if key in result:
        assert abs(result[key] - 40) < 1, result


async def test_arm_the_hub_alarm_we_are_going_out(home: Home) -> None:
    """ "We're heading out, set the Hubitat alarm to away." — done only once the hub says so."""
    data, _ = await home.assistant.call(
        "get_state", {"backend": "hubitat", "domain": ["alarm_control_panel"]}
    )
    [panel] = entities(data)
    data, _ = await home.assistant.call(
        "set_state", {"updates": [{"entity_id": panel["entity_id"], "state": "armed_away"}]}
    )
    [result] = results(data)
    hub = home.sims.hubitat.hub
    if result["status"] == "done":
        assert hub.hsm_status == "armedAway", (result, hub.hsm_status)
    else:
        # Not confirmed yet: the answer must not state the arm as a fact.
        assert result.get("state") != "armed_away" or hub.hsm_status == "armedAway", result
