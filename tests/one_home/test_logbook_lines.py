"""Logbook lines of backend writes through the gateway, over the real backends.

A snooze on the clock is one plain line naming the alarm, not the clock's twenty-odd entities;
a rule run names the rule that ran.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import Event, HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.catalog.store import GatewayCatalog
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext
from custom_components.mcp_gateway.permissions.policy import EVENT_GATEWAY_WRITE

from .conftest import MONDAY_6AM, OneHome

pytestmark = pytest.mark.freeze_time(MONDAY_6AM, tick=True)


async def _write(
    hass: HomeAssistant, user: MockUser, gateway: str, tool: str, args: dict[str, Any]
) -> Event:
    events: list[Event] = []
    unsub = hass.bus.async_listen(EVENT_GATEWAY_WRITE, events.append)
    try:
        result = await GatewayHandler(hass).call_tool(
            RequestContext("2025-11-25", "Claude", user, 1),
            gateway,
            {"tool": tool, "args": args},
        )
        await hass.async_block_till_done()
    finally:
        unsub()
    assert not result.get("isError"), result
    assert len(events) == 1
    return events[0]


async def test_snooze_names_the_alarm(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """Trigger names the alarm (and links its switch); the snooze names the ringing alarm."""
    alarm = next(iter(one_home.robine.alarms.values()))
    switch = one_home.entity_id("switch", one_home.robine_entry, f"alarm_{alarm.id}_enabled")
    gateway = _gateway(hass, one_home.robine_entry)
    trigger = await _write(hass, hass_admin_user, gateway, "trigger_alarm", {"id": alarm.id})
    name = hass.states.get(switch).attributes["friendly_name"]  # type: ignore[union-attr]
    assert trigger.data["summary"].endswith(f": trigger_alarm on {name}")
    assert trigger.data["entity_id"] == switch
    await one_home.advance(30)  # the poll that sees the session ringing

    snooze = await _write(hass, hass_admin_user, gateway, "snooze_session", {})
    summary = snooze.data["summary"]
    assert summary.endswith(f": snooze_session on alarm {alarm.label}")


def _gateway(hass: HomeAssistant, entry: MockConfigEntry) -> str:
    """The entry's gateway tool (one entry of each kind: its own)."""
    return next(
        backend.gateway_name
        for backend in GatewayCatalog.get(hass).exposed_backends()
        if backend.entry.entry_id == entry.entry_id
    )


async def test_rule_run_names_the_rule(
    hass: HomeAssistant, one_home: OneHome, hass_admin_user: MockUser
) -> None:
    """hub_call_rule by id: the line names the rule that ran."""
    event = await _write(
        hass,
        hass_admin_user,
        _gateway(hass, one_home.hubitat_entry),
        "hub_call_rule",
        {"ruleId": 101},
    )
    assert event.data["summary"].endswith(": hub_call_rule on rule Goodnight")
