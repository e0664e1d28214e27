"""BM25 search: tokenising, ranking and limits."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from custom_components.mcp_gateway.gateway.catalog.search import (
    Bm25Index,
    Intent,
    Request,
    SearchDocument,
    tokenize,
)


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


def test_request_intent_from_plain_words() -> None:
    """A question reads; a wish changes; a create or delete word anywhere in a wish decides."""
    assert Request.parse("what alarms are set").intent is Intent.READ
    assert Request.parse("is the security system armed?").intent is Intent.READ
    assert Request.parse("set an alarm for 7").intent is Intent.CHANGE
    assert Request.parse("make a new scene called Dinner").intent is Intent.CREATE
    assert Request.parse("get rid of my Saturday alarm").intent is Intent.DELETE
    assert Request.parse("what did I delete yesterday").intent is Intent.READ
    assert Request.parse("kitchen lamp").intent is None


def test_phrases_and_question_forms() -> None:
    """Two-word phrases mean one thing; plural questions ask for a list, past ones history."""
    backup = Request.parse("back up the hub")
    assert (backup.terms, backup.intent) == (["create", "backup", "hub"], Intent.CREATE)
    assert Request.parse("wake me up at 6:30").terms[:2] == ["create", "alarm"]
    listing = Request.parse("what rules do I have")
    assert listing.terms == ["rule"]
    assert listing.plural
    assert not listing.past
    assert Request.parse("what did the door do this morning").past


def test_questions_do_not_ask_for_changes() -> None:
    """ "what alarms are set" finds the listing, not the tool that sets one."""
    index = Bm25Index(
        [
            _doc("create_alarm", "Store a new alarm."),
            _doc("list_alarms", "Every stored alarm with its next occurrences."),
        ]
    )
    assert index.search("what alarms are set")[0].key == "list_alarms"
    assert index.search("set an alarm")[0].key == "create_alarm"


def test_everyday_synonyms() -> None:
    """stop → dismiss, back up → backup, run → call, disarm → HSM."""
    index = Bm25Index(
        [
            _doc("trigger_alarm", "Make an alarm ring now."),
            _doc("dismiss_session", "End the active wake session."),
            _doc("hub_create_backup", "Take a full hub database backup now."),
            _doc("hub_call_device_command", "Send a command to a device, e.g. up or back."),
            _doc("hub_call_rule", "Trigger one or more Rule Machine rules."),
            _doc("hub_test_custom_rule", "Dry-run a custom-engine rule."),
            _doc("hub_set_hsm", "Arm or disarm Hubitat Safety Monitor."),
        ]
    )
    assert index.search("stop the wake session")[0].key == "dismiss_session"
    assert index.search("back up the hub")[0].key == "hub_create_backup"
    assert index.search("run the Goodnight rule")[0].key == "hub_call_rule"
    assert index.search("is the security system armed")[0].key == "hub_set_hsm"


def test_particles_numbers_and_listings() -> None:
    """A particle after its object still counts, numbers say nothing of the tool, and a
    question about several things asks to list them, not to get one."""
    assert Request.parse("shut the alarm up").terms[0] == "stop"
    assert Request.parse("turn the kitchen lights off").terms[:2] == ["turn", "off"]
    assert "five" not in Request.parse("give me five more minutes").terms
    assert "snooze" in Request.parse("give me five more minutes").terms
    rooms = Request.parse("show the hub's rooms")
    assert "list" in rooms.actions()
    assert "get" not in rooms.actions()
    assert "get" in Request.parse("show the kitchen").actions()
    index = Bm25Index(
        [
            _doc("hub_get_room", "One room by name or id, with its devices' states."),
            _doc("hub_list_rooms", "All rooms with their ids."),
        ]
    )
    assert index.search("show the hub's rooms")[0].key == "hub_list_rooms"
