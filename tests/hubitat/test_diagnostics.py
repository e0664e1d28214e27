"""The hub's config-entry diagnostics: health and hub facts, never its token."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.mcp_gateway.backends.hubitat.const import CONF_TOKEN
from simulators.base import FAULTS
from simulators.hubitat import HUB, create_app as hubitat_app, mcp_path
from tests.diagnostics_checks import assert_no_secret, entry_diagnostics
from tests.hubitat.sim import hubitat_entry
from tests.simulation import LoopbackServers

HUBITAT_TOKEN = "hubitat-secret-5f1e2d3c"

# Real HTTP to the simulator on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")


async def test_hubitat_diagnostics(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loopback_servers: LoopbackServers,
) -> None:
    """The hub's token (sent in the URL query) appears nowhere, even after a failed poll."""
    server = await loopback_servers.start(
        hubitat_app(token=HUBITAT_TOKEN, command_delay=0, devices=24)
    )
    hub = server.app[HUB]
    url = str(server.make_url(mcp_path("42")))
    entry = hubitat_entry(url, HUBITAT_TOKEN, unique_id=hub.hub_id)
    diagnostics = await entry_diagnostics(hass, hass_client, entry)
    dump = assert_no_secret(diagnostics, HUBITAT_TOKEN, f"access_token={HUBITAT_TOKEN}")
    assert "127.0.0.1" not in dump
    assert diagnostics["entry"]["data"][CONF_TOKEN] == "**REDACTED**"
    assert len(diagnostics["backend"]["devices"]) == len(hub.visible_devices())
    registered = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    assert diagnostics["entities"] == {"derived": len(registered), "waiting_for_room": 0}

    # A failing hub: errors often quote the request URL, query token included.
    server.app[FAULTS].update({"error_rate": 1.0})
    await entry.runtime_data.coordinator.async_refresh()
    assert entry.runtime_data.coordinator.last_update_success is False
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    assert diagnostics["health"]["available"] is False
    assert_no_secret(diagnostics, HUBITAT_TOKEN)
