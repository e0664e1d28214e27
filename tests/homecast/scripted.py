"""Homecast live updates against a scripted socket, and broadcasts applied to a real entry's data.

A scripted server answers each step of one connection as a test tells it (refusals, odd
answers, silence); the pushes land on a polling entry set up from the simulator. The fixtures
(`scripted`, `polled`) are in conftest.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
import json
from typing import Any

from aiohttp import WSMsgType, web
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast.coordinator import HomecastCoordinator
from custom_components.mcp_gateway.backends.homecast.push import HomecastPush

from .sim import Sim

type Script = Callable[[web.WebSocketResponse, dict[str, Any]], Awaitable[None]]


class ScriptedServer:
    """A cloud-style socket at /ws (and /health) that plays one script per connection."""

    def __init__(self) -> None:
        self.script: Script | None = None
        self.handshake_status: int | None = None
        self.health: web.Response = web.Response(status=404)
        self.received: list[dict[str, Any]] = []
        self.app = web.Application()
        self.app.router.add_get("/ws", self._socket)
        self.app.router.add_get("/health", self._health)
        self.origin = ""

    async def _health(self, _request: web.Request) -> web.Response:
        return self.health

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        if self.handshake_status is not None:
            return web.Response(status=self.handshake_status)
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        subscribe = await self.next(ws)
        assert self.script is not None
        await self.script(ws, subscribe)
        # Keep the connection open until the client closes it.
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                self.received.append(json.loads(msg.data))
        return ws

    async def next(self, ws: web.WebSocketResponse) -> dict[str, Any]:
        """The client's next JSON message (pings included)."""
        msg = await ws.receive()
        assert msg.type == WSMsgType.TEXT
        data: dict[str, Any] = json.loads(msg.data)
        self.received.append(data)
        return data


def answer(subscribe: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "response", "id": subscribe["id"], **extra}


def coordinator_of(entry: MockConfigEntry) -> HomecastCoordinator:
    coordinator = entry.runtime_data.coordinator
    assert isinstance(coordinator, HomecastCoordinator)
    return coordinator


def push_to(
    hass: HomeAssistant, entry: MockConfigEntry, origin: str, *, community: bool = False
) -> HomecastPush:
    """A socket of `entry`'s coordinator to `origin` (not started)."""

    async def _token() -> str:
        return "secret_token"

    return HomecastPush(
        hass,
        entry,
        coordinator_of(entry),
        mcp_url=f"{origin}/mcp",
        community=community,
        token=_token,
        poll_interval=30,
    )


def broadcast(sim: Sim, acc: Any, **extra: Any) -> dict[str, Any]:
    return {
        "type": "characteristic_update",
        "accessoryId": acc.uuid.upper(),
        "homeId": sim.state.homes[0].uuid.upper(),
        **extra,
    }


def our_accessory(entry: MockConfigEntry, sim: Sim, acc: Any) -> Any:
    data = coordinator_of(entry).data
    assert data is not None
    home = data.homes[sim.state.homes[0].uuid.lower()]
    return home.accessories[acc.slug.rsplit("_", 1)[-1]]
