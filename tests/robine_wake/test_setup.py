"""Setup, unload, dynamic alarms, unavailability, auth, rate limits, timeouts, bad replies."""

from __future__ import annotations

from datetime import timedelta
import logging
from typing import Any
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er, issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.robine_wake import model
from custom_components.mcp_gateway.backends.robine_wake.const import password_issue_id
from custom_components.mcp_gateway.backends.robine_wake.runtime import RobineWakeRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.mcp.errors import McpProtocolError, McpTimeoutError

from .conftest import DEVICE_ID, PASSWORD, Sim, SimFactory, advance, make_entry, setup_entry

SESSION = "sensor.bedroom_clock_session"
WEEKDAYS = "switch.bedroom_clock_weekdays"
HEALTH = "binary_sensor.bedroom_clock_health"


def _ours(hass: HomeAssistant, entry_id: str) -> set[str]:
    return {e.entity_id for e in er.async_entries_for_config_entry(er.async_get(hass), entry_id)}


def _reauth_flows(hass: HomeAssistant) -> list[dict[str, Any]]:
    return [
        flow
        for flow in hass.config_entries.flow.async_progress()
        if flow["context"]["source"] == SOURCE_REAUTH
    ]


async def test_setup_and_unload(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Setup makes the clock's and alarms' entities; unload removes them."""
    assert entry.state is ConfigEntryState.LOADED
    runtime = entry.runtime_data
    assert isinstance(runtime, RobineWakeRuntime)
    # Three alarms → three entities each (switch, next ring, time), plus the clock's thirteen.
    assert len(_ours(hass, entry.entry_id)) == 13 + 3 * 3
    assert hass.states.get(WEEKDAYS).state == STATE_ON
    # The device only speaks initialize: no server/discover probe spends its rate budget.
    assert sim.stats.methods["server/discover"] == 0
    assert sim.stats.methods["initialize"] == 1
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.NOT_LOADED
    assert hass.states.get(WEEKDAYS).state == STATE_UNAVAILABLE


async def test_clock_offline_at_setup_retries(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory
) -> None:
    """An offline clock at setup retries."""
    sim.faults.offline = True
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.SETUP_RETRY


async def test_polls_read_alarm_details_only_when_they_change(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Polls read alarm details only when a revision changes."""
    sim.stats.reset()
    for _ in range(6):
        await advance(hass, frozen, sim, 5)
    assert sim.stats.tools == {"get_state": 6}
    sim.device.edit_alarm(sim.alarm_id("Weekend"), volume=40)
    await advance(hass, frozen, sim, 5)
    assert sim.stats.tools == {"get_state": 7, "list_alarms": 1}
    attributes = hass.states.get("switch.bedroom_clock_weekend").attributes
    assert attributes["volume"] == 40
    assert attributes["revision"] == 2


async def test_alarms_appear_and_disappear_without_reload(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Alarms appear and disappear without a reload."""
    nap = sim.device.add_alarm(label="Nap", time="14:00", days=["sat"])
    await advance(hass, frozen, sim, 5)
    assert hass.states.get("switch.bedroom_clock_nap").state == STATE_ON
    assert hass.states.get("sensor.bedroom_clock_nap_next_ring").state == (
        "2026-12-05T13:00:00+00:00"
    )
    sim.device.remove_alarm(nap["id"])
    await advance(hass, frozen, sim, 5)
    assert "switch.bedroom_clock_nap" not in _ours(hass, entry.entry_id)
    assert hass.states.get("switch.bedroom_clock_nap") is None
    assert entry.state is ConfigEntryState.LOADED


async def test_unavailable_and_back_logs_once_each(
    hass: HomeAssistant,
    sim: Sim,
    frozen: FrozenDateTimeFactory,
    caplog: pytest.LogCaptureFixture,
    entry: MockConfigEntry,
) -> None:
    """Going unavailable and back is logged once each way."""
    caplog.set_level(logging.INFO)
    sim.faults.offline = True
    for _ in range(4):
        await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == STATE_UNAVAILABLE
    assert hass.states.get(WEEKDAYS).state == STATE_UNAVAILABLE
    failures = [r for r in caplog.records if "Error fetching" in r.getMessage()]
    assert len(failures) == 1
    sim.faults.offline = False
    for _ in range(3):
        await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "idle"
    recoveries = [r for r in caplog.records if "recovered" in r.getMessage()]
    assert len(recoveries) == 1


async def test_clock_starts_demanding_a_password(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """A clock that starts asking for a password starts reauth with a repair issue."""
    sim.device.password = PASSWORD
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == STATE_UNAVAILABLE
    flows = _reauth_flows(hass)
    assert len(flows) == 1
    assert flows[0]["context"]["entry_id"] == entry.entry_id
    issue = ir.async_get(hass).async_get_issue(DOMAIN, password_issue_id(entry))
    assert issue is not None
    assert issue.translation_key == "robine_wake_password_required"
    # The user enters the password: the entry reloads and the repair goes away.
    result = await hass.config_entries.flow.async_configure(
        flows[0]["flow_id"], {"password": PASSWORD}
    )
    await hass.async_block_till_done()
    assert result["reason"] == "reauth_successful"
    assert entry.data["password"] == PASSWORD
    assert entry.state is ConfigEntryState.LOADED
    assert ir.async_get(hass).async_get_issue(DOMAIN, password_issue_id(entry)) is None
    assert hass.states.get(SESSION).state == "idle"


async def test_wrong_password_at_setup_asks_reauth_without_repair(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """A wrong password at setup starts reauth without a repair issue."""
    sim = await sim_factory(password=PASSWORD)
    entry = make_entry(sim, password="wrong")
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert len(_reauth_flows(hass)) == 1
    # The entry has a password: the reauth notice says all there is to say.
    assert ir.async_get(hass).async_get_issue(DOMAIN, password_issue_id(entry)) is None


async def test_password_entry_works(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """An entry with the right password loads."""
    sim = await sim_factory(password=PASSWORD)
    entry = make_entry(sim, password=PASSWORD)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    assert hass.states.get(WEEKDAYS).state == STATE_ON


async def test_rate_limit_backs_off_and_recovers(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """A rate-limited poll backs off to the Retry-After and recovers."""
    # Setup costs 4 requests (initialize, initialized, get_state, list_alarms).
    sim = await sim_factory(rate_limit=6)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    coordinator = entry.runtime_data.coordinator
    await advance(hass, frozen, sim, 5)
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "idle"
    await advance(hass, frozen, sim, 5)  # the 7th request in the minute: 429
    assert hass.states.get(SESSION).state == STATE_UNAVAILABLE
    # The device's window frees up 45 s from now (60 s after the first request).
    assert coordinator.update_interval == timedelta(seconds=45)
    assert coordinator.rate_limited_until is not None
    refused = sim.stats.http_requests
    for _ in range(8):  # 40 s: still inside Retry-After, so not a single request
        await advance(hass, frozen, sim, 5)
    assert sim.stats.http_requests == refused
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "idle"
    assert coordinator.update_interval == timedelta(seconds=5)
    assert coordinator.rate_limited_until is None


async def test_rate_limit_without_retry_after_waits_a_minute(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Without Retry-After the back-off is a minute, never faster than the interval."""
    coordinator = entry.runtime_data.coordinator
    assert coordinator.note_rate_limited(None) == 60
    assert coordinator.note_rate_limited(1) == 5  # never faster than the poll interval


async def test_malformed_mcp_makes_entities_unavailable(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Malformed MCP makes entities unavailable until the clock answers properly."""
    coordinator = entry.runtime_data.coordinator
    sim.faults.malformed = True
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == STATE_UNAVAILABLE
    assert isinstance(coordinator.last_exception.__cause__, McpProtocolError)
    sim.faults.malformed = False
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(SESSION).state == "idle"
    # (Valid MCP in another shape is no failure: test_tolerance.py.)


async def test_timeout_is_a_failed_poll(hass: HomeAssistant, sim: Sim) -> None:
    """A clock that never answers: the client's timeout (real, short) fails the poll."""
    with patch.object(model, "REQUEST_TIMEOUT", 0.2):
        entry = make_entry(sim)
        await setup_entry(hass, entry)
    coordinator = entry.runtime_data.coordinator
    sim.faults.hang = True
    await coordinator.async_refresh()
    assert not coordinator.last_update_success
    assert isinstance(coordinator.last_exception.__cause__, McpTimeoutError)
    assert hass.states.get(HEALTH).state == STATE_UNAVAILABLE
    sim.faults.hang = False
    await coordinator.async_refresh()
    assert coordinator.last_update_success
    assert hass.states.get(HEALTH).state == STATE_OFF


async def test_alarm_edited_between_state_and_details(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """get_state and list_alarms are two requests: an edit between them is not mixed up."""
    api = entry.runtime_data.api
    alarm_id = sim.alarm_id("Weekend")
    original = api.list_alarms

    async def edited_meanwhile() -> Any:
        sim.device.edit_alarm(alarm_id, volume=41)
        return await original()

    sim.device.edit_alarm(alarm_id, volume=40)
    with patch.object(api, "list_alarms", edited_meanwhile):
        await advance(hass, frozen, sim, 5)
    # The poll saw revision 2 in get_state but revision 3 in list_alarms: no details shown
    # rather than details of another revision.
    attributes = hass.states.get("switch.bedroom_clock_weekend").attributes
    assert attributes["revision"] == 2
    assert "volume" not in attributes
    await advance(hass, frozen, sim, 5)
    attributes = hass.states.get("switch.bedroom_clock_weekend").attributes
    assert (attributes["revision"], attributes["volume"]) == (3, 41)


async def test_address_now_leads_to_another_clock(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """The address now reaching another clock makes entities unavailable, naming it."""
    sim = await sim_factory(device_id=DEVICE_ID)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    sim.device.device_id = "rw-neighbour"
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(WEEKDAYS).state == STATE_UNAVAILABLE
    assert "another clock (rw-neighbour)" in str(entry.runtime_data.coordinator.last_exception)


async def test_address_identified_clock_that_starts_naming_itself(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """An entry added by address has no id to compare: a device id appearing later is no move."""
    sim.device.device_id = "rw-after-an-update"
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(WEEKDAYS).state == "on"
    assert entry.runtime_data.coordinator.last_update_success


async def test_old_poll_interval_option_is_migrated(hass: HomeAssistant, sim: Sim) -> None:
    """A 1.1 entry's `poll_interval` option becomes CONF_SCAN_INTERVAL and still applies."""
    entry = make_entry(sim, options={"poll_interval": 42, "gateway_exposed": False})
    assert entry.minor_version == 1
    await setup_entry(hass, entry)
    assert entry.minor_version == 2
    assert dict(entry.options) == {"scan_interval": 42, "gateway_exposed": False}
    assert entry.runtime_data.coordinator.update_interval == timedelta(seconds=42)


async def test_entry_from_a_newer_version_is_refused(hass: HomeAssistant, sim: Sim) -> None:
    """An entry written by a newer major version is not guessed at: migration fails."""
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    hass.config_entries.async_update_entry(entry, version=2)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.MIGRATION_ERROR


async def test_an_address_title_becomes_readable(
    hass: HomeAssistant, sim: Sim, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """A nameless clock titled after its address by an earlier version ("Robine Wake
    (127.0.0.1)") is retitled "Robine Wake" (numbered when taken): its device and gateway tool
    read so, its unique ids and the entity ids it already has stay."""
    from homeassistant.helpers import device_registry as dr

    from custom_components.mcp_gateway.gateway.catalog.store import GatewayCatalog

    taken = make_entry(await sim_factory())
    taken.add_to_hass(hass)
    hass.config_entries.async_update_entry(taken, title="Robine Wake")
    entry = make_entry(sim)
    entry.add_to_hass(hass)
    hass.config_entries.async_update_entry(entry, title="Robine Wake (127.0.0.1)")
    registry = er.async_get(hass)
    kept = registry.async_get_or_create(
        "switch",
        DOMAIN,
        f"{entry.unique_id}_alarm_{sim.alarm_id('Weekdays')}_enabled",
        config_entry=entry,
        suggested_object_id="robine_wake_127_0_0_1_weekdays",
    )
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert entry.title == "Robine Wake 2"
    assert entry.unique_id == make_entry(sim).unique_id
    devices = dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    assert [device.name for device in devices] == ["Robine Wake 2"]
    ids = _ours(hass, entry.entry_id)
    assert kept.entity_id in ids
    assert hass.states.get(kept.entity_id) is not None
    assert not [eid for eid in ids if "127" in eid and eid != kept.entity_id]
    names = {b.gateway_name for b in GatewayCatalog.get(hass).exposed_backends()}
    assert "robine_wake_2" in names


async def test_a_title_the_user_chose_stays(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Only the address form is retitled: "Bedroom clock" stays as it is."""
    assert entry.title == "Bedroom clock"
