"""End to end: the official SDK → HA's HTTP server → the gateway → the Hubitat backend → the
simulated hub, on both transports, as an admin and as a read-only user."""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from tests.hubitat.sim import Sim, first, make_entry, setup_entry

from .conftest import ClientFactory, base_url, make_token
from .test_sdk_clients import _sse, _streamable

CORE = {"search_tools", "get_state", "set_state", "get_history", "list_backends", "automations"}


@pytest.fixture
async def client(hass: HomeAssistant, sim: Sim, hass_client: ClientFactory) -> TestClient:
    """HA with the real gateway handler and one Hubitat entry for the simulated hub."""
    assert await async_setup_component(hass, "http", {})
    await setup_entry(hass, make_entry(sim))
    return await hass_client()


def _command(device_id: Any, command: str) -> dict[str, Any]:
    return {"deviceId": str(device_id), "command": command}


def _data(result: Any) -> Any:
    return result.structuredContent or json.loads(result.content[0].text)


async def test_admin_lists_reads_and_commands_a_device(
    client: TestClient, hass_access_token: str, sim: Sim
) -> None:
    """An administrator lists, reads and commands a hub device through the gateway tool."""
    switch = first(sim, "switch")
    async with _streamable(base_url(client), hass_access_token) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) >= CORE
        (gateway,) = set(tools) - CORE
        assert gateway.startswith("hubitat")
        assert len(gateway) <= 64
        assert tools[gateway].annotations is not None

        backends = _data(await session.call_tool("list_backends", {}))
        assert json.dumps(backends).count(gateway) >= 1

        catalog = _data(await session.call_tool(gateway, {}))
        names = {tool["name"] for tool in catalog["tools"]}
        assert {"hub_get_device", "hub_call_device_command"} <= names

        result = await session.call_tool(
            gateway, {"tool": "hub_get_device", "args": {"deviceId": str(switch.id)}}
        )
        assert not result.isError, result.content
        assert str(switch.id) in result.content[0].text

        off = switch.value("switch") == "off"
        command = "on" if off else "off"
        result = await session.call_tool(
            gateway,
            {
                "tool": "hub_call_device_command",
                "args": {"deviceId": str(switch.id), "command": command},
            },
        )
        assert not result.isError, result.content
    assert switch.value("switch") == command


async def test_read_only_user_over_sse_reads_but_cannot_command(
    hass: HomeAssistant, client: TestClient, hass_read_only_user: Any, sim: Sim
) -> None:
    """A read-only user over SSE sees read tools only: no set_state, no device commands."""
    switch = first(sim, "switch")
    before = switch.value("switch")
    token = await make_token(hass, hass_read_only_user)
    async with _sse(base_url(client), token) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert "get_state" in names
        assert "set_state" not in names  # control tier: absent for read-only users
        (gateway,) = {name for name in names if name.startswith("hubitat")}
        catalog = _data(await session.call_tool(gateway, {}))
        visible = {tool["name"] for tool in catalog["tools"]}
        assert "hub_get_device" in visible
        assert "hub_call_device_command" not in visible
        result = await session.call_tool(
            gateway,
            {
                "tool": "hub_call_device_command",
                "args": {"deviceId": str(switch.id), "command": "on"},
            },
        )
        assert result.isError  # a clear error, never a silent success
    assert switch.value("switch") == before
