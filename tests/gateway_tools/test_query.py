"""A call's filters, parsed once into a typed query."""

from __future__ import annotations

import pytest

from custom_components.mcp_gateway.gateway.finding.query import EntityQuery
from custom_components.mcp_gateway.gateway.tools.get_history import (
    DEFAULT_HISTORY_HOURS,
    DEFAULT_HISTORY_POINTS,
    HistoryQuery,
)
from custom_components.mcp_gateway.gateway.tools.get_state import (
    DEFAULT_STATE_LIMIT,
    StateQuery,
)


def test_every_filter_parsed() -> None:
    """Each key becomes its field; domains are compared casefolded, ids keep their order."""
    query = EntityQuery.parse(
        {
            "backend": "hub",
            "home": "Flat",
            "floor": "Upstairs",
            "area": "Kitchen",
            "domain": [" Light", "switch"],
            "name": "lamp",
            "available": True,
            "entity_ids": ["switch.b", "light.a"],
        }
    )
    assert query == EntityQuery(
        backend="hub",
        home="Flat",
        floor="Upstairs",
        area="Kitchen",
        domain=frozenset({"light", "switch"}),
        name="lamp",
        available=True,
        entity_ids=("switch.b", "light.a"),
    )
    assert query.names_entities


def test_empty_values_are_not_given() -> None:
    """Strict-mode clients fill every property: empty strings and lists filter nothing, while
    available=false is a filter of its own."""
    empty = dict.fromkeys(("backend", "home", "floor", "area", "name"), "")
    query = EntityQuery.parse({**empty, "domain": [], "entity_ids": [], "available": False})
    assert query == EntityQuery(available=False)
    assert not query.names_entities
    assert EntityQuery.parse({}) == EntityQuery()


def test_queries_are_frozen() -> None:
    """A parsed query is passed down the call, never changed on the way."""
    query = EntityQuery.parse({"name": "lamp"})
    with pytest.raises(AttributeError):
        query.name = "other"  # type: ignore[misc]


def test_state_and_history_queries() -> None:
    """The tools' own arguments beside the filters, with their defaults."""
    state = StateQuery.parse({"area": "Hall", "fields": [], "limit": 5, "offset": 10})
    assert state == StateQuery(EntityQuery(area="Hall"), None, 5, 10)
    assert StateQuery.parse({"fields": ["state"]}).fields == ("state",)
    assert StateQuery.parse({}).limit == DEFAULT_STATE_LIMIT
    history = HistoryQuery.parse({"name": "door", "start": "2026-01-01T00:00:00"})
    assert history == HistoryQuery(
        EntityQuery(name="door"),
        "2026-01-01T00:00:00",
        None,
        DEFAULT_HISTORY_HOURS,
        DEFAULT_HISTORY_POINTS,
    )
