"""The integration's actions, registered once in async_setup as the quality scale asks.

Each backend that offers actions lists them in its own `services.py` (`ACTIONS`), named by its
row of the backend registry; this module registers them, and has the websocket refuse a caller
who may not run one as Home Assistant's `unauthorized`.

Why the websocket needs help: core's `call_service` command answers every HomeAssistantError a
service raises, HA's own `Unauthorized` included, as `home_assistant_error`, and logs it (with a
traceback on HA 2025.4). Only an Unauthorized raised outside the service call becomes
`unauthorized`. So, for this integration's actions only, the caller's permission is checked
first (the action's `check`, the same policy its handler applies again) and a refusal answered
as `unauthorized`; everything else goes to core's command unchanged. REST needs nothing: HA
answers Unauthorized there with 401 itself.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from homeassistant.const import EVENT_COMPONENT_LOADED
from homeassistant.core import Event, HomeAssistant, ServiceCall, callback
from homeassistant.exceptions import Unauthorized

from .core.compat import websocket_command
from .core.const import DOMAIN
from .permissions.actions import BackendAction
from .registry import BACKENDS

_LOGGER = logging.getLogger(__name__)

_WEBSOCKET: Final = "websocket_api"
_CALL_SERVICE: Final = "call_service"
_ERR_UNAUTHORIZED: Final = "unauthorized"  # websocket_api.const.ERR_UNAUTHORIZED


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register every backend's actions."""
    actions = {action.name: action for row in BACKENDS for action in row.actions}
    for action in actions.values():
        hass.services.async_register(
            DOMAIN,
            action.name,
            action.handler,
            schema=action.schema,
            supports_response=action.supports_response,
        )
    if _WEBSOCKET in hass.config.components:
        _async_refuse_as_unauthorized(hass, actions)
        return

    @callback
    def _loaded(event: Event[Any]) -> None:
        if event.data.get("component") == _WEBSOCKET:
            unsub()
            _async_refuse_as_unauthorized(hass, actions)

    unsub = hass.bus.async_listen(EVENT_COMPONENT_LOADED, _loaded)


@callback
def _async_refuse_as_unauthorized(hass: HomeAssistant, actions: dict[str, BackendAction]) -> None:
    """Put a permission check in front of core's `call_service` for this domain's actions."""
    from homeassistant.components import websocket_api  # loaded by now

    registered = websocket_command(hass, _CALL_SERVICE)
    if registered is None:  # core's registry changed shape: refusals stay as core answers them
        return
    core_handler, schema = registered
    if getattr(core_handler, "mcp_gateway_checked", False):
        return

    async def checked(
        hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
    ) -> None:
        refusal = await _refusal(hass, connection, msg, actions)
        if refusal is None:
            core_handler(hass, connection, msg)
            return
        _LOGGER.debug("Refused %s.%s for user %s", DOMAIN, msg["service"], connection.user.id)
        connection.send_error(
            msg["id"],
            _ERR_UNAUTHORIZED,
            str(refusal),
            translation_key=refusal.translation_key,
            translation_domain=refusal.translation_domain,
            translation_placeholders=refusal.translation_placeholders,
        )

    scheduled = websocket_api.async_response(checked)

    @callback
    def call_service(
        hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
    ) -> None:
        if msg.get("domain") == DOMAIN and msg.get("service") in actions:
            scheduled(hass, connection, msg)
        else:
            core_handler(hass, connection, msg)

    call_service.mcp_gateway_checked = True  # type: ignore[attr-defined]
    websocket_api.async_register_command(hass, _CALL_SERVICE, call_service, schema)


async def _refusal(
    hass: HomeAssistant,
    connection: Any,
    msg: dict[str, Any],
    actions: dict[str, BackendAction],
) -> Unauthorized | None:
    """HA's refusal of this call for the connection's user, or None to let core run it.

    Data core would refuse (schema, unknown entry) is left to core, which says why.
    """
    action = actions[msg["service"]]
    data = {**(msg.get("service_data") or {}), **(msg.get("target") or {})}
    try:
        validated = action.schema(data)
        call = ServiceCall(
            hass,
            DOMAIN,
            action.name,
            validated,
            connection.context(msg),
            bool(msg.get("return_response")),
        )
        await action.check(call)
    except Unauthorized as refusal:
        return refusal
    except Exception:  # core's own run of the call reports it
        return None
    return None
