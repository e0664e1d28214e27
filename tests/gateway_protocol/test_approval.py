"""A person approves sensitive calls, over the real wire: HA's HTTP server → the gateway →
the Hubitat backend → the simulated hub. The decision comes from the manager's channels: the
phone (HA's notify service and `mobile_app_notification_action` events), HA's UI (the repair
issue's fix flow) and the client's own prompt."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
import re
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient
from homeassistant.auth.const import GROUP_ID_ADMIN, GROUP_ID_USER
from homeassistant.auth.models import TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN, User
from homeassistant.components import persistent_notification
from homeassistant.components.repairs import repairs_flow_manager
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir, llm
from homeassistant.helpers.translation import async_get_translations
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockUser,
    async_capture_events,
    async_fire_time_changed,
    async_mock_service,
)

from custom_components.mcp_gateway.backends.hubitat.runtime import HubitatRuntime
from custom_components.mcp_gateway.core.settings import (
    CONF_APPROVAL,
    CONF_APPROVAL_ENTITIES,
    CONF_APPROVAL_EXEMPT,
    CONF_APPROVAL_PHONES,
    CONF_APPROVAL_TOOLS,
    CONF_APPROVERS,
    CONF_EXPOSED_ONLY,
)
from custom_components.mcp_gateway.framework.base import CallEffect
from custom_components.mcp_gateway.gateway.approval import (
    channels as approval_channels_module,
    gate as approval_module,
)
from custom_components.mcp_gateway.gateway.approval.channels import (
    async_setup_channels,
    placeholders,
)
from custom_components.mcp_gateway.gateway.approval.manager import (
    DATA_APPROVALS,
    EVENT_APPROVAL,
    Channel,
    Outcome,
    Pending,
    approval_manager,
)
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.llm_api import LLM_API_ID
from custom_components.mcp_gateway.logbook import async_describe_events
from custom_components.mcp_gateway.mcp.elicitation import ElicitationUnsupportedError
from custom_components.mcp_gateway.mcp.server import RequestContext
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
from tests.gateway_tools.test_llm_api import call, llm_context
from tests.hubitat.sim import Sim, entity_id, first, make_entry, setup_entry
from tests.simulation import gateway_entry


@dataclass
class Home:
    hass: HomeAssistant
    sim: Sim
    clients: dict[str, TestClient]
    users: dict[str, User]
    lock: str  # the lock's entity id
    lock_device: Any

    async def call(self, kind: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await tool_call(self.clients[kind], name, arguments)

    def unlock(self, kind: str = "admin") -> asyncio.Task[dict[str, Any]]:
        """set_state unlocking the lock, as a running request."""
        return asyncio.get_running_loop().create_task(
            self.call(
                kind, "set_state", {"updates": [{"entity_id": self.lock, "state": "unlocked"}]}
            )
        )

    async def pending(self) -> Pending:
        """The one open approval, once the gateway made it."""
        open_ = await open_approvals(self.hass)
        assert len(open_) == 1
        return open_[0]


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
) -> Home:
    assert await async_setup_component(hass, "http", {})
    assert await async_setup_component(hass, "repairs", {})
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    await setup_entry(hass, make_entry(sim))
    user = MockUser(name="Ordinary", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    user.add_to_hass(hass)
    device = first(sim, "lock")
    lock = entity_id(hass, sim, f"{device.id}_lock", "lock")
    clients = {
        "admin": await hass_client(hass_access_token),
        "user": await hass_client(await access_token(hass, user)),
        "read_only": await hass_client(hass_read_only_access_token),
        # The owner's own browser: a sign-in of its own, which never called the gateway.
        "browser": await hass_client(await access_token(hass, hass_admin_user, BROWSER_ID)),
    }
    home = Home(
        hass,
        sim,
        clients,
        {"admin": hass_admin_user, "user": user, "read_only": hass_read_only_user},
        lock,
        device,
    )
    # Locking asks nobody.
    result = await home.call(
        "admin", "set_state", {"updates": [{"entity_id": lock, "state": "locked"}]}
    )
    assert not result["isError"], result
    assert device.value("lock") == "locked"
    assert not approval_manager(hass)._by_id
    return home


async def test_unlock_waits_then_runs_once_approved(home: Home) -> None:
    """The held request runs the unlock once the owner approves, and only then."""
    events = async_capture_events(home.hass, EVENT_APPROVAL)
    task = home.unlock()
    pending = await home.pending()
    assert home.lock_device.value("lock") == "locked"
    assert pending.entity_ids == (home.lock,)
    assert await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=home.users["admin"].id, channel=Channel.UI
    )
    result = await task
    assert not result["isError"], result
    assert home.lock_device.value("lock") == "unlocked"
    assert [e.data["outcome"] for e in events] == ["pending", "approved"]
    assert events[1].data["decided_by"] == home.users["admin"].name
    # The approval is used up: the same call asks again.
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        again = await home.call(
            "admin", "set_state", {"updates": [{"entity_id": home.lock, "state": "unlocked"}]}
        )
    assert code(again) == "approval_pending"


async def test_decline_runs_nothing(home: Home) -> None:
    task = home.unlock()
    pending = await home.pending()
    assert await approval_manager(home.hass).async_decide(
        pending.id, False, user_id=home.users["admin"].id, channel=Channel.UI
    )
    result = await task
    assert code(result) == "approval_declined"
    assert home.lock_device.value("lock") == "locked"


async def test_waiting_answer_then_the_same_call_runs(home: Home) -> None:
    """A client without a prompt gets "waiting" with the id; the same call made again after
    the approval runs once."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        first_answer = await home.unlock()
        assert code(first_answer) == "approval_pending"
        approval_id = data(first_answer)["error"]["details"]["approval_id"]
        assert await approval_manager(home.hass).async_decide(
            approval_id, True, user_id=home.users["admin"].id, channel=Channel.PHONE
        )
        assert home.lock_device.value("lock") == "locked"
        second = await home.unlock()
        assert not second["isError"], second
        assert home.lock_device.value("lock") == "unlocked"


async def test_other_arguments_do_not_use_the_approval(home: Home) -> None:
    """An approval binds the exact arguments: another call waits for its own."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        first_answer = await home.unlock()
        approval_id = data(first_answer)["error"]["details"]["approval_id"]
        await approval_manager(home.hass).async_decide(
            approval_id, True, user_id=home.users["admin"].id, channel=Channel.UI
        )
        other = await home.call(
            "admin", "set_state", {"updates": [{"entity_id": home.lock, "state": "open"}]}
        )
    assert code(other) == "approval_pending"
    assert data(other)["error"]["details"]["approval_id"] != approval_id
    assert home.lock_device.value("lock") == "locked"


async def test_time_limit_ends_declined(home: Home) -> None:
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        first_answer = await home.unlock()
        assert code(first_answer) == "approval_pending"
        async_fire_time_changed(home.hass, dt_util.utcnow() + timedelta(seconds=61))
        await home.hass.async_block_till_done()
        second = await home.unlock()
    assert code(second) == "approval_expired"
    assert home.lock_device.value("lock") == "locked"


async def test_exempt_user_and_approval_off(home: Home) -> None:
    entry = next(
        e for e in home.hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    home.hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_APPROVAL_EXEMPT: [home.users["admin"].id]}
    )
    assert not (await home.unlock())["isError"]
    home.hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_APPROVAL_EXEMPT: [], CONF_APPROVAL: False}
    )
    assert not (await home.unlock())["isError"]
    assert not approval_manager(home.hass)._by_id


async def test_wrong_approver_is_ignored(home: Home, caplog: pytest.LogCaptureFixture) -> None:
    """A non-admin (not an approver by default) and the read-only user cannot approve."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        first_answer = await home.unlock()
    approval_id = data(first_answer)["error"]["details"]["approval_id"]
    manager = approval_manager(home.hass)
    for kind in ("user", "read_only"):
        assert not await manager.async_decide(
            approval_id, True, user_id=home.users[kind].id, channel=Channel.PHONE
        )
    # In the AI app only the caller answers.
    assert not await manager.async_decide(
        approval_id, True, user_id=home.users["user"].id, channel=Channel.CLIENT
    )
    assert manager.get(approval_id).outcome is Outcome.PENDING
    assert "may not approve" in caplog.text


async def test_concurrent_identical_calls_run_once(home: Home) -> None:
    first_task = home.unlock()
    pending = await home.pending()
    second_task = home.unlock()
    await asyncio.sleep(0.05)
    assert len(approval_manager(home.hass)._by_id) == 1
    await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=home.users["admin"].id, channel=Channel.UI
    )
    results = [await first_task, await second_task]
    assert sorted(str(code(r)) for r in results) == ["None", "approval_used"]


# --- the phone ------------------------------------------------------------------------------


def _phone(hass: HomeAssistant, user: User, name: str) -> None:
    """A device the mobile app registered for `user`, with its notify service, picked in the
    gateway settings to be asked."""
    phone = MockConfigEntry(
        domain="mobile_app",
        title=name,
        data={"user_id": user.id, "device_name": name, "webhook_id": f"hook-{name}"},
    )
    phone.add_to_hass(hass)
    entry = _gateway_entry(hass)
    picked = [*entry.options.get(CONF_APPROVAL_PHONES, []), phone.entry_id]
    hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_APPROVAL_PHONES: picked}
    )


def _tap(hass: HomeAssistant, user: User | None, action: str) -> None:
    """What the mobile app's webhook fires for a tap (as Home Assistant Cloud relays it,
    outside any HTTP request): the action with the secret `user`'s phone was sent (none if it
    was sent nothing), the device's user as the context."""
    approval_id = action.removeprefix("MCP_GATEWAY_APPROVE_").removeprefix("MCP_GATEWAY_DECLINE_")
    phone = next(
        c
        for c in approval_manager(hass).channels
        if isinstance(c, approval_channels_module.PhoneChannel)
    )
    for question in phone.sent.get(approval_id, ()):
        if user is not None and question.user_id == user.id:
            action = f"{action}_{question.secret}"
            break
    hass.bus.async_fire(
        "mobile_app_notification_action",
        {"action": action},
        context=Context(user_id=user.id if user is not None else None),
    )


async def test_phone_approves_and_the_call_runs_once(home: Home) -> None:
    hass = home.hass
    admin, ordinary = home.users["admin"], home.users["user"]
    _phone(hass, admin, "Owner phone")
    _phone(hass, ordinary, "Kid phone")
    sent = async_mock_service(hass, "notify", "mobile_app_owner_phone")
    not_sent = async_mock_service(hass, "notify", "mobile_app_kid_phone")
    task = home.unlock()
    pending = await home.pending()
    await hass.async_block_till_done()
    # Only the approver's device (administrators by default) is asked.
    assert not not_sent
    (ask,) = sent
    actions = ask.data["data"]["actions"]
    # Each carries a secret of its own (the approval id is no secret: the caller gets it).
    approve, decline = (a["action"] for a in actions)
    assert re.fullmatch(rf"MCP_GATEWAY_APPROVE_{re.escape(pending.id)}_[0-9a-f]{{32}}", approve)
    assert decline == approve.replace("APPROVE", "DECLINE")
    assert "Garage" in ask.data["message"] or pending.summary in ask.data["message"]
    # A tap from the other user's phone does not count.
    _tap(hass, ordinary, f"MCP_GATEWAY_APPROVE_{pending.id}")
    await hass.async_block_till_done()
    assert pending.open
    _tap(hass, admin, f"MCP_GATEWAY_APPROVE_{pending.id}")
    result = await task
    assert not result["isError"], result
    assert home.lock_device.value("lock") == "unlocked"
    await hass.async_block_till_done()
    # The question is taken off the phone; a second tap changes nothing.
    assert sent[-1].data == {
        "message": "clear_notification",
        "data": {"tag": ask.data["data"]["tag"]},
    }
    _tap(hass, admin, f"MCP_GATEWAY_APPROVE_{pending.id}")
    await hass.async_block_till_done()
    assert not approval_manager(hass)._by_id


async def test_phone_decline(home: Home) -> None:
    hass = home.hass
    _phone(hass, home.users["admin"], "Owner phone")
    async_mock_service(hass, "notify", "mobile_app_owner_phone")
    events = async_capture_events(hass, EVENT_APPROVAL)
    task = home.unlock()
    pending = await home.pending()
    _tap(hass, home.users["admin"], f"MCP_GATEWAY_DECLINE_{pending.id}")
    assert code(await task) == "approval_declined"
    assert home.lock_device.value("lock") == "locked"
    assert events[-1].data["outcome"] == "declined"
    assert events[-1].data["channel"] == "phone"


async def test_a_tap_without_a_phone_is_not_an_answer(home: Home) -> None:
    """An event fired through HA's API by an administrator with no registered device."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
    approval_id = data(answer)["error"]["details"]["approval_id"]
    _tap(home.hass, home.users["admin"], f"MCP_GATEWAY_APPROVE_{approval_id}")
    _tap(home.hass, None, f"MCP_GATEWAY_APPROVE_{approval_id}")
    await home.hass.async_block_till_done()
    assert approval_manager(home.hass).get(approval_id).outcome is Outcome.PENDING


# --- Home Assistant's UI ------------------------------------------------------------------------


async def _fix(client: TestClient, issue: str, step: str) -> tuple[int, Any]:
    response = await client.post(
        "/api/repairs/issues/fix", json={"handler": "mcp_gateway", "issue_id": issue}
    )
    if response.status != 200:
        return response.status, None
    flow = await response.json()
    assert flow["type"] == "menu", flow
    assert flow["menu_options"] == ["approve", "decline"]
    response = await client.post(
        f"/api/repairs/issues/fix/{flow['flow_id']}", json={"next_step_id": step}
    )
    return response.status, await response.json()


async def test_ui_repair_issue_approves(home: Home) -> None:
    hass = home.hass
    events = async_capture_events(hass, EVENT_APPROVAL)
    task = home.unlock()
    pending = await home.pending()
    issue = f"approval_{pending.id}"
    found = ir.async_get(hass).async_get_issue("mcp_gateway", issue)
    assert found is not None
    assert found.is_fixable
    assert found.translation_key == "approval_request"
    assert found.translation_placeholders["user"] == home.users["admin"].name
    # No notification every user would see, naming who asked for what.
    notifications = persistent_notification._async_get_or_create_notifications(hass)
    assert not notifications
    # Repairs is for administrators only: HA refuses the others itself.
    status, _ = await _fix(home.clients["user"], issue, "approve")
    assert status == 401
    status, flow = await _fix(home.clients["browser"], issue, "approve")
    assert status == 200
    # Ended with the gateway's own text ("Approved: …"), not the frontend's "repaired".
    assert (flow["type"], flow["reason"]) == ("abort", "approved"), flow
    assert flow["description_placeholders"]["summary"] == pending.summary
    result = await task
    assert not result["isError"], result
    assert home.lock_device.value("lock") == "unlocked"
    assert ir.async_get(hass).async_get_issue("mcp_gateway", issue) is None
    assert events[-1].data["channel"] == "ui"
    assert events[-1].data["decided_by"] == home.users["admin"].name


async def test_ui_decline_and_a_non_approver(home: Home, hass_admin_user: MockUser) -> None:
    hass = home.hass
    task = home.unlock()
    pending = await home.pending()
    issue = f"approval_{pending.id}"
    # Approvers named in the settings: the administrator is not one of them any more.
    entry = next(
        e for e in hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_APPROVERS: [home.users["user"].id]}
    )
    _status, flow = await _fix(home.clients["browser"], issue, "approve")
    assert flow["type"] == "abort"
    assert flow["reason"] == "approval_not_allowed", flow
    hass.config_entries.async_update_entry(entry, options={**entry.options, CONF_APPROVERS: []})
    _status, flow = await _fix(home.clients["browser"], issue, "decline")
    assert (flow["type"], flow["reason"]) == ("abort", "declined"), flow
    assert code(await task) == "approval_declined"
    assert home.lock_device.value("lock") == "locked"


async def test_ui_answer_with_a_long_lived_token_does_not_count(
    home: Home, hass_client: Any
) -> None:
    """An AI app is usually given a long-lived token: it must not approve its own call."""
    hass = home.hass
    refresh = await hass.auth.async_create_refresh_token(
        home.users["admin"],
        client_name="AI app",
        token_type=TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN,
        access_token_expiration=timedelta(days=10),
    )
    client = await hass_client(hass.auth.async_create_access_token(refresh))
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
    approval_id = data(answer)["error"]["details"]["approval_id"]
    _status, flow = await _fix(client, f"approval_{approval_id}", "approve")
    assert flow["reason"] == "approval_not_allowed", flow
    assert approval_manager(hass).get(approval_id).outcome is Outcome.PENDING


async def test_ui_answer_from_the_calling_sign_in_does_not_count(home: Home) -> None:
    """The AI app's own sign-in (an OAuth token) answering for its call is no person's answer,
    while the same owner in their browser is."""
    hass = home.hass
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
    approval_id = data(answer)["error"]["details"]["approval_id"]
    _status, flow = await _fix(home.clients["admin"], f"approval_{approval_id}", "approve")
    assert flow["reason"] == "approval_not_allowed", flow
    assert approval_manager(hass).get(approval_id).outcome is Outcome.PENDING
    _status, flow = await _fix(home.clients["browser"], f"approval_{approval_id}", "approve")
    assert flow["reason"] == "approved", flow
    assert approval_manager(hass).get(approval_id).outcome is Outcome.APPROVED


# --- restart, backend tools, kinds of user --------------------------------------------------


async def test_restart_while_pending_runs_nothing(home: Home) -> None:
    """Approvals live in memory: after a restart an old tap is no answer, and the same call
    waits for a new approval."""
    hass = home.hass
    _phone(hass, home.users["admin"], "Owner phone")
    async_mock_service(hass, "notify", "mobile_app_owner_phone")
    task = home.unlock()
    pending = await home.pending()
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    assert code(await task) == "approval_expired"
    # The next run of Home Assistant starts with no approvals at all.
    hass.data.pop(DATA_APPROVALS)
    async_setup_channels(hass)
    _tap(hass, home.users["admin"], f"MCP_GATEWAY_APPROVE_{pending.id}")
    await hass.async_block_till_done()
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        again = await home.unlock()
    assert code(again) == "approval_pending"
    assert data(again)["error"]["details"]["approval_id"] != pending.id
    assert home.lock_device.value("lock") == "locked"


async def _gateway_tool(home: Home) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    response = await home.clients["admin"].post(URL, json=body, headers=HEADERS)
    names = {tool["name"] for tool in (await response.json())["result"]["tools"]}
    (name,) = [n for n in names if n.startswith("hubitat")]
    return name


async def test_hsm_disarm_waits_arming_does_not(home: Home) -> None:
    gateway = await _gateway_tool(home)
    home.sim.hub.set_hsm_status("armedAway")
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        disarm = await home.call(
            "admin", gateway, {"tool": "hub_set_hsm", "args": {"armCommand": "disarm"}}
        )
    assert code(disarm) == "approval_pending"
    assert "hub_set_hsm (Home Hub Safety Monitor: disarm)" in data(disarm)["error"]["message"]
    assert home.sim.hub.hsm_status == "armedAway"
    arm = await home.call(
        "admin", gateway, {"tool": "hub_set_hsm", "args": {"armCommand": "armHome"}}
    )
    assert not arm["isError"], arm
    # A lock's unlock command through the backend's own tool waits too.
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        unlock = await home.call(
            "admin",
            gateway,
            {
                "tool": "hub_call_device_command",
                "args": {"deviceId": str(home.lock_device.id), "command": "unlock"},
            },
        )
    assert code(unlock) == "approval_pending"
    assert home.lock_device.value("lock") == "locked"


async def test_destructive_tool_needs_confirm_and_a_person(home: Home) -> None:
    """`confirm` stays, but never replaces a person; non-admins are refused before either."""
    gateway = await _gateway_tool(home)
    call = {"tool": "hub_reboot", "args": {}}
    unconfirmed = await home.call("admin", gateway, call)
    assert code(unconfirmed) == "confirmation_required"
    assert not approval_manager(home.hass)._by_id
    refused = await home.call("user", gateway, {**call, "confirm": True})
    assert code(refused) == "forbidden"
    assert not approval_manager(home.hass)._by_id
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        confirmed = await home.call("admin", gateway, {**call, "confirm": True})
    assert code(confirmed) == "approval_pending"


async def test_non_admin_waits_read_only_is_refused(home: Home) -> None:
    """An ordinary user's unlock waits for an approver; a read-only user's is refused by HA's
    permissions without asking anyone."""
    task = home.unlock("user")
    pending = await home.pending()
    assert pending.user_name == "Ordinary"
    # The caller cannot approve their own call from HA's side: not an approver.
    assert not await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=home.users["user"].id, channel=Channel.PHONE
    )
    await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=home.users["admin"].id, channel=Channel.PHONE
    )
    assert not (await task)["isError"]
    assert home.lock_device.value("lock") == "unlocked"
    await home.call(
        "admin", "set_state", {"updates": [{"entity_id": home.lock, "state": "locked"}]}
    )
    result = await home.unlock("read_only")
    assert result["isError"]
    assert home.lock_device.value("lock") == "locked"
    assert not [p for p in approval_manager(home.hass)._by_id.values() if p.user_name != "Ordinary"]


async def test_logbook_says_who_asked_and_who_decided(home: Home) -> None:
    """Asked (by whom, through which client), then approved by whom, where; and expiries."""
    hass = home.hass
    described: dict[str, Any] = {}
    async_describe_events(
        hass, lambda _domain, event, describe: described.update({event: describe})
    )
    describe = described[EVENT_APPROVAL]
    events = async_capture_events(hass, EVENT_APPROVAL)
    task = home.unlock()
    pending = await home.pending()
    await approval_manager(hass).async_decide(
        pending.id, True, user_id=home.users["admin"].id, channel=Channel.PHONE
    )
    await task
    asked, approved = (describe(SimpleNamespace(data=e.data)) for e in events)
    name = home.users["admin"].name
    assert asked["message"].startswith(f"approval asked by {name} via ")
    assert asked["entity_id"] == home.lock
    assert approved["message"].startswith(f"approved by {name} on the phone: ")
    assert events[0].context.user_id == home.users["admin"].id
    expired = describe(SimpleNamespace(data={**events[0].data, "outcome": "expired"}))
    assert expired["message"].startswith("nobody approved in time, declined: ")
    unused = describe(SimpleNamespace(data={**events[1].data, "outcome": "expired"}))
    assert unused["message"].startswith(f"approved by {name} on the phone but not used in time")


async def test_garage_door_opening_waits_closing_does_not(home: Home) -> None:
    garage = first(home.sim, "garage")
    cover = entity_id(home.hass, home.sim, f"{garage.id}_garage_door", "cover")
    assert home.hass.states.get(cover).attributes["device_class"] == "garage"
    close = await home.call(
        "admin", "set_state", {"updates": [{"entity_id": cover, "state": "closed"}]}
    )
    assert not close["isError"], close
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        opening = await home.call(
            "admin", "set_state", {"updates": [{"entity_id": cover, "state": "open"}]}
        )
        halfway = await home.call(
            "admin", "set_state", {"updates": [{"entity_id": cover, "position": 50}]}
        )
    assert code(opening) == "approval_pending"
    assert code(halfway) == "approval_pending"
    assert garage.value("door") == "closed"


async def test_owners_add_entities_and_tools(home: Home) -> None:
    """Entities and backend tools the settings name wait too; others do not."""
    hass = home.hass
    switch = first(home.sim, "switch")
    plug = entity_id(hass, home.sim, f"{switch.id}_switch", "switch")
    gateway = await _gateway_tool(home)
    command = {
        "tool": "hub_call_device_command",
        "args": {"deviceId": str(switch.id), "command": "on"},
    }
    assert not (await home.call("admin", gateway, command))["isError"]
    entry = next(
        e for e in hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    hass.config_entries.async_update_entry(
        entry,
        options={
            **entry.options,
            CONF_APPROVAL_ENTITIES: [plug],
            CONF_APPROVAL_TOOLS: ["hub_get_device"],
        },
    )
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        by_entity = await home.call(
            "admin", "set_state", {"updates": [{"entity_id": plug, "state": "off"}]}
        )
        by_backend = await home.call(
            "admin", gateway, {**command, "args": {**command["args"], "command": "off"}}
        )
        by_tool = await home.call(
            "admin", gateway, {"tool": "hub_get_device", "args": {"deviceId": str(switch.id)}}
        )
    assert code(by_entity) == "approval_pending"
    assert code(by_backend) == "approval_pending"
    assert code(by_tool) == "approval_pending"
    # A read changes nothing: the approver is asked about the read, not about changes.
    asked = by_tool["content"][0]["text"]
    assert "hub_get_device" in asked
    assert "change" not in asked
    assert switch.value("switch") == "on"


async def test_a_read_the_backend_says_stores_unread_actions_waits(home: Home) -> None:
    """A call its class makes a read changes nothing, unless its backend says otherwise:
    what the backend declares for it is weighed like a write's."""
    switch = first(home.sim, "switch")
    gateway = await _gateway_tool(home)
    read = {"tool": "hub_get_device", "args": {"deviceId": str(switch.id)}}
    assert not (await home.call("admin", gateway, read))["isError"]
    with (
        patch.object(HubitatRuntime, "call_effect", return_value=CallEffect(unread=True)),
        patch.object(approval_module, "HOLD_SECONDS", 0.05),
    ):
        held = await home.call("admin", gateway, read)
    assert code(held) == "approval_pending"
    assert "cannot read" in held["content"][0]["text"]


async def test_a_client_that_cannot_ask_is_held_briefly(home: Home) -> None:
    """A client that declared elicitation but cannot show the form leaves the call to the
    short hold, not to the whole time limit."""

    async def cannot(*_args: Any, **_kwargs: Any) -> Any:
        raise ElicitationUnsupportedError

    handler = GatewayHandler(home.hass)
    ctx = RequestContext("2025-11-25", "Some app", home.users["admin"], 1, elicit=cannot)
    started = asyncio.get_running_loop().time()
    with patch.object(approval_module, "HOLD_SECONDS", 0.2):
        result = await handler.call_tool(
            ctx, "set_state", {"updates": [{"entity_id": home.lock, "state": "unlocked"}]}
        )
    assert code(result) == "approval_pending"
    assert asyncio.get_running_loop().time() - started < 5


async def test_home_assistants_own_assistants_wait_too(home: Home) -> None:
    """The LLM API (Assist, HA's MCP server) shares the handler, and so the gate."""
    instance = await llm.async_get_api(home.hass, LLM_API_ID, llm_context(home.users["admin"].id))
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await call(
            instance, "set_state", {"updates": [{"entity_id": home.lock, "state": "unlocked"}]}
        )
    assert answer["error"]["code"] == "approval_pending"
    assert home.lock_device.value("lock") == "locked"


@pytest.mark.parametrize("language", ["en", "de", "fr"])
async def test_every_approval_text_gets_its_placeholders(home: Home, language: str) -> None:
    """The issue, its flow and the notifications use only what placeholders() gives."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
    pending = approval_manager(home.hass).get(data(answer)["error"]["details"]["approval_id"])
    given = set(placeholders(pending))
    texts = {
        **await async_get_translations(home.hass, language, "issues", ["mcp_gateway"]),
        **await async_get_translations(home.hass, language, "exceptions", ["mcp_gateway"]),
    }
    approval_texts = {k: v for k, v in texts.items() if ".approval_" in k}
    assert len(approval_texts) >= 10
    for key, text in approval_texts.items():
        assert set(re.findall(r"{(\w+)}", text)) <= given, key


async def test_concurrent_approvals_are_independent(home: Home) -> None:
    """Two users' calls wait side by side; an approval of one runs that one only. A
    non-admin named as approver decides on the phone, for what they may control."""
    hass = home.hass
    admin, ordinary = home.users["admin"], home.users["user"]
    entry = next(
        e for e in hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    hass.config_entries.async_update_entry(
        entry, options={**entry.options, CONF_APPROVERS: [ordinary.id]}
    )
    _phone(hass, ordinary, "Kid phone")
    sent = async_mock_service(hass, "notify", "mobile_app_kid_phone")
    gateway = await _gateway_tool(home)
    home.sim.hub.set_hsm_status("armedAway")
    manager = approval_manager(hass)
    unlock = home.unlock("admin")
    first_pending = await home.pending()
    disarm = asyncio.get_running_loop().create_task(
        home.call("admin", gateway, {"tool": "hub_set_hsm", "args": {"armCommand": "disarm"}})
    )
    for _ in range(200):
        if len([p for p in manager._by_id.values() if p.open]) == 2:
            break
        await asyncio.sleep(0.01)
    (second,) = [p for p in manager._by_id.values() if p.open and p is not first_pending]
    await hass.async_block_till_done()
    # One question per request on the approver's phone.
    assert len(sent) == 2
    _tap(hass, ordinary, f"MCP_GATEWAY_APPROVE_{first_pending.id}")
    assert not (await unlock)["isError"]
    assert second.open
    _tap(hass, ordinary, f"MCP_GATEWAY_DECLINE_{second.id}")
    assert code(await disarm) == "approval_declined"
    assert home.lock_device.value("lock") == "unlocked"
    assert home.sim.hub.hsm_status == "armedAway"
    # The administrator is no approver any more: their tap is ignored.
    assert not await manager.async_decide(
        first_pending.id, False, user_id=admin.id, channel=Channel.PHONE
    )


async def test_an_approval_not_used_in_time_runs_nothing(home: Home) -> None:
    """An approval waits for its call only as long as the time limit."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
        approval_id = data(answer)["error"]["details"]["approval_id"]
        assert await approval_manager(home.hass).async_decide(
            approval_id, True, user_id=home.users["admin"].id, channel=Channel.UI
        )
        async_fire_time_changed(home.hass, dt_util.utcnow() + timedelta(seconds=61))
        await home.hass.async_block_till_done()
        late = await home.unlock()
    assert code(late) == "approval_expired"
    assert home.lock_device.value("lock") == "locked"


# --- failures, stray answers, answers that no longer count ----------------------------------


def _gateway_entry(hass: HomeAssistant) -> MockConfigEntry:
    return next(
        e for e in hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )


async def test_an_unreachable_phone_and_stray_taps(
    home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    """A phone whose push fails does not keep the approver's other phone from asking; taps of
    other notifications, or without an action, answer nothing; setting the channels up again
    adds none (one tap, one decision)."""
    hass = home.hass
    admin = home.users["admin"]
    _phone(hass, admin, "Old phone")
    _phone(hass, admin, "Owner phone")

    async def unreachable(_call: Any) -> None:
        raise HomeAssistantError("push failed")

    hass.services.async_register("notify", "mobile_app_old_phone", unreachable)
    sent = async_mock_service(hass, "notify", "mobile_app_owner_phone")
    async_setup_channels(hass)
    assert len(approval_manager(hass).channels) == 2
    events = async_capture_events(hass, EVENT_APPROVAL)
    task = home.unlock()
    pending = await home.pending()
    await hass.async_block_till_done()
    assert "Could not reach mobile_app_old_phone for an approval" in caplog.text
    assert len(sent) == 1
    for action in (None, 7, f"OTHER_APP_APPROVE_{pending.id}"):
        hass.bus.async_fire(
            "mobile_app_notification_action", {"action": action}, context=Context(user_id=admin.id)
        )
    await hass.async_block_till_done()
    assert pending.open
    _tap(hass, admin, f"MCP_GATEWAY_APPROVE_{pending.id}")
    assert not (await task)["isError"]
    assert home.lock_device.value("lock") == "unlocked"
    assert [e.data["outcome"] for e in events] == ["pending", "approved"]


async def test_the_phone_speaks_home_assistants_language(home: Home) -> None:
    hass = home.hass
    hass.config.language = "de"
    _phone(hass, home.users["admin"], "Owner phone")
    sent = async_mock_service(hass, "notify", "mobile_app_owner_phone")
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        await home.unlock()
    await hass.async_block_till_done()
    (ask,) = sent
    assert ask.data["title"] == "Diese Aktion genehmigen?"
    assert "Angefragt von" in ask.data["message"]
    assert [a["title"] for a in ask.data["data"]["actions"]] != ["Approve", "Decline"]


async def test_a_failing_channel_keeps_the_others(
    home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    """Repairs failing to take the request neither stops the phone nor the call; a request
    left in Repairs after its end (its removal failed) answers "already ended"."""
    hass = home.hass
    _phone(hass, home.users["admin"], "Owner phone")
    sent = async_mock_service(hass, "notify", "mobile_app_owner_phone")
    ui = approval_channels_module.UiChannel
    with patch.object(ui, "async_close", side_effect=OSError):
        with patch.object(ui, "async_open", side_effect=OSError):
            task = home.unlock()
            pending = await home.pending()
            await hass.async_block_till_done()
        assert "Could not ask for approval through ui" in caplog.text
        assert len(sent) == 1  # the phone asked all the same
        # The issue as the channel would have made it, so the page can still open it.
        ir.async_create_issue(
            hass,
            "mcp_gateway",
            f"approval_{pending.id}",
            is_fixable=True,
            severity=ir.IssueSeverity.WARNING,
            translation_key="approval_request",
            data={"approval_id": pending.id},
        )
        _tap(hass, home.users["admin"], f"MCP_GATEWAY_APPROVE_{pending.id}")
        assert not (await task)["isError"]
        await hass.async_block_till_done()
    assert "Could not withdraw an approval request from ui" in caplog.text
    assert home.lock_device.value("lock") == "unlocked"
    response = await home.clients["browser"].post(
        "/api/repairs/issues/fix",
        json={"handler": "mcp_gateway", "issue_id": f"approval_{pending.id}"},
    )
    flow = await response.json()
    assert (flow["type"], flow["reason"]) == ("abort", "approval_ended"), flow


async def test_answered_elsewhere_while_the_page_shows_the_menu(home: Home) -> None:
    """Two approvers: the second's menu was open while the first decided on the phone."""
    hass = home.hass
    task = home.unlock()
    pending = await home.pending()
    client = home.clients["browser"]
    response = await client.post(
        "/api/repairs/issues/fix",
        json={"handler": "mcp_gateway", "issue_id": f"approval_{pending.id}"},
    )
    flow = await response.json()
    assert flow["type"] == "menu"
    assert await approval_manager(hass).async_decide(
        pending.id, False, user_id=home.users["admin"].id, channel=Channel.PHONE
    )
    response = await client.post(
        f"/api/repairs/issues/fix/{flow['flow_id']}", json={"next_step_id": "approve"}
    )
    answer = await response.json()
    assert (answer["type"], answer["reason"]) == ("abort", "approval_ended"), answer
    assert code(await task) == "approval_declined"
    assert home.lock_device.value("lock") == "locked"


async def test_an_answer_from_no_signed_in_page_does_not_count(home: Home) -> None:
    """The fix flow run from code, outside any HTTP request, has no person behind it."""
    hass = home.hass
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
    approval_id = data(answer)["error"]["details"]["approval_id"]
    manager = repairs_flow_manager(hass)
    assert manager is not None
    flow = await manager.async_init("mcp_gateway", data={"issue_id": f"approval_{approval_id}"})
    assert flow["type"] == "menu"
    result = await manager.async_configure(flow["flow_id"], {"next_step_id": "approve"})
    assert (result["type"], result["reason"]) == ("abort", "approval_not_allowed")
    assert approval_manager(hass).get(approval_id).outcome is Outcome.PENDING


async def test_another_fixable_issue_is_only_confirmed(home: Home) -> None:
    """An issue of the integration that carries no approval is confirmed, never decides."""
    ir.async_create_issue(
        home.hass,
        "mcp_gateway",
        "approval_lost",
        is_fixable=True,
        severity=ir.IssueSeverity.WARNING,
        translation_key="approval_request",
    )
    response = await home.clients["browser"].post(
        "/api/repairs/issues/fix", json={"handler": "mcp_gateway", "issue_id": "approval_lost"}
    )
    flow = await response.json()
    assert (flow["type"], flow["step_id"]) == ("form", "confirm"), flow


async def test_only_active_approvers_with_the_rights_decide(
    home: Home, hass_read_only_user: MockUser
) -> None:
    """A deactivated administrator, and a named approver who may only read, do not count."""
    hass = home.hass
    other_admin = MockUser(name="Away", groups=[await hass.auth.async_get_group(GROUP_ID_ADMIN)])
    other_admin.add_to_hass(hass)
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        answer = await home.unlock()
    approval_id = data(answer)["error"]["details"]["approval_id"]
    manager = approval_manager(hass)
    entry = _gateway_entry(hass)
    hass.config_entries.async_update_entry(
        entry,
        options={**entry.options, CONF_APPROVERS: [other_admin.id, hass_read_only_user.id]},
    )
    await hass.auth.async_deactivate_user(other_admin)
    assert not await manager.async_decide(
        approval_id, True, user_id=other_admin.id, channel=Channel.UI
    )
    assert not await manager.async_decide(
        approval_id, True, user_id=hass_read_only_user.id, channel=Channel.PHONE
    )
    assert manager.get(approval_id).outcome is Outcome.PENDING


async def test_what_asks_nobody(home: Home) -> None:
    """Reading through a backend tool, a light, a shade opening: no approval. Disarming the
    alarm panel waits."""
    hass = home.hass
    gateway = await _gateway_tool(home)
    light = first(home.sim, "dimmer")
    shade = first(home.sim, "shade")
    read = await home.call(
        "admin", gateway, {"tool": "hub_get_device", "args": {"deviceId": str(light.id)}}
    )
    assert not read["isError"], read
    on = await home.call(
        "admin",
        "set_state",
        {
            "updates": [
                {
                    "entity_id": entity_id(hass, home.sim, f"{light.id}_light", "light"),
                    "state": "on",
                }
            ]
        },
    )
    assert not on["isError"], on
    cover = entity_id(hass, home.sim, f"{shade.id}_shade", "cover")
    opening = await home.call(
        "admin", "set_state", {"updates": [{"entity_id": cover, "state": "open"}]}
    )
    assert not opening["isError"], opening
    by_tool = await home.call(
        "admin",
        gateway,
        {"tool": "hub_call_device_command", "args": {"deviceId": str(shade.id), "command": "open"}},
    )
    assert not by_tool["isError"], by_tool
    assert not approval_manager(hass)._by_id
    home.sim.hub.set_hsm_status("armedAway")
    alarm = entity_id(hass, home.sim, "hub_hsm", "alarm_control_panel")
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        disarm = await home.call(
            "admin", "set_state", {"updates": [{"entity_id": alarm, "state": "disarmed"}]}
        )
    assert code(disarm) == "approval_pending"
    assert home.sim.hub.hsm_status == "armedAway"
