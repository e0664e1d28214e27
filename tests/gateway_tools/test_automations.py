"""The automations tool over the real wire: HA's HTTP server → the gateway → HA's own
automation editor (automations.yaml, HA's validation, automation.reload), with the real
approval gate, a simulated Hubitat hub behind the entities, and people approving under
Settings → Repairs."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
import json
from pathlib import Path
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import Group, User
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    issue_registry as ir,
)
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockUser, async_capture_events

from custom_components.mcp_gateway.core import compat
from custom_components.mcp_gateway.core.settings import (
    CONF_APPROVAL,
    CONF_AUTOMATIONS_FOR_USERS,
    gateway_settings,
)
from custom_components.mcp_gateway.gateway.approval import (
    gate as approval_module,
    rules as approval_rules,
)
from custom_components.mcp_gateway.gateway.approval.channels import placeholders
from custom_components.mcp_gateway.gateway.approval.manager import (
    EVENT_APPROVAL,
    Channel,
    Pending,
    approval_manager,
)
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.tools import automations_store as store
from custom_components.mcp_gateway.gateway.tools.automations_config import (
    references,
    sensitive_actions,
)
from custom_components.mcp_gateway.permissions.policy import EVENT_GATEWAY_WRITE
from tests.approvals import (
    BROWSER_ID,
    HEADERS,
    URL,
    access_token,
    code,
    data,
    open_approvals,
    tool_call,
)
from tests.hubitat.sim import Sim, entity_id, first, make_entry, setup_entry
from tests.simulation import gateway_entry


@dataclass
class Home:
    hass: HomeAssistant
    sim: Sim
    clients: dict[str, TestClient]
    users: dict[str, User]
    motion: str
    switch: str
    lock: str
    config_dir: Path

    async def call(self, kind: str, arguments: dict[str, Any], name: str = "automations") -> Any:
        return await tool_call(self.clients[kind], name, arguments)

    def running(self, kind: str, arguments: dict[str, Any]) -> asyncio.Task[Any]:
        return asyncio.get_running_loop().create_task(self.call(kind, arguments))

    async def pending(self) -> Pending:
        open_ = await open_approvals(self.hass)
        assert len(open_) == 1
        return open_[0]

    def file(self) -> str:
        return (self.config_dir / "automations.yaml").read_text()

    def save_args(self, **extra: Any) -> dict[str, Any]:
        return {
            "action": "save",
            "config": {
                "alias": "Hall light on motion",
                "triggers": [{"trigger": "state", "entity_id": self.motion, "to": "on"}],
                "conditions": [],
                "actions": [{"action": "switch.turn_on", "target": {"entity_id": self.switch}}],
                "mode": "single",
            },
            **extra,
        }


@pytest.fixture
async def home(
    hass: HomeAssistant,
    *,
    sim: Sim,
    hass_client: Any,
    hass_admin_user: MockUser,
    hass_access_token: str,
    hass_read_only_user: MockUser,
    hass_read_only_access_token: str,
    tmp_path: Path,
) -> Home:
    # HA's editor writes automations.yaml in the config folder: this test's own.
    hass.config.config_dir = str(tmp_path)
    (tmp_path / "configuration.yaml").write_text("automation: !include automations.yaml\n")
    (tmp_path / "automations.yaml").write_text("[]\n")
    for component in ("http", "repairs", "homeassistant", "automation"):
        assert await async_setup_component(hass, component, {})
    gateway_entry().add_to_hass(hass)
    await setup_entry(hass, make_entry(sim))
    motion = entity_id(hass, sim, f"{first(sim, 'motion').id}_motion", "binary_sensor")
    switch = entity_id(hass, sim, f"{first(sim, 'switch').id}_switch", "switch")
    lock = entity_id(hass, sim, f"{first(sim, 'lock').id}_lock", "lock")
    for exposed in (motion, switch, lock):
        async_expose_entity(hass, "conversation", exposed, True)
    user = MockUser(name="Ordinary", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    user.add_to_hass(hass)
    # A user who may see the motion sensor and the switch, and control neither.
    limited = MockUser(
        name="Limited",
        groups=[
            Group(
                name="Look only",
                policy={
                    "entities": {
                        "entity_ids": {motion: {"read": True}, switch: {"read": True}},
                    }
                },
            )
        ],
    )
    limited.add_to_hass(hass)
    clients = {
        "admin": await hass_client(hass_access_token),
        "user": await hass_client(await access_token(hass, user)),
        "limited": await hass_client(await access_token(hass, limited)),
        "read_only": await hass_client(hass_read_only_access_token),
        "browser": await hass_client(await access_token(hass, hass_admin_user, BROWSER_ID)),
    }
    users = {"admin": hass_admin_user, "user": user, "limited": limited}
    return Home(hass, sim, clients, users, motion, switch, lock, tmp_path)


async def _fix(client: TestClient, issue: str, step: str) -> tuple[dict[str, Any], Any]:
    """Answer an approval's repair issue in HA's UI as the client's signed-in user."""
    response = await client.post(
        "/api/repairs/issues/fix", json={"handler": "mcp_gateway", "issue_id": issue}
    )
    assert response.status == 200, await response.text()
    flow = await response.json()
    response = await client.post(
        f"/api/repairs/issues/fix/{flow['flow_id']}", json={"next_step_id": step}
    )
    return flow, await response.json()


# --- saving ------------------------------------------------------------------------------------


async def test_save_waits_for_a_person_then_writes_what_was_approved(home: Home) -> None:
    """Nothing is saved until the owner approves under Settings → Repairs, signed in; then
    automations.yaml holds exactly the config the person was shown, and HA runs it."""
    hass = home.hass
    writes = async_capture_events(hass, EVENT_GATEWAY_WRITE)
    approvals = async_capture_events(hass, EVENT_APPROVAL)
    task = home.running("admin", home.save_args())
    pending = await home.pending()
    assert home.file() == "[]\n"
    assert not hass.states.async_entity_ids("automation")
    issue = ir.async_get(hass).async_get_issue("mcp_gateway", f"approval_{pending.id}")
    assert issue is not None
    # The summary in words first, the exact config after (not in the issue's title).
    assert pending.summary.startswith("Create the automation 'Hall light on motion': When ")
    assert "turns on, turn on" in pending.summary
    assert "(Hubitat)" in pending.summary
    assert "```yaml" not in issue.translation_placeholders["summary"]
    # The AI app's own sign-in cannot approve; the owner's browser can.
    flow, answer = await _fix(home.clients["browser"], f"approval_{pending.id}", "approve")
    shown = flow["description_placeholders"]["summary"]
    assert shown.startswith(pending.summary)
    assert answer["reason"] == "approved", answer
    result = await task
    assert not result["isError"], result
    saved = data(result)
    written = home.file()
    # Byte for byte: the YAML block the person read is the file HA's editor wrote.
    assert f"```yaml\n{written}```" in shown
    assert saved["sha256"] in shown
    assert written.startswith(f"- id: {saved['saved']}\n  alias: Hall light on motion\n")
    assert store.MARKER in written
    state = hass.states.get(saved["entity_id"])
    assert state is not None
    assert state.state == "on"
    assert state.attributes["id"] == saved["saved"]
    assert saved["approved_by"] == home.users["admin"].name
    # The logbook: who asked through which client, who approved.
    assert [e.data["outcome"] for e in approvals] == ["pending", "approved"]
    [write] = [e for e in writes if e.data["tool"] == "automations"]
    assert "created the automation 'Hall light on motion'" in write.data["summary"]
    assert f"approved by {home.users['admin'].name}" in write.data["summary"]
    # Listed as the AI's, with the backend its entities are on.
    listed = data(await home.call("admin", {"action": "list"}))["automations"]
    [item] = listed
    assert item["made_by_ai"] is True
    assert item["backends"] == ["Hubitat"]
    assert item["enabled"] is True
    # It runs: motion on the hub turns the switch on.
    switch_device = first(home.sim, "switch")
    await hass.services.async_call("switch", "turn_off", {"entity_id": home.switch}, blocking=True)
    hass.states.async_set(home.motion, "off")
    hass.states.async_set(home.motion, "on")
    await hass.async_block_till_done()
    for _ in range(100):
        if switch_device.value("switch") == "on":
            break
        await asyncio.sleep(0.02)
    assert switch_device.value("switch") == "on"


async def test_the_same_save_after_approval_saves_once(home: Home) -> None:
    """A client without a prompt hears "waiting"; the same call after the approval saves the
    one automation, and a changed config asks again."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        first_answer = await home.call("admin", home.save_args())
        assert code(first_answer) == "approval_pending"
        approval_id = data(first_answer)["error"]["details"]["approval_id"]
        assert await approval_manager(home.hass).async_decide(
            approval_id, True, user_id=home.users["admin"].id, channel=Channel.UI
        )
        other = home.save_args()
        other["config"]["mode"] = "restart"
        assert code(await home.call("admin", other)) == "approval_pending"
        assert home.file() == "[]\n"
        second = await home.call("admin", home.save_args())
    assert not second["isError"], second
    assert len(home.hass.states.async_entity_ids("automation")) == 1


async def test_save_counts_against_the_open_approvals_limit(home: Home) -> None:
    """Saving opens an approval like any sensitive call: at the user's limit of open ones
    it is refused ("busy"), nothing is written and no one is asked."""
    unlock = {"updates": [{"entity_id": home.lock, "state": "unlocked"}]}
    with (
        patch.object(approval_rules, "MAX_OPEN_PER_USER", 1),
        patch.object(approval_module, "HOLD_SECONDS", 0.05),
    ):
        assert code(await home.call("admin", unlock, name="set_state")) == "approval_pending"
        busy = await home.call("admin", home.save_args())
    assert code(busy) == "approval_busy", busy
    assert len([p for p in approval_manager(home.hass)._by_id.values() if p.open]) == 1
    assert home.file() == "[]\n"


async def test_declined_saves_nothing(home: Home) -> None:
    task = home.running("admin", home.save_args())
    pending = await home.pending()
    _, answer = await _fix(home.clients["browser"], f"approval_{pending.id}", "decline")
    assert answer["reason"] == "declined"
    assert code(await task) == "approval_declined"
    assert home.file() == "[]\n"


async def test_config_as_yaml_text(home: Home) -> None:
    """The config as YAML text (what people paste from HA's editor) is taken as the object."""
    text = (
        f"alias: Text\ntriggers:\n  - trigger: state\n    entity_id: {home.motion}\n"
        f"    to: 'on'\nactions:\n  - action: switch.turn_on\n"
        f"    target:\n      entity_id: {home.switch}\n"
    )
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.call("admin", {"action": "save", "config": text})
    assert code(answer) == "approval_pending"
    pending = await home.pending()
    assert "triggers:\n  - trigger: state" in pending.details
    # The config's keys beside it are not the tool's arguments: the schema says so.
    stray = await home.call("admin", {"action": "save", "triggers": []})
    assert code(stray) == "invalid"
    assert "accepted: action, automation, config" in data(stray)["error"]["message"]
    empty = await home.call("admin", {"action": "save"})
    assert code(empty) == "invalid"
    assert 'save needs "config"' in data(empty)["error"]["message"]


async def test_invalid_config_is_explained_in_has_words(home: Home) -> None:
    answer = await home.call(
        "admin",
        {
            "action": "save",
            "config": {
                "alias": "Broken",
                "triggers": [{"trigger": "no_such_trigger"}],
                "actions": [{"action": "switch.turn_on", "target": {"entity_id": home.switch}}],
            },
        },
    )
    assert code(answer) == "invalid"
    message = data(answer)["error"]["message"]
    assert message.startswith("Home Assistant refuses this automation: ")
    assert "no_such_trigger" in message
    assert not approval_manager(home.hass)._by_id
    unknown = await home.call(
        "admin",
        {
            "action": "save",
            "config": {
                "alias": "Ghost",
                "triggers": [{"trigger": "state", "entity_id": "binary_sensor.ghost"}],
                "actions": [{"action": "switch.turn_on", "target": {"entity_id": home.switch}}],
            },
        },
    )
    assert code(unknown) == "invalid"
    assert "binary_sensor.ghost" in data(unknown)["error"]["message"]
    not_json = await home.call("admin", {"action": "save", "config": "{: nope"})
    assert code(not_json) == "invalid"
    assert home.file() == "[]\n"


async def test_a_sensitive_action_is_said_in_bold(home: Home) -> None:
    args = home.save_args()
    args["config"]["actions"] = [{"action": "lock.unlock", "target": {"entity_id": home.lock}}]
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.call("admin", args)
    assert code(answer) == "approval_pending"
    pending = await home.pending()
    name = home.hass.states.get(home.lock).name
    assert pending.summary.startswith(
        f"**Sensitive: this automation will unlock {name} (Hubitat).**"
    )
    assert pending.entity_ids == (home.lock,)
    assert placeholders(pending, details=False)["summary"] == pending.summary


# --- rights --------------------------------------------------------------------------------


async def test_users_without_the_right(home: Home) -> None:
    """HA lets only administrators edit automations; the read-only user has no such tool."""
    refused = await home.call("user", home.save_args())
    assert code(refused) == "forbidden"
    assert "only administrators" in data(refused)["error"]["message"]
    read_only = await home.call("read_only", home.save_args())
    assert read_only["isError"]
    handler_tools = await home.clients["read_only"].post(
        URL, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=HEADERS
    )
    names = [t["name"] for t in (await handler_tools.json())["result"]["tools"]]
    assert "automations" not in names
    assert home.file() == "[]\n"
    assert not approval_manager(home.hass)._by_id


async def test_allowed_users_reach_only_what_they_may(home: Home) -> None:
    """With the owner's setting on, a user's assistant builds only over entities the user
    may read (triggers) and control (actions), and never with templates."""
    entry = next(
        e for e in home.hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    home.hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_AUTOMATIONS_FOR_USERS: True}
    )
    uncontrolled = await home.call("limited", home.save_args())
    assert code(uncontrolled) == "forbidden"
    assert "may not control" in data(uncontrolled)["error"]["message"]
    templated = home.save_args()
    templated["config"]["conditions"] = [
        {"condition": "template", "value_template": "{{ is_state('lock.x', 'locked') }}"}
    ]
    answer = await home.call("user", templated)
    assert code(answer) == "forbidden"
    assert "templates" in data(answer)["error"]["message"]
    # Not exposed to assistants: not reachable through an automation either.
    async_expose_entity(home.hass, "conversation", home.switch, False)
    hidden = await home.call("user", home.save_args())
    assert code(hidden) == "forbidden"
    assert "does not expose" in data(hidden)["error"]["message"]
    async_expose_entity(home.hass, "conversation", home.switch, True)
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        allowed = await home.call("user", home.save_args())
    assert code(allowed) == "approval_pending"
    assert home.file() == "[]\n"


# --- the rest ------------------------------------------------------------------------------


async def _saved(home: Home, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Save an automation, approved by the owner."""
    task = home.running("admin", args or home.save_args())
    pending = await home.pending()
    assert await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=home.users["admin"].id, channel=Channel.UI
    )
    result = await task
    assert not result["isError"], result
    saved: dict[str, Any] = data(result)
    return saved


async def test_delete_asks_like_saving(home: Home) -> None:
    saved = await _saved(home)
    task = home.running("admin", {"action": "delete", "automation": "hall light on motion"})
    pending = await home.pending()
    assert pending.summary.startswith("Delete the automation 'Hall light on motion': When ")
    assert saved["saved"] in pending.details
    _, answer = await _fix(home.clients["browser"], f"approval_{pending.id}", "decline")
    assert answer["reason"] == "declined"
    assert code(await task) == "approval_declined"
    assert saved["saved"] in home.file()
    task = home.running("admin", {"action": "delete", "automation": saved["entity_id"]})
    pending = await home.pending()
    _, answer = await _fix(home.clients["browser"], f"approval_{pending.id}", "approve")
    assert answer["reason"] == "approved"
    result = await task
    assert data(result)["deleted"] == saved["saved"], result
    assert home.file() == "[]\n"
    await home.hass.async_block_till_done()
    assert er.async_get(home.hass).async_get(saved["entity_id"]) is None
    assert saved["saved"] not in await store.record(home.hass).async_made()


async def test_get_disable_enable_and_explain(home: Home) -> None:
    saved = await _saved(home)
    got = data(await home.call("admin", {"action": "get", "automation": saved["saved"]}))
    assert got["config"]["triggers"][0]["entity_id"] == home.motion
    assert got["made_by_ai"] is True
    assert got["saved_through_gateway"]["approved_by"] == home.users["admin"].name
    never = data(await home.call("admin", {"action": "explain", "automation": saved["saved"]}))
    assert "runs" not in never
    assert "none of its triggers fired" in never["why_not"][-1]
    off = data(await home.call("admin", {"action": "disable", "automation": saved["saved"]}))
    assert off["enabled"] is False
    assert home.hass.states.get(saved["entity_id"]).state == "off"
    why = data(await home.call("admin", {"action": "explain", "automation": saved["saved"]}))
    assert why["why_not"][0].startswith("it is turned off")
    on = data(await home.call("admin", {"action": "enable", "automation": saved["saved"]}))
    assert on["enabled"] is True
    home.hass.states.async_set(home.motion, "off")
    home.hass.states.async_set(home.motion, "on")
    await home.hass.async_block_till_done()
    ran = data(await home.call("admin", {"action": "explain", "automation": saved["saved"]}))
    assert ran["runs"][0]["outcome"] == "ran its actions to the end", ran
    assert home.motion in str(ran["runs"][0]["trigger"])
    missing = await home.call("admin", {"action": "get", "automation": "nope"})
    assert code(missing) == "not_found"


async def test_explain_names_the_condition_that_stopped_it(home: Home) -> None:
    args = home.save_args()
    args["config"]["conditions"] = [
        {"condition": "state", "entity_id": home.switch, "state": "unavailable"}
    ]
    saved = await _saved(home, args)
    home.hass.states.async_set(home.motion, "off")
    home.hass.states.async_set(home.motion, "on")
    await home.hass.async_block_till_done()
    why = data(await home.call("admin", {"action": "explain", "automation": saved["saved"]}))
    [run] = why["runs"]
    assert run["outcome"].startswith("triggered, but a condition was false")
    name = home.hass.states.get(home.switch).name
    assert run["false_conditions"] == [f"condition/0: {name} (Hubitat) is unavailable"]


async def test_search_finds_the_tool(home: Home) -> None:
    for query in (
        "create an automation",
        "make an automation",
        "why didn't my automation run",
        "delete the automation",
    ):
        found = data(await home.call("admin", {"query": query}, name="search_tools"))
        assert found["results"][0]["tool"] == "automations", (query, found)


async def test_tools_list_cost(hass: HomeAssistant) -> None:
    """The tool's entry in tools/list stays small: under 800 bytes of compact JSON."""
    tool = GatewayHandler(hass).core_tools["automations"].definition()
    size = len(json.dumps(tool, separators=(",", ":"), ensure_ascii=False).encode())
    assert size < 800, size


async def test_which_actions_are_sensitive(home: Home) -> None:
    """Unlocking, opening a garage door and HA's generic toggle of a lock are sensitive;
    locking and switching are not."""
    hass = home.hass
    garage = entity_id(hass, home.sim, f"{first(home.sim, 'garage').id}_garage_door", "cover")

    def verbs(actions: list[dict[str, Any]]) -> list[tuple[str, str]]:
        found = references(hass, {"triggers": [], "actions": actions})
        return sensitive_actions(hass, gateway_settings(hass), found)

    assert verbs([{"action": "cover.open_cover", "target": {"entity_id": garage}}]) == [
        ("open", garage)
    ]
    assert verbs([{"action": "homeassistant.toggle", "target": {"entity_id": home.lock}}]) == [
        ("toggle", home.lock)
    ]
    assert verbs([{"action": "lock.lock", "target": {"entity_id": home.lock}}]) == []
    assert verbs([{"action": "cover.close_cover", "target": {"entity_id": garage}}]) == []
    assert verbs([{"action": "switch.turn_on", "target": {"entity_id": home.switch}}]) == []
    # Nested in a choice, still found.
    nested = [
        {
            "choose": [
                {
                    "conditions": [],
                    "sequence": [{"action": "lock.unlock", "target": {"entity_id": home.lock}}],
                }
            ]
        }
    ]
    assert verbs(nested) == [("unlock", home.lock)]


async def test_targets_by_device_and_area_are_checked_as_their_entities(home: Home) -> None:
    """A device or area target reaches the entities of the called service's domain there,
    so a user's assistant cannot reach by device what it cannot reach by entity."""
    hass = home.hass
    registry = er.async_get(hass)
    switch_entry = registry.async_get(home.switch)
    assert switch_entry is not None
    assert switch_entry.device_id is not None
    by_device = references(
        hass,
        {
            "triggers": [],
            "actions": [
                {"action": "switch.turn_on", "target": {"device_id": switch_entry.device_id}}
            ],
        },
    )
    assert home.switch in by_device.control
    assert all(e.startswith("switch.") for e in by_device.control)
    area = ar.async_get(hass).async_create("Automation test room")
    # On the device: HA 2026 gives an entity without a name of its own no area of its own.
    lock_entry = registry.async_get(home.lock)
    assert lock_entry is not None
    assert lock_entry.device_id is not None
    dr.async_get(hass).async_update_device(lock_entry.device_id, area_id=area.id)
    by_area = references(
        hass,
        {"actions": [{"action": "lock.unlock", "target": {"area_id": area.id}}]},
    )
    assert by_area.control == {home.lock}
    unknown = references(
        hass, {"actions": [{"action": "switch.turn_on", "target": {"device_id": "nope"}}]}
    )
    assert unknown.unknown == {"device nope"}
    # Over the wire: the limited user may not control the switch, by device either.
    entry = next(
        e for e in hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_AUTOMATIONS_FOR_USERS: True}
    )
    args = home.save_args()
    args["config"]["actions"] = [
        {"action": "switch.turn_on", "target": {"device_id": switch_entry.device_id}}
    ]
    refused = await home.call("limited", args)
    assert code(refused) == "forbidden"
    assert "may not control" in data(refused)["error"]["message"]


async def test_approval_off_saves_at_once_and_a_failed_write_says_so(home: Home) -> None:
    """With approval turned off by the owner the save runs at once; a file HA cannot write
    fails the call, and nothing is recorded as saved."""
    entry = next(
        e for e in home.hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    home.hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_APPROVAL: False}
    )
    with patch.object(
        compat.AutomationEditor, "async_write", side_effect=PermissionError(13, "Permission denied")
    ):
        failed = await home.call("admin", home.save_args())
    assert code(failed) == "failed"
    assert (
        "could not write automations.yaml (Permission denied)" in data(failed)["error"]["message"]
    )
    assert await store.record(home.hass).async_made() == {}
    saved = await home.call("admin", home.save_args())
    assert not saved["isError"], saved
    assert "approved_by" not in data(saved)
    assert not approval_manager(home.hass)._by_id
    assert data(saved)["saved"] in home.file()


async def test_automations_over_entities_a_user_cannot_read_are_hidden(home: Home) -> None:
    """A user who may not read the lock neither sees nor finds an automation that locks it."""
    args = home.save_args()
    args["config"]["actions"] = [{"action": "lock.lock", "target": {"entity_id": home.lock}}]
    saved = await _saved(home, args)
    listed = data(await home.call("limited", {"action": "list"}))
    assert listed["automations"] == []
    assert listed["withheld"].startswith("1 automation(s)")
    hidden = await home.call("limited", {"action": "get", "automation": saved["saved"]})
    assert code(hidden) == "not_found"
    assert "Hall light" not in data(hidden)["error"]["message"]
    assert code(await home.call("limited", {"action": "explain", "automation": saved["saved"]}))
    seen = data(await home.call("admin", {"action": "list"}))["automations"]
    assert [item["id"] for item in seen] == [saved["saved"]]
