"""A person approves every unlock, disarm and open garage, however the call names its target.

Over real HTTP (and HA's LLM API), with the real gate, for every kind of signed-in caller:
set_state by entity id, by name, by name and home; a backend command by device id in any
spelling and in a batch; a rule, scene or automation that stores a sensitive action. What
needs a person waits (nothing runs), and the request says what would happen, device by
device. Reads that carry secrets are for administrators; a command reaches the entity it
changes only when that entity is exposed; open approvals are bounded per user.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.core import Context
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er, llm
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.settings import (
    CONF_EXPOSED_ONLY,
    CONF_RATE_LIMIT,
    MAX_RATE_LIMIT,
)
from custom_components.mcp_gateway.gateway.approval import manager as approval_module
from custom_components.mcp_gateway.gateway.approval.manager import Pending, approval_manager
from custom_components.mcp_gateway.gateway.llm_api import LLM_API_ID
from tests.gateway_tools.test_llm_api import llm_context
from tests.homecast import sim as homecast_helpers
from tests.hubitat.sim import first_device
from tests.results import result_data
from tests.simulation import registry_entity_id

from .conftest import HOMECAST_GATEWAY, HUBITAT, SIGNED_IN, SecurityHome, error_code

# Callers who may control the hub's lock (the `policy` user controls one light only).
CONTROLLERS = ("admin", "user")


def _hub_entity(home: SecurityHome, device: Any, suffix: str, platform: str) -> str:
    return registry_entity_id(
        home.hass, platform, f"{home.hubitat_entry.unique_id}_{device.id}_{suffix}"
    )


def _name(home: SecurityHome, entity_id: str) -> str:
    state = home.hass.states.get(entity_id)
    assert state is not None, entity_id
    return str(state.attributes[ATTR_FRIENDLY_NAME])


def _open_approvals(home: SecurityHome) -> list[Pending]:
    return [p for p in approval_manager(home.hass)._by_id.values() if p.open]


def _message(result: dict[str, Any]) -> str:
    message: str = result_data(result)["error"]["message"]
    return message


def _home_of(home: SecurityHome, entity_id: str) -> str:
    entry = er.async_get(home.hass).async_get(entity_id)
    assert entry is not None
    assert entry.device_id is not None
    found = home.hubitat_entry.runtime_data.publisher.home_of(entry.device_id)
    assert found is not None
    return found


async def _expire_all(home: SecurityHome) -> None:
    """Every open approval declined, so the next case starts with none."""
    manager = approval_manager(home.hass)
    for pending in _open_approvals(home):
        await manager._end(pending, approval_module.Outcome.DECLINED)
    manager._by_id.clear()


async def test_set_state_by_name_waits_for_a_person(home: SecurityHome) -> None:
    """An unlock, a disarm and an open garage named by name, or by name and home, wait;
    nothing runs. Those who may not control the entity are refused without asking anyone."""
    hub = home.hub
    lock = first_device(hub, "lock")
    garage = first_device(hub, "garage")
    lock_entity = _hub_entity(home, lock, "lock", "lock")
    garage_entity = _hub_entity(home, garage, "garage_door", "cover")
    hub_home = _home_of(home, lock_entity)
    lock_before, garage_before = lock.value("lock"), garage.value("door")
    hc_lock = homecast_helpers.device_of(home.sims["homecast"], "lock")
    hc_lock_entity = homecast_helpers.entity_id(
        home.hass, home.homecast_entry, home.sims["homecast"], hc_lock, "lock"
    )
    hc_before = hc_lock.values["locked"]
    cases = [
        {"name": _name(home, lock_entity), "state": "unlocked"},
        {"name": _name(home, lock_entity), "home": hub_home, "state": "open"},
        {"name": _name(home, garage_entity), "state": "open"},
        {"name": _name(home, garage_entity), "position": 30},
        {"name": _name(home, hc_lock_entity), "state": "unlocked"},
    ]
    for kind in SIGNED_IN:
        for update in cases:
            result = await home.call(kind, "set_state", {"updates": [update]})
            code = error_code(result)
            if kind in CONTROLLERS:
                assert code == "approval_pending", (kind, update, result)
                assert "→" in _message(result) or "position" in _message(result), result
            else:
                assert code != "approval_pending", (kind, update, result)
                assert result["isError"], (kind, update, result)
            await _expire_all(home)
    assert lock.value("lock") == lock_before
    assert garage.value("door") == garage_before
    assert hc_lock.values["locked"] == hc_before
    # Locking, closing and a lamp ask nobody.
    result = await home.call(
        "user", "set_state", {"updates": [{"name": _name(home, lock_entity), "state": "locked"}]}
    )
    assert not result["isError"], result
    assert not _open_approvals(home)


async def test_set_state_by_name_waits_over_the_llm_api(home: SecurityHome) -> None:
    """HA's own assistants reach the same gate: an unlock by name waits there too."""
    lock = first_device(home.hub, "lock")
    lock_entity = _hub_entity(home, lock, "lock", "lock")
    instance = await llm.async_get_api(home.hass, LLM_API_ID, llm_context(home.users["user"].id))
    tool = next(t for t in instance.tools if t.name == "set_state")
    answer = await tool.async_call(
        home.hass,
        llm.ToolInput(
            "set_state", {"updates": [{"name": _name(home, lock_entity), "state": "unlocked"}]}
        ),
        instance.llm_context,
    )
    data = getattr(answer, "data", answer)
    assert data["error"]["code"] == "approval_pending", data
    assert lock.value("lock") != "unlocked"
    assert [p.entity_ids for p in _open_approvals(home)] == [(lock_entity,)]


async def test_backend_command_in_any_spelling_and_batch_waits(home: SecurityHome) -> None:
    """A lock's unlock by device id as a number, as text, padded, with leading zeros, and in
    a batch, waits for every caller who may send it; locking does not."""
    lock = first_device(home.hub, "lock")
    spellings: list[Any] = [int(lock.id), str(lock.id), f" {lock.id} ", f"0{lock.id}"]
    calls: list[dict[str, Any]] = [
        {"deviceId": spelling, "command": "unlock"} for spelling in spellings
    ]
    light = first_device(home.hub, "dimmer")
    calls.append(
        {
            "commands": [
                {"deviceId": str(light.id), "command": "on"},
                {"deviceId": str(lock.id), "command": "unlock"},
            ]
        }
    )
    for kind in SIGNED_IN:
        for args in calls:
            result = await home.call(
                kind, HUBITAT, {"tool": "hub_call_device_command", "args": args}
            )
            code = error_code(result)
            if kind in CONTROLLERS:
                assert code == "approval_pending", (kind, args, result)
            else:
                assert code == "forbidden", (kind, args, result)
            await _expire_all(home)
    # By its label, which the hub does not read as an id: no entity stands for the address,
    # so only an administrator may send it, and a person is asked.
    by_label = {"deviceId": lock.label, "command": "unlock"}
    for kind in SIGNED_IN:
        result = await home.call(
            kind, HUBITAT, {"tool": "hub_call_device_command", "args": by_label}
        )
        expected = "approval_pending" if kind == "admin" else "forbidden"
        assert error_code(result) == expected, (kind, result)
        await _expire_all(home)
    assert lock.value("lock") != "unlocked"
    locked = await home.call(
        "user",
        HUBITAT,
        {"tool": "hub_call_device_command", "args": {"deviceId": lock.id, "command": "lock"}},
    )
    assert not locked["isError"], locked


async def test_approval_text_names_each_device_and_command(home: SecurityHome) -> None:
    """The approver reads every item of a batch: each device by its Home Assistant name and
    the command it gets, never a letter of a name."""
    lock = first_device(home.hub, "lock")
    light = first_device(home.hub, "dimmer")
    lock_entity = _hub_entity(home, lock, "lock", "lock")
    args = {
        "commands": [
            {"deviceId": str(light.id), "command": "setLevel", "parameters": ["40"]},
            {"deviceId": str(lock.id), "command": "unlock"},
        ]
    }
    result = await home.call("admin", HUBITAT, {"tool": "hub_call_device_command", "args": args})
    assert error_code(result) == "approval_pending", result
    (pending,) = _open_approvals(home)
    light_name = _name(home, _hub_entity(home, light, "light", "light"))
    assert f"{_name(home, lock_entity)}: unlock" in pending.summary, pending.summary
    assert f"{light_name}: setLevel 40" in pending.summary, pending.summary
    assert " on l and " not in pending.summary
    assert pending.entity_ids == (lock_entity,)
    await _expire_all(home)
    # set_state's batch likewise: the lamp is part of what is approved, so it is said.
    light_entity = _hub_entity(home, light, "light", "light")
    result = await home.call(
        "admin",
        "set_state",
        {
            "updates": [
                {"entity_id": light_entity, "state": "on", "brightness_pct": 40},
                {"name": _name(home, lock_entity), "state": "unlocked"},
            ]
        },
    )
    assert error_code(result) == "approval_pending", result
    (pending,) = _open_approvals(home)
    assert f"{_name(home, lock_entity)} → unlocked" in pending.summary, pending.summary
    assert f"{light_name} → on (brightness_pct=40)" in pending.summary, pending.summary


async def test_stored_rule_with_an_unlock_waits(home: SecurityHome) -> None:
    """A custom rule that would unlock later, without anyone asked, waits when stored: its
    action shown. Its copy or import waits too; a rule of lamps does not."""
    hub = home.hub
    lock = first_device(hub, "lock")
    switch = first_device(hub, "switch")
    light = first_device(hub, "dimmer")
    home.sims["hubitat"].tools.engine.enabled = True  # the custom rule engine is off by default
    before = dict(hub.custom_rules)
    trigger = {"type": "device_event", "deviceId": str(switch.id), "attribute": "switch"}
    unlock_rules = [
        [{"type": "unlock", "deviceId": str(lock.id)}],
        [{"type": "device_command", "deviceId": f"0{lock.id}", "command": "unlock"}],
        [
            {
                "type": "if_then_else",
                "condition": {"type": "mode", "mode": "Day"},
                "thenActions": [{"type": "unlock", "deviceId": lock.id}],
                "elseActions": [],
            }
        ],
        [{"type": "set_hsm", "status": "disarm"}],
    ]
    for actions in unlock_rules:
        result = await home.call(
            "admin",
            HUBITAT,
            {
                "tool": "hub_create_custom_rule",
                "args": {"name": "Let in", "triggers": [trigger], "actions": actions},
            },
        )
        assert error_code(result) == "approval_pending", (actions, result)
        assert "to run later" in _message(result), result
        await _expire_all(home)
    assert hub.custom_rules == before
    # Those who may not change the hub's rules are refused before anyone is asked.
    for kind in ("user", "read_only", "policy"):
        result = await home.call(
            kind,
            HUBITAT,
            {
                "tool": "hub_create_custom_rule",
                "args": {"name": "Let in", "triggers": [trigger], "actions": unlock_rules[0]},
            },
        )
        assert error_code(result) == "forbidden", (kind, result)
    # A Rule Machine rule is written whole by a tool that asks a confirmation: asked too.
    machine = await home.call(
        "admin",
        HUBITAT,
        {
            "tool": "hub_set_rule",
            "args": {"name": "Let in", "definition": {"actions": unlock_rules[0]}},
            "confirm": True,
        },
    )
    assert error_code(machine) == "approval_pending", machine
    await _expire_all(home)
    assert not _open_approvals(home)
    lamps = await home.call(
        "admin",
        HUBITAT,
        {
            "tool": "hub_create_custom_rule",
            "args": {
                "name": "Lamp",
                "triggers": [trigger],
                "actions": [{"type": "device_command", "deviceId": str(light.id), "command": "on"}],
            },
        },
    )
    assert not lamps["isError"], lamps
    rule_id = next(iter(set(hub.custom_rules) - set(before)))
    for tool, args in (
        ("hub_update_custom_rule", {"ruleId": rule_id, "actions": unlock_rules[0]}),
        ("hub_clone_custom_rule", {"ruleId": rule_id, "name": "Copy"}),
    ):
        result = await home.call("admin", HUBITAT, {"tool": tool, "args": args})
        assert error_code(result) == "approval_pending", (tool, result)
        await _expire_all(home)
    assert lock.value("lock") != "unlocked"


async def test_homekit_scene_and_automation_with_an_unlock_wait(home: SecurityHome) -> None:
    """A HomeKit scene or automation that unlocks or disarms waits when stored."""
    state = home.homecast
    followed = state.homes[0]
    hc_lock = homecast_helpers.device_of(home.sims["homecast"], "lock")
    scenes_before = [scene.name for scene in followed.scenes]
    for tool, args in (
        (
            "create_scene",
            {
                "home": followed.slug,
                "name": "Welcome",
                "actions": [{"accessory": hc_lock.slug, "lock_target": False}],
            },
        ),
        (
            "create_automation",
            {
                "home": followed.slug,
                "name": "Arrive",
                "trigger": {"type": "time", "at": "08:00"},
                "actions": [{"accessory": hc_lock.name, "lock_target": False}],
            },
        ),
    ):
        result = await home.call("admin", HOMECAST_GATEWAY, {"tool": tool, "args": args})
        assert error_code(result) == "approval_pending", (tool, result)
        assert "to run later" in _message(result), result
        await _expire_all(home)
    assert [scene.name for scene in followed.scenes] == scenes_before
    assert hc_lock.values["locked"] is not False


async def test_custom_rule_reads_are_for_administrators(home: SecurityHome) -> None:
    """A custom rule's actions carry the live-update webhook's URL and hidden devices' ids:
    only an administrator reads them."""
    for tool in ("hub_get_custom_rule", "hub_test_custom_rule", "hub_get_visual_rule"):
        for kind in ("user", "read_only", "policy"):
            result = await home.call(kind, HUBITAT, {"tool": tool, "args": {"ruleId": "1"}})
            assert error_code(result) == "forbidden", (kind, tool, result)
            assert "http" not in result["content"][0]["text"]
        admin = await home.call("admin", HUBITAT, {"tool": tool, "args": {}})
        assert error_code(admin) != "forbidden", (tool, admin)
    # A Homecast automation's webhook id is what calling it takes: administrators only.
    followed = home.homecast.homes[0]
    light = homecast_helpers.device_of(home.sims["homecast"], "light")
    made = await home.call(
        "admin",
        HOMECAST_GATEWAY,
        {
            "tool": "create_hc_automation",
            "args": {
                "home": followed.slug,
                "name": "Hook",
                "triggers": [{"type": "webhook", "webhook_id": "s3cret-hook"}],
                "actions": [{"type": "device", "accessory": light.slug, "on": True}],
            },
        },
    )
    assert not made["isError"], made
    for kind in SIGNED_IN:
        read = await home.call(kind, HOMECAST_GATEWAY, {"tool": "get_hc_automations", "args": {}})
        assert not read["isError"], (kind, read)
        shown = "s3cret-hook" in read["content"][0]["text"]
        assert shown is (kind == "admin"), (kind, read)


async def test_command_on_a_hidden_lock_is_refused(home: SecurityHome) -> None:
    """The lock hidden from assistants, its battery sensor exposed: a command reaches the
    lock, so it is refused, for every caller; the lamp beside it still works."""
    hass = home.hass
    assert await async_setup_component(hass, "homeassistant", {})
    hass.config_entries.async_update_entry(
        home.settings_entry(), options={CONF_RATE_LIMIT: MAX_RATE_LIMIT, CONF_EXPOSED_ONLY: True}
    )
    await hass.async_block_till_done()
    lock = first_device(home.hub, "lock")
    lock_entity = _hub_entity(home, lock, "lock", "lock")
    battery = _hub_entity(home, lock, "battery", "sensor")
    async_expose_entity(hass, "conversation", lock_entity, False)
    async_expose_entity(hass, "conversation", battery, True)
    for kind in SIGNED_IN:
        for command in ("unlock", "lock"):
            result = await home.call(
                kind,
                HUBITAT,
                {
                    "tool": "hub_call_device_command",
                    "args": {"deviceId": lock.id, "command": command},
                },
            )
            assert error_code(result) == "forbidden", (kind, command, result)
    assert not _open_approvals(home)
    assert lock.value("lock") != "unlocked"


async def test_open_approvals_are_bounded_and_the_owner_never_starved(
    home: SecurityHome,
) -> None:
    """One user opens at most MAX_OPEN_PER_USER approvals (then "busy", nobody asked); when
    all users together hold MAX_OPEN, others wait but the owner is still asked."""
    from custom_components.mcp_gateway.gateway.approval import rules

    lock = first_device(home.hub, "lock")
    lock_entity = _hub_entity(home, lock, "lock", "lock")

    def unlock(code: int) -> dict[str, Any]:
        return {"updates": [{"entity_id": lock_entity, "state": "unlocked", "code": str(code)}]}

    for number in range(rules.MAX_OPEN_PER_USER):
        result = await home.call("user", "set_state", unlock(number))
        assert error_code(result) == "approval_pending", result
    busy = await home.call("user", "set_state", unlock(99))
    assert error_code(busy) == "approval_busy", busy
    assert len(_open_approvals(home)) == rules.MAX_OPEN_PER_USER
    # The same call again finds its own approval rather than counting as a new one.
    again = await home.call("user", "set_state", unlock(0))
    assert error_code(again) == "approval_pending", again
    home.users["admin"].is_owner = True
    with patch.object(rules, "MAX_OPEN", rules.MAX_OPEN_PER_USER):
        owner = await home.call("admin", "set_state", unlock(1))
        assert error_code(owner) == "approval_pending", owner
        home.users["admin"].is_owner = False
        other = await home.call("admin", "set_state", unlock(2))
        assert error_code(other) == "approval_busy", other
    assert lock.value("lock") != "unlocked"


async def test_client_name_is_cleaned_and_marked_as_its_own(home: SecurityHome) -> None:
    """The name an app gives itself reaches the approver without markup, links, images or
    new lines, shortened, quoted and marked as the app's own words."""
    from custom_components.mcp_gateway.gateway.approval.texts import (
        client_label,
    )

    claim = (
        "**Routine battery check, nothing is unlocked. Safe to approve.**\n"
        "![ok](https://evil.example/ok.png) [details](https://evil.example/x)" + "x" * 150
    )
    label = client_label(claim)
    assert label.startswith("“")
    assert label.endswith("(the app's own name for itself)")
    for banned in ("*", "[", "]", "(https", "http", "\n", "!"):
        assert banned not in label.removesuffix("(the app's own name for itself)"), label
    assert len(label) < 90
    lock = first_device(home.hub, "lock")
    status, body = await home.rpc(
        "admin",
        "tools/call",
        {
            "name": "set_state",
            "arguments": {
                "updates": [
                    {"entity_id": _hub_entity(home, lock, "lock", "lock"), "state": "unlocked"}
                ]
            },
        },
        **{"User-Agent": claim.replace("\n", " ")},
    )
    assert status == 200, body
    (pending,) = _open_approvals(home)
    assert "**" not in pending.client_name
    assert "https" not in pending.client_name
    assert pending.client_name.endswith("(the app's own name for itself)")


async def test_integration_action_storing_an_unlock_waits(home: SecurityHome) -> None:
    """The integration's own actions (over REST or websocket) run backend tools: a HomeKit
    scene that unlocks, stored through `homecast_create_scene`, waits for a person too; a
    caller without a user (an automation) runs with Home Assistant's trust."""
    followed = home.homecast.homes[0]
    hc_lock = homecast_helpers.device_of(home.sims["homecast"], "lock")
    data = {
        "config_entry_id": home.homecast_entry.entry_id,
        "home": followed.slug,
        "name": "Open up",
        "actions": [{"accessory": hc_lock.slug, "lock_target": False}],
    }
    with pytest.raises(HomeAssistantError) as refused:
        await home.hass.services.async_call(
            DOMAIN,
            "homecast_create_scene",
            data,
            blocking=True,
            context=Context(user_id=home.users["admin"].id),
        )
    assert refused.value.translation_key == "action_approval"
    assert "Waiting for a person" in str(refused.value.translation_placeholders)
    assert "Open up" not in [scene.name for scene in followed.scenes]
    (pending,) = _open_approvals(home)
    assert "lock_target=False" in pending.summary, pending.summary
