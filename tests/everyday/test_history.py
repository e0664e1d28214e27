"""History asked for further back than Home Assistant's recorder reaches (it started with the
test): every answer says from when it knows, and brings (or offers) the backend's own history
of the rest."""

from __future__ import annotations

from datetime import timedelta
import json

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway.finding.unexposed import SETTING
from simulators.hubitat.devices import Event
from tests.hubitat.sim import first_device

from .assistant import Home


async def test_any_movement_in_the_kitchen_in_the_last_two_hours(home: Home) -> None:
    """ "Has anybody been moving about in the kitchen in the last two hours?" — HA's part,
    then the hub's own history for what HA has not recorded."""
    data, is_error = await home.assistant.call(
        "get_history", {"area": "kitchen", "name": "motion", "hours": 2}
    )
    assert not is_error, data
    motion = data["entities"]
    assert motion, data
    # No entity's answer may read as two hours of knowledge: each says from when HA has it.
    assert data.get("coverage"), data
    for entity_id, entity in motion.items():
        assert "recorded_from" in entity or "not_recorded" in entity, (entity_id, entity)
    # The backends' own history of what HA lacks comes in the same answer, labelled.
    merged = [entity["backend"] for entity in motion.values() if "backend" in entity]
    assert merged, "the backends keep history of their motion sensors; the answer brings none"
    sources = {backend["source"].rsplit(" (", 1)[-1] for backend in merged}
    assert sources == {"hub_list_device_events)", "get_history)"}, merged
    for entity in motion.values():
        if "backend" not in entity and "backend_history" in entity:
            call = entity["backend_history"]
            events, is_error = await home.assistant.call(call["name"], call["arguments"])
            assert not is_error, events


async def test_was_the_garage_door_opened_in_the_last_three_hours(home: Home) -> None:
    """ "Was the garage door opened in the last three hours?" """
    data, is_error = await home.assistant.call("get_history", {"name": "garage door", "hours": 3})
    assert not is_error, data
    assert data["entities"], data
    assert data.get("coverage"), data
    for entity_id, entity in data["entities"].items():
        assert "recorded_from" in entity or "not_recorded" in entity, (entity_id, entity)
        # What HA holds is what the devices did: the door is closed, as the hub says.
        if entity_id.startswith("cover."):
            assert entity["points"], (entity_id, entity, data)
            assert entity["points"][-1][1] == home.hass.states.get(entity_id).state


async def test_has_there_been_any_motion_in_the_last_hour(home: Home) -> None:
    """ "Has there been any motion in the last hour?" asked just after HA started: one call
    answers it whole, with the hub's own events merged where HA's recorder does not reach."""
    device = first_device(home.sims.hubitat.hub, "motion")
    before_ha = dt_util.now() - timedelta(minutes=20)
    device.events.append(Event("motion", "active", None, "motion is active", before_ha))
    data, is_error = await home.assistant.call("get_history", {"name": "motion", "hours": 1})
    assert not is_error, data
    assert data.get("coverage"), data
    motion = {
        e: v
        for e, v in data["entities"].items()
        if e.startswith("binary_sensor.") and v.get("home") == "Home Hub"
    }
    assert motion, data
    # Every hub sensor has the hub's events merged, labelled: no second round of calls.
    assert all("backend" in entity for entity in motion.values()), motion
    assert all("backend_history" not in entity for entity in motion.values()), motion
    seen = [
        (dt_util.parse_datetime(when), value)
        for entity in motion.values()
        for when, value in entity["backend"].get("events", [])
    ]
    assert any(
        when is not None and abs(when - before_ha) < timedelta(seconds=1) and value == "active"
        for when, value in seen
    ), seen
    # What the merge adds stays small: events summarised to the attribute asked, capped.
    added = json.dumps([entity["backend"] for entity in motion.values()])
    assert len(added) <= 2000, added


async def test_when_was_the_lock_last_opened_on_a_plain_install(home: Home) -> None:
    """ "When was the back door unlocked?" where HA exposes no lock to assistants (its
    default): the answer names the locks as not exposed and the setting, not "no such
    lock"."""
    registry = er.async_get(home.hass)
    locks = [
        entry.entity_id
        for entry in registry.entities.values()
        if entry.platform == DOMAIN and entry.domain == "lock"
    ]
    assert locks
    for lock in locks:
        async_expose_entity(home.hass, "conversation", lock, False)
    data, is_error = await home.assistant.call("get_history", {"domain": ["lock"], "hours": 2})
    assert is_error, data
    text = json.dumps(data, ensure_ascii=False)
    assert "not exposed to assistants" in text, text
    assert SETTING in text, text
    assert any(lock in text for lock in locks), text
    assert "No entity matches" not in text, text
