"""Requests that name one of two homes with identical twins (Rob's Flat, George Street): the
answers say which home each entity is in, and the home filter finds the one meant, so the
assistant never tells twins apart by their values."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)

from .assistant import GEORGE_STREET, ROBS_FLAT, Home, at_home, entities, results


def home_of(hass: HomeAssistant, entity_id: str) -> str | None:
    """The home Home Assistant's device registry puts an entity in (its device's parent)."""
    entry = er.async_get(hass).async_get(entity_id)
    devices = dr.async_get(hass)
    device = devices.async_get(entry.device_id) if entry and entry.device_id else None
    parent = devices.async_get(device.via_device_id) if device and device.via_device_id else None
    return (parent.name_by_user or parent.name) if parent else None


def area_of(hass: HomeAssistant, entity_id: str) -> str:
    """The name of the area an entity is in (its device's), else ''."""
    entry = er.async_get(hass).async_get(entity_id)
    device = dr.async_get(hass).async_get(entry.device_id) if entry and entry.device_id else None
    area_id = (entry.area_id if entry else None) or (device.area_id if device else None)
    area = ar.async_get(hass).async_get_area(area_id) if area_id else None
    return area.name if area else ""


def twins(hass: HomeAssistant, domain: str, words: str) -> dict[str, str]:
    """Home → entity id of the twins whose name and area have `words` (HA 2026, which begins
    entity ids with the area, has their devices named without the room)."""
    found = {}
    for state in hass.states.async_all(domain):
        said = f"{area_of(hass, state.entity_id)} {state.attributes.get('friendly_name', '')}"
        if set(words.split()) <= set(said.lower().split()):
            found[str(home_of(hass, state.entity_id))] = state.entity_id
    assert set(found) == {ROBS_FLAT, GEORGE_STREET}, found
    return found


def accessory(home: Home, home_name: str, key_part: str) -> Any:
    """The simulated accessory in a home whose key has `key_part`."""
    sim_home = next(
        h for h in home.sims.homecast.state.homes if h.name.casefold() == home_name.casefold()
    )
    return next(acc for acc in sim_home.all_accessories() if key_part in acc.slug)


async def device_shows(check: Callable[[], bool], seconds: float = 2.0) -> bool:
    """Whether the simulated device shows a change within `seconds`: Homecast's relay takes
    the write and HomeKit applies it a moment later (the simulator's write delay)."""
    for _ in range(int(seconds / 0.05)):
        if check():
            return True
        await asyncio.sleep(0.05)
    return check()


async def _one_at(home: Home, home_name: str, args: dict[str, Any]) -> dict[str, Any]:
    """get_state with the home filter: one entity, and the answer says it is in that home."""
    assert home.assistant.accepts("get_state", "home")
    data, _ = await home.assistant.call("get_state", {**args, "home": home_name})
    found = entities(data)
    assert len(found) == 1, data
    assert at_home(found, home_name) == found, found
    assert home_of(home.hass, found[0]["entity_id"]) == home_name
    return found[0]


async def test_turn_off_the_desk_lamp_at_robs_flat(home: Home) -> None:
    """ "Turn off the desk lamp in the kitchen at Rob's Flat." """
    lamps = twins(home.hass, "light", "kitchen desk lamp")
    await home.hass.services.async_call(
        "light", "turn_on", {"entity_id": list(lamps.values())}, blocking=True
    )
    # Both lamps were on before the request, not a moment before it.
    for place in lamps:
        assert await device_shows(
            lambda place=place: accessory(home, place, "kitchen_desk_lamp").values["on"] is True
        )
    lamp = await _one_at(home, ROBS_FLAT, {"name": "kitchen desk lamp", "domain": ["light"]})
    data, _ = await home.assistant.call(
        "set_state", {"updates": [{"entity_id": lamp["entity_id"], "state": "off"}]}
    )
    [result] = results(data)
    assert result["status"] == "done", data
    assert await device_shows(
        lambda: accessory(home, ROBS_FLAT, "kitchen_desk_lamp").values["on"] is False
    )
    assert accessory(home, GEORGE_STREET, "kitchen_desk_lamp").values["on"] is True


async def test_is_the_alarm_at_george_street_on(home: Home) -> None:
    """ "Is the alarm at George Street switched on?" — while Rob's Flat's twin is armed."""
    panels = twins(home.hass, "alarm_control_panel", "security system")
    await home.hass.services.async_call(
        "alarm_control_panel",
        "alarm_arm_away",
        {"entity_id": panels[ROBS_FLAT]},
        blocking=True,
    )
    assert await device_shows(
        lambda: accessory(home, ROBS_FLAT, "security_system").values["alarm_state"] != "off"
    )
    panel = await _one_at(
        home, GEORGE_STREET, {"name": "security system", "domain": ["alarm_control_panel"]}
    )
    assert panel["entity_id"] == panels[GEORGE_STREET]
    assert panel["state"] == "disarmed"
    assert accessory(home, GEORGE_STREET, "security_system").values["alarm_state"] == "off"


async def test_lock_the_back_door_at_george_street(home: Home) -> None:
    """ "Lock the back door at George Street." """
    locks = twins(home.hass, "lock", "back door")
    await home.hass.services.async_call(
        "lock", "unlock", {"entity_id": list(locks.values())}, blocking=True
    )
    # Both doors were unlocked before the request, not a moment before it.
    for place in locks:
        assert await device_shows(
            lambda place=place: accessory(home, place, "back_door_lock").values["locked"] is False
        )
    lock = await _one_at(home, GEORGE_STREET, {"name": "back door", "domain": ["lock"]})
    data, _ = await home.assistant.call(
        "set_state", {"updates": [{"entity_id": lock["entity_id"], "state": "locked"}]}
    )
    [result] = results(data)
    assert result["status"] == "done", data
    assert await device_shows(
        lambda: accessory(home, GEORGE_STREET, "back_door_lock").values["locked"] is True
    )
    assert accessory(home, ROBS_FLAT, "back_door_lock").values["locked"] is False


async def test_are_all_the_doors_locked(home: Home) -> None:
    """ "Are all the doors locked?" — every lock once, twins told apart by their home."""
    data, _ = await home.assistant.call(
        "get_state", {"domain": ["lock"], "fields": ["name", "state", "home"]}
    )
    found = entities(data)
    labels = [(lock["name"], lock.get("home")) for lock in found]
    assert len(set(labels)) == len(labels), labels
    for lock in found:
        assert lock["state"] == home.hass.states.get(lock["entity_id"]).state
        if (place := home_of(home.hass, lock["entity_id"])) is not None:
            assert lock["home"] == place


async def test_was_the_back_door_at_robs_flat_opened_today(home: Home) -> None:
    """ "Has anyone unlocked the back door at Rob's Flat in the last two hours?" """
    assert home.assistant.accepts("get_history", "home")
    data, is_error = await home.assistant.call(
        "get_history",
        {"name": "back door", "domain": ["lock"], "hours": 2, "home": ROBS_FLAT},
    )
    assert not is_error, data
    [(entity_id, entity)] = data["entities"].items()
    assert home_of(home.hass, entity_id) == ROBS_FLAT
    assert data.get("coverage"), data
    assert "recorded_from" in entity or "not_recorded" in entity, entity
