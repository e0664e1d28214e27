"""Entity snapshots per platform, DST-correct ring times, gateway hooks and diagnostics."""

from __future__ import annotations

from datetime import UTC, datetime
import json

from freezegun.api import FrozenDateTimeFactory
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from syrupy.assertion import SnapshotAssertion

from custom_components.mcp_gateway.backends.robine_wake.runtime import RobineWakeRuntime
from custom_components.mcp_gateway.diagnostics import async_get_config_entry_diagnostics
from custom_components.mcp_gateway.framework.base import ToolClass, ToolTier
from tests.simulation import snapshot_one_platform

from .conftest import DEVICE_ID, PASSWORD, Sim, SimFactory, advance, make_entry, setup_entry


@pytest.mark.usefixtures("entity_registry_enabled_by_default")  # snapshots show them all
@pytest.mark.parametrize(
    "platform",
    [
        Platform.BINARY_SENSOR,
        Platform.BUTTON,
        Platform.EVENT,
        Platform.SENSOR,
        Platform.SWITCH,
        Platform.TIME,
    ],
)
async def test_platform_snapshot(  # noqa: PLR0917 - pytest fixtures
    hass: HomeAssistant,
    sim_factory: SimFactory,
    frozen: FrozenDateTimeFactory,
    entity_registry: er.EntityRegistry,
    snapshot: SnapshotAssertion,
    platform: Platform,
) -> None:
    """Every entity of the clock matches its snapshot."""
    # A clock with a device id: unique ids that do not depend on the test server's port.
    sim = await sim_factory(device_id=DEVICE_ID)
    await snapshot_one_platform(
        hass,
        entity_registry,
        snapshot,
        make_entry(sim),
        runtime_class=RobineWakeRuntime,
        platform=platform,
    )


async def test_noisy_diagnostics_are_disabled_by_default(
    hass: HomeAssistant,
    sim: Sim,
    frozen: FrozenDateTimeFactory,
    entity_registry: er.EntityRegistry,
    entry: MockConfigEntry,
) -> None:
    """Uptime and time zone are disabled by default."""
    disabled = {
        e.entity_id
        for e in er.async_entries_for_config_entry(entity_registry, entry.entry_id)
        if e.disabled_by is not None
    }
    assert disabled == {"sensor.bedroom_clock_uptime", "sensor.bedroom_clock_time_zone"}


async def test_health_follows_the_clock(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """The health sensor follows the clock's own health."""
    assert hass.states.get("binary_sensor.bedroom_clock_health").state == "off"
    sim.device.set_settings(time_synced=False, max_volume=60)
    await advance(hass, frozen, sim, 5)
    health = hass.states.get("binary_sensor.bedroom_clock_health")
    assert health.state == "on"
    assert health.attributes["status"] == "degraded"
    assert hass.states.get("binary_sensor.bedroom_clock_time_synchronized").state == "off"
    assert hass.states.get("sensor.bedroom_clock_maximum_volume").state == "60"


async def test_next_alarm_of_all(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """The next alarm is the earliest of all enabled alarms."""
    state = hass.states.get("sensor.bedroom_clock_next_alarm")
    assert state.state == "2026-11-30T05:45:00+00:00"  # Weekdays, 06:45 Berlin
    assert state.attributes["alarm_label"] == "Weekdays"
    for alarm in list(sim.device.alarms.values()):
        sim.device.edit_alarm(alarm.id, enabled=False)
    await advance(hass, frozen, sim, 5)
    state = hass.states.get("sensor.bedroom_clock_next_alarm")
    assert state.state == "unknown"
    assert "alarm_label" not in state.attributes


# Sunday 28 March 2027: Berlin springs from 02:00 to 03:00 (CET +01:00 → CEST +02:00).
# Sunday 31 October 2027: back from 03:00 to 02:00.
SATURDAY_BEFORE_SPRING = datetime(2027, 3, 27, 12, 0, tzinfo=UTC)


async def test_occurrences_across_daylight_saving(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """Occurrences across daylight saving keep the clock's local time."""
    freezer.move_to(SATURDAY_BEFORE_SPRING)
    sim = await sim_factory(now=SATURDAY_BEFORE_SPRING)
    gap = sim.device.add_alarm(label="Gap", time="02:30", days=["sun"])
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    # Weekend 08:30: on Sunday that is already summer time, 06:30 UTC (not 07:30).
    assert hass.states.get("sensor.bedroom_clock_weekend_next_ring").state == (
        "2027-03-28T06:30:00+00:00"
    )
    # 02:30 does not exist that night: the clock rings after the gap, 03:30 CEST.
    assert hass.states.get("sensor.bedroom_clock_gap_next_ring").state == (
        "2027-03-28T01:30:00+00:00"
    )
    gap_attributes = hass.states.get("switch.bedroom_clock_gap").attributes
    assert gap_attributes["next_occurrences"][:2] == [
        "2027-03-28T03:30:00+02:00",
        "2027-04-04T02:30:00+02:00",
    ]
    # Weekdays 06:45 is 05:45 UTC on Friday and 04:45 UTC from Monday on.
    weekdays = hass.states.get("switch.bedroom_clock_weekdays").attributes["next_occurrences"]
    assert weekdays[0] == "2027-03-29T06:45:00+02:00"
    # The alarm rings at the summer-time instant, and HA notices it.
    await advance(hass, frozen := freezer, sim, (13 * 60 + 30) * 60 - 1)
    assert hass.states.get("sensor.bedroom_clock_session").state == "idle"
    await advance(hass, frozen, sim, 5)
    session = hass.states.get("sensor.bedroom_clock_session")
    assert session.state == "ringing"
    assert session.attributes["alarm_id"] == gap["id"]


async def test_autumn_repeated_hour_rings_once(
    hass: HomeAssistant, sim_factory: SimFactory, freezer: FrozenDateTimeFactory
) -> None:
    """The repeated autumn hour rings once."""
    now = datetime(2027, 10, 30, 12, 0, tzinfo=UTC)
    freezer.move_to(now)
    sim = await sim_factory(now=now, starter_alarms=False)
    sim.device.add_alarm(label="Twice", time="02:30", days=["sun"])
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    # 02:30 happens twice that night; the clock rings at the first, still summer time.
    assert hass.states.get("sensor.bedroom_clock_twice_next_ring").state == (
        "2027-10-31T00:30:00+00:00"
    )


# --- gateway hooks ---------------------------------------------------------------------------


async def test_gateway_hooks(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """The gateway hooks list the clock's tools once and classify them."""
    runtime: RobineWakeRuntime = entry.runtime_data
    tools = await runtime.async_list_tools()
    assert len(tools) == 10
    await runtime.async_list_tools()
    assert sim.stats.methods["tools/list"] == 1  # listChanged is false: read once
    classes = {tool["name"]: runtime.tool_class(tool) for tool in tools}
    assert classes == {
        "get_state": ToolClass(ToolTier.READ),
        "list_alarms": ToolClass(ToolTier.READ),
        "list_sounds": ToolClass(ToolTier.READ),
        "preview_alarm": ToolClass(ToolTier.READ),
        "create_alarm": ToolClass(ToolTier.CONTROL),
        "update_alarm": ToolClass(ToolTier.CONTROL),
        "delete_alarm": ToolClass(ToolTier.CONTROL, destructive=True),
        "trigger_alarm": ToolClass(ToolTier.CONTROL),
        "snooze_session": ToolClass(ToolTier.CONTROL),
        "dismiss_session": ToolClass(ToolTier.CONTROL),
    }
    # Tools the table does not know: admin unless the device marks them read-only.
    assert runtime.tool_class(
        {"name": "factory_reset", "annotations": {"destructiveHint": True}}
    ) == ToolClass(ToolTier.ADMIN, destructive=True)
    assert runtime.tool_class({"name": "firmware_info", "annotations": {"readOnlyHint": True}}) == (
        ToolClass(ToolTier.READ)
    )
    assert runtime.tool_class({"name": "x"}) == ToolClass(ToolTier.ADMIN)
    # Reads read the clock; only the sound list is no device data.
    assert runtime.device_keys_in_call("get_state", {}) == ["clock"]
    assert runtime.device_keys_in_call("list_sounds", {}) == []
    assert runtime.device_keys_in_call("trigger_alarm", {"id": "alm_1"}) == ["clock"]
    # A call naming an alarm names its switch too.
    assert runtime.entity_keys_in_call("trigger_alarm", {"id": "alm_1"}) == [
        (Platform.SWITCH, "alarm_alm_1_enabled")
    ]
    # An update that moves the ring time names the alarm's time entity as well.
    moved = {"id": "alm_1", "revision": 1, "time": "06:30"}
    assert runtime.entity_keys_in_call("update_alarm", moved) == [
        (Platform.SWITCH, "alarm_alm_1_enabled"),
        (Platform.TIME, "alarm_alm_1_time"),
    ]
    assert runtime.entity_keys_in_call("update_alarm", {"id": "alm_1", "volume": 5}) == [
        (Platform.SWITCH, "alarm_alm_1_enabled")
    ]


async def test_gateway_calls_reach_the_clock(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Gateway calls reach the clock, with its refusals as error results."""
    runtime: RobineWakeRuntime = entry.runtime_data
    state = await runtime.async_call_tool("get_state", {})
    assert state.data["settings"]["timezone"] == "Europe/Berlin"
    # A retired presence field: the device's own refusal is passed on, nothing stored.
    retired = await runtime.async_call_tool(
        "create_alarm", {"label": "Old", "time": "06:00", "wake_on_presence": True}
    )
    assert retired.is_error
    assert retired.data["error"]["code"] == "retired_field"
    assert len(sim.device.alarms) == 3
    stale = await runtime.async_call_tool(
        "update_alarm", {"id": sim.alarm_id("Weekend"), "revision": 7, "volume": 10}
    )
    assert stale.data["error"] == {
        "code": "revision_conflict",
        "message": stale.text,
        "details": {"id": sim.alarm_id("Weekend"), "current_revision": 1},
    }
    created = await runtime.async_call_tool("create_alarm", {"label": "Nap", "time": "13:00"})
    assert not created.is_error
    await hass.async_block_till_done(wait_background_tasks=True)
    # The write made HA read the clock: the new alarm's entities exist without waiting a poll.
    assert hass.states.get("switch.bedroom_clock_nap").state == "on"


async def test_health_and_diagnostics(
    hass: HomeAssistant, sim_factory: SimFactory, frozen: FrozenDateTimeFactory
) -> None:
    """Health and diagnostics report the clock's protocol, latency and status."""
    sim = await sim_factory(password=PASSWORD, device_id=DEVICE_ID)
    entry = make_entry(sim, password=PASSWORD)
    await setup_entry(hass, entry)
    runtime: RobineWakeRuntime = entry.runtime_data
    health = runtime.health()
    assert health.available
    assert health.protocol_version == "2025-06-18"
    assert health.latency_ms is not None
    assert health.details["device_status"] == "ok"
    assert health.details["session"] == "idle"
    assert health.details["alarms"] == 3
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert diagnostics["entry"]["data"]["password"] == "**REDACTED**"
    assert diagnostics["backend"]["has_password"] is True
    assert len(diagnostics["backend"]["alarms"]) == 3
    assert diagnostics["backend"]["device"]["id"] == sim.device.device_id
    assert PASSWORD not in json.dumps(diagnostics, default=str)
    sim.faults.offline = True
    await advance(hass, frozen, sim, 5)
    assert not runtime.health().available


async def test_next_ring_names_its_alarm(
    hass: HomeAssistant, sim: Sim, frozen: FrozenDateTimeFactory, entry: MockConfigEntry
) -> None:
    """Each "next ring" sensor says which alarm it belongs to, and follows a relabel."""
    weekdays = next(a for a in sim.device.alarms.values() if a.label == "Weekdays")
    state = hass.states.get("sensor.bedroom_clock_weekdays_next_ring")
    assert state.attributes["friendly_name"] == "Bedroom clock Weekdays next ring"
    sim.device.edit_alarm(weekdays.id, label="Work")
    await advance(hass, frozen, sim, 5)
    state = hass.states.get("sensor.bedroom_clock_weekdays_next_ring")
    assert state.attributes["friendly_name"] == "Bedroom clock Work next ring"
