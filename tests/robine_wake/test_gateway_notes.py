"""The gateway's "may not have acted" note on the clock's writes: only when it is offline."""

from __future__ import annotations

from typing import Any

from homeassistant.const import STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.results import result_data

from .conftest import Sim, make_entry, setup_entry

GATEWAY = "robine_wake_bedroom_clock"


def _texts(result: dict[str, Any]) -> str:
    return "\n".join(part.get("text", "") for part in result["content"])


async def test_no_false_offline_note_for_disabled_entities(
    hass: HomeAssistant, sim: Sim, hass_admin_user: MockUser
) -> None:
    """Entities disabled by default (time zone, uptime) or by the user are no sign of an
    offline clock; a clock whose entities are all unavailable is."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    registry = er.async_get(hass)
    ours = er.async_entries_for_config_entry(registry, entry.entry_id)
    assert any(e.disabled_by is er.RegistryEntryDisabler.INTEGRATION for e in ours)
    # The user disables one more.
    user_off = next(e.entity_id for e in ours if e.disabled_by is None and e.domain == "sensor")
    registry.async_update_entity(user_off, disabled_by=er.RegistryEntryDisabler.USER)
    await hass.async_block_till_done()
    handler = GatewayHandler(hass)
    ctx = RequestContext("2025-11-25", "pytest", hass_admin_user, 1)
    created = await handler.call_tool(
        ctx, GATEWAY, {"tool": "create_alarm", "args": {"label": "Nap", "time": "14:30"}}
    )
    assert not created["isError"], created
    assert "unavailable" not in _texts(created)
    assert "gateway_note" not in (created.get("structuredContent") or {})

    # Every entity HA runs for the clock goes unavailable: now the note is due, once, by name.
    (device,) = dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    for entity_id in hass.states.async_entity_ids():
        found = registry.async_get(entity_id)
        if found is not None and found.config_entry_id == entry.entry_id:
            hass.states.async_set(entity_id, STATE_UNAVAILABLE)
    listed = await handler.call_tool(ctx, GATEWAY, {"tool": "list_alarms", "args": {}})
    alarm = next(a for a in result_data(listed)["alarms"] if a["label"] == "Nap")
    changed = await handler.call_tool(
        ctx,
        GATEWAY,
        {
            "tool": "update_alarm",
            "args": {"id": alarm["id"], "revision": alarm["revision"], "time": "15:00"},
        },
    )
    assert not changed["isError"], changed
    note = changed["content"][-1]["text"]
    assert note.startswith(f"{device.name} is unavailable in Home Assistant"), note
