"""The phone channel attacked over the real wire: Home Assistant's own mobile_app (devices
registered through POST /api/mobile_app/registrations, taps fired through their webhooks), its
REST API and its websocket API, against the gateway's approval of an unlock.

The AI app holds the owner's tokens (a long-lived one, and an OAuth sign-in that calls the
gateway) and does with them whatever Home Assistant lets it: fire the tap's event itself,
register a "phone" of its own and tap through that, and even carry the notification's secret
(as if it had read it). Only the owner's real phone, picked in the gateway settings, answers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta
import json
import sys
import types
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient
from homeassistant.auth.models import TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN, User
from homeassistant.const import EVENT_HOMEASSISTANT_FINAL_WRITE
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import (
    MockUser,
    async_mock_service,
)

from custom_components.mcp_gateway.gateway.approval import gate as approval_module
from custom_components.mcp_gateway.gateway.approval.channels import async_setup_channels
from custom_components.mcp_gateway.gateway.approval.manager import (
    DATA_APPROVALS,
    Outcome,
    Pending,
    approval_manager,
)
from custom_components.mcp_gateway.gateway.approval.phones import (
    DATA_SIGN_INS,
    async_pickable_phones,
    async_setup_sign_ins,
    machine_token,
)
from tests.approvals import open_approvals, tool_call
from tests.hubitat.sim import Sim, entity_id, first, make_entry, setup_entry
from tests.simulation import gateway_entry

EVENT = "mobile_app_notification_action"
# The gateway settings' keys, spelled out.
APPROVAL_PHONES = "approval_phones"


@pytest.fixture
def nacl_stub(monkeypatch: pytest.MonkeyPatch) -> None:
    """mobile_app imports PyNaCl at module level for encrypted webhooks; the test
    environment does not ship it, and the devices here do not encrypt (supports_encryption
    false), so names suffice."""
    try:
        import nacl.secret  # noqa: F401
    except ImportError:
        modules = {
            name: types.ModuleType(name)
            for name in ("nacl", "nacl.encoding", "nacl.secret", "nacl.exceptions")
        }
        for encoder in ("Base64Encoder", "HexEncoder", "RawEncoder"):
            setattr(modules["nacl.encoding"], encoder, type(encoder, (), {}))
        modules["nacl.secret"].SecretBox = type("SecretBox", (), {"KEY_SIZE": 32})  # type: ignore[attr-defined]
        modules["nacl.exceptions"].CryptoError = type("CryptoError", (Exception,), {})  # type: ignore[attr-defined]
        for name, module in modules.items():
            monkeypatch.setitem(sys.modules, name, module)


@dataclass
class Wire:
    hass: HomeAssistant
    owner: User
    clients: dict[str, TestClient]
    tokens: dict[str, str]
    hooks: dict[str, str]  # device name → its webhook id
    entries: dict[str, str]  # device name → its mobile_app config entry id
    sent: dict[str, list[Any]]  # device name → notify calls it got
    lock: str
    device: Any
    ws_client: Any

    async def unlock(
        self, kind: str = "ai_oauth", state: str = "unlocked"
    ) -> asyncio.Task[dict[str, Any]]:
        arguments = {"updates": [{"entity_id": self.lock, "state": state}]}
        return asyncio.get_running_loop().create_task(
            tool_call(self.clients[kind], "set_state", arguments)
        )

    async def pending(self) -> Pending:
        return (await open_approvals(self.hass))[0]

    async def tap_webhook(self, device: str, action: str) -> None:
        """What the mobile app sends when a notification's button is tapped on `device`."""
        response = await self.clients["anonymous"].post(
            f"/api/webhook/{self.hooks[device]}",
            json={
                "type": "fire_event",
                "data": {"event_type": EVENT, "event_data": {"action": action}},
            },
        )
        assert response.status == 200, await response.text()

    async def webhook_over_websocket(self, kind: str, device: str, action: str) -> None:
        """Home Assistant's `webhook/handle` websocket command: any signed-in user may hand
        any webhook a body (here even the owner's phone's, as if its id had leaked)."""
        ws = await self.ws_client(self.hass, self.tokens[kind])
        body = {
            "type": "fire_event",
            "data": {"event_type": EVENT, "event_data": {"action": action}},
        }
        await ws.send_json(
            {
                "id": 1,
                "type": "webhook/handle",
                "webhook_id": self.hooks[device],
                "method": "POST",
                "body": json.dumps(body),
                "headers": {"Content-Type": "application/json"},
            }
        )
        answer = await ws.receive_json()
        assert answer["success"], answer
        assert answer["result"]["status"] == 200, answer
        await ws.close()

    async def fire_rest(self, kind: str, action: str) -> None:
        response = await self.clients[kind].post(f"/api/events/{EVENT}", json={"action": action})
        assert response.status == 200, await response.text()

    async def fire_websocket(self, kind: str, action: str) -> None:
        ws = await self.ws_client(self.hass, self.tokens[kind])
        await ws.send_json(
            {"id": 1, "type": "fire_event", "event_type": EVENT, "event_data": {"action": action}}
        )
        answer = await ws.receive_json()
        assert answer["success"], answer
        await ws.close()


async def _register(client: TestClient, name: str, device_id: str | None = None) -> str:
    """Register a device the way the Home Assistant app does; its webhook id."""
    response = await client.post(
        "/api/mobile_app/registrations",
        json={
            "app_id": "io.robbie.HomeAssistant",
            "app_name": "Home Assistant",
            "app_version": "2025.1",
            "device_name": name,
            "device_id": device_id or name.lower().replace(" ", "-"),
            "manufacturer": "Apple",
            "model": "iPhone",
            "os_name": "iOS",
            "os_version": "18.1",
            "supports_encryption": False,
        },
    )
    assert response.status == 201, await response.text()
    webhook_id: str = (await response.json())["webhook_id"]
    return webhook_id


@pytest.fixture(autouse=True)
def short_hold() -> None:
    """Unlike the matrix, these calls stay held open while the phone is asked: the tap (or
    none) decides the very call that asked, as it does for a person."""


@pytest.fixture
async def wire(
    hass: HomeAssistant,
    *,
    nacl_stub: None,
    sim: Sim,
    hass_client: Any,
    hass_client_no_auth: Any,
    hass_ws_client: Any,
    hass_admin_user: MockUser,
) -> Wire:
    for component in ("http", "api", "websocket_api", "config", "repairs", "mobile_app"):
        assert await async_setup_component(hass, component, {})
    gateway_entry({"exposed_only": False}).add_to_hass(hass)
    await setup_entry(hass, make_entry(sim))
    owner = hass_admin_user
    device = first(sim, "lock")
    lock = entity_id(hass, sim, f"{device.id}_lock", "lock")

    long_lived = await hass.auth.async_create_refresh_token(
        owner,
        client_name="AI app",
        token_type=TOKEN_TYPE_LONG_LIVED_ACCESS_TOKEN,
        access_token_expiration=timedelta(days=10),
    )
    oauth = await hass.auth.async_create_refresh_token(owner, "https://ai.example/")
    phone_app = await hass.auth.async_create_refresh_token(owner, "https://home-assistant.io/iOS")
    browser = await hass.auth.async_create_refresh_token(owner, "http://homeassistant.local/")
    tokens = {
        "ai_llat": hass.auth.async_create_access_token(long_lived),
        "ai_oauth": hass.auth.async_create_access_token(oauth),
        "phone_app": hass.auth.async_create_access_token(phone_app),
        "browser": hass.auth.async_create_access_token(browser),
    }
    clients = {kind: await hass_client(token) for kind, token in tokens.items()}
    clients["anonymous"] = await hass_client_no_auth()

    # The AI app's OAuth sign-in calls the gateway (locking asks nobody) before registering.
    locked = await tool_call(
        clients["ai_oauth"], "set_state", {"updates": [{"entity_id": lock, "state": "locked"}]}
    )
    assert not locked["isError"]

    hooks = {
        "Owner iPhone": await _register(clients["phone_app"], "Owner iPhone"),
        "AI phone": await _register(clients["ai_llat"], "AI phone"),
        "AI sign-in phone": await _register(clients["ai_oauth"], "AI sign-in phone"),
    }
    await hass.async_block_till_done()
    entries = {
        entry.data["device_name"]: entry.entry_id
        for entry in hass.config_entries.async_entries("mobile_app")
    }
    assert set(entries) == set(hooks)
    sent = {
        name: async_mock_service(hass, "notify", f"mobile_app_{slug}")
        for name, slug in (
            ("Owner iPhone", "owner_iphone"),
            ("AI phone", "ai_phone"),
            ("AI sign-in phone", "ai_sign_in_phone"),
        )
    }
    return Wire(hass, owner, clients, tokens, hooks, entries, sent, lock, device, hass_ws_client)


def _pick(wire: Wire, *devices: str) -> None:
    """The gateway settings with these devices picked (as an administrator who picked the
    AI's devices by mistake would store them)."""
    entry = next(
        e for e in wire.hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    wire.hass.config_entries.async_update_entry(
        entry, options={**entry.options, APPROVAL_PHONES: [wire.entries[d] for d in devices]}
    )


def _actions(call: Any) -> tuple[str, str]:
    approve, decline = (action["action"] for action in call.data["data"]["actions"])
    return approve, decline


async def test_the_ai_app_cannot_answer_on_any_channel(wire: Wire) -> None:
    """Every way the AI app's tokens can fire the tap's event, even carrying the secret the
    owner's phone got: nothing counts. Then the owner taps Approve on the phone: it runs."""
    hass = wire.hass
    _pick(wire, "Owner iPhone", "AI phone", "AI sign-in phone")
    task = await wire.unlock()
    pending = await wire.pending()
    await hass.async_block_till_done()
    (ask,) = wire.sent["Owner iPhone"]
    approve, _decline = _actions(ask)
    bare = f"MCP_GATEWAY_APPROVE_{pending.id}"  # what the caller learns: the approval id

    for action in (bare, approve):
        await wire.fire_rest("ai_llat", action)
        await wire.fire_rest("ai_oauth", action)
        await wire.fire_websocket("ai_llat", action)
        await wire.fire_websocket("ai_oauth", action)
        await wire.tap_webhook("AI phone", action)
        await wire.tap_webhook("AI sign-in phone", action)
        for device in ("Owner iPhone", "AI phone"):
            await wire.webhook_over_websocket("ai_oauth", device, action)
        await hass.async_block_till_done()
        assert pending.open, action
    # The owner's own phone with the bare approval id, or a guessed secret: nothing.
    await wire.tap_webhook("Owner iPhone", bare)
    await wire.tap_webhook("Owner iPhone", f"{bare}_{'0' * 32}")
    await hass.async_block_till_done()
    assert pending.open
    assert wire.device.value("lock") == "locked"
    # Only the owner's real phone was asked: never a device the AI app's tokens registered,
    # even picked by mistake.
    assert wire.sent["AI phone"] == []
    assert wire.sent["AI sign-in phone"] == []

    await wire.tap_webhook("Owner iPhone", approve)
    result = await task
    assert not result["isError"], result
    assert wire.device.value("lock") == "unlocked"


async def test_a_secret_answers_only_its_own_request(wire: Wire) -> None:
    """Two requests: the secret of one, sent back through the right phone, does not decide
    the other; a decline is a decline; a used secret answers nothing more."""
    hass = wire.hass
    _pick(wire, "Owner iPhone")
    first_task = await wire.unlock()
    first_pending = await wire.pending()
    await hass.async_block_till_done()
    (first_ask,) = wire.sent["Owner iPhone"]
    first_approve, first_decline = _actions(first_ask)
    # A second request: opening the lock (other arguments, so an approval of its own).
    second_task = await wire.unlock("ai_llat", "open")
    for _ in range(300):
        if len([p for p in approval_manager(hass)._by_id.values() if p.open]) == 2:
            break
        await asyncio.sleep(0.01)
    (second,) = [
        p for p in approval_manager(hass)._by_id.values() if p.open and p is not first_pending
    ]
    await hass.async_block_till_done()
    second_approve, _ = _actions(wire.sent["Owner iPhone"][1])
    # The first request's secret under the second's id: nothing.
    secret = first_approve.rsplit("_", 1)[1]
    await wire.tap_webhook("Owner iPhone", f"MCP_GATEWAY_APPROVE_{second.id}_{secret}")
    await hass.async_block_till_done()
    assert second.open
    await wire.tap_webhook("Owner iPhone", first_decline)
    first_result = await first_task
    assert first_result["isError"]
    assert wire.device.value("lock") == "locked"
    await wire.tap_webhook("Owner iPhone", first_approve)  # spent with its request
    await hass.async_block_till_done()
    assert second.open
    await wire.tap_webhook("Owner iPhone", second_approve)
    await second_task
    assert second.outcome is Outcome.USED


async def test_no_phone_is_asked_until_one_is_picked(wire: Wire) -> None:
    """The mobile app registering a device for an approver does not make it an approver's
    phone: without a pick no phone is asked, and a tap through it answers nothing."""
    hass = wire.hass
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        result = await (await wire.unlock())
    pending = await wire.pending()
    await hass.async_block_till_done()
    assert result["isError"]
    assert all(calls == [] for calls in wire.sent.values())
    await wire.tap_webhook("Owner iPhone", f"MCP_GATEWAY_APPROVE_{pending.id}")
    await hass.async_block_till_done()
    assert pending.open
    assert wire.device.value("lock") == "locked"


async def test_phones_are_picked_from_a_persons_sign_in(wire: Wire) -> None:
    """The gateway settings offer only phones no AI token registered, and only a person's
    own sign-in changes them: the AI app's tokens are refused over REST."""
    hass = wire.hass
    entry = next(
        e for e in hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )

    async def submit(kind: str) -> dict[str, Any]:
        client = wire.clients[kind]
        response = await client.post(
            "/api/config/config_entries/options/flow", json={"handler": entry.entry_id}
        )
        assert response.status == 200, await response.text()
        form = await response.json()
        (field,) = [f for f in form["data_schema"] if f["name"] == APPROVAL_PHONES]
        offered = {o["value"] for o in field["selector"]["select"]["options"]}
        assert offered == {wire.entries["Owner iPhone"]}
        response = await client.post(
            f"/api/config/config_entries/options/flow/{form['flow_id']}",
            json={APPROVAL_PHONES: [wire.entries["Owner iPhone"]], "exposed_only": False},
        )
        answer: dict[str, Any] = await response.json()
        return answer

    for kind in ("ai_llat", "ai_oauth"):
        refused = await submit(kind)
        assert refused["type"] == "form", refused
        assert refused["errors"] == {"base": "signed_in_person_needed"}
        assert APPROVAL_PHONES not in entry.options
    stored = await submit("browser")
    assert stored["type"] == "create_entry", stored
    assert entry.options[APPROVAL_PHONES] == [wire.entries["Owner iPhone"]]


async def test_the_ai_sign_in_stays_known_after_a_restart(
    wire: Wire, hass_storage: dict[str, Any]
) -> None:
    """Which sign-ins called the gateway, and which token registered which device, outlive a
    restart: the AI app's sign-in does not become a person's until it calls again."""
    hass = wire.hass
    oauth = hass.auth.async_validate_access_token(wire.tokens["ai_oauth"])
    phone_app = hass.auth.async_validate_access_token(wire.tokens["phone_app"])
    assert oauth is not None
    assert phone_app is not None
    # Home Assistant stops: what waits to be written is written.
    hass.bus.async_fire(EVENT_HOMEASSISTANT_FINAL_WRITE)
    await hass.async_block_till_done()
    stored = hass_storage["mcp_gateway.sign_ins"]["data"]
    assert stored["callers"] == [oauth.id]
    by_device = {name: stored["registrations"][entry_id] for name, entry_id in wire.entries.items()}
    assert by_device["Owner iPhone"] == {"token_id": phone_app.id, "long_lived": False}
    assert by_device["AI phone"]["long_lived"] is True
    assert by_device["AI sign-in phone"] == {"token_id": oauth.id, "long_lived": False}

    # Home Assistant starts again: nothing in memory, the notes from storage.
    hass.data.pop(DATA_APPROVALS)
    hass.data.pop(DATA_SIGN_INS)
    await async_setup_sign_ins(hass)
    assert not approval_manager(hass).is_caller_token(oauth.id)
    assert machine_token(hass, oauth.id)
    assert not machine_token(hass, phone_app.id)
    assert [name for _, name in await async_pickable_phones(hass)] == [
        f"Owner iPhone ({wire.owner.name})"
    ]
    # A request waiting under Settings → Repairs: the AI app's sign-in cannot approve it,
    # the owner's browser can.
    async_setup_channels(hass)
    pending = await approval_manager(hass).async_request(
        wire.owner,
        "Some app",
        tool="set_state",
        arguments={"updates": [{"entity_id": wire.lock, "state": "unlocked"}]},
        summary="Garage Lock → unlocked",
        entity_ids=(wire.lock,),
    )
    issue = {"handler": "mcp_gateway", "issue_id": f"approval_{pending.id}"}
    for kind, reason in (("ai_oauth", "approval_not_allowed"), ("browser", "approved")):
        response = await wire.clients[kind].post("/api/repairs/issues/fix", json=issue)
        flow = await response.json()
        response = await wire.clients[kind].post(
            f"/api/repairs/issues/fix/{flow['flow_id']}", json={"next_step_id": "approve"}
        )
        assert (await response.json())["reason"] == reason
    assert pending.outcome is Outcome.APPROVED
    await approval_manager(hass).async_consume(pending)


async def test_a_device_named_like_the_owners_phone_gets_no_question(
    wire: Wire, caplog: pytest.LogCaptureFixture
) -> None:
    """The mobile app names a device's notify service after the device's name. The AI app
    registering a device of the same name as the owner's phone could receive the question
    meant for the phone: then no phone of that name is asked."""
    hass = wire.hass
    await _register(wire.clients["ai_llat"], "Owner iPhone", "another-device")
    await hass.async_block_till_done()
    assert len(hass.config_entries.async_entries("mobile_app")) == 4
    _pick(wire, "Owner iPhone")
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        result = await (await wire.unlock())
    await hass.async_block_till_done()
    assert result["isError"]
    assert wire.sent["Owner iPhone"] == []
    assert "another mobile app device has its name" in caplog.text
