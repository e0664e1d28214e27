"""Optimistic command effects never outlive a poll that reads the hub disagreeing with them."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.alarm_control_panel import (
    DOMAIN as ALARM_DOMAIN,
    SERVICE_ALARM_ARM_AWAY,
)
from homeassistant.components.cover import DOMAIN as COVER_DOMAIN
from homeassistant.components.select import (
    ATTR_OPTION,
    DOMAIN as SELECT_DOMAIN,
    SERVICE_SELECT_OPTION,
)
from homeassistant.const import ATTR_ENTITY_ID, SERVICE_OPEN_COVER, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_SCAN_INTERVAL,
    MAX_SCAN_INTERVAL,
    SWEEP_INTERVAL,
)
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.gateway.tools import set_state as set_state_module
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from simulators.base import INTERNAL_ERROR, RpcFailure
from simulators.hubitat.devices import Device
from simulators.hubitat.hub import epoch_ms

from .conftest import Sim, SimFactory, entity_id, first, make_entry, poll, setup_entry


async def _closed_shade(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> tuple[Device, str]:
    shade = first(sim, "shade")
    cover = entity_id(hass, sim, f"{shade.id}_shade", "cover")
    sim.hub.set_attribute(shade.id, "windowShade", "closed")
    sim.hub.set_attribute(shade.id, "position", 0)
    await poll(hass, freezer)
    assert hass.states.get(cover).state == "closed"
    return shade, cover


async def test_device_gone_before_it_could_be_confirmed(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    sim: Sim,
    runtime: HubitatRuntime,
) -> None:
    """A commanded device removed from the hub does not fail the poll that reads it."""
    shade, _cover = await _closed_shade(hass, freezer, sim)
    runtime.coordinator.apply(str(shade.id), windowShade="opening")
    sim.hub.remove_device(shade.id)
    await poll(hass, freezer)
    assert runtime.coordinator.last_update_success


# The races below run on real time: the write coalescer's window is a loop timer, which a frozen
# clock would never let fire. The hub's clock is moved instead, and HA polls only when told to.


@pytest.fixture
async def manual_runtime(hass: HomeAssistant, sim: Sim) -> HubitatRuntime:
    """An entry whose interval never comes during a test: each poll is an explicit refresh."""
    return await setup_entry(hass, make_entry(sim, **{CONF_SCAN_INTERVAL: MAX_SCAN_INTERVAL}))


async def refresh(runtime: HubitatRuntime) -> None:
    """One poll, now; entities write their state before it returns.

    No "block till done": the service call of a held action counts as pending work.
    """
    await runtime.coordinator.async_refresh()


async def _answer_held(
    sim: Sim, action: Coroutine[Any, Any, Any]
) -> tuple[asyncio.Event, asyncio.Task[Any]]:
    """Start an action and return once the hub has run its write but still holds the answer.

    The hub's clock moves a second first, so what the write does is newer than any bookmark.
    The action is a plain task: HA's "block till done" must not wait for it.
    """
    sim.hub.clock.advance(1)
    hold = asyncio.Event()
    sim.hub.answer_hold = hold
    task = asyncio.get_running_loop().create_task(action)
    await sim.hub.wait_answers_held(1)
    return hold, task


async def _deliver(sim: Sim, hold: asyncio.Event, task: asyncio.Task[Any]) -> None:
    """Let the held answer reach HA and the action finish (its optimistic effect applies)."""
    sim.hub.answer_hold = None
    hold.set()
    await task


async def test_command_effect_is_a_new_snapshot(
    hass: HomeAssistant, sim: Sim, manual_runtime: HubitatRuntime
) -> None:
    """A command's expected effect replaces the device's record in a new `data` snapshot."""
    shade = first(sim, "shade")
    shade_id = str(shade.id)
    cover = entity_id(hass, sim, f"{shade_id}_shade", "cover")
    sim.hub.set_attribute(shade.id, "windowShade", "closed")
    await refresh(manual_runtime)
    before = manual_runtime.coordinator.data
    assert before.devices[shade_id].attr("windowShade") == "closed"
    await hass.services.async_call(
        COVER_DOMAIN, SERVICE_OPEN_COVER, {ATTR_ENTITY_ID: cover}, blocking=True
    )
    after = manual_runtime.coordinator.data
    assert after.devices[shade_id].attr("windowShade") == "opening"
    assert before.devices[shade_id].attr("windowShade") == "closed"
    assert after.changed == frozenset({shade_id})
    assert hass.states.get(cover).state == "opening"


@dataclass(frozen=True)
class _Caller:
    """What set_state reads of a gateway request: who asks, through which client."""

    user: MockUser
    client_name: str = "pytest-client"


async def test_set_state_reports_a_shade_on_its_way(
    hass: HomeAssistant,
    sim: Sim,
    manual_runtime: HubitatRuntime,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gateway's set_state says "in progress" while the hub reports the shade opening."""
    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 0.9)
    shade = first(sim, "shade")
    cover = entity_id(hass, sim, f"{shade.id}_shade", "cover")
    sim.hub.set_attribute(shade.id, "windowShade", "closed")
    await refresh(manual_runtime)
    # Opening after 0.3 s, open after 1.2 s: the wait ends while the hub says "opening".
    sim.hub.command_delay = 0.3
    result = await async_set_state(
        hass, _Caller(hass_admin_user), {"updates": [{"entity_id": cover, "state": "open"}]}
    )
    (item,) = result["results"]
    assert item["status"] == "in_progress"
    assert item["ok"] is False
    assert item["note"].startswith("Sent; ")
    assert item["note"].endswith(" is still opening.")
    assert result["not_confirmed"] == 1
    await asyncio.sleep(0.4)  # the shade arrives: no timer of the hub outlives the test


async def test_shade_answer_after_a_poll_already_past_its_activity(
    hass: HomeAssistant, sim: Sim, manual_runtime: HubitatRuntime
) -> None:
    """A poll reads the opened shade before the command's answer applies "opening".

    Later activity elsewhere has moved the bookmark past the shade's, so `changedSince` never
    lists the shade again. The answer's expected "opening" is older than the "open" read since
    the command left: it is not shown, and the shade never steps back to "opening".
    """
    shade = first(sim, "shade")
    cover = entity_id(hass, sim, f"{shade.id}_shade", "cover")
    sim.hub.set_attribute(shade.id, "windowShade", "closed")
    sim.hub.set_attribute(shade.id, "position", 0)
    await refresh(manual_runtime)
    assert hass.states.get(cover).state == "closed"
    sensor = first(sim, "water")
    hold, action = await _answer_held(
        sim,
        hass.services.async_call(
            COVER_DOMAIN, SERVICE_OPEN_COVER, {ATTR_ENTITY_ID: cover}, blocking=True
        ),
    )
    assert shade.value("windowShade") == "open"
    # The house goes on: a later sensor report moves the bookmark past the shade's activity.
    sim.hub.clock.advance(5)
    sim.hub.set_attribute(sensor.id, "water", "wet" if sensor.value("water") == "dry" else "dry")
    await refresh(manual_runtime)
    assert hass.states.get(cover).state == "open"
    since = manual_runtime.coordinator.changed_since
    assert since is not None
    assert int(since) >= epoch_ms(shade.last_activity)

    # The answer's "opening" is older than the "open" the poll read: the shade stays open.
    await _deliver(sim, hold, action)
    assert hass.states.get(cover).state == "open"
    await refresh(manual_runtime)
    assert shade.value("windowShade") == "open"
    assert hass.states.get(cover).state == "open"


async def test_hsm_answer_after_a_poll_that_read_the_hub(
    hass: HomeAssistant, sim: Sim, manual_runtime: HubitatRuntime
) -> None:
    """A keypad disarms while the arm command's answer is on its way; a poll reads "disarmed"
    before the answer applies "armed away". No later location event will come: the next poll
    must read HSM because a value of ours is pending.
    """
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    assert hass.states.get(panel).state == "disarmed"
    hold, action = await _answer_held(
        sim,
        hass.services.async_call(
            ALARM_DOMAIN, SERVICE_ALARM_ARM_AWAY, {ATTR_ENTITY_ID: panel}, blocking=True
        ),
    )
    assert sim.hub.hsm_status == "armedAway"
    sim.hub.set_hsm_status("disarmed")
    await refresh(manual_runtime)
    assert hass.states.get(panel).state == "disarmed"

    await _deliver(sim, hold, action)
    assert hass.states.get(panel).state == "arming"
    await refresh(manual_runtime)
    assert hass.states.get(panel).state == "disarmed"


async def test_mode_answer_after_a_poll_that_read_the_hub(
    hass: HomeAssistant, sim: Sim, manual_runtime: HubitatRuntime
) -> None:
    """Another client changes the mode again while our answer is on its way (same race)."""
    select = entity_id(hass, sim, "hub_mode", "select")
    assert hass.states.get(select).state == "Day"
    hold, action = await _answer_held(
        sim,
        hass.services.async_call(
            SELECT_DOMAIN,
            SERVICE_SELECT_OPTION,
            {ATTR_ENTITY_ID: select, ATTR_OPTION: "Night"},
            blocking=True,
        ),
    )
    assert sim.hub.mode_name == "Night"
    sim.hub.set_mode("Evening")
    await refresh(manual_runtime)
    assert hass.states.get(select).state == "Evening"

    await _deliver(sim, hold, action)
    assert hass.states.get(select).state == "Night"
    await refresh(manual_runtime)
    assert hass.states.get(select).state == "Evening"


async def test_hsm_not_confirmed_by_the_hub_is_read_once(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim_factory: SimFactory
) -> None:
    """The hub answers the arm command but has not applied it (no event): the next poll reads
    HSM once and shows the hub's value; once nothing is pending, polls are idle again.
    """
    sim = await sim_factory(command_delay=None)
    await setup_entry(hass, make_entry(sim))
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    await hass.services.async_call(
        ALARM_DOMAIN, SERVICE_ALARM_ARM_AWAY, {ATTR_ENTITY_ID: panel}, blocking=True
    )
    assert hass.states.get(panel).state == "arming"
    sim.stats.reset()
    await poll(hass, freezer)
    assert sim.hub.hsm_status == "disarmed"
    assert hass.states.get(panel).state == "disarmed"
    assert sim.stats.tools["hub_get_hsm_status"] == 1

    sim.stats.reset()
    await poll(hass, freezer)
    assert dict(sim.stats.tools) == {"hub_read_devices": 2}

    # The hub gets to it: its events bring the real states.
    sim.hub.apply_pending()
    await poll(hass, freezer)
    assert hass.states.get(panel).state == "armed_away"


async def test_confirmed_mode_costs_no_extra_read(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    sim: Sim,
    runtime: HubitatRuntime,
) -> None:
    """The mode event the command caused already makes the poll read modes: no second read."""
    select = entity_id(hass, sim, "hub_mode", "select")
    freezer.tick(timedelta(seconds=1))
    await hass.services.async_call(
        SELECT_DOMAIN,
        SERVICE_SELECT_OPTION,
        {ATTR_ENTITY_ID: select, ATTR_OPTION: "Away"},
        blocking=True,
    )
    sim.stats.reset()
    await poll(hass, freezer)
    assert hass.states.get(select).state == "Away"
    assert sim.stats.tools["hub_list_modes"] == 1
    sim.stats.reset()
    await poll(hass, freezer)
    assert dict(sim.stats.tools) == {"hub_read_devices": 2}


async def test_pending_value_outlives_a_failed_read(
    hass: HomeAssistant, sim: Sim, manual_runtime: HubitatRuntime
) -> None:
    """A failed HSM read leaves the value pending (the panel unavailable meanwhile, the rest of
    the hub polled): the poll after reads it."""
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    hold, action = await _answer_held(
        sim,
        hass.services.async_call(
            ALARM_DOMAIN, SERVICE_ALARM_ARM_AWAY, {ATTR_ENTITY_ID: panel}, blocking=True
        ),
    )
    sim.hub.set_hsm_status("disarmed")
    await refresh(manual_runtime)
    await _deliver(sim, hold, action)
    assert hass.states.get(panel).state == "arming"

    async def refuse(args: dict[str, Any]) -> dict[str, Any]:
        raise RpcFailure(INTERNAL_ERROR, "HSM app busy")

    with patch.dict(sim.tools._handlers, {"get_hsm_status": refuse}):
        await refresh(manual_runtime)
    assert manual_runtime.coordinator.last_update_success
    assert hass.states.get(panel).state == STATE_UNAVAILABLE
    await refresh(manual_runtime)
    assert manual_runtime.coordinator.last_update_success
    assert hass.states.get(panel).state == "disarmed"


async def test_sweep_read_of_modes_settles_a_pending_mode(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    sim: Sim,
    runtime: HubitatRuntime,
) -> None:
    """A poll that sweeps reads modes anyway: that read corrects a pending mode, no second one."""
    select = entity_id(hass, sim, "hub_mode", "select")
    # A command's answer whose mode event a poll already consumed; the hub stayed on "Day".
    runtime.coordinator.apply_mode("Night")
    runtime.coordinator.async_update_listeners()
    assert hass.states.get(select).state == "Night"
    sim.stats.reset()
    await poll(hass, freezer, SWEEP_INTERVAL.total_seconds())
    assert sim.stats.tools["hub_list_modes"] == 1
    assert hass.states.get(select).state == "Day"


async def test_set_state_arms_hsm_done_only_once_the_hub_says_armed(
    hass: HomeAssistant,
    sim: Sim,
    manual_runtime: HubitatRuntime,
    hass_admin_user: MockUser,
) -> None:
    """Arming through set_state is done when the hub reports armed, not when it answered."""
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    sim.hub.command_delay = 0.1  # arming after 0.1 s, armed after 0.4 s
    result = await async_set_state(
        hass,
        _Caller(hass_admin_user),
        {"updates": [{"entity_id": panel, "state": "armed_away"}]},
    )
    (item,) = result["results"]
    assert (item["status"], item["state"]) == ("done", "armed_away")
    assert sim.hub.hsm_status == "armedAway"  # the hub said so before the answer did


async def test_set_state_arming_hsm_the_hub_has_not_applied_is_not_done(
    hass: HomeAssistant,
    sim_factory: SimFactory,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hub answered the arm command and still says disarmed: not done, not "armed"."""
    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 0.6)
    sim = await sim_factory(command_delay=None)  # HSM acts only when the test says so
    await setup_entry(hass, make_entry(sim, **{CONF_SCAN_INTERVAL: MAX_SCAN_INTERVAL}))
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    result = await async_set_state(
        hass,
        _Caller(hass_admin_user),
        {"updates": [{"entity_id": panel, "state": "armed_away"}]},
    )
    (item,) = result["results"]
    assert item["ok"] is False
    assert item["status"] == "sent_not_confirmed"
    assert item["state"] == "disarmed"  # what the hub reports, read back
    assert result["updated"] == 0


async def test_set_state_arming_hsm_in_its_exit_delay_says_arming(
    hass: HomeAssistant,
    sim_factory: SimFactory,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HSM counts its exit delay down past the wait: "in progress", arming, never done."""
    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 0.9)
    sim = await sim_factory(command_delay=None)
    await setup_entry(hass, make_entry(sim, **{CONF_SCAN_INTERVAL: MAX_SCAN_INTERVAL}))
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    # The hub starts its exit delay a moment after answering; "armed" comes much later.
    hass.loop.call_later(0.2, sim.hub.set_hsm_status, "armingAway")
    result = await async_set_state(
        hass,
        _Caller(hass_admin_user),
        {"updates": [{"entity_id": panel, "state": "armed_away"}]},
    )
    (item,) = result["results"]
    assert (item["status"], item["state"]) == ("in_progress", "arming")
    assert item["note"].endswith(" is still arming.")
    assert sim.hub.hsm_status == "armingAway"
