"""HA's "expose to assistants" settings, as the gateway honours them.

HA's own MCP server and Assist reach only the entities exposed to the `conversation` assistant
(`homeassistant.helpers.llm` asks `async_should_expose(hass, "conversation", entity_id)`); the
gateway does the same unless its settings say every entity of its backends is reachable.
"""

from __future__ import annotations

from collections.abc import Iterable
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


def require_exposed(hass: HomeAssistant, entity_ids: Iterable[str], what: str) -> None:
    """A backend call may address only exposed entities' devices (when exposure applies)."""
    if not exposure_applies(hass):
        return
    if hidden := sorted(e for e in entity_ids if not is_exposed_entity(hass, e)):
        raise PermissionDenied(
            f"Permission denied: {what} addresses {', '.join(hidden)}, not exposed to "
            "assistants in Home Assistant (Settings → Voice assistants → Expose)."
        )
