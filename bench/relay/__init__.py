"""Benchmark only: the least a Home Assistant view can do to relay MCP to a backend.

`bench.gateway` measures a tool call through this relay beside the same call through our
gateway: both pay HA's HTTP stack (middlewares, token check) and a second HTTP hop to the
backend, so their difference is what the gateway's own work (policy, catalog, results) costs.
Configured from YAML: `bench_relay: {url: <backend MCP URL>}`.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Final

from aiohttp import hdrs, web
from homeassistant.components.http import KEY_HASS, HomeAssistantView
from homeassistant.core import HomeAssistant
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.typing import ConfigType

DOMAIN: Final = "bench_relay"
URL: Final = "/api/bench_relay"
# What an MCP exchange needs carried each way.
REQUEST_HEADERS: Final = (
    hdrs.CONTENT_TYPE,
    hdrs.ACCEPT,
    "Mcp-Session-Id",
    "MCP-Protocol-Version",
    "Last-Event-ID",
    # 2026-07-28 mirrors the method and tool name into headers the server must check.
    "Mcp-Method",
    "Mcp-Name",
)
REPLY_HEADERS: Final = (hdrs.CONTENT_TYPE, "Mcp-Session-Id")


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the relay view for the configured backend URL."""
    hass.http.register_view(RelayView(config[DOMAIN]["url"]))
    return True


class RelayView(HomeAssistantView):
    """POST /api/bench_relay: the body and MCP headers to the backend, its answer back."""

    url = URL
    name = "api:bench_relay"
    requires_auth = True

    def __init__(self, target: str) -> None:
        self._target = target

    async def post(self, request: web.Request) -> web.Response:
        """Relay one MCP POST."""
        session = async_get_clientsession(request.app[KEY_HASS])
        sent = request.headers
        headers = {name: sent[name] for name in REQUEST_HEADERS if name in sent}
        async with session.post(self._target, data=await request.read(), headers=headers) as reply:
            body = await reply.read()
            back = {name: reply.headers[name] for name in REPLY_HEADERS if name in reply.headers}
            return web.Response(body=body, status=reply.status, headers=back)

    async def get(self, request: web.Request) -> web.Response:
        """No stream to offer (like the gateway)."""
        return web.Response(status=HTTPStatus.METHOD_NOT_ALLOWED)

    async def delete(self, request: web.Request) -> web.Response:
        """No session to end."""
        return web.Response(status=HTTPStatus.METHOD_NOT_ALLOWED)
