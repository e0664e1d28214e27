"""Setup, polling, availability, dynamic devices, coalesced writes and gateway hooks."""

from __future__ import annotations

from datetime import datetime, timedelta
import logging

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    device_registry as dr,
    entity_registry as er,
    issue_registry as ir,
)
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.diagnostics import async_get_config_entry_diagnostics
from custom_components.mcp_gateway.framework.base import ToolTier
from tests.registry import area_name, in_room

from .conftest import (
    TOKEN,
    Sim,
    SimFactory,
    device_of,
    entity_id,
    home_tail,
    setup_entry,
    token_entry,
)


async def _loaded(hass: HomeAssistant, sim: Sim, **data: object) -> MockConfigEntry:
    entry = token_entry(sim, **data)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    return entry


async def _poll(hass: HomeAssistant, freezer: FrozenDateTimeFactory, seconds: int = 30) -> None:
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


# --- setup and unload -----------------------------------------------------------------------


async def test_setup_and_unload(hass: HomeAssistant, sim: Sim) -> None:
    """Loaded with one device per accessory in its room's area; unloading ends the session."""
    entry = await _loaded(hass, sim)
    devices = dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    lamp = device_of(sim, "light")
    # Two homes: an accessory's device carries its home's name.
    room = sim.state.homes[0].room_of(lamp).name
    ours = next(
        d for d in devices if d.name == f"{sim.state.homes[0].name} {in_room(room, lamp.name)}"
    )
    home_device = next(d for d in devices if d.name == sim.state.homes[0].name)
    assert ours.via_device_id == home_device.id
    assert area_name(hass, ours) == room
    assert sim.state.sessions
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert entry.state is ConfigEntryState.NOT_LOADED
    assert not sim.state.sessions  # DELETE ended the MCP session


async def test_only_chosen_homes(hass: HomeAssistant, sim: Sim) -> None:
    """Homes the user did not pick make no entities."""
    first = sim.home_uuids()[0]
    entry = await _loaded(hass, sim, homes=[first])
    keys = {
        e.unique_id.removeprefix(f"{entry.unique_id}_")
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    }
    assert keys
    other = home_tail(sim, 1)
    assert all(not key.startswith((f"{other}_", f"home_{other}")) for key in keys)


async def test_setup_retries_when_offline(hass: HomeAssistant, sim: Sim) -> None:
    """Setup against an offline server retries."""
    entry = token_entry(sim)
    await sim.server.close()
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.SETUP_RETRY


# --- availability ---------------------------------------------------------------------------


async def test_unavailable_then_recovered_logs_once(
    hass: HomeAssistant,
    sim: Sim,
    freezer: FrozenDateTimeFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failing backend makes entities unavailable and logs once; recovery logs once too."""
    entry = await _loaded(hass, sim)
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    caplog.set_level(logging.INFO)
    sim.faults.update({"error_rate": 1.0})
    await _poll(hass, freezer)
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    await _poll(hass, freezer)
    ours = "custom_components.mcp_gateway.backends.homecast.coordinator"
    errors = [
        r for r in caplog.records if r.name == ours and r.getMessage().startswith("Error fetching")
    ]
    assert len(errors) == 1
    sim.faults.reset()
    await _poll(hass, freezer)
    assert hass.states.get(lamp).state != STATE_UNAVAILABLE
    recovered = [
        r for r in caplog.records if r.name == ours and r.getMessage().endswith("data recovered")
    ]
    assert len(recovered) == 1
    # Ours, not the simulator's access log: the cloud's socket takes the token in its URL, and
    # that server's request log is the server's own.
    assert TOKEN not in "\n".join(
        r.getMessage() for r in caplog.records if r.name != "aiohttp.access"
    )


@pytest.mark.parametrize("fault", ["malformed", "offline"])
async def test_bad_replies_make_entities_unavailable(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory, fault: str
) -> None:
    """Replies that cannot be parsed make entities unavailable, the entry stays loaded."""
    entry = await _loaded(hass, sim)
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    sim.faults.update({fault: True})
    await _poll(hass, freezer)
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    assert entry.state is ConfigEntryState.LOADED


async def test_timeout_makes_entities_unavailable(hass: HomeAssistant, sim: Sim) -> None:
    """A server that stops answering: the client's timeout (made short here) fires.

    No frozen clock here: the timeout is a real loop timer.
    """
    entry = await _loaded(hass, sim)
    entry.runtime_data.client._timeout = 0.05  # the entry's client, made impatient
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    sim.faults.update({"hang": True})
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    assert not entry.runtime_data.coordinator.last_update_success
    sim.faults.reset()


async def test_revoked_token_starts_reauth(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A 401 on a poll: HA starts the reauth flow."""
    entry = await _loaded(hass, sim)
    sim.state.revoke_token(TOKEN)
    await _poll(hass, freezer)
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [f["context"]["source"] for f in flows] == ["reauth"]
    assert flows[0]["context"]["entry_id"] == entry.entry_id


async def test_revoked_token_during_action(hass: HomeAssistant, sim: Sim) -> None:
    """A 401 on a write: a clear error and a reauth flow."""
    entry = await _loaded(hass, sim)
    lamp = entity_id(hass, entry, sim, device_of(sim, "light"), "light")
    sim.state.revoke_token(TOKEN)
    with pytest.raises(HomeAssistantError):
        await hass.services.async_call("light", "turn_on", {ATTR_ENTITY_ID: lamp}, blocking=True)
    await hass.async_block_till_done()
    flows = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
    assert [f["context"]["source"] for f in flows] == ["reauth"]


async def test_session_expires_mid_operation(hass: HomeAssistant, sim: Sim) -> None:
    """The server forgets the MCP session: the next write re-initializes and goes through."""
    entry = await _loaded(hass, sim)
    acc = device_of(sim, "switch")
    target = entity_id(hass, entry, sim, acc, "switch")
    initializes = sim.stats.methods["initialize"]
    assert sim.state.expire_sessions() == 1
    await hass.services.async_call("switch", "turn_off", {ATTR_ENTITY_ID: target}, blocking=True)
    assert sim.state.values(sim.state.homes[0].slug, acc.slug)["on"] is False
    assert sim.stats.methods["initialize"] == initializes + 1


async def test_plain_json_server(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """The community server's form: no sessions, plain JSON answers."""
    sim = await sim_factory(sse=False, sessions=False)
    entry = await _loaded(hass, sim)
    acc = device_of(sim, "switch")
    target = entity_id(hass, entry, sim, acc, "switch")
    await hass.services.async_call("switch", "turn_off", {ATTR_ENTITY_ID: target}, blocking=True)
    assert sim.state.values(sim.state.homes[0].slug, acc.slug)["on"] is False


# --- dynamic devices, renames ---------------------------------------------------------------


async def test_devices_come_and_go(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """An accessory paired or removed in the Home app appears/disappears after a poll."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    key = sim.state.pair_accessory(home, "Kitchen", "Kitchen Kettle", "switch")
    await _poll(hass, freezer)
    kettle = sim.state.accessory(home, key)
    target = entity_id(hass, entry, sim, kettle, "switch")
    assert hass.states.get(target).state in ("on", "off")
    devices = dr.async_get(hass)
    kettle_name = f"{sim.state.homes[0].name} {in_room('Kitchen', 'Kitchen Kettle')}"
    assert any(
        d.name == kettle_name for d in dr.async_entries_for_config_entry(devices, entry.entry_id)
    )

    sim.state.remove_accessory(home, key)
    await _poll(hass, freezer)
    assert er.async_get(hass).async_get(target) is None
    assert hass.states.get(target) is None
    assert not any(
        d.name == kettle_name for d in dr.async_entries_for_config_entry(devices, entry.entry_id)
    )


async def test_rename_keeps_entities(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A rename changes the slug, not the UUID tail: same entity, writes use the new slug."""
    entry = await _loaded(hass, sim)
    home = sim.state.homes[0].slug
    acc = device_of(sim, "switch")
    target = entity_id(hass, entry, sim, acc, "switch")
    old_key = acc.slug
    new_key = sim.state.rename_accessory(home, old_key, "Espresso Machine")
    assert new_key != old_key
    assert new_key[-4:] == old_key[-4:]
    await _poll(hass, freezer)
    assert entity_id(hass, entry, sim, acc, "switch") == target
    await hass.services.async_call("switch", "turn_off", {ATTR_ENTITY_ID: target}, blocking=True)
    assert sim.state.values(home, new_key)["on"] is False


async def test_new_home_is_not_followed(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """A home shared later is not added behind the user's back (reconfigure adds it)."""
    entry = await _loaded(hass, sim)
    before = len(er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id))
    sim.state.add_home("Granny Flat")
    await _poll(hass, freezer)
    after = len(er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id))
    assert after == before


# --- coalesced writes and per-home failures -------------------------------------------------


async def test_simultaneous_actions_coalesce(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """Ten lights in one HA action: one set_state call with ten updates."""
    sim = await sim_factory(homes=1, accessories_per_home=80)
    entry = await _loaded(hass, sim)
    lights = [a for a in sim.state.homes[0].devices() if a.kind == "light"][:10]
    assert len(lights) == 10
    targets = [entity_id(hass, entry, sim, acc, "light") for acc in lights]
    sim.stats.reset()
    await hass.services.async_call(
        "light", "turn_on", {ATTR_ENTITY_ID: targets, "brightness": 255}, blocking=True
    )
    assert sim.stats.tools["set_state"] == 1
    assert all(acc.values["on"] is True and acc.values["brightness"] == 100 for acc in lights)
    assert entry.runtime_data.api.batcher.calls == 1


async def test_per_home_failure_is_an_error_for_that_home_only(
    hass: HomeAssistant, sim: Sim
) -> None:
    """View-only in one home: its write fails with the relay's message, the other goes through."""
    homes = sim.state.homes
    sim.state.add_token("hc_mixed", homes={homes[0].slug: "control", homes[1].slug: "view"})
    entry = await _loaded(hass, sim, access_token="hc_mixed")
    a = device_of(sim, "switch", home=0)
    b = device_of(sim, "switch", home=1)
    target_a = entity_id(hass, entry, sim, a, "switch")
    target_b = entity_id(hass, entry, sim, b, "switch", home=1)
    a.values["on"] = b.values["on"] = False
    sim.stats.reset()
    with pytest.raises(HomeAssistantError, match="view-only"):
        await hass.services.async_call(
            "switch", "turn_on", {ATTR_ENTITY_ID: [target_a, target_b]}, blocking=True
        )
    assert sim.stats.tools["set_state"] == 1
    assert a.values["on"] is True
    assert b.values["on"] is False


async def test_unreachable_accessory_write(hass: HomeAssistant, sim: Sim) -> None:
    """An accessory that stopped answering: the error names it, nothing else fails.

    The relay answers once its per-write bound ran out (10 s; shortened here).
    """
    entry = await _loaded(hass, sim)
    sim.state.relay_write_timeout = 0.05
    home = sim.state.homes[0].slug
    acc, other = device_of(sim, "switch"), device_of(sim, "outlet")
    target = entity_id(hass, entry, sim, acc, "switch")
    sim.state.set_reachable(home, acc.slug, False)
    with pytest.raises(HomeAssistantError, match="did not confirm the write"):
        await hass.services.async_call("switch", "turn_on", {ATTR_ENTITY_ID: target}, blocking=True)
    other_id = entity_id(hass, entry, sim, other, "outlet")
    await hass.services.async_call("switch", "turn_off", {ATTR_ENTITY_ID: other_id}, blocking=True)
    assert sim.state.values(home, other.slug)["on"] is False


# --- gateway hooks, diagnostics -------------------------------------------------------------


async def test_gateway_hooks(hass: HomeAssistant, sim: Sim) -> None:
    """The gateway hooks list (cached), classify and call Homecast's tools."""
    entry = await _loaded(hass, sim)
    runtime = entry.runtime_data
    tools = await runtime.async_list_tools()
    names = {tool["name"] for tool in tools}
    assert {"get_state", "set_state", "delete_scene"} <= names
    assert await runtime.async_list_tools() is tools  # cached
    by_name = {tool["name"]: tool for tool in tools}
    assert runtime.tool_class(by_name["get_state"]).tier is ToolTier.READ
    assert runtime.tool_class(by_name["set_state"]).tier is ToolTier.CONTROL
    assert runtime.tool_class(by_name["run_scene"]).tier is ToolTier.CONTROL
    assert runtime.tool_class(by_name["create_hc_automation"]).tier is ToolTier.ADMIN
    assert runtime.tool_class(by_name["delete_virtual_accessory"]).destructive
    assert runtime.tool_class({"name": "new_tool"}).tier is ToolTier.ADMIN
    assert (
        runtime.tool_class({"name": "peek", "annotations": {"readOnlyHint": True}}).tier
        is ToolTier.READ
    )
    assert runtime.tool_class(
        {"name": "wipe", "annotations": {"destructiveHint": True}}
    ).destructive

    home = sim.state.homes[0]
    acc = device_of(sim, "switch")
    room = home.room_of(acc)
    args = {"updates": [{"home": home.slug, "room": room.slug, "accessory": acc.slug, "on": False}]}
    tail = home_tail(sim)
    assert runtime.device_keys_in_call("set_state", args) == [f"{tail}_{acc.slug[-4:]}"]
    # Homecast also finds the home, room and accessory by display name (and the accessory by
    # UUID): the accessory a name reaches is the one checked.
    by_name = {"home": home.name, "room": room.name.upper(), "accessory": f" {acc.name} "}
    assert runtime.device_keys_in_call("set_state", {"updates": [by_name]}) == [
        f"{tail}_{acc.slug[-4:]}"
    ]
    # Addresses that are no accessory of a followed home come back as themselves, which no
    # entity stands for (the gateway refuses them to non-admins and under exposure): another
    # home, the right accessory in another room, a malformed update.
    other_room = next(r for r in home.rooms if r is not room)
    misplaced = {"home": home.slug, "room": other_room.slug, "accessory": acc.slug}
    assert runtime.device_keys_in_call(
        "set_state", {"updates": [{"home": "nowhere"}, misplaced, 3]}
    ) == [
        "nowhere//",
        f"{home.slug}/{other_room.slug}/{acc.slug}",
        "a malformed update",
    ]
    # A scene's home by slug or by name: the home device.
    assert runtime.device_keys_in_call("run_scene", {"home": home.slug, "name": "x"}) == [
        f"home_{tail}"
    ]
    assert runtime.device_keys_in_call("run_scene", {"home": home.name, "name": "x"})[0] == (
        f"home_{tail}"
    )
    assert runtime.device_keys_in_call("run_scene", {"home": "nowhere", "name": "x"}) == [
        "home 'nowhere'"
    ]
    # get_history addresses every accessory it may match (id, or a substring of a key or
    # name, in any home `home` matches: local-rest.ts handleGetHistory), and no more.
    one = runtime.device_keys_in_call("get_history", {"accessory": acc.slug, "home": home.slug})
    assert one == [f"{tail}_{acc.slug[-4:]}"]
    loose = runtime.device_keys_in_call("get_history", {"accessory": acc.name})
    assert f"{tail}_{acc.slug[-4:]}" in loose
    twins = [
        a
        for h in runtime.coordinator.data.homes.values()
        for a in h.accessories.values()
        if acc.name.lower() in a.name.lower() or acc.name.lower() in a.key
    ]
    assert len(loose) == len(twins)
    assert runtime.device_keys_in_call("get_history", {"accessory": "nothing like it"}) == [
        "accessory 'nothing like it'"
    ]
    # query_history: with `accessories`, its answer is filtered (a listing); without, a whole
    # home (the first without `home`) is addressed.
    assert runtime.device_keys_in_call("query_history", {"accessories": [acc.slug]}) == []
    assert runtime.lists_devices("query_history")
    whole = runtime.device_keys_in_call("query_history", {"home": home.slug})
    followed = next(h for h in runtime.coordinator.data.homes.values() if h.key == home.slug)
    assert len(whole) == len(followed.accessories)
    # get_state addresses nothing: its answer is filtered per caller.
    assert runtime.device_keys_in_call("get_state", {"filter_by_home": home.slug}) == []
    assert runtime.lists_devices("get_state")
    assert runtime.device_keys_in_call("create_scene", {"home": home.slug}) == []

    result = await runtime.async_call_tool("set_state", args)
    assert not result.is_error
    assert acc.values["on"] is False
    result = await runtime.async_call_tool("get_state", {"filter_by_home": home.slug})
    assert home.slug in result.data


async def test_tool_catalog_reloads_when_rooms_change(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory
) -> None:
    """tools/list descriptions embed room names: a new room invalidates the cached list."""
    entry = await _loaded(hass, sim)
    runtime = entry.runtime_data
    first = await runtime.async_list_tools()
    sim.state.pair_accessory(sim.state.homes[0].slug, "Sunroom", "Sunroom Lamp", "light")
    await _poll(hass, freezer)
    second = await runtime.async_list_tools()
    assert second is not first
    assert any("sunroom" in str(tool).lower() for tool in second)


async def test_diagnostics_have_no_secrets(hass: HomeAssistant, sim: Sim) -> None:
    """Diagnostics hold the homes and health but no token."""
    entry = await _loaded(hass, sim)
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert TOKEN not in str(diagnostics)
    assert diagnostics["health"]["available"] is True
    backend = diagnostics["backend"]
    assert len(backend["homes"]) == 2
    assert backend["homes"][0]["accessories"] > 20
    assert backend["auth_type"] == "token"
    assert TOKEN not in repr(entry.runtime_data.client._auth)


async def test_missing_home_raises_a_repair_issue(
    hass: HomeAssistant, sim: Sim, issue_registry: ir.IssueRegistry
) -> None:
    """A followed home the token no longer sees: entities unavailable, a repair issue, then back."""
    entry = await _loaded(hass, sim)
    second = sim.state.homes[1]
    lamp = entity_id(hass, entry, sim, device_of(sim, "light", home=1), "light", home=1)
    issue_id = f"homecast_home_missing_{entry.entry_id}"
    sim.state.tokens[TOKEN].homes = {sim.state.homes[0].uuid: "control"}
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(lamp).state == STATE_UNAVAILABLE
    issue = issue_registry.async_get_issue(DOMAIN, issue_id)
    assert issue is not None
    assert issue.translation_placeholders == {"title": entry.title, "count": "1"}
    sim.state.tokens[TOKEN].homes = None
    await entry.runtime_data.coordinator.async_refresh()
    assert hass.states.get(lamp).state != STATE_UNAVAILABLE
    assert issue_registry.async_get_issue(DOMAIN, issue_id) is None
    assert second.slug in {h.key for h in entry.runtime_data.coordinator.data.homes.values()}


async def test_history_times_in_home_assistants_zone(hass: HomeAssistant, sim: Sim) -> None:
    """Homecast answers in UTC; through the runtime the model reads Home Assistant's zone,
    with the offset, the same instants."""
    await hass.config.async_set_time_zone("Europe/Berlin")
    entry = await _loaded(hass, sim)
    runtime = entry.runtime_data
    raw = await runtime.client.call_tool("query_history", {}, kind="read")
    shown = await runtime.async_call_tool("query_history", {})
    assert not shown.is_error, shown.text
    for key in ("start", "end"):
        utc, local = raw.data[key], shown.data[key]
        assert utc.endswith(("+00:00", "Z")), utc
        assert local.endswith(("+01:00", "+02:00")), local
        # Each call's window ends at the server's own "now": the two reads may straddle a
        # second, never more; a zone mistake would be an hour off.
        gap = abs(datetime.fromisoformat(local) - datetime.fromisoformat(utc))
        assert gap < timedelta(seconds=5), (utc, local)
