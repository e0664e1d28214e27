"""The clock's config-entry diagnostics: health and its alarms, never its password."""

from __future__ import annotations

from homeassistant.const import CONF_PASSWORD
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from simulators.robine_wake import ROBINE, create_app as robine_app
from tests.diagnostics_checks import assert_no_secret, entry_diagnostics
from tests.robine_wake.sim import robine_wake_entry
from tests.simulation import LoopbackServers

ROBINE_PASSWORD = "robine secret 42!"

# Real HTTP to the simulator on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")


async def test_robine_wake_diagnostics(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loopback_servers: LoopbackServers,
) -> None:
    """Robine Wake diagnostics redact the password and list the alarms."""
    server = await loopback_servers.start(
        robine_app(password=ROBINE_PASSWORD, device_id="rw-0123456789ab")
    )
    device = server.app[ROBINE]
    entry = robine_wake_entry(
        str(server.make_url("/mcp")), device.device_id, password=ROBINE_PASSWORD
    )
    diagnostics = await entry_diagnostics(hass, hass_client, entry)
    assert_no_secret(diagnostics, ROBINE_PASSWORD)
    assert diagnostics["entry"]["data"][CONF_PASSWORD] == "**REDACTED**"
    assert diagnostics["backend"]["has_password"] is True
    assert len(diagnostics["backend"]["alarms"]) == len(device.alarms)
