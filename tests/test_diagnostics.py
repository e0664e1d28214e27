"""Config-entry diagnostics of every backend: health and backend facts, never a secret.

Each test loads an entry against its simulator, downloads the diagnostics the way the UI does
(HTTP, JSON) and searches the serialized text for every credential the entry holds.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import aiohttp
from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.const import CONF_PASSWORD, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from yarl import URL

from custom_components.mcp_gateway.backends.homecast.const import CONF_ACCESS_TOKEN, CONF_HOMES
from custom_components.mcp_gateway.backends.hubitat.const import CONF_TOKEN
from custom_components.mcp_gateway.core.const import DOMAIN
from simulators.base import FAULTS
from simulators.homecast import HOMECAST, create_app as homecast_app
from simulators.hubitat import HUB, create_app as hubitat_app, mcp_path
from simulators.robine_wake import ROBINE, create_app as robine_app
from tests.simulation import (
    LoopbackServers,
    gateway_entry,
    homecast_token_entry,
    hubitat_entry,
    robine_wake_entry,
    setup_entry,
)

HUBITAT_TOKEN = "hubitat-secret-5f1e2d3c"
HOMECAST_TOKEN = "hc_secret_token_8a7b6c"
ROBINE_PASSWORD = "robine secret 42!"


# Real HTTP to the simulators on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")


def _assert_no_secret(diagnostics: dict[str, Any], *secrets: str) -> str:
    """The JSON dump holds none of the secrets, raw or URL-encoded; returns the dump."""
    dump = json.dumps(diagnostics)
    for secret in secrets:
        for form in {
            secret,
            quote(secret),
            quote(secret, safe=""),
            quote(secret).replace(" ", "+"),
        }:
            assert form not in dump, f"a secret leaked: {form!r}"
    return dump


def _assert_sections(diagnostics: dict[str, Any]) -> None:
    assert set(diagnostics) >= {"entry", "health", "backend"}
    assert diagnostics["health"]["available"] is True
    assert diagnostics["health"]["protocol_version"]
    assert diagnostics["backend"]


async def _diagnostics(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, entry: MockConfigEntry
) -> dict[str, Any]:
    """Load the entry and download its diagnostics as the UI does; the common sections hold."""
    # The diagnostics views must exist before a test client freezes HA's router.
    assert await async_setup_component(hass, "diagnostics", {})
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    _assert_sections(diagnostics)
    return diagnostics


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
    diagnostics = await _diagnostics(hass, hass_client, entry)
    dump = _assert_no_secret(diagnostics, HUBITAT_TOKEN, f"access_token={HUBITAT_TOKEN}")
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
    _assert_no_secret(diagnostics, HUBITAT_TOKEN)


async def test_homecast_token_diagnostics(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loopback_servers: LoopbackServers,
) -> None:
    """Homecast diagnostics redact the token and list the homes."""
    server = await loopback_servers.start(homecast_app(token=HOMECAST_TOKEN, write_delay=0))
    homes = [home.uuid.lower() for home in server.app[HOMECAST].homes]
    entry = homecast_token_entry(str(server.make_url("/mcp")), HOMECAST_TOKEN, homes)
    diagnostics = await _diagnostics(hass, hass_client, entry)
    _assert_no_secret(diagnostics, HOMECAST_TOKEN)
    assert diagnostics["entry"]["data"][CONF_ACCESS_TOKEN] == "**REDACTED**"
    assert len(diagnostics["backend"]["homes"]) == len(homes)


@pytest.mark.usefixtures("current_request_with_host")
async def test_homecast_oauth_diagnostics(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    hass_client_no_auth: ClientSessionGenerator,
    loopback_servers: LoopbackServers,
) -> None:
    """An OAuth entry: access token, refresh token and the client's secret stay hidden."""
    server = await loopback_servers.start(homecast_app(write_delay=0))
    sim = server.app[HOMECAST]
    homes = [home.uuid.lower() for home in sim.homes]
    # Our views and the diagnostics views exist before any test client starts.
    assert await async_setup_component(hass, DOMAIN, {})
    assert await async_setup_component(hass, "diagnostics", {})
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "homecast"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: str(server.make_url("/mcp"))}
    )
    assert result["type"] is FlowResultType.EXTERNAL_STEP
    # The user's browser logs in at the simulator and comes back with a code.
    async with (
        aiohttp.ClientSession() as session,
        session.get(result["url"], allow_redirects=False) as resp,
    ):
        assert resp.status == 302
        query = URL(resp.headers["Location"]).query
    client = await hass_client_no_auth()
    resp = await client.get(
        "/auth/external/callback", params={"code": query["code"], "state": query["state"]}
    )
    assert resp.status == 200
    result = await hass.config_entries.flow.async_configure(result["flow_id"])
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_HOMES: homes})
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    token = entry.data["token"]
    secrets = [token["access_token"], token["refresh_token"]]
    client_secret = entry.data.get("oauth_client", {}).get("client_secret")
    if client_secret:
        secrets.append(client_secret)

    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    _assert_sections(diagnostics)
    _assert_no_secret(diagnostics, *secrets)
    # The whole token dict is one redacted value.
    assert diagnostics["entry"]["data"]["token"] == "**REDACTED**"


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
    diagnostics = await _diagnostics(hass, hass_client, entry)
    _assert_no_secret(diagnostics, ROBINE_PASSWORD)
    assert diagnostics["entry"]["data"][CONF_PASSWORD] == "**REDACTED**"
    assert diagnostics["backend"]["has_password"] is True
    assert len(diagnostics["backend"]["alarms"]) == len(device.alarms)


@pytest.mark.parametrize(
    "leaked",
    [
        {"error": f"GET http://hub/apps/api/42/mcp?access_token={HUBITAT_TOKEN} failed"},
        {"nested": [{"auth": f"Basic admin:{quote(ROBINE_PASSWORD)}"}]},
        {"header": f"Bearer {HOMECAST_TOKEN}"},
    ],
)
def test_leak_check_catches_a_leak(leaked: dict[str, Any]) -> None:
    """The search above is not vacuous: a secret anywhere in the dump fails it."""
    with pytest.raises(AssertionError, match="a secret leaked"):
        _assert_no_secret(leaked, HUBITAT_TOKEN, HOMECAST_TOKEN, ROBINE_PASSWORD)


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
