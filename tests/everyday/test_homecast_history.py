"""Homecast's own history through the gateway: a read scoped to accessories the caller may
read is answered; one that may reach others is refused with how to scope it, naming none of
them; get_history offers Homecast's history for Homecast entities as it does for the hub's."""

from __future__ import annotations

import json
from typing import Any

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
import pytest

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.settings import GatewaySettings
from custom_components.mcp_gateway.framework.entity import without_area
from custom_components.mcp_gateway.permissions import visibility

from .assistant import GEORGE_STREET, ROBS_FLAT, Assistant, Home


def _hide_accessory(hass: HomeAssistant, words: str, home_name: str) -> str:
    """Un-expose every entity of the Homecast accessory whose name has `words` in a home;
    its device name."""
    devices = dr.async_get(hass)
    registry = er.async_get(hass)
    entries = {entry.entry_id for entry in hass.config_entries.async_entries(DOMAIN)}
    homecast = (
        device
        for entry_id in entries
        for device in dr.async_entries_for_config_entry(devices, entry_id)
    )
    for device in homecast:
        parent = devices.async_get(device.via_device_id) if device.via_device_id else None
        if parent is None or (parent.name or "").casefold() != home_name.casefold():
            continue
        # The accessory's name: the device's without its home, with its room in front where
        # HA 2026 (which begins entity ids with the area) has the device named without it.
        area = ar.async_get(hass).async_get_area(device.area_id) if device.area_id else None
        name = (device.name or "").removeprefix(f"{parent.name} ")
        if area is not None and without_area(area.name, name) == name:
            name = f"{area.name} {name}"
        if words in name.lower():
            for entity in er.async_entries_for_device(registry, device.id):
                async_expose_entity(hass, "conversation", entity.entity_id, False)
            return str(device.name)
    raise AssertionError(f"no {words!r} in {home_name}")


def _home_key(home: Home, name: str) -> str:
    return next(
        h.slug for h in home.sims.homecast.state.homes if h.name.casefold() == name.casefold()
    )


async def _other_user(home: Home, hass_client: Any, *, admin: bool) -> Assistant:
    """An assistant connected with another Home Assistant user's token."""
    hass = home.hass
    user = await hass.auth.async_create_user(
        "Guest", group_ids=["system-admin" if admin else "system-users"]
    )
    refresh = await hass.auth.async_create_refresh_token(user, "https://example.com/")
    token = hass.auth.async_create_access_token(refresh)
    return await Assistant(await hass_client(token)).start()


@pytest.mark.parametrize("admin", [True, False])
async def test_motion_at_robs_flat_in_the_last_hour(
    home: Home, hass_client: Any, admin: bool
) -> None:
    """ "Has there been motion at Rob's Flat in the last hour?" — HA's part, and Homecast's
    own history of what the recorder lacks in the same answer (for an administrator and a
    user); the call it was read with answers the same when made directly."""
    # As HA's defaults leave them: locks are not exposed to assistants.
    _hide_accessory(home.hass, "back door lock", ROBS_FLAT)
    _hide_accessory(home.hass, "back door lock", GEORGE_STREET)
    assistant = home.assistant if admin else await _other_user(home, hass_client, admin=False)
    data, is_error = await assistant.call(
        "get_history", {"name": "kitchen hall motion", "home": ROBS_FLAT, "hours": 1}
    )
    assert not is_error, data
    motion = {
        entity_id: entity
        for entity_id, entity in data["entities"].items()
        if entity_id.startswith("binary_sensor.") and "motion" in entity_id
    }
    assert motion, data
    for entity in motion.values():
        backend = entity["backend"]
        assert backend["source"].endswith("(get_history)"), backend
        assert backend["count"] == len(backend["events"])
        assert {value for _, value in backend["events"]} <= {"true", "false"}, backend
        assert "backend_history" not in entity
    tool = assistant.gateway("homecast")
    args = {"accessory": "kitchen_hall_motion", "home": _home_key(home, ROBS_FLAT), "hours": 1}
    events, is_error = await assistant.call(tool, {"tool": "get_history", "args": args})
    assert not is_error, events
    assert events["home"] == _home_key(home, ROBS_FLAT)
    assert "motion" in json.dumps(events)


async def test_a_read_that_may_reach_a_hidden_accessory_names_none(home: Home) -> None:
    """ "When did the back door last open?" asked so loosely that Homecast could pick an
    accessory not exposed to assistants: refused, saying which argument scopes it, naming
    nothing hidden."""
    hidden = _hide_accessory(home.hass, "back door", ROBS_FLAT)
    tool = home.assistant.gateway("homecast")
    data, is_error = await home.assistant.call(
        tool, {"tool": "get_history", "args": {"accessory": "back door"}}
    )
    assert is_error, data
    text = json.dumps(data)
    assert "`accessory`" in text, text
    assert "`home`" in text, text
    assert "back_door_lock_f7b3" not in text, text
    assert hidden not in text, text
    # Without `accessories` query_history reads a whole home: refused the same way.
    data, is_error = await home.assistant.call(
        tool, {"tool": "query_history", "args": {"home": ROBS_FLAT}}
    )
    assert is_error, data
    text = json.dumps(data)
    assert "`accessories`" in text, text
    assert "back_door_lock_f7b3" not in text, text
    assert hidden not in text, text


async def test_query_history_answers_only_what_may_be_read(home: Home) -> None:
    """query_history's `accessories` match by substring: the answer keeps the series of the
    exposed ones and says how many it left out."""
    tool = home.assistant.gateway("homecast")
    args = {"home": _home_key(home, ROBS_FLAT), "accessories": ["kitchen"]}
    hidden = _hide_accessory(home.hass, "kitchen hall motion", ROBS_FLAT)
    data, is_error = await home.assistant.call(tool, {"tool": "query_history", "args": args})
    assert not is_error, data
    keys = {s["accessory"] for s in data["series"]}
    assert keys, data
    assert not any("kitchen_hall_motion" in key for key in keys), keys
    assert data["_gateway"]["withheld"] >= 1, data
    assert hidden not in json.dumps(data)


async def test_whole_home_reads_when_exposure_is_off(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With "only exposed entities" off, an administrator may read a whole home's history,
    the accessories hidden from assistants included."""
    _hide_accessory(home.hass, "kitchen hall motion", ROBS_FLAT)
    monkeypatch.setattr(
        visibility, "gateway_settings", lambda hass: GatewaySettings(exposed_only=False)
    )
    tool = home.assistant.gateway("homecast")
    data, is_error = await home.assistant.call(
        tool, {"tool": "query_history", "args": {"home": _home_key(home, ROBS_FLAT)}}
    )
    assert not is_error, data
    assert any("kitchen_hall_motion" in s["accessory"] for s in data["series"]), data
