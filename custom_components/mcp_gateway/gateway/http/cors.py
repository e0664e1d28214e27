"""CORS on the gateway's views: the headers MCP needs, for the origins the gateway allows.

Home Assistant's CORS (http's `cors_allowed_origins`, through aiohttp_cors) allows a fixed list
of request headers without `MCP-Protocol-Version` or `Mcp-Session-Id`, and its own origins rather
than the gateway's, so a browser-based MCP client's preflight fails there. These views therefore
answer preflights themselves and add the response headers; they are registered without HA's
CORS (it would claim the OPTIONS route of the same path).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any, ClassVar, Final

from aiohttp import hdrs, web
from homeassistant.core import HomeAssistant
from homeassistant.helpers.http import KEY_HASS, HomeAssistantView, request_handler_factory

from ...core.settings import gateway_settings
from .origins import check_origin

# What the MCP transport and OAuth discovery send (MCP 2025-06-18+: MCP-Protocol-Version on
# every request, Mcp-Session-Id on stateful servers, Last-Event-ID on resumed streams).
ALLOWED_HEADERS: Final = (
    "Accept",
    "Authorization",
    "Content-Type",
    "Last-Event-ID",
    "MCP-Protocol-Version",
    "Mcp-Session-Id",
)
# What a browser client must read: the session, the OAuth pointer of a 401, a 429's wait.
EXPOSED_HEADERS: Final = (
    "Mcp-Session-Id",
    "MCP-Protocol-Version",
    "WWW-Authenticate",
    "Retry-After",
)
_MAX_AGE: Final = 600
_METHODS: Final = ("get", "post", "delete", "put", "patch", "head")

type Handler = Callable[..., Awaitable[web.StreamResponse]]


class CorsView(HomeAssistantView):
    """A view that answers CORS itself.

    `cors_public` documents (OAuth metadata) may be read from any origin; the others only
    from origins the gateway's Origin rule accepts (HA's own URLs, the settings' list,
    loopback on loopback).
    """

    cors_public: ClassVar[bool] = False

    def register(
        self, hass: HomeAssistant, app: web.Application, router: web.UrlDispatcher
    ) -> None:
        """HomeAssistantView.register, with our preflight instead of HA's CORS."""
        assert self.url is not None, "No url set for view"
        methods = [method for method in _METHODS if getattr(self, method, None) is not None]
        for url in (self.url, *self.extra_urls):
            for method in methods:
                handler = _decorated(self, getattr(self, method))
                router.add_route(method, url, request_handler_factory(hass, self, handler))
            router.add_route(
                hdrs.METH_OPTIONS, url, request_handler_factory(hass, self, self._preflight)
            )
        self._allow_methods = ", ".join(method.upper() for method in (*methods, "options"))

    def allowed_origin(self, request: web.Request) -> str | None:
        """The Access-Control-Allow-Origin value for this request, or None for no CORS."""
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is None:
            return None
        if self.cors_public:
            return "*"
        hass = request.app[KEY_HASS]
        return origin if check_origin(hass, request, gateway_settings(hass)) else None

    async def _preflight(self, request: web.Request) -> web.Response:
        allowed = self.allowed_origin(request)
        if allowed is None or hdrs.ACCESS_CONTROL_REQUEST_METHOD not in request.headers:
            return web.Response(status=HTTPStatus.FORBIDDEN, headers={hdrs.VARY: hdrs.ORIGIN})
        return web.Response(
            status=HTTPStatus.NO_CONTENT,
            headers={
                hdrs.ACCESS_CONTROL_ALLOW_ORIGIN: allowed,
                hdrs.ACCESS_CONTROL_ALLOW_METHODS: self._allow_methods,
                hdrs.ACCESS_CONTROL_ALLOW_HEADERS: ", ".join(ALLOWED_HEADERS),
                hdrs.ACCESS_CONTROL_MAX_AGE: str(_MAX_AGE),
                hdrs.VARY: hdrs.ORIGIN,
            },
        )

    def add_cors_headers(self, request: web.Request, response: web.StreamResponse) -> None:
        """The headers of an actual (non-preflight) response, before it is sent."""
        if response.prepared:
            return
        response.headers[hdrs.VARY] = hdrs.ORIGIN
        if (allowed := self.allowed_origin(request)) is not None:
            response.headers[hdrs.ACCESS_CONTROL_ALLOW_ORIGIN] = allowed
            response.headers[hdrs.ACCESS_CONTROL_EXPOSE_HEADERS] = ", ".join(EXPOSED_HEADERS)


def _decorated(view: CorsView, handler: Handler) -> Handler:
    """The handler, with CORS headers on what it returns or raises."""

    async def with_cors(request: web.Request, **kwargs: Any) -> web.StreamResponse:
        try:
            response = await handler(request, **kwargs)
        except web.HTTPException as err:
            view.add_cors_headers(request, err)
            raise
        view.add_cors_headers(request, response)
        return response

    return with_cors
