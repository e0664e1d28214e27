"""Where Homecast's live-update socket is, and what it is doing (status, failures).

The cloud's `/ws` takes the credential in its query (pyhomecast `_build_ws_url`); after a
`redirect` the same host's target is used with our query set on top of its own (websocket.ts
establishConnection / redirectTo; affinity-target.ts isPlausible: only a ws(s) URL of the host
we were given, as the credential goes with it; forgotten once it fails to say a word). The
community socket is on the port the Mac app's `/health` advertises (`wsPort`), else HTTP + 1.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
import time
from typing import Any, Final

import aiohttp
from yarl import URL

CONNECT_TIMEOUT: Final = 10.0


@dataclass(slots=True)
class PushStatus:
    """What the live-update channel does, for diagnostics (no secrets)."""

    mode: str = "polling"  # "push" while every followed home is subscribed, else "polling"
    reason: str = "starting"
    connected_since: float | None = None
    connections: int = 0
    redirects: int = 0
    last_error: str | None = None
    subscribed: list[str] = field(default_factory=list)
    not_granted: int = 0

    def as_dict(self, counters: Mapping[str, int] | None = None) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "reason": self.reason,
            "connected_for_s": (
                round(time.monotonic() - self.connected_since)
                if self.connected_since is not None
                else None
            ),
            "connections": self.connections,
            "redirects": self.redirects,
            **(counters or {}),
            "last_error": self.last_error,
            "subscribed_homes": len(self.subscribed),
            "homes_not_granted": self.not_granted,
        }


class PushRefused(Exception):
    """The server refused the credential on its socket."""


class PushUnavailable(Exception):
    """The socket cannot be reached or answered in a way we cannot use."""

    def __init__(self, message: str, reason: str = "unavailable") -> None:
        super().__init__(message)
        self.reason = reason


class PushAddress:
    """The socket's URL for one entry (the redirect target once the cloud gave one)."""

    def __init__(self, mcp_url: URL, community: bool, device_id: str) -> None:
        self.mcp_url = mcp_url
        self.community = community
        self.device_id = device_id
        self.redirect: URL | None = None

    async def url(self, session: aiohttp.ClientSession, token: Callable[[], Awaitable[str]]) -> URL:
        origin = self.mcp_url.origin()
        scheme = "wss" if origin.scheme == "https" else "ws"
        if self.community:
            return origin.with_scheme(scheme).with_port(await self._community_port(session))
        base = self.redirect or origin.with_scheme(scheme).with_path("/ws")
        # establishConnection: the target keeps its own query; ours is set on top of it.
        return base.update_query(
            token=await token(),
            device_id=self.device_id,
            client_type="homeassistant",
            device_name="Home Assistant",
        )

    async def _community_port(self, session: aiohttp.ClientSession) -> int:
        """The socket's port as the Mac app advertises it (LocalHTTPServer.swift /health)."""
        origin = self.mcp_url.origin()
        fallback = (origin.port or 5656) + 1
        try:
            async with session.get(
                origin.with_path("/health"), timeout=aiohttp.ClientTimeout(total=CONNECT_TIMEOUT)
            ) as resp:
                body = await resp.json(content_type=None) if resp.status == 200 else None
        except (aiohttp.ClientError, TimeoutError, ValueError, RecursionError):
            return fallback
        if not isinstance(body, Mapping) or "wsPort" not in body:
            return fallback
        port = body.get("wsPort")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            # 0: the app's socket is not listening (wsPort is set once it is ready).
            raise PushUnavailable("the server advertises no WebSocket")
        return port

    def follow(self, target: Any) -> bool:
        """Take a redirect's target if it is a ws(s) URL on our host; whether it was taken."""
        if not isinstance(target, str) or self.community:
            return False
        try:
            url = URL(target)
        except ValueError:
            return False
        origin = self.mcp_url.origin()
        if url.scheme not in ("ws", "wss") or (url.host, url.port) != (origin.host, origin.port):
            return False
        self.redirect = url
        return True

    def forget_redirect(self) -> None:
        self.redirect = None
