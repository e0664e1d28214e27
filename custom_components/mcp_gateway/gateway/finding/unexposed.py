"""What a request matched that Home Assistant does not expose to assistants, said to those who
may read it.

HA exposes no locks, and few sensors, by default: on a plain installation the first "lock the
front door" finds nothing. An empty answer must not read as "there is no such lock". The caller
learns which entities it matched are hidden from assistants and the setting that changes it;
entities the caller may not read stay unnamed, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er

from ...permissions.policy import Role, user_role
from ...permissions.visibility import (
    exposure_applies,
    permitted_entities,
    readable_entities,
    reads_every_entity,
    unexposed_entities,
)
from ..catalog.store import ToolFailure
from .query import EntityQuery
from .selection import (
    EntityRef,
    candidate_entities,
    empty_hint,
    every_entity,
    select_entities,
)

# Entities named in one hint; the rest are counted.
NAMED: Final = 5
SETTING: Final = "Settings → Voice assistants → Expose"
GATEWAY_OPTION: Final = "the MCP gateway's setting \u201cOnly entities exposed to assistants\u201d"


# An answer that matched nothing says whether anything exists, so that "there is no such
# device" needs no second look through the backends: to those who may read every entity, of
# all of them; to others only of those they may read (never a sign of one they may not).
NONE_AT_ALL: Final = "No entity matches these filters, hidden or not: none exists."
NONE_READABLE: Final = "No entity you may read matches these filters, hidden or not."


def unexposed_matches(hass: HomeAssistant, user: User, query: EntityQuery) -> list[EntityRef]:
    """The entities the filters match that the user may read but that are hidden from
    assistants (none while exposure does not apply)."""
    if not exposure_applies(hass):
        return []
    # The hidden first: few, so few reads are checked.
    return permitted_entities(user, unexposed_entities(hass, _matched(hass, query) or []))


def no_match_hint(hass: HomeAssistant, user: User, query: EntityQuery) -> str:
    """For an answer with no entity the user may use: the matches hidden from assistants
    that the user may read (named, with the setting); else what exists instead, led by
    whether anything matches at all."""
    matched = _matched(hass, query)
    readable = permitted_entities(user, matched or [])
    if hidden := unexposed_entities(hass, readable):
        return unexposed_hint(hass, user, hidden)
    everything = readable_entities(hass, user, every_entity(hass))
    # An unknown area or home (the caller's answer says so), or matches that cannot take it.
    if matched is None or readable:
        return empty_hint(hass, everything, query)
    # Whether anything matches at all, said only to whom no entity is kept from.
    lead = NONE_AT_ALL if reads_every_entity(user) else NONE_READABLE
    return empty_hint(hass, everything, query, lead)


def _matched(hass: HomeAssistant, query: EntityQuery) -> list[EntityRef] | None:
    """Every entity of ours the filters match, whoever may read it; None: the filters name
    an unknown area or home."""
    try:
        return select_entities(hass, candidate_entities(hass, query), query).refs
    except ToolFailure:
        return None


def unexposed_hint(hass: HomeAssistant, user: User, refs: Sequence[EntityRef]) -> str:
    """ "lock.front_door (Front door) is not exposed to assistants …": which, and how to
    expose them (an administrator's setting; others are told to ask one). Empty for none."""
    if not refs:
        return ""
    registry = er.async_get(hass)
    named: list[str] = []
    for ref in refs[:NAMED]:
        state = hass.states.get(ref.entity_id)
        label = str(state.attributes.get(ATTR_FRIENDLY_NAME, "")) if state else ""
        entry = registry.async_get(ref.entity_id)
        if entry is not None and entry.hidden_by is not None:
            label = f"{label}, hidden" if label else "hidden"
        named.append(f"{ref.entity_id} ({label})" if label else ref.entity_id)
    more = len(refs) - len(named)
    listed = ", ".join(named) + (f" and {more} more" if more else "")
    one = len(refs) == 1
    what = "It exists" if one else "They exist"
    it = "it" if one else "them"
    if user_role(user) is Role.ADMIN:
        how = f"To let assistants reach {it}: {SETTING}, or turn off {GATEWAY_OPTION}."
    else:
        how = f"An administrator can expose {it} ({SETTING})."
    return (
        f"{listed} {'is' if one else 'are'} not exposed to assistants in Home Assistant. "
        f"{what} but the gateway may not read or control {it}. {how}"
    )


def entity_unexposed(hass: HomeAssistant, user: User, entity_id: str) -> str:
    """The hint for one entity id, when it is ours, readable by the user and unexposed."""
    return unexposed_hint(
        hass, user, unexposed_matches(hass, user, EntityQuery(entity_ids=(entity_id,)))
    )
