"""Live updates when the hub does not cooperate: refused or failing rule calls, rules edited
on the hub, reads that fail after a call, and push switched off while the hub refuses."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any
from unittest.mock import AsyncMock, patch

from freezegun.api import FrozenDateTimeFactory
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util
import pytest

from custom_components.mcp_gateway.backends.hubitat.api import HubitatApi
from custom_components.mcp_gateway.backends.hubitat.const import CONF_PUSH, CONF_WEBHOOK_ID
from custom_components.mcp_gateway.backends.hubitat.push import (
    MODE_POLLING,
    MODE_PUSH,
    REASON_ENGINE_OFF,
    REASON_NO_CALLS,
    REASON_NO_WRITE,
    REASON_NOT_ENABLED,
    REASON_SETUP_FAILED,
    HubitatPush,
)
from custom_components.mcp_gateway.backends.hubitat.push_rules import RULE_PREFIX, name_prefix
from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.mcp.errors import McpConnectionError, McpRpcError
from simulators.hubitat.rule_engine import RuleEngine

from .conftest import Sim, make_entry, poll, setup_entry


@pytest.fixture
async def runtime(hass: HomeAssistant, ha_url: str, sim: Sim) -> HubitatRuntime:
    """An entry with push running on a hub whose rule engine is on."""
    _engine(sim).enabled = True
    started = await setup_entry(hass, make_entry(sim, **{CONF_PUSH: True}))
    assert (started.push.mode, started.push.reason) == (MODE_PUSH, None)
    return started


def _engine(sim: Sim) -> RuleEngine:
    engine: RuleEngine = sim.tools.engine
    return engine


def _our_rules(sim: Sim) -> list[Any]:
    return [r for r in sim.hub.custom_rules.values() if r.name.startswith(RULE_PREFIX)]


def _issue_key(hass: HomeAssistant, push: HubitatPush) -> str | None:
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"hubitat_push_{push.entry.entry_id}")
    return issue.translation_key if issue is not None else None


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (McpRpcError(-32603, "Rule limit reached"), REASON_SETUP_FAILED),
        (McpRpcError(-32603, "Enable Custom Rule Engine first"), REASON_ENGINE_OFF),
        (McpConnectionError("hub unreachable"), REASON_SETUP_FAILED),
    ],
)
async def test_rule_calls_that_fail(
    hass: HomeAssistant,
    runtime: HubitatRuntime,
    error: Exception,
    reason: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A refusal or failure while keeping the rules: polling at the user's interval, a
    repair naming why; the next check that works restores push."""
    push = runtime.push
    with patch.object(push.api, "list_custom_rules", AsyncMock(side_effect=error)):
        await push.async_sync()
    assert (push.mode, push.reason) == (MODE_POLLING, reason)
    assert _issue_key(hass, push) == f"hubitat_push_{reason}"
    assert runtime.coordinator.update_interval == timedelta(seconds=15)
    assert "live-update rules" in caplog.text
    await push.async_sync()
    assert (push.mode, push.reason) == (MODE_PUSH, None)
    assert _issue_key(hass, push) is None


async def test_write_permission_withdrawn(
    hass: HomeAssistant, runtime: HubitatRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The app's Write master turned off: asked again, then polling with a repair."""
    push = runtime.push
    monkeypatch.setitem(runtime.coordinator.data.hub.raw, "writeEnabled", False)
    info = await push.api.get_info()
    refused = replace(info, raw={**info.raw, "writeEnabled": False})
    with patch.object(push.api, "get_info", AsyncMock(return_value=refused)) as get_info:
        await push.async_sync()
    get_info.assert_awaited_once()
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_NO_WRITE)
    assert _issue_key(hass, push) == "hubitat_push_no_write"


async def test_rules_edited_on_the_hub_are_put_back(
    hass: HomeAssistant, runtime: HubitatRuntime, sim: Sim
) -> None:
    """A rule whose description someone changed is rewritten and enabled; a rule of ours
    the plan no longer has is deleted; rules of others stay."""
    push = runtime.push
    edited = _our_rules(sim)[0]
    planned = edited.description
    edited.description = "edited in the hub's UI"
    stale = await push.api.create_custom_rule(
        {
            "name": f"{name_prefix(push.marker)}9/9",
            "description": "an old chunk",
            "triggers": [{"type": "mode_change"}],
            "actions": [{"type": "log", "message": "x"}],
            "testRule": True,
        }
    )
    others = {r.id for r in sim.hub.custom_rules.values() if not r.name.startswith(RULE_PREFIX)}
    await push.async_sync()
    edited = sim.hub.custom_rules[edited.id]
    assert (edited.description, edited.enabled) == (planned, True)
    assert str(stale) not in {str(r.id) for r in sim.hub.custom_rules.values()}
    assert {r.id for r in sim.hub.custom_rules.values() if not r.name.startswith(RULE_PREFIX)} == (
        others
    )
    assert push.mode == MODE_PUSH


async def test_engine_off_leaves_edited_rules_alone(
    hass: HomeAssistant, runtime: HubitatRuntime, sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine switched off (the sweep saw it): rules that differ from the plan cannot be
    changed, so polling with the engine's repair; nothing is attempted."""
    push = runtime.push
    _engine(sim).enabled = False
    monkeypatch.setitem(runtime.coordinator.data.hub.raw, "customRuleEngineEnabled", False)
    edited = _our_rules(sim)[0]
    edited.description = "edited in the hub's UI"
    with patch.object(push.api, "update_custom_rule", AsyncMock()) as update:
        await push.async_sync()
    update.assert_not_awaited()
    assert (push.mode, push.reason) == (MODE_POLLING, REASON_ENGINE_OFF)
    assert edited.description == "edited in the hub's UI"


async def test_a_read_after_a_call_that_fails(
    hass: HomeAssistant, runtime: HubitatRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    """The read a call starts fails: counted, logged at debug, push stays (polls go on)."""
    push = runtime.push
    failing = AsyncMock(side_effect=McpConnectionError("hub unreachable"))
    with patch.object(runtime.coordinator, "async_read_changes", failing):
        await push._async_read()
    assert push.read_failures == 1
    assert push.diagnostics()["read_failures"] == 1
    assert push.mode == MODE_PUSH


async def test_new_devices_get_rules(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, runtime: HubitatRuntime, sim: Sim
) -> None:
    """A device gone from the hub: the sweep notices and the rules stop naming it."""
    push = runtime.push
    named = {
        device_id
        for rule in _our_rules(sim)
        for trigger in rule.triggers
        for device_id in trigger.get("deviceIds", ())
    }
    gone = sorted(named, key=int)[0]
    sim.hub.remove_device(int(gone))
    for _ in range(21):  # past the five-minute full sweep
        await poll(hass, freezer)
    assert gone not in push.pushed
    still = {
        device_id
        for rule in _our_rules(sim)
        for trigger in rule.triggers
        for device_id in trigger.get("deviceIds", ())
    }
    assert gone not in still
    assert push.mode == MODE_PUSH


async def test_missed_calls_wait_for_the_next_call(
    hass: HomeAssistant, runtime: HubitatRuntime, sim: Sim
) -> None:
    """Polling because calls stopped arriving: the periodic check only lists the rules (one
    the loop guard disabled would be enabled later); recreating them would not bring the calls
    back; a call ends it."""
    push = runtime.push
    push._set_mode(MODE_POLLING, REASON_NO_CALLS)
    sim.stats.reset()
    await push._async_check(dt_util.utcnow())
    assert sum(sim.stats.tools.values()) == 1
    assert push.reason == REASON_NO_CALLS


async def test_push_off_while_the_hub_refuses_to_delete(
    hass: HomeAssistant, runtime: HubitatRuntime, sim: Sim, caplog: pytest.LogCaptureFixture
) -> None:
    """Push switched off with the engine off: the hub keeps its rules, so the webhook id is
    kept and the next start tries again."""
    entry = runtime.entry
    _engine(sim).enabled = False
    rules = len(_our_rules(sim))
    hass.config_entries.async_update_entry(entry, options={CONF_PUSH: False})
    await hass.async_block_till_done()
    assert len(_our_rules(sim)) == rules
    assert CONF_WEBHOOK_ID in entry.data
    assert "The hub kept its rule" in caplog.text
    assert entry.runtime_data.push.reason == REASON_NOT_ENABLED

    # Unreachable at the next start: kept again, said once.
    _engine(sim).enabled = True
    failing = AsyncMock(side_effect=McpConnectionError("hub unreachable"))
    with patch.object(HubitatApi, "list_custom_rules", failing):
        assert await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
    assert CONF_WEBHOOK_ID in entry.data
    assert "Could not remove the hub's live-update rules" in caplog.text

    # Reachable and willing: the rules go, and the id with them.
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert _our_rules(sim) == []
    assert CONF_WEBHOOK_ID not in entry.data


async def test_no_webhook_no_address(runtime: HubitatRuntime) -> None:
    """Before a webhook exists there is no address to show."""
    push = runtime.push
    push._webhook_id = None
    assert push.webhook_url() is None
    assert push.diagnostics()["ha_address"] is None
