"""get_history where Home Assistant's recorder holds less than asked, over the real backends.

HA (and its recorder) start at 06:00; the hub saw motion at 05:35. "Motion in the last hour?"
at 06:20 must not read as "no": the answer says from when HA holds data and merges the hub's
own events, labelled and in HA's time zone (or, where they cannot be read, offers the call).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
import json
from typing import Any

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.components.recorder import Recorder
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockUser
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)

from custom_components.mcp_gateway.core.settings import CONF_EXPOSED_ONLY
from custom_components.mcp_gateway.gateway.finding.unexposed import NONE_AT_ALL, NONE_READABLE
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools import get_history
from custom_components.mcp_gateway.gateway.tools.get_history import COVERAGE_NOTE, MERGED_NOTE
from custom_components.mcp_gateway.mcp.server import RequestContext
from simulators.hubitat.devices import Event
from simulators.robine_wake import Session as ClockSession
from tests.results import result_data
from tests.simulation import gateway_entry

from .conftest import MONDAY_6AM, OneHome

pytestmark = pytest.mark.freeze_time(MONDAY_6AM, tick=True)
PACIFIC = "-08:00"  # HA's zone in tests (US/Pacific)


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(
    recorder_mock: Recorder, enable_custom_integrations: None
) -> None:
    """The recorder must start before hass: request it ahead of the shared autouse fixture."""


def _ctx(user: MockUser) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


async def _call(hass: HomeAssistant, user: MockUser, name: str, args: dict[str, Any]) -> Any:
    result = await GatewayHandler(hass).call_tool(_ctx(user), name, args)
    assert not result.get("isError"), result
    return result_data(result)


def _homecast_temperature(hass: HomeAssistant, home: OneHome) -> str:
    """A temperature sensor of the first home, the one whose history Homecast records."""
    entries = er.async_entries_for_config_entry(er.async_get(hass), home.homecast_entry.entry_id)
    tail = home.homecast.homes[0].uuid.replace("-", "")[-4:].lower()
    return next(
        e.entity_id
        for e in sorted(entries, key=lambda e: e.entity_id)
        if e.domain == "sensor"
        and e.unique_id.endswith("_temperature")
        and e.unique_id.removeprefix(f"{home.homecast_entry.unique_id}_").startswith(f"{tail}_")
    )


def _motion(home: OneHome) -> tuple[Any, str]:
    device = home.hubitat_device("motion")
    entity_id = home.entity_id("binary_sensor", home.hubitat_entry, f"{device.id}_motion")
    return device, entity_id


async def test_history_says_what_the_recorder_holds_and_merges_the_hub(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """HA holds 20 minutes of the asked hour: said, with the hub's own events merged."""
    device, motion = _motion(one_home)
    before_ha = MONDAY_6AM - timedelta(minutes=25)
    device.events.append(Event("motion", "active", None, "motion is active", before_ha))
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=20))
    await async_wait_recording_done(hass)

    answer = await _call(hass, hass_admin_user, "get_history", {"entity_ids": [motion], "hours": 1})
    entity = answer["entities"][motion]
    held_from = dt_util.parse_datetime(entity["recorded_from"])
    assert held_from is not None
    assert entity["recorded_from"].endswith(PACIFIC)
    # From when HA first recorded the sensor (set-up at 06:00), not from the asked start.
    assert abs(held_from - MONDAY_6AM) < timedelta(minutes=1)
    assert [state for _, state in entity["points"]] == ["off"]

    # The hub's own events of the hour come merged, labelled, newest first, in HA's zone:
    # one call answers "motion in the last hour?" whole.
    assert answer["coverage"] == MERGED_NOTE
    backend = entity["backend"]
    assert backend["source"].endswith("(hub_list_device_events)")
    assert "backend_history" not in entity
    times = [dt_util.parse_datetime(when) for when, _ in backend["events"]]
    assert before_ha in times, backend
    assert [v for when, v in backend["events"] if dt_util.parse_datetime(when) == before_ha] == [
        "active"
    ]
    assert all(when.endswith(PACIFIC) for when, _ in backend["events"]), backend
    assert times == sorted(times, reverse=True)
    assert all(t is not None and t >= dt_util.parse_datetime(answer["start"]) for t in times)


async def test_history_offer_where_the_hub_cannot_read_the_device(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """A failing backend read degrades only that entity: it keeps the ready call and says
    why, and the hub's events in it are what the offered call then reads."""
    device, motion = _motion(one_home)
    one_home.hub.history_fails.add(device.id)
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=20))
    await async_wait_recording_done(hass)

    answer = await _call(hass, hass_admin_user, "get_history", {"entity_ids": [motion], "hours": 1})
    assert answer["coverage"] == COVERAGE_NOTE
    entity = answer["entities"][motion]
    assert "backend" not in entity
    assert "eventsSince not supported" in entity["backend_error"]
    offer = entity["backend_history"]
    assert offer["name"] == "hubitat_home_hub"
    assert offer["arguments"]["tool"] == "hub_list_device_events"
    args = offer["arguments"]["args"]
    assert args["deviceId"] == str(device.id)
    assert args["attribute"] == "motion"
    assert args["since"] == answer["start"]
    assert args["since"].endswith(PACIFIC)


async def test_history_fully_held_carries_no_coverage_note(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """A window the recorder holds whole: the state at its start, and nothing offered."""
    _, motion = _motion(one_home)
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=90))
    await async_wait_recording_done(hass)
    answer = await _call(hass, hass_admin_user, "get_history", {"entity_ids": [motion], "hours": 1})
    assert "coverage" not in answer
    entity = answer["entities"][motion]
    assert "recorded_from" not in entity
    assert "backend_history" not in entity
    assert entity["points"][0][0] == answer["start"]


async def test_homecast_history_merged_back_over_the_day(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """A Homecast sensor's day, asked of a recorder that holds ten minutes: one call answers
    it, the accessory's own readings of the rest merged, labelled, in HA's zone, reaching
    back more than half the day.

    Homecast's history reads every accessory of the account, so it is read only where the
    caller may read them all and exposure does not hide any (here: exposure off).
    """
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    entity_id = _homecast_temperature(hass, one_home)
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=10))
    await async_wait_recording_done(hass)
    answer = await _call(
        hass, hass_admin_user, "get_history", {"entity_ids": [entity_id], "hours": 24}
    )
    assert answer["coverage"] == MERGED_NOTE
    entity = answer["entities"][entity_id]
    assert entity["unit"] == "°C"
    held_from = dt_util.parse_datetime(entity["recorded_from"])
    assert held_from is not None
    backend = entity["backend"]
    assert backend["source"].endswith("(get_history)")
    assert "backend_history" not in entity
    times = [dt_util.parse_datetime(when) for when, _ in backend["events"]]
    assert all(t is not None and t < held_from for t in times), backend
    assert times == sorted(times, reverse=True)
    assert held_from - min(t for t in times if t is not None) >= timedelta(hours=12)
    assert all(float(value) for _, value in backend["events"])
    assert all(when.endswith(PACIFIC) for when, _ in backend["events"]), backend
    assert backend["covers_from"] == answer["start"]


async def test_homecast_history_offered_where_it_cannot_be_read(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """History switched off for the home: the answer says why and keeps the ready call,
    whose times come back in HA's zone."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    entity_id = _homecast_temperature(hass, one_home)
    one_home.homecast.homes[0].analytics = False
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=10))
    await async_wait_recording_done(hass)
    answer = await _call(
        hass, hass_admin_user, "get_history", {"entity_ids": [entity_id], "hours": 3}
    )
    assert answer["coverage"] == COVERAGE_NOTE
    entity = answer["entities"][entity_id]
    assert "History is not recorded" in entity["backend_error"]
    offer = entity["backend_history"]
    assert offer["arguments"]["tool"] == "get_history"
    assert offer["arguments"]["args"]["hours"] == 3
    assert offer["arguments"]["args"]["characteristic"] == "current_temperature"
    one_home.homecast.homes[0].analytics = True
    history = await _call(hass, hass_admin_user, offer["name"], offer["arguments"])
    text = json.dumps(history)
    assert 'Z"' not in text
    assert PACIFIC in text


async def test_offer_only_when_the_user_may_call_it(hass: HomeAssistant, one_home: OneHome) -> None:
    """A user who may read the motion sensor's device but not every Homecast accessory is
    offered the hub's history (it addresses that one device) and never a call that would be
    refused."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    hass_user = MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)
    _, motion = _motion(one_home)
    temperature = _homecast_temperature(hass, one_home)
    registry = er.async_get(hass)
    device_id = registry.async_get(motion).device_id  # type: ignore[union-attr]
    assert device_id is not None
    readable = {e.entity_id: True for e in er.async_entries_for_device(registry, device_id)}
    hass_user.mock_policy({"entities": {"entity_ids": {**readable, temperature: True}}})
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    answer = await _call(hass, hass_user, "get_history", {"hours": 1})
    assert set(answer["entities"]) == {*readable, temperature}
    # The hub's history of the device this user may read is merged, as their own call would.
    assert answer["entities"][motion]["backend"]["source"].endswith("(hub_list_device_events)")
    assert "backend_history" not in answer["entities"][motion]
    # Homecast's history reads every accessory of the account: not this user's to call.
    assert "recorded_from" in answer["entities"][temperature]
    assert "backend_history" not in answer["entities"][temperature]


async def test_clock_times_in_history_are_local(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """The clock's timestamp sensors (next ring) are recorded in UTC: history shows them in
    HA's zone with its offset, as get_state does (they are not exposed to assistants by
    default: exposure off here)."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    entries = er.async_entries_for_config_entry(er.async_get(hass), one_home.robine_entry.entry_id)
    stamps = [
        e.entity_id
        for e in entries
        if e.domain == "sensor"
        and (state := hass.states.get(e.entity_id)) is not None
        and state.attributes.get("device_class") == "timestamp"
        and dt_util.parse_datetime(state.state) is not None
    ]
    assert stamps
    answer = await _call(hass, hass_admin_user, "get_history", {"entity_ids": stamps, "hours": 1})
    states = [state for e in stamps for _, state in answer["entities"][e]["points"]]
    assert states
    assert all(state.endswith(PACIFIC) for state in states), states
    current = await _call(hass, hass_admin_user, "get_state", {"entity_ids": stamps})
    assert {item["state"] for item in current["entities"]} <= set(states)


async def test_hub_mode_and_hsm_offer_location_events(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """The hub's mode and HSM are location events: offered without a device, by name (both
    entities are not exposed to assistants by default: exposure off here)."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    one_home.hub.set_mode("Night")
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    mode = one_home.entity_id("select", one_home.hubitat_entry, "hub_mode")
    hsm = one_home.entity_id("alarm_control_panel", one_home.hubitat_entry, "hub_hsm")
    answer = await _call(
        hass, hass_admin_user, "get_history", {"entity_ids": [mode, hsm], "hours": 2}
    )
    merged = {e: answer["entities"][e]["backend"] for e in (mode, hsm)}
    assert [value for _, value in merged[mode]["events"]][:1] == ["Night"]
    assert all(when.endswith(PACIFIC) for when, _ in merged[mode]["events"])
    assert merged[hsm]["count"] == len(merged[hsm]["events"])


async def test_merging_is_bounded_and_the_rest_keep_the_offer(
    hass: HomeAssistant,
    one_home: OneHome,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At most MAX_MERGED backend reads per answer, MERGED_EVENTS events each (newest first,
    marked truncated); the entities past the bound keep the ready call."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    monkeypatch.setattr(get_history, "MAX_MERGED", 1)
    monkeypatch.setattr(get_history, "MERGED_EVENTS", 3)
    device, motion = _motion(one_home)
    for minute in range(5):
        when = MONDAY_6AM - timedelta(minutes=30 - minute)
        value = "active" if minute % 2 == 0 else "inactive"
        device.events.append(Event("motion", value, None, f"motion is {value}", when))
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    mode = one_home.entity_id("select", one_home.hubitat_entry, "hub_mode")
    answer = await _call(
        hass, hass_admin_user, "get_history", {"entity_ids": [mode, motion], "hours": 1}
    )
    backend = answer["entities"][motion]["backend"]
    assert backend["truncated"] is True
    assert backend["count"] >= 5
    assert [value for _, value in backend["events"]] == ["active", "inactive", "active"]
    assert "backend" not in answer["entities"][mode]
    assert answer["entities"][mode]["backend_history"]["arguments"]["args"]["attribute"] == "mode"


async def test_a_slow_hub_read_keeps_the_offer(
    hass: HomeAssistant,
    one_home: OneHome,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A backend read that outlasts the merge's timeout degrades that entity to the offer,
    saying why; the answer still comes."""
    _, motion = _motion(one_home)
    monkeypatch.setattr(get_history, "MERGE_TIMEOUT", 0.05)
    runtime = one_home.hubitat_entry.runtime_data

    async def slow(name: str, args: dict[str, Any]) -> Any:
        await asyncio.sleep(1)

    monkeypatch.setattr(runtime, "async_call_tool", slow)
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    answer = await _call(hass, hass_admin_user, "get_history", {"entity_ids": [motion], "hours": 1})
    entity = answer["entities"][motion]
    assert "no answer in 0.05 s" in entity["backend_error"]
    assert entity["backend_history"]["arguments"]["tool"] == "hub_list_device_events"


async def test_no_merge_without_rights_to_the_whole_device(
    hass: HomeAssistant, one_home: OneHome
) -> None:
    """A non-admin who may read the motion entity but not the rest of its device may not call
    the hub's history of that device: nothing is merged or offered for it."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    hass_user = MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)
    _, motion = _motion(one_home)
    registry = er.async_get(hass)
    device_id = registry.async_get(motion).device_id  # type: ignore[union-attr]
    assert len(er.async_entries_for_device(registry, device_id)) > 1  # type: ignore[arg-type]
    hass_user.mock_policy({"entities": {"entity_ids": {motion: True}}})
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    answer = await _call(hass, hass_user, "get_history", {"hours": 1})
    entity = answer["entities"][motion]
    assert "recorded_from" in entity
    assert "backend" not in entity
    assert "backend_history" not in entity
    assert "backend_error" not in entity


async def test_the_clocks_own_sessions_are_merged(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """ "Did the alarm ring this morning?" asked just after HA started: the clock's own record
    of its recent wake sessions (get_state) comes merged into the session sensor's history,
    when it rang and when and how it ended, in HA's zone; which alarm is left out."""
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    rang = MONDAY_6AM - timedelta(minutes=40)
    ended = rang + timedelta(minutes=4)
    alarm = next(iter(one_home.robine.alarms))
    one_home.robine.recent_sessions.appendleft(
        ClockSession("s-early", alarm, "ended", rang, rang, 0, None, ended, "dismissed_button")
    )
    await one_home.advance(60)
    await async_wait_recording_done(hass)
    session = one_home.entity_id("sensor", one_home.robine_entry, "session_state")
    answer = await _call(
        hass, hass_admin_user, "get_history", {"entity_ids": [session], "hours": 2}
    )
    entity = answer["entities"][session]
    assert "recorded_from" in entity
    backend = entity["backend"]
    assert backend["source"].endswith("(get_state)")
    events = [(dt_util.parse_datetime(when), value) for when, value in backend["events"]]
    assert events == [(ended, "ended (dismissed_button)"), (rang, "ringing")], backend
    assert all(when.endswith(PACIFIC) for when, _ in backend["events"])
    assert alarm not in json.dumps(backend)


async def test_a_chatty_sensors_motion_is_not_crowded_out(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """The app caps a device's events before filtering them by attribute: 150 temperature
    reports after the one motion of the hour still leave that motion in the answer."""
    device, motion = _motion(one_home)
    moved = MONDAY_6AM - timedelta(minutes=25)
    device.events.append(Event("motion", "active", None, "motion is active", moved))
    for second in range(150):
        when = moved + timedelta(seconds=5 * (second + 1))
        device.events.append(Event("temperature", "70.1", "°F", "temperature", when))
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=5))
    await async_wait_recording_done(hass)
    answer = await _call(hass, hass_admin_user, "get_history", {"entity_ids": [motion], "hours": 1})
    backend = answer["entities"][motion]["backend"]
    assert [
        value for when, value in backend["events"] if dt_util.parse_datetime(when) == moved
    ] == ["active"], backend


async def test_history_of_a_device_never_heard_from_is_marked(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """No change from a sensor the hub never heard from is no "nothing happened": its history
    carries get_state's mark; a sensor the hub hears from carries none."""
    never = next(d for d in one_home.hub.devices.values() if d.last_activity is None)
    prefix = f"{one_home.hubitat_entry.unique_id}_{never.id}_"
    silent = [
        e.entity_id
        for e in er.async_entries_for_config_entry(
            er.async_get(hass), one_home.hubitat_entry.entry_id
        )
        if e.unique_id.startswith(prefix) and hass.states.get(e.entity_id) is not None
    ]
    assert silent
    _, motion = _motion(one_home)
    await one_home.advance_to(MONDAY_6AM + timedelta(minutes=20))
    await async_wait_recording_done(hass)

    answer = await _call(
        hass, hass_admin_user, "get_history", {"entity_ids": [*silent, motion], "hours": 1}
    )
    for entity_id in silent:
        stale = answer["entities"][entity_id]["stale"]
        assert stale["since"] is None
        assert "never heard" in stale["note"]
        assert "not nothing happened" in stale["note"]
    assert "stale" not in answer["entities"][motion]


async def _not_found(hass: HomeAssistant, user: MockUser, args: dict[str, Any]) -> str:
    result = await GatewayHandler(hass).call_tool(_ctx(user), "get_history", args)
    assert result.get("isError"), result
    text: str = result["content"][0]["text"]
    return text


async def test_history_of_a_name_nothing_has_says_none_exists(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """The owner asking for a name nothing has is told nothing matches at all, hidden or not;
    a user who may read one sensor only is told only that none of theirs matches, alike for
    that name and for an entity that exists (never a sign of it)."""
    _, motion = _motion(one_home)
    text = await _not_found(hass, hass_admin_user, {"name": "sauna heater"})
    assert NONE_AT_ALL in text, text

    group = await hass.auth.async_get_group(GROUP_ID_USER)
    hass_user = MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)
    hass_user.mock_policy({"entities": {"entity_ids": {motion: True}}})
    other = next(
        state
        for state in hass.states.async_all("lock")
        if er.async_get(hass).async_get(state.entity_id) is not None
    )
    for args in ({"name": "sauna heater"}, {"entity_ids": [other.entity_id]}):
        text = await _not_found(hass, hass_user, args)
        assert NONE_READABLE in text, (args, text)
        assert NONE_AT_ALL not in text, (args, text)
        assert other.entity_id not in text, (args, text)
