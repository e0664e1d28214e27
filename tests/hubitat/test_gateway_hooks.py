"""Gateway hooks: the flattened catalog, calls through gateways, classification, diagnostics."""

from __future__ import annotations

from datetime import datetime
import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
import pytest

from custom_components.mcp_gateway.backends.hubitat.const import ISSUE_KEY_REFUSED
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.backends.hubitat.tools import (
    MODE_SELECT,
    device_keys,
    filter_listing,
    resolve_device,
)
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.diagnostics import async_get_config_entry_diagnostics
from custom_components.mcp_gateway.framework.base import ToolClass, ToolTier, UnknownListing
from custom_components.mcp_gateway.mcp.errors import McpRpcError
from simulators.hubitat import GATEWAYS, TOOL_DEFS

from .conftest import TOKEN, Sim, SimFactory, entity_id, first, make_entry, setup_entry


async def test_catalog_is_flat_and_cached(sim: Sim, runtime: HubitatRuntime) -> None:
    """Every tool once, no gateway names; a second listing costs one tools/list."""
    tools = await runtime.async_list_tools()
    names = [tool["name"] for tool in tools]
    assert len(names) == len(set(names)) == len(TOOL_DEFS)
    assert not set(names) & set(GATEWAYS)
    assert all("inputSchema" in tool for tool in tools)
    sim.stats.reset()
    assert await runtime.async_list_tools() is tools
    assert dict(sim.stats.methods) == {"tools/list": 1}
    assert not sim.stats.tools


async def test_catalog_refreshes_when_gateways_change(sim: Sim, runtime: HubitatRuntime) -> None:
    """The hub switched to flat mode: the catalog is rebuilt from the flat list."""
    first_catalog = await runtime.async_list_tools()
    sim.tools.gateways = False
    flat = await runtime.async_list_tools()
    assert flat is not first_catalog
    assert {tool["name"] for tool in flat} == {
        tool.name for tool in TOOL_DEFS if tool.name != "hub_search_tools"
    }
    # Sub-tools are now called by their own names.
    result = await runtime.async_call_tool("hub_list_modes", {})
    assert result.data["currentMode"] == "Day"
    result = await runtime.async_call_tool("hub_list_rooms", {})
    assert result.data["count"] >= 3


async def test_call_reads_and_writes_through_gateways(sim: Sim, runtime: HubitatRuntime) -> None:
    """Sub-tools go through their gateway; writes carry the key inside args."""
    result = await runtime.async_call_tool("hub_list_devices", {"format": "ids"})
    assert sorted(result.data["deviceIds"]) == sorted(d.id for d in sim.hub.visible_devices())
    plug = first(sim, "switch")
    sim.stats.reset()
    result = await runtime.async_call_tool(
        "hub_call_device_command", {"deviceId": str(plug.id), "command": "on"}
    )
    assert result.data["success"] is True
    assert plug.value("switch") == "on"
    assert dict(sim.stats.tools) == {"hub_manage_devices": 1}
    # A core write tool gets the key too.
    result = await runtime.async_call_tool("hub_set_hsm", {"armCommand": "armHome"})
    assert result.data["success"] is True


async def test_call_key_refused_raises_repair_issue(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime
) -> None:
    """A gateway caller's write refused by the key gate raises the same repair issue."""
    runtime.api.send_key = False
    with pytest.raises(McpRpcError):
        await runtime.async_call_tool("hub_set_hsm", {"armCommand": "armHome"})
    issue_id = f"{ISSUE_KEY_REFUSED}_{runtime.entry.entry_id}"
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None
    # Reads never need the key and leave the issue alone.
    await runtime.async_call_tool("hub_get_hsm_status", {})
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None
    runtime.api.send_key = True
    await runtime.async_call_tool("hub_set_hsm", {"armCommand": "disarm"})
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None


async def test_other_rpc_errors_pass_through(runtime: HubitatRuntime) -> None:
    """Validation errors that are not about the key reach the caller unchanged."""
    with pytest.raises(McpRpcError, match="Device not found"):
        await runtime.async_call_tool(
            "hub_call_device_command", {"deviceId": "99999", "command": "on"}
        )


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ({"name": "hub_list_devices"}, ToolClass(ToolTier.READ)),
        ({"name": "hub_call_device_command"}, ToolClass(ToolTier.CONTROL)),
        ({"name": "hub_set_hsm"}, ToolClass(ToolTier.CONTROL)),
        ({"name": "hub_manage_mode"}, ToolClass(ToolTier.CONTROL)),
        ({"name": "hub_reboot"}, ToolClass(ToolTier.ADMIN, destructive=True)),
        ({"name": "hub_call_rule"}, ToolClass(ToolTier.ADMIN)),
        # Reads of the hub's insides: files, source, backups, app settings, logs.
        ({"name": "hub_read_file"}, ToolClass(ToolTier.ADMIN)),
        ({"name": "hub_get_source"}, ToolClass(ToolTier.ADMIN)),
        ({"name": "hub_get_backup"}, ToolClass(ToolTier.ADMIN)),
        ({"name": "hub_get_app_config"}, ToolClass(ToolTier.ADMIN)),
        ({"name": "hub_get_logs"}, ToolClass(ToolTier.ADMIN)),
        # Exports save files: writes, whatever their annotations say.
        (
            {"name": "hub_export_native_app", "annotations": {"readOnlyHint": True}},
            ToolClass(ToolTier.ADMIN),
        ),
        # A tool the hub's own schema asks `confirm` for is destructive.
        (
            {"name": "hub_set_rule", "inputSchema": {"properties": {"confirm": {}}}},
            ToolClass(ToolTier.ADMIN, destructive=True),
        ),
        # Tools of a newer app: admin, unless not a hub tool and read-only by its own hint.
        (
            {"name": "hub_new_read", "annotations": {"readOnlyHint": True}},
            ToolClass(ToolTier.ADMIN),
        ),
        ({"name": "other_read", "annotations": {"readOnlyHint": True}}, ToolClass(ToolTier.READ)),
        ({"name": "hub_new_thing"}, ToolClass(ToolTier.ADMIN)),
    ],
)
def test_tool_class(tool: dict, expected: ToolClass) -> None:
    """Devices, HSM and mode are control; rules, reboot and unknown tools admin; reads read."""
    assert HubitatRuntime.tool_class(None, tool) == expected  # type: ignore[arg-type]


def test_call_class() -> None:
    """hub_manage_mode: activating is control; create and rename admin; delete also confirmed."""
    control = ToolClass(ToolTier.CONTROL)
    call_class = HubitatRuntime.call_class
    for action in ("activate", "Activate "):
        args = {"action": action, "mode": "Night"}
        assert call_class(None, control, "hub_manage_mode", args) == control  # type: ignore[arg-type]
    for action, destructive in (("create", False), ("rename", False), ("delete", True)):
        assert call_class(None, control, "hub_manage_mode", {"action": action}) == ToolClass(  # type: ignore[arg-type]
            ToolTier.ADMIN, destructive=destructive
        )
    read = ToolClass(ToolTier.READ)
    assert call_class(None, read, "hub_get_metrics", {}) == read  # type: ignore[arg-type]
    snapshot = {"recordSnapshot": True}
    assert call_class(None, read, "hub_get_metrics", snapshot).tier is ToolTier.ADMIN  # type: ignore[arg-type]


async def test_every_catalog_tool_is_classified(runtime: HubitatRuntime) -> None:
    """Writes follow the app's read-only list (getReadOnlyToolNames); internals are admin.

    Before, a read-only HA user got 48 of the hub's tools, files and source among them.
    """
    by_name = {tool.name: tool for tool in TOOL_DEFS}
    readable = []
    for tool in await runtime.async_list_tools():
        tool_class = runtime.tool_class(tool)
        write = by_name[tool["name"]].write
        if tool_class.tier is ToolTier.READ:
            assert not write, tool["name"]
            readable.append(tool["name"])
        if by_name[tool["name"]].confirm:
            assert tool_class.destructive or tool["name"] == "hub_manage_mode", tool["name"]
    # Custom and visual rules carry webhook URLs and hidden devices' ids: administrators only.
    assert len(readable) == 26
    assert not {"hub_get_custom_rule", "hub_test_custom_rule", "hub_get_visual_rule"} & set(
        readable
    )
    assert not {"hub_read_file", "hub_list_files", "hub_get_source", "hub_get_logs"} & set(readable)


async def test_exports_are_writes_with_the_key(runtime: HubitatRuntime, sim: Sim) -> None:
    """hub_export_custom_rule saves a file: it is a write, so the key goes with it."""
    sim.tools.engine.enabled = True  # exports need the custom rule engine (off by default)
    rule_id = next(iter(sim.hub.custom_rules))
    result = await runtime.async_call_tool("hub_export_custom_rule", {"ruleId": rule_id})
    assert result.is_error is False


def test_device_keys_in_call() -> None:
    """deviceId, deviceIds, commands[].deviceId, and the same inside a gateway's args, each
    in the form the app compares (trimmed text, an integral number's digits)."""
    assert device_keys({"deviceId": "12"}) == ["12"]
    assert device_keys({"deviceIds": [1, "2", 1, " 2 ", 3.0]}) == ["1", "2", "3"]
    assert device_keys(
        {"commands": [{"deviceId": 3, "command": "on"}, {"command": "off"}, "junk"]}
    ) == ["3"]
    assert device_keys(
        {"tool": "hub_call_device_command", "args": {"deviceId": "7", "command": "on"}}
    ) == ["7"]
    assert device_keys({"deviceId": {"bad": 1}}) == []
    # What the app cannot read stays as it was sent (a key no device has).
    assert device_keys({"deviceId": 2.5}) == ["2.5"]
    # Java's trim takes control characters and spaces only, not a no-break space.
    assert device_keys({"deviceId": "\t16\n"}) == ["16"]
    assert device_keys({"deviceId": "\xa016"}) == ["\xa016"]


def test_an_address_reaches_every_device_it_may() -> None:
    """The app finds a device by its exact id; the hub's own lookup by id reads a number, so
    "023" and "+23" reach device 23 too. An address that reaches no device of ours stays."""
    known = {"23", "16"}
    assert resolve_device(known, "23") == ["23"]
    assert resolve_device(known, "023") == ["23"]
    assert resolve_device(known, "+16") == ["16"]
    assert resolve_device(known, "-0") == ["0"]
    assert resolve_device(known, "0999") == ["999"]
    assert resolve_device(known, "lamp") == ["lamp"]
    assert resolve_device(known, "1_6") == ["1_6"]


async def test_health_and_diagnostics(
    hass: HomeAssistant, sim: Sim, runtime: HubitatRuntime
) -> None:
    """Health reports the hub; diagnostics carry no token, URL or location."""
    health = runtime.health()
    assert health.available is True
    assert health.details["devices"] == len(sim.hub.visible_devices())
    assert health.protocol_version is not None
    diagnostics = await async_get_config_entry_diagnostics(hass, runtime.entry)
    text = str(diagnostics)
    assert TOKEN not in text
    assert "127.0.0.1" not in text
    assert "latitude" not in text
    assert "macAddress" not in text
    assert diagnostics["backend"]["hub"]["model"] == "C-8 Pro"
    assert "zipCode" not in text
    assert "America/Chicago" not in text
    assert len(diagnostics["backend"]["devices"]) == len(sim.hub.visible_devices())


@pytest.mark.parametrize(
    "options",
    [{"gateways": False}, {"structured_content": True}],
    ids=["flat_tools", "structured_content"],
)
async def test_other_server_settings(
    hass: HomeAssistant, sim_factory: SimFactory, options: dict
) -> None:
    """A hub listing every tool flat, or answering with structuredContent, works the same."""
    sim = await sim_factory(**options)
    runtime = await setup_entry(hass, make_entry(sim))
    assert runtime.api.flat is (options.get("gateways") is False)
    assert len(runtime.coordinator.data.devices) == len(sim.hub.visible_devices())
    plug = first(sim, "switch")
    target = "off" if plug.value("switch") == "on" else "on"
    await hass.services.async_call(
        "switch",
        f"turn_{target}",
        {"entity_id": entity_id(hass, sim, f"{plug.id}_switch", "switch")},
        blocking=True,
    )
    assert plug.value("switch") == target


async def test_catalog_does_not_ask_the_ai_for_the_write_key(hass: HomeAssistant, sim: Sim) -> None:
    """The runtime adds the key to every write itself, so no schema offered to an AI asks for it."""
    runtime = await setup_entry(hass, make_entry(sim))
    catalog = await runtime.async_list_tools()
    command = next(tool for tool in catalog if tool["name"] == "hub_call_device_command")
    assert "bestPracticeKey" not in command["inputSchema"].get("properties", {})
    assert "bestPracticeKey" not in command["inputSchema"].get("required", [])
    assert all(
        "bestPracticeKey" not in tool.get("inputSchema", {}).get("properties", {})
        for tool in catalog
    )
    # Nor does any text: the checklist keeps its other advice, the guide its purpose.
    text = json.dumps(catalog)
    for asking in ("bestPracticeKey", "write key", "acknowledgment key"):
        assert asking not in text, asking
    mode = next(tool for tool in catalog if tool["name"] == "hub_manage_mode")
    assert "2. At most 2 writes run at once: batch." in mode["description"]
    guide = next(tool for tool in catalog if tool["name"] == "hub_get_tool_guide")
    assert guide["description"] == "Longer reference for the tools, by section."


async def test_catalog_explains_enum_values(hass: HomeAssistant, sim: Sim) -> None:
    """hub_call_rule's actions say what each does, as the app's tool guide explains them."""
    runtime = await setup_entry(hass, make_entry(sim))
    catalog = {tool["name"]: tool for tool in await runtime.async_list_tools()}
    action = catalog["hub_call_rule"]["inputSchema"]["properties"]["action"]
    assert action["enum"] == ["rule", "actions", "stop", "start"]
    assert action["description"].startswith("Which RM action to invoke. Default: rule. Values: ")
    for value in action["enum"]:
        assert f"{value} = " in action["description"], value
    assert "skipping its conditions" in action["description"]
    fmt = catalog["hub_list_devices"]["inputSchema"]["properties"]["format"]
    assert all(f"{value} = " in fmt["description"] for value in fmt["enum"])


class _Shown:
    """Devices 1 and 2 shown, the mode select too, the HSM panel not."""

    def device(self, key: str) -> bool:
        return key in ("1", "2")

    def entities(self, keys: Any) -> bool:
        return list(keys) == [MODE_SELECT]


def test_listings_keep_only_what_is_shown() -> None:
    """Every shape the app lists devices in is filtered; counts follow; HSM status goes."""
    rooms = {
        "rooms": [{"id": "5", "name": "Den", "deviceCount": 3, "deviceIds": ["1", "3", "2"]}],
        "count": 1,
    }
    filtered, withheld = filter_listing(rooms, _Shown())
    assert filtered["rooms"][0]["deviceIds"] == ["1", "2"]
    assert filtered["rooms"][0]["deviceCount"] == 2
    assert withheld == 1
    assert rooms["rooms"][0]["deviceIds"] == ["1", "3", "2"]  # the answer itself is unchanged
    health = {
        "staleDevices": [{"id": "3"}, {"id": "1"}],
        "unknownDevices": [{"id": "unknown"}],
        "healthyDevices": [{"id": 2}],
    }
    filtered, withheld = filter_listing(health, _Shown())
    assert filtered == {
        "staleDevices": [{"id": "1"}],
        "unknownDevices": [],
        "healthyDevices": [{"id": 2}],
    }
    assert withheld == 2
    context = {
        "mode": "Day",
        "hsmStatus": "armedAway",
        "summary": "Mode: Day\nHSM: armedAway\nDevices: 3 of 3\n- Lamp (1, Den)\n- Lock (3, Hall)"
        "\n- Fan (2, Den) - Switch; switch=on",
        "count": 3,
    }
    filtered, withheld = filter_listing(context, _Shown())
    assert (
        filtered["summary"]
        == "Mode: Day\nDevices: 3 of 3\n- Lamp (1, Den)\n- Fan (2, Den) - Switch; switch=on"
    )
    assert "hsmStatus" not in filtered
    assert filtered["mode"] == "Day"
    assert withheld == 3
    with pytest.raises(UnknownListing):
        filter_listing(["1", "2"], _Shown())


async def test_results_speak_home_assistants_time_zone(hass: HomeAssistant, sim: Sim) -> None:
    """The hub dates its events in its own zone (-0600, no colon); the model reads them, as
    every time, in Home Assistant's zone with the offset, the same instants."""
    await hass.config.async_set_time_zone("Europe/Berlin")
    runtime = await setup_entry(hass, make_entry(sim))
    plug = first(sim, "switch")
    raw = await runtime.client.call_tool(
        "hub_read_devices",
        {"tool": "hub_list_device_events", "args": {"deviceId": str(plug.id)}},
        kind="read",
    )
    shown = await runtime.async_call_tool("hub_list_device_events", {"deviceId": str(plug.id)})
    hub_dates = [e["date"] for e in raw.data["events"]]
    dates = [e["date"] for e in shown.data["events"]]
    assert hub_dates
    assert all(d[-5:] in ("-0600", "-0500") for d in hub_dates), hub_dates
    assert all(d.endswith(("+01:00", "+02:00")) for d in dates), dates
    assert [datetime.fromisoformat(d) for d in dates] == [
        datetime.fromisoformat(d) for d in hub_dates
    ]
    assert not any(d in shown.text for d in hub_dates)
