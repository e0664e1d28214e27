"""Compact search answers and readable logbook lines."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.framework.base import ToolClass, ToolTier
from custom_components.mcp_gateway.gateway.calls.replies import devices_phrase
from custom_components.mcp_gateway.gateway.catalog.gateway_tool import gateway_arguments
from custom_components.mcp_gateway.gateway.catalog.ranking import first_line, rank_hits
from custom_components.mcp_gateway.gateway.catalog.search import Bm25Index, SearchDocument
from custom_components.mcp_gateway.gateway.catalog.store import BackendTool
from tests.results import result_data

from .conftest import Ctx

GATEWAY_NAME = "hubitat_test_hub"

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"


async def test_devices_phrase_names_devices(
    hass: HomeAssistant, fake_entry: MockConfigEntry
) -> None:
    """A person reads names, a few at most; ids only for what has no state. A device's
    entities are one name (its own), and the backend's subject comes first."""
    assert devices_phrase(hass, []) == ""
    assert devices_phrase(hass, [[PLUG]]) == " on Kitchen plug"
    assert devices_phrase(hass, [[PLUG], [LAMP]]) == " on Kitchen plug and Desk lamp"
    many = [[PLUG], [LAMP], [THERMO], ["light.gone"], ["light.gone_too"]]
    assert devices_phrase(hass, many) == (
        " on Kitchen plug, Desk lamp, Hall thermometer, light.gone and 1 more"
    )
    # A device's entities (a clock's 21) come as one group: the device's name, once.
    device_id = er.async_get(hass).async_get(PLUG).device_id  # type: ignore[union-attr]
    assert device_id is not None
    dr.async_get(hass).async_update_device(device_id, name_by_user="Counter plug")
    group = [PLUG, "sensor.counter_plug_power"]
    assert devices_phrase(hass, [group, [LAMP], group]) == " on Counter plug and Desk lamp"
    assert devices_phrase(hass, [[PLUG]], "rule Goodnight") == " on rule Goodnight and Counter plug"


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


def _ranked(tools: list[tuple[str, str, ToolTier, bool, dict[str, Any]]], query: str) -> list[str]:
    """rank_hits over one backend's tools given as (name, description, tier, destructive, hints)."""
    subs = {
        ("gw", name): BackendTool.of(
            name,
            {"name": name, "description": text, "annotations": hints},
            ToolClass(tier, destructive),
        )
        for name, text, tier, destructive, hints in tools
    }
    refs: dict[str, tuple[str | None, str]] = {name: ("gw", name) for _, name in subs}
    index = Bm25Index(
        SearchDocument(name, name, "", sub.description) for (_, name), sub in subs.items()
    )
    return [name for _, name in rank_hits(index, refs, subs, query, 5, core={})]


def test_ranking_follows_what_the_request_means() -> None:
    """Same words, different wishes: a question reads, a change changes, a removal deletes."""
    same = "The location mode of the hub."
    tools = [
        ("get_mode", same, ToolTier.READ, False, {"readOnlyHint": True}),
        ("set_mode", same, ToolTier.CONTROL, False, {"readOnlyHint": False}),
        ("delete_mode", same, ToolTier.ADMIN, True, {"destructiveHint": True}),
    ]
    assert _ranked(tools, "which location mode is the hub in")[0] == "get_mode"
    assert _ranked(tools, "change the hub's location mode")[0] == "set_mode"
    assert _ranked(tools, "remove the location mode from the hub")[0] == "delete_mode"
    assert _ranked(tools, "hub location mode")[-1] == "delete_mode"


def test_destructive_tools_rank_below_a_safe_one_that_does_it() -> None:
    """ "arm the security system": an admin tool that rewrites settings is not the answer."""
    tools = [
        (
            "hub_set_system_settings",
            "Change hub-wide settings such as the security system and the system name.",
            ToolTier.ADMIN,
            True,
            {"destructiveHint": True},
        ),
        ("hub_set_hsm", "Arm or disarm the safety monitor.", ToolTier.CONTROL, False, {}),
    ]
    assert _ranked(tools, "arm the security system away") == [
        "hub_set_hsm",
        "hub_set_system_settings",
    ]


def test_a_guarded_tool_named_for_the_request_still_comes_first() -> None:
    """ "make a backup of the hub": the guarded tool named for exactly that is the answer."""
    tools = [
        (
            "hub_create_backup",
            "Take a full hub database backup now.",
            ToolTier.ADMIN,
            True,
            {"destructiveHint": True},
        ),
        ("create_automation", "Create an automation.", ToolTier.ADMIN, False, {}),
    ]
    assert _ranked(tools, "make a backup of the hub now")[0] == "hub_create_backup"
