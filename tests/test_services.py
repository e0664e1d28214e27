"""The integration's actions leave core's websocket commands as core made them: a refusal is
the handler's own, in one of HA's kinds, which every door answers as a refusal."""

from __future__ import annotations

from homeassistant.components.websocket_api import commands
from homeassistant.core import Context, HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError, Unauthorized
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.mcp_gateway import services
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.permissions.actions import ActionUnauthorized

_WS = "websocket_api"


async def test_core_call_service_is_left_alone(hass: HomeAssistant) -> None:
    """Set up before or after the websocket, core's call_service stays core's handler."""
    services.async_setup_services(hass)
    assert hass.services.has_service(DOMAIN, "create_alarm")
    assert await async_setup_component(hass, _WS, {})
    assert await async_setup_component(hass, DOMAIN, {})
    await hass.async_block_till_done()
    assert hass.data[_WS]["call_service"][0] is commands.handle_call_service


def test_a_refusal_is_unauthorized_and_a_validation_error() -> None:
    """REST answers Unauthorized with 401; the websocket answers a ServiceValidationError as
    `service_validation_error` (any other HomeAssistantError as `home_assistant_error`)."""
    refusal = ActionUnauthorized(Context(user_id="u"), "action_denied", {"action": "x"})
    assert isinstance(refusal, Unauthorized)
    assert isinstance(refusal, ServiceValidationError)
    assert refusal.user_id == "u"
    assert (refusal.translation_domain, refusal.translation_key) == (DOMAIN, "action_denied")


async def test_other_calls_and_bad_data_go_to_core(
    hass: HomeAssistant, hass_ws_client: WebSocketGenerator, hass_read_only_access_token: str
) -> None:
    """Calls to other domains run as core runs them; data core would refuse is refused by
    core, saying why, not as a permission refusal (even for a user who could not run it)."""
    assert await async_setup_component(hass, _WS, {})
    services.async_setup_services(hass)
    calls: list[ServiceCall] = []

    async def _echo(call: ServiceCall) -> None:
        calls.append(call)

    hass.services.async_register("test", "echo", _echo)
    ws = await hass_ws_client(hass, access_token=hass_read_only_access_token)

    await ws.send_json_auto_id(
        {"type": "call_service", "domain": "test", "service": "echo", "service_data": {"a": 1}}
    )
    answer = await ws.receive_json()
    assert answer["success"], answer
    assert [call.data for call in calls] == [{"a": 1}]

    await ws.send_json_auto_id(
        {
            "type": "call_service",
            "domain": DOMAIN,
            "service": "create_alarm",
            "service_data": {"label": "No clock named"},
        }
    )
    answer = await ws.receive_json()
    assert not answer["success"]
    assert answer["error"]["code"] == "invalid_format", answer
