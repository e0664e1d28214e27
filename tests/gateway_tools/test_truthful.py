"""set_state says what really happened, per entity; the logbook records only what was sent."""

from __future__ import annotations

import asyncio
from typing import Any

from homeassistant.core import Event, HomeAssistant, State, callback, is_callback
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    async_capture_events,
)

from custom_components.mcp_gateway.gateway.catalog.store import ToolFailure
from custom_components.mcp_gateway.gateway.tools import set_state as set_state_module
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state, expectation
from custom_components.mcp_gateway.permissions.policy import EVENT_GATEWAY_WRITE
from tests.results import result_data

from .conftest import Ctx, FakeRuntime

PLUG, LAMP = "switch.kitchen_plug", "light.desk_lamp"


def _writes(hass: HomeAssistant) -> list[Event]:
    return async_capture_events(hass, EVENT_GATEWAY_WRITE)


async def _make_lamp_unavailable(hass: HomeAssistant, runtime: FakeRuntime) -> None:
    """The lamp's device stops answering: still an entity, its native object gone."""
    runtime.coordinator.async_set_updated_data(
        {key: thing for key, thing in runtime.things.items() if key != "2"}
    )
    await hass.async_block_till_done()
    state = hass.states.get(LAMP)
    assert state is not None
    assert state.state == "unavailable"


async def test_unavailable_entity_fails_and_nothing_is_logged(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """HA would skip an unavailable entity and call it success; set_state says it failed."""
    runtime: FakeRuntime = fake_entry.runtime_data
    await _make_lamp_unavailable(hass, runtime)
    writes = _writes(hass)
    result = await async_set_state(
        hass,
        Ctx(user=hass_admin_user),
        {"updates": [{"entity_id": PLUG, "state": "on"}, {"entity_id": LAMP, "state": "on"}]},
    )
    await hass.async_block_till_done()
    assert result["updated"] == 1
    assert result["failed"] == 1
    lamp = next(r for r in result["results"] if r["entity_id"] == LAMP)
    assert lamp["ok"] is False
    assert lamp["status"] == "failed"
    assert "Desk lamp is unavailable" in lamp["error"]
    assert "nothing was sent" in lamp["error"]
    plug = next(r for r in result["results"] if r["entity_id"] == PLUG)
    assert plug == {"entity_id": PLUG, "ok": True, "status": "done", "state": "on"}
    # Only the plug's write happened, so only it is in the logbook.
    assert [event.data["entity_id"] for event in writes] == [PLUG]


async def test_all_unavailable_is_an_error(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Nothing applied: an error result, not ok."""
    await _make_lamp_unavailable(hass, fake_entry.runtime_data)
    with pytest.raises(ToolFailure, match="No update was applied: Desk lamp is unavailable"):
        await async_set_state(
            hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": LAMP, "state": "on"}]}
        )


async def test_state_that_does_not_follow_is_not_confirmed(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The backend acknowledged, the state stayed off: "sent, not confirmed", not updated."""
    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 0.0)
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.ignore_writes = True
    writes = _writes(hass)
    result = await async_set_state(
        hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
    )
    await hass.async_block_till_done()
    assert result["updated"] == 0
    assert result["failed"] == 0
    assert result["not_confirmed"] == 1
    (item,) = result["results"]
    assert item["ok"] is False
    assert item["status"] == "sent_not_confirmed"
    assert item["state"] == "off"
    assert "Sent, not confirmed: Kitchen plug" in item["note"]
    (event,) = writes
    assert event.data["summary"].endswith("(sent, not confirmed)")


async def test_wait_that_ends_without_the_state_is_not_confirmed(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """set_state waits for the state, and when the wait runs out it says so."""
    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 0.05)
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.ignore_writes = True
    result = await async_set_state(
        hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
    )
    (item,) = result["results"]
    assert item["status"] == "sent_not_confirmed"
    assert item["state"] == "off"


async def test_entity_without_a_state_is_sent_nothing(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """An entity HA holds no state for (not yet written) fails by its id; nothing is sent."""
    runtime: FakeRuntime = fake_entry.runtime_data
    hass.states.async_remove(PLUG)
    with pytest.raises(ToolFailure, match=f"{PLUG} is unavailable") as failure:
        await async_set_state(
            hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
        )
    assert failure.value.code == "failed"
    assert runtime.things["1"].on is False


def _plug_catches_up_later(hass: HomeAssistant, runtime: FakeRuntime) -> None:
    """The plug ignores the write itself, then reports "on" just after the service call."""
    runtime.ignore_writes = True

    @callback
    def _device_catches_up(event: Event) -> None:
        if event.data.get("service") == "turn_on":
            runtime.things["1"].on = True
            hass.loop.call_soon(runtime.coordinator.async_update_listeners)

    hass.bus.async_listen("call_service", _device_catches_up)


async def test_state_that_follows_later_is_confirmed(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A state change that arrives during the wait confirms the update."""
    _plug_catches_up_later(hass, fake_entry.runtime_data)
    result = await async_set_state(
        hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
    )
    assert result["results"][0]["status"] == "done"
    assert result["updated"] == 1


async def test_the_wait_wakes_in_the_event_loop(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The state listener is a callback: HA runs it in the loop, so the change wakes the wait.

    A plain function would run in an executor thread, where waking an asyncio waiter is not
    thread-safe (debug mode refuses it, and the wait then lasts its whole deadline).
    """
    listeners: list[Any] = []
    track = set_state_module.async_track_state_change_event

    def _spy(hass: HomeAssistant, entity_ids: Any, action: Any) -> Any:
        listeners.append(action)
        return track(hass, entity_ids, action)

    monkeypatch.setattr(set_state_module, "async_track_state_change_event", _spy)
    # Long enough that only the change itself, not the deadline, can end the wait in time.
    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 120.0)
    _plug_catches_up_later(hass, fake_entry.runtime_data)
    async with asyncio.timeout(30):
        result = await async_set_state(
            hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
        )
    assert result["results"][0]["status"] == "done"
    assert listeners
    assert all(is_callback(action) for action in listeners)


def _state(value: str, **attributes: Any) -> State:
    return State("cover.x", value, attributes)


@pytest.mark.parametrize(
    ("domain", "update", "state", "outcome"),
    [
        ("light", {"state": "on"}, _state("on"), "done"),
        ("light", {"brightness_pct": 40}, _state("off"), None),
        ("cover", {"state": "open"}, _state("opening"), "in_progress"),
        ("cover", {"state": "closed"}, _state("closed"), "done"),
        ("cover", {"position": 40}, _state("open", current_position=40), "done"),
        ("cover", {"position": 40}, _state("opening", current_position=20), "in_progress"),
        ("lock", {"state": "open"}, _state("unlocked"), "done"),
        ("lock", {"state": "locked"}, _state("locking"), "in_progress"),
        ("climate", {"temperature": 21}, _state("heat", temperature=21.0), "done"),
        ("climate", {"hvac_mode": "cool"}, _state("heat"), None),
        ("number", {"value": "5"}, _state("5.0"), "done"),
        ("number", {"value": "5"}, _state("unknown"), None),
        ("climate", {"temperature": 21}, _state("heat"), None),
        ("select", {"value": "Away"}, _state("Home"), None),
        ("alarm_control_panel", {"state": "armed_away"}, _state("arming"), "in_progress"),
    ],
)
def test_expectations(
    domain: str, update: dict[str, Any], state: State, outcome: str | None
) -> None:
    """What counts as done, as on its way, or as not (yet) shown."""
    before = _state("unknown")
    assert expectation(domain, update, before)(state) == outcome


def test_expectation_without_a_target_wants_a_new_state() -> None:
    """A button press or scene shows as a new state (its timestamp), nothing else to compare."""
    before = State("button.x", "2026-01-01T00:00:00+00:00")
    check = expectation("button", {"state": "pressed"}, before)
    assert check(before) is None
    assert check(State("button.x", "2026-01-01T00:00:05+00:00")) == "done"


async def test_backend_call_on_an_offline_device_says_so(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """The backend answers ok; HA sees the device offline: the answer carries a note."""
    from custom_components.mcp_gateway.gateway.handler import GatewayHandler

    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.coordinator.async_set_updated_data(
        {key: thing for key, thing in runtime.things.items() if key != "1"}
    )
    await hass.async_block_till_done()
    handler = GatewayHandler(hass)
    result = await handler.call_tool(
        Ctx(user=hass_admin_user),
        "hubitat_test_hub",
        {"tool": "switch_thing", "args": {"device": "1", "on": True}},
    )
    assert result["isError"] is False
    # The backend's answer stays as it was; the note follows it as text the model reads.
    assert result_data(result) == {"ok": True, "tool": "switch_thing"}
    note = result["content"][-1]["text"]
    assert note.startswith("Kitchen plug is unavailable in Home Assistant")
    # A device HA sees online gets the backend's answer unchanged.
    online = await handler.call_tool(
        Ctx(user=hass_admin_user),
        "hubitat_test_hub",
        {"tool": "get_thing", "args": {"device": "2"}},
    )
    assert len(online["content"]) == 1
    assert "unavailable" not in online["content"][0]["text"]
