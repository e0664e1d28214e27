"""A Hubitat hub found on the network by DHCP (Hubitat's MAC block): the form names its address
and where the app's endpoint is, then adds it as a hub added by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

from homeassistant.config_entries import SOURCE_DHCP, SOURCE_IGNORE
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResult, FlowResultType
from homeassistant.helpers.service_info.dhcp import DhcpServiceInfo
from homeassistant.setup import async_setup_component

from custom_components.mcp_gateway.backends.hubitat.api import HubInfo
from custom_components.mcp_gateway.backends.hubitat.config_flow import HubitatFlowMixin, _host_of
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_APP_ID,
    CONF_HOST,
    CONF_TOKEN,
    CONF_URL,
    KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN

from .conftest import TOKEN, Sim, make_entry

MANIFEST = Path(__file__).resolve().parents[2] / "custom_components" / DOMAIN / "manifest.json"
HUB_MAC = "34e1d1801234"  # Hubitat's block 34:E1:D1:8x:xx:xx, as hubs in the field have it


async def _discover(hass: HomeAssistant, ip: str = "127.0.0.1", mac: str = HUB_MAC) -> FlowResult:
    assert await async_setup_component(hass, DOMAIN, {})
    return await hass.config_entries.flow.async_init(
        DOMAIN,
        context={"source": SOURCE_DHCP},
        data=DhcpServiceInfo(ip=ip, hostname="hubitat", macaddress=mac),
    )


def test_the_manifest_matches_hubitats_mac_block() -> None:
    matchers = json.loads(MANIFEST.read_text())["dhcp"]
    assert matchers == [{"macaddress": "34E1D18*"}]
    assert hasattr(HubitatFlowMixin, "async_step_dhcp")


async def test_a_discovered_hub_is_added_with_its_endpoint(hass: HomeAssistant, sim: Sim) -> None:
    result = await _discover(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hubitat_discovered"
    placeholders = result["description_placeholders"]
    assert placeholders["host"] == "127.0.0.1"
    assert placeholders["endpoint"] == "http://127.0.0.1/apps/api/APP-ID/mcp"
    suggested = {
        str(key): key.description["suggested_value"]
        for key in result["data_schema"].schema
        if key.description and "suggested_value" in key.description
    }
    assert suggested == {CONF_HOST: "127.0.0.1"}
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert flows[0]["context"]["title_placeholders"] == {"name": "Hubitat hub (127.0.0.1)"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: f"{sim.url}?access_token={TOKEN}"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {CONF_BACKEND: KIND, CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    assert result["result"].unique_id == sim.hub.hub_id  # the hub's id, as by hand


async def test_app_id_and_token_use_the_discovered_address(hass: HomeAssistant) -> None:
    """With the address filled in, the app id and token are all the form needs."""
    seen: list[str] = []

    async def probe(self: Any, url: str, token: str) -> HubInfo:
        seen.append(url)
        return HubInfo(None, "Hub", None, None, None, None, {})

    result = await _discover(hass, ip="192.168.1.20")
    with patch.object(HubitatFlowMixin, "_hubitat_probe", probe):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_APP_ID: "7", CONF_TOKEN: "t"}
        )
    assert seen == ["http://192.168.1.20/apps/api/7/mcp"]
    assert result["type"] is FlowResultType.CREATE_ENTRY
    # No zigbeeId: no unique id, as for a hub added by hand (the MAC key was the offer's).
    assert result["result"].unique_id is None


async def test_a_wrong_endpoint_shows_the_error_and_keeps_the_address(
    hass: HomeAssistant,
) -> None:
    result = await _discover(hass, ip="192.168.1.20")
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_APP_ID: "7"})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "missing_token"}


async def test_a_hub_already_added_at_that_address_is_not_offered(
    hass: HomeAssistant, sim: Sim
) -> None:
    make_entry(sim).add_to_hass(hass)
    result = await _discover(hass)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_one_hub_is_offered_once_and_ignoring_it_sticks(hass: HomeAssistant) -> None:
    first = await _discover(hass, ip="192.168.1.20")
    assert first["type"] is FlowResultType.FORM
    again = await _discover(hass, ip="192.168.1.20")
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_in_progress"

    await hass.config_entries.flow.async_init(
        DOMAIN,
        context={"source": SOURCE_IGNORE},
        data={
            "unique_id": f"hubitat_{':'.join(HUB_MAC[i : i + 2] for i in range(0, 12, 2))}",
            "title": "Hubitat hub (192.168.1.20)",
        },
    )
    await hass.async_block_till_done()
    ignored = await _discover(hass, ip="192.168.1.21")
    assert ignored["type"] is FlowResultType.ABORT
    assert ignored["reason"] == "already_configured"


def test_a_stored_endpoint_without_a_host_matches_no_discovery() -> None:
    assert _host_of("http://192.168.1.20/apps/api/7/mcp") == "192.168.1.20"
    assert _host_of("http://[::1") is None
    assert _host_of(None) is None
