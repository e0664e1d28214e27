"""Every integration action for every kind of caller, through HA's REST API and websocket.

An action runs a backend tool, so it is checked like that tool through the gateway: its tier
from the backend's table, then HA's entity permissions on what it addresses. A refusal is HA's
own Unauthorized and ServiceValidationError at once: over REST 401 (400 with the translated
reason on the current release, whose API answers the latter first), over the websocket
`service_validation_error` with the translated reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
import json
from typing import Any

from aiohttp import web
from homeassistant.const import MAJOR_VERSION
from homeassistant.core import Context, SupportsResponse
from homeassistant.exceptions import Unauthorized
from homeassistant.util.async_ import get_scheduled_timer_handles
import pytest

from custom_components.mcp_gateway.backends.homecast.services import (
    ACTIONS as HOMECAST_ACTIONS,
)
from custom_components.mcp_gateway.backends.robine_wake.services import (
    ACTIONS as ROBINE_ACTIONS,
)
from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import SIGNED_IN, SIGNED_OUT, SecurityHome

SUPPORTS = {a.name: a.supports_response for a in (*HOMECAST_ACTIONS, *ROBINE_ACTIONS)}

# Who may run each action: the tier of the tool it runs (tools.py tables), then entities.
# The clock's edits are control-tier on the clock (the policy user may not control it); the
# preview is a read of the clock (which the policy user may not read either). Homecast's
# definitions are admin-tier; its history may reach a home this entry does not follow (it
# follows one of the account's homes; Homecast matches homes by substring), so only
# administrators query it.
# What core's websocket `call_service` puts before a ServiceValidationError's message.
_CORE_PREFIX = "Validation error: "
ALLOWED: dict[str, set[str]] = {
    "create_alarm": {"admin", "user"},
    "update_alarm": {"admin", "user"},
    "delete_alarm": {"admin", "user"},
    "trigger_alarm": {"admin", "user"},
    "preview_alarm": {"admin", "user", "read_only"},
    "homecast_query_history": {"admin"},
    "homecast_create_scene": {"admin"},
    "homecast_update_scene": {"admin"},
    "homecast_delete_scene": {"admin"},
    "homecast_create_automation": {"admin"},
    "homecast_update_automation": {"admin"},
    "homecast_delete_automation": {"admin"},
    "homecast_create_virtual_accessory": {"admin"},
    "homecast_update_virtual_accessory": {"admin"},
    "homecast_delete_virtual_accessory": {"admin"},
}


def _data(home: SecurityHome, action: str) -> dict[str, Any]:
    """Valid data for an action (the target may be gone by the time an allowed call runs)."""
    alarms = sorted(home.robine.alarms.values(), key=lambda a: a.id)
    alarm_id, revision = (alarms[0].id, alarms[0].revision) if alarms else ("gone", 1)
    rw = {"config_entry_id": home.robine_entry.entry_id}
    hc = {"config_entry_id": home.homecast_entry.entry_id, "home": home.homecast.homes[0].slug}
    by_action: dict[str, dict[str, Any]] = {
        "create_alarm": {**rw, "label": "Security", "time": "07:00"},
        "update_alarm": {**rw, "alarm_id": alarm_id, "revision": revision, "volume": 5},
        "delete_alarm": {**rw, "alarm_id": alarm_id, "revision": revision},
        "trigger_alarm": {**rw, "alarm_id": alarm_id},
        "preview_alarm": {**rw, "label": "Security", "time": "07:00"},
        "homecast_query_history": hc,
        "homecast_create_scene": {**hc, "name": "Security scene", "actions": []},
        "homecast_update_scene": {**hc, "name": "Security scene", "new_name": "Renamed 2"},
        "homecast_delete_scene": {**hc, "name": "Renamed 2"},
        "homecast_create_automation": {
            **hc,
            "name": "Security automation",
            "triggers": [{"type": "time", "at": "07:00"}],
            "actions": [{"type": "notify", "message": "x"}],
        },
        "homecast_update_automation": {**hc, "id": "missing", "enabled": False},
        "homecast_delete_automation": {**hc, "id": "missing"},
        "homecast_create_virtual_accessory": {**hc, "name": "Security switch", "type": "switch"},
        "homecast_update_virtual_accessory": {**hc, "id": "missing", "name": "X"},
        "homecast_delete_virtual_accessory": {**hc, "id": "missing"},
    }
    return by_action[action]


def test_the_table_covers_every_action() -> None:
    """The permission table covers every registered action."""
    assert set(ALLOWED) == set(SUPPORTS)


async def _rest_call(home: SecurityHome, kind: str, action: str) -> tuple[int, str]:
    query = "?return_response" if SUPPORTS[action] is SupportsResponse.ONLY else ""
    response = await home.clients[kind].post(
        f"/api/services/{DOMAIN}/{action}{query}", json=_data(home, action)
    )
    return response.status, await response.text()


async def _rest(home: SecurityHome, kind: str, action: str) -> int:
    return (await _rest_call(home, kind, action))[0]


def _rest_refused(answer: tuple[int, str], action: str) -> bool:
    """HA's REST answer to an action's refusal, an Unauthorized that is a ServiceValidationError
    too: 401 on 2025.4, whose API knows only Unauthorized; the current release's API answers a
    ServiceValidationError first, with 400 and the translated reason."""
    status, body = answer
    if MAJOR_VERSION == 2025:
        return status == 401
    return status == 400 and str(json.loads(body).get("message", "")).startswith(
        f"{DOMAIN}.{action}"
    )


async def _ws(home: SecurityHome, kind: str, action: str) -> dict[str, Any]:
    assert home.ws_factory is not None
    ws = await home.ws_factory(home.hass, access_token=home.tokens[kind])
    await ws.send_json_auto_id(
        {
            "type": "call_service",
            "domain": DOMAIN,
            "service": action,
            "service_data": _data(home, action),
            "return_response": SUPPORTS[action] is SupportsResponse.ONLY,
        }
    )
    message: dict[str, Any] = await ws.receive_json()
    await ws.close()
    return message


def _refused(message: dict[str, Any]) -> bool:
    error = message.get("error") or {}
    return not message["success"] and str(error.get("translation_key", "")).startswith("action_")


@pytest.fixture
def closed_websocket_heartbeats() -> Iterator[None]:
    """Cancel heartbeats aiohttp re-arms on server websockets that are already closed.

    aiohttp 3.14 (HA 2026.x) resets the heartbeat on every frame received, even after the
    server closed the socket (web_ws.py, WebSocketResponse._on_data_received, from aiohttp
    PR 12030): when HA closes the socket after auth_invalid, the client's closing frame
    re-arms a 55 s ping on a dead socket. Only timers of closed sockets are cancelled, before
    HA's lingering-timer check; any other lingering timer still fails the test.
    """
    yield
    for handle in get_scheduled_timer_handles(asyncio.get_event_loop()):
        owner = getattr(handle._callback, "__self__", None)
        if isinstance(owner, web.WebSocketResponse) and owner.closed:
            handle.cancel()


@pytest.mark.parametrize("action", sorted(ALLOWED))
@pytest.mark.usefixtures("closed_websocket_heartbeats")
async def test_action_over_rest_and_websocket(home: SecurityHome, action: str) -> None:
    """Each action over REST and websocket is allowed or refused as the table says.

    Administrators go last: an alarm they delete would be one no entity stands for, which
    only they may address.
    """
    for kind in reversed(SIGNED_IN):
        answer = await _rest_call(home, kind, action)
        message = await _ws(home, kind, action)
        if kind in ALLOWED[action]:
            assert answer[0] != 401, (kind, action)
            assert not _rest_refused(answer, action), (kind, action, answer)
            assert not _refused(message), (kind, action, message)
        else:
            assert _rest_refused(answer, action), (kind, action, answer)
            assert _refused(message), (kind, action, message)
            # The message says what is missing, in words (the translated string).
            # Core's websocket puts "Validation error: " before the translated reason.
            reason = message["error"]["message"].removeprefix(_CORE_PREFIX)
            assert reason.startswith(f"{DOMAIN}.{action}"), message
    for kind in SIGNED_OUT:
        assert await _rest(home, kind, action) == 401, (kind, action)
        ws = await home.clients[kind].ws_connect("/api/websocket")
        assert (await ws.receive_json())["type"] == "auth_required"
        await ws.send_json({"type": "auth", "access_token": home.tokens[kind] or "none"})
        assert (await ws.receive_json())["type"] == "auth_invalid", kind
        await ws.close()


async def test_the_issues_read_only_attacks_are_refused(home: SecurityHome) -> None:
    """A read-only user deleted an alarm, triggered another and created a virtual accessory."""
    alarms = {a.id: a.revision for a in home.robine.alarms.values()}
    virtuals = len(home.homecast.homes[0].virtuals())
    for action in ("delete_alarm", "trigger_alarm", "homecast_create_virtual_accessory"):
        assert _rest_refused(await _rest_call(home, "read_only", action), action)
        assert _refused(await _ws(home, "read_only", action))
    assert {a.id: a.revision for a in home.robine.alarms.values()} == alarms
    assert home.robine.active_session is None
    assert len(home.homecast.homes[0].virtuals()) == virtuals


async def test_user_less_contexts_keep_working(home: SecurityHome) -> None:
    """Automations and scripts call actions without a user: HA's own trust, as in core."""
    before = len(home.robine.alarms)
    response = await home.hass.services.async_call(
        DOMAIN,
        "create_alarm",
        _data(home, "create_alarm"),
        blocking=True,
        return_response=True,
        context=Context(),
    )
    assert isinstance(response, dict)
    assert len(home.robine.alarms) == before + 1


async def test_unknown_and_deactivated_users_are_refused(home: SecurityHome) -> None:
    """A context naming a user that does not exist, or no longer may sign in, is refused."""
    gone = home.users["user"]
    for context in (Context(user_id="no-such-user"), Context(user_id=gone.id)):
        if context.user_id == gone.id:
            await home.hass.auth.async_deactivate_user(gone)
        with pytest.raises(Unauthorized) as caught:
            await home.hass.services.async_call(
                DOMAIN,
                "trigger_alarm",
                _data(home, "trigger_alarm"),
                blocking=True,
                context=context,
            )
        assert caught.value.translation_key == "action_unknown_user"
    assert home.robine.active_session is None
