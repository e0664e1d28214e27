"""Compact search answers and readable logbook lines."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.presentation import (
    devices_phrase,
    first_line,
    gateway_arguments,
)
from tests.results import result_data

from .conftest import Ctx

GATEWAY_NAME = "hubitat_test_hub"

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"


async def test_devices_phrase_names_devices(
    hass: HomeAssistant, fake_entry: MockConfigEntry
) -> None:
    """A person reads names, a few at most; ids only for what has no state."""
    assert devices_phrase(hass, []) == ""
    assert devices_phrase(hass, [PLUG]) == " on Kitchen plug"
    assert devices_phrase(hass, [PLUG, LAMP]) == " on Kitchen plug and Desk lamp"
    many = [PLUG, LAMP, THERMO, "light.gone", "light.gone_too"]
    assert devices_phrase(hass, many) == (
        " on Kitchen plug, Desk lamp, Hall thermometer, light.gone and 1 more"
    )


def test_first_line() -> None:
    """One sentence of a long description; short ones whole."""
    assert first_line("Turn a device on.\n\nDetails follow.") == "Turn a device on."
    long = "Store a new alarm. " + "x" * 300
    assert first_line(long) == "Store a new alarm."
    assert len(first_line("y" * 500)) == 160


def test_gateway_arguments() -> None:
    """args as JSON text or object; empty values are absent."""
    loose = {"tool": "t", "args": '{"a": 1}', "describe": [], "confirm": False}
    assert gateway_arguments(loose) == {"tool": "t", "args": {"a": 1}}
    assert gateway_arguments({"args": {"a": 1}}) == {"args": {"a": 1}}
    with pytest.raises(ValueError, match="not valid JSON"):
        gateway_arguments({"args": "{"})
    with pytest.raises(ValueError, match="must be a JSON object"):
        gateway_arguments({"args": "[]"})


async def test_search_is_compact(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """One line per tool; the best alone carries its schema and call, unless schemas=true."""
    from custom_components.mcp_gateway.gateway.handler import GatewayHandler

    handler = GatewayHandler(hass)
    ctx = Ctx(user=hass_admin_user)
    found = result_data(await handler.call_tool(ctx, "search_tools", {"query": "turn a device on"}))
    best, *rest = found["results"]
    assert best["tool"] == "switch_thing"
    assert best["about"] == "Turn a device on or off."
    assert best["call"] == {
        "name": GATEWAY_NAME,
        "arguments": {"tool": "switch_thing", "args": "{...}"},
    }
    assert "inputSchema" in best
    assert rest
    assert all(set(item) <= {"tool", "gateway", "about", "tier", "destructive"} for item in rest)
    full = result_data(
        await handler.call_tool(ctx, "search_tools", {"query": "turn a device on", "schemas": True})
    )
    assert all("inputSchema" in item for item in full["results"])
