"""A scene run reports what it changed, and shows on HA's scene entity however it was run."""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.catalog.store import GatewayCatalog
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.mcp.server import RequestContext

from .conftest import Sim, home_entity_id, home_tail, setup_entry, token_entry


def _ctx(user: Any) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


async def _loaded(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    return entry


def _scene(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, slug: str) -> str:
    return home_entity_id(hass, entry, "scene", f"home_{home_tail(sim, 0)}_scene_{slug}")


def _dim_the_scene_light(sim: Sim) -> tuple[Any, Any]:
    """Movie Time's light, on at full brightness, so running the scene changes it."""
    home = sim.state.homes[0]
    light = home.find(home.find_scene("Movie Time").actions[0]["accessory"])
    sim.state.external_change(home.slug, light.slug, on=False, brightness=100)
    return home, light


async def test_run_scene_through_the_backend_tool(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """The backend's run_scene marks HA's scene entity as run, and the answer lists what
    changed in Home Assistant."""
    entry = await _loaded(hass, sim)
    home, light = _dim_the_scene_light(sim)
    scene = _scene(hass, sim, entry, "movie_time")
    assert hass.states.get(scene).state == STATE_UNKNOWN
    gateway = GatewayCatalog.get(hass).exposed_backends()[0].gateway_name
    result = await GatewayHandler(hass).call_tool(
        _ctx(hass_admin_user),
        gateway,
        {"tool": "run_scene", "args": {"home": home.slug, "name": "movie time"}},
    )
    assert result["isError"] is False, result
    assert hass.states.get(scene).state != STATE_UNKNOWN  # when it last ran
    assert light.values["brightness"] == 20
    text = result["content"][-1]["text"]
    assert text.startswith("Entities whose state changed in Home Assistant within 2 s")
    assert "brightness_pct 20" in text


async def test_run_scene_entity_through_set_state(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """set_state on a scene answers with the entities the run changed."""
    entry = await _loaded(hass, sim)
    _dim_the_scene_light(sim)
    scene = _scene(hass, sim, entry, "movie_time")
    result = await async_set_state(
        hass, _ctx(hass_admin_user), {"updates": [{"entity_id": scene, "state": "on"}]}
    )
    (item,) = result["results"]
    assert item["status"] == "done"
    assert item["changed_note"].startswith("Entities whose state changed")
    lights = [c for c in item["changed"] if c["entity_id"].startswith("light.")]
    assert {"state": "on", "brightness_pct": 20}.items() <= lights[0].items()
    assert result["units"] == {"brightness_pct": "%"}


async def test_a_run_that_changes_nothing_says_it_cannot_tell(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """Nothing changed within the window: the answer says the gateway cannot know."""
    entry = await _loaded(hass, sim)
    scene = _scene(hass, sim, entry, "movie_time")
    await async_set_state(
        hass, _ctx(hass_admin_user), {"updates": [{"entity_id": scene, "state": "on"}]}
    )
    again = await async_set_state(
        hass, _ctx(hass_admin_user), {"updates": [{"entity_id": scene, "state": "on"}]}
    )
    (item,) = again["results"]
    assert item["changed"] == []
    assert "cannot tell what it did" in item["changed_note"]
