"""Config, reauth, reconfigure and options flows of the Hubitat backend."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest.mock import patch

from homeassistant.config_entries import SOURCE_USER
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
import pytest

from custom_components.mcp_gateway.backends.hubitat.config_flow import HubitatFlowMixin
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_APP_ID,
    CONF_AS_LIGHT,
    CONF_AS_SWITCH,
    CONF_HOST,
    CONF_SCAN_INTERVAL,
    CONF_SEND_KEY,
    CONF_TOKEN,
    CONF_URL,
    KIND as HUBITAT_KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.mcp.errors import McpTimeoutError, McpToolError

from .conftest import TOKEN, Sim, SimFactory, first, make_entry, setup_entry


async def _hubitat_form(hass: HomeAssistant) -> str:
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.MENU
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": HUBITAT_KIND}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "hubitat"
    return result["flow_id"]


async def test_user_url_with_token(hass: HomeAssistant, sim: Sim) -> None:
    """A pasted endpoint URL carrying access_token: the token is split off and stored apart."""
    flow_id = await _hubitat_form(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: f"{sim.url}?access_token={TOKEN}"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Home Hub"
    assert result["data"] == {CONF_BACKEND: HUBITAT_KIND, CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    assert result["result"].unique_id == sim.hub.hub_id


async def test_user_host_app_and_token(hass: HomeAssistant, sim: Sim) -> None:
    """Host, app id and token build the local endpoint."""
    flow_id = await _hubitat_form(hass)
    host = f"127.0.0.1:{sim.server.port}"
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_HOST: host, CONF_APP_ID: "42", CONF_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_URL] == f"http://{host}/apps/api/42/mcp"


@pytest.mark.parametrize(
    ("user_input", "error"),
    [
        ({CONF_URL: "ftp://hub/apps/api/42/mcp", CONF_TOKEN: "x"}, "invalid_url"),
        ({CONF_URL: "http://", CONF_TOKEN: "x"}, "invalid_url"),
        ({CONF_URL: "http://[::1/apps", CONF_TOKEN: "x"}, "invalid_url"),
        ({CONF_URL: "http://hub.local/", CONF_TOKEN: "x"}, "invalid_url"),
        ({CONF_HOST: "hub.local"}, "missing_endpoint"),
        ({CONF_APP_ID: "42", CONF_TOKEN: "x"}, "missing_endpoint"),
        ({CONF_HOST: "ftp://hub.local", CONF_APP_ID: "42", CONF_TOKEN: "x"}, "invalid_url"),
        ({CONF_HOST: "http://[::1", CONF_APP_ID: "42", CONF_TOKEN: "x"}, "invalid_url"),
        ({CONF_URL: "http://hub.local/apps/api/42/mcp"}, "missing_token"),
    ],
)
async def test_user_input_errors(
    hass: HomeAssistant, sim: Sim, user_input: dict[str, Any], error: str
) -> None:
    """Values that do not describe an endpoint are refused before any connection, then fixed."""
    flow_id = await _hubitat_form(hass)
    result = await hass.config_entries.flow.async_configure(flow_id, user_input)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": error}
    assert sim.stats.http_requests == 0
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def test_user_connection_errors_then_success(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """Wrong token, wrong path, hub down, not MCP: precise errors; then it works."""
    sim = await sim_factory()
    flow_id = await _hubitat_form(hass)

    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: "wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    # The form is refilled without the token.
    assert CONF_TOKEN not in (result["data_schema"]({CONF_URL: sim.url}) or {})

    wrong_path = sim.url.replace("/apps/api/42/mcp", "/apps/api/42/nothing")
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: wrong_path, CONF_TOKEN: TOKEN}
    )
    assert result["errors"] == {"base": "not_an_mcp_server"}

    sim.faults.malformed = True
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    )
    assert result["errors"] == {"base": "not_an_mcp_server"}
    sim.faults.malformed = False

    sim.faults.offline = True
    pasted = f"{sim.url}?access_token={TOKEN}"
    result = await hass.config_entries.flow.async_configure(flow_id, {CONF_URL: pasted})
    assert result["errors"] == {"base": "cannot_connect"}
    # The pasted URL is offered again as typed, so the user need not find and paste it anew.
    assert _suggested(result) == {CONF_URL: pasted}
    sim.faults.offline = False

    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY


def _suggested(result: Any) -> dict[str, Any]:
    """The values a form is refilled with (its fields' suggested values)."""
    return {
        str(key): key.description["suggested_value"]
        for key in result["data_schema"].schema
        if (key.description or {}).get("suggested_value") is not None
    }


@pytest.mark.parametrize(
    ("raised", "error"),
    [
        (McpTimeoutError("slow"), "timeout"),
        (McpToolError("hub_get_info failed"), "cannot_connect"),
        (RuntimeError("boom"), "unknown"),
    ],
)
async def test_user_probe_failures(
    hass: HomeAssistant, sim: Sim, raised: Exception, error: str
) -> None:
    """Timeouts, tool failures and surprises each have their own message; a retry then works."""
    flow_id = await _hubitat_form(hass)
    with patch.object(HubitatFlowMixin, "_hubitat_probe", side_effect=raised):
        result = await hass.config_entries.flow.async_configure(
            flow_id, {CONF_URL: sim.url, CONF_TOKEN: TOKEN}
        )
    assert result["errors"] == {"base": error}
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def test_user_same_hub_twice_aborts(hass: HomeAssistant, sim: Sim) -> None:
    """The hub's own id is the unique id: a second entry for it aborts."""
    make_entry(sim).add_to_hass(hass)
    flow_id = await _hubitat_form(hass)
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: sim.url, CONF_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_reauth(hass: HomeAssistant, sim: Sim) -> None:
    """A new token is checked against the same hub and stored."""
    entry = make_entry(sim, token="old")
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    assert result["step_id"] == "hubitat_reauth"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_TOKEN: "still-wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_TOKEN: TOKEN})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_TOKEN] == TOKEN


async def test_reauth_when_the_hub_gives_no_id(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A hub whose zigbeeId reads "unavailable" proves nothing either way: the token is stored."""
    sim = await sim_factory(zigbee_id="unavailable")
    entry = make_entry(sim, token="old")
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_TOKEN: TOKEN})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_TOKEN] == TOKEN
    assert entry.unique_id == sim.hub.hub_id


async def test_reauth_other_hub_aborts(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """A token that works but on a different hub (the address was reused) is refused."""
    sim = await sim_factory(hub_id="other-hub")
    entry = make_entry(sim, unique_id="hub-0001")
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_TOKEN: TOKEN})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"


async def test_reconfigure_moved_hub(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """The hub got a new address: the endpoint changes, the token is kept when left empty."""
    old = await sim_factory()
    new = await sim_factory(app_id="77")
    entry = make_entry(old)
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    assert result["step_id"] == "hubitat_reconfigure"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: new.url, CONF_TOKEN: "wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_URL: new.url})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_URL] == new.url
    assert entry.data[CONF_TOKEN] == TOKEN


async def test_reconfigure_to_another_hub_aborts(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """Pointing an entry at a different hub is refused."""
    sim = await sim_factory()
    other = await sim_factory(hub_id="other-hub")
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: other.url, CONF_TOKEN: TOKEN}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"


async def test_options_with_loaded_entry(hass: HomeAssistant, sim: Sim) -> None:
    """Options list the hub's lights and switches for the overrides, and apply on reload."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    bulb = first(sim, "dimmer")
    plug = first(sim, "switch")

    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.FORM
    schema = result["data_schema"].schema
    as_switch = next(key for key in schema if key == CONF_AS_SWITCH)
    as_light = next(key for key in schema if key == CONF_AS_LIGHT)
    light_choices = {o["value"] for o in schema[as_switch].config["options"]}
    switch_choices = {o["value"] for o in schema[as_light].config["options"]}
    assert str(bulb.id) in light_choices
    assert str(plug.id) in switch_choices
    assert not light_choices & switch_choices

    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        {
            CONF_SCAN_INTERVAL: 30,
            CONF_SEND_KEY: True,
            CONF_AS_SWITCH: [str(bulb.id)],
            CONF_AS_LIGHT: [str(plug.id)],
        },
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    runtime = entry.runtime_data
    assert runtime.coordinator.update_interval.total_seconds() == 30
    entities = er.async_get(hass)
    uid = sim.hub.hub_id
    assert entities.async_get_entity_id("switch", DOMAIN, f"{uid}_{bulb.id}_switch")
    assert entities.async_get_entity_id("light", DOMAIN, f"{uid}_{bulb.id}_light") is None
    assert entities.async_get_entity_id("light", DOMAIN, f"{uid}_{plug.id}_light")


async def test_options_without_loaded_entry_keep_choices(hass: HomeAssistant, sim: Sim) -> None:
    """With the hub not loaded, earlier override choices stay selectable."""
    entry = make_entry(sim, **{CONF_AS_SWITCH: ["5"], CONF_AS_LIGHT: []})
    entry.add_to_hass(hass)
    result = await hass.config_entries.options.async_init(entry.entry_id)
    schema = result["data_schema"].schema
    as_switch = next(key for key in schema if key == CONF_AS_SWITCH)
    assert [o["value"] for o in schema[as_switch].config["options"]] == ["5"]
    assert as_switch.default() == ["5"]


async def test_old_hubitat_poll_interval_option_is_migrated(hass: HomeAssistant, sim: Sim) -> None:
    """A 1.1 entry's `hubitat_poll_interval` option becomes CONF_SCAN_INTERVAL."""
    entry = make_entry(sim, hubitat_poll_interval=40)
    await setup_entry(hass, entry)
    assert entry.minor_version == 2
    assert entry.options["scan_interval"] == 40
    assert "hubitat_poll_interval" not in entry.options
    assert entry.runtime_data.coordinator.update_interval == timedelta(seconds=40)
