"""The MCP gateway: one MCP endpoint inside Home Assistant, for every configured backend."""

from __future__ import annotations

from typing import Final

from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import HomeAssistant
from homeassistant.loader import async_get_integration

from ..core.const import DOMAIN
from ..mcp.server import McpServer, ServerHandler
from ..permissions.actions import DATA_ACTION_GATE
from ..permissions.limits import DATA_USER_RATES
from .approval.channels import async_setup_channels
from .approval.gate import async_action_gate
from .http.oauth import AuthorizationServerMetadataView, ClientRegistrationView
from .http.sse import McpGatewayMessagesView, McpGatewaySseView, SseSessionManager
from .http.view import DATA_GATEWAY, GatewayRuntime, McpGatewayView, dumps
from .http.wellknown import ProtectedResourceMetadataView
from .llm_api import async_register_llm_api

SERVER_NAME: Final = "home-assistant-mcp-gateway"
SERVER_TITLE: Final = "Home Assistant MCP Gateway"
INSTRUCTIONS: Final = (
    "Home Assistant and the devices of its MCP backends. Use get_state to read entities, "
    "set_state to change them, search_tools to find any other tool, and a backend's gateway "
    "tool to list and call that backend's own tools. You only see what your Home Assistant "
    "user may use."
)


async def async_setup_gateway(
    hass: HomeAssistant, handler: ServerHandler | None = None
) -> GatewayRuntime:
    """Register the gateway's HTTP views once; a given handler replaces the current one.

    Without a handler the gateway serves `GatewayHandler(hass)`, the integration's own tools.
    """
    if (runtime := hass.data.get(DATA_GATEWAY)) is not None:
        if handler is not None:
            runtime.server.handler = handler
        return runtime
    if handler is None:
        from .handler import GatewayHandler  # heavy, and only needed here

        handler = GatewayHandler(hass)
    integration = await async_get_integration(hass, DOMAIN)
    server = McpServer(
        handler,
        name=SERVER_NAME,
        title=SERVER_TITLE,
        version=str(integration.version or "0"),
        instructions=INSTRUCTIONS,
        dumps=dumps,
    )
    sessions = SseSessionManager(hass)
    runtime = hass.data[DATA_GATEWAY] = GatewayRuntime(hass, server, sessions)
    hass.data[DATA_USER_RATES] = runtime.rates
    hass.http.register_view(McpGatewayView())
    hass.http.register_view(McpGatewaySseView(sessions))
    hass.http.register_view(McpGatewayMessagesView(sessions))
    hass.http.register_view(ProtectedResourceMetadataView())
    hass.http.register_view(AuthorizationServerMetadataView())
    # Through the runtime at each call: tests replace runtime.clock to drive rate limits.
    hass.http.register_view(ClientRegistrationView(lambda: runtime.clock()))  # noqa: PLW0108
    hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, sessions.close_all)
    # Calls suspended on a question end with HA: none runs after its answer can no longer come.
    hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STOP, lambda _: server.close())
    # Approvers are asked on their phones and in HA's UI (the AI app asks its own user).
    async_setup_channels(hass)
    # The integration's actions run backend tools: a sensitive one waits for a person too.
    hass.data[DATA_ACTION_GATE] = async_action_gate
    # HA's own assistants get the same tools, through whichever handler serves the gateway.
    async_register_llm_api(hass, lambda: runtime.server.handler)
    return runtime
