"""The integration against what the real Homecast servers send.

A capture shaped exactly like `get_state` of homecast-web's src/server/local-rest.ts (slug
names, virtual accessories as type "other", raw characteristic names, two homes), served by
the Mac app's community server (src/server/local-server.ts + local-mcp.ts).
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web
from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.const import CONF_URL, STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
)
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.backends.homecast.const import (
    CONF_ACCESS_TOKEN,
    CONF_HOMES,
    CONF_SERVER,
    SERVER_COMMUNITY,
)
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.mcp.client import BearerAuth, McpClient
from custom_components.mcp_gateway.mcp.errors import McpAuthError, McpProtocolError
from simulators import DATA_DIR
from tests.registry import device_of as registry_device, in_room
from tests.simulation import LoopbackServers

from .conftest import TOKEN, Sim, SimFactory, device_of, entity_id, setup_entry, token_entry

REAL_FILE = DATA_DIR / "homecast_real.json"
# Stateless entities: no state until first pressed/run.
_STATELESS = ("button.", "event.", "scene.")


def _capture() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REAL_FILE.read_text())
    return data


def _accessories(data: dict[str, Any]) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        (home, room, key, props)
        for home, body in data.items()
        if not home.startswith("_")
        for room, accessories in body.items()
        if not room.startswith("_")
        for key, props in accessories.items()
    ]


async def _community(sim_factory: SimFactory, **options: Any) -> Sim:
    return await sim_factory(community=True, **options)


async def test_real_capture_gives_readable_complete_devices(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """Readable names and areas, an entity for every accessory with something to show, no
    unknowns with a value."""
    sim = await _community(sim_factory, state_file=REAL_FILE)
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    devices = dr.async_get(hass)
    entities = er.async_get(hass)
    areas = ar.async_get(hass)
    data = _capture()
    homes = {key: uuid.lower() for key, uuid in data["_homes"].items()}
    names = {d.name for d in dr.async_entries_for_config_entry(devices, entry.entry_id)}
    assert {"George Street", "Rob's Flat"} <= names
    for home, room, key, props in _accessories(data):
        home_tail, tail = homes[home][-4:], key.rsplit("_", 1)[-1]
        # Unique ids stay on the stable keys: home UUID tail + accessory UUID tail.
        device = registry_device(hass, (DOMAIN, f"{entry.unique_id}_{home_tail}_{tail}"))
        if props["type"] in ("doorbell", "button"):
            # The community server never reports a press: nothing to show, so no device.
            assert device is None, key
            continue
        assert device is not None, key
        assert "_" not in (device.name or ""), device.name
        area = areas.async_get_area(device.area_id) if device.area_id else None
        if room == "unknown_0000":
            assert area is None  # a virtual accessory without a room
        else:
            assert area is not None
            assert "_" not in area.name
        owned = er.async_entries_for_device(entities, device.id)
        assert owned, f"no entity for {key} ({props['type']})"
        for item in owned:
            state = hass.states.get(item.entity_id)
            assert state is not None, item.entity_id
            if item.entity_id.startswith(_STATELESS):
                continue
            if len(props) <= 2:  # type and name only: the relay could not reach it
                assert state.state == STATE_UNAVAILABLE, item.entity_id
            else:
                assert state.state not in (STATE_UNKNOWN, STATE_UNAVAILABLE), item.entity_id
    pump = registry_device(
        hass, (DOMAIN, f"{entry.unique_id}_{homes['george_street_b438'][-4:]}_70c3")
    )
    assert pump is not None
    # Two homes: the device carries its home's name; the room stays its area.
    assert pump.name == f"George Street {in_room('Bedroom 1', 'Bedroom 1 Air Conditioner')}"
    assert areas.async_get_area(pump.area_id).name == "Bedroom 1"  # type: ignore[arg-type, union-attr]


async def test_real_capture_climate_and_raw_names(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A thermostat offers only what it can take; the air conditioner keeps its fan speed."""
    sim = await _community(sim_factory, state_file=REAL_FILE)
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    home = sim.state.homes[0]
    thermostat = entity_id(hass, entry, sim, home.find("kitchen_thermostat_d547"), "climate")
    assert hass.states.get(thermostat).attributes["hvac_modes"] == ["off", "heat"]
    ac = hass.states.get(
        entity_id(hass, entry, sim, home.find("bedroom_1_air_conditioner_70c3"), "climate")
    )
    assert ac.attributes["fan_modes"] == ["low", "medium", "high"]
    assert ac.attributes["fan_mode"] == "medium"  # rotation_speed 50
    leak = entity_id(hass, entry, sim, home.find("kitchen_leak_sensor_3c81"), "leak_detected")
    assert hass.states.get(leak).state == "off"
    smoke = home.find("bedroom_1_smoke_alarm_40af")
    assert hass.states.get(entity_id(hass, entry, sim, smoke, "smoke_detected")).state == "off"
    co = entity_id(hass, entry, sim, smoke, "carbon_monoxide_detected")
    assert hass.states.get(co).state == "off"
    shade = hass.states.get(
        entity_id(hass, entry, sim, home.find("kitchen_roller_shade_8f10"), "cover")
    )
    assert (
        shade.attributes["current_position"]
        == sim.state.values(home.slug, "kitchen_roller_shade_8f10")["current_position"]
    )


async def test_unreachable_switches_are_unavailable(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """Switches, outlets and virtual switches with no value are unavailable (never read)."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    home = sim.state.homes[0]
    switch = device_of(sim, "switch")
    guest = next(a for a in home.virtuals() if a.name == "Guest Switch")
    outlet = device_of(sim, "outlet")
    targets = [
        entity_id(hass, entry, sim, switch, "switch"),
        entity_id(hass, entry, sim, guest, "switch"),
        entity_id(hass, entry, sim, outlet, "outlet"),
    ]
    saved = [dict(acc.values) for acc in (switch, guest, outlet)]
    for acc in (switch, guest, outlet):
        acc.values.clear()
    await entry.runtime_data.coordinator.async_refresh()
    assert [hass.states.get(t).state for t in targets] == [STATE_UNAVAILABLE] * 3
    for acc, values in zip((switch, guest, outlet), saved, strict=True):
        acc.values.update(values)
    await entry.runtime_data.coordinator.async_refresh()
    assert all(hass.states.get(t).state in ("on", "off") for t in targets)


# --- the community server: config flow, auth, the MCP client ----------------------------------


async def _community_form(hass: HomeAssistant) -> Any:
    assert await async_setup_component(hass, DOMAIN, {})
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert "homecast_community" in result["menu_options"]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "homecast_community"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "homecast_community"
    return result


async def test_community_flow(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """A token the app refuses is an auth error of its own; a good one adds the entry."""
    sim = await _community(sim_factory)
    result = await _community_form(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: "expired.app.token"}
    )
    assert result["errors"] == {"base": "community_auth_required"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: sim.url, CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["step_id"] == "homecast_homes"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: sim.home_uuids()[:1]}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_SERVER] == SERVER_COMMUNITY
    assert result["data"][CONF_ACCESS_TOKEN] == TOKEN
    entry = hass.config_entries.async_get_entry(result["result"].entry_id)
    assert entry is not None
    assert entry.state is ConfigEntryState.LOADED


async def test_community_without_authentication(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """With the app's authentication off, no token at all: none is sent."""
    sim = await _community(sim_factory, community_auth=False)
    result = await _community_form(hass)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_URL: sim.url})
    assert result["step_id"] == "homecast_homes"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOMES: sim.home_uuids()}
    )
    await hass.async_block_till_done()
    assert result["data"][CONF_ACCESS_TOKEN] == ""
    entry = hass.config_entries.async_get_entry(result["result"].entry_id)
    assert entry is not None
    assert entry.state is ConfigEntryState.LOADED


@pytest.mark.parametrize("field", ["url", "token"])
async def test_community_flow_errors(
    hass: HomeAssistant, sim_factory: SimFactory, field: str
) -> None:
    """An address that is not the app, and a missing token where one is required."""
    sim = await _community(sim_factory)
    result = await _community_form(hass)
    url = f"{sim.origin}/nothing" if field == "url" else sim.url
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_URL: url})
    expected = "cannot_connect" if field == "url" else "community_auth_required"
    assert result["errors"] == {"base": expected}


async def test_community_refusal_starts_reauth(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """The app's `{"error": "Authentication required"}` on a poll is an auth failure."""
    sim = await _community(sim_factory)
    sim.state.add_token("app_oauth_token")
    entry = token_entry(
        sim, **{CONF_SERVER: SERVER_COMMUNITY, CONF_ACCESS_TOKEN: "app_oauth_token"}
    )
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    sim.state.revoke_token("app_oauth_token")
    await entry.runtime_data.coordinator.async_refresh()
    await hass.async_block_till_done()
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [f["context"]["source"] for f in flows] == ["reauth"]
    result = await hass.config_entries.flow.async_configure(
        flows[0]["flow_id"], {CONF_ACCESS_TOKEN: "still.wrong"}
    )
    assert result["errors"] == {"base": "community_auth_required"}
    result = await hass.config_entries.flow.async_configure(
        flows[0]["flow_id"], {CONF_ACCESS_TOKEN: TOKEN}
    )
    assert result["reason"] == "reauth_successful"


async def test_client_reads_a_plain_refusal_as_auth(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The MCP client: a non-JSON-RPC body refusing the credential is McpAuthError."""
    sim = await _community(sim_factory)
    session = async_get_clientsession(hass)
    client = McpClient(session, sim.url, auth=BearerAuth("not.a.token"))
    with pytest.raises(McpAuthError) as err:
        await client.connect()
    assert err.value.status == 200
    good = McpClient(session, sim.url, auth=BearerAuth(TOKEN))
    await good.connect()
    assert good.protocol_version == "2024-11-05"
    assert good.session_id is None
    result = await good.call_tool("get_state", {})
    assert "_homes" in result.data
    await good.close()


async def test_client_other_plain_errors_stay_protocol_errors(
    hass: HomeAssistant, loopback_servers: LoopbackServers
) -> None:
    """Only a refused credential is an auth failure; other plain bodies are not MCP.

    The app's gate answers `{"error": "Server not configured. …"}` before its relay is set up.
    """

    async def not_configured(request: web.Request) -> web.Response:
        return web.json_response({"error": "Server not configured. Set up the relay first."})

    app = web.Application()
    app.router.add_post("/mcp", not_configured)
    server = Sim(await loopback_servers.start(app))
    client = McpClient(async_get_clientsession(hass), server.url)
    with pytest.raises(McpProtocolError):
        await client.connect()
