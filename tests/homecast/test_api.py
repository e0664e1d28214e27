"""Unit tests of the typed API: parsing both vocabularies, set_state coalescing and outcomes."""

from __future__ import annotations

import asyncio
from typing import Any
from unittest.mock import patch

from homeassistant.core import HomeAssistant
import pytest

from custom_components.mcp_gateway.backends.homecast.api import (
    NO_ROOM,
    AccessoryUpdate,
    HomecastReplyError,
    HomecastWriteError,
    SetStateBatcher,
    VirtualInfo,
    deslug,
    parse_automations,
    parse_set_result,
    parse_state,
    slugify_name,
    view_only_homes,
)
from custom_components.mcp_gateway.mcp.errors import McpConnectionError, McpRpcError, McpToolError

from .conftest import Sim, setup_entry, token_entry

HOME_UUID = "AAAAAAAA-0000-0000-0000-00000000BCAB"


def _state(body: dict[str, Any]) -> dict[str, Any]:
    return {"_homes": {"george_street_bcab": HOME_UUID}, "george_street_bcab": body}


def test_legacy_vocabulary_is_normalised() -> None:
    """Raw names of older servers become the current ones, options included."""
    state = parse_state(
        _state(
            {
                "bedroom_1_7f00": {
                    "bedroom_1_air_conditioner_7f60": {
                        "type": "climate",
                        "name": "George Street.Bedroom 1.Air Conditioner",
                        "active": True,
                        "target_heater_cooler_state": 2,
                        "current_heater_cooler_state": 3,
                        "rotation_speed": 40,
                        "target_position": 10,
                        "_settable": ["target_heater_cooler_state", "rotation_speed", "active"],
                        "_options": {"target_heater_cooler_state": [0, 1, 2], "bad": "x"},
                    }
                },
                "_scenes": ["Night", 3, None],
            }
        )
    )
    home = state.homes[HOME_UUID.lower()]
    acc = home.accessories["7f60"]
    assert acc.legacy
    assert acc.values == {
        "active": True,
        "hvac_mode": "cool",
        "hvac_state": "cooling",
        "speed": 40,
        "target": 10,
    }
    assert acc.settable == {"hvac_mode", "speed", "active"}
    assert acc.options == {"hvac_mode": ["auto", "heat", "cool"]}
    assert (home.name, acc.room_name, acc.name) == ("George Street", "Bedroom 1", "Air Conditioner")
    assert home.scenes == ["Night", "3"]


def test_names_groups_and_collisions() -> None:
    """Dots stay in accessory names; lone group members are added; equal tails are kept apart."""
    state = parse_state(
        _state(
            {
                "kitchen_aaaa": {
                    "lamp_v1.2_0001": {
                        "type": "light",
                        "name": "Home.Kitchen.Lamp v1.2",
                        "on": True,
                    },
                    "bare_0002": {"type": "switch", "name": "Bare", "on": False},
                    "nameless_0003": {"type": "switch", "on": False},
                    "kitchen_lights_0004": {
                        "type": "light",
                        "group": True,
                        "on": True,
                        "accessories": {
                            "lamp_v1.2_0001": {"type": "light", "on": True},
                            "hidden_bulb_0005": {"type": "light", "on": False},
                            "junk_0006": "not an object",
                        },
                    },
                    "junk": 5,
                },
                "hall_bbbb": {"other_lamp_0001": {"type": "light", "on": False}},
                "not_a_room": "x",
            }
        )
    )
    home = state.homes[HOME_UUID.lower()]
    names = {acc.uid: acc.name for acc in home.accessories.values()}
    assert names["0002"] == "Bare"
    assert names["0003"] == "Nameless"
    assert names["0005"] == "Hidden Bulb"
    # Two accessories ending in 0001: each gets its room's tail in front.
    assert names["aaaa0001"] == "Lamp v1.2"
    assert names["bbbb0001"] == "Other Lamp"
    group = home.accessories["0004"]
    assert group.group
    assert group.members == ("lamp_v1.2_0001", "hidden_bulb_0005", "junk_0006")
    assert home.find("HIDDEN_BULB_0005") is home.accessories["0005"]
    assert home.find("nothing") is None
    # The slug path names no display name: the home's is derived from its key.
    assert state.home("George Street") is home
    assert state.home("george_street_bcab") is home


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("ceiling_light_a1b2", "Ceiling Light"),  # pyhomecast's own cases
        ("my_home_0bf8", "My Home"),
        ("simple", "Simple"),
        ("rob's_house_91c2", "Rob's House"),  # punctuation stays (src/lib/slug.ts)
        ("bedroom_1_air_conditioner_7f60", "Bedroom 1 Air Conditioner"),
        ("unknown_0000", "Unknown"),
        ("tv_zzzz", "Tv Zzzz"),  # no 4-hex tail: nothing to drop
    ],
)
def test_deslug(key: str, name: str) -> None:
    """UUID-tail slugs map back to names."""
    assert deslug(key) == name


def test_slug_names_give_readable_names() -> None:
    """The real get_state names accessories by their slug path, never display names."""
    body = {
        "lounge_0a1f": {
            "heat_pump_33e1": {
                "type": "climate",
                "name": "harbour_flat_91c2.lounge_0a1f.heat_pump_33e1",
                "active": True,
            },
            "mr._fan_33e2": {"type": "fan", "name": "harbour_flat_91c2.lounge_0a1f.mr._fan_33e2"},
        }
    }
    state = parse_state({"_homes": {"harbour_flat_91c2": HOME_UUID}, "harbour_flat_91c2": body})
    home = state.homes[HOME_UUID.lower()]
    assert home.name == "Harbour Flat"
    pump = home.accessories["33e1"]
    assert (pump.name, pump.room_name, pump.key) == ("Heat Pump", "Lounge", "heat_pump_33e1")
    assert home.accessories["33e2"].name == "Mr. Fan"


def test_virtual_accessory_parsing() -> None:
    """As src/server/local-rest.ts renders them: the value key marks the kind, `_settable`
    whether people may set it; a virtual switch is a plain switch."""
    accessories = {
        "house_mode_9008": {"type": "other", "virtual_mode": "Home", "_settable": ["virtual_mode"]},
        "visits_9009": {"type": "other", "virtual_count": 3},
        "guest_switch_900a": {"type": "switch", "on": False, "_settable": ["on"]},
    }
    for key, props in accessories.items():
        props["name"] = f"george_street_bcab.unknown_0000.{key}"
    state = parse_state(_state({"unknown_0000": accessories}))
    home = state.homes[HOME_UUID.lower()]
    mode = home.accessories["9008"]
    assert mode.virtual == VirtualInfo(kind="mode", key="virtual_mode", controllable=True)
    assert mode.name == "House Mode"
    assert mode.room_key == NO_ROOM
    counter = home.accessories["9009"]
    assert counter.virtual == VirtualInfo(kind="counter", key="virtual_count", controllable=False)
    assert home.accessories["900a"].virtual is None
    assert home.accessories["900a"].type == "switch"


@pytest.mark.parametrize(
    "data", [None, "text", {"_homes": "x"}, {"_homes": {"h_0001": "u"}, "h_0001": [1]}]
)
def test_malformed_state(data: Any) -> None:
    """A state without its expected shape is a reply error."""
    with pytest.raises(HomecastReplyError):
        parse_state(data)


def test_state_filters_and_meta() -> None:
    """get_state honours the home filter and keeps its meta fields."""
    data = {
        "_homes": {"a_0001": "U1", "b_0002": "U2", "gone_0003": "U3"},
        "a_0001": {},
        "b_0002": {},
        "_meta": {"fetched_at": "2026-11-29T12:00:00+00:00", "message": "Found 0"},
    }
    state = parse_state(data, {"u2"})
    assert list(state.homes) == ["u2"]
    assert state.fetched_at == "2026-11-29T12:00:00+00:00"
    assert state.message == "Found 0"
    assert list(parse_state({**data, "_meta": None}).homes) == ["u1", "u2"]


def test_set_result_and_lists() -> None:
    """set_state results and automation lists are parsed, odd ones refused."""
    result = parse_set_result({"updated": True, "failed": 2, "errors": "x", "changes": [1]})
    assert (result.updated, result.failed, result.errors, result.changes) == (0, 2, (), ("1",))
    assert result.message is None
    with pytest.raises(HomecastReplyError):
        parse_set_result(["not", "an", "object"])
    assert parse_automations("No automations yet") == {}
    with pytest.raises(HomecastReplyError):
        parse_automations(42)
    assert parse_automations({"h": [{"id": 1}, {"no": "id"}, 3], "_meta": [], "x": "y"}) == {
        "h": [{"id": 1}]
    }
    assert view_only_homes({"_meta": {"view_only_homes": ["a"]}}) == {"a"}
    assert view_only_homes({"_meta": {"view_only_homes": "a"}}) == set()
    assert view_only_homes([]) == set()
    assert slugify_name("  Movie Time! ") == "movie_time"
    assert slugify_name("!!!") == "scene"


# --- the batcher ----------------------------------------------------------------------------


def _update(home: str, acc: str, **props: Any) -> AccessoryUpdate:
    return AccessoryUpdate(home, "room_0000", acc, props)


async def test_batcher_merges_and_splits_outcomes() -> None:
    """One call for simultaneous updates; same accessory merged; failures go to their owners."""
    sent: list[list[dict[str, Any]]] = []

    async def send(updates: list[dict[str, Any]]) -> Any:
        sent.append(updates)
        return {
            "updated": 2,
            "failed": 1,
            "changes": ["home_a_0001/room_0000/lamp_0001: on=true, brightness=10"],
            "errors": ["home_b_0002: ACCESSORY_UNREACHABLE: Fan is not responding"],
        }

    batcher = SetStateBatcher(send)
    results = await asyncio.gather(
        batcher.submit(_update("home_a_0001", "lamp_0001", on=True)),
        batcher.submit(_update("home_a_0001", "lamp_0001", brightness=10)),
        batcher.submit(_update("home_a_0001", "plug_0003", on=False)),
        batcher.submit(_update("home_b_0002", "fan_0009", active=True)),
        return_exceptions=True,
    )
    assert len(sent) == 1
    assert sent[0][0] == {
        "home": "home_a_0001",
        "room": "room_0000",
        "accessory": "lamp_0001",
        "on": True,
        "brightness": 10,
    }
    assert len(sent[0]) == 3
    assert not isinstance(results[0], Exception)
    assert not isinstance(results[2], Exception)  # its home reported no error
    assert isinstance(results[3], HomecastWriteError)
    assert "not responding" in str(results[3])
    assert batcher.calls == 1


async def test_batcher_failure_without_home() -> None:
    """Nothing went through and no home is named: every caller gets the reason."""

    async def send(updates: list[dict[str, Any]]) -> Any:
        return {"updated": 0, "failed": 2, "message": "Relay offline"}

    batcher = SetStateBatcher(send)
    results = await asyncio.gather(
        batcher.submit(_update("a_0001", "x_0001", on=True)),
        batcher.submit(_update("b_0002", "y_0002", on=True)),
        return_exceptions=True,
    )
    assert [str(r) for r in results] == ["Relay offline", "Relay offline"]

    async def send_bare(updates: list[dict[str, Any]]) -> Any:
        return {"updated": 0, "failed": 1}

    with pytest.raises(HomecastWriteError, match="1 update"):
        await SetStateBatcher(send_bare).submit(_update("a_0001", "x_0001", on=True))


async def test_batcher_transport_error_and_queueing() -> None:
    """A failed call fails its callers; updates queued meanwhile go in the next call."""
    calls: list[int] = []
    gate = asyncio.Event()

    async def send(updates: list[dict[str, Any]]) -> Any:
        calls.append(len(updates))
        if len(calls) == 1:
            await gate.wait()
            raise McpConnectionError("gone")
        return {"updated": len(updates), "failed": 0}

    batcher = SetStateBatcher(send)
    first = asyncio.ensure_future(batcher.submit(_update("a_0001", "x_0001", on=True)))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    second = asyncio.ensure_future(batcher.submit(_update("a_0001", "y_0002", on=True)))
    third = asyncio.ensure_future(batcher.submit(_update("a_0001", "z_0003", on=True)))
    gate.set()
    with pytest.raises(McpConnectionError):
        await first
    assert (await second).updated == 2
    await third
    assert calls == [1, 2]


async def test_batcher_shutdown_cancels_waiters() -> None:
    """Shutting the batcher down cancels the writes still waiting."""
    started = asyncio.Event()

    async def send(updates: list[dict[str, Any]]) -> Any:
        started.set()
        await asyncio.Event().wait()

    batcher = SetStateBatcher(send)
    waiter = asyncio.ensure_future(batcher.submit(_update("a_0001", "x_0001", on=True)))
    await started.wait()
    await batcher.async_shutdown()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await batcher.async_shutdown()  # nothing in flight: nothing to do


# --- coordinator edge cases -----------------------------------------------------------------


async def test_automation_lists_failing_keep_the_last_ones(hass: HomeAssistant, sim: Sim) -> None:
    """A failing automation list is not an outage; a server without the tool stops being asked."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    coordinator = entry.runtime_data.coordinator
    home = sim.home_uuids()[0]
    before = list(coordinator.data.homes[home].automations)
    before_hc = list(coordinator.data.homes[home].hc_automations)
    api = "custom_components.mcp_gateway.backends.homecast.api.HomecastApi"
    with (
        patch(f"{api}.async_get_automations", side_effect=McpToolError("Error: relay busy")),
        patch(f"{api}.async_get_hc_automations", side_effect=McpToolError("Error: relay busy")),
    ):
        await coordinator.async_refresh()
    assert coordinator.last_update_success
    assert coordinator.data.homes[home].automations == before
    assert coordinator.data.homes[home].hc_automations == before_hc
    assert coordinator.automations_supported

    with (
        patch(f"{api}.async_get_automations", side_effect=McpRpcError(-32601, "No method")),
        patch(f"{api}.async_get_hc_automations", side_effect=McpRpcError(-32602, "Unknown tool")),
    ):
        await coordinator.async_refresh()
    assert not coordinator.automations_supported
    assert not coordinator.hc_automations_supported
    sim.stats.reset()
    await coordinator.async_refresh()
    assert sim.stats.tools["get_automations"] == 0
    assert sim.stats.tools["get_hc_automations"] == 0
    assert coordinator.data.homes[home].automations == []


async def test_unexpected_error_in_poll_propagates(hass: HomeAssistant, sim: Sim) -> None:
    """A bug (not a backend failure) is not hidden as unavailability."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    coordinator = entry.runtime_data.coordinator
    with patch(
        "custom_components.mcp_gateway.backends.homecast.api.HomecastApi.async_get_state",
        side_effect=KeyError("bug"),
    ):
        await coordinator.async_refresh()
    assert not coordinator.last_update_success
    assert isinstance(coordinator.last_exception, KeyError)
