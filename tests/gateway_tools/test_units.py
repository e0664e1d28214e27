"""Levels read in the unit they are written in, and every level's unit is said."""

from __future__ import annotations

from homeassistant.core import HomeAssistant, State
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state
from custom_components.mcp_gateway.gateway.tools.levels import entity_levels, level_units
from custom_components.mcp_gateway.gateway.tools.set_state import (
    SET_STATE_SCHEMA,
    async_set_state,
    expectation,
)

from .conftest import Ctx, FakeRuntime

LAMP = "light.desk_lamp"


@pytest.mark.parametrize(
    ("state", "levels"),
    [
        (
            State(
                "light.a",
                "on",
                {
                    "brightness": 128,
                    "color_temp_kelvin": 2700,
                    "color_temp": 370,
                    "hs_color": (30.123, 60.0),
                },
            ),
            {"brightness_pct": 50, "color_temp_kelvin": 2700, "hs_color": [30.1, 60.0]},
        ),
        (State("light.a", "off", {"brightness": None}), {}),
        (State("fan.a", "on", {"percentage": 33.3333}), {"percentage": 33}),
        (
            State("cover.a", "open", {"current_position": 70, "current_tilt_position": 20}),
            {"position": 70, "tilt_position": 20},
        ),
        (State("valve.a", "open", {"current_position": 40}), {"position": 40}),
        (
            State(
                "climate.a",
                "heat",
                {"temperature": 21.0, "current_temperature": 19.5, "current_humidity": 41},
            ),
            {"temperature": 21, "current_temperature": 19.5, "current_humidity": 41},
        ),
        # A sensor's attribute named "temperature" is no setpoint.
        (State("sensor.a", "3", {"temperature": 12}), {}),
        # A value in another shape is left out, not guessed.
        (State("light.a", "on", {"brightness": "bright"}), {}),
    ],
)
def test_levels_in_set_state_units(state: State, levels: dict[str, object]) -> None:
    """HA's 0-255 brightness reads as percent; positions, speeds and setpoints by set_state's
    names."""
    assert entity_levels(state) == levels


def test_every_level_written_has_its_name_and_unit() -> None:
    """What set_state takes is what get_state shows, and each has a unit."""
    writable = set(SET_STATE_SCHEMA["properties"]["updates"]["items"]["properties"])
    assert {"brightness_pct", "position", "percentage", "color_temp_kelvin"} <= writable
    assert "brightness" not in writable
    units = level_units(
        ["brightness_pct", "position", "percentage", "color_temp_kelvin", "temperature"], "°F"
    )
    assert units == {
        "brightness_pct": "%",
        "position": "%",
        "percentage": "%",
        "color_temp_kelvin": "K",
        "temperature": "°F",
    }


async def test_brightness_reads_as_it_is_written(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Set 40 %, the answer and get_state say 40 %, never HA's 102 of 255."""
    ctx = Ctx(user=hass_admin_user)
    written = await async_set_state(
        hass, ctx, {"updates": [{"entity_id": LAMP, "state": "on", "brightness_pct": 40}]}
    )
    (item,) = written["results"]
    assert item["status"] == "done"
    assert item["brightness_pct"] == 40
    assert written["units"] == {"brightness_pct": "%"}
    runtime: FakeRuntime = fake_entry.runtime_data
    assert runtime.things["2"].level == 102  # what HA sent: 40 % of 255

    read = await async_get_state(hass, ctx, {"entity_ids": [LAMP]})
    assert read["entities"][0]["brightness_pct"] == 40
    assert "brightness" not in read["entities"][0]
    assert read["units"] == {"brightness_pct": "%"}
    # Asked by HA's attribute name, or all attributes: still percent, named so.
    by_name = await async_get_state(hass, ctx, {"entity_ids": [LAMP], "fields": ["brightness"]})
    assert by_name["entities"][0] == {"entity_id": LAMP, "brightness_pct": 40}
    every = await async_get_state(hass, ctx, {"entity_ids": [LAMP], "fields": ["attributes"]})
    attributes = every["entities"][0]["attributes"]
    assert attributes["brightness_pct"] == 40
    assert "brightness" not in attributes


async def test_a_brightness_the_lamp_does_not_reach_is_not_done(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On is not enough: the answer is done only once the asked level shows."""
    from custom_components.mcp_gateway.gateway.tools import set_state as set_state_module

    monkeypatch.setattr(set_state_module, "CONFIRM_SECONDS", 0.0)
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.things["2"].on = True
    runtime.things["2"].level = 255
    runtime.coordinator.async_update_listeners()
    await hass.async_block_till_done()
    runtime.ignore_writes = True
    written = await async_set_state(
        hass,
        Ctx(user=hass_admin_user),
        {"updates": [{"entity_id": LAMP, "state": "on", "brightness_pct": 10}]},
    )
    (item,) = written["results"]
    assert item["status"] == "sent_not_confirmed"
    assert item["brightness_pct"] == 100  # what it still reports


@pytest.mark.parametrize(
    ("shown", "outcome"),
    [
        ({"percentage": 66.6667, "percentage_step": 33.3333}, "done"),  # 3 speeds: 50 → 67
        ({"percentage": 100, "percentage_step": 33.3333}, None),
        ({"percentage": 50}, "done"),
        ({}, None),
    ],
)
def test_a_fan_speed_is_done_within_its_step(shown: dict[str, float], outcome: str | None) -> None:
    """A fan's speed counts once it shows, as near as the fan's steps allow."""
    before = State("fan.a", "off")
    check = expectation("fan", {"entity_id": "fan.a", "percentage": 50}, before)
    assert check(State("fan.a", "on", shown)) == outcome
