"""A person approves sensitive calls, over the real wire: HA's HTTP server → the gateway →
the Hubitat backend → the simulated hub. The decision comes from the manager's channels: the
phone (HA's notify service and `mobile_app_notification_action` events), HA's UI (the repair
issue's fix flow) and the client's own prompt."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
import json
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient, TestServer
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockUser,
    async_capture_events,
    async_fire_time_changed,
)

from custom_components.mcp_gateway.gateway import approval as approval_module
from custom_components.mcp_gateway.gateway.approval import (
    EVENT_APPROVAL,
    Channel,
    Outcome,
    Pending,
    approval_manager,
)
from custom_components.mcp_gateway.gateway.settings import (
    CONF_APPROVAL,
    CONF_APPROVAL_EXEMPT,
    CONF_EXPOSED_ONLY,
)
from tests.hubitat.sim import Sim, entity_id, first, make_entry, setup_entry
from tests.simulation import gateway_entry
from tests.simulators.hubitat import create_app

pytestmark = pytest.mark.approval

URL = "/api/mcp_gateway"
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
CLIENT_ID = "https://client.example/"


@dataclass
class Home:
    hass: HomeAssistant
    sim: Sim
    clients: dict[str, TestClient]
    users: dict[str, User]
    lock: str  # the lock's entity id
    lock_device: Any

    async def call(self, kind: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        response = await self.clients[kind].post(URL, json=body, headers=HEADERS)
        assert response.status == 200, await response.text()
        result: dict[str, Any] = (await response.json())["result"]
        return result

    def unlock(self, kind: str = "admin") -> asyncio.Task[dict[str, Any]]:
        """set_state unlocking the lock, as a running request."""
        return asyncio.get_running_loop().create_task(
            self.call(
                kind, "set_state", {"updates": [{"entity_id": self.lock, "state": "unlocked"}]}
            )
        )

    async def pending(self) -> Pending:
        """The one open approval, once the gateway made it."""
        manager = approval_manager(self.hass)
        for _ in range(200):
            open_ = [p for p in manager._by_id.values() if p.open]
            if open_:
                assert len(open_) == 1
                return open_[0]
            await asyncio.sleep(0.01)
        raise AssertionError("no approval was requested")


def data(result: dict[str, Any]) -> Any:
    return json.loads(result["content"][0]["text"])


def code(result: dict[str, Any]) -> str | None:
    if not result.get("isError"):
        return None
    return data(result)["error"]["code"]


@pytest.fixture
async def sim(socket_enabled: None) -> AsyncIterator[Sim]:
    server = TestServer(
        create_app(devices=24, hub_id="hub-0001", command_delay=0), host="127.0.0.1"
    )
    await server.start_server()
    yield Sim(server, "42")
    await server.close()


async def _token(hass: HomeAssistant, user: User) -> str:
    refresh = await hass.auth.async_create_refresh_token(user, CLIENT_ID)
    return hass.auth.async_create_access_token(refresh)


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
    gateway_entry({CONF_EXPOSED_ONLY: False}).add_to_hass(hass)
    await setup_entry(hass, make_entry(sim))
    user = MockUser(name="Ordinary", groups=[await hass.auth.async_get_group(GROUP_ID_USER)])
    user.add_to_hass(hass)
    device = first(sim, "lock")
    lock = entity_id(hass, sim, f"{device.id}_lock", "lock")
    clients = {
        "admin": await hass_client(hass_access_token),
        "user": await hass_client(await _token(hass, user)),
        "read_only": await hass_client(hass_read_only_access_token),
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
