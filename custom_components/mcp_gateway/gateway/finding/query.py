"""The filters get_state and get_history share (and set_state's lookups by name or id): their
schema, and the typed query one call's arguments become, parsed once at the tool's door.

The handler has checked the arguments against the schema before a tool runs, so parsing only
normalises: an empty string or list is "not given" (strict-mode clients fill every property,
and an empty one is how they leave it out), domains are compared casefolded. What the filters
name (an area, a floor, a backend) is resolved, and refused when unknown, by selection.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, NamedTuple

# The most entity ids one filter names (as many as get_state's largest page).
MAX_ENTITY_IDS: Final = 1000

FILTER_PROPERTIES: Final[dict[str, Any]] = {
    "backend": {
        "type": "string",
        "description": "Gateway tool name, entry title or backend kind.",
    },
    "area": {
        "type": "string",
        "description": "Area name, alias, id or part of it.",
    },
    "floor": {"type": "string", "description": "Floor name, alias or id."},
    "home": {
        "type": "string",
        "description": "A home: a HomeKit home, a hub, or HA's own (\"Rob's Flat\").",
    },
    "domain": {
        "type": "array",
        "items": {"type": "string"},
        "description": 'Entity domains, e.g. ["light", "switch"].',
    },
    "name": {
        "type": "string",
        "description": (
            'Words of the name, alias, device, area or entity id, any order ("kitchen lights").'
        ),
    },
    "available": {
        "type": "boolean",
        "description": "false: only offline (unavailable) entities; true: only the others.",
    },
    "entity_ids": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_ENTITY_IDS},
}


def casefold(value: str) -> str:
    """A word as the filters compare it."""
    return value.strip().casefold()


def given(args: Mapping[str, Any], key: str) -> Any:
    """An argument's value; empty strings and lists mean "not given"."""
    value = args.get(key)
    return None if value in ("", []) else value


# A NamedTuple, not a frozen dataclass: as immutable and as typed, and built in half the time
# (every call builds one; a frozen dataclass sets each field through object.__setattr__).
class EntityQuery(NamedTuple):
    """Which entities one call asks for, each filter None when not given."""

    backend: str | None = None
    home: str | None = None
    floor: str | None = None
    area: str | None = None
    # Casefolded.
    domain: frozenset[str] | None = None
    name: str | None = None
    available: bool | None = None
    entity_ids: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, args: Mapping[str, Any]) -> EntityQuery:
        """The filters of a call's (schema-checked) arguments: texts and lists, where `or`
        leaves out the empty ones as given() does."""
        get = args.get
        domain = get("domain")
        entity_ids = get("entity_ids")
        return cls(
            get("backend") or None,
            get("home") or None,
            get("floor") or None,
            get("area") or None,
            frozenset(casefold(item) for item in domain) if domain else None,
            get("name") or None,
            # false is a filter of its own: only an absent value is "not given".
            get("available"),
            tuple(entity_ids) if entity_ids else None,
        )

    @property
    def names_entities(self) -> bool:
        """Whether the query names what is wanted (a name, entity ids, domains): an answer to
        it says what else it matched, hidden from assistants."""
        return bool(self.name or self.entity_ids or self.domain)
