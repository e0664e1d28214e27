"""The HA-level tools over a fake backend's real entities: get_state, set_state, list_backends."""

from __future__ import annotations

import asyncio
from typing import Any

from homeassistant.auth.models import User
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.catalog.store import ToolFailure
from custom_components.mcp_gateway.gateway.finding import selection
from custom_components.mcp_gateway.gateway.tools import (
    get_state as get_state_module,
    set_state as set_state_module,
)
from custom_components.mcp_gateway.gateway.tools.get_state import async_get_state
from custom_components.mcp_gateway.gateway.tools.list_backends import async_list_backends
from custom_components.mcp_gateway.gateway.tools.service_calls import service_calls
from custom_components.mcp_gateway.gateway.tools.set_state import async_set_state
from custom_components.mcp_gateway.permissions import visibility
from custom_components.mcp_gateway.permissions.policy import EVENT_GATEWAY_WRITE

from .conftest import Ctx, FakeRuntime, add_fake_entry

PLUG, LAMP, THERMO = "switch.kitchen_plug", "light.desk_lamp", "sensor.hall_thermometer"


def _ids(result: dict[str, Any]) -> list[str]:
    return [item["entity_id"] for item in result["entities"]]


async def test_get_state_compact_defaults(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Default fields only, empty ones left out, sorted by entity id."""
    result = await async_get_state(hass, Ctx(user=hass_admin_user), {})
    assert result == {
        "total": 3,
        "count": 3,
        "backend": "hubitat_test_hub",
        "entities": [
            {"entity_id": LAMP, "name": "Desk lamp", "state": "off", "area": "Office"},
            {"entity_id": THERMO, "name": "Hall thermometer", "state": "20.5", "unit": "°C"},
            {"entity_id": PLUG, "name": "Kitchen plug", "state": "off", "area": "Kitchen"},
        ],
    }


async def test_get_state_filters(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Filters by domain, area (name or id, any case), name, ids and backend combine."""
    ctx = Ctx(user=hass_admin_user)
    assert _ids(await async_get_state(hass, ctx, {"domain": ["light", "sensor"]})) == [LAMP, THERMO]
    assert _ids(await async_get_state(hass, ctx, {"area": "kitchen"})) == [PLUG]
    office = ar.async_get(hass).async_get_area_by_name("Office")
    assert office is not None
    assert _ids(await async_get_state(hass, ctx, {"area": office.id})) == [LAMP]
    assert _ids(await async_get_state(hass, ctx, {"name": "THERMO"})) == [THERMO]
    assert _ids(await async_get_state(hass, ctx, {"entity_ids": [PLUG, "light.other"]})) == [PLUG]
    for backend in ("hubitat_test_hub", "Test Hub", "hubitat", fake_entry.entry_id):
        assert len(_ids(await async_get_state(hass, ctx, {"backend": backend}))) == 3
    assert _ids(await async_get_state(hass, ctx, {"domain": ["light"], "area": "Kitchen"})) == []


async def test_get_state_unknown_backend_or_area_lists_the_known(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A typo gets a helpful error instead of an empty list."""
    ctx = Ctx(user=hass_admin_user)
    with pytest.raises(ToolFailure, match="Backends: hubitat_test_hub") as err:
        await async_get_state(hass, ctx, {"backend": "homecast"})
    assert err.value.code == "not_found"
    with pytest.raises(ToolFailure, match="Areas: Kitchen, Office"):
        await async_get_state(hass, ctx, {"area": "Garage"})


async def test_get_state_projection_and_paging(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """fields picks exactly what is asked (attributes by name too); pages chain by next_offset."""
    ctx = Ctx(user=hass_admin_user)
    result = await async_get_state(
        hass,
        ctx,
        {"entity_ids": [LAMP], "fields": ["state", "supported_color_modes", "backend", "domain"]},
    )
    # One backend on the page: named once for the page, not per entity.
    assert result["backend"] == "hubitat_test_hub"
    assert result["entities"] == [
        {
            "entity_id": LAMP,
            "state": "off",
            "supported_color_modes": ["brightness"],
            "domain": "light",
        }
    ]
    full = await async_get_state(
        hass, ctx, {"entity_ids": [THERMO], "fields": ["attributes", "device", "last_changed"]}
    )
    item = full["entities"][0]
    assert item["attributes"] == {"unit_of_measurement": "°C"}
    assert item["device"] == "Hall thermometer"
    # In HA's time zone with its offset, not UTC.
    changed = hass.states.get(THERMO).last_changed
    assert item["last_changed"] == dt_util.as_local(changed).isoformat()
    assert not item["last_changed"].endswith("+00:00")

    first = await async_get_state(hass, ctx, {"limit": 2})
    assert first["count"] == 2
    assert first["next_offset"] == 2
    second = await async_get_state(hass, ctx, {"limit": 2, "offset": first["next_offset"]})
    assert "next_offset" not in second
    assert _ids(first) + _ids(second) == [LAMP, THERMO, PLUG]


async def test_get_state_pages_by_size(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page ends once it is big enough, and always holds at least one entity."""
    ctx = Ctx(user=hass_admin_user)
    full = await async_get_state(hass, ctx, {})
    assert "next_offset" not in full
    first_size = get_state_module._estimated_size(full["entities"][0])
    assert 0 < first_size < 200
    # Exactly one entity's worth: the second still fits, the third starts a new page.
    monkeypatch.setattr(get_state_module, "STATE_PAGE_CHARS", first_size)
    page = await async_get_state(hass, ctx, {})
    assert (page["count"], page["next_offset"]) == (2, 2)
    assert page["entities"] == full["entities"][:2]
    monkeypatch.setattr(get_state_module, "STATE_PAGE_CHARS", 0)
    for offset in range(3):
        single = await async_get_state(hass, ctx, {"offset": offset})
        assert single["entities"] == full["entities"][offset : offset + 1]
    assert "next_offset" not in single


async def test_get_state_hides_what_the_user_may_not_read(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """HA's entity read permission filters the list."""
    hass_user.mock_policy({"entities": {"entity_ids": {PLUG: True}}})
    assert _ids(await async_get_state(hass, Ctx(user=hass_user), {})) == [PLUG]


async def test_get_state_skips_unexposed_and_other_integrations(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Only exposed backend entries count; other integrations' entities never appear."""
    hass.states.async_set("light.not_ours", "on")
    await add_fake_entry(hass, "Hidden Hub", unique_id="hub-2", exposed=False)
    ids = _ids(await async_get_state(hass, Ctx(user=hass_admin_user), {}))
    assert ids == [LAMP, THERMO, PLUG]


async def test_disabled_entities_are_skipped(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A disabled entity has no state worth reporting."""
    er.async_get(hass).async_update_entity(PLUG, disabled_by=er.RegistryEntryDisabler.USER)
    await hass.async_block_till_done()
    ids = _ids(await async_get_state(hass, Ctx(user=hass_admin_user), {}))
    assert PLUG not in ids


async def test_set_state_runs_services_as_the_user(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """Several updates per call; each becomes HA service calls in the user's context."""
    calls: list[Event] = []
    writes: list[Event] = []
    hass.bus.async_listen("call_service", calls.append)
    hass.bus.async_listen(EVENT_GATEWAY_WRITE, writes.append)
    result = await async_set_state(
        hass,
        Ctx(user=hass_user, client_name="Claude"),
        {
            "updates": [
                {"entity_id": PLUG, "state": "on"},
                {"entity_id": LAMP, "brightness_pct": 50},
            ]
        },
    )
    await hass.async_block_till_done()
    assert result["failed"] == 0, result
    assert result["updated"] == 2
    assert {r["entity_id"]: r["state"] for r in result["results"]} == {PLUG: "on", LAMP: "on"}
    runtime: FakeRuntime = fake_entry.runtime_data
    assert runtime.things["1"].on is True
    assert runtime.things["2"].level == 128  # 50 % of 255, rounded by HA
    assert {(c.data["domain"], c.data["service"]) for c in calls} == {
        ("switch", "turn_on"),
        ("light", "turn_on"),
    }
    assert all(c.context.user_id == hass_user.id for c in calls)
    assert sorted(w.data["entity_id"] for w in writes) == [LAMP, PLUG]
    assert all(w.data["client_name"] == "Claude" for w in writes)
    assert all(w.context.user_id == hass_user.id for w in writes)


async def test_set_state_denied_entity_names_it(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """HA refuses the service call; the error says which entity, and nothing changed."""
    hass_user.mock_policy({"entities": {"entity_ids": {PLUG: {"read": True}, LAMP: True}}})
    result = await async_set_state(
        hass,
        Ctx(user=hass_user),
        {"updates": [{"entity_id": PLUG, "state": "on"}, {"entity_id": LAMP, "state": "on"}]},
    )
    assert result["updated"] == 1
    denied = next(r for r in result["results"] if r["entity_id"] == PLUG)
    assert denied == {
        "entity_id": PLUG,
        "ok": False,
        "status": "failed",
        "error": f"Permission denied: this Home Assistant user may not control {PLUG}",
        "done": "nothing",
    }
    runtime: FakeRuntime = fake_entry.runtime_data
    assert runtime.things["1"].on is False

    with pytest.raises(ToolFailure, match=f"may not control {PLUG}") as err:
        await async_set_state(
            hass, Ctx(user=hass_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
        )
    assert err.value.details["failed"] == 1


async def test_set_state_unknown_and_unreadable_look_alike(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_user: MockUser
) -> None:
    """An entity the user cannot read is reported like one that does not exist."""
    hass.states.async_set("switch.not_ours", "off")
    hass_user.mock_policy({"entities": {"entity_ids": {LAMP: True}}})
    result = await async_set_state(
        hass,
        Ctx(user=hass_user),
        {
            "updates": [
                {"entity_id": "switch.not_ours", "state": "on"},
                {"entity_id": PLUG, "state": "on"},
                {"entity_id": LAMP, "state": "off"},
            ]
        },
    )
    errors = {r["entity_id"]: r.get("error") for r in result["results"]}
    absent = "exists among the ones you may control; nothing was sent. Find the entity id"
    assert errors == {
        "switch.not_ours": f"No entity switch.not_ours {absent} with get_state "
        '(e.g. name="kitchen lamp").',
        # Closest ids come only from those the caller may read (the plug is not named).
        PLUG: f'No entity {PLUG} {absent} with get_state (e.g. name="kitchen lamp").',
        LAMP: None,
    }
    assert hass.states.get("switch.not_ours").state == "off"


async def test_set_state_no_such_entity_is_not_unavailable(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A mistyped id is said not to exist, with the ids it may have meant; an entity that
    exists but is offline is said to be unavailable."""
    with pytest.raises(ToolFailure) as err:
        await async_set_state(
            hass,
            Ctx(user=hass_admin_user),
            {"updates": [{"entity_id": f"{PLUG}x", "state": "on"}]},
        )
    assert err.value.message.startswith(f"No update was applied: No entity {PLUG}x exists")
    assert err.value.message.endswith(f"Closest: {PLUG}.")
    assert "unavailable" not in err.value.message

    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.coordinator.async_set_updated_data(
        {key: thing for key, thing in runtime.things.items() if key != "1"}
    )
    await hass.async_block_till_done()
    with pytest.raises(ToolFailure) as err:
        await async_set_state(
            hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
        )
    assert "is unavailable (its device is offline" in err.value.message
    assert "No entity" not in err.value.message


async def test_set_state_backend_failure_is_reported(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """The entity's error translation reaches the AI as that update's error."""
    from custom_components.mcp_gateway.mcp.errors import McpConnectionError

    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.fail_writes = McpConnectionError("hub offline")
    with pytest.raises(ToolFailure) as err:
        await async_set_state(
            hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
        )
    assert err.value.message.startswith(f"No update was applied: {PLUG}: switch.turn_on failed")


async def test_set_state_rejects_what_an_entity_cannot_do(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """Read-only domains, wrong states and stray fields are errors naming the entity."""
    with pytest.raises(ToolFailure, match=r"No update was applied\.") as err:
        await async_set_state(
            hass,
            Ctx(user=hass_admin_user),
            {
                "updates": [
                    {"entity_id": THERMO, "value": 3},
                    {"entity_id": PLUG, "state": "open"},
                    {"entity_id": PLUG, "brightness_pct": 20},
                    {"entity_id": LAMP, "state": "off", "brightness_pct": 20},
                    {"entity_id": LAMP},
                ]
            },
        )
    assert err.value.details["updated"] == 0
    assert [r["error"] for r in err.value.details["results"]] == [
        f"{THERMO}: a sensor entity is read-only",
        f"{PLUG}: state of a switch must be one of on, off",
        f"{PLUG}: give state on or off",
        f"{LAMP}: brightness_pct cannot be set while turning off",
        f"{LAMP}: nothing to change: give a state or a value",
    ]


async def test_set_state_service_timeout(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A backend that never answers yields a timeout error, not a hung request."""
    runtime: FakeRuntime = fake_entry.runtime_data
    runtime.write_gate = asyncio.Event()  # never set: the write hangs
    monkeypatch.setattr(set_state_module, "SERVICE_TIMEOUT", 0)
    with pytest.raises(ToolFailure, match=r"switch\.turn_on timed out"):
        await async_set_state(
            hass, Ctx(user=hass_admin_user), {"updates": [{"entity_id": PLUG, "state": "on"}]}
        )
    assert runtime.things["1"].on is False


@pytest.mark.parametrize(
    ("domain", "update", "expected"),
    [
        (
            "light",
            {"state": "on", "brightness_pct": 40, "hs_color": [10, 50]},
            [("light", "turn_on", {"brightness_pct": 40, "hs_color": [10, 50]})],
        ),
        ("light", {"state": "off", "transition": 2}, [("light", "turn_off", {"transition": 2})]),
        ("fan", {"percentage": 30}, [("fan", "set_percentage", {"percentage": 30})]),
        ("fan", {"state": "on", "percentage": 30}, [("fan", "turn_on", {"percentage": 30})]),
        ("fan", {"state": "off"}, [("fan", "turn_off", {})]),
        ("cover", {"state": "open"}, [("cover", "open_cover", {})]),
        ("cover", {"position": 40}, [("cover", "set_cover_position", {"position": 40})]),
        ("valve", {"state": "closed"}, [("valve", "close_valve", {})]),
        ("lock", {"state": "unlocked", "code": "1234"}, [("lock", "unlock", {"code": "1234"})]),
        (
            "climate",
            {"state": "heat", "temperature": 21},
            [("climate", "set_temperature", {"temperature": 21, "hvac_mode": "heat"})],
        ),
        ("climate", {"hvac_mode": "cool"}, [("climate", "set_hvac_mode", {"hvac_mode": "cool"})]),
        ("climate", {"state": "off"}, [("climate", "turn_off", {})]),
        ("climate", {"fan_mode": "low"}, [("climate", "set_fan_mode", {"fan_mode": "low"})]),
        (
            "alarm_control_panel",
            {"state": "armed_away"},
            [("alarm_control_panel", "alarm_arm_away", {})],
        ),
        ("select", {"value": "Away"}, [("select", "select_option", {"option": "Away"})]),
        ("select", {"state": "Away"}, [("select", "select_option", {"option": "Away"})]),
        ("number", {"value": "7.5"}, [("number", "set_value", {"value": 7.5})]),
        ("text", {"value": 12}, [("text", "set_value", {"value": "12"})]),
        (
            "datetime",
            {"value": "2026-01-01T07:00:00+00:00"},
            [("datetime", "set_value", {"datetime": "2026-01-01T07:00:00+00:00"})],
        ),
        ("time", {"value": "06:30"}, [("time", "set_value", {"time": "06:30"})]),
        ("time", {"value": "23:59:30"}, [("time", "set_value", {"time": "23:59:30"})]),
        ("button", {"state": "pressed"}, [("button", "press", {})]),
        ("scene", {"state": "on"}, [("scene", "turn_on", {})]),
    ],
)
def test_vocabulary(domain: str, update: dict[str, Any], expected: list[Any]) -> None:
    """One vocabulary, translated per domain into HA's own services."""
    assert service_calls(domain, {"entity_id": f"{domain}.x", **update}) == expected


@pytest.mark.parametrize(
    ("domain", "update", "message"),
    [
        ("event", {"state": "on"}, "a event entity is read-only"),
        ("vacuum", {"state": "on"}, "domain vacuum cannot be set"),
        ("cover", {"code": "1"}, "give state open/closed/stop or a position"),
        ("fan", {"state": "off", "percentage": 3}, "percentage cannot be set while turning off"),
        ("fan", {"code": "1"}, "give state on/off or a percentage"),
        ("light", {"code": "1"}, "give state on/off or a light setting"),
        ("lock", {"code": "1"}, "give state locked, unlocked or open"),
        ("climate", {"code": "1"}, "give a state/hvac_mode, a temperature or a fan_mode"),
        ("alarm_control_panel", {"code": "1"}, "give a state"),
        ("number", {"code": "1"}, "give a value"),
        ("number", {"value": "seven"}, "value of a number must be numeric"),
        ("time", {"value": "6:30pm"}, "value of a time must be HH:MM or HH:MM:SS"),
        ("time", {"value": "24:00"}, "value of a time must be HH:MM or HH:MM:SS"),
        ("switch", {"state": "on", "position": 3}, "position do not apply to a switch entity"),
    ],
)
def test_vocabulary_errors(domain: str, update: dict[str, Any], message: str) -> None:
    """Each impossible update says what would be accepted."""
    with pytest.raises(ValueError, match=message):
        service_calls(domain, {"entity_id": f"{domain}.x", **update})


async def test_list_backends(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_read_only_user: MockUser
) -> None:
    """Health, protocol, latency and the caller's tool count per exposed entry."""
    broken = await add_fake_entry(hass, "Broken Hub", unique_id="hub-3", setup=False)
    result = await async_list_backends(hass, Ctx(user=hass_read_only_user), {})
    assert result == {
        "backends": [
            {
                # Two entries of one kind: listed as one tool that takes the entry.
                "gateway_tool": "hubitat",
                "entry": "hubitat_test_hub",
                "title": "Test Hub",
                "backend": "hubitat",
                "state": "loaded",
                "tools": 4,  # list_things, hub_weather, slow_tool, get_thing: the read tier
                "available": True,
                "protocol_version": "2025-11-25",
                "latency_ms": 12.3,
            },
            {
                "gateway_tool": "hubitat",
                "entry": "hubitat_broken_hub",
                "title": "Broken Hub",
                "backend": "hubitat",
                "state": broken.state.value,
                "tools": 0,
                "available": False,
                "catalog": "unknown",
            },
        ]
    }


async def test_list_backends_survives_a_broken_health_hook(
    hass: HomeAssistant,
    fake_entry: MockConfigEntry,
    hass_admin_user: MockUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One backend's bug is logged and shown as unavailable, the list still answers."""

    def boom() -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(fake_entry.runtime_data, "health", boom)
    result = await async_list_backends(hass, Ctx(user=hass_admin_user), {})
    assert result["backends"][0]["available"] is False


async def test_readable_entities_helper_respects_user(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_read_only_user: User
) -> None:
    """Read-only users read everything HA lets them read."""
    refs = visibility.readable_entities(hass, hass_read_only_user, selection.every_entity(hass))
    ids = sorted(r.entity_id for r in refs)
    assert ids == [LAMP, THERMO, PLUG]
