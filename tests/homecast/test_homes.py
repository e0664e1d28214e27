"""Two Homecast homes with the same rooms and accessories (the real two-home capture, served
as the community server serves it): twins told apart, scenes run by home name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.backends.homecast.const import CONF_SERVER, SERVER_COMMUNITY
from custom_components.mcp_gateway.gateway.catalog import GatewayCatalog
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.mcp.server import RequestContext
from tests.results import result_data

from .conftest import Sim, SimFactory, setup_entry, token_entry

REAL_FILE = Path(__file__).parent.parent / "simulators" / "data" / "homecast_real.json"


def _ctx(user: Any) -> RequestContext:
    return RequestContext("2025-11-25", "pytest", user, 1)


@pytest.fixture
async def hass_user(hass: HomeAssistant) -> MockUser:
    """An ordinary (non-admin) Home Assistant user."""
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    return MockUser(name="Ordinary", groups=[group]).add_to_hass(hass)


@pytest.fixture
async def real(sim_factory: SimFactory) -> Sim:
    """The community server with the two-home capture: George Street and Rob's Flat."""
    return await sim_factory(community=True, state_file=REAL_FILE)


async def _loaded(hass: HomeAssistant, sim: Sim) -> MockConfigEntry:
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    return entry


@pytest.mark.parametrize("home", ["Rob's Flat", "rob's flat", "Rob's_Flat", "ROBS FLAT"])
async def test_run_scene_by_home_name_for_a_user(
    hass: HomeAssistant, real: Sim, hass_user: MockUser, home: str
) -> None:
    """A non-admin runs a scene naming the home as people say it; the server, which finds a
    home by its key alone, is sent the key of the one home the name means."""
    await _loaded(hass, real)
    gateway = GatewayCatalog.get(hass).exposed_backends()[0].gateway_name
    flat = next(h for h in real.state.homes if h.slug.startswith("rob"))
    lamp = next(a for a in flat.all_accessories() if a.name.endswith("Kitchen Desk Lamp"))
    lamp.values["on"] = True
    result = await GatewayHandler(hass).call_tool(
        _ctx(hass_user),
        gateway,
        {"tool": "run_scene", "args": {"home": home, "name": "Good Night"}},
    )
    assert result["isError"] is False, result
    assert result_data(result)["home"] == flat.slug


async def test_run_scene_unknown_home_is_still_refused_to_a_user(
    hass: HomeAssistant, real: Sim, hass_user: MockUser
) -> None:
    """A home no followed home is named like addresses nothing a user may control."""
    await _loaded(hass, real)
    gateway = GatewayCatalog.get(hass).exposed_backends()[0].gateway_name
    result = await GatewayHandler(hass).call_tool(
        _ctx(hass_user),
        gateway,
        {"tool": "run_scene", "args": {"home": "Elsewhere", "name": "Good Night"}},
    )
    assert result["isError"] is True
    assert result_data(result)["error"]["code"] == "forbidden"
