"""Alarm and session times read in the clock's (or Home Assistant's) local time, with offset.

An alarm at 06:45 on a clock in Berlin is 06:45:00+01:00 wherever a person or an assistant
reads it: entity attributes, action responses, and the gateway's results (entity states and the
clock's own tools), even when the clock writes its instants in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.localtime import ISO_INSTANT
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.results import result_data

from .conftest import Sim, SimFactory, advance, make_entry, setup_entry

WEEKDAYS = "switch.bedroom_clock_weekdays"
WEEKDAYS_NEXT = "sensor.bedroom_clock_weekdays_next_ring"
NEXT_ALARM = "sensor.bedroom_clock_next_alarm"
SESSION = "sensor.bedroom_clock_session"


def _utc(value: Any) -> Any:
    """A clock that writes every instant in UTC (`Z`): the spec allows any offset."""
    if isinstance(value, str) and ISO_INSTANT.fullmatch(value):
        return datetime.fromisoformat(value).astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {key: _utc(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_utc(item) for item in value]
    return value


def _in_utc(sim: Sim) -> None:
    sim.device.reshape = lambda tool, data: _utc(data)


def _ctx(user: MockUser) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


async def test_gateway_shows_the_alarm_in_local_time(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, hass_admin_user: MockUser
) -> None:
    """The gateway shows alarm times in the clock's local time."""
    await hass.config.async_set_time_zone("Europe/Berlin")
    _in_utc(sim)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    handler = GatewayHandler(hass)
    result = await handler.call_tool(
        _ctx(hass_admin_user),
        "get_state",
        {"entity_ids": [WEEKDAYS, WEEKDAYS_NEXT, NEXT_ALARM], "fields": ["state", "attributes"]},
    )
    entities = {item["entity_id"]: item for item in result_data(result)["entities"]}
    # HA keeps the sensor's state in UTC; the gateway shows it as the clock shows it.
    assert hass.states.get(WEEKDAYS_NEXT).state == "2026-11-30T05:45:00+00:00"
    assert entities[WEEKDAYS_NEXT]["state"] == "2026-11-30T06:45:00+01:00"
    assert entities[NEXT_ALARM]["state"] == "2026-11-30T06:45:00+01:00"
    attributes = entities[WEEKDAYS]["attributes"]
    assert attributes["next_occurrence"] == "2026-11-30T06:45:00+01:00"
    assert attributes["next_occurrences"][:2] == [
        "2026-11-30T06:45:00+01:00",
        "2026-12-01T06:45:00+01:00",
    ]
    # The clock's own tools through the gateway: structured content and text alike.
    listed = await handler.call_tool(
        _ctx(hass_admin_user), "robine_wake_bedroom_clock", {"tool": "list_alarms", "args": {}}
    )
    assert not listed.get("isError"), listed
    weekdays = next(
        alarm for alarm in result_data(listed)["alarms"] if alarm["label"] == "Weekdays"
    )
    assert weekdays["next_occurrences"][0] == "2026-11-30T06:45:00+01:00"
    session = await handler.call_tool(
        _ctx(hass_admin_user),
        "robine_wake_bedroom_clock",
        {"tool": "trigger_alarm", "args": {"id": sim.alarm_id("Weekdays")}, "confirm": True},
    )
    assert not session.get("isError"), session
    assert result_data(session)["session"]["started_at"] == "2026-11-30T06:00:00+01:00"


async def test_times_follow_the_clocks_own_zone(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """A clock in New York, Home Assistant in Berlin: the clock's zone wins for its times."""
    await hass.config.async_set_time_zone("Europe/Berlin")
    sim = await sim_factory(timezone="America/New_York")
    _in_utc(sim)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    attributes = hass.states.get(WEEKDAYS).attributes
    assert attributes["next_occurrence"] == "2026-11-30T06:45:00-05:00"
    created = await hass.services.async_call(
        DOMAIN,
        "create_alarm",
        {"config_entry_id": entry.entry_id, "label": "Nap", "time": "13:00"},
        blocking=True,
        return_response=True,
    )
    assert created["alarm"]["next_occurrences"] == ["2026-11-30T13:00:00-05:00"]
    assert created["alarm"]["next_occurrence"] == "2026-11-30T13:00:00-05:00"
    rang = await hass.services.async_call(
        DOMAIN,
        "trigger_alarm",
        {"config_entry_id": entry.entry_id, "alarm_id": sim.alarm_id("Weekend")},
        blocking=True,
        return_response=True,
    )
    assert rang["session"]["started_at"] == "2026-11-30T00:00:00-05:00"
    await advance(hass, frozen, sim, 5)
    session = hass.states.get(SESSION)
    assert session.state == "ringing"
    assert session.attributes["started_at"].isoformat() == "2026-11-30T00:00:00-05:00"
    preview = await hass.services.async_call(
        DOMAIN,
        "preview_alarm",
        {"config_entry_id": entry.entry_id, "label": "P", "time": "07:00"},
        blocking=True,
        return_response=True,
    )
    assert preview["next_occurrences"] == ["2026-11-30T07:00:00-05:00"]


async def test_a_clock_without_a_zone_shows_home_assistants(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """No (or an unknown) settings.timezone: Home Assistant's zone, still with the offset."""
    await hass.config.async_set_time_zone("Europe/Lisbon")

    def no_zone(tool: str, data: Any) -> Any:
        data = _utc(data)
        if tool == "get_state":
            data["settings"]["timezone"] = "Mars/Olympus_Mons"
        return data

    sim.device.reshape = no_zone
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    attributes = hass.states.get(WEEKDAYS).attributes
    assert attributes["next_occurrence"] == "2026-11-30T05:45:00+00:00"  # Lisbon in winter

    # A clock (back in Berlin) sending naive times: read as its own wall time.
    def naive(tool: str, data: Any) -> Any:
        if tool == "get_state":
            for alarm in data["alarms"]:
                alarm["next_occurrence"] = "2026-12-01T08:00:00"
        return data

    sim.device.reshape = naive
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(WEEKDAYS_NEXT).state == "2026-12-01T07:00:00+00:00"
