"""A clock whose replies deviate from our model: values degrade, the entry never does.

Every result field beyond 50-002's tool names is our own model, so a real clock may send any of
them in another shape. The simulator's `reshape` variation bends its results; the entry must stay
loaded, the bent value (or that alarm's entities) degrade, and every other entity keeps its value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import copy
from dataclasses import dataclass
import logging
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from hypothesis import HealthCheck, given, settings, strategies as st
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .conftest import Sim, SimFactory, advance, make_entry, setup_entry

SESSION = "sensor.bedroom_clock_session"
NEXT_ALARM = "sensor.bedroom_clock_next_alarm"
HEALTH = "binary_sensor.bedroom_clock_health"
TIME_SYNCED = "binary_sensor.bedroom_clock_time_synchronized"
STORAGE = "binary_sensor.bedroom_clock_storage"
DISMISSAL = "binary_sensor.bedroom_clock_smartphone_dismissal"
FIRMWARE = "sensor.bedroom_clock_firmware"
MAX_VOLUME = "sensor.bedroom_clock_maximum_volume"
TIME_ZONE = "sensor.bedroom_clock_time_zone"
EVENT = "event.bedroom_clock_wake_session"
LABELS = {
    "Weekdays": "weekdays",
    "Weekend": "weekend",
    "Train to the coast": "train_to_the_coast",
}


def _switch(label: str) -> str:
    return f"switch.bedroom_clock_{LABELS[label]}"


def _next_ring(label: str) -> str:
    return f"sensor.bedroom_clock_{LABELS[label]}_next_ring"


ALL = {
    SESSION,
    NEXT_ALARM,
    HEALTH,
    TIME_SYNCED,
    STORAGE,
    DISMISSAL,
    FIRMWARE,
    MAX_VOLUME,
    EVENT,
    *(_switch(label) for label in LABELS),
    *(_next_ring(label) for label in LABELS),
}
CLOCK_PARTS: dict[str, set[str]] = {
    "health": {HEALTH, TIME_SYNCED, STORAGE, FIRMWARE},
    "health.status": {HEALTH},
    "health.firmware": {FIRMWARE},
    "health.time_synced": {TIME_SYNCED},
    "settings": {DISMISSAL, MAX_VOLUME},
    "settings.max_volume": {MAX_VOLUME},
    "settings.timezone": set(),
    "settings.smartphone_dismissal_enabled": {DISMISSAL},
    "active_session": {SESSION, EVENT},
    "recent_sessions": {EVENT},
}
FAILURES = ("domain", "rpc")
ALARM_FIELDS = ("enabled", "next_occurrence", "revision", "label", "days", "time", "vibration")

# Values of any JSON type, but never a usable id (a different id is a different alarm).
_junk = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
_junk = (
    _junk
    | st.lists(_junk, max_size=2)
    | st.dictionaries(st.sampled_from(["x", "label", "state"]), _junk, max_size=2)
)
# An empty list is no deviation: it is a clock saying it has no alarms (or sessions).
_junk = _junk.filter(lambda value: value != [])
_not_an_id = st.none() | st.booleans() | st.just("") | st.lists(st.integers(), max_size=2)
_DELETE = object()


@dataclass(frozen=True)
class Bend:
    """One deviation: in `tool`'s result, at `part` (an alarm label for alarm parts)."""

    tool: str
    part: str
    alarm: str | None
    value: Any  # _DELETE: the key is left out

    def apply(self, data: dict[str, Any]) -> Any:
        if self.part == "":
            return None if self.value is _DELETE else self.value
        target: Any = data
        path = self.part.split(".")
        if path[0] == "alarms" and self.alarm is not None:
            alarms = data["alarms"]
            index = next(i for i, a in enumerate(alarms) if a["label"] == self.alarm)
            if len(path) == 1:
                alarms[index] = None if self.value is _DELETE else self.value
                return data
            target, path = alarms[index], path[1:]
        for key in path[:-1]:
            target = target[key]
        if self.value is _DELETE:
            target.pop(path[-1], None)
        else:
            target[path[-1]] = self.value
        return data


@st.composite
def _bends(draw: st.DrawFn, tool: str) -> Bend:
    value = draw(st.just(_DELETE) | _junk)
    if tool == "get_state":
        kind = draw(st.sampled_from(["root", "clock", "alarms", "alarm", "alarm field"]))
    else:
        kind = draw(st.sampled_from(["root", "alarms", "alarm", "alarm field"]))
    if kind == "root":
        return Bend(tool, "", None, value)
    if kind == "clock":
        return Bend(tool, draw(st.sampled_from(sorted(CLOCK_PARTS))), None, value)
    if kind == "alarms":
        return Bend(tool, "alarms", None, value)
    label = draw(st.sampled_from(sorted(LABELS)))
    if kind == "alarm":
        # The entry itself, or only its id, unreadable.
        if draw(st.booleans()):
            return Bend(tool, "alarms", label, draw(_not_an_id))
        return Bend(tool, "alarms.id", label, draw(st.just(_DELETE) | _not_an_id))
    field = draw(st.sampled_from(ALARM_FIELDS))
    if tool == "list_alarms" and field == "next_occurrence":
        field = "next_occurrences"
    return Bend(tool, f"alarms.{field}", label, value)


def _affected(state_bend: Bend | None, list_bend: Bend | None) -> set[str]:
    """The entities whose value may change under these bends; every other one must not."""
    affected: set[str] = set()
    lost_in_state: set[str] = set()  # alarms get_state sends unreadably
    if state_bend is not None:
        part = state_bend.part
        if part == "":
            affected |= ALL - {_switch(label) for label in LABELS}
            affected -= {_next_ring(label) for label in LABELS}
            lost_in_state = set(LABELS)
        elif part in CLOCK_PARTS:
            affected |= CLOCK_PARTS[part]
        elif part == "alarms" and state_bend.alarm is None:
            lost_in_state = set(LABELS)
        elif part in ("alarms", "alarms.id"):
            lost_in_state = {str(state_bend.alarm)}
        elif part == "alarms.enabled":
            affected.add(_switch(str(state_bend.alarm)))
        elif part == "alarms.next_occurrence":
            affected |= {_next_ring(str(state_bend.alarm)), NEXT_ALARM}
    if not lost_in_state:
        return affected  # list_alarms only adds details (attributes)
    lost_in_list: set[str] = set()
    if list_bend is not None:
        part = list_bend.part
        if part == "" or (part == "alarms" and list_bend.alarm is None):
            lost_in_list = set(LABELS)
        elif part in ("alarms", "alarms.id"):
            lost_in_list = {str(list_bend.alarm)}
        elif list_bend.alarm in lost_in_state and part == "alarms.enabled":
            affected.add(_switch(str(list_bend.alarm)))
        elif list_bend.alarm in lost_in_state and part == "alarms.next_occurrences":
            affected |= {_next_ring(str(list_bend.alarm)), NEXT_ALARM}
    for label in lost_in_state & lost_in_list:
        affected |= {_switch(label), _next_ring(label), NEXT_ALARM}
    return affected


def _reshape(bends: list[Bend]) -> Callable[[str, Any], Any]:
    def reshape(tool: str, data: Any) -> Any:
        for bend in bends:
            if bend.tool == tool:
                data = bend.apply(copy.deepcopy(data))
        return data

    return reshape


@pytest.fixture
async def calm_sim(sim_factory: SimFactory) -> Sim:
    """The simulated clock stands still, so its per-minute budget would never refill."""
    return await sim_factory(rate_limit=None)


async def test_variations_degrade_values_never_the_entry(
    hass: HomeAssistant, calm_sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """Variations of the clock's replies, and failing reads, degrade values, never the entry.

    A failing list_alarms takes down only what it feeds (the alarms, when get_state's own list
    is unreadable too); a failing get_state, which feeds everything, every entity until the
    next poll.
    """
    sim = calm_sim
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    coordinator = entry.runtime_data.coordinator
    loop = asyncio.get_running_loop()

    def states() -> dict[str, str | None]:
        return {entity_id: getattr(hass.states.get(entity_id), "state", None) for entity_id in ALL}

    baseline = states()
    assert None not in baseline.values()
    assert baseline[SESSION] == "idle"
    assert baseline[_switch("Weekdays")] == "on"
    seen: list[tuple[str, str]] = []

    async def poll(
        bends: list[Bend], failure: tuple[str, str] | None
    ) -> tuple[bool, ConfigEntryState, dict[str, str | None]]:
        sim.device.reshape = _reshape(bends)
        sim.device.failing_tools = dict([failure]) if failure else {}
        try:
            await coordinator.async_refresh()
            await hass.async_block_till_done()
            return coordinator.last_update_success, entry.state, states()
        finally:
            sim.device.reshape = None
            sim.device.failing_tools = {}

    async def restore() -> dict[str, str | None]:
        await coordinator.async_refresh()
        await hass.async_block_till_done()
        return states()

    @settings(
        max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(
        state_bend=st.none() | _bends("get_state"),
        list_bend=st.none() | _bends("list_alarms"),
        # Which read fails, in which of 50-002's two failure shapes.
        failure=st.none()
        | st.tuples(st.sampled_from(["get_state", "list_alarms"]), st.sampled_from(FAILURES)),
    )
    def check(
        state_bend: Bend | None, list_bend: Bend | None, failure: tuple[str, str] | None
    ) -> None:
        bends = [bend for bend in (state_bend, list_bend) if bend is not None]
        result = asyncio.run_coroutine_threadsafe(poll(bends, failure), loop).result()
        ok, entry_state, now = result
        assert entry_state is ConfigEntryState.LOADED
        if failure is not None and failure[0] == "get_state":
            # get_state feeds every entity: all unavailable, none removed, back on the next poll.
            assert not ok
            assert set(now.values()) == {STATE_UNAVAILABLE}, (failure, now)
            assert asyncio.run_coroutine_threadsafe(restore(), loop).result() == baseline
            seen.append(("get_state failed", STATE_UNAVAILABLE))
            return
        assert ok, (bends, failure)
        if failure is not None:
            # list_alarms failing is its list unreadable: it feeds only the alarms.
            list_bend = Bend("list_alarms", "", None, _DELETE)
        affected = _affected(state_bend, list_bend)
        for entity_id in ALL:
            assert now[entity_id] is not None, (entity_id, bends)  # never removed
            if entity_id not in affected:
                assert now[entity_id] == baseline[entity_id], (entity_id, bends)
        seen.extend((entity_id, str(now[entity_id])) for entity_id in affected)
        assert asyncio.run_coroutine_threadsafe(restore(), loop).result() == baseline

    await hass.async_add_executor_job(check)
    # The examples reached both kinds of degradation.
    degraded = {state for _, state in seen}
    assert STATE_UNKNOWN in degraded
    assert STATE_UNAVAILABLE in degraded


async def test_get_state_without_an_alarm_list(
    hass: HomeAssistant,
    sim: Sim,
    frozen: FrozenDateTimeFactory,
    caplog: pytest.LogCaptureFixture,
    entry: MockConfigEntry,
) -> None:
    """list_alarms stands in; the deviation is logged once, however often the clock repeats it."""

    def without_alarms(tool: str, data: Any) -> Any:
        if tool == "get_state":
            return {key: value for key, value in data.items() if key != "alarms"}
        return data

    sim.device.reshape = without_alarms
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            await advance(hass, frozen, sim, 5)
    assert entry.state is ConfigEntryState.LOADED
    assert hass.states.get(SESSION).state == "idle"
    assert hass.states.get(_switch("Weekdays")).state == "on"
    assert hass.states.get(_next_ring("Weekdays")).state == "2026-11-30T05:45:00+00:00"
    warnings = [r.getMessage() for r in caplog.records if "does not fit the model" in r.message]
    assert warnings == [
        "The clock's get_state reply does not fit the model this integration assumes "
        "(get_state: alarms is missing, not a list); that value shows as unknown"
    ]
    # An alarm deleted on the clock meanwhile goes: list_alarms is the whole truth now.
    sim.device.remove_alarm(sim.alarm_id("Weekend"))
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(_switch("Weekend")) is None


async def test_no_readable_alarm_list_anywhere(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Alarm entities go unavailable (not removed); the clock's own entities keep their values."""
    sim.device.reshape = lambda tool, data: (
        {key: value for key, value in data.items() if key != "alarms"}
        if tool in ("get_state", "list_alarms")
        else data
    )
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(_switch("Weekdays")).state == STATE_UNAVAILABLE
    assert hass.states.get(_next_ring("Weekend")).state == STATE_UNAVAILABLE
    assert hass.states.get(SESSION).state == "idle"
    assert hass.states.get(MAX_VOLUME).state == "85"
    sim.device.reshape = None
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(_switch("Weekdays")).state == "on"


async def test_an_unknown_session_state(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """A state our model does not know: the session sensor is unknown, nothing fires."""
    sim.device.trigger(sim.alarm_id("Weekdays"))

    def paused(tool: str, data: Any) -> Any:
        if tool == "get_state" and data.get("active_session"):
            data["active_session"]["state"] = "paused"
        return data

    sim.device.reshape = paused
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == STATE_UNKNOWN
    assert hass.states.get(EVENT).state == STATE_UNKNOWN
    assert hass.states.get(_switch("Weekdays")).state == "on"
    sim.device.reshape = None
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "ringing"


async def test_enabled_that_is_not_a_boolean(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """An `enabled` that is not a boolean leaves that switch unknown, the rest intact."""

    def yes(tool: str, data: Any) -> Any:
        for alarm in data.get("alarms", []):
            if alarm["label"] == "Weekend":
                alarm["enabled"] = "yes"
        return data

    sim.device.reshape = yes
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(_switch("Weekend")).state == STATE_UNKNOWN
    assert hass.states.get(_next_ring("Weekend")).state != STATE_UNAVAILABLE
    assert hass.states.get(_switch("Weekdays")).state == "on"


@pytest.mark.parametrize(
    ("zone", "shown"),
    [
        ("Europe", "Europe"),  # a directory of tzdata, not a zone
        ("Europe/" + "x" * 293, None),  # longer than any file name or HA state
        ("../../etc/passwd", "../../etc/passwd"),
    ],
)
async def test_a_time_zone_that_is_no_zone(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, zone: str, shown: str | None
) -> None:
    """settings.timezone is free text: a name that is no zone degrades that value only.

    Times keep their offsets, so they stay right; the entry loads and keeps polling.
    """
    sim.device.timezone = zone
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    coordinator = entry.runtime_data.coordinator
    # The time zone sensor (disabled by default) shows the text, or unknown when too long.
    assert coordinator.data.state.settings.timezone == shown
    assert entry.runtime_data.api.clock_tz is None  # times shown in Home Assistant's zone
    assert hass.states.get(_next_ring("Weekdays")).state == "2026-11-30T05:45:00+00:00"
    assert hass.states.get(SESSION).state == "idle"
    sim.device.timezone = "Europe/Berlin"
    await advance(hass, frozen, sim, 5)
    assert coordinator.last_update_success
    assert coordinator.data.state.settings.timezone == "Europe/Berlin"
    assert entry.runtime_data.api.clock_tz is not None
