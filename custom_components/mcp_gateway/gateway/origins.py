"""Which origins the gateway trusts: for browsers' `Origin`, and for the URLs it publishes.

The URLs in the 401 challenge and in the OAuth documents come from Home Assistant's configured
URLs (internal, external, cloud), never from a `Host` header an attacker chose: those documents
are cacheable, so a forged host would be served to others. A loopback host is the exception, as
for Home Assistant's own `get_url`: only this machine reaches it, through any local port.
"""

from __future__ import annotations

from ipaddress import ip_address
from typing import Final

from aiohttp import hdrs, web
from homeassistant.core import HomeAssistant
from homeassistant.helpers.network import NoURLAvailableError, get_url
from yarl import URL

from .settings import GatewaySettings, normalize_origin, origin_allowed

_LOOPBACK_NAMES: Final = frozenset({"localhost"})


def is_loopback_host(host: str | None) -> bool:
    """Whether a host name or address is this machine's loopback interface."""
    if not host:
        return False
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ip_address(name).is_loopback
    except ValueError:
        return False


def own_origins(hass: HomeAssistant) -> set[str]:
    """Origins of Home Assistant's own configured URLs (internal, external, cloud)."""
    origins: set[str] = set()
    for kwargs in ({"allow_external": False}, {"allow_internal": False}):
        try:
            url = get_url(hass, allow_ip=True, **kwargs)
        except NoURLAvailableError:
            continue
        if origin := normalize_origin(url):
            origins.add(origin)
    return origins


def check_origin(hass: HomeAssistant, request: web.Request, settings: GatewaySettings) -> bool:
    """A present Origin must be HA's own, allowed by option, or loopback on a loopback host.

    A missing Origin is fine (no browser). The loopback pair serves a client on this machine
    that reaches Home Assistant through a local proxy on another port; DNS rebinding cannot
    produce it, because a rebound page's Host is the attacker's name, not a loopback one.
    """
    origin = request.headers.get(hdrs.ORIGIN)
    if origin is None:
        return True
    normalized = normalize_origin(origin)
    if normalized and is_loopback_host(request.url.host) and is_loopback_host(URL(normalized).host):
        return True
    return origin_allowed(origin, (*own_origins(hass), *settings.allowed_origins))


def public_base(hass: HomeAssistant, request: web.Request) -> str | None:
    """The `scheme://host[:port]` to publish for this request, or None if HA has none.

    The request's own origin when its host is loopback; else the configured URL whose host the
    request used (`get_url(require_current_request=True)`); else a configured URL, external
    first (a foreign Host gets HA's real address, which the client can compare).
    """
    if is_loopback_host(request.url.host):
        return normalize_origin(str(request.url.origin()))
    for kwargs in ({"require_current_request": True}, {"prefer_external": True}):
        try:
            return get_url(hass, allow_ip=True, **kwargs).rstrip("/")
        except NoURLAvailableError:
            continue
    return None
