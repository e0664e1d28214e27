"""Every use of a Home Assistant internal that has no stable API, fenced in one place.

Each function reads or calls something HA does not promise to keep: a private attribute,
another component's `hass.data` or its view. Each says which internal, on which releases it is
known (the two targets, 2025.4.4 and 2026.10.4, are tested in tests/test_compat.py), and what
happens when it changes: the function then fails soft, as its caller's comment says, and never
raises. When HA offers a public way, the function changes here and its callers do not.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
from homeassistant.util import dt as dt_util

if TYPE_CHECKING:
    from homeassistant.components.scene import Scene

_LOGGER = logging.getLogger(__name__)


def cached_translation(
    hass: HomeAssistant, category: str, integration: str, key: str
) -> str | None:
    """A translation HA has already loaded, in the system language (English for a language
    without it), or None.

    Internal: `homeassistant.helpers.translation.async_get_cached_translations`, HA's
    translation cache (no underscore, but not part of the documented integration API; both
    targets have it). If it goes or changes: None, and HA names the entity itself (our entity
    names then keep their device's name as a prefix, as HA shows them).
    """
    read = getattr(translation, "async_get_cached_translations", None)
    try:
        cached = read(hass, hass.config.language, category, integration)  # type: ignore[misc]
        text = cached.get(key)
    except Exception:  # an internal's changed shape must not break entity naming
        _LOGGER.debug("Home Assistant's translation cache could not be read", exc_info=True)
        return None
    return text if isinstance(text, str) else None


async def async_ha_oauth_metadata(request: web.Request) -> dict[str, Any]:
    """What the running HA declares in its own RFC 8414 document, or {}.

    Internal: the auth component's view `login_flow.WellKnownOAuthInfoView` (since HA 2022.9;
    2026.10 adds `code_challenge_methods_supported` and `client_id_metadata_document_supported`),
    called with the request as HA would. If it goes or changes shape: {}, and the gateway's
    metadata advertises no capability HA may not enforce (no PKCE, no metadata documents).
    """
    from homeassistant.components.auth import login_flow  # loaded with auth, HA's own

    view = getattr(login_flow, "WellKnownOAuthInfoView", None)
    try:
        response = await view().get(request)  # type: ignore[misc]
        document = json.loads(response.body)
    except Exception:  # another component's internals: fail closed, advertise less
        _LOGGER.debug("Home Assistant's own OAuth metadata could not be read", exc_info=True)
        return {}
    return document if isinstance(document, dict) else {}


def record_scene_activation(scene: Scene) -> None:
    """Note on a scene entity that it ran now (its state is that time), without running it.

    Internal: HA 2026.x's `BaseScene._async_record_activation` (private, what activating a
    scene calls); 2025.4 keeps the time only in the name-mangled field
    `Scene.__last_activated`, which is set instead. If both change: the field is set anyway
    and HA may ignore it, so the scene's state keeps its last run's time; nothing fails. The
    caller writes the state.
    """
    record = getattr(type(scene), "_async_record_activation", None)
    if callable(record):
        try:
            record(scene)
        except Exception:  # a changed private method: fall back to the field
            _LOGGER.debug("Scene._async_record_activation failed", exc_info=True)
        else:
            return
    scene._Scene__last_activated = dt_util.utcnow().isoformat()  # type: ignore[attr-defined]
