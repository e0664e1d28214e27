"""HA's "expose to assistants" settings, as the gateway honours them.

HA's own MCP server and Assist reach only the entities exposed to the `conversation` assistant
(`homeassistant.helpers.llm` asks `async_should_expose(hass, "conversation", entity_id)`); the
gateway does the same unless its settings say every entity of its backends is reachable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from homeassistant.components.homeassistant.exposed_entities import async_should_expose
from homeassistant.core import HomeAssistant

from .policy import PermissionDenied
from .settings import gateway_settings

# The assistant id HA's conversation agents, Assist and mcp_server check exposure for.
ASSISTANT: Final = "conversation"


def exposure_applies(hass: HomeAssistant) -> bool:
    """Whether exposure limits the gateway: the option, and HA's settings being loaded.

    The `homeassistant` integration, which keeps them, always runs in a real Home Assistant;
    without it there is no exposure to honour.
    """
    return gateway_settings(hass).exposed_only and "homeassistant" in hass.config.components


def is_exposed_entity(hass: HomeAssistant, entity_id: str) -> bool:
    """Whether the entity is exposed to assistants (HA's defaults apply to new entities)."""
    return async_should_expose(hass, ASSISTANT, entity_id)


def require_exposed(hass: HomeAssistant, devices: Iterable[Sequence[str]], what: str) -> None:
    """A backend call may address a device only if one of its entities is exposed.

    HA exposes entities, not devices; a device whose every entity is hidden from assistants
    is hidden (its diagnostic entities, never exposed by default, do not hide it).
    """
    if not exposure_applies(hass):
        return
    hidden = [
        entity_ids[0]
        for entity_ids in devices
        if entity_ids and not any(is_exposed_entity(hass, e) for e in entity_ids)
    ]
    if hidden:
        raise PermissionDenied(
            f"Permission denied: {what} addresses {', '.join(sorted(hidden))}, not exposed to "
            "assistants in Home Assistant (Settings → Voice assistants → Expose)."
        )
