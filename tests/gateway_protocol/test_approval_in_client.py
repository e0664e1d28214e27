"""Approval in the AI app: the official SDK client's elicitation callback stands in for the
person at the app, over the real wire: the SDK → HA's HTTP server → the gateway's approval
gate → the Hubitat backend → the simulated hub's lock. The 2026-07-28 form (input_required)
is driven with raw requests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
import json
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient
from homeassistant.auth.const import GROUP_ID_USER
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext as SdkContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData, Implementation
import pytest
from pytest_homeassistant_custom_component.common import (
    MockUser,
    async_capture_events,
    async_fire_time_changed,
)

from custom_components.mcp_gateway.core.settings import (
    CATEGORY_LOCKS,
    CATEGORY_OTHER,
    CONF_EXPOSED_ONLY,
    CONF_IN_APP_APPROVAL,
)
from custom_components.mcp_gateway.gateway.approval import gate as approval_module
from custom_components.mcp_gateway.gateway.approval.manager import (
    EVENT_APPROVAL,
    Channel,
    approval_manager,
)
from tests.approvals import open_approvals
from tests.hubitat.sim import Sim, entity_id, first, make_entry, setup_entry
from tests.simulation import gateway_entry

from .conftest import URL, base_url

type Answer = Callable[[SdkContext[ClientSession, Any], ElicitRequestParams], Awaitable[Any]]
type Connect = Callable[[str, str, Answer | None], AbstractAsyncContextManager[ClientSession]]
MODERN = "2026-07-28"


@dataclass
class Home:
    hass: HomeAssistant
    client: TestClient
    token: str
    lock: str
    device: Any

    @property
    def url(self) -> str:
        return base_url(self.client)

    def unlocked(self) -> bool:
        return bool(self.device.value("lock") == "unlocked")

    def unlock_args(self) -> dict[str, Any]:
        return {"updates": [{"entity_id": self.lock, "state": "unlocked"}]}


@pytest.fixture
async def home(hass: HomeAssistant, sim: Sim, hass_client: Any, hass_access_token: str) -> Home:
    assert await async_setup_component(hass, "http", {})
    # The owner allows approving locks in the app (off by default; see the tests at the end).
    gateway_entry(
        {CONF_EXPOSED_ONLY: False, CONF_IN_APP_APPROVAL: [CATEGORY_LOCKS, CATEGORY_OTHER]}
    ).add_to_hass(hass)
    await setup_entry(hass, make_entry(sim))
    device = first(sim, "lock")
    lock = entity_id(hass, sim, f"{device.id}_lock", "lock")
    client = await hass_client(hass_access_token)
    # Locking asks nobody.
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "set_state",
            "arguments": {"updates": [{"entity_id": lock, "state": "locked"}]},
        },
    }
    response = await client.post(URL, json=body)
    assert not (await response.json())["result"]["isError"]
    assert device.value("lock") == "locked"
    return Home(hass, client, hass_access_token, lock, device)


@asynccontextmanager
async def _streamable(url: str, token: str, answer: Answer | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        streamablehttp_client(f"{url}{URL}", headers=headers) as (read, write, _),
        ClientSession(
            read, write, elicitation_callback=answer, client_info=_info("Claude Code")
        ) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def _sse(url: str, token: str, answer: Answer | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        sse_client(f"{url}{URL}/sse", headers=headers) as (read, write),
        ClientSession(
            read, write, elicitation_callback=answer, client_info=_info("Claude Code")
        ) as session,
    ):
        await session.initialize()
        yield session


def _info(name: str) -> Implementation:
    return Implementation(name=name, version="1.0")


TRANSPORTS = pytest.mark.parametrize("connect", [_streamable, _sse], ids=["streamable", "sse"])


def _person(action: str, approve: bool | None = None) -> tuple[Answer, list[ElicitRequestParams]]:
    seen: list[ElicitRequestParams] = []

    async def answer(context: Any, params: ElicitRequestParams) -> ElicitResult:
        seen.append(params)
        content = None if approve is None else {"approve": approve}
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer, seen


def _code(result: Any) -> str | None:
    if not result.isError:
        return None
    return str(json.loads(result.content[0].text)["error"]["code"])


@TRANSPORTS
async def test_approved_in_the_app_runs_once(connect: Connect, home: Home) -> None:
    """The person sees what, who and through which client; approving runs the unlock once,
    and the logbook event names the app as where it was approved."""
    events = async_capture_events(home.hass, EVENT_APPROVAL)
    answer, seen = _person("accept", approve=True)
    async with connect(home.url, home.token, answer) as session:
        result = await session.call_tool("set_state", home.unlock_args())
    assert not result.isError, result
    assert home.unlocked()
    assert len(seen) == 1
    message = seen[0].message
    assert "Garage Lock → unlocked" in message  # what, on which device
    assert "Claude Code" in message  # through which client
    assert "Mock User" in message  # who asked
    assert seen[0].requestedSchema["properties"]["approve"]["type"] == "boolean"
    assert [e.data["outcome"] for e in events] == ["pending", "approved"]
    assert events[1].data["channel"] == Channel.CLIENT
    assert not [p for p in approval_manager(home.hass)._by_id.values() if p.open]


@TRANSPORTS
@pytest.mark.parametrize("reply", [("decline", None), ("accept", False), ("accept", None)], ids=str)
async def test_declined_in_the_app_changes_nothing(
    connect: Connect, home: Home, reply: tuple[str, bool | None]
) -> None:
    """Declined, or the form sent without the Approve box: declined, the lock stays."""
    answer, seen = _person(*reply)
    async with connect(home.url, home.token, answer) as session:
        result = await session.call_tool("set_state", home.unlock_args())
    assert _code(result) == "approval_declined"
    assert not home.unlocked()
    assert len(seen) == 1


@pytest.mark.parametrize("kind", ["user", "read_only"])
async def test_other_user_kinds(home: Home, hass_read_only_access_token: str, kind: str) -> None:
    """An ordinary user is no approver: their own app is not asked, its answer would not
    count, and the call waits for an approver on a phone or in Home Assistant. A read-only
    user is refused before anyone is asked."""
    if kind == "user":
        user = MockUser(
            name="Ordinary", groups=[await home.hass.auth.async_get_group(GROUP_ID_USER)]
        )
        user.add_to_hass(home.hass)
        refresh = await home.hass.auth.async_create_refresh_token(user, "https://client.example/")
        token = home.hass.auth.async_create_access_token(refresh)
    else:
        token = hass_read_only_access_token
    answer, seen = _person("accept", approve=True)
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        async with _streamable(home.url, token, answer) as session:
            result = await session.call_tool("set_state", home.unlock_args())
    assert seen == []
    assert not home.unlocked()
    if kind == "user":
        assert _code(result) == "approval_pending"
        pending = await _open(home)
        assert not await approval_manager(home.hass).async_decide(
            pending.id, True, user_id=user.id, channel=Channel.CLIENT
        )
        assert pending.open
    else:
        assert result.isError
        assert not approval_manager(home.hass)._by_id


async def test_no_answer_in_the_app_expires(home: Home) -> None:
    """A person who never answers: at the time limit the call ends expired, nothing ran."""
    waiting = asyncio.Event()

    async def never(context: Any, params: ElicitRequestParams) -> ElicitResult:
        waiting.set()
        await asyncio.sleep(30)
        return ElicitResult(action="accept", content={"approve": True})

    async with _streamable(home.url, home.token, never) as session:
        call = asyncio.create_task(session.call_tool("set_state", home.unlock_args()))
        await asyncio.wait_for(waiting.wait(), 5)
        async_fire_time_changed(home.hass, dt_util.utcnow() + timedelta(seconds=61))
        result = await asyncio.wait_for(call, 10)
    assert _code(result) == "approval_expired"
    assert not home.unlocked()


async def test_client_without_prompt_falls_back_to_ha(home: Home) -> None:
    """No elicitation capability: the app is never asked; HA's own channels decide."""
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        async with _streamable(home.url, home.token, None) as session:
            first_answer = await session.call_tool("set_state", home.unlock_args())
            assert _code(first_answer) == "approval_pending"
            approval_id = json.loads(first_answer.content[0].text)["error"]["details"][
                "approval_id"
            ]
            owner = await home.hass.auth.async_get_owner()
            admin = owner or next(u for u in await home.hass.auth.async_get_users() if u.is_admin)
            assert await approval_manager(home.hass).async_decide(
                approval_id, True, user_id=admin.id, channel=Channel.UI
            )
            assert not home.unlocked()
            second = await session.call_tool("set_state", home.unlock_args())
    assert not second.isError, second
    assert home.unlocked()


async def test_client_that_errors_falls_back_to_ha(home: Home) -> None:
    """A client that declared elicitation but cannot show the form: HA's channels decide."""

    async def broken(context: Any, params: ElicitRequestParams) -> ErrorData:
        return ErrorData(code=-32601, message="not here")

    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        async with _streamable(home.url, home.token, broken) as session:
            call = asyncio.create_task(session.call_tool("set_state", home.unlock_args()))
            pending = await _open(home)
            assert await approval_manager(home.hass).async_decide(
                pending.id, True, user_id=pending.user_id, channel=Channel.UI
            )
            result = await call
    assert not result.isError, result
    assert home.unlocked()


async def _open(home: Home) -> Any:
    return (await open_approvals(home.hass))[0]


async def test_approved_on_the_phone_while_the_app_asks(home: Home) -> None:
    """Another channel answering first ends the app's question; the call runs once."""
    asked = asyncio.Event()

    async def slow(context: Any, params: ElicitRequestParams) -> ElicitResult:
        asked.set()
        await asyncio.sleep(2)
        return ElicitResult(action="decline")

    async with _streamable(home.url, home.token, slow) as session:
        call = asyncio.create_task(session.call_tool("set_state", home.unlock_args()))
        await asyncio.wait_for(asked.wait(), 5)
        pending = await _open(home)
        assert await approval_manager(home.hass).async_decide(
            pending.id, True, user_id=pending.user_id, channel=Channel.PHONE
        )
        result = await asyncio.wait_for(call, 5)
    assert not result.isError, result
    assert home.unlocked()


# --- 2026-07-28 ----------------------------------------------------------------------------


def _modern(home: Home, request_id: int, **extra: Any) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "Modern App", "version": "1"},
    }
    params = {"name": "set_state", "arguments": home.unlock_args(), "_meta": meta, **extra}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    headers = {
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "set_state",
    }
    return body, headers


async def _post(home: Home, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    response = await home.client.post(URL, json=body, headers=headers)
    return response.status, await response.json()


@pytest.mark.parametrize("approve", [True, False])
async def test_modern_input_required_then_answer(home: Home, approve: bool) -> None:
    """2026-07-28: the call answers input_required with the question; the retry with the
    answer runs the unlock once (approved) or not at all (declined); its state is spent."""
    status, first_answer = await _post(home, *_modern(home, 1))
    assert status == 200
    result = first_answer["result"]
    assert result["resultType"] == "input_required"
    ((key, request),) = result["inputRequests"].items()
    assert request["method"] == "elicitation/create"
    assert "Modern App" in request["params"]["message"]
    assert not home.unlocked()
    responses = {key: {"action": "accept", "content": {"approve": approve}}}
    state = result["requestState"]
    status, done = await _post(
        home, *_modern(home, 2, inputResponses=responses, requestState=state)
    )
    assert status == 200
    assert done["result"]["resultType"] == "complete"
    assert bool(done["result"].get("isError")) is not approve
    assert home.unlocked() is approve
    status, replay = await _post(
        home, *_modern(home, 3, inputResponses=responses, requestState=state)
    )
    assert status == 400
    assert "requestState" in replay["error"]["message"]
    assert home.unlocked() is approve


async def test_modern_decided_elsewhere_then_retry(home: Home) -> None:
    """2026-07-28: the phone approves while the app's question is open; the app's retry
    gets the result of the call that ran, once, whatever its answer says."""
    _, first_answer = await _post(home, *_modern(home, 1))
    result = first_answer["result"]
    pending = await _open(home)
    assert await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=pending.user_id, channel=Channel.PHONE
    )
    for _ in range(100):
        if home.unlocked():
            break
        await asyncio.sleep(0.02)
    assert home.unlocked()
    key = next(iter(result["inputRequests"]))
    responses = {key: {"action": "decline"}}
    status, done = await _post(
        home, *_modern(home, 2, inputResponses=responses, requestState=result["requestState"])
    )
    assert status == 200
    assert done["result"]["resultType"] == "complete"
    assert not done["result"].get("isError"), done
    assert not [p for p in approval_manager(home.hass)._by_id.values() if p.open]


async def test_modern_no_retry_expires(home: Home) -> None:
    """A modern client that never comes back: the approval expires, nothing runs."""
    _, first_answer = await _post(home, *_modern(home, 1))
    assert first_answer["result"]["resultType"] == "input_required"
    pending = await _open(home)
    async_fire_time_changed(home.hass, dt_util.utcnow() + timedelta(seconds=61))
    await home.hass.async_block_till_done()
    await asyncio.sleep(0.05)
    assert not pending.open
    assert not home.unlocked()


async def test_dismissed_in_the_app_leaves_it_to_ha(home: Home) -> None:
    """A person who closes the form without answering neither approves nor declines: the
    call answers "waiting" after the short hold, and HA's channels may still decide."""
    answer, seen = _person("cancel")
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        async with _streamable(home.url, home.token, answer) as session:
            result = await session.call_tool("set_state", home.unlock_args())
    assert _code(result) == "approval_pending"
    assert len(seen) == 1
    pending = await _open(home)
    assert pending.open
    assert not home.unlocked()


# --- which requests the app may approve ---------------------------------------------------


async def test_locks_are_not_approved_in_the_app_by_default(home: Home) -> None:
    """With the settings' defaults, the owner's own app is not asked to approve an unlock,
    and an answer through it would not count: a phone or Home Assistant decides."""
    entry = next(
        e for e in home.hass.config_entries.async_entries("mcp_gateway") if e.unique_id == "gateway"
    )
    options = {k: v for k, v in entry.options.items() if k != CONF_IN_APP_APPROVAL}
    home.hass.config_entries.async_update_entry(entry, options=options)
    answer, seen = _person("accept", approve=True)
    with patch.object(approval_module, "HOLD_SECONDS", 0.05):
        async with _streamable(home.url, home.token, answer) as session:
            result = await session.call_tool("set_state", home.unlock_args())
    assert _code(result) == "approval_pending"
    assert seen == []
    assert not home.unlocked()
    pending = await _open(home)
    assert not await approval_manager(home.hass).async_decide(
        pending.id, True, user_id=pending.user_id, channel=Channel.CLIENT
    )
    assert pending.open
