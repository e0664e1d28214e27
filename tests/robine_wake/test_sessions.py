"""Wake sessions: ringing detection, buttons, and the event entity over whole lifecycles."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.button import DOMAIN as BUTTON_DOMAIN, SERVICE_PRESS
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNKNOWN
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.event import async_track_state_change_event
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import Sim, SimFactory, advance, make_entry, setup_entry

EVENT = "event.bedroom_clock_wake_session"
SESSION = "sensor.bedroom_clock_session"
SNOOZE = "button.bedroom_clock_snooze"
DISMISS = "button.bedroom_clock_dismiss"


def _record(hass: HomeAssistant) -> list[dict[str, Any]]:
    """Every event the entity fires, as automations would see them (one state per event)."""
    fired: list[dict[str, Any]] = []

    @callback
    def _changed(event: Event[EventStateChangedData]) -> None:
        state = event.data["new_state"]
        if state is not None and state.state not in (STATE_UNKNOWN, "unavailable"):
            fired.append(dict(state.attributes))

    async_track_state_change_event(hass, [EVENT], _changed)
    return fired


async def _press(hass: HomeAssistant, entity_id: str) -> None:
    await hass.services.async_call(
        BUTTON_DOMAIN, SERVICE_PRESS, {ATTR_ENTITY_ID: entity_id}, blocking=True
    )


async def test_whole_session_lifecycle(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """A whole session: ringing, snooze, dismissal, each shown and fired once."""
    fired = _record(hass)
    weekdays = sim.alarm_id("Weekdays")

    await advance(hass, frozen, sim, 45 * 60)  # 06:45 Berlin: the weekday alarm rings
    assert hass.states.get(SESSION).state == "ringing"
    assert hass.states.get(SESSION).attributes["alarm_label"] == "Weekdays"
    await _press(hass, SNOOZE)  # from HA: the clock snoozes, the entity follows at once
    assert sim.device.active_session is not None
    assert sim.device.active_session.state == "snoozed"
    assert hass.states.get(SESSION).state == "snoozed"
    await advance(hass, frozen, sim, 9 * 60)  # the snooze is over: ringing again
    assert hass.states.get(SESSION).state == "ringing"
    sim.device.press_snooze()  # the snooze bar on the clock itself
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "snoozed"
    await advance(hass, frozen, sim, 9 * 60)
    await _press(hass, DISMISS)
    assert sim.device.active_session is None
    assert sim.device.recent_sessions[0].end_reason == "mcp"
    assert hass.states.get(SESSION).state == "idle"
    await advance(hass, frozen, sim, 5)  # the poll confirms; nothing fires twice

    assert [event["event_type"] for event in fired] == [
        "ringing",
        "snoozed",
        "ringing",
        "snoozed",
        "ringing",
        "dismissed",
        "ended",
    ]
    assert {event["alarm_id"] for event in fired} == {weekdays}
    assert {event["alarm_label"] for event in fired} == {"Weekdays"}
    assert [event["snooze_count"] for event in fired] == [0, 1, 1, 2, 2, 2, 2]
    assert fired[-1]["end_reason"] == "mcp"
    assert "snooze_until" in fired[1]


async def test_session_between_two_polls_reports_its_end(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Rung and turned off on the clock within one poll interval: dismissed and ended fire."""
    fired = _record(hass)
    sim.device.trigger(sim.alarm_id("Weekend"))
    sim.device.press_dismiss()
    await advance(hass, frozen, sim, 5)
    assert [(e["event_type"], e["end_reason"]) for e in fired] == [
        ("dismissed", "dismissed"),
        ("ended", "dismissed"),
    ]


async def test_timeout_ends_without_dismissal(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """A session that times out ends without a dismissal event."""
    fired = _record(hass)
    sim.device.trigger(sim.alarm_id("Weekend"))
    await advance(hass, frozen, sim, 5)
    await advance(hass, frozen, sim, 600)  # the clock gives up after ten minutes
    assert [(e["event_type"], e.get("end_reason")) for e in fired] == [
        ("ringing", None),
        ("ended", "timeout"),
    ]
    assert hass.states.get(SESSION).state == "idle"


async def test_history_before_setup_is_not_replayed(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """Sessions before setup are not replayed as events."""
    sim.device.trigger(sim.alarm_id("Weekend"))
    sim.device.press_dismiss()
    sim.device.trigger(sim.alarm_id("Weekdays"))
    entry = make_entry(sim)
    fired = _record(hass)
    await setup_entry(hass, entry)
    assert hass.states.get(SESSION).state == "ringing"
    await advance(hass, frozen, sim, 5)
    assert fired == []
    assert hass.states.get(EVENT).state == STATE_UNKNOWN
    sim.device.press_dismiss()
    await advance(hass, frozen, sim, 5)
    assert [e["event_type"] for e in fired] == ["dismissed", "ended"]


async def test_snooze_limit_is_a_clear_error(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Snoozing past the clock's limit is a clear translated error."""
    sim.device.trigger(sim.alarm_id("Train to the coast"))  # one snooze allowed
    await advance(hass, frozen, sim, 5)
    await _press(hass, SNOOZE)
    await advance(hass, frozen, sim, 5 * 60)
    assert hass.states.get(SESSION).state == "ringing"
    with pytest.raises(HomeAssistantError, match="allows 1 snoozes") as err:
        await _press(hass, SNOOZE)
    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == "command_failed"
    assert sim.device.active_session.state == "ringing"


async def test_buttons_without_a_session(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Snooze and dismiss without a session are refused clearly."""
    for button in (SNOOZE, DISMISS):
        with pytest.raises(HomeAssistantError, match="No wake session is active"):
            await _press(hass, button)


async def test_dismissal_disabled_on_the_clock(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """Dismissal switched off on the clock is shown and refused clearly."""
    sim = await sim_factory(smartphone_dismissal=False)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    assert hass.states.get("binary_sensor.bedroom_clock_smartphone_dismissal").state == "off"
    sim.device.trigger(sim.alarm_id("Weekend"))
    await advance(hass, frozen, sim, 5)
    with pytest.raises(HomeAssistantError, match="switched off on this clock"):
        await _press(hass, DISMISS)
    assert hass.states.get(SESSION).state == "ringing"


async def test_ringing_is_noticed_within_the_poll_interval(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """With a 2 s interval, an alarm due now shows as ringing within that interval."""
    entry = make_entry(sim, options={"scan_interval": 2})
    await setup_entry(hass, entry)
    await advance(hass, frozen, sim, 45 * 60 - 1)
    assert hass.states.get(SESSION).state == "idle"
    await advance(hass, frozen, sim, 2)  # one interval later
    assert hass.states.get(SESSION).state == "ringing"


async def test_scheduled_ring_is_read_when_due(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """The clock said when it rings: HA reads it just after, not a poll interval later."""
    entry = make_entry(sim, options={"scan_interval": 300})
    await setup_entry(hass, entry)
    await advance(hass, frozen, sim, 44 * 60)  # 06:44, one regular poll
    sim.stats.reset()
    await advance(hass, frozen, sim, 62)  # 06:45:02; the next regular poll is minutes away
    assert sim.stats.tools == {"get_state": 1, "list_alarms": 1}
    assert hass.states.get(SESSION).state == "ringing"
    await _press(hass, SNOOZE)
    sim.stats.reset()
    await advance(hass, frozen, sim, 9 * 60 + 2)  # the snooze ends: read again at once
    assert sim.stats.tools["get_state"] >= 1
    assert hass.states.get(SESSION).state == "ringing"


async def test_ring_check_never_dropped_only_deferred(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """A ring check during a poll runs right after it; while rate limited, when that ends."""
    entry = make_entry(sim, options={"scan_interval": 300})
    await setup_entry(hass, entry)
    coordinator = entry.runtime_data.coordinator
    sim.stats.reset()
    poll = hass.async_create_task(coordinator.async_refresh())
    await asyncio.sleep(0)  # the poll is under way
    assert coordinator._polling
    coordinator._due_check(frozen())
    await poll
    await hass.async_block_till_done(wait_background_tasks=True)
    assert sim.stats.tools["get_state"] == 2  # the poll, then the check it held back
    sim.stats.reset()
    coordinator.note_rate_limited(300)
    coordinator._due_check(frozen())
    await hass.async_block_till_done(wait_background_tasks=True)
    assert sim.stats.http_requests == 0  # the clock's Retry-After wins
    assert coordinator._unsub_due is not None  # the check waits for it, not dropped
    await advance(hass, frozen, sim, 301)
    # The regular poll and the check fall together: one read (HA 2026.x) or two serve both.
    assert sim.stats.tools["get_state"] >= 1
    sim.stats.reset()
    assert await hass.config_entries.async_unload(entry.entry_id)
    await advance(hass, frozen, sim, 46 * 60)  # past 06:45 with the entry unloaded
    assert sim.stats.http_requests == 0


async def test_polls_faster_while_a_session_rings_or_snoozes(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """A snooze or dismissal made on the clock shows within a second; idle, the interval again."""
    coordinator = entry.runtime_data.coordinator
    assert coordinator.update_interval == timedelta(seconds=5)
    sim.device.trigger(sim.alarm_id("Weekend"))
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "ringing"
    assert coordinator.update_interval == timedelta(seconds=1)
    sim.device.press_snooze()
    await advance(hass, frozen, sim, 1)
    assert hass.states.get(SESSION).state == "snoozed"
    assert coordinator.update_interval == timedelta(seconds=1)
    sim.device.press_dismiss()
    await advance(hass, frozen, sim, 1)
    assert hass.states.get(SESSION).state == "idle"
    assert coordinator.update_interval == timedelta(seconds=5)


async def test_fast_polling_yields_to_the_rate_limit(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """While the clock asks for quiet, a ringing session does not speed the polls up."""
    coordinator = entry.runtime_data.coordinator
    sim.device.trigger(sim.alarm_id("Weekend"))
    await advance(hass, frozen, sim, 5)
    assert coordinator.update_interval == timedelta(seconds=1)
    coordinator.note_rate_limited(30)
    assert coordinator.update_interval == timedelta(seconds=30)
    await coordinator.async_apply_session(coordinator.data.state.active_session)
    assert coordinator.update_interval == timedelta(seconds=30)


async def test_a_ring_the_clock_is_late_with_is_looked_at_again(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """The clock still announces a moment that has passed: read again each second, a few times.

    Then only the regular poll follows it (no loop of reads against a clock that is off).
    """
    entry = make_entry(sim, options={"scan_interval": 300})
    await setup_entry(hass, entry)
    await advance(hass, frozen, sim, 44 * 60)  # 06:44
    late = sim.device.clock.now()

    def not_yet(tool: str, data: Any) -> Any:
        # The clock's ring is late: it keeps its 06:45 alarm ahead, and is not ringing.
        sim.device.clock.set(late)
        return data

    sim.device.reshape = not_yet
    sim.stats.reset()
    frozen.tick(timedelta(seconds=62))  # 06:45:02 for Home Assistant only
    for _ in range(8):
        frozen.tick(timedelta(seconds=1))
        async_fire_time_changed(hass)
        await hass.async_block_till_done(wait_background_tasks=True)
    # The due check, then five looks one second apart, then nothing more until the poll.
    assert sim.stats.tools["get_state"] == 6
    sim.device.reshape = None
