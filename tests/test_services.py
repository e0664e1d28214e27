"""The websocket's permission check in front of core's call_service, for our actions only:
installed whichever of websocket_api and this integration loads first, once, and never in
the way of calls it does not concern."""

from __future__ import annotations

from typing import Any

from homeassistant.const import EVENT_COMPONENT_LOADED
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.mcp_gateway import services
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.registry import BACKENDS

_WS = "websocket_api"


def _core_handler(hass: HomeAssistant) -> Any:
    return hass.data[_WS]["call_service"][0]


def _actions() -> dict[str, Any]:
    return {action.name: action for row in BACKENDS for action in row.actions}


async def test_checked_once_websocket_api_loads_later(hass: HomeAssistant) -> None:
    """Set up before the websocket: the check goes in when websocket_api itself loads."""
    services.async_setup_services(hass)
    assert _WS not in hass.config.components
    assert hass.services.has_service(DOMAIN, "create_alarm")
    # Another component loading changes nothing, and does not end the wait.
    hass.bus.async_fire(EVENT_COMPONENT_LOADED, {"component": "light"})
    await hass.async_block_till_done()
    assert await async_setup_component(hass, _WS, {})
    await hass.async_block_till_done()
    handler = _core_handler(hass)
    assert getattr(handler, "mcp_gateway_checked", False)

    # Put in again (a second set-up): the check is not stacked on itself.
    services._async_refuse_as_unauthorized(hass, _actions())
    assert _core_handler(hass) is handler


async def test_a_changed_core_registry_is_left_alone(hass: HomeAssistant) -> None:
    """Core's command registry in a shape we do not know: core answers as it would."""
    assert await async_setup_component(hass, _WS, {})
    core = hass.data[_WS]
    hass.data[_WS] = {"other_command": core["call_service"]}
    services.async_setup_services(hass)
    assert hass.data[_WS] == {"other_command": core["call_service"]}
    hass.data[_WS] = ["not", "a", "registry"]
    services._async_refuse_as_unauthorized(hass, _actions())
    assert hass.data[_WS] == ["not", "a", "registry"]
    hass.data[_WS] = core


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
