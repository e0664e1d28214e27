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

from ...core.settings import GatewaySettings, normalize_origin, origin_allowed

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


def request_host(request: web.Request) -> str | None:
    """The host the request names, or None when its Host header is no host at all.

    Anyone can send a Host such as `localhost@evil.com` or `127.0.0.1:1/x?`: aiohttp's
    `request.url` reads the first as a user at evil.com and refuses others, and HA's own URL
    lookup (`get_url`, which reads the raw header up to its port) raises ValueError for both.
    Such a request is a client error to answer, never an exception to log.
    """
    raw = request.headers.get(hdrs.HOST)
    try:
        host = request.url.host
        if raw is not None:
            # As helpers/network.py's _get_request_host cuts it, then as get_url builds it.
            name = raw.partition("[")[2].partition("]")[0] if "[" in raw else raw.partition(":")[0]
            URL.build(scheme="http", host=name)
    except ValueError:
        return None
    return host


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
    host = request_host(request)
    if normalized and is_loopback_host(host) and is_loopback_host(URL(normalized).host):
        return True
    return origin_allowed(origin, (*own_origins(hass), *settings.allowed_origins))


def public_base(hass: HomeAssistant, request: web.Request) -> str | None:
    """The `scheme://host[:port]` to publish for this request, or None if HA has none.

    The request's own origin when its host is loopback; else the configured URL whose host the
    request used (`get_url(require_current_request=True)`); else a configured URL, external
    first (a foreign Host gets HA's real address, which the client can compare). None too for a
    malformed Host: HA's own URL lookup would parse it again and fail.
    """
    host = request_host(request)
    if host is None:
        return None
    if is_loopback_host(host):
        return normalize_origin(str(request.url.origin()))
    for kwargs in ({"require_current_request": True}, {"prefer_external": True}):
        try:
            return get_url(hass, allow_ip=True, **kwargs).rstrip("/")
        except NoURLAvailableError:
            continue
    return None
