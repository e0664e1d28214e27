"""Homecast actions: validated, reaching the simulator, answering with response data."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser
import voluptuous as vol

from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import TOKEN, Sim, home_tail, setup_entry, token_entry


@pytest.fixture
async def hass_user(hass: HomeAssistant) -> MockUser:
    """An ordinary (non-admin) Home Assistant user."""
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    return MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)


@pytest.fixture
async def entry(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    return entry


async def _act(
    hass: HomeAssistant, entry: MockConfigEntry, service: str, **data: Any
) -> dict[str, Any]:
    return await hass.services.async_call(
        DOMAIN,
        f"homecast_{service}",
        {"config_entry_id": entry.entry_id, **data},
        blocking=True,
        return_response=True,
    )


def _uids(hass: HomeAssistant, entry: MockConfigEntry) -> set[str]:
    return {
        e.unique_id.removeprefix(f"{entry.unique_id}_")
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    }


async def test_query_history(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """Series come back as response data; the home may be given by name."""
    home = sim.state.homes[0]
    # A month up to the account's clock: the recorded week lies within it, whatever the date.
    end = sim.state.clock.now()
    response = await _act(
        hass,
        entry,
        "query_history",
        home=home.name,
        characteristics=["current_temperature"],
        start=(end - timedelta(days=30)).isoformat(),
        end=end.isoformat(),
        resolution="daily",
        max_points_per_series=5,
    )
    assert response["home"] == home.slug
    assert response["resolution"] == "daily"
    assert response["series"]
    assert all(s["characteristic"] == "current_temperature" for s in response["series"])
    assert all(len(s["points"]) <= 5 for s in response["series"])


async def test_query_history_without_analytics(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A home without Analytics: Homecast says so, which is an answer, not an error."""
    response = await _act(hass, entry, "query_history", home=sim.state.homes[1].slug)
    assert response
    assert "series" not in response or not response["series"]


async def test_scene_lifecycle(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """Create → a scene entity appears; update renames; delete removes it."""
    home = sim.state.homes[0]
    light = next(a for a in home.devices() if a.kind == "light")
    tail = home_tail(sim)
    response = await _act(
        hass,
        entry,
        "create_scene",
        home=home.slug,
        name="Reading",
        actions=[{"accessory": light.slug, "on": True, "brightness": 60}],
    )
    assert response["scene"]["name"] == "Reading"
    assert f"home_{tail}_scene_reading" in _uids(hass, entry)

    await _act(hass, entry, "update_scene", home=home.slug, name="Reading", new_name="Reading 2")
    assert home.find_scene("Reading 2") is not None
    uids = _uids(hass, entry)
    assert f"home_{tail}_scene_reading_2" in uids
    assert f"home_{tail}_scene_reading" not in uids

    await _act(hass, entry, "delete_scene", home=home.slug, name="Reading 2")
    assert home.find_scene("Reading 2") is None
    assert f"home_{tail}_scene_reading_2" not in _uids(hass, entry)


async def test_builtin_scene_cannot_be_deleted(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A built-in scene cannot be deleted."""
    with pytest.raises(HomeAssistantError, match="delete_scene"):
        await _act(hass, entry, "delete_scene", home=sim.state.homes[0].slug, name="Good Night")


async def test_hc_automation_lifecycle(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A Homecast automation is created, updated in parts and deleted, with its entity."""
    home = sim.state.homes[0]
    motion = next(a for a in home.devices() if a.kind == "motion")
    light = next(a for a in home.devices() if a.kind == "light")
    response = await _act(
        hass,
        entry,
        "create_automation",
        home=home.slug,
        name="Porch light",
        triggers=[
            {"type": "device", "accessory": motion.slug, "characteristic": "motion", "to": True}
        ],
        actions=[{"type": "device", "accessory": light.slug, "on": True}],
        mode="restart",
    )
    automation_id = response["automation"]["id"]
    key = f"home_{home_tail(sim)}_hc_automation_{automation_id}"
    assert key in _uids(hass, entry)
    await _act(hass, entry, "update_automation", home=home.slug, id=automation_id, enabled=False)
    stored = next(a for a in home.hc_automations if a["id"] == automation_id)
    assert stored["enabled"] is False
    assert stored["mode"] == "restart"  # omitted parts stay
    await _act(hass, entry, "delete_automation", home=home.slug, id=automation_id)
    assert key not in _uids(hass, entry)


async def test_virtual_accessory_lifecycle(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A virtual accessory is created, changed and deleted, with its entity."""
    home = sim.state.homes[0]
    response = await _act(
        hass,
        entry,
        "create_virtual_accessory",
        home=home.slug,
        name="Dry Cycle",
        type="mode",
        options=["Idle", "Running", "Cancelled"],
    )
    assert response["success"] is True
    acc = next(a for a in home.virtuals() if a.name == "Dry Cycle")
    key = f"{home_tail(sim)}_{acc.slug[-4:]}_virtual_mode"
    assert key in _uids(hass, entry)
    await _act(
        hass, entry, "update_virtual_accessory", home=home.slug, id=acc.slug, options=["Idle", "On"]
    )
    assert acc.virtual.options == ["Idle", "On"]
    await _act(hass, entry, "delete_virtual_accessory", home=home.slug, id=acc.slug)
    assert key not in _uids(hass, entry)


async def test_number_virtual_accessory(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A number virtual accessory takes a value."""
    home = sim.state.homes[0]
    await _act(
        hass,
        entry,
        "create_virtual_accessory",
        home=home.slug,
        name="Saved Setpoint",
        type="number",
        min=10,
        max=30,
        step=0.5,
        unit="°C",
        initial=21,
    )
    acc = next(a for a in home.virtuals() if a.name == "Saved Setpoint")
    assert acc.values["virtual_number"] == 21


@pytest.mark.parametrize(
    ("service", "data", "match"),
    [
        ("create_scene", {"name": "Evening (late)", "actions": []}, "letter or a number"),
        ("create_virtual_accessory", {"name": "X", "type": "mode"}, "needs options"),
        ("create_virtual_accessory", {"name": "X", "type": "number", "min": 1}, "min and max"),
        (
            "create_virtual_accessory",
            {"name": "X", "type": "number", "min": 5, "max": 1},
            "below max",
        ),
        ("create_virtual_accessory", {"name": "X", "type": "switch", "options": ["a"]}, "only a"),
        ("create_virtual_accessory", {"name": "X", "type": "gauge"}, "value must be one of"),
        ("create_automation", {"name": "X", "triggers": [], "actions": [{}]}, "length"),
        ("update_automation", {"id": " "}, "must not be empty"),
    ],
)
async def test_validation(  # noqa: PLR0917 - pytest fixtures
    hass: HomeAssistant,
    sim: Sim,
    entry: MockConfigEntry,
    service: str,
    data: dict[str, Any],
    match: str,
) -> None:
    """Bad input is refused before any call reaches Homecast."""
    sim.stats.reset()
    with pytest.raises(vol.Invalid, match=match):
        await _act(hass, entry, service, home=sim.state.homes[0].slug, **data)
    assert sim.stats.tools == {}


async def test_unknown_entry_or_home(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """An unknown entry or home is a translated validation error."""
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN,
            "homecast_delete_scene",
            {"config_entry_id": "nope", "home": "x", "name": "y"},
            blocking=True,
            return_response=True,
        )
    assert err.value.translation_key == "homecast_entry_not_found"
    with pytest.raises(ServiceValidationError) as err:
        await _act(hass, entry, "delete_scene", home="atlantis", name="y")
    assert err.value.translation_key == "homecast_home_not_found"


async def test_home_not_followed(hass: HomeAssistant, sim: Sim) -> None:
    """Actions only reach the homes the entry follows."""
    entry = token_entry(sim, homes=[sim.home_uuids()[0]])
    await setup_entry(hass, entry)
    with pytest.raises(ServiceValidationError):
        await _act(hass, entry, "delete_scene", home=sim.state.homes[1].slug, name="Movie Time")


async def test_action_errors(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """Unreachable backend and a revoked token are HA errors (the latter starts reauth)."""
    home = sim.state.homes[0].slug
    sim.faults.update({"error_rate": 1.0})
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, entry, "delete_scene", home=home, name="Movie Time")
    assert err.value.translation_key == "homecast_unreachable"
    sim.faults.reset()
    sim.state.revoke_token(TOKEN)
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, entry, "delete_scene", home=home, name="Movie Time")
    assert err.value.translation_key == "auth_failed"
    await hass.async_block_till_done()
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [f["context"]["source"] for f in flows] == ["reauth"]


async def test_without_response(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """Actions with optional response data also run without asking for it."""
    home = sim.state.homes[0]
    result = await hass.services.async_call(
        DOMAIN,
        "homecast_delete_scene",
        {"config_entry_id": entry.entry_id, "home": home.slug, "name": "Movie Time"},
        blocking=True,
    )
    assert result is None
    assert home.find_scene("Movie Time") is None


def test_response_shapes() -> None:
    """Homecast's answer is always an object for HA: lists and prose are wrapped."""
    from custom_components.mcp_gateway.backends.homecast.services import _response

    assert _response({"a": 1}) == {"a": 1}
    assert _response([1, 2]) == {"items": [1, 2]}
    assert _response("History is off") == {"message": "History is off"}


async def test_query_history_answers_a_user_only_what_they_may_read(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """`accessories` match by substring (homecast-web handleQueryHistory): a user who may read
    one accessory gets its series only, however loosely the accessories are named."""
    home = sim.state.homes[0]
    recorded = await _act(hass, entry, "query_history", home=home.slug)
    keys = sorted({s["accessory"] for s in recorded["series"]})
    assert len(keys) > 1
    mine = keys[0]
    registry = er.async_get(hass)
    readable = {
        e.entity_id: True
        for e in er.async_entries_for_config_entry(registry, entry.entry_id)
        if e.unique_id.endswith(mine[-4:]) or mine[-4:] in e.unique_id
    }
    assert readable
    hass_user.mock_policy({"entities": {"entity_ids": readable}})
    wanted = sorted({key[:1] for key in keys})  # one letter: many accessories match
    response = await hass.services.async_call(
        DOMAIN,
        "homecast_query_history",
        {"config_entry_id": entry.entry_id, "home": home.slug, "accessories": wanted},
        blocking=True,
        return_response=True,
        context=Context(user_id=hass_user.id),
    )
    assert {s["accessory"] for s in response["series"]} == {mine}
