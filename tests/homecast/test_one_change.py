"""One write, one state change: a Homecast read from before HomeKit applied it never undoes it.

The relay answers set_state before HomeKit applied the write (src/server/homekit-write.ts
executeHomeKitWrite; the simulator holds writes until the test flushes them): a poll in between,
or one sent before the write and answered after it, still reads the old value.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.const import ATTR_ENTITY_ID, EVENT_STATE_CHANGED, Platform
from homeassistant.core import Event, HomeAssistant, callback
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast import coordinator as coordinator_module
from custom_components.mcp_gateway.backends.homecast.runtime import HomecastRuntime

from .conftest import Sim, SimFactory, device_of, entity_id, setup_entry, token_entry


class _States:
    """Every state change of one entity, in order: its state, or for a thermostat its target
    temperature."""

    def __init__(self, hass: HomeAssistant, entity: str) -> None:
        self.seen: list[Any] = []

        @callback
        def _record(event: Event[Any]) -> None:
            if event.data["entity_id"] == entity and (new := event.data["new_state"]) is not None:
                climate = entity.startswith("climate.")
                self.seen.append(new.attributes.get("temperature") if climate else new.state)

        self.stop = hass.bus.async_listen(EVENT_STATE_CHANGED, _record)


@dataclass(frozen=True)
class Case:
    """An accessory kind, its entity, its values before, a service call, the changes wanted."""

    kind: str
    suffix: str
    platform: Platform
    before: dict[str, Any]
    service: tuple[str, dict[str, Any]]
    wanted: list[Any]
    match: dict[str, Any] | None = None


CASES = [
    Case(
        "lock",
        "lock",
        Platform.LOCK,
        {"locked": True, "lock_target": True},
        ("unlock", {}),
        ["unlocked"],
    ),
    Case("switch", "switch", Platform.SWITCH, {"on": False}, ("turn_on", {}), ["on"]),
    Case(
        "light",
        "light",
        Platform.LIGHT,
        {"on": False, "brightness": 20},
        ("turn_on", {"brightness_pct": 60}),
        ["on"],
    ),
    Case(
        "blind",
        "cover",
        Platform.COVER,
        {"current_position": 0, "target": 0, "position_state": 2},
        ("open_cover", {}),
        ["open"],
    ),
    Case(
        "climate",
        "climate",
        Platform.CLIMATE,
        {"cool_target": 22.0, "current_temp": 25.0},
        ("set_temperature", {"temperature": 20.5}),
        [20.5],
        {"hvac_mode": None},
    ),
]
IDS = [case.kind for case in CASES]


async def _prepare(
    hass: HomeAssistant, sim: Sim, case: Case
) -> tuple[MockConfigEntry, HomecastRuntime, str]:
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    runtime: HomecastRuntime = entry.runtime_data
    acc = device_of(sim, case.kind, **(case.match or {}))
    acc.values.update(case.before)
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    return entry, runtime, entity_id(hass, entry, sim, acc, case.suffix)


async def _call(hass: HomeAssistant, case: Case, entity: str) -> None:
    service, data = case.service
    await hass.services.async_call(
        case.platform, service, {ATTR_ENTITY_ID: entity, **data}, blocking=True
    )


async def _refresh(hass: HomeAssistant, runtime: HomecastRuntime) -> None:
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_a_poll_before_homekit_applied_the_write(
    hass: HomeAssistant, sim_factory: SimFactory, case: Case
) -> None:
    """Write, poll (HomeKit has not applied it), HomeKit applies it, poll: one change."""
    sim = await sim_factory(write_delay=30)
    _entry, runtime, entity = await _prepare(hass, sim, case)
    states = _States(hass, entity)
    await _call(hass, case, entity)
    assert sim.state.pending_writes == 1
    await _refresh(hass, runtime)
    sim.state.flush()
    await _refresh(hass, runtime)
    states.stop()
    assert states.seen == case.wanted


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_a_poll_answered_after_the_write(
    hass: HomeAssistant, sim_factory: SimFactory, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    """A poll reads the home, the write goes out and lands, then the poll's answer arrives
    (with the old value); the next poll reads the new one: one change in all."""
    sim = await sim_factory(write_delay=0)
    _entry, runtime, entity = await _prepare(hass, sim, case)
    api = runtime.coordinator.api
    reading = api.async_get_state_raw
    answered, release = asyncio.Event(), asyncio.Event()

    async def held(*args: Any) -> Any:
        data = await reading(*args)
        answered.set()
        await release.wait()
        return data

    states = _States(hass, entity)
    monkeypatch.setattr(api, "async_get_state_raw", held)
    racing = asyncio.get_running_loop().create_task(runtime.coordinator.async_refresh())
    await answered.wait()
    monkeypatch.setattr(api, "async_get_state_raw", reading)
    await _call(hass, case, entity)
    release.set()
    await racing
    await hass.async_block_till_done()
    await _refresh(hass, runtime)
    states.stop()
    assert states.seen == case.wanted


async def test_a_write_homekit_never_applies_is_corrected_once(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """Within the window a read showing the old value keeps the written one; after it the
    read wins: two changes, both real. The window is read on HA's clock, held still here so
    that a slow machine cannot end it early."""
    sim = await sim_factory(write_delay=30)
    case = CASES[1]
    _entry, runtime, entity = await _prepare(hass, sim, case)
    states = _States(hass, entity)
    await _call(hass, case, entity)
    await _refresh(hass, runtime)
    assert hass.states.get(entity).state == "on"  # type: ignore[union-attr]
    freezer.tick(coordinator_module.REPORT_WINDOW + timedelta(seconds=1))
    await _refresh(hass, runtime)
    states.stop()
    assert states.seen == ["on", "off"]
    sim.state.flush()  # HomeKit gets to it after all: no timer of the relay outlives the test
