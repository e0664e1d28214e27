"""Filters match the way people speak: case, aliases, partial words, floors, availability."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import (
    area_registry as ar,
    entity_registry as er,
    floor_registry as fr,
)
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.core.localtime import local_state
from custom_components.mcp_gateway.core.words import words
from custom_components.mcp_gateway.gateway.catalog.store import ToolFailure
from custom_components.mcp_gateway.gateway.finding import matching
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state

from .conftest import Ctx, FakeRuntime

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"


def _ids(result: dict[str, Any]) -> list[str]:
    return [item["entity_id"] for item in result["entities"]]


async def _get(hass: HomeAssistant, user: MockUser, **args: Any) -> dict[str, Any]:
    return await async_get_state(hass, Ctx(user=user), args)


async def test_area_by_part_alias_and_case(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """ "kitch", "KITCHEN", an alias and the id all find the Kitchen."""
    areas = ar.async_get(hass)
    kitchen = areas.async_get_area_by_name("Kitchen")
    assert kitchen is not None
    areas.async_update(kitchen.id, aliases={"Cookhouse"})
    for query in ("kitch", "KITCHEN", "cookhouse", kitchen.id):
        assert _ids(await _get(hass, hass_admin_user, area=query)) == [PLUG], query


async def test_whole_area_name_wins_over_partial(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """ "Office" means the Office, not also "Office Annex"; "off" is ambiguous and says so."""
    ar.async_get(hass).async_create("Office Annex")
    assert _ids(await _get(hass, hass_admin_user, area="office")) == [LAMP]
    result = await _get(hass, hass_admin_user, area="offic")
    assert _ids(result) == [LAMP]
    assert result["note"] == "Areas matching 'offic': Office, Office Annex."


async def test_area_word_in_the_name_of_an_unassigned_entity(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """No area "Hall", but the hall thermometer (no area) carries the word: it is found."""
    result = await _get(hass, hass_admin_user, area="hall")
    assert _ids(result) == [THERMO]
    assert "No area matches 'hall'" in result["note"]
    with pytest.raises(ToolFailure, match="Areas: Kitchen, Office"):
        await _get(hass, hass_admin_user, area="bedroom")


async def test_name_words_in_any_order_and_the_area_as_a_name(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Words match prefixes of the name, id, alias, device and area, in any order."""
    assert _ids(await _get(hass, hass_admin_user, name="lamp desk")) == [LAMP]
    assert _ids(await _get(hass, hass_admin_user, name="thermometers")) == [THERMO]
    # The area's name finds its entities.
    assert _ids(await _get(hass, hass_admin_user, name="kitchen")) == [PLUG]
    assert _ids(await _get(hass, hass_admin_user, name="office light")) == [LAMP]
    er.async_get(hass).async_update_entity(THERMO, aliases={"Corridor temperature"})
    assert _ids(await _get(hass, hass_admin_user, name="corridor")) == [THERMO]
    # The old substring match still works for ids.
    assert _ids(await _get(hass, hass_admin_user, name="desk_la")) == [LAMP]


async def test_empty_answer_names_what_exists(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """No match: the closest names and the areas with entities, instead of a bare []."""
    result = await _get(hass, hass_admin_user, name="desk lmp")
    assert result["total"] == 0
    assert "Closest names: Desk lamp" in result["hint"]
    assert "Areas with entities: Kitchen, Office." in result["hint"]


async def test_floor_filter(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A floor (name, alias or id) selects the entities of its areas."""
    floor = fr.async_get(hass).async_create("Ground floor", aliases={"downstairs"})
    areas = ar.async_get(hass)
    kitchen = areas.async_get_area_by_name("Kitchen")
    assert kitchen is not None
    areas.async_update(kitchen.id, floor_id=floor.floor_id)
    for query in ("ground floor", "Downstairs", floor.floor_id):
        assert _ids(await _get(hass, hass_admin_user, floor=query)) == [PLUG], query
    with pytest.raises(ToolFailure, match="Floors: Ground floor"):
        await _get(hass, hass_admin_user, floor="attic")


async def test_availability_filter(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """available=false lists the offline ones ("which devices are offline?")."""
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.coordinator.async_set_updated_data(
        {key: thing for key, thing in runtime.things.items() if key != "2"}
    )
    await hass.async_block_till_done()
    offline = await _get(hass, hass_admin_user, available=False)
    assert offline["entities"] == [
        {"entity_id": LAMP, "name": "Desk lamp", "state": "unavailable", "area": "Office"}
    ]
    assert _ids(await _get(hass, hass_admin_user, available=True)) == [THERMO, PLUG]


async def test_empty_values_mean_not_given(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Strict-mode clients fill every property; "" and [] filter nothing."""
    result = await _get(
        hass, hass_admin_user, area="", name="", floor="", backend="", domain=[], fields=[]
    )
    assert _ids(result) == [LAMP, THERMO, PLUG]


def test_words_match_rules() -> None:
    """Prefixes of words, plurals folded; short words only whole."""
    assert matching.words_match(["bed"], words("Master Bedroom"))
    assert matching.words_match(words("Lights"), words("light.kitchen"))
    assert not matching.words_match(["tv"], words("tvoc sensor"))
    assert matching.words_match(["tv"], words("Living room TV"))
    assert not matching.words_match(["garage"], words("Front door"))


def test_timestamp_states_in_local_time(hass: HomeAssistant) -> None:
    """An alarm's next ring, stored in UTC by HA, reads in the house's time zone with offset."""
    # fixed date: a stored state reformatted, never compared with the clock
    ring = State("sensor.next_alarm", "2026-03-03T14:45:00+00:00", {"device_class": "timestamp"})
    assert local_state(ring) == "2026-03-03T06:45:00-08:00"
    assert local_state(State("datetime.x", "2026-03-03T14:45:00+00:00")) == (
        "2026-03-03T06:45:00-08:00"
    )
    assert local_state(State("sensor.t", "21.5")) == "21.5"


def test_domain_words(hass: HomeAssistant) -> None:
    """A thermostat is found as "thermostat" or "temperature", blinds as "blinds"."""
    climate = matching.entity_words(hass, "climate.bedroom_ac", None, None, None)
    assert matching.words_match(words("bedroom temperature"), climate)
    assert matching.words_match(words("thermostat"), climate)
    cover = matching.entity_words(hass, "cover.office_window", None, None, None)
    assert matching.words_match(words("blinds"), cover)
    assert not matching.words_match(words("blinds"), climate)


async def test_whole_area_without_a_match_falls_back_to_partial_ones(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """An area literally "Kitch" has no plug; the Kitchen has: found there, and said so."""
    ar.async_get(hass).async_create("Kitch")
    result = await _get(hass, hass_admin_user, area="kitch", domain=["switch"])
    assert _ids(result) == [PLUG]
    assert "Nothing matches in Kitch; found in areas named like 'kitch'." in result["note"]
    # Nothing anywhere: an empty answer with a hint, not an unknown area.
    empty = await _get(hass, hass_admin_user, area="kitch", domain=["lock"])
    assert empty["total"] == 0
    assert "hint" in empty
