"""Scenes have no id in Homecast: a rename in the Home app keeps the entity when it is clear-cut."""

from __future__ import annotations

from datetime import timedelta
import logging

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import (
    ATTR_ENTITY_ID,
    ATTR_FRIENDLY_NAME,
    STATE_UNAVAILABLE,
    STATE_UNKNOWN,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.backends.homecast.api import SceneRenamed
from custom_components.mcp_gateway.backends.homecast.runtime import HomecastRuntime
from custom_components.mcp_gateway.backends.homecast.scenes import (
    SceneRename,
    match_rename,
    plan_renames,
)
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.mcp.errors import McpToolError

from .conftest import Sim, home_entity_id, home_tail, setup_entry, token_entry


async def _loaded(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    return entry


async def _poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    freezer.tick(timedelta(seconds=30))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


def _scene_key(sim: Sim, slug: str, home: int = 0) -> str:
    return f"home_{home_tail(sim, home)}_scene_{slug}"


def _scene_uids(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, str]:
    """Scene entities of the entry: unique id → entity id."""
    return {
        item.unique_id: item.entity_id
        for item in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if item.domain == "scene"
    }


# --- matching by elimination ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("registered", "current", "expected"),
    [
        ({"a", "b"}, {"a", "c"}, SceneRename("b", "c")),
        ({"a", "b"}, {"a", "b"}, None),  # nothing changed
        ({"a", "b"}, {"a"}, None),  # deleted only
        ({"a"}, {"a", "b"}, None),  # created only
        ({"a", "b"}, {"c", "d"}, None),  # two at once: which is which is unknowable
        ({"a", "b"}, {"c"}, None),
        (set(), {"a"}, None),  # first start: nothing registered yet
    ],
)
def test_match_rename(
    registered: set[str], current: set[str], expected: SceneRename | None
) -> None:
    """A vanished scene name matches the new one with the same actions."""
    assert match_rename(registered, current) == expected


@pytest.mark.parametrize(
    ("registered", "current", "told", "expected"),
    [
        # Told of one, the other by elimination.
        (
            {"a", "b", "c"},
            {"a2", "b2", "c"},
            [("a", "a2")],
            [SceneRename("a", "a2"), SceneRename("b", "b2")],
        ),
        # Told of a rename; another scene deleted in the same poll: no guess needed.
        ({"a", "b", "c"}, {"a2", "c"}, [("a", "a2")], [SceneRename("a", "a2")]),
        # Renamed twice before a poll.
        ({"a", "b"}, {"a3", "b"}, [("a", "a2"), ("a2", "a3")], [SceneRename("a", "a3")]),
        # Told of a rename the poll does not show yet: nothing moves.
        ({"a", "b"}, {"a", "b"}, [("a", "a2")], []),
        # Told of a rename onto a name another registered scene still has: ignored.
        ({"a", "b"}, {"b", "c"}, [("a", "b")], [SceneRename("a", "c")]),
        # A rename we did not see the old name of (created and renamed between polls).
        ({"a"}, {"a", "x2"}, [("x", "x2")], []),
    ],
)
def test_plan_renames(
    registered: set[str],
    current: set[str],
    told: list[tuple[str, str]],
    expected: list[SceneRename],
) -> None:
    """Renames are planned from what was told and what matches."""
    assert sorted(plan_renames(registered, current, told), key=lambda r: r.old_key) == expected


# --- the simulator's Home app side ------------------------------------------------------------


def test_simulator_rename_keeps_the_scene(sim: Sim) -> None:
    """Renamed in the Home app: the same HomeKit scene (UUID, actions) under a new name."""
    home = sim.state.homes[0]
    movie = home.find_scene("Movie Time")
    assert movie is not None
    sim.state.rename_scene(home.slug, "movie time", "Cinema Night")
    assert home.find_scene("Movie Time") is None
    assert home.find_scene("Cinema Night") is movie
    sim.state.add_scene(home.slug, "Reading")
    sim.state.remove_scene(home.slug, "Reading")
    assert home.find_scene("Reading") is None
    with pytest.raises(KeyError):
        sim.state.rename_scene(home.slug, "No Such Scene", "Other")
    with pytest.raises(KeyError):
        sim.state.remove_scene(home.slug, "No Such Scene")


# --- renames in Home Assistant ----------------------------------------------------------------


async def test_rename_keeps_entity_and_settings(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The entity id, the user's settings and actions on it survive a rename in the Home app."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0]
    old_uid = f"{entry.unique_id}_{_scene_key(sim, 'movie_time')}"
    new_uid = f"{entry.unique_id}_{_scene_key(sim, 'cinema_night')}"
    scene_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    registry = er.async_get(hass)
    registry.async_update_entity(scene_id, icon="mdi:movie", area_id=None)
    await hass.services.async_call("scene", "turn_on", {ATTR_ENTITY_ID: scene_id}, blocking=True)
    activated = hass.states.get(scene_id).state
    assert activated not in (STATE_UNKNOWN, STATE_UNAVAILABLE)
    before = _scene_uids(hass, entry)

    sim.state.rename_scene(home.slug, "Movie Time", "Cinema Night")
    await _poll(hass, freezer)

    after = _scene_uids(hass, entry)
    assert after[new_uid] == scene_id
    assert old_uid not in after
    assert len(after) == len(before)
    moved = registry.async_get(scene_id)
    assert moved is not None
    assert moved.icon == "mdi:movie"
    assert moved.previous_unique_id == old_uid
    state = hass.states.get(scene_id)
    assert state is not None
    assert state.state == activated  # when it last ran, kept across the rename
    assert "Cinema Night" in state.attributes[ATTR_FRIENDLY_NAME]
    assert "already exists" not in caplog.text

    # What an automation does with the old entity id now runs the renamed scene.
    light = home.find(home.find_scene("Cinema Night").actions[0]["accessory"])
    sim.state.external_change(home.slug, light.slug, on=False, brightness=100)
    await hass.services.async_call("scene", "turn_on", {ATTR_ENTITY_ID: scene_id}, blocking=True)
    assert light.values["on"] is True
    assert light.values["brightness"] == 20


async def test_rename_while_stopped(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A rename made while Home Assistant was not running is followed at the next start."""
    entry = await _loaded(hass, sim)
    scene_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()

    sim.state.rename_scene(sim.state.homes[0].slug, "Movie Time", "Cinema Night")
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()

    assert entry.state is ConfigEntryState.LOADED
    assert home_entity_id(hass, entry, "scene", _scene_key(sim, "cinema_night")) == scene_id
    assert hass.states.get(scene_id).state != STATE_UNAVAILABLE
    assert f"{entry.unique_id}_{_scene_key(sim, 'movie_time')}" not in _scene_uids(hass, entry)


async def test_two_renames_at_once_make_new_entities(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """Two scenes renamed within one poll cannot be told apart: old entities go, new ones come."""
    entry = await _loaded(hass, sim)
    slug = sim.state.homes[0].slug
    movie_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    sim.state.rename_scene(slug, "Movie Time", "Cinema Night")
    sim.state.rename_scene(slug, "Good Morning", "Rise and Shine")
    await _poll(hass, freezer)

    uids = _scene_uids(hass, entry)
    assert movie_id not in uids.values()
    assert hass.states.get(movie_id) is None
    cinema = uids[f"{entry.unique_id}_{_scene_key(sim, 'cinema_night')}"]
    rise = uids[f"{entry.unique_id}_{_scene_key(sim, 'rise_and_shine')}"]
    assert movie_id not in (cinema, rise)
    assert hass.states.get(cinema).state != STATE_UNAVAILABLE


async def test_each_home_on_its_own(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A rename in one home and a deletion in another in the same poll: each is what it is."""
    entry = await _loaded(hass, sim)
    first, second = sim.state.homes[0].slug, sim.state.homes[1].slug
    movie_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    night_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "good_night", home=1))
    sim.state.rename_scene(first, "Movie Time", "Cinema Night")
    sim.state.remove_scene(second, "Good Night")
    await _poll(hass, freezer)

    uids = _scene_uids(hass, entry)
    assert uids[f"{entry.unique_id}_{_scene_key(sim, 'cinema_night')}"] == movie_id
    assert night_id not in uids.values()
    assert hass.states.get(night_id) is None


async def test_created_and_deleted_scenes(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A new scene alone makes a new entity; a deleted one alone loses its entity."""
    entry = await _loaded(hass, sim)
    slug = sim.state.homes[0].slug
    movie_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    sim.state.add_scene(slug, "Reading")
    await _poll(hass, freezer)
    reading_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "reading"))
    assert reading_id != movie_id
    assert hass.states.get(movie_id).state != STATE_UNAVAILABLE

    sim.state.remove_scene(slug, "Reading")
    await _poll(hass, freezer)
    assert reading_id not in _scene_uids(hass, entry).values()
    assert hass.states.get(movie_id).state != STATE_UNAVAILABLE


async def test_rename_blocked_by_a_leftover_entry(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """When the new unique id is already taken, the rename is not followed and says why."""
    entry = await _loaded(hass, sim)
    movie_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    new_uid = f"{entry.unique_id}_{_scene_key(sim, 'cinema_night')}"
    other = MockConfigEntry(domain=DOMAIN, entry_id="leftover", unique_id="leftover")
    other.add_to_hass(hass)
    leftover = er.async_get(hass).async_get_or_create(
        "scene", DOMAIN, new_uid, config_entry=other, suggested_object_id="leftover"
    )
    caplog.set_level(logging.WARNING)
    sim.state.rename_scene(sim.state.homes[0].slug, "Movie Time", "Cinema Night")
    await _poll(hass, freezer)

    assert f"{movie_id} cannot follow its renamed scene: {leftover.entity_id}" in caplog.text
    # The old entity goes; HA hands the leftover entry to the scene that now has its id.
    uids = _scene_uids(hass, entry)
    assert movie_id not in uids.values()
    assert uids[new_uid] == leftover.entity_id


# --- renames made through Home Assistant -----------------------------------------------------


def _runtime(entry: MockConfigEntry) -> HomecastRuntime:
    runtime = entry.runtime_data
    assert isinstance(runtime, HomecastRuntime)
    return runtime


async def test_gateway_rename_plus_home_app_rename(hass: HomeAssistant, sim: Sim) -> None:
    """A rename through the gateway is known for certain, so a Home-app one can still be guessed."""
    entry = await _loaded(hass, sim)
    runtime = _runtime(entry)
    slug = sim.state.homes[0].slug
    movie_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    morning_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "good_morning"))
    sim.state.rename_scene(slug, "Good Morning", "Rise and Shine")
    result = await runtime.async_call_tool(
        "update_scene", {"home": slug, "name": "Movie Time", "new_name": "Cinema Night"}
    )
    assert not result.is_error
    await hass.async_block_till_done(wait_background_tasks=True)

    uids = _scene_uids(hass, entry)
    assert uids[f"{entry.unique_id}_{_scene_key(sim, 'cinema_night')}"] == movie_id
    assert uids[f"{entry.unique_id}_{_scene_key(sim, 'rise_and_shine')}"] == morning_id
    assert runtime.coordinator.scene_renames.pending == []


async def test_action_rename_and_delete_in_one_poll(hass: HomeAssistant, sim: Sim) -> None:
    """Renamed and another deleted before one poll: the told rename is followed, no guessing."""
    entry = await _loaded(hass, sim)
    runtime = _runtime(entry)
    slug = sim.state.homes[0].slug
    movie_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
    sim.state.add_scene(slug, "Reading")
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    reading_id = home_entity_id(hass, entry, "scene", _scene_key(sim, "reading"))

    await runtime.api.async_tool(
        "update_scene", {"home": slug, "name": "movie time", "new_name": "Cinema"}
    )
    await runtime.api.async_tool(
        "update_scene", {"home": slug, "name": "Cinema", "new_name": "Cinema Night"}
    )
    await runtime.api.async_tool("delete_scene", {"home": slug, "name": "Reading"})
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()

    uids = _scene_uids(hass, entry)
    assert uids[f"{entry.unique_id}_{_scene_key(sim, 'cinema_night')}"] == movie_id
    assert reading_id not in uids.values()
    assert hass.states.get(movie_id).state != STATE_UNAVAILABLE


async def test_failed_rename_is_not_noted(hass: HomeAssistant, sim: Sim) -> None:
    """A refused update_scene (built-in scene) renames nothing, so nothing is remembered."""
    entry = await _loaded(hass, sim)
    runtime = _runtime(entry)
    slug = sim.state.homes[0].slug
    with pytest.raises(McpToolError):
        await runtime.api.async_tool(
            "update_scene", {"home": slug, "name": "Good Morning", "new_name": "Rise"}
        )
    result = await runtime.async_call_tool(
        "update_scene", {"home": slug, "name": "Good Night", "new_name": "Lights Out"}
    )
    assert result.is_error
    # Changing only the actions is no rename either.
    movie = sim.state.homes[0].find_scene("Movie Time")
    assert movie is not None
    await runtime.api.async_tool(
        "update_scene", {"home": slug, "name": "Movie Time", "actions": movie.actions}
    )
    assert runtime.api.scene_renames == []


async def test_unseen_told_rename_is_forgotten(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A told rename that no poll shows (renamed again elsewhere) does not linger."""
    entry = await _loaded(hass, sim)
    runtime = _runtime(entry)
    slug = sim.state.homes[0].slug
    ghost = SceneRenamed(slug, "Movie Time", "Never Shown")
    runtime.api.scene_renames.append(ghost)
    await _poll(hass, freezer)
    assert runtime.coordinator.scene_renames.pending == [ghost]
    for _ in range(runtime.coordinator.scene_renames.TOLD_POLLS):
        await _poll(hass, freezer)
    assert runtime.coordinator.scene_renames.pending == []
    assert home_entity_id(hass, entry, "scene", _scene_key(sim, "movie_time"))
