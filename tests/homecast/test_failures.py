"""Homecast failing as upstream fails: each failure degrades only what it feeds.

The simulator's failure switches follow homecast-web (src/server/local-mcp.ts, local-rest.ts)
and the relay (the Mac app's HomeKitManager.swift): a write an accessory does not confirm is
answered after the relay's bound, the community server counts every update as applied, an older
server answers an unknown tool with an isError result, an unreachable accessory keeps its cached
values.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from hypothesis import HealthCheck, given, settings, strategies as st
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast import api
from custom_components.mcp_gateway.backends.homecast.api import HomecastWriteError, SetStateResult
from custom_components.mcp_gateway.backends.homecast.const import SERVER_COMMUNITY

from .conftest import (
    Sim,
    SimFactory,
    device_of,
    entity_id,
    home_entity_id,
    home_tail,
    setup_entry,
    token_entry,
)

# The relay's bound, shortened for the tests (the real one is 10 s, as the client's default).
BOUND = 0.3


async def _loaded(hass: HomeAssistant, sim: Sim, **data: Any) -> MockConfigEntry:
    if sim.state.community:
        data.setdefault("server", SERVER_COMMUNITY)
    entry = token_entry(sim, **data)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    return entry


def test_writes_wait_longer_than_the_cloud_waits_for_the_relay() -> None:
    """The cloud gives the relay 30 s; the relay gives each accessory 10 s."""
    assert getattr(api, "WRITE_TIMEOUT", 0) > 30


@pytest.mark.parametrize("community", [False, True])
async def test_one_dead_accessory_in_a_batch(
    hass: HomeAssistant, sim_factory: SimFactory, community: bool
) -> None:
    """A batch with one accessory that never answers: the others are reported applied.

    The client's read timeout is made as short as the relay's bound (as the defaults are: 10 s
    each); a write must wait for the relay's answer, not give up with it.
    """
    sim = await sim_factory(community=community)
    entry = await _loaded(hass, sim)
    runtime = entry.runtime_data
    runtime.client._timeout = BOUND  # the entry's client, as impatient as the relay
    runtime.client._client_timeout = aiohttp.ClientTimeout(total=BOUND)
    sim.state.relay_write_timeout = BOUND
    sim.faults.update({"latency": BOUND / 3})  # the way to the relay and back
    home = sim.state.homes[0]
    alive, dead = device_of(sim, "switch"), device_of(sim, "outlet")
    sim.state.set_reachable(home.slug, dead.slug, False)
    data = runtime.coordinator.data.homes[home.uuid.lower()]
    live_acc = data.find(alive.slug)
    dead_acc = data.find(dead.slug)
    assert live_acc is not None
    assert dead_acc is not None
    was_on = bool(dead.values["on"])
    outcomes = await asyncio.gather(
        runtime.api.async_set(live_acc, {"on": not alive.values["on"]}),
        runtime.api.async_set(dead_acc, {"on": not was_on}),
        return_exceptions=True,
    )
    assert runtime.api.batcher.calls == 1  # one set_state carried both
    assert isinstance(outcomes[0], SetStateResult)
    if community:
        # local-rest.ts handleSetState counts both applied: the dead one is unconfirmed.
        assert isinstance(outcomes[1], SetStateResult)
    else:
        assert isinstance(outcomes[1], HomecastWriteError)
        assert "did not confirm the write" in str(outcomes[1])
    await runtime.coordinator.async_refresh()
    assert sim.state.values(home.slug, dead.slug)["on"] is was_on
    # Its entity shows what the relay reads back: the write did not happen.
    dead_id = entity_id(hass, entry, sim, dead, "outlet")
    assert hass.states.get(dead_id).state == ("on" if was_on else "off")


@pytest.mark.parametrize("community", [False, True])
async def test_unreachable_accessory_keeps_its_cached_values(
    hass: HomeAssistant, sim_factory: SimFactory, community: bool
) -> None:
    """get_state carries HomeKit's cached values and no reachability: nothing to go by.

    The entity keeps showing the last value HomeKit read; the rest of the home is unaffected.
    """
    sim = await sim_factory(community=community)
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    lamp = device_of(sim, "light")
    lamp_id = entity_id(hass, entry, sim, lamp, "light")
    before = hass.states.get(lamp_id).state
    sim.state.set_reachable(home, lamp.slug, False)
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(lamp_id).state == before != STATE_UNAVAILABLE


async def test_older_community_server_without_a_tool(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """An unknown tool answered with isError ("Unknown tool: …") is asked for once."""
    sim = await sim_factory(community=True)
    sim.state.absent_tools.add("get_hc_automations")
    entry = await _loaded(hass, sim)
    coordinator = entry.runtime_data.coordinator
    for _ in range(3):
        await coordinator.async_refresh()
        assert coordinator.last_update_success
    assert sim.stats.tools["get_hc_automations"] == 1
    assert sim.stats.tools["get_automations"] == 4
    assert not coordinator.hc_automations_supported


async def test_a_failing_automation_list_keeps_the_last_one(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """get_automations failing (the relay's HomeKit call threw): devices keep updating."""
    sim = await sim_factory(community=True)
    entry = await _loaded(hass, sim)
    coordinator = entry.runtime_data.coordinator
    home = next(iter(coordinator.data.homes.values()))
    automations = list(home.automations)
    assert automations
    sim.state.failing_tools["get_automations"] = "Request timed out"
    lamp = device_of(sim, "light")
    sim.state.external_change(sim.state.homes[0].slug, lamp.slug, on=not lamp.values["on"])
    await coordinator.async_refresh()
    assert coordinator.last_update_success
    assert coordinator.automations_supported
    home = coordinator.data.homes[home.uuid]
    assert home.automations == automations
    lamp_id = entity_id(hass, entry, sim, lamp, "light")
    assert hass.states.get(lamp_id).state == ("on" if lamp.values["on"] else "off")


async def test_community_heater_cooler_raw_integers(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A current relay's heater-cooler states arrive as HomeKit integers; writes send hvac_mode.

    hvac_mode is what handleSetState passes on (its settableProps), and the relay turns "heat"
    into 1 (CharacteristicMapper.swift convertSimpleValue).
    """
    sim = await sim_factory(community=True)
    entry = await _loaded(hass, sim)
    raw = await entry.runtime_data.api.async_get_state_raw()
    ac = device_of(sim, "climate", hvac_mode=None)
    home = sim.state.homes[0]
    shown = raw[home.slug][home.room_of(ac).slug][ac.slug]
    assert isinstance(shown["target_heater_cooler_state"], int)
    assert isinstance(shown["current_heater_cooler_state"], int)
    assert "hvac_mode" not in shown
    climate = entity_id(hass, entry, sim, ac, "climate")
    await hass.services.async_call(
        "climate", "set_hvac_mode", {ATTR_ENTITY_ID: climate, "hvac_mode": "heat"}, blocking=True
    )
    assert sim.state.values(home.slug, ac.slug)["hvac_mode"] == "heat"
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(climate).state == "heat"


@pytest.mark.parametrize("camel", [False, True])
async def test_writes_spelled_as_the_server_declares(
    hass: HomeAssistant, sim_factory: SimFactory, camel: bool
) -> None:
    """Argument names come from the server's own tools/list: camelCase or snake_case.

    The camelCase surface (the cloud's graphql-mcp) ignores a field it does not declare, so a
    snake_case `heat_target` would be dropped there without a word.
    """
    sim = await sim_factory()
    sim.state.camel_case = camel
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]
    ac = device_of(sim, "climate", hvac_mode=None)
    climate = entity_id(hass, entry, sim, ac, "climate")
    await hass.services.async_call(
        "climate", "set_hvac_mode", {ATTR_ENTITY_ID: climate, "hvac_mode": "heat"}, blocking=True
    )
    await hass.services.async_call(
        "climate", "set_temperature", {ATTR_ENTITY_ID: climate, "temperature": 21}, blocking=True
    )
    values = sim.state.values(home.slug, ac.slug)
    assert (values["hvac_mode"], values["heat_target"]) == ("heat", 21.0)
    mode = next(a for a in home.virtuals() if a.virtual is not None and a.virtual.kind == "mode")
    option = next(o for o in mode.virtual.options if o != mode.values["virtual_mode"])
    runtime = entry.runtime_data
    acc = runtime.coordinator.data.homes[home.uuid.lower()].find(mode.slug)
    assert acc is not None
    await runtime.api.async_set(acc, {"virtual_mode": option})
    assert mode.values["virtual_mode"] == option
    raw = await runtime.api.async_get_state_raw(home.slug)
    assert list(raw["_homes"]) == [home.slug]  # filter_by_home / filterByHome was understood


async def test_community_snake_case_and_what_it_does_not_take(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The community server's schema (local-mcp.ts) is snake_case and has no thermostat keys.

    A key it does not declare is never sent; the caller hears why.
    """
    sim = await sim_factory(community=True)
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]
    ac = device_of(sim, "climate", hvac_mode=None)
    climate = entity_id(hass, entry, sim, ac, "climate")
    await hass.services.async_call(
        "climate", "set_temperature", {ATTR_ENTITY_ID: climate, "temperature": 20}, blocking=True
    )
    assert (
        sim.state.values(home.slug, ac.slug)[
            "heat_target" if ac.values["hvac_mode"] == "heat" else "cool_target"
        ]
        == 20.0
    )
    stat = device_of(sim, "climate", heating_cooling_target=None)
    runtime = entry.runtime_data
    acc = runtime.coordinator.data.homes[home.uuid.lower()].find(stat.slug)
    assert acc is not None
    sim.stats.reset()
    with pytest.raises(api.HomecastArgumentError, match="takes no heating_cooling_target"):
        await runtime.api.async_set(acc, {"heating_cooling_target": 1})
    assert sim.stats.tools["set_state"] == 0


async def test_failures_and_values_bent_never_the_entry(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """Which read fails, in which upstream shape, with values changing meanwhile.

    get_state feeds every entity; each automation list only its engine's switches (which keep
    their last state); a home whose relay is gone only that home. Every other entity shows
    the truth after each poll, and the entry stays loaded.
    """
    sim = await sim_factory()
    entry = await _loaded(hass, sim)
    coordinator = entry.runtime_data.coordinator
    loop = asyncio.get_running_loop()
    home0, home1 = sim.state.homes
    lamp, switch1 = device_of(sim, "light"), device_of(sim, "switch", home=1)
    hk0, hc0, hk1 = home0.automations[0], home0.hc_automations[0], home1.automations[0]
    ids = {
        "lamp": entity_id(hass, entry, sim, lamp, "light"),
        "switch1": entity_id(hass, entry, sim, switch1, "switch", home=1),
        "hk0": home_entity_id(
            hass, entry, "switch", f"home_{home_tail(sim)}_automation_{hk0['id'].lower()}"
        ),
        "hc0": home_entity_id(
            hass, entry, "switch", f"home_{home_tail(sim)}_hc_automation_{hc0['id'].lower()}"
        ),
        "hk1": home_entity_id(
            hass, entry, "switch", f"home_{home_tail(sim, 1)}_automation_{hk1['id'].lower()}"
        ),
    }

    def states() -> dict[str, str]:
        return {name: hass.states.get(eid).state for name, eid in ids.items()}

    def onoff(value: Any) -> str:
        return "on" if value else "off"

    baseline = states()
    assert STATE_UNAVAILABLE not in baseline.values()
    seen: set[str] = set()

    async def poll(
        failure: str | None, offline: bool, dead: bool, flips: set[str]
    ) -> dict[str, str]:
        if failure is not None:
            sim.state.failing_tools[failure] = "Request timed out"
        sim.state.set_relay_online(home1.slug, not offline)
        sim.state.set_reachable(home0.slug, lamp.slug, not dead)
        if "lamp" in flips and not dead:  # a lamp that does not answer changes nothing
            sim.state.external_change(home0.slug, lamp.slug, on=not lamp.values["on"])
        for name, automation in (("hk0", hk0), ("hc0", hc0)):
            if name in flips:
                automation["enabled"] = not automation["enabled"]
        try:
            await coordinator.async_refresh()
            await hass.async_block_till_done()
            return states()
        finally:
            sim.state.failing_tools.clear()
            sim.state.set_relay_online(home1.slug, True)
            sim.state.set_reachable(home0.slug, lamp.slug, True)

    async def restore() -> dict[str, str]:
        await coordinator.async_refresh()
        await hass.async_block_till_done()
        return states()

    @settings(
        max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(
        failure=st.none() | st.sampled_from(["get_state", "get_automations", "get_hc_automations"]),
        offline=st.booleans(),
        dead=st.booleans(),  # the lamp stops answering: its cached values are still sent
        flips=st.sets(st.sampled_from(["lamp", "hk0", "hc0"])),
    )
    def check(failure: str | None, offline: bool, dead: bool, flips: set[str]) -> None:
        before = states()
        now = asyncio.run_coroutine_threadsafe(poll(failure, offline, dead, flips), loop).result()
        assert entry.state is ConfigEntryState.LOADED
        if failure == "get_state":
            assert set(now.values()) == {STATE_UNAVAILABLE}, now
            seen.add("all unavailable")
        else:
            assert now["lamp"] == onoff(lamp.values["on"])
            for name, tool, truth in (
                ("hk0", "get_automations", hk0),
                ("hc0", "get_hc_automations", hc0),
            ):
                expected = before[name] if failure == tool else onoff(truth["enabled"])
                assert now[name] == expected, (name, failure, flips)
                if failure == tool and name in flips:
                    seen.add("kept")
            if offline:
                assert now["switch1"] == now["hk1"] == STATE_UNAVAILABLE, now
                seen.add("home unavailable")
            else:
                assert now["switch1"] == onoff(switch1.values["on"])
        assert asyncio.run_coroutine_threadsafe(restore(), loop).result() == {
            **baseline,
            "lamp": onoff(lamp.values["on"]),
            "hk0": onoff(hk0["enabled"]),
            "hc0": onoff(hc0["enabled"]),
        }

    await hass.async_add_executor_job(check)
    assert seen == {"all unavailable", "kept", "home unavailable"}
