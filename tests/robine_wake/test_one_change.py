"""One write, one state change: a poll read before an alarm write never undoes it."""

from __future__ import annotations

import asyncio
from typing import Any

from homeassistant.components.switch import DOMAIN as SWITCH_DOMAIN
from homeassistant.const import ATTR_ENTITY_ID, EVENT_STATE_CHANGED, SERVICE_TURN_OFF
from homeassistant.core import Event, HomeAssistant, callback
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import Sim

WEEKEND = "switch.bedroom_clock_weekend"


def _states(hass: HomeAssistant, entity: str) -> tuple[list[str], Any]:
    seen: list[str] = []

    @callback
    def _record(event: Event[Any]) -> None:
        if event.data["entity_id"] == entity and (new := event.data["new_state"]) is not None:
            seen.append(new.state)

    return seen, hass.bus.async_listen(EVENT_STATE_CHANGED, _record)


async def _racing_poll(
    hass: HomeAssistant, entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch, write: Any
) -> None:
    """A poll reads the clock, the write goes out and is answered, then the poll's answer
    arrives (read before the write); then a poll reads the clock again."""
    coordinator = entry.runtime_data.coordinator
    reading = coordinator.api.get_state
    answered, release = asyncio.Event(), asyncio.Event()

    async def held() -> Any:
        state = await reading()
        answered.set()
        await release.wait()
        return state

    monkeypatch.setattr(coordinator.api, "get_state", held)
    racing = asyncio.get_running_loop().create_task(coordinator.async_refresh())
    await answered.wait()
    monkeypatch.setattr(coordinator.api, "get_state", reading)
    await write
    release.set()
    await racing
    await hass.async_block_till_done()
    await coordinator.async_refresh()
    await hass.async_block_till_done()


async def test_switch_write_racing_a_poll_changes_once(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poll's older revision of the alarm does not turn the switch back on."""
    assert hass.states.get(WEEKEND).state == "on"  # type: ignore[union-attr]
    seen, stop = _states(hass, WEEKEND)
    await _racing_poll(
        hass,
        entry,
        monkeypatch,
        hass.services.async_call(
            SWITCH_DOMAIN, SERVICE_TURN_OFF, {ATTR_ENTITY_ID: WEEKEND}, blocking=True
        ),
    )
    stop()
    assert seen == ["off"]
    assert sim.device.alarms[sim.alarm_id("Weekend")].enabled is False


async def test_delete_racing_a_poll_removes_once(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The poll's list from before the delete does not bring the alarm back."""
    seen, stop = _states(hass, WEEKEND)
    await _racing_poll(
        hass,
        entry,
        monkeypatch,
        hass.services.async_call(
            DOMAIN,
            "delete_alarm",
            {
                "config_entry_id": entry.entry_id,
                "alarm_id": sim.alarm_id("Weekend"),
                "revision": sim.device.alarms[sim.alarm_id("Weekend")].revision,
            },
            blocking=True,
        ),
    )
    stop()
    assert seen == []  # removed once (no new state), never back
    assert hass.states.get(WEEKEND) is None
