"""An alarm's ring time as a time entity: shown, set (one change), degraded, set by set_state."""

from __future__ import annotations

import json
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.components.time import DOMAIN as TIME_DOMAIN, SERVICE_SET_VALUE
from homeassistant.const import ATTR_ENTITY_ID, ATTR_TIME, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext

from .conftest import Sim, advance
from .test_one_change import _racing_poll, _states

WEEKDAYS = "time.bedroom_clock_weekdays_time"
WEEKEND = "time.bedroom_clock_weekend_time"
WEEKEND_SWITCH = "switch.bedroom_clock_weekend"


def _data(result: dict[str, Any]) -> Any:
    (part,) = result["content"]
    return json.loads(part["text"])


def _state(hass: HomeAssistant, entity_id: str) -> str:
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    return state.state


async def _set(hass: HomeAssistant, entity_id: str, value: str) -> None:
    await hass.services.async_call(
        TIME_DOMAIN, SERVICE_SET_VALUE, {ATTR_ENTITY_ID: entity_id, ATTR_TIME: value}, blocking=True
    )


async def test_time_shows_the_alarms_time(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, frozen: FrozenDateTimeFactory
) -> None:
    """Each alarm's time entity shows its ring time, and follows a change made on the clock."""
    assert _state(hass, WEEKDAYS) == "06:45:00"
    assert _state(hass, WEEKEND) == "08:30:00"
    sim.device.edit_alarm(sim.alarm_id("Weekend"), time="09:15")
    await advance(hass, frozen, sim, 5)
    assert _state(hass, WEEKEND) == "09:15:00"
    assert _state(hass, WEEKDAYS) == "06:45:00"


async def test_set_value_moves_the_alarm_once(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """time.set_value updates that alarm on the clock at the revision it was read at; a poll
    read before the write does not put the old time back (one state change)."""
    alarm_id = sim.alarm_id("Weekdays")
    before = sim.device.alarms[alarm_id].revision
    seen, stop = _states(hass, WEEKDAYS)
    await _racing_poll(hass, entry, monkeypatch, _set(hass, WEEKDAYS, "06:30"))
    stop()
    assert seen == ["06:30:00"]
    assert sim.device.alarms[alarm_id].time == "06:30"
    assert sim.device.alarms[alarm_id].revision == before + 1
    # Only the ring time changed.
    assert sim.device.alarms[alarm_id].enabled is True
    assert _state(hass, WEEKEND) == "08:30:00"


async def test_set_value_refuses_what_the_clock_cannot_hold(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """The clock keeps minutes: seconds are refused (translated), nothing is written."""
    alarm_id = sim.alarm_id("Weekdays")
    revision = sim.device.alarms[alarm_id].revision
    with pytest.raises(ServiceValidationError) as err:
        await _set(hass, WEEKDAYS, "06:30:15")
    assert err.value.translation_key == "invalid_value"
    assert sim.device.alarms[alarm_id].time == "06:45"
    assert sim.device.alarms[alarm_id].revision == revision
    assert _state(hass, WEEKDAYS) == "06:45:00"


async def test_set_value_conflict_refreshes_and_explains(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """An edit on the clock since the last read is a translated conflict, not an overwrite."""
    alarm_id = sim.alarm_id("Weekend")
    sim.device.edit_alarm(alarm_id, label="Weekend edited")  # the entity still holds rev 1
    with pytest.raises(HomeAssistantError, match=r"holds revision 2.*based on revision 1"):
        await _set(hass, WEEKEND, "07:00")
    assert sim.device.alarms[alarm_id].time == "08:30"
    # The conflict made HA read the clock again: the same write now goes through.
    await _set(hass, WEEKEND, "07:00")
    assert sim.device.alarms[alarm_id].time == "07:00"


async def test_a_malformed_time_degrades_that_entity_only(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, frozen: FrozenDateTimeFactory
) -> None:
    """A time that is not HH:MM leaves that alarm's time unknown; the rest stays intact."""

    def odd(tool: str, data: Any) -> Any:
        for alarm in data.get("alarms", []):
            if alarm["label"] == "Weekend":
                alarm["time"] = "half past eight"
        return data

    sim.device.reshape = odd
    await advance(hass, frozen, sim, 5)
    assert _state(hass, WEEKEND) == STATE_UNKNOWN
    assert _state(hass, WEEKEND_SWITCH) == "on"
    assert _state(hass, WEEKDAYS) == "06:45:00"
    assert entry.runtime_data.coordinator.last_update_success
    sim.device.reshape = None
    await advance(hass, frozen, sim, 5)
    assert _state(hass, WEEKEND) == "08:30:00"


async def test_set_state_over_the_gateway(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, hass_read_only_user: MockUser
) -> None:
    """A user of the control tier moves an alarm with core set_state; a read-only user
    cannot; a value that is no time of day is refused before anything is called."""
    user = MockUser(name="Ordinary", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    user.add_to_hass(hass)
    handler = GatewayHandler(hass)
    alarm_id = sim.alarm_id("Weekdays")

    async def set_state(who: MockUser, value: str) -> dict[str, Any]:
        ctx = RequestContext("2025-11-25", "pytest", who, 1)
        update = {"entity_id": WEEKDAYS, "value": value}
        return await handler.call_tool(ctx, "set_state", {"updates": [update]})

    denied = await set_state(hass_read_only_user, "06:00")
    assert _data(denied)["error"]["code"] == "forbidden"
    assert sim.device.alarms[alarm_id].time == "06:45"

    bad = await set_state(user, "6:30pm")
    (refused,) = _data(bad)["error"]["details"]["results"]
    assert not refused["ok"]
    assert "HH:MM" in refused["error"]
    assert sim.device.alarms[alarm_id].time == "06:45"

    done = await set_state(user, "06:30")
    assert not done["isError"], done
    assert sim.device.alarms[alarm_id].time == "06:30"
    assert _state(hass, WEEKDAYS) == "06:30:00"
    # The result says it took effect (the time entity shows it), not merely that it was sent.
    assert _data(done)["results"] == [
        {"entity_id": WEEKDAYS, "ok": True, "status": "done", "state": "06:30:00"}
    ]
