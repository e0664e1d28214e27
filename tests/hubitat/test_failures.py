"""The hub's reads failing the way the MCP Rule Server app fails them.

One failing read takes down only what it feeds; the entry stays loaded and every other entity
keeps updating. Each shape comes from the simulator's switches, which follow the app's source.
"""

from __future__ import annotations

from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.alarm_control_panel import AlarmControlPanelState
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er, issue_registry as ir
import pytest

from custom_components.mcp_gateway.backends.hubitat.api import (
    HsmStatus,
    HubInfo,
    HubitatTooLargeError,
    Modes,
)
from custom_components.mcp_gateway.backends.hubitat.const import (
    ISSUE_RULE_STATUS,
    ISSUE_RULES_FAILED,
    SWEEP_INTERVAL,
)
from custom_components.mcp_gateway.backends.hubitat.coordinator import HubitatData
from custom_components.mcp_gateway.backends.hubitat.entities import HSM
from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import Sim, SimFactory, entity_id, first, make_entry, poll, setup_entry
from .test_api import api

SWEEP = SWEEP_INTERVAL.total_seconds()


def _issue(hass: HomeAssistant, key: str, entry_id: str) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, f"{key}_{entry_id}")


def _state(hass: HomeAssistant, entity: str) -> str:
    state = hass.states.get(entity)
    assert state is not None, entity
    return state.state


async def test_rules_failing_at_setup_leave_the_devices(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> None:
    """Rule Machine not answering (toolListRmRules success: false): set-up succeeds with every
    device; the rules come once Rule Machine answers, and the repair issue goes."""
    sim.hub.rm_fails = True
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    plug = entity_id(hass, sim, f"{first(sim, 'switch').id}_switch", "switch")
    assert _state(hass, plug) in ("on", "off")
    registry = er.async_get(hass)
    rule_uid = f"{sim.hub.hub_id}_rule_101"
    assert registry.async_get_entity_id("switch", DOMAIN, rule_uid) is None
    issue = _issue(hass, ISSUE_RULES_FAILED, entry.entry_id)
    assert issue is not None
    assert issue.translation_placeholders == {"name": entry.title}

    sim.hub.rm_fails = False
    await poll(hass, freezer, SWEEP)
    rule = registry.async_get_entity_id("switch", DOMAIN, rule_uid)
    assert rule is not None
    assert _state(hass, rule) == "on"
    assert _issue(hass, ISSUE_RULES_FAILED, entry.entry_id) is None


async def test_rules_failing_on_a_running_entry(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> None:
    """The rule entities go unavailable while the rules fail; devices, mode and HSM go on."""
    entry = make_entry(sim)
    runtime = await setup_entry(hass, entry)
    rule = entity_id(hass, sim, "rule_101", "switch")
    run = entity_id(hass, sim, "rule_101_run", "button")
    mode = entity_id(hass, sim, "hub_mode", "select")
    assert _state(hass, rule) == "on"

    sim.hub.rm_fails = True
    await poll(hass, freezer, SWEEP)
    assert entry.state is ConfigEntryState.LOADED
    assert _state(hass, rule) == STATE_UNAVAILABLE
    assert _state(hass, run) == STATE_UNAVAILABLE
    assert _issue(hass, ISSUE_RULES_FAILED, entry.entry_id) is not None
    assert runtime.diagnostics()["failed_reads"] == ["rules"]
    plug = first(sim, "switch")
    plug_entity = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    target = "off" if plug.value("switch") == "on" else "on"
    sim.hub.set_attribute(plug.id, "switch", target)
    sim.hub.set_mode("Night")
    await poll(hass, freezer)
    assert _state(hass, plug_entity) == target
    assert _state(hass, mode) == "Night"
    assert _state(hass, rule) == STATE_UNAVAILABLE

    sim.hub.rm_fails = False
    await poll(hass, freezer, SWEEP)
    assert _state(hass, rule) == "on"
    assert _state(hass, run) != STATE_UNAVAILABLE
    assert _issue(hass, ISSUE_RULES_FAILED, entry.entry_id) is None


async def test_rules_failing_after_a_restart_keep_their_entities(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> None:
    """Rules the entry showed before stay (unavailable, same entity) when they fail at set-up,
    instead of being removed with what the user made of them."""
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    rule = entity_id(hass, sim, "rule_104", "switch")
    assert _state(hass, rule) == "off"  # "Vacation Lights" is paused
    assert await hass.config_entries.async_unload(entry.entry_id)
    sim.hub.rm_fails = True
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert entity_id(hass, sim, "rule_104", "switch") == rule
    assert _state(hass, rule) == STATE_UNAVAILABLE
    sim.hub.rm_fails = False
    await poll(hass, freezer, SWEEP)
    assert _state(hass, rule) == "off"


async def test_unknown_rule_status_is_not_running(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim_factory: SimFactory
) -> None:
    """Hub Security on without the hub login: rules come with status "unknown" and no paused
    (_rmAnnotateRuleStatus). A paused rule must not read as running."""
    sim = await sim_factory(hub_security_blocks=True)
    entry = make_entry(sim)
    await setup_entry(hass, entry)
    paused = entity_id(hass, sim, "rule_104", "switch")
    running = entity_id(hass, sim, "rule_101", "switch")
    assert _state(hass, paused) == STATE_UNKNOWN
    assert _state(hass, running) == STATE_UNKNOWN
    issue = _issue(hass, ISSUE_RULE_STATUS, entry.entry_id)
    assert issue is not None
    assert issue.translation_key == ISSUE_RULE_STATUS

    sim.hub.hub_security_blocks = False
    await poll(hass, freezer, SWEEP)
    assert _state(hass, paused) == "off"
    assert _state(hass, running) == "on"
    assert _issue(hass, ISSUE_RULE_STATUS, entry.entry_id) is None


async def test_one_rule_of_unknown_status(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> None:
    """A rule whose app-tree node lacks its data is "unknown" alone (_rmAnnotateRuleStatus)."""
    sim.hub.rule_nodes_incomplete = {104}
    await setup_entry(hass, make_entry(sim))
    assert _state(hass, entity_id(hass, sim, "rule_104", "switch")) == STATE_UNKNOWN
    assert _state(hass, entity_id(hass, sim, "rule_101", "switch")) == "on"


async def test_one_devices_events_failing(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> None:
    """hub_list_device_events answering {success: false} for one device (toolGetDeviceHistory,
    device branch): only that device's event entities go unavailable; the press it missed
    fires once its events read again."""
    broken = first(sim, "button")
    other = sim.hub.pair_device("button", "Hall Remote")
    await setup_entry(hass, make_entry(sim))
    broken_button = entity_id(hass, sim, f"{broken.id}_button_1", "event")
    other_button = entity_id(hass, sim, f"{other.id}_button_1", "event")
    plug = first(sim, "switch")
    plug_entity = entity_id(hass, sim, f"{plug.id}_switch", "switch")
    target = "off" if plug.value("switch") == "on" else "on"

    sim.hub.history_fails = {broken.id}
    sim.hub.set_attribute(broken.id, "pushed", 1)
    sim.hub.set_attribute(other.id, "pushed", 1)
    sim.hub.set_attribute(plug.id, "switch", target)
    await poll(hass, freezer)
    assert _state(hass, broken_button) == STATE_UNAVAILABLE
    assert hass.states.get(other_button).attributes["event_type"] == "pushed"
    assert _state(hass, plug_entity) == target

    sim.hub.history_fails = set()
    await poll(hass, freezer)
    state = hass.states.get(broken_button)
    assert state.state not in (STATE_UNAVAILABLE, STATE_UNKNOWN)
    assert state.attributes["event_type"] == "pushed"


async def test_a_cancelled_alert_is_not_triggered(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, sim: Sim
) -> None:
    """hub_get_hsm_status.alert is the hub's last alert: "cancel" after a disarm."""
    await setup_entry(hass, make_entry(sim))
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    sim.hub.set_hsm_status("armedAway")
    sim.hub.trigger_hsm_alert("intrusion")
    await poll(hass, freezer)
    assert _state(hass, panel) == "triggered"
    sim.hub.set_hsm_status("disarmed")
    await poll(hass, freezer)
    assert sim.hub.hsm_alert == "cancel"
    assert _state(hass, panel) == "disarmed"
    assert hass.states.get(panel).attributes["alert"] == "cancel"


def _hsm(status: str | None, alert: str | None) -> AlarmControlPanelState | None:
    data = HubitatData(
        hub=HubInfo(None, None, None, None, None, None, {}),
        devices={},
        rules={},
        modes=Modes(current=None, names=()),
        hsm=HsmStatus(status=status, alert=alert),
        hsm_supported=True,
    )
    return HSM.state_fn(data)


@pytest.mark.parametrize(
    ("status", "alert", "expected"),
    [
        ("disarmed", "cancel", AlarmControlPanelState.DISARMED),
        ("armedHome", "cancel", AlarmControlPanelState.ARMED_HOME),
        ("armedAway", "cancelRuleAlerts", AlarmControlPanelState.ARMED_AWAY),
        ("armedNight", "arming", AlarmControlPanelState.ARMED_NIGHT),
        # A stale intrusion (no cancel seen) on a disarmed hub is over.
        ("disarmed", "intrusion", AlarmControlPanelState.DISARMED),
        ("armedAway", "intrusion", AlarmControlPanelState.TRIGGERED),
        ("armedNight", "intrusion-night", AlarmControlPanelState.TRIGGERED),
        ("armedAway", "intrusion-delay", AlarmControlPanelState.PENDING),
        # Smoke and water alarms sound whatever the arm state.
        ("disarmed", "smoke", AlarmControlPanelState.TRIGGERED),
        ("disarmed", "water", AlarmControlPanelState.TRIGGERED),
    ],
)
def test_hsm_alerts(status: str, alert: str, expected: AlarmControlPanelState) -> None:
    """Only an alert that sounds makes the panel triggered."""
    assert _hsm(status, alert) is expected


async def test_too_large_with_is_error_asks_for_smaller_pages() -> None:
    """response_too_large comes with isError when the owner publishes output schemas
    (hubitat-mcp-server.groovy _renderToolResult): pages shrink as for the plain notice."""
    notice: dict[str, Any] = {"response_too_large": True, "truncated": True}
    hub, client = api((notice, True), (notice, True), {"devices": [{"id": 1}], "hasMore": False})
    page = await hub.list_devices()
    assert [device.id for device in page.devices] == ["1"]
    assert [call[1]["args"]["limit"] for call in client.calls] == [50, 25, 12]
    hub, _ = api((notice, True))
    with pytest.raises(HubitatTooLargeError):
        await hub.get_hsm()
