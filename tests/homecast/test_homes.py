"""Two Homecast homes with the same rooms and accessories (the real two-home capture, served
as the community server serves it): twins told apart, scenes run by home name."""

from __future__ import annotations

from typing import Any

from awesomeversion import AwesomeVersion
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.const import __version__ as HA_VERSION
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.backends.homecast.const import CONF_SERVER, SERVER_COMMUNITY
from custom_components.mcp_gateway.gateway.catalog.store import GatewayCatalog, ToolFailure
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.mcp.server import RequestContext
from simulators import DATA_DIR
from tests.results import result_data

from .conftest import Sim, SimFactory, setup_entry, token_entry

# From HA 2026.6 a new entity id begins with its device's area (here the room, Kitchen).
_AREA_FIRST = AwesomeVersion(HA_VERSION) >= AwesomeVersion("2026.6")


def _lamp_id(home_slug: str) -> str:
    """The entity id HA gives a home's Kitchen Desk Lamp on this release: from 2026.6 the
    area first, and the device named without it."""
    if _AREA_FIRST:
        return f"light.kitchen_{home_slug}_desk_lamp"
    return f"light.{home_slug}_kitchen_desk_lamp"


GEORGE_LAMP = _lamp_id("george_street")
FLAT_LAMP = _lamp_id("rob_s_flat")
# The accessory's name, "Kitchen Desk Lamp", without its room where the area leads the id.
_LAMP = "Desk Lamp" if _AREA_FIRST else "Kitchen Desk Lamp"

REAL_FILE = DATA_DIR / "homecast_real.json"


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


def _lamps(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, str]:
    """Entity id → device name of the two homes' Kitchen Desk Lamps (lights)."""
    devices = dr.async_get(hass)
    found = {}
    for item in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id):
        device = devices.async_get(item.device_id) if item.device_id else None
        if item.domain == "light" and device and device.name.endswith(_LAMP):
            found[item.entity_id] = device.name
    return found


async def test_twins_of_two_homes_carry_their_home(hass: HomeAssistant, real: Sim) -> None:
    """In an account of two homes the accessories' devices, and so the entities named after
    them, carry the home: HA's own UI tells the twins apart. Unique ids stay the UUID tails."""
    entry = await _loaded(hass, real)
    assert _lamps(hass, entry) == {
        GEORGE_LAMP: f"George Street {_LAMP}",
        FLAT_LAMP: f"Rob's Flat {_LAMP}",
    }
    state = hass.states.get(FLAT_LAMP)
    assert state is not None
    assert state.attributes["friendly_name"] == f"Rob's Flat {_LAMP}"
    uid = er.async_get(hass).async_get(FLAT_LAMP).unique_id
    flat = next(h for h in real.state.homes if h.slug.startswith("rob"))
    lamp = next(a for a in flat.all_accessories() if a.name.endswith("Kitchen Desk Lamp"))
    tail = flat.uuid.replace("-", "")[-4:].lower()
    assert uid == f"{entry.unique_id}_{tail}_{lamp.slug[-4:]}_light"
    # The home devices keep their own names; the rooms stay the areas.
    names = {d.name for d in dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)}
    assert {"George Street", "Rob's Flat"} <= names


async def test_one_home_keeps_plain_names(
    hass: HomeAssistant, real: Sim, hass_admin_user: MockUser
) -> None:
    """An entry following one home names its devices as before."""
    flat = next(h for h in real.state.homes if h.slug.startswith("rob"))
    entry = token_entry(real, homes=[flat.uuid.lower()], **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    # On either HA: light.kitchen_desk_lamp (from 2026.6: the area, then "Desk Lamp").
    assert _lamps(hass, entry) == {"light.kitchen_desk_lamp": _LAMP}
    result = await async_get_state(hass, _ctx(hass_admin_user), {"name": "kitchen desk lamp"})
    # One home: results do not name it.
    assert "home" not in result
    assert all("home" not in item for item in result["entities"])


async def test_get_state_says_which_home(
    hass: HomeAssistant, real: Sim, hass_admin_user: MockUser
) -> None:
    """Twins come each with its home; a home filter (as people write it) keeps one, the home
    then said once."""
    await _loaded(hass, real)
    hass.config.location_name = "Main House"
    ctx = _ctx(hass_admin_user)
    both = await async_get_state(hass, ctx, {"name": "kitchen desk lamp", "domain": ["light"]})
    assert {(item["entity_id"], item["home"]) for item in both["entities"]} == {
        (GEORGE_LAMP, "George Street"),
        (FLAT_LAMP, "Rob's Flat"),
    }
    for spelt in ("Rob's Flat", "rob's_flat", "ROBS FLAT", "Rob\u2019s flat"):
        one = await async_get_state(
            hass, ctx, {"name": "kitchen desk lamp", "domain": ["light"], "home": spelt}
        )
        assert [item["entity_id"] for item in one["entities"]] == [FLAT_LAMP], spelt
        assert one["home"] == "Rob's Flat"
        assert "home" not in one["entities"][0]
    with pytest.raises(ToolFailure) as err:
        await async_get_state(hass, ctx, {"home": "the cabin"})
    assert err.value.message == "Unknown home 'the cabin'. Homes: George Street, Rob's Flat."
    # No floors: the error names the homes, and a home's name given as a floor is that home.
    with pytest.raises(ToolFailure, match=r"Floors: none\. Homes \(filter with home\)"):
        await async_get_state(hass, ctx, {"floor": "upstairs"})
    as_floor = await async_get_state(
        hass, ctx, {"name": "kitchen desk lamp", "domain": ["light"], "floor": "Rob's Flat"}
    )
    assert [item["entity_id"] for item in as_floor["entities"]] == [FLAT_LAMP]
    assert "home Rob's Flat" in as_floor["note"]


async def test_set_state_by_name_at_a_home(
    hass: HomeAssistant, real: Sim, hass_user: MockUser
) -> None:
    """ "Turn off the kitchen desk lamp at Rob's Flat": one set_state call by name and home;
    without the home the twins are named with their homes and nothing is sent."""
    await _loaded(hass, real)
    flat = next(h for h in real.state.homes if h.slug.startswith("rob"))
    george = next(h for h in real.state.homes if h.slug.startswith("george"))
    lamps = [
        next(a for a in home.all_accessories() if a.name.endswith("Kitchen Desk Lamp"))
        for home in (george, flat)
    ]
    for lamp in lamps:
        lamp.values["on"] = True
    ctx = _ctx(hass_user)
    with pytest.raises(ToolFailure) as err:
        await async_set_state(
            hass, ctx, {"updates": [{"name": "kitchen desk lamp", "state": "off"}]}
        )
    assert err.value.message == (
        "No update was applied: 'kitchen desk lamp' matches 2 entities: "
        f"{GEORGE_LAMP} (George Street), {FLAT_LAMP} (Rob's Flat); give home "
        "(George Street, Rob's Flat) or entity_id. Nothing was sent."
    )
    assert [lamp.values["on"] for lamp in lamps] == [True, True]

    result = await async_set_state(
        hass,
        ctx,
        {"home": "rob's flat", "updates": [{"name": "Kitchen Desk Lamp", "state": "off"}]},
    )
    assert result["updated"] == 1
    assert result["results"] == [
        {
            "entity_id": FLAT_LAMP,
            "ok": True,
            "status": "done",
            "state": "off",
            "home": "Rob's Flat",
        }
    ]
    assert [lamp.values["on"] for lamp in lamps] == [True, False]

    # Per update: one call for both homes; an entity id outside the home is refused.
    result = await async_set_state(
        hass,
        ctx,
        {
            "updates": [
                {"name": "kitchen desk lamp", "home": "George Street", "state": "off"},
                {"entity_id": FLAT_LAMP, "home": "George Street", "state": "on"},
            ]
        },
    )
    assert [r["status"] for r in result["results"]] == ["done", "failed"]
    assert result["results"][1]["error"] == (f"{FLAT_LAMP} is at Rob's Flat, not at George Street.")
    assert [lamp.values["on"] for lamp in lamps] == [False, False]


async def test_a_name_resolves_only_among_what_the_user_may_read(
    hass: HomeAssistant, real: Sim, hass_user: MockUser, hass_read_only_user: MockUser
) -> None:
    """A user who may read only George Street's lamp gets it by name alone: the other home's
    twin is neither matched nor named. A read-only user finds it but may not change it."""
    await _loaded(hass, real)
    hass_user.mock_policy({"entities": {"entity_ids": {GEORGE_LAMP: True}}})
    result = await async_set_state(
        hass, _ctx(hass_user), {"updates": [{"name": "kitchen desk lamp", "state": "off"}]}
    )
    assert [(r["entity_id"], r["status"]) for r in result["results"]] == [(GEORGE_LAMP, "done")]
    assert FLAT_LAMP not in str(result)
    with pytest.raises(ToolFailure) as err:
        await async_set_state(
            hass,
            _ctx(hass_user),
            {"home": "Rob's Flat", "updates": [{"name": "kitchen desk lamp", "state": "off"}]},
        )
    assert err.value.message.startswith("No update was applied: Nothing named 'kitchen desk lamp'")
    assert FLAT_LAMP not in err.value.message

    with pytest.raises(ToolFailure, match="may not control") as err:
        await async_set_state(
            hass,
            _ctx(hass_read_only_user),
            {"home": "rob's flat", "updates": [{"name": "kitchen desk lamp", "state": "on"}]},
        )
    assert err.value.details["results"][0]["entity_id"] == FLAT_LAMP
