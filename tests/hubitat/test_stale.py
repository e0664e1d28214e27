"""get_state marks a value the hub has not heard confirmed for long as possibly stale."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.core.localtime import local_iso
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state

from .conftest import Sim, entity_id, first, make_entry, setup_entry


@dataclass(frozen=True)
class _Caller:
    user: MockUser
    client_name: str = "pytest-client"


async def test_a_device_unheard_of_for_days_is_possibly_stale(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """The hub's lastActivity of a silent device shows as its last report; a fresh one's not."""
    silent, fresh = first(sim, "contact"), first(sim, "switch")
    heard = sim.hub.now() - timedelta(days=3)
    silent.last_activity = heard
    fresh.last_activity = sim.hub.now() - timedelta(minutes=5)
    await setup_entry(hass, make_entry(sim))
    door = entity_id(hass, sim, f"{silent.id}_contact", "binary_sensor")
    plug = entity_id(hass, sim, f"{fresh.id}_switch", "switch")
    mode = entity_id(hass, sim, "hub_mode", "select")

    result = await async_get_state(
        hass, _Caller(hass_admin_user), {"entity_ids": [door, plug, mode]}
    )
    items = {item["entity_id"]: item for item in result["entities"]}
    assert items[door]["possibly_stale"] is True
    assert items[door]["last_report"] == local_iso(heard.replace(microsecond=0))
    for other in (plug, mode):  # heard lately; the hub's own mode has no lastActivity
        assert "possibly_stale" not in items[other]
        assert "last_report" not in items[other]
