"""Who may see what: one function per question, asked by every path (the gateway's tools,
HA's LLM API through them, the integration's actions through the policy).

Two things decide it: Home Assistant's own entity permissions (read, control) and, for
assistants, HA's "expose to assistants" setting. HA's own MCP server and Assist reach only the
entities exposed to the `conversation` assistant (`homeassistant.helpers.llm` asks
`async_should_expose(hass, "conversation", entity_id)`); the gateway does the same unless its
settings say every entity of its backends is reachable.

The filters take anything with an `entity_id` (the gateway's entity references), so this
module needs nothing above it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Protocol

from homeassistant.auth.models import User
from homeassistant.auth.permissions.const import POLICY_CONTROL, POLICY_READ
from homeassistant.components.homeassistant.exposed_entities import async_should_expose
from homeassistant.core import HomeAssistant

from ..core.settings import gateway_settings

# The assistant id HA's conversation agents, Assist and mcp_server check exposure for.
ASSISTANT: Final = "conversation"


class Entity(Protocol):
    """What the filters need of an entity: its id."""

    @property
    def entity_id(self) -> str:
        """The entity's id."""
        ...


def can_read_entity(user: User, entity_id: str) -> bool:
    """May the user read the entity (HA's own entity read permission)?"""
    return user.permissions.check_entity(entity_id, POLICY_READ)


def can_control_entity(user: User, entity_id: str) -> bool:
    """May the user control the entity (HA's own entity control permission)?"""
    return user.permissions.check_entity(entity_id, POLICY_CONTROL)


def reads_every_entity(user: User) -> bool:
    """May the user read every entity (no entity is kept from them)?"""
    return user.permissions.access_all_entities(POLICY_READ)


def exposure_applies(hass: HomeAssistant) -> bool:
    """Does exposure limit the gateway: the option, and HA's settings being loaded?

    The `homeassistant` integration, which keeps them, always runs in a real Home Assistant;
    without it there is no exposure to honour.
    """
    return gateway_settings(hass).exposed_only and "homeassistant" in hass.config.components


def is_exposed_entity(hass: HomeAssistant, entity_id: str) -> bool:
    """Is the entity exposed to assistants (HA's defaults apply to new entities)?"""
    return async_should_expose(hass, ASSISTANT, entity_id)


def readable_entities[E: Entity](hass: HomeAssistant, user: User, entities: Iterable[E]) -> list[E]:
    """The entities the user's assistant may read: readable by the user and, while exposure
    applies, exposed to assistants (in the given order)."""
    exposed = exposure_applies(hass)
    return [
        entity
        for entity in entities
        if can_read_entity(user, entity.entity_id)
        and (not exposed or is_exposed_entity(hass, entity.entity_id))
    ]


def may_see_entities(hass: HomeAssistant, user: User, entity_ids: Iterable[str]) -> bool:
    """May the user's assistant read every one of these entities (readable and, while
    exposure applies, exposed)?"""
    entity_ids = tuple(entity_ids)
    if not all(can_read_entity(user, entity_id) for entity_id in entity_ids):
        return False
    return not exposure_applies(hass) or all(
        is_exposed_entity(hass, entity_id) for entity_id in entity_ids
    )


def permitted_entities[E: Entity](user: User, entities: Iterable[E]) -> list[E]:
    """The entities the user may read, whatever exposure says (to name what is hidden)."""
    return [entity for entity in entities if can_read_entity(user, entity.entity_id)]


def unexposed_entities[E: Entity](hass: HomeAssistant, entities: Iterable[E]) -> list[E]:
    """The entities hidden from assistants while exposure applies (none while it does not)."""
    if not exposure_applies(hass):
        return []
    return [entity for entity in entities if not is_exposed_entity(hass, entity.entity_id)]
