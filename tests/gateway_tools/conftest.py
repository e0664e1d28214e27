"""A small in-memory backend for the gateway's tests, published through the real platforms.

The fake runtime answers the gateway hooks from an in-memory tool list, so these tests pin the
gateway's own behaviour (policy, catalog, search, tools) independently of any backend.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
import json
from typing import Any, Self

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.backends.hubitat.const import KIND as HUBITAT_KIND
from custom_components.mcp_gateway.core.const import CONF_BACKEND, CONF_GATEWAY_EXPOSED, DOMAIN
from custom_components.mcp_gateway.framework.base import BackendHealth, ToolClass, ToolTier
from custom_components.mcp_gateway.framework.entity import DeviceSpec, EntitySpec
from custom_components.mcp_gateway.mcp.client import ToolResult
from custom_components.mcp_gateway.mcp.errors import McpRpcError
from custom_components.mcp_gateway.permissions.policy import classify
from custom_components.mcp_gateway.platforms.light import GatewayLightDescription, LightCommand
from custom_components.mcp_gateway.platforms.sensor import GatewaySensorDescription
from custom_components.mcp_gateway.platforms.switch import GatewaySwitchDescription
from tests.registry import pin_entity_id
from tests.simulation import FakeClient, InMemoryRuntime, setup_in_memory

HUB = DeviceSpec(key="hub", name="Fake hub", manufacturer="Test")


@dataclass
class Thing:
    """A native device of the fake backend: a plug, a lamp or a thermometer."""

    id: str
    name: str
    kind: str  # plug | lamp | thermo
    on: bool = False
    level: int = 0
    temperature: float = 20.5
    area: str | None = None


def _schema(properties: dict[str, Any] | None = None, required: list[str] | None = None) -> Any:
    return {"type": "object", "properties": properties or {}, "required": required or []}


def fake_tools() -> list[dict[str, Any]]:
    """The fake backend's catalog: one tool of each class the policy knows."""
    return [
        {
            "name": "list_things",
            "description": "List every device of the hub with its state.",
            "inputSchema": _schema(),
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "switch_thing",
            "description": "Turn a device on or off.",
            "inputSchema": _schema(
                {"device": {"type": "string"}, "on": {"type": "boolean"}}, ["device", "on"]
            ),
        },
        {
            "name": "set_mode",
            "description": "Change the hub mode (home, away, night).",
            "inputSchema": _schema({"mode": {"type": "string"}}, ["mode"]),
        },
        {
            "name": "write_rule",
            "description": "Create or replace an automation rule written in code.",
            "inputSchema": _schema({"code": {"type": "string"}}, ["code"]),
        },
        {
            "name": "reboot_hub",
            "description": "Reboot the hub; it is offline for a minute.",
            "inputSchema": _schema(),
        },
        {
            "name": "hub_weather",
            "description": "Weather forecast the hub knows about.",
            "inputSchema": _schema(),
            "annotations": {"readOnlyHint": True},
        },
        {
            "name": "mystery_tool",
            "description": "A tool no table knows.",
            "inputSchema": _schema(),
        },
        {
            "name": "broken_tool",
            "description": "Always fails in the backend.",
            "inputSchema": _schema(),
        },
        {
            "name": "slow_tool",
            "description": "Never answers.",
            "inputSchema": _schema(),
        },
        {
            "name": "get_thing",
            "description": "One device's details.",
            "inputSchema": _schema({"device": {"type": "string"}}, ["device"]),
        },
    ]


TOOL_TABLE: Mapping[str, ToolClass] = {
    "list_things": ToolClass(ToolTier.READ),
    "switch_thing": ToolClass(ToolTier.CONTROL),
    "set_mode": ToolClass(ToolTier.CONTROL),
    "write_rule": ToolClass(ToolTier.ADMIN),
    "reboot_hub": ToolClass(ToolTier.ADMIN, destructive=True),
    "broken_tool": ToolClass(ToolTier.CONTROL),
    "slow_tool": ToolClass(ToolTier.READ),
    "get_thing": ToolClass(ToolTier.READ),
}


async def _switch(runtime: FakeRuntime, thing: Thing, on: bool) -> None:
    if runtime.write_gate is not None:
        await runtime.write_gate.wait()
    if runtime.fail_writes is not None:
        raise runtime.fail_writes
    if runtime.ignore_writes:
        return  # acknowledged, and nothing happens (a device that missed the command)
    thing.on = on


async def _lamp_on(runtime: FakeRuntime, thing: Thing, command: LightCommand) -> None:
    if runtime.ignore_writes:
        return
    thing.on = True
    if command.brightness is not None:
        thing.level = command.brightness


async def _lamp_off(runtime: FakeRuntime, thing: Thing) -> None:
    thing.on = False


PLUG = GatewaySwitchDescription(key="power", name=None, is_on_fn=lambda t: t.on, set_fn=_switch)
LAMP = GatewayLightDescription(
    key="light",
    name=None,
    is_on_fn=lambda t: t.on,
    brightness_fn=lambda t: t.level,
    color_mode_fn=lambda _: "brightness",
    supported_color_modes_fn=lambda _: {"brightness"},
    turn_on_fn=_lamp_on,
    turn_off_fn=_lamp_off,
)
THERMO = GatewaySensorDescription(
    key="temperature",
    name=None,
    native_unit_of_measurement="°C",
    value_fn=lambda t: t.temperature,
)
_DESCRIPTIONS = {"plug": (Platform.SWITCH, PLUG), "lamp": (Platform.LIGHT, LAMP)}
_DESCRIPTIONS["thermo"] = (Platform.SENSOR, THERMO)


# The things every fake entry starts with (FakeRuntime.from_entry): id, object id, platform.
_PINNED = (
    ("1", "kitchen_plug", Platform.SWITCH, PLUG),
    ("2", "desk_lamp", Platform.LIGHT, LAMP),
    ("3", "hall_thermometer", Platform.SENSOR, THERMO),
)


class FakeRuntime(InMemoryRuntime):
    """An in-memory backend: devices as entities, tools answered from memory."""

    kind = HUBITAT_KIND
    platforms = (Platform.SWITCH, Platform.LIGHT, Platform.SENSOR)
    poll_interval = timedelta(minutes=5)
    repeats_core = frozenset({"list_things", "get_thing"})
    things: dict[str, Thing]
    tools: list[dict[str, Any]]
    calls: list[tuple[str, dict[str, Any]]]
    fail_writes: Exception | None = None
    ignore_writes: bool = False
    write_gate: asyncio.Event | None = None
    list_gate: asyncio.Event | None = None
    list_calls: int = 0
    list_error: Exception | None = None
    call_error: Exception | None = None
    hang: asyncio.Event

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: Any) -> Self:
        runtime = cls(hass, entry, FakeClient())  # type: ignore[arg-type]
        runtime.things = {
            "1": Thing("1", "Kitchen plug", "plug", area="Kitchen"),
            "2": Thing("2", "Desk lamp", "lamp", area="Office"),
            "3": Thing("3", "Hall thermometer", "thermo"),
        }
        runtime.tools = fake_tools()
        runtime.calls = []
        runtime.hang = asyncio.Event()
        return runtime

    async def _poll(self) -> dict[str, Thing]:
        return dict(self.things)

    def _specs(self) -> list[EntitySpec]:
        specs = []
        for thing in self.things.values():
            platform, description = _DESCRIPTIONS[thing.kind]
            device = DeviceSpec(
                key=f"dev_{thing.id}", name=thing.name, suggested_area=thing.area, via=HUB
            )
            specs.append(self.item_spec(platform, description, device, thing.id))
        return specs

    async def async_list_tools(self) -> list[dict[str, Any]]:
        self.list_calls += 1
        if self.list_gate is not None:
            await self.list_gate.wait()
        if self.list_error is not None:
            raise self.list_error
        return self.tools

    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        self.calls.append((name, dict(arguments)))
        if self.call_error is not None:
            raise self.call_error
        if name == "slow_tool":
            await self.hang.wait()
        if name == "broken_tool":
            return ToolResult(
                content=[{"type": "text", "text": "Error: relay offline"}], is_error=True
            )
        if name == "list_things":
            data = {"things": [{"id": t.id, "on": t.on} for t in self.things.values()]}
            # Like Hubitat: JSON only as text, no structuredContent.
            return ToolResult(content=[{"type": "text", "text": json.dumps(data)}])
        if name in ("switch_thing", "get_thing"):
            # Like a real server: invalid arguments are a JSON-RPC error, not a crash.
            thing = self.things.get(str(arguments.get("device")))
            bad_on = name == "switch_thing" and not isinstance(arguments.get("on"), bool)
            if thing is None or bad_on:
                raise McpRpcError(-32602, f"Invalid arguments for {name}")
            if name == "switch_thing":
                thing.on = arguments["on"]
        data = {"ok": True, "tool": name}
        return ToolResult(content=[{"type": "text", "text": json.dumps(data)}], structured=data)

    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        return classify(tool, TOOL_TABLE)

    def device_keys_in_call(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        if name in ("switch_thing", "get_thing") and "device" in arguments:
            return [f"dev_{arguments['device']}"]
        return []

    def health(self) -> BackendHealth:
        return BackendHealth(available=True, protocol_version="2025-11-25", latency_ms=12.345)


@dataclass(frozen=True, slots=True)
class Ctx:
    """Shaped like mcp.server.RequestContext, for tests that call tools directly."""

    protocol_version: str = "2025-11-25"
    client_name: str | None = "pytest-client"
    user: Any = None
    request_id: str | int | None = 1


async def add_fake_entry(
    hass: HomeAssistant,
    title: str = "Test Hub",
    *,
    unique_id: str = "hub-1",
    exposed: bool | None = None,
    setup: bool = True,
) -> MockConfigEntry:
    """Add (and normally load) an entry of the fake backend."""
    options = {} if exposed is None else {CONF_GATEWAY_EXPOSED: exposed}
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=title,
        data={CONF_BACKEND: HUBITAT_KIND},
        options=options,
        unique_id=unique_id,
    )
    entry.add_to_hass(hass)
    # Fixed entity ids, the same on every HA release (2026.x would put the area in them), so
    # the tests can name them; a second entry's get HA's usual _2 suffix.
    for thing_id, name, platform, description in _PINNED:
        pin_entity_id(
            hass, entry.entry_id, platform, f"{unique_id}_{thing_id}_{description.key}", name
        )
    if setup:
        await setup_in_memory(hass, FakeRuntime, entry)
    return entry


@pytest.fixture
async def fake_entry(hass: HomeAssistant) -> MockConfigEntry:
    """One loaded, exposed entry of the fake backend."""
    return await add_fake_entry(hass)


@pytest.fixture
async def hass_user(hass: HomeAssistant) -> User:
    """An ordinary (non-admin) Home Assistant user."""
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    return MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)
