"""A hub whose reads fail as the MCP Rule Server app fails them, in any combination.

Hypothesis bends failures (which read fails, with which of the app's shapes) together with
values (switches, mode, HSM status and alert, which rules are paused). After each poll the entry
is loaded and every entity shows the hub's truth: the value, or unavailable / unknown where the
read that feeds it failed, never a stale or invented value.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import HomeAssistant
from hypothesis import HealthCheck, given, settings, strategies as st

from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_SCAN_INTERVAL,
    MAX_SCAN_INTERVAL,
)

from .conftest import Sim, entity_id, make_entry, setup_entry

HSM_STATUSES = ("disarmed", "armedAway", "armedHome", "armedNight")
# Every hsmAlert value a hub sends, plus none yet.
HSM_ALERTS = (
    None,
    "intrusion",
    "intrusion-home",
    "intrusion-night",
    "intrusion-delay",
    "smoke",
    "water",
    "arming",
    "cancel",
    "cancelRuleAlerts",
)
# Reads that can throw where nothing in the app catches it (handleToolsCallLegacy: isError,
# "Tool error: …").
READS = (
    "hub_list_devices",
    "hub_list_modes",
    "hub_get_hsm_status",
    "hub_get_info",
    "hub_list_rules",
)
HA_ARMED = {
    "disarmed": "disarmed",
    "armedAway": "armed_away",
    "armedHome": "armed_home",
    "armedNight": "armed_night",
}


@dataclass(frozen=True)
class Hub:
    """One moment of the hub: its values and which of its reads fail, and how."""

    switches: tuple[bool, ...]
    mode: str
    hsm_status: str
    hsm_alert: str | None
    paused: tuple[bool, ...]
    # toolListRmRules: RMUtils calls failed (success: false).
    rule_machine_fails: bool
    # Hub Security without login: rule status "unknown", location events success: false.
    hub_security_blocks: bool
    # toolGetDeviceHistory, device branch: eventsSince failed (success: false).
    history_fails: tuple[bool, ...]
    # Reads that throw.
    throws: frozenset[str]


def _hsm_expected(status: str, alert: str | None) -> str:
    """What the panel shows: HSM sounding for smoke and water at any time and for an intrusion
    while armed; an intrusion's entry delay is pending; anything else is the arm state."""
    armed = status != "disarmed"
    if alert in ("smoke", "water") or (
        armed and alert in ("intrusion", "intrusion-home", "intrusion-night")
    ):
        return "triggered"
    if armed and alert == "intrusion-delay":
        return "pending"
    return HA_ARMED[status]


def _hubs(switches: int, rules: int, buttons: int, modes: list[str]) -> st.SearchStrategy[Hub]:
    return st.builds(
        Hub,
        switches=st.tuples(*[st.booleans()] * switches),
        mode=st.sampled_from(modes),
        hsm_status=st.sampled_from(HSM_STATUSES),
        hsm_alert=st.sampled_from(HSM_ALERTS),
        paused=st.tuples(*[st.booleans()] * rules),
        rule_machine_fails=st.booleans(),
        hub_security_blocks=st.booleans(),
        history_fails=st.tuples(*[st.booleans()] * buttons),
        throws=st.frozensets(st.sampled_from(READS)),
    )


async def test_failures_degrade_what_they_feed_never_the_entry(
    hass: HomeAssistant, sim: Sim
) -> None:
    """Any combination of the app's read failures: loaded, and every entity truthful."""
    sim.hub.pair_device("button", "Hall Remote")
    entry = make_entry(sim, **{CONF_SCAN_INTERVAL: MAX_SCAN_INTERVAL})
    runtime = await setup_entry(hass, entry)
    coordinator = runtime.coordinator
    hub = sim.hub
    plugs = sorted(hub.find(kind="switch"), key=lambda d: d.id)
    buttons = sorted(hub.find(kind="button"), key=lambda d: d.id)
    rules = sorted(hub.rules.values(), key=lambda r: r.id)
    plug_entities = [entity_id(hass, sim, f"{plug.id}_switch", "switch") for plug in plugs]
    button_entities = [entity_id(hass, sim, f"{button.id}_button_1", "event") for button in buttons]
    rule_entities = [entity_id(hass, sim, f"rule_{rule.id}", "switch") for rule in rules]
    mode_entity = entity_id(hass, sim, "hub_mode", "select")
    panel = entity_id(hass, sim, "hub_hsm", "alarm_control_panel")
    temperature = entity_id(hass, sim, "hub_hub_temperature", "sensor")
    loop = asyncio.get_running_loop()
    seen: set[str] = set()

    def state(entity: str) -> str:
        current = hass.states.get(entity)
        assert current is not None, entity  # never removed
        return current.state

    async def poll(moment: Hub) -> None:
        hub.rm_fails = moment.rule_machine_fails
        hub.tools_throw = dict.fromkeys(moment.throws, "java.lang.NullPointerException")
        hub.hub_security_blocks = moment.hub_security_blocks
        hub.history_fails = {
            button.id for button, fails in zip(buttons, moment.history_fails, strict=True) if fails
        }
        for plug, on in zip(plugs, moment.switches, strict=True):
            hub.set_attribute(plug.id, "switch", "on" if on else "off")
        for button in buttons:
            hub.set_attribute(button.id, "pushed", 1)
        for rule, paused in zip(rules, moment.paused, strict=True):
            rule.paused = paused
        hub.set_mode(moment.mode)
        hub.set_hsm_status(moment.hsm_status)
        hub.hsm_alert = moment.hsm_alert
        coordinator._last_sweep = None  # every poll sweeps: rules, modes and HSM are read
        await coordinator.async_refresh()
        await hass.async_block_till_done()

    def check_moment(moment: Hub) -> None:
        assert coordinator.last_update_success, moment
        assert entry.state is ConfigEntryState.LOADED
        throws = moment.throws
        devices_fail = "hub_list_devices" in throws
        for entity, on in zip(plug_entities, moment.switches, strict=True):
            expected = STATE_UNAVAILABLE if devices_fail else "on" if on else "off"
            assert state(entity) == expected, (entity, moment)
        expected = STATE_UNAVAILABLE if "hub_list_modes" in throws else moment.mode
        assert state(mode_entity) == expected, moment
        expected = _hsm_expected(moment.hsm_status, moment.hsm_alert)
        if "hub_get_hsm_status" in throws:
            expected = STATE_UNAVAILABLE
        assert state(panel) == expected, moment
        assert (state(temperature) == STATE_UNAVAILABLE) == ("hub_get_info" in throws), moment
        for entity, paused in zip(rule_entities, moment.paused, strict=True):
            if moment.rule_machine_fails or "hub_list_rules" in throws:
                expected = STATE_UNAVAILABLE
            elif moment.hub_security_blocks:
                expected = STATE_UNKNOWN
            else:
                expected = "off" if paused else "on"
            assert state(entity) == expected, (entity, moment)
            seen.add(expected)
        for entity, fails in zip(button_entities, moment.history_fails, strict=True):
            if fails or devices_fail:
                assert state(entity) == STATE_UNAVAILABLE, (entity, moment)
            else:
                assert state(entity) not in (STATE_UNAVAILABLE, STATE_UNKNOWN), (entity, moment)

    # Derandomized: the closing check that every kind of rule state was reached must not
    # depend on the run's luck.
    @settings(
        max_examples=40,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        moments=st.lists(
            _hubs(len(plugs), len(rules), len(buttons), [m.name for m in hub.modes]),
            min_size=1,
            max_size=3,
        )
    )
    def check(moments: list[Hub]) -> None:
        for moment in moments:
            asyncio.run_coroutine_threadsafe(poll(moment), loop).result()
            check_moment(moment)

    await hass.async_add_executor_job(check)
    # The examples reached each kind of rule state, failures included.
    assert seen == {"on", "off", STATE_UNAVAILABLE, STATE_UNKNOWN}
