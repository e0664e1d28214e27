"""What needs HA's recorder: get_history over a fake backend's entities, and the logbook line."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.recorder import Recorder
from homeassistant.core import Event, HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    mock_component,
)
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_purge_done,
    async_wait_recording_done,
)

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway.catalog.store import ToolFailure
from custom_components.mcp_gateway.gateway.tools.get_history import (
    COVERAGE_NOTE,
    EXCLUDED,
    NOTHING_HELD,
    async_get_history,
)
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.permissions.policy import (
    EVENT_GATEWAY_WRITE,
    async_record_write,
)

from .conftest import Ctx

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(
    recorder_mock: Recorder, enable_custom_integrations: None
) -> None:
    """The recorder must start before hass: request it ahead of the shared autouse fixture."""


async def test_history_of_backend_entities(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    freezer: FrozenDateTimeFactory,
) -> None:
    """State changes made through the gateway come back from the recorder, oldest first."""
    ctx = Ctx(user=hass_admin_user)
    for state in ("on", "off", "on"):
        freezer.tick(timedelta(minutes=1))
        await async_set_state(hass, ctx, {"updates": [{"entity_id": PLUG, "state": state}]})
    freezer.tick(timedelta(seconds=1))
    await async_wait_recording_done(hass)
    result = await async_get_history(hass, ctx, {"entity_ids": [PLUG], "hours": 1})
    points = result["entities"][PLUG]["points"]
    assert [state for _, state in points] == ["off", "on", "off", "on"]
    times = [dt_util.parse_datetime(when) for when, _ in points]
    assert times == sorted(times)

    limited = await async_get_history(hass, ctx, {"entity_ids": [PLUG], "hours": 1, "limit": 2})
    assert limited["entities"][PLUG] == {
        "count": 4,
        "points": points[-2:],
        "truncated": True,
        "recorded_from": points[0][0],
    }


async def test_history_states_from_when_the_recorder_holds_data(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    freezer: FrozenDateTimeFactory,
) -> None:
    """The recorder started with Home Assistant, after the asked start: the answer says
    from when it holds each entity, so an empty stretch cannot read as "nothing happened".
    A window it holds whole says nothing of the kind. A backend without a history of its
    own (the fake one) is offered no call."""
    ctx = Ctx(user=hass_admin_user)
    await async_wait_recording_done(hass)
    started = dt_util.utcnow()
    freezer.tick(timedelta(minutes=20))
    answer = await async_get_history(hass, ctx, {"entity_ids": [PLUG, THERMO], "hours": 1})
    assert answer["coverage"] == COVERAGE_NOTE
    assert list(answer) == ["start", "end", "coverage", "entities"]
    for entity_id in (PLUG, THERMO):
        entity = answer["entities"][entity_id]
        held_from = dt_util.parse_datetime(entity["recorded_from"])
        assert held_from is not None
        assert abs(held_from - started) < timedelta(seconds=5)
        assert entity["recorded_from"] == entity["points"][0][0]
        assert "backend_history" not in entity
    # Each entity carries its unit, as get_state shows it; the level reads the same.
    assert answer["entities"][THERMO]["unit"] == "°C"
    assert answer["entities"][THERMO]["points"][-1][1] == hass.states.get(THERMO).state
    assert "unit" not in answer["entities"][PLUG]

    freezer.tick(timedelta(hours=2))
    whole = await async_get_history(hass, ctx, {"entity_ids": [PLUG], "hours": 1})
    assert "coverage" not in whole
    assert whole["entities"][PLUG]["points"][0][0] == whole["start"]
    assert "recorded_from" not in whole["entities"][PLUG]

    # A window wholly before the recorder started: nothing held, said so.
    before = await async_get_history(
        hass,
        ctx,
        {
            "entity_ids": [PLUG],
            "start": (started - timedelta(days=2)).isoformat(),
            "end": (started - timedelta(days=1)).isoformat(),
        },
    )
    assert before["entities"][PLUG]["not_recorded"] == NOTHING_HELD
    assert before["entities"][PLUG]["count"] == 0


async def test_history_after_a_purge_says_what_is_left(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    freezer: FrozenDateTimeFactory,
) -> None:
    """Purged states are gone from the recorder: the answer says from when it holds data."""
    ctx = Ctx(user=hass_admin_user)
    await async_wait_recording_done(hass)
    freezer.tick(timedelta(days=3))
    await async_set_state(hass, ctx, {"updates": [{"entity_id": PLUG, "state": "on"}]})
    changed = dt_util.utcnow()
    freezer.tick(timedelta(minutes=5))
    await async_wait_recording_done(hass)
    await hass.services.async_call(
        "recorder", "purge", {"keep_days": 1, "repack": False}, blocking=True
    )
    await async_wait_purge_done(hass)
    answer = await async_get_history(hass, ctx, {"entity_ids": [PLUG, LAMP], "hours": 72})
    plug = answer["entities"][PLUG]
    held_from = dt_util.parse_datetime(plug["recorded_from"])
    assert held_from is not None
    assert abs(held_from - changed) < timedelta(seconds=5)
    assert [state for _, state in plug["points"]] == ["on"]
    assert answer["coverage"] == COVERAGE_NOTE
    # The lamp's states were all purged, but it has not changed since before the window:
    # HA's state machine says so, and the window is known whole.
    lamp = answer["entities"][LAMP]
    assert lamp == {"count": 1, "points": [[answer["start"], "off"]]}


@pytest.mark.parametrize("recorder_config", [{"exclude": {"entities": [LAMP]}}])
async def test_history_of_an_excluded_entity_says_so(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    freezer: FrozenDateTimeFactory,
) -> None:
    """An entity excluded from the recorder has no history there, and the answer says why;
    once it has held its state since before the window, HA's state machine tells it whole."""
    await async_wait_recording_done(hass)
    answer = await async_get_history(
        hass, Ctx(user=hass_admin_user), {"entity_ids": [LAMP, PLUG], "hours": 1}
    )
    assert answer["entities"][LAMP] == {"count": 0, "points": [], "not_recorded": EXCLUDED}
    assert answer["coverage"] == COVERAGE_NOTE
    assert answer["entities"][PLUG]["count"] == 1
    freezer.tick(timedelta(hours=2))
    later = await async_get_history(
        hass, Ctx(user=hass_admin_user), {"entity_ids": [LAMP], "hours": 1}
    )
    assert later["entities"][LAMP] == {"count": 1, "points": [[later["start"], "off"]]}
    assert "coverage" not in later


async def test_history_window_and_filters(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """start/end and the get_state filters apply; bad windows are clear errors."""
    ctx = Ctx(user=hass_admin_user)
    await async_wait_recording_done(hass)
    now = dt_util.utcnow()
    result = await async_get_history(
        hass,
        ctx,
        {
            "domain": ["sensor"],
            "start": (now - timedelta(hours=2)).isoformat(),
            "end": (now + timedelta(minutes=1)).isoformat(),
        },
    )
    assert list(result["entities"]) == [THERMO]
    assert result["entities"][THERMO]["points"][-1][1] == "20.5"
    # fixed date: a window opening long ago holds now whatever the date
    naive = await async_get_history(
        hass, ctx, {"entity_ids": [THERMO], "start": "2020-01-01T00:00:00"}
    )
    assert naive["start"].startswith("2020-01-01T00:00:00")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"start": "yesterday"}, "start is not an ISO 8601 date-time"),
        # Well-formed but impossible: month 13.
        ({"end": "2026-13-01T00:00:00+00:00"}, "end is not an ISO 8601 date-time"),
        # A window reaching before year 1 cannot be computed.
        ({"end": "0001-01-01T06:00:00+00:00", "hours": 24}, "end is too early"),
        (
            {"start": now.isoformat(), "end": (now - timedelta(hours=1)).isoformat()},
            "start must be before end",
        ),
        ({"name": "nothing-matches"}, "No entity matches these filters"),
        # An empty answer names what exists.
        ({"name": "desk lmp"}, "Closest names: Desk lamp"),
    ]
    for args, message in cases:
        with pytest.raises(ToolFailure, match=message):
            await async_get_history(hass, ctx, args)


async def test_history_only_for_readable_entities(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """An entity the user may not read has no history for them."""
    hass_user.mock_policy({"entities": {"entity_ids": {LAMP: True}}})
    await async_wait_recording_done(hass)
    result = await async_get_history(hass, Ctx(user=hass_user), {})
    assert list(result["entities"]) == [LAMP]


async def test_history_refuses_too_many_entities(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broad query asks for narrower filters instead of flooding the answer."""
    from custom_components.mcp_gateway.gateway.tools import get_history

    monkeypatch.setattr(get_history, "MAX_HISTORY_ENTITIES", 2)
    with pytest.raises(ToolFailure, match="3 entities match; narrow") as err:
        await async_get_history(hass, Ctx(user=hass_admin_user), {})
    assert err.value.code == "too_many"


async def test_record_write_reaches_the_logbook(
    hass: HomeAssistant, hass_admin_user: MockUser
) -> None:
    """HA's logbook loads our logbook platform and describes the event: who, which client, what."""
    mock_component(hass, "frontend")
    assert await async_setup_component(hass, DOMAIN, {})
    assert await async_setup_component(hass, "logbook", {})
    await hass.async_block_till_done()
    events: list[Event] = []
    hass.bus.async_listen(EVENT_GATEWAY_WRITE, events.append)
    async_record_write(
        hass,
        user=hass_admin_user,
        client_name=None,
        tool="set_state",
        summary="switch.a: state=on",
        success=False,
        backend="hubitat_home",
        entity_id="switch.a",
    )
    await hass.async_block_till_done()
    assert len(events) == 1
    event = events[0]
    assert event.context.user_id == hass_admin_user.id
    domain, describe = hass.data["logbook"].external_events[EVENT_GATEWAY_WRITE]
    assert domain == DOMAIN

    class Lazy:
        data = event.data

    assert describe(Lazy()) == {
        "name": "MCP gateway (hubitat_home)",
        "message": "Mock User via unknown client: switch.a: state=on (failed)",
        "entity_id": "switch.a",
    }


async def test_history_without_recorder_is_a_clear_error(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Should the recorder be off, the tool says so instead of failing obscurely."""
    hass.config.components.remove("recorder")
    with pytest.raises(ToolFailure, match="recorder is not running"):
        await async_get_history(hass, Ctx(user=hass_admin_user), {})
    hass.config.components.add("recorder")
