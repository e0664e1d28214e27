"""Config-entry diagnostics of every backend: health and backend facts, never a secret.

Every registered backend is loaded against its simulator here and its diagnostics downloaded
the way the UI does (HTTP, JSON); each backend's own test (`tests/<kind>/test_diagnostics.py`)
searches the serialized text for every credential its entry holds.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.mcp_gateway.diagnostics import TO_REDACT
from tests.backend_sims import registered_kinds, simulated_backend
from tests.diagnostics_checks import assert_no_secret, entry_diagnostics
from tests.simulation import LoopbackServers, gateway_entry

# Secrets of the kinds our entries hold: a URL's query token, a password, a bearer token.
TOKEN = "query-secret-5f1e2d3c"
PASSWORD = "device secret 42!"
BEARER = "bearer_secret_8a7b6c"

# Real HTTP to the simulators on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")


@pytest.mark.parametrize("kind", registered_kinds())
async def test_every_backend_has_diagnostics_with_its_secrets_redacted(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loopback_servers: LoopbackServers,
    kind: str,
) -> None:
    """Each backend's entry has the common sections, and every key of its data that is a
    secret's (diagnostics.TO_REDACT) comes out redacted."""
    backend = simulated_backend(kind)
    entry = backend.entry(await backend.start(loopback_servers))
    diagnostics = await entry_diagnostics(hass, hass_client, entry)
    secret_keys = TO_REDACT & set(entry.data)
    assert secret_keys, f"{kind}: its entry holds no secret this test could look for"
    for key in secret_keys:
        assert diagnostics["entry"]["data"][key] == "**REDACTED**", key


@pytest.mark.parametrize(
    "leaked",
    [
        {"error": f"GET http://hub/apps/api/42/mcp?access_token={TOKEN} failed"},
        {"nested": [{"auth": f"Basic admin:{quote(PASSWORD)}"}]},
        {"header": f"Bearer {BEARER}"},
    ],
)
def test_leak_check_catches_a_leak(leaked: dict[str, Any]) -> None:
    """The search above is not vacuous: a secret anywhere in the dump fails it."""
    with pytest.raises(AssertionError, match="a secret leaked"):
        assert_no_secret(leaked, TOKEN, BEARER, PASSWORD)


async def test_gateway_settings_entry_diagnostics(
    hass: HomeAssistant, hass_client: ClientSessionGenerator
) -> None:
    """The gateway's settings entry has no backend: its diagnostics are its options."""
    entry = gateway_entry({"allowed_origins": ["https://claude.ai"], "rate_limit_per_minute": 60})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    result = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    assert result["entry"]["options"]["rate_limit_per_minute"] == 60
    assert "backend" not in result
