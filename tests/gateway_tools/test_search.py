"""BM25 search: tokenising, ranking and limits."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from custom_components.mcp_gateway.gateway.search import Bm25Index, SearchDocument, tokenize


def _doc(key: str, description: str = "", title: str = "") -> SearchDocument:
    return SearchDocument(key, key, title, description)


def test_tokenize_splits_identifiers_and_folds_plurals() -> None:
    """snake_case, camelCase and kebab-case all split; plurals fold; stop words go."""
    assert tokenize("hub_list_devices") == ["hub", "list", "device"]
    assert tokenize("setColorTemperature") == ["set", "color", "temperature"]
    assert tokenize("The batteries of a lock-box") == ["battery", "lock", "box"]
    assert tokenize("glass") == ["glass"]


def test_name_match_outranks_description_match() -> None:
    """A word in a tool's name weighs more than the same word in another tool's prose."""
    index = Bm25Index(
        [
            _doc("get_weather", "Forecast for the location."),
            _doc("list_devices", "Lists devices; weather stations included."),
        ]
    )
    hits = index.search("weather")
    assert [hit.key for hit in hits] == ["get_weather", "list_devices"]
    assert hits[0].score > hits[1].score > 0


def test_rare_terms_decide_the_ranking() -> None:
    """IDF: a term that occurs in one document matters more than one in all of them."""
    index = Bm25Index(
        [
            _doc("a_tool", "device device device"),
            _doc("b_tool", "device thermostat"),
            _doc("c_tool", "device"),
        ]
    )
    assert index.search("device thermostat")[0].key == "b_tool"


def test_limits_and_empty_queries() -> None:
    """No terms or a zero limit find nothing; limit cuts the list; misses are not returned."""
    index = Bm25Index([_doc(f"tool_{n}", "light switch") for n in range(10)])
    assert len(index) == 10
    assert index.search("the of a") == []
    assert index.search("light", limit=0) == []
    assert len(index.search("light", limit=3)) == 3
    assert index.search("garage") == []
    # Equal scores keep catalog order, so results are stable between calls.
    assert [hit.key for hit in index.search("switch", limit=2)] == ["tool_0", "tool_1"]


def test_empty_index() -> None:
    """An empty catalog answers every query with nothing."""
    assert Bm25Index([]).search("anything") == []


@settings(max_examples=200)
@given(
    docs=st.lists(st.text(max_size=40), max_size=8),
    query=st.text(max_size=30),
    limit=st.integers(min_value=-2, max_value=12),
)
def test_search_never_fails_and_respects_limit(docs: list[str], query: str, limit: int) -> None:
    """Any text: results are distinct known keys, sorted by score, never more than limit."""
    index = Bm25Index([_doc(f"k{n}", text) for n, text in enumerate(docs)])
    hits = index.search(query, limit)
    assert len(hits) <= max(limit, 0)
    assert len({hit.key for hit in hits}) == len(hits)
    assert all(hit.key in {f"k{n}" for n in range(len(docs))} for hit in hits)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_synonyms_help_but_literal_matches_win() -> None:
    """ "set an alarm" finds create_alarm; a tool literally about "set" still ranks above."""
    index = Bm25Index(
        [
            _doc("delete_alarm", "Remove an alarm."),
            _doc("create_alarm", "Store a new alarm."),
        ]
    )
    assert index.search("set alarm")[0].key == "create_alarm"
    literal = Bm25Index([_doc("create_rule", "New rule."), _doc("set_rule", "Rule values.")])
    assert [hit.key for hit in literal.search("set rule")] == ["set_rule", "create_rule"]
