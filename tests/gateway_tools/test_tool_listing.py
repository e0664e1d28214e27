"""How gateway tool descriptions list their tools, and how the short names map back."""

from __future__ import annotations

from custom_components.mcp_gateway.gateway.catalog.gateway_tool import full_tool_name, tool_listing

HUB = [f"hub_{verb}_{thing}" for verb in ("get", "set") for thing in "abcdef"]


def test_a_prefix_every_name_shares_is_written_once() -> None:
    """Twelve hub_ names: the prefix is said once and each name is listed without it."""
    listing = tool_listing(HUB)
    assert listing.startswith('Tools, each named "hub_" + one of: get_a, get_b,')
    assert "hub_get_a" not in listing
    assert len(listing) < len(f"Tools: {', '.join(HUB)}.")


def test_few_or_unrelated_names_are_listed_as_they_are() -> None:
    """Short lists, mixed prefixes and names without an underscore stay whole."""
    assert tool_listing(HUB[:3]) == "Tools: hub_get_a, hub_get_b, hub_get_c."
    mixed = [*HUB, "get_state"]
    assert tool_listing(mixed) == f"Tools: {', '.join(mixed)}."
    plain = [f"tool{n}" for n in range(10)]
    assert tool_listing(plain) == f"Tools: {', '.join(plain)}."


def test_full_tool_name_takes_the_short_form_back() -> None:
    """Exactly one tool of one-word prefix plus the name: that tool; otherwise unchanged."""
    assert full_tool_name(HUB, "get_a") == "hub_get_a"
    assert full_tool_name(HUB, "hub_get_a") == "hub_get_a"
    assert full_tool_name(HUB, "a") == "a"  # hub_get_a's prefix is two words, not one
    assert full_tool_name(["hub_x", "app_x"], "x") == "x"  # ambiguous
    assert full_tool_name(["get_state"], "nothing") == "nothing"
