"""The typed API's parsing and paging, against scripted hub answers."""

from __future__ import annotations

from collections.abc import Mapping
import json
from typing import Any

import pytest

from custom_components.mcp_gateway.backends.hubitat.api import (
    Command,
    HubitatApi,
    HubitatKeyRefusedError,
    is_key_refusal,
    newest,
    parse_device,
    parse_event,
    parse_hub_info,
    parse_rule,
    parse_time,
)
from custom_components.mcp_gateway.mcp.client import ToolResult
from custom_components.mcp_gateway.mcp.errors import (
    McpProtocolError,
    McpRpcError,
    McpToolError,
)


class ScriptedClient:
    """Answers tools/call from a list of (payload, is_error) and records the calls."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, dict[str, Any], str]] = []
        self.tools: list[dict[str, Any]] = []

    async def call_tool(self, name: str, args: Mapping[str, Any], *, kind: str) -> ToolResult:
        self.calls.append((name, dict(args), kind))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        is_error = False
        if isinstance(answer, tuple):
            answer, is_error = answer
        text = answer if isinstance(answer, str) else json.dumps(answer)
        return ToolResult(content=[{"type": "text", "text": text}], is_error=is_error)

    async def list_tools(self) -> list[dict[str, Any]]:
        return self.tools


def api(*answers: Any) -> tuple[HubitatApi, ScriptedClient]:
    client = ScriptedClient(*answers)
    return HubitatApi(client), client  # type: ignore[arg-type]


def test_parse_time() -> None:
    """Both of the hub's formats parse; naive or junk values do not."""
    assert parse_time("2026-11-29T15:00:00-06:00") is not None
    assert parse_time("2026-11-29T15:00:00.123-0600") is not None
    assert parse_time("2026-11-29T15:00:00") is None
    assert parse_time("yesterday") is None
    assert parse_time(None) is None
    assert newest(["2026-11-29T15:00:00Z", "2026-11-29T16:00:00+01:00", None, "x"]) == (
        "2026-11-29T15:00:00Z"
    )


def test_parse_device_shapes() -> None:
    """Lists of names or {name} objects, attributes as list or map, summary states."""
    device = parse_device(
        {
            "id": 12,
            "name": "Generic Zigbee Bulb",
            "label": "",
            "capabilities": ["Switch", {"name": "SwitchLevel"}, 3],
            "attributes": {"switch": "on"},
            "currentStates": {"level": 40, "switch": "off"},
            "commands": [{"name": "on", "arguments": None}, "off"],
            "disabled": True,
        }
    )
    assert device.id == "12"
    assert device.display_name == "Generic Zigbee Bulb"
    assert device.capabilities == {"Switch", "SwitchLevel"}
    assert device.attributes == {"switch": "on", "level": 40}
    assert device.commands == {"on", "off"}
    assert device.disabled is True
    assert parse_device({"id": "5", "capabilities": "Switch"}).display_name == "Device 5"
    with pytest.raises(McpProtocolError):
        parse_device({"name": "no id"})
    with pytest.raises(McpProtocolError):
        parse_device(["not", "an", "object"])


def test_devices_of_one_driver_share_their_name_sets() -> None:
    """Equal capability and command lists become the same sets (two objects per device fewer
    for every full garbage collection on a large hub), whatever their order or shape."""
    first = parse_device(
        {"id": 1, "capabilities": ["Switch", "SwitchLevel"], "commands": ["on", "off"]}
    )
    second = parse_device(
        {"id": 2, "capabilities": [{"name": "SwitchLevel"}, "Switch"], "commands": ["off", "on"]}
    )
    assert first.capabilities is second.capabilities
    assert first.commands is second.commands
    other = parse_device({"id": 3, "capabilities": ["Switch"], "commands": ["on", "off"]})
    assert other.capabilities == {"Switch"}
    assert other.commands is first.commands


def test_parse_hub_info_is_flat() -> None:
    """mcp-system-lib.groovy toolGetHubInfo: one flat map; zigbeeId is the hub's id.

    A hub without one (null, or "unavailable" when reading it threw) has no id at all, never
    the placeholder, which every such hub would share.
    """
    flat = {
        "name": "Hub",
        "model": "C-8",
        "firmwareVersion": "2.4",
        "zigbeeId": "000D6F0012345678",
        "mcpServerVersion": "4.0.2",
        "temperatureScale": "C",
    }
    info = parse_hub_info(flat)
    assert (info.id, info.name, info.model, info.firmware) == (
        "000D6F0012345678",
        "Hub",
        "C-8",
        "2.4",
    )
    assert (info.app_version, info.temperature_scale) == ("4.0.2", "C")
    for missing in (None, "unavailable", "UNAVAILABLE", ""):
        assert parse_hub_info({**flat, "zigbeeId": missing}).id is None
    with pytest.raises(McpProtocolError):
        parse_hub_info(["not", "a", "map"])


def test_parse_events_and_rules() -> None:
    """Events without name or date are skipped; a rule's paused state may be a status text."""
    assert parse_event({"name": "pushed"}) is None
    assert parse_event("junk") is None
    event = parse_event({"name": "pushed", "value": None, "date": "2026-11-29T15:00:00Z"})
    assert event is not None
    assert event.value == ""
    assert parse_rule({"name": "no id"}) is None
    rule = parse_rule({"id": 7, "status": "Paused"})
    assert rule is not None
    assert (rule.name, rule.paused) == ("Rule 7", True)


def test_key_refusal_detection() -> None:
    """Only -32602 errors that speak of the key count as the key gate."""
    assert is_key_refusal(McpRpcError(-32602, "x", {"missing": "bestPracticeKey"}))
    assert is_key_refusal(McpRpcError(-32602, "Read the best practice guide first"))
    assert not is_key_refusal(McpRpcError(-32602, "Device not found: 4"))
    assert not is_key_refusal(McpRpcError(-32603, "bestPracticeKey"))


async def test_list_devices_pages_until_done() -> None:
    """Pages follow nextOffset (or the item count when it is missing)."""
    hub, client = api(
        {"devices": [{"id": 1}], "hasMore": True, "nextOffset": 1, "total": 3},
        {"devices": [{"id": 2}], "hasMore": True},
        {"devices": [{"id": 3}], "hasMore": False},
    )
    page = await hub.list_devices(changed_since="123")
    assert [d.id for d in page.devices] == ["1", "2", "3"]
    assert page.total == 3
    assert [call[1]["args"]["offset"] for call in client.calls] == [0, 1, 2]
    assert client.calls[0][0] == "hub_read_devices"
    assert client.calls[0][1]["args"]["changedSince"] == "123"


async def test_list_devices_refuses_bad_pages() -> None:
    """No devices list, paging that does not move, or too-large answers are protocol errors."""
    hub, _ = api({"nothing": True})
    with pytest.raises(McpProtocolError):
        await hub.list_devices()
    hub, _ = api({"devices": [], "hasMore": True, "nextOffset": 0})
    with pytest.raises(McpProtocolError, match="advance"):
        await hub.list_devices()
    # Too large even one device at a time: 50, 25, 12, 6, 3, 1 all refused.
    hub, client = api(*[{"response_too_large": True, "truncated": True}] * 6)
    with pytest.raises(McpProtocolError, match="too large"):
        await hub.list_devices()
    assert [call[1]["args"]["limit"] for call in client.calls] == [50, 25, 12, 6, 3, 1]
    hub, _ = api("not json at all")
    with pytest.raises(McpProtocolError):
        await hub.list_devices()


async def test_ids_rules_modes_events() -> None:
    """Id listings, rule pages, modes given as objects, events sorted oldest first."""
    hub, _ = api(
        {"deviceIds": [1, "2", {"x": 1}], "hasMore": True, "nextOffset": 2},
        {"deviceIds": [3]},
    )
    assert await hub.list_device_ids() == {"1", "2", "3"}
    hub, _ = api({"nope": 1})
    with pytest.raises(McpProtocolError):
        await hub.list_device_ids()

    # mcp-native-rules-lib.groovy toolListRmRules pages only by cursor ("" = first page).
    hub, client = api(
        {"rules": [{"id": 1, "name": "A"}, "junk"], "count": 1, "total": 2, "nextCursor": "1"},
        {"rules": [{"id": 2, "label": "B", "paused": True}], "count": 1, "total": 2},
    )
    rules = await hub.list_rules()
    # A rule without a status is one whose paused state the hub did not tell.
    assert [(r.id, r.name, r.paused) for r in rules] == [("1", "A", None), ("2", "B", True)]
    assert [call[1]["args"] for call in client.calls] == [{"cursor": ""}, {"cursor": "1"}]
    hub, _ = api({"nope": 1})
    with pytest.raises(McpProtocolError):
        await hub.list_rules()

    hub, _ = api({"currentMode": {"name": "Night"}, "modes": [{"name": "Day"}, {"id": 2}]})
    modes = await hub.list_modes()
    assert (modes.current, modes.names) == ("Night", ("Day",))
    hub, _ = api({"currentMode": "Day"})
    with pytest.raises(McpProtocolError):
        await hub.list_modes()

    hub, _ = api(
        {
            "events": [
                {"name": "mode", "value": "Away", "date": "2026-11-29T15:00:02.000-0600"},
                {"name": "mode", "value": "Day", "date": "2026-11-29T15:00:01.000-0600"},
                {"date": "2026-11-29T15:00:01.000-0600"},
            ]
        }
    )
    events = await hub.list_events(since="1")
    assert [e.value for e in events] == ["Day", "Away"]
    hub, _ = api({"count": 0})
    with pytest.raises(McpProtocolError):
        await hub.list_events()


async def test_failures_are_tool_errors() -> None:
    """isError results and `success: false` answers raise McpToolError with the hub's text."""
    hub, _ = api(({"error": "too_many_writes_in_flight"}, True))
    with pytest.raises(McpToolError, match="too_many_writes_in_flight"):
        await hub.get_hsm()
    hub, _ = api({"success": False, "error": "Rule 'Goodnight' is paused"})
    with pytest.raises(McpToolError, match="paused"):
        await hub.run_rule("101")


async def test_writes_carry_the_key_and_report_the_gate() -> None:
    """The key goes inside a gateway's args; the gate callback hears refusals and passes."""
    verdicts: list[Any] = []
    hub, client = api(
        McpRpcError(-32602, "Write tool requires bestPracticeKey"),
        {"success": True},
    )
    hub.on_key_gate = verdicts.append
    with pytest.raises(HubitatKeyRefusedError):
        await hub.set_rule_paused("101", True)
    await hub.set_rule_paused("101", True)
    name, args, kind = client.calls[1]
    assert (name, kind) == ("hub_manage_native_rules_and_apps", "write")
    assert args["args"]["bestPracticeKey"] == "bps-ack-299"
    assert isinstance(verdicts[0], HubitatKeyRefusedError)
    assert verdicts[1] is None

    hub, client = api(McpRpcError(-32602, "Device not found: 9"))
    with pytest.raises(McpRpcError) as caught:
        await hub.send_command(Command("9", "on"))
    assert not isinstance(caught.value, HubitatKeyRefusedError)

    hub, client = api({"success": True})
    hub.send_key = False
    hub.flat = True
    await hub.set_mode("Day")
    assert client.calls[0][1] == {"action": "activate", "mode": "Day"}


async def test_batch_results_are_matched_per_command() -> None:
    """Results pair with commands by position, or by device and command when reordered."""
    commands = [Command("1", "on"), Command("2", "setLevel", ("50",)), Command("3", "off")]
    hub, client = api(
        {
            "success": False,
            "partial": True,
            "results": [
                {"deviceId": "2", "command": "setLevel", "success": False, "error": "broken"},
                {"deviceId": "1", "command": "on", "success": True},
            ],
        }
    )
    outcomes = await hub.send_commands(commands)
    assert [o.success for o in outcomes] == [True, False, False]
    assert outcomes[1].error == "broken"
    assert outcomes[2].error == "the hub did not report this command"
    sent = client.calls[0][1]["args"]["commands"]
    assert sent[1] == {"deviceId": "2", "command": "setLevel", "parameters": ["50"]}
    assert "parameters" not in sent[0]

    # An all-failed batch is an isError result that still lists each entry.
    hub, _ = api(
        (
            {
                "success": False,
                "results": [
                    {"deviceId": "1", "command": "on", "success": False, "error": "gone"},
                    {"deviceId": "2", "command": "setLevel", "success": False, "note": "n"},
                    {"deviceId": "3", "command": "off", "success": False},
                ],
            },
            True,
        )
    )
    outcomes = await hub.send_commands(commands)
    assert [o.error for o in outcomes] == ["gone", "n", "failed"]

    hub, _ = api(({"error": "too_many_writes_in_flight"}, True))
    outcomes = await hub.send_commands(commands)
    assert all("too_many_writes_in_flight" in (o.error or "") for o in outcomes)

    hub, _ = api({"success": True})
    with pytest.raises(McpProtocolError):
        await hub.send_commands(commands)

    hub, _ = api({"success": False, "error": "Device 'Lamp' is disabled"})
    [outcome] = await hub.send_commands(commands[:1])
    assert outcome.success is False
    assert "disabled" in (outcome.error or "")


async def test_layout_detects_flat_mode() -> None:
    """A server without gateways lists hub_list_devices itself."""
    hub, client = api()
    client.tools = [{"name": "hub_list_devices"}, {"name": "hub_get_info"}]
    await hub.detect_layout()
    assert hub.flat is True
    assert hub.route("hub_list_devices", {"a": 1}) == ("hub_list_devices", {"a": 1})
