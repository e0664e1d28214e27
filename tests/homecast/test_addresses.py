"""What a Homecast call reaches and what of its answers a caller sees: the odd answers and
addresses the gateway tests do not produce."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
import pytest

from custom_components.mcp_gateway.backends.homecast.addresses import (
    UNFOLLOWED,
    filter_automations,
    filter_state,
    home_keys,
)
from custom_components.mcp_gateway.backends.homecast.api import HomecastState
from custom_components.mcp_gateway.backends.homecast.scenes import home_device_key
from custom_components.mcp_gateway.framework.base import UnknownListing

from .conftest import Sim, setup_entry, token_entry


class _Shown:
    """Shows exactly the device keys it is given."""

    def __init__(self, *keys: str) -> None:
        self.keys = set(keys)
        self.asked: list[str] = []

    def device(self, key: str) -> bool:
        self.asked.append(key)
        return key in self.keys

    def entities(self, keys: Iterable[tuple[Platform, str]]) -> bool:
        return False

    def secrets(self) -> bool:
        return False


@pytest.fixture
async def data(hass: HomeAssistant, sim: Sim) -> HomecastState:
    """The data of an entry that follows the first of the account's two homes."""
    entry = token_entry(sim, homes=[sim.home_uuids()[0]])
    await setup_entry(hass, entry)
    state = entry.runtime_data.coordinator.data
    assert isinstance(state, HomecastState)
    return state


def test_a_display_name_may_also_mean_an_unfollowed_home(data: HomecastState) -> None:
    """A home's display name may be shared by a home the entry does not follow; its slug or
    UUID names one home only."""
    (home,) = data.homes.values()
    assert home_keys(data, home.name) == [home_device_key(home), UNFOLLOWED]
    assert home_keys(data, home.key) == [home_device_key(home)]
    assert home_keys(data, home.uuid.upper()) == [home_device_key(home)]
    assert home_keys(data, "Nowhere") == ["home 'Nowhere'"]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (["not", "an", "object"], "get_state: not an object"),
        ({"home": ["rooms"]}, "get_state: home is not an object"),
        ({"home": {"room": "accessories"}}, "get_state: home.room is not an object"),
    ],
)
def test_state_in_an_unknown_shape_is_refused(data: HomecastState, answer: Any, text: str) -> None:
    """An answer that cannot be filtered is never passed on unfiltered."""
    with pytest.raises(UnknownListing, match=text):
        filter_state(data, answer, _Shown())


def test_an_accessory_we_do_not_know_is_shown_by_its_path(data: HomecastState) -> None:
    """An accessory the last poll did not see is decided by its own address, not by
    the home it is in."""
    (home,) = data.homes.values()
    acc = next(iter(home.accessories.values()))
    answer = {
        home.key: {
            acc.room_key: {acc.key: {"on": True}, "newcomer_ab12": {"on": False}},
            "_scenes": ["Evening"],
        },
        "_meta": {"source": "sim"},
    }
    shown = _Shown(f"{home.key}/{acc.room_key}/newcomer_ab12")
    filtered, withheld = filter_state(data, answer, shown)
    assert filtered == {
        home.key: {acc.room_key: {"newcomer_ab12": {"on": False}}},
        "_meta": {"source": "sim"},
    }
    assert withheld == 2  # the known accessory and the scenes
    assert f"{home.key}/{acc.room_key}/newcomer_ab12" in shown.asked
    assert answer[home.key]["_scenes"] == ["Evening"]  # the caller's answer is untouched


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("text", "get_automations: not an object"),
        ({"home": {"name": "one"}}, "get_automations: home is not a list"),
    ],
)
def test_automations_in_an_unknown_shape_are_refused(
    data: HomecastState, answer: Any, text: str
) -> None:
    """As for the state: an unfilterable answer is refused."""
    with pytest.raises(UnknownListing, match=text):
        filter_automations(data, answer, _Shown())
