"""Homecast's config-entry diagnostics: health and the homes, never a token or secret."""

from __future__ import annotations

import aiohttp
from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.const import CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from yarl import URL

from custom_components.mcp_gateway.backends.homecast.const import CONF_ACCESS_TOKEN, CONF_HOMES
from custom_components.mcp_gateway.core.const import DOMAIN
from simulators.homecast import HOMECAST, create_app as homecast_app
from tests.diagnostics_checks import assert_no_secret, assert_sections, entry_diagnostics
from tests.homecast.sim import homecast_token_entry
from tests.simulation import LoopbackServers

HOMECAST_TOKEN = "hc_secret_token_8a7b6c"

# Real HTTP to the simulator on 127.0.0.1.
pytestmark = pytest.mark.usefixtures("socket_enabled")


async def test_homecast_token_diagnostics(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loopback_servers: LoopbackServers,
) -> None:
    """Homecast diagnostics redact the token and list the homes."""
    server = await loopback_servers.start(homecast_app(token=HOMECAST_TOKEN, write_delay=0))
    homes = [home.uuid.lower() for home in server.app[HOMECAST].homes]
    entry = homecast_token_entry(str(server.make_url("/mcp")), HOMECAST_TOKEN, homes)
    diagnostics = await entry_diagnostics(hass, hass_client, entry)
    assert_no_secret(diagnostics, HOMECAST_TOKEN)
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
    assert_sections(diagnostics)
    assert_no_secret(diagnostics, *secrets)
    # The whole token dict is one redacted value.
    assert diagnostics["entry"]["data"]["token"] == "**REDACTED**"
