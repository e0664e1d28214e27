"""A write result says what a hub in another temperature scale reported, in both units."""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.core import HomeAssistant
from homeassistant.util.unit_system import US_CUSTOMARY_SYSTEM
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state

from .conftest import Sim, entity_id, first, make_entry, setup_entry


@dataclass(frozen=True)
class _Caller:
    user: MockUser
    client_name: str = "pytest-client"


async def _thermostat(hass: HomeAssistant, sim: Sim) -> str:
    device = first(sim, "thermostat")
    sim.hub.set_attribute(device.id, "thermostatMode", "heat")
    await setup_entry(hass, make_entry(sim))
    return entity_id(hass, sim, f"{device.id}_thermostat", "climate")


async def test_a_hub_in_fahrenheit_under_celsius(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """21 °C reaches the hub as 69.8 °F: the result says both."""
    climate = await _thermostat(hass, sim)
    result = await async_set_state(
        hass, _Caller(hass_admin_user), {"updates": [{"entity_id": climate, "temperature": 21}]}
    )
    (item,) = result["results"]
    assert item["status"] == "done"
    assert item["temperature"] == 21
    assert "heatingSetpoint 69.8 °F (21.0 °C)" in item["device_reported"]
    assert result["units"]["temperature"] == "°C"


async def test_no_second_unit_where_they_agree(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """HA in °F like the hub: nothing to translate."""
    await hass.config.async_update(unit_system="us_customary")
    assert hass.config.units is US_CUSTOMARY_SYSTEM
    climate = await _thermostat(hass, sim)
    result = await async_set_state(
        hass, _Caller(hass_admin_user), {"updates": [{"entity_id": climate, "temperature": 70}]}
    )
    (item,) = result["results"]
    assert item["status"] == "done"
    assert "device_reported" not in item
