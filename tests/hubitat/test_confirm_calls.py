"""The hub's own device commands through the gateway: what the devices report, not "sent".

hub_call_device_command's `success` says the command was sent (libraries/mcp-devices-lib.groovy
toolSendCommand); the gateway reads the devices back and says whether it took effect.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.backends.hubitat import confirm
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.results import result_data

from .conftest import Sim, SimFactory, first, make_entry, setup_entry


def _ctx(user: MockUser) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


async def _command(hass: HomeAssistant, user: MockUser, args: dict[str, Any]) -> Any:
    result = await GatewayHandler(hass).call_tool(
        _ctx(user), "hubitat_home_hub", {"tool": "hub_call_device_command", "args": args}
    )
    confirmation = result_data({**result, "content": result["content"][-1:]})
    return result, confirmation["gateway_confirmation"]


async def test_a_command_the_device_reports_is_confirmed(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """A batch of two: both devices report the commands."""
    await setup_entry(hass, make_entry(sim))
    plug, dimmer = first(sim, "switch"), first(sim, "dimmer")
    wanted = "off" if plug.value("switch") == "on" else "on"
    result, confirmation = await _command(
        hass,
        hass_admin_user,
        {
            "commands": [
                {"deviceId": str(plug.id), "command": wanted},
                {"deviceId": str(dimmer.id), "command": "setLevel", "parameters": ["42"]},
            ]
        },
    )
    assert result["isError"] is False
    assert confirmation["status"] == "confirmed"
    reports = [item["device_reports"] for item in confirmation["items"]]
    assert reports == [{"switch": wanted}, {"level": 42}]


async def test_a_command_the_device_never_reports_is_unknown(
    hass: HomeAssistant,
    sim_factory: SimFactory,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sent, and the device says nothing within the wait: unknown, never confirmed."""
    monkeypatch.setattr(confirm, "CONFIRM_SECONDS", 0.3)
    sim = await sim_factory(command_delay=None)
    await setup_entry(hass, make_entry(sim))
    lock = first(sim, "lock")
    sim.hub.set_attribute(lock.id, "lock", "unlocked")
    await hass.config_entries.async_reload(
        hass.config_entries.async_entries("mcp_gateway")[0].entry_id
    )
    result, confirmation = await _command(
        hass, hass_admin_user, {"deviceId": str(lock.id), "command": "lock"}
    )
    assert result["isError"] is False
    assert confirmation["status"] == "unknown"
    assert confirmation["items"][0]["device_reports"] == {"lock": "unlocked"}


async def test_a_device_that_reports_otherwise_did_not_apply_it(
    hass: HomeAssistant,
    sim_factory: SimFactory,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The lock speaks after the command (a battery report) and is still unlocked: the
    command was not applied, and the answer is an error."""
    monkeypatch.setattr(confirm, "CONFIRM_SECONDS", 1.0)
    sim = await sim_factory(command_delay=None)
    await setup_entry(hass, make_entry(sim))
    lock = first(sim, "lock")
    sim.hub.set_attribute(lock.id, "lock", "unlocked")
    await hass.config_entries.async_reload(
        hass.config_entries.async_entries("mcp_gateway")[0].entry_id
    )
    sim.hub.clock.advance(2)

    def report() -> None:
        sim.hub.set_attribute(lock.id, "battery", (lock.value("battery") or 50) - 1)

    hass.loop.call_later(0.2, report)
    result, confirmation = await _command(
        hass, hass_admin_user, {"deviceId": str(lock.id), "command": "lock"}
    )
    assert confirmation["status"] == "not_applied"
    assert confirmation["items"][0]["device_reports"] == {"lock": "unlocked"}
    assert result["isError"] is True
