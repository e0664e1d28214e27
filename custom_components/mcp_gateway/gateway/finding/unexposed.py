"""What a request matched that Home Assistant does not expose to assistants, said to those who
may read it.

HA exposes no locks, and few sensors, by default: on a plain installation the first "lock the
front door" finds nothing. An empty answer must not read as "there is no such lock". The caller
learns which entities it matched are hidden from assistants and the setting that changes it;
entities the caller may not read stay unnamed, as everywhere else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er

from ...permissions.exposure import exposure_applies, is_exposed_entity
from ...permissions.policy import Role, can_read_entity, user_role
from ..catalog.store import ToolFailure
from .selection import EntityRef, candidate_entities, select_entities

# Filters that name what is wanted: an answer to them says what else they matched, hidden.
NAMING_FILTERS: Final = ("name", "entity_ids", "domain")
# Entities named in one hint; the rest are counted.
NAMED: Final = 5
SETTING: Final = "Settings → Voice assistants → Expose"
GATEWAY_OPTION: Final = "the MCP gateway's setting \u201cOnly entities exposed to assistants\u201d"


def unexposed_matches(hass: HomeAssistant, user: User, args: Mapping[str, Any]) -> list[EntityRef]:
    """The entities the filters match that the user may read but that are hidden from
    assistants (none while exposure does not apply)."""
    if not exposure_applies(hass):
        return []
    try:
        matched = select_entities(hass, candidate_entities(hass, args), args).refs
    except ToolFailure:  # an unknown area or home: the caller's own answer says so
        return []
    return [
        ref
        for ref in matched
        if can_read_entity(user, ref.entity_id) and not is_exposed_entity(hass, ref.entity_id)
    ]


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
    return unexposed_hint(hass, user, unexposed_matches(hass, user, {"entity_ids": [entity_id]}))
