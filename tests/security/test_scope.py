"""What a caller may not see or reach stays out of reach, however it is asked for.

Over real HTTP (and HA's LLM API): one entry per call, addresses resolved the way each backend
resolves them before permission and exposure are decided, reads that declare what they read,
listings filtered to what the caller may read and what is exposed, and refusals that name only
what the caller may read. Every kind of signed-in caller, hidden entities included.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.const import Platform
from homeassistant.helpers import entity_registry as er, llm
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.backends.homecast.const import KIND as HOMECAST_KIND
from custom_components.mcp_gateway.backends.homecast.entities import accessory_device_key
from custom_components.mcp_gateway.core.const import CONF_GATEWAY_EXPOSED, DOMAIN
from custom_components.mcp_gateway.core.settings import (
    CONF_EXPOSED_ONLY,
    CONF_RATE_LIMIT,
    MAX_RATE_LIMIT,
)
from custom_components.mcp_gateway.framework.base import BackendRuntime
from custom_components.mcp_gateway.gateway.llm_api import LLM_API_ID
from custom_components.mcp_gateway.permissions.policy import device_entity_ids
from tests.gateway_tools.test_llm_api import llm_context
from tests.homecast import sim as homecast_helpers
from tests.hubitat import sim as hubitat_sim
from tests.hubitat.sim import first_device
from tests.results import result_data
from tests.simulation import LoopbackServers

from .conftest import HOMECAST_GATEWAY, HUBITAT, ROBINE, SIGNED_IN, SecurityHome, error_code


async def _exposure_on(home: SecurityHome) -> None:
    """The gateway's default: only entities exposed to assistants are reachable."""
    hass = home.hass
    assert await async_setup_component(hass, "homeassistant", {})
    hass.config_entries.async_update_entry(
        home.settings_entry(), options={CONF_RATE_LIMIT: MAX_RATE_LIMIT, CONF_EXPOSED_ONLY: True}
    )
    await hass.async_block_till_done()


def _hide(home: SecurityHome, entity_ids: list[str]) -> None:
    assert entity_ids
    for entity_id in entity_ids:
        async_expose_entity(home.hass, "conversation", entity_id, False)


def _runtime(entry: Any) -> BackendRuntime:
    runtime: BackendRuntime = entry.runtime_data
    return runtime


def _hub_device(home: SecurityHome, kind: str) -> Any:
    return first_device(home.hub, kind)


def _device_entities(home: SecurityHome, entry: Any, key: str) -> list[str]:
    """The entities of one of an entry's devices, found through its publisher."""
    return device_entity_ids(home.hass, _runtime(entry), key)


def _alarm_entities(home: SecurityHome, alarm_id: str) -> list[str]:
    """The switch and sensor of one of the clock's alarms."""
    publisher = _runtime(home.robine_entry).publisher
    registry = er.async_get(home.hass)
    found = []
    for platform, what in ((Platform.SWITCH, "enabled"), (Platform.SENSOR, "next")):
        spec = publisher.spec(platform, f"alarm_{alarm_id}_{what}")
        assert spec is not None
        entity_id = registry.async_get_entity_id(platform, DOMAIN, publisher.unique_id(spec))
        assert entity_id is not None
        found.append(entity_id)
    return found


async def _data(home: SecurityHome, kind: str, gateway: str, tool: str, args: Any) -> Any:
    result = await home.call(kind, gateway, {"tool": tool, "args": args})
    assert not result["isError"], (kind, tool, result)
    return result_data(result)


# --- one entry per call ----------------------------------------------------------------------


async def test_a_command_never_lands_on_another_hub(
    home: SecurityHome, loopback_servers: LoopbackServers
) -> None:
    """Two hubs, one withdrawn from the gateway: naming the withdrawn one, or one that does
    not exist, through the kind's name or the other entry's own name, is refused; the exposed
    hub's device with the same id is untouched."""
    other = await hubitat_sim.start(loopback_servers, hub_id="hub-0002")
    entry = hubitat_sim.make_entry(other)
    entry.add_to_hass(home.hass)
    home.hass.config_entries.async_update_entry(
        entry, title="Garage Hub", options={CONF_GATEWAY_EXPOSED: False}
    )
    assert await home.hass.config_entries.async_setup(entry.entry_id)
    await home.hass.async_block_till_done()
    dimmer = _hub_device(home, "dimmer")
    twin = other.hub.devices[dimmer.id]
    before, twin_before = dimmer.value("level"), twin.value("level")
    target = 7 if before != 7 else 8
    command = {
        "tool": "hub_call_device_command",
        "args": {"deviceId": str(dimmer.id), "command": "setLevel", "parameters": [target]},
    }
    for name, entry_name in (
        ("hubitat", "hubitat_garage_hub"),
        ("hubitat", "Garage Hub"),
        ("hubitat", entry.entry_id),
        ("hubitat", "made-up hub"),
        ("hubitat", None),  # the kind has two entries: which one is never guessed
        (HUBITAT, "hubitat_garage_hub"),
        (HUBITAT, "made-up hub"),
    ):
        arguments = {**command, **({} if entry_name is None else {"entry": entry_name})}
        for kind in ("admin", "user"):
            result = await home.call(kind, name, arguments)
            assert error_code(result) == "invalid", (name, entry_name, kind, result)
    assert dimmer.value("level") == before
    assert twin.value("level") == twin_before
    # The exposed hub, named as its listing names it, is reached.
    result = await home.call("admin", "hubitat", {**command, "entry": HUBITAT})
    assert not result["isError"], result
    assert dimmer.value("level") == target
    assert twin.value("level") == twin_before


# --- addresses resolved before deciding ------------------------------------------------------


@pytest.mark.parametrize("kind", SIGNED_IN)
async def test_a_hidden_device_under_another_spelling(home: SecurityHome, kind: str) -> None:
    """A hidden lock and sensor stay out of reach under every spelling of their id, and an
    id no device of ours has is refused while exposure is on (administrators included)."""
    await _exposure_on(home)
    lock = _hub_device(home, "lock")
    sensor = _hub_device(home, "climate_sensor")
    for device in (lock, sensor):
        _hide(home, _device_entities(home, home.hubitat_entry, str(device.id)))
    locked = lock.value("lock")
    for spelling in (f"0{lock.id}", f" {lock.id}", f"+{lock.id}", f"{lock.id} ", str(lock.id)):
        result = await home.call(
            kind,
            HUBITAT,
            {
                "tool": "hub_call_device_command",
                "args": {"deviceId": spelling, "command": "unlock"},
            },
        )
        assert error_code(result) == "forbidden", (kind, spelling, result)
    assert lock.value("lock") == locked
    for spelling in (f" {sensor.id}", f"0{sensor.id}", f"+{sensor.id}", f"{sensor.id} "):
        result = await home.call(
            kind, HUBITAT, {"tool": "hub_get_device", "args": {"deviceId": spelling}}
        )
        assert error_code(result) == "forbidden", (kind, spelling, result)
    result = await home.call(
        kind, HUBITAT, {"tool": "hub_get_device", "args": {"deviceId": "98765"}}
    )
    assert error_code(result) == "forbidden", (kind, result)


@pytest.mark.parametrize("kind", ["admin", "user"])
async def test_a_hidden_accessory_by_display_name(home: SecurityHome, kind: str) -> None:
    """Naming a hidden plug's home, room and accessory by display name reaches the plug, so
    it is refused as the plug is."""
    await _exposure_on(home)
    hc_sim = home.sims[HOMECAST_KIND]
    plug = homecast_helpers.device_of(hc_sim, "outlet")
    followed = home.homecast.homes[0]
    room = followed.room_of(plug)
    data = _runtime(home.homecast_entry).coordinator.data
    ours = next(h for h in data.homes.values() if h.key == followed.slug)
    acc = next(a for a in ours.accessories.values() if a.key == plug.slug)
    _hide(home, _device_entities(home, home.homecast_entry, accessory_device_key(ours, acc)))
    before = plug.values["on"]
    for update in (
        {"home": followed.name, "room": room.name, "accessory": plug.name},
        {"home": followed.slug.upper(), "room": room.slug, "accessory": f" {plug.name.lower()}"},
        {"home": followed.slug, "room": room.slug, "accessory": plug.slug},
    ):
        result = await home.call(
            kind,
            HOMECAST_GATEWAY,
            {"tool": "set_state", "args": {"updates": [{**update, "on": not before}]}},
        )
        assert error_code(result) == "forbidden", (kind, update, result)
    assert plug.values["on"] is before


async def test_a_hidden_device_through_the_llm_api(home: SecurityHome) -> None:
    """HA's own assistants reach the gateway through its LLM API: the same resolution."""
    await _exposure_on(home)
    lock = _hub_device(home, "lock")
    _hide(home, _device_entities(home, home.hubitat_entry, str(lock.id)))
    locked = lock.value("lock")
    context = llm_context(home.users["admin"].id)
    instance = await llm.async_get_api(home.hass, LLM_API_ID, context)
    tool = next(tool for tool in instance.tools if tool.name == HUBITAT)
    answer = await tool.async_call(
        home.hass,
        llm.ToolInput(
            HUBITAT,
            {
                "tool": "hub_call_device_command",
                "args": f'{{"deviceId": "0{lock.id}", "command": "unlock"}}',
            },
        ),
        context,
    )
    data = getattr(answer, "data", answer)
    assert data["error"]["code"] == "forbidden", data
    assert lock.value("lock") == locked


# --- reads declare what they read ------------------------------------------------------------


async def test_reads_without_device_keys_check_what_they_read(home: SecurityHome) -> None:
    """The policy user may use one Homecast light only: the hub's HSM and modes, the clock's
    reads are refused; a room, the hub's health and rooms, and Homecast's automations come
    back without anything it may not read."""
    for tool, args in (("hub_get_hsm_status", {}), ("hub_list_modes", {})):
        result = await home.call("policy", HUBITAT, {"tool": tool, "args": args})
        assert error_code(result) == "forbidden", (tool, result)
        assert error_code(await home.call("user", HUBITAT, {"tool": tool, "args": args})) is None
    for tool, args in (
        ("list_alarms", {}),
        ("get_state", {}),
        ("preview_alarm", {"label": "x", "time": "07:00"}),
    ):
        result = await home.call("policy", ROBINE, {"tool": tool, "args": args})
        assert error_code(result) == "forbidden", (tool, result)
    room = next(r for r in home.hub.rooms.values() if r.device_ids)
    got = await _data(home, "policy", HUBITAT, "hub_get_room", {"room": room.name})
    assert got["devices"] == []
    assert got["_gateway"]["withheld"] >= 1
    rooms = await _data(home, "policy", HUBITAT, "hub_list_rooms", {})
    assert all(r["deviceIds"] == [] for r in rooms["rooms"])
    health = await _data(home, "policy", HUBITAT, "hub_get_device_health", {"hours": 1})
    assert health["staleDevices"] == []
    for tool in ("get_automations", "get_hc_automations"):
        automations = await _data(home, "policy", HOMECAST_GATEWAY, tool, {})
        assert all(v == [] for k, v in automations.items() if not k.startswith("_")), tool
        admin = await _data(home, "admin", HOMECAST_GATEWAY, tool, {})
        assert any(v for k, v in admin.items() if not k.startswith("_")), tool


# --- listings filtered -----------------------------------------------------------------------


def _ids(items: list[Any]) -> set[str]:
    return {str(item["id"]) if isinstance(item, dict) else str(item) for item in items}


@pytest.mark.parametrize("kind", SIGNED_IN)
async def test_listings_leave_out_what_is_hidden(home: SecurityHome, kind: str) -> None:
    """With a hub device, a Homecast accessory and a clock alarm hidden from assistants,
    every listing leaves them out (and what the caller may not read), says how much it
    withheld, and keeps the rest."""
    everything = await _data(home, "admin", HUBITAT, "hub_list_devices", {"limit": 500})
    rooms_before = await _data(home, "admin", HUBITAT, "hub_list_rooms", {})
    await _exposure_on(home)
    sensor = _hub_device(home, "climate_sensor")
    _hide(home, _device_entities(home, home.hubitat_entry, str(sensor.id)))
    hc_sim = home.sims[HOMECAST_KIND]
    plug = homecast_helpers.device_of(hc_sim, "outlet")
    data = _runtime(home.homecast_entry).coordinator.data
    followed = home.homecast.homes[0]
    ours = next(h for h in data.homes.values() if h.key == followed.slug)
    acc = next(a for a in ours.accessories.values() if a.key == plug.slug)
    _hide(home, _device_entities(home, home.homecast_entry, accessory_device_key(ours, acc)))
    alarm = sorted(home.robine.alarms.values(), key=lambda a: a.id)[0]
    _hide(home, _alarm_entities(home, alarm.id))
    # What the caller may read at all: the policy user no Hubitat device.
    readable = set() if kind == "policy" else _ids(everything["devices"])
    listed = await _data(home, kind, HUBITAT, "hub_list_devices", {"limit": 500})
    assert str(sensor.id) not in _ids(listed["devices"])
    assert _ids(listed["devices"]) <= readable
    assert listed["_gateway"]["withheld"] >= 1
    ids = await _data(home, kind, HUBITAT, "hub_list_devices", {"format": "ids"})
    assert str(sensor.id) not in _ids(ids["deviceIds"])
    context = await _data(home, kind, HUBITAT, "hub_list_devices", {"format": "context"})
    assert f"({sensor.id}, " not in context.get("summary", "")
    rooms = await _data(home, kind, HUBITAT, "hub_list_rooms", {})
    for room in rooms["rooms"]:
        assert str(sensor.id) not in _ids(room["deviceIds"])
        assert room["deviceCount"] == len(room["deviceIds"])
    if kind != "policy":
        # The rest stays: devices with an entity exposed (HA's defaults hide some kinds).
        every_room = {i for r in rooms_before["rooms"] for i in _ids(r["deviceIds"])}
        still = {i for r in rooms["rooms"] for i in _ids(r["deviceIds"])}
        assert still < every_room & readable
        assert str(_hub_device(home, "switch").id) in still
    hub_room = home.hub.room_of(sensor)
    if hub_room is not None:
        got = await _data(home, kind, HUBITAT, "hub_get_room", {"room": hub_room.name})
        assert str(sensor.id) not in _ids(got["devices"])
    state = await _data(home, kind, HOMECAST_GATEWAY, "get_state", {})
    text = str(state)
    assert plug.slug not in text
    if kind != "policy":
        assert homecast_helpers.device_of(hc_sim, "light").slug in text
    if kind != "policy":
        alarms = await _data(home, kind, ROBINE, "list_alarms", {})
        shown = {a["id"] for a in alarms["alarms"]}
        assert alarm.id not in shown
        assert shown == {a.id for a in home.robine.alarms.values()} - {alarm.id}
        assert alarms["_gateway"]["withheld"] >= 1
        clock = await _data(home, kind, ROBINE, "get_state", {})
        assert alarm.id not in {a["id"] for a in clock["alarms"]}


# --- refusals name only what the caller may read ---------------------------------------------


async def test_refusals_name_only_what_the_caller_may_read(home: SecurityHome) -> None:
    """The policy user switching the kitchen light, or a hub switch, learns that it may not,
    but not the entity ids it may not read."""
    hc_sim = home.sims[HOMECAST_KIND]
    kitchen = homecast_helpers.device_of(hc_sim, "light", nth=1)
    followed = home.homecast.homes[0]
    data = _runtime(home.homecast_entry).coordinator.data
    ours = next(h for h in data.homes.values() if h.key == followed.slug)
    acc = next(a for a in ours.accessories.values() if a.key == kitchen.slug)
    hidden = _device_entities(home, home.homecast_entry, accessory_device_key(ours, acc))
    update = {
        "home": followed.slug,
        "room": followed.room_of(kitchen).slug,
        "accessory": kitchen.slug,
        "on": True,
    }
    result = await home.call(
        "policy", HOMECAST_GATEWAY, {"tool": "set_state", "args": {"updates": [update]}}
    )
    assert error_code(result) == "forbidden"
    message = result_data(result)["error"]["message"]
    assert not any(entity_id in message for entity_id in hidden), message
    assert "you may not read" in message
    switch = _hub_device(home, "switch")
    result = await home.call(
        "policy",
        HUBITAT,
        {"tool": "hub_call_device_command", "args": {"deviceId": switch.id, "command": "on"}},
    )
    assert error_code(result) == "forbidden"
    message = result_data(result)["error"]["message"]
    for entity_id in _device_entities(home, home.hubitat_entry, str(switch.id)):
        assert entity_id not in message
    # A user who may read what it may not control is told which.
    result = await home.call(
        "read_only",
        HUBITAT,
        {"tool": "hub_get_hsm_status", "args": {}},
    )
    assert error_code(result) is None


@pytest.mark.parametrize("kind", SIGNED_IN)
async def test_rules_by_id_and_in_lists(home: SecurityHome, kind: str) -> None:
    """A Rule Machine rule is a device (its switch and button): reading one by any spelling of
    its id needs the right to read it, and exposure; the rule list leaves hidden ones out."""
    rules = sorted(home.hub.rules.values(), key=lambda r: r.id)
    assert len(rules) >= 2
    hidden, shown = rules[0], rules[1]
    before = await _data(home, kind, HUBITAT, "hub_list_rules", {})
    if kind == "policy":
        assert before["rules"] == []
        assert before["_gateway"]["withheld"] == len(rules)
        result = await home.call(
            kind, HUBITAT, {"tool": "hub_get_rule_health", "args": {"ruleId": str(shown.id)}}
        )
        assert error_code(result) == "forbidden", result
        return
    assert {str(r["id"]) for r in before["rules"]} == {str(r.id) for r in rules}
    await _exposure_on(home)
    _hide(home, _device_entities(home, home.hubitat_entry, f"rule_{hidden.id}"))
    after = await _data(home, kind, HUBITAT, "hub_list_rules", {})
    assert {str(r["id"]) for r in after["rules"]} == {str(r.id) for r in rules[1:]}
    for spelling in (str(hidden.id), f"0{hidden.id}", f" {hidden.id}", f"+{hidden.id}"):
        for tool in ("hub_get_rule_health", "hub_list_rule_local_variables"):
            result = await home.call(kind, HUBITAT, {"tool": tool, "args": {"ruleId": spelling}})
            assert error_code(result) == "forbidden", (tool, spelling, result)
    health = await _data(home, kind, HUBITAT, "hub_get_rule_health", {"ruleId": str(shown.id)})
    assert [str(r["id"]) for r in health["rules"]] == [str(shown.id)]


async def _llm_call(home: SecurityHome, kind: str, name: str, arguments: dict[str, Any]) -> Any:
    """One tool call through HA's LLM API ("MCP Gateway") as `kind`: the answer's data."""
    context = llm_context(home.users[kind].id)
    instance = await llm.async_get_api(home.hass, LLM_API_ID, context)
    tool = next(tool for tool in instance.tools if tool.name == name)
    answer = await tool.async_call(home.hass, llm.ToolInput(name, arguments), context)
    return getattr(answer, "data", answer)


@pytest.mark.parametrize("kind", SIGNED_IN)
async def test_listings_through_the_llm_api(home: SecurityHome, kind: str) -> None:
    """HA's own assistants get the same filtered listings and the same refusals."""
    await _exposure_on(home)
    sensor = _hub_device(home, "climate_sensor")
    _hide(home, _device_entities(home, home.hubitat_entry, str(sensor.id)))
    listed = await _llm_call(
        home, kind, HUBITAT, {"tool": "hub_list_devices", "args": '{"format": "ids"}'}
    )
    ids = _ids(listed["deviceIds"])
    assert str(sensor.id) not in ids
    assert listed["_gateway"]["withheld"] >= 1
    assert (ids == set()) is (kind == "policy")
    refused = await _llm_call(
        home,
        kind,
        HUBITAT,
        {"tool": "hub_get_device", "args": f'{{"deviceId": "+{sensor.id}"}}'},
    )
    assert refused["error"]["code"] == "forbidden", refused
