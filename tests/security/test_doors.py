"""The same rules on every door: HA's LLM API and the integration's actions share the
gateway's per-user rate limit with its HTTP endpoints, and the websocket refuses an action as
a refusal of the call (`service_validation_error`), not a failure of the integration.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import fields
import logging
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from homeassistant.auth.const import GROUP_ID_ADMIN, GROUP_ID_USER
from homeassistant.core import Context
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockUser

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.settings import CONF_EXPOSED_ONLY, CONF_RATE_LIMIT
from custom_components.mcp_gateway.gateway.http.sse import MAX_SESSIONS, MAX_SESSIONS_PER_USER
from custom_components.mcp_gateway.gateway.http.view import DATA_GATEWAY
from custom_components.mcp_gateway.gateway.llm_api import LLM_API_ID

from .conftest import CLIENT_ID, SIGNED_IN, URL, SecurityHome
from .test_actions import (  # noqa: F401 - a fixture
    _CORE_PREFIX,
    ALLOWED,
    _ws,
    closed_websocket_heartbeats,
)

LIMIT = 120


def llm_context(user_id: str | None) -> llm.LLMContext:
    """An LLMContext on any HA version (2025.4 has user_prompt, later ones do not)."""
    values: dict[str, Any] = {
        "platform": "attack",
        "context": Context(user_id=user_id),
        "user_prompt": "read the lights",
        "language": "en",
        "assistant": "conversation",
        "device_id": None,
    }
    return llm.LLMContext(**{f.name: values[f.name] for f in fields(llm.LLMContext)})


def answer_data(answer: Any) -> dict[str, Any]:
    """What the model reads: an llm.ToolResult's data (HA 2026.x) or the dict (2025.4)."""
    data = getattr(answer, "data", answer)
    assert isinstance(data, dict)
    return data


def frozen_limit(home: SecurityHome, per_minute: int) -> None:
    """The rate limit at `per_minute`, on a stopped clock (nothing refills during the test)."""
    home.hass.data[DATA_GATEWAY].clock = lambda: 1000.0
    home.hass.config_entries.async_update_entry(
        home.settings_entry(), options={CONF_RATE_LIMIT: per_minute, CONF_EXPOSED_ONLY: False}
    )


def rate_limited(data: dict[str, Any]) -> bool:
    error = data.get("error")
    return isinstance(error, dict) and error.get("code") == "rate_limited"


@pytest.mark.parametrize("kind", SIGNED_IN)
async def test_an_llm_api_flood_is_held_to_the_rate_limit(home: SecurityHome, kind: str) -> None:
    """The issue: a read-only user made 300 calls in 0.4 s through HA's LLM tool path
    against a limit of 120 a minute. Every user kind now gets the limit, and it is the same
    budget as the HTTP endpoint's."""
    frozen_limit(home, LIMIT)
    user = home.users[kind]
    instance = await llm.async_get_api(home.hass, LLM_API_ID, llm_context(user.id))
    tool = next(t for t in instance.tools if t.name == "get_state")
    read = llm.ToolInput("get_state", {"entity_ids": [home.policy_light]})
    answers = [
        answer_data(await tool.async_call(home.hass, read, instance.llm_context))
        for _ in range(300)
    ]
    refused = [data for data in answers if rate_limited(data)]
    assert len(answers) - len(refused) == LIMIT
    assert len(refused) == 300 - LIMIT
    assert refused[0]["error"]["details"]["retry_after"] >= 1
    # One budget across doors: the HTTP endpoint refuses this user too, and no one else.
    status, body = await home.rpc(kind, "ping")
    assert status == 429, body
    other = next(k for k in SIGNED_IN if k != kind)
    assert (await home.rpc(other, "ping"))[0] == 200


async def test_http_use_counts_against_the_llm_api(home: SecurityHome) -> None:
    """The other way round: what a user spent over HTTP is gone for their assistant too."""
    frozen_limit(home, 10)
    for _ in range(10):
        assert (await home.rpc("user", "ping"))[0] == 200
    instance = await llm.async_get_api(home.hass, LLM_API_ID, llm_context(home.users["user"].id))
    tool = next(t for t in instance.tools if t.name == "get_state")
    answer = await tool.async_call(home.hass, llm.ToolInput("get_state", {}), instance.llm_context)
    assert rate_limited(answer_data(answer))


async def test_actions_are_charged_to_the_same_limit(home: SecurityHome) -> None:
    """The integration's actions run backend tools too: over the websocket (and REST) they
    spend the caller's gateway budget, and are refused past it without running."""
    frozen_limit(home, 3)
    assert home.ws_factory is not None
    ws = await home.ws_factory(home.hass, access_token=home.tokens["read_only"])
    data = {
        "config_entry_id": home.robine_entry.entry_id,
        "label": "Flood",
        "time": "07:00",
    }
    outcomes = []
    for _ in range(5):
        await ws.send_json_auto_id(
            {
                "type": "call_service",
                "domain": DOMAIN,
                "service": "preview_alarm",
                "service_data": data,
                "return_response": True,
            }
        )
        outcomes.append(await ws.receive_json())
    await ws.close()
    assert [message["success"] for message in outcomes] == [True] * 3 + [False] * 2
    error = outcomes[-1]["error"]
    assert error["translation_key"] == "action_rate_limited"
    assert "rate limit" in error["message"]
    # The HTTP endpoint is out of budget for this user as well.
    assert (await home.rpc("read_only", "ping"))[0] == 429


@pytest.mark.parametrize("action", sorted(ALLOWED))
@pytest.mark.usefixtures("closed_websocket_heartbeats")
async def test_a_refused_action_is_a_refusal_over_the_websocket(
    home: SecurityHome, action: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Refusals once answered `home_assistant_error`, with about 2.3 KB of traceback logged
    each. Now HA's `service_validation_error` with the translated reason: core's own command
    logs its one line, no traceback; allowed callers are unaffected."""
    for kind in SIGNED_IN:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            message = await _ws(home, kind, action)
        if kind in ALLOWED[action]:
            assert message["success"] or not str(
                message["error"].get("translation_key", "")
            ).startswith("action_"), message
            continue
        assert not message["success"], (kind, action)
        error = message["error"]
        assert error["code"] == "service_validation_error", (kind, action, error)
        assert error["translation_key"].startswith("action_"), error
        # Core's websocket puts "Validation error: " before the translated reason.
        assert error["message"].removeprefix(_CORE_PREFIX).startswith(f"{DOMAIN}.{action}"), error
        # asyncio's slow-callback warnings tell of a loaded machine, not of the refusal.
        noisy = [r for r in caplog.records if r.name != "asyncio" and r.levelno >= logging.WARNING]
        assert not any(r.exc_info for r in noisy), [r.getMessage()[:200] for r in noisy]
        assert len(noisy) <= 1, [r.getMessage()[:200] for r in noisy]


async def test_no_group_of_users_locks_the_owner_out_of_sse(
    home: SecurityHome, hass_client: Callable[..., Awaitable[TestClient]]
) -> None:
    """The issue: eight ordinary users with 4 SSE streams each filled the global cap and the
    owner got 503. Ordinary users now stop short of the cap by the administrators' reserve,
    and administrators by the owner's share."""
    hass = home.hass
    group = await hass.auth.async_get_group(GROUP_ID_USER)
    streams: list[ClientResponse] = []

    async def open_streams(user: MockUser, count: int) -> list[int]:
        user.add_to_hass(hass)
        refresh = await hass.auth.async_create_refresh_token(user, CLIENT_ID)
        client = await hass_client(hass.auth.async_create_access_token(refresh))
        statuses = []
        for _ in range(count):
            response = await client.get(f"{URL}/sse")
            statuses.append(response.status)
            if response.status == 200:
                streams.append(response)
            else:
                assert response.headers["Retry-After"]
                await response.read()
        return statuses

    try:
        crowd = [
            await open_streams(MockUser(name=f"Crowd {n}", groups=[group]), MAX_SESSIONS_PER_USER)
            for n in range(8)
        ]
        opened = sum(status == 200 for statuses in crowd for status in statuses)
        assert opened == MAX_SESSIONS - 2 * MAX_SESSIONS_PER_USER
        assert {status for statuses in crowd for status in statuses} == {200, 503}
        # Administrators still get in, but leave the owner's share.
        admin_group = await hass.auth.async_get_group(GROUP_ID_ADMIN)
        assert await open_streams(MockUser(name="Admin 2", groups=[admin_group]), 4) == [200] * 4
        assert await open_streams(MockUser(name="Admin 3", groups=[admin_group]), 1) == [503]
        # The owner's share is always there.
        owner = MockUser(name="Owner", is_owner=True)
        assert await open_streams(owner, MAX_SESSIONS_PER_USER) == [200] * MAX_SESSIONS_PER_USER
        assert len(hass.data[DATA_GATEWAY].sessions.sessions) == MAX_SESSIONS
    finally:
        for stream in streams:
            stream.close()
