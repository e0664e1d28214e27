"""What polling can and cannot see of button presses (Homecast's MCP tools keep no press log).

These pin the known limit, so that a future push channel that sees every press changes them on
purpose: get_state holds only the last ProgrammableSwitchEvent value of a doorbell or button.
"""

from __future__ import annotations

from datetime import timedelta

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from .conftest import Sim, device_of, entity_id, fired_events, setup_entry, token_entry


async def _poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    freezer.tick(timedelta(seconds=30))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_presses_between_two_polls(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """Several presses between two polls fire one event, the last; each poll's press fires."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    home = sim.state.homes[0].slug
    button = device_of(sim, "button")
    button_id = entity_id(hass, entry, sim, button, "button")
    fired = fired_events(hass, button_id)

    sim.state.press(home, button.slug, 0)
    sim.state.press(home, button.slug, 1)
    sim.state.press(home, button.slug, 2)
    await _poll(hass, freezer)
    assert fired == ["long_press"]

    sim.state.press(home, button.slug, 0)
    await _poll(hass, freezer)
    sim.state.press(home, button.slug, 1)
    await _poll(hass, freezer)
    assert fired == ["long_press", "single_press", "double_press"]

    # The same press again leaves the value as it was: polling cannot tell it happened.
    sim.state.press(home, button.slug, 1)
    await _poll(hass, freezer)
    assert fired == ["long_press", "single_press", "double_press"]
