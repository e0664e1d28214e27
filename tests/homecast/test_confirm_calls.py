"""Homecast's own set_state through the gateway: what the accessories report, not its count.

The community server counts every forwarded update as done (homecast-web
src/server/local-rest.ts handleSetState); the Mac app (HomeKitManager.setState) fails a
characteristic the accessory lacks. Either way the gateway's answer says what happened.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.backends.homecast import confirm
from custom_components.mcp_gateway.backends.homecast.const import SERVER_COMMUNITY
from custom_components.mcp_gateway.gateway.catalog.store import ToolFailure
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.results import result_data

from .conftest import Sim, SimFactory, device_of, entity_id, setup_entry, token_entry


def _ctx(user: MockUser) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


async def _loaded(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    data: dict[str, Any] = {"server": SERVER_COMMUNITY} if sim.state.community else {}
    entry = token_entry(sim, **data)
    await setup_entry(hass, entry)
    return entry


def _update(sim: Sim, acc: Any, **props: Any) -> dict[str, Any]:
    home = sim.state.homes[0]
    room = next(room for room in home.rooms if acc in room.accessories)
    return {"home": home.slug, "room": room.slug, "accessory": acc.slug, **props}


async def _call(hass: HomeAssistant, user: MockUser, updates: list[dict[str, Any]]) -> Any:
    return await GatewayHandler(hass).call_tool(
        _ctx(user), "homecast", {"tool": "set_state", "args": {"updates": updates}}
    )


@pytest.mark.parametrize("community", [False, True])
async def test_a_threshold_the_thermostat_lacks_is_not_applied(
    hass: HomeAssistant, sim_factory: SimFactory, hass_admin_user: MockUser, community: bool
) -> None:
    """heat_target on a thermostat without a heating threshold: never a success."""
    sim = await sim_factory(community=community)
    await _loaded(hass, sim)
    thermostat = device_of(sim, "climate", target_temp=None)
    assert "heat_target" not in thermostat.values
    before = dict(thermostat.values)
    result = await _call(hass, hass_admin_user, [_update(sim, thermostat, heat_target=20)])
    assert result["isError"] is True
    texts = [part["text"] for part in result["content"]]
    if community:
        assert '"updated":1' in texts[0].replace(" ", "")  # what the server claims
    confirmation = result_data({**result, "content": result["content"][-1:]})
    confirmation = confirmation["gateway_confirmation"]
    assert confirmation["status"] == "not_applied"
    (item,) = confirmation["items"]
    assert item["status"] == "not_applied"
    assert "has no heat_target" in item["why"]
    assert item["device_reports"]["target_temp"] == before["target_temp"]
    assert thermostat.values == before


@pytest.mark.parametrize("community", [False, True])
async def test_a_write_the_accessory_shows_is_confirmed(
    hass: HomeAssistant, sim_factory: SimFactory, hass_admin_user: MockUser, community: bool
) -> None:
    """A switch turned on reads back on: confirmed, with what it reports."""
    sim = await sim_factory(community=community)
    await _loaded(hass, sim)
    switch = device_of(sim, "switch")
    wanted = not switch.values["on"]
    result = await _call(hass, hass_admin_user, [_update(sim, switch, on=wanted)])
    assert result["isError"] is False
    confirmation = result_data({**result, "content": result["content"][-1:]})
    assert confirmation["gateway_confirmation"]["status"] == "confirmed"
    (item,) = confirmation["gateway_confirmation"]["items"]
    assert item["device_reports"] == {"on": wanted}


async def test_a_write_homekit_has_not_applied_is_unknown(
    hass: HomeAssistant,
    sim_factory: SimFactory,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The relay has not applied it within the wait: unknown, never confirmed."""
    monkeypatch.setattr(confirm, "CONFIRM_SECONDS", 0.2)
    sim = await sim_factory(write_delay=30)
    await _loaded(hass, sim)
    switch = device_of(sim, "switch")
    result = await _call(hass, hass_admin_user, [_update(sim, switch, on=not switch.values["on"])])
    assert result["isError"] is False
    confirmation = result_data({**result, "content": result["content"][-1:]})
    assert confirmation["gateway_confirmation"]["status"] == "unknown"
    sim.state.flush()


@pytest.mark.parametrize("community", [False, True])
async def test_set_state_says_the_thermostat_target_cannot_be_set(
    hass: HomeAssistant, sim_factory: SimFactory, hass_admin_user: MockUser, community: bool
) -> None:
    """No Homecast edition writes HomeKit's target temperature: HA's set_state says so."""
    sim = await sim_factory(community=community)
    entry = await _loaded(hass, sim)
    thermostat = device_of(sim, "climate", target_temp=None)
    climate = entity_id(hass, entry, sim, thermostat, "climate")
    with pytest.raises(ToolFailure, match="Homecast cannot set the target temperature of"):
        await async_set_state(
            hass, _ctx(hass_admin_user), {"updates": [{"entity_id": climate, "temperature": 23}]}
        )
    assert thermostat.values["target_temp"] == 21.0
