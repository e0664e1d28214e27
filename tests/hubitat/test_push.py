"""Live updates: the hub's custom rules call HA's webhook, HA reads what changed at once.

The simulated hub runs upstream's custom rule engine: its rules really POST to HA's webhook
(HA's HTTP app on 127.0.0.1) when devices change.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest.mock import patch

import aiohttp
from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import SOURCE_USER
from homeassistant.const import CONF_URL, EVENT_STATE_CHANGED
from homeassistant.core import Event, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from homeassistant.helpers.network import NoURLAvailableError
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from custom_components.mcp_gateway.backends.hubitat import push as push_module
from custom_components.mcp_gateway.backends.hubitat.const import (
    CONF_PUSH,
    CONF_WEBHOOK_ID,
    KIND as HUBITAT_KIND,
)
from custom_components.mcp_gateway.backends.hubitat.push import (
    MODE_POLLING,
    MODE_PUSH,
    REASON_ENGINE_OFF,
    REASON_LOOP_GUARD,
    REASON_NO_CALLS,
    REASON_NO_URL,
    REASON_NOT_ENABLED,
    SAFETY_POLL_INTERVAL,
)
from custom_components.mcp_gateway.backends.hubitat.push_rules import RULE_PREFIX
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from simulators.hubitat.rule_engine import RuleEngine

from .conftest import TOKEN, Sim, SimFactory, entity_id, first, make_entry, poll, setup_entry


def _engine(sim: Sim) -> RuleEngine:
    engine: RuleEngine = sim.tools.engine
    return engine


def _our_rules(sim: Sim) -> list[Any]:
    return [r for r in sim.hub.custom_rules.values() if r.name.startswith(RULE_PREFIX)]


async def _settle(
    hass: HomeAssistant, sim: Sim, freezer: FrozenDateTimeFactory | None = None
) -> None:
    """Let the hub's requests arrive and the debounced read finish.

    With the clock frozen, the loop's clock is too: the debounce delay passes only by a tick.
    """
    await _engine(sim).drain()
    if freezer is not None:
        freezer.tick(timedelta(seconds=0.1))
        async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)


async def _push_entry(hass: HomeAssistant, sim: Sim) -> HubitatRuntime:
    return await setup_entry(hass, make_entry(sim, **{CONF_PUSH: True}))


def _issue(hass: HomeAssistant, runtime: HubitatRuntime) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, f"hubitat_push_{runtime.entry.entry_id}")


def _toggle(sim: Sim, device_id: int, attribute: str, a: str, b: str) -> str:
    value = b if sim.hub.devices[device_id].value(attribute) == a else a
    assert sim.hub.set_attribute(device_id, attribute, value) is not None
    return value


async def test_push_with_consent(hass: HomeAssistant, ha_url: str, sim_factory: SimFactory) -> None:
    """Consent and the engine on: rules on the hub, a change shows without any poll."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push_entry(hass, sim)
    push = runtime.push
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    rules = _our_rules(sim)
    assert rules
    assert all(rule.enabled and rule.test_rule for rule in rules)
    action = rules[0].actions[0]
    assert action["url"].startswith(f"{ha_url}/api/webhook/")
    assert action["url"].endswith(runtime.entry.data[CONF_WEBHOOK_ID])
    assert runtime.coordinator.update_interval == SAFETY_POLL_INTERVAL
    assert _issue(hass, runtime) is None
    status = entity_id(hass, sim, "hub_updates", "sensor")
    assert hass.states.get(status).state == "push"
    # A change on the hub: the rule posts, HA reads it; no time passes, no poll runs.
    switch = first(sim, "switch")
    switch_entity = entity_id(hass, sim, f"{switch.id}_switch", "switch")
    value = _toggle(sim, switch.id, "switch", "on", "off")
    await _settle(hass, sim)
    assert hass.states.get(switch_entity).state == value
    assert push.calls == 1
    # Mode and HSM changes are reported too.
    sim.hub.set_mode("Away")
    await _settle(hass, sim)
    mode = entity_id(hass, sim, "hub_mode", "select")
    assert hass.states.get(mode).state == "Away"
    diagnostics = runtime.diagnostics()["push"]
    assert diagnostics["mode"] == MODE_PUSH
    assert diagnostics["ha_address"] == ha_url
    assert runtime.entry.data[CONF_WEBHOOK_ID] not in str(diagnostics)


async def test_no_consent_creates_nothing(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """Without the option nothing is made on the hub; polling as before, no status sensor."""
    sim = await sim_factory(custom_rule_engine=True)
    rules = dict(sim.hub.custom_rules)
    runtime = await setup_entry(hass, make_entry(sim))
    assert sim.hub.custom_rules == rules
    assert (runtime.push.mode, runtime.push.reason) == (MODE_POLLING, REASON_NOT_ENABLED)
    assert runtime.coordinator.update_interval == timedelta(seconds=15)
    assert CONF_WEBHOOK_ID not in runtime.entry.data
    assert _issue(hass, runtime) is None
    registry = er.async_get(hass)
    assert registry.async_get_entity_id("sensor", DOMAIN, f"{sim.hub.hub_id}_hub_updates") is None


async def test_engine_off_raises_a_repair_and_keeps_polling(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim: Sim
) -> None:
    """The engine off (upstream's default): a repair issue, polling; switched on, push."""
    runtime = await _push_entry(hass, sim)
    push = runtime.push
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_ENGINE_OFF)
    assert _our_rules(sim) == []
    issue = _issue(hass, runtime)
    assert issue is not None
    assert issue.translation_key == "hubitat_push_engine_off"
    assert runtime.coordinator.update_interval == timedelta(seconds=15)
    status = entity_id(hass, sim, "hub_updates", "sensor")
    assert hass.states.get(status).state == "polling"
    assert hass.states.get(status).attributes["reason"] == REASON_ENGINE_OFF
    # Polling still brings changes.
    switch = first(sim, "switch")
    switch_entity = entity_id(hass, sim, f"{switch.id}_switch", "switch")
    value = _toggle(sim, switch.id, "switch", "on", "off")
    await poll(hass, freezer)
    assert hass.states.get(switch_entity).state == value
    # The user switches the engine on; the periodic check sets push up.
    _engine(sim).enabled = True
    await poll(hass, freezer, 300)
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    assert _our_rules(sim)
    assert _issue(hass, runtime) is None
    assert hass.states.get(status).state == "push"


async def test_no_reachable_url_raises_a_repair(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """No internal URL the hub could call: nothing is created, a repair issue says why."""
    sim = await sim_factory(custom_rule_engine=True)
    with patch.object(push_module, "get_url", side_effect=NoURLAvailableError):
        runtime = await _push_entry(hass, sim)
    assert (runtime.push.mode, runtime.push.reason) == (MODE_POLLING, REASON_NO_URL)
    assert _our_rules(sim) == []
    issue = _issue(hass, runtime)
    assert issue is not None
    assert issue.translation_key == "hubitat_push_no_url"


async def test_burst_is_one_read(hass: HomeAssistant, ha_url: str, sim_factory: SimFactory) -> None:
    """Ten changes at once: ten calls from the hub, one after the other (each rule's
    http_request waits for HA's answer), a read for the first and one for those during it."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push_entry(hass, sim)
    switches = sim.hub.find(kind="switch")[:2] + sim.hub.find(kind="motion")[:1]
    sim.stats.reset()
    for n in range(10):
        device = switches[n % len(switches)]
        attribute = "motion" if device.kind == "motion" else "switch"
        sim.hub.set_attribute(device.id, attribute, f"state {n}")
    await _settle(hass, sim)
    assert runtime.push.calls == 10
    assert runtime.push.reads <= 2
    assert sum(sim.stats.tools.values()) <= 4
    for device in switches:
        attribute = "motion" if device.kind == "motion" else "switch"
        record = runtime.coordinator.data.devices[str(device.id)]
        assert record.attributes[attribute] == device.value(attribute)


async def test_duplicate_and_out_of_order_calls(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """Repeats of the rule's call fire no event twice; calls without the rule's key (stale,
    forged, not JSON) are answered alike and count for nothing."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push_entry(hass, sim)
    button = first(sim, "button")
    event_entity = entity_id(hass, sim, f"{button.id}_button_1", "event")
    fired: list[Event] = []
    hass.bus.async_listen(
        EVENT_STATE_CHANGED,
        lambda event: fired.append(event) if event.data["entity_id"] == event_entity else None,
    )
    action = _our_rules(sim)[0].actions[0]
    url = action["url"]
    async with aiohttp.ClientSession() as session:
        for press in range(3):
            sim.hub.set_attribute(button.id, "pushed", 1)
            await _engine(sim).drain()
            # The same call again, and calls with other (older) bodies, before the read.
            for body in (action["body"], '{"rule": "1/2"}', '{"rule": "9/9"}', "not json"):
                async with session.post(url, data=body) as response:
                    assert response.status == 200
            await hass.async_block_till_done(wait_background_tasks=True)
            assert len(fired) == press + 1
    assert runtime.push.calls == 6
    assert runtime.push.forged == 9
    # A call that is not a POST is refused by HA's webhook component.
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        assert response.status == 405


async def test_channel_drop_and_recovery(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """The hub's calls stop: the safety poll finds the change, polling takes over; the next
    call restores push. Every change arrives exactly once."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push_entry(hass, sim)
    push = runtime.push
    sensor = first(sim, "contact")
    contact = entity_id(hass, sim, f"{sensor.id}_contact", "binary_sensor")
    states: list[str] = []
    hass.bus.async_listen(
        EVENT_STATE_CHANGED,
        lambda event: (
            states.append(event.data["new_state"].state)
            if event.data["entity_id"] == contact
            else None
        ),
    )
    _engine(sim).reachable = False
    first_value = _toggle(sim, sensor.id, "contact", "open", "closed")
    await _settle(hass, sim, freezer)
    assert states == []  # the call never arrived
    await poll(hass, freezer, 60)  # the safety poll
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_NO_CALLS)
    assert runtime.coordinator.update_interval == timedelta(seconds=15)
    issue = _issue(hass, runtime)
    assert issue is not None
    assert issue.translation_key == "hubitat_push_no_calls"
    second_value = _toggle(sim, sensor.id, "contact", "open", "closed")
    await poll(hass, freezer)  # polling at the user's interval meanwhile
    _engine(sim).reachable = True
    third_value = _toggle(sim, sensor.id, "contact", "open", "closed")
    await _settle(hass, sim, freezer)
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    assert _issue(hass, runtime) is None
    assert runtime.coordinator.update_interval == SAFETY_POLL_INTERVAL
    on_off = {"open": "on", "closed": "off"}
    assert states == [on_off[first_value], on_off[second_value], on_off[third_value]]
    await poll(hass, freezer, 60)
    assert len(states) == 3


async def test_loop_guard_falls_back_and_retries(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """The hub disables a busy rule (mcpLoopGuard): polling, a repair; enabled again later."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push_entry(hass, sim)
    push = runtime.push
    _engine(sim).set_loop_guard(5, 60)
    switch = first(sim, "switch")
    for n in range(6):
        sim.hub.set_attribute(switch.id, "switch", f"state {n}")
    await _settle(hass, sim, freezer)
    assert not all(rule.enabled for rule in _our_rules(sim))
    await poll(hass, freezer, 60)  # the safety poll reads the location event
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_LOOP_GUARD)
    issue = _issue(hass, runtime)
    assert issue is not None
    assert issue.translation_key == "hubitat_push_loop_guard"
    await poll(hass, freezer, 300)  # not yet: the retry waits past the hub's longest window
    assert push.reason == REASON_LOOP_GUARD
    for _ in range(2):
        await poll(hass, freezer, 300)
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    assert all(rule.enabled for rule in _our_rules(sim))


async def test_entry_removal_deletes_the_rules(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """Removing the entry deletes its rules from the hub (and nothing else)."""
    sim = await sim_factory(custom_rule_engine=True)
    others = dict(sim.hub.custom_rules)
    runtime = await _push_entry(hass, sim)
    assert _our_rules(sim)
    files = dict(sim.hub.files)
    assert await hass.config_entries.async_remove(runtime.entry.entry_id)
    await hass.async_block_till_done()
    assert _our_rules(sim) == []
    assert sim.hub.custom_rules == others
    assert sim.hub.files == files  # test rules: no backup files left behind


async def test_turning_push_off_deletes_the_rules(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory
) -> None:
    """The option off: the reload deletes the rules and forgets the webhook id."""
    sim = await sim_factory(custom_rule_engine=True)
    runtime = await _push_entry(hass, sim)
    entry = runtime.entry
    assert _our_rules(sim)
    hass.config_entries.async_update_entry(entry, options={CONF_PUSH: False})
    await hass.async_block_till_done()
    assert _our_rules(sim) == []
    assert CONF_WEBHOOK_ID not in entry.data
    assert entry.runtime_data.push.reason == REASON_NOT_ENABLED


async def test_idle_calls_go_down(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, ha_url: str, sim_factory: SimFactory
) -> None:
    """Ten idle minutes cost the hub fewer calls with push than with polling alone."""
    counts: dict[str, float] = {}
    for name, options in (("polling", {}), ("push", {CONF_PUSH: True})):
        sim = await sim_factory(custom_rule_engine=True, hub_id=f"hub-{name}")
        entry = make_entry(sim, **options)
        await setup_entry(hass, entry)
        await poll(hass, freezer, 600)  # past the first sweep and check
        sim.stats.reset()
        for _ in range(80):
            await poll(hass, freezer)  # 20 minutes in 15 s steps
        counts[name] = sum(sim.stats.tools.values()) / 20
        assert await hass.config_entries.async_unload(entry.entry_id)
    print(f"idle hub calls per minute: {counts}")
    assert counts["polling"] >= 8
    assert counts["push"] < counts["polling"] / 2


@pytest.mark.parametrize("consent", [True, False])
async def test_config_flow_asks_for_consent(
    hass: HomeAssistant, ha_url: str, sim_factory: SimFactory, consent: bool
) -> None:
    """The endpoint form offers push, off by default, naming the address the hub will call;
    the entry sets it up only when the user ticked it."""
    sim = await sim_factory(custom_rule_engine=True)
    rules = dict(sim.hub.custom_rules)
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": HUBITAT_KIND}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["description_placeholders"]["ha_url"] == ha_url
    field = next(key for key in result["data_schema"].schema if key == CONF_PUSH)
    assert field.default() is False
    user_input: dict[str, Any] = {CONF_URL: f"{sim.url}?access_token={TOKEN}"}
    if consent:
        user_input[CONF_PUSH] = True
    result = await hass.config_entries.flow.async_configure(result["flow_id"], user_input)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["options"] == {CONF_PUSH: consent}
    await hass.async_block_till_done()
    assert (len(_our_rules(sim)) > 0) is consent
    if not consent:
        assert sim.hub.custom_rules == rules
