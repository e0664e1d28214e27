"""Registering the gateway: once, with the integration's handler unless one is given."""

from __future__ import annotations

import json
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component

import custom_components.mcp_gateway
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.gateway import async_setup_gateway
from custom_components.mcp_gateway.gateway.handler import GatewayHandler
from custom_components.mcp_gateway.gateway.http.view import DATA_GATEWAY

from .conftest import FakeHandler


async def test_views_register_once_and_a_handler_can_be_swapped(hass: HomeAssistant) -> None:
    """The gateway's views register once and its handler can be swapped."""
    assert await async_setup_component(hass, "http", {})
    assert await async_setup_component(hass, DOMAIN, {})
    runtime = hass.data[DATA_GATEWAY]
    assert isinstance(runtime.server.handler, GatewayHandler)
    assert runtime.server.server_info["name"] == "home-assistant-mcp-gateway"
    # The server says the integration's own version, as its manifest gives it.
    manifest = Path(custom_components.mcp_gateway.__file__).with_name("manifest.json")
    assert runtime.server.server_info["version"] == json.loads(manifest.read_text())["version"]

    fake = FakeHandler()
    assert await async_setup_gateway(hass, fake) is runtime
    assert runtime.server.handler is fake
    assert await async_setup_gateway(hass) is runtime
    assert runtime.server.handler is fake
    routes = [(r.resource.canonical, r.method) for r in hass.http.app.router.routes() if r.resource]
    ours = sorted(method for path, method in routes if path == "/api/mcp_gateway")
    assert ours == ["DELETE", "GET", "OPTIONS", "POST"]  # OPTIONS: HA's CORS preflight
    assert ("/.well-known/oauth-protected-resource/api/mcp_gateway", "GET") in routes
