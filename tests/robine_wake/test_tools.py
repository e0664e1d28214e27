"""How the gateway classifies the clock's tools and filters its listings for one caller."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from homeassistant.const import Platform
import pytest

from custom_components.mcp_gateway.backends.robine_wake.tools import (
    alarm_entities,
    classify,
    filter_alarms,
)
from custom_components.mcp_gateway.framework.base import ToolTier, UnknownListing


class _Shown:
    """Shows the alarms whose every entity it is given."""

    def __init__(self, *alarm_ids: str) -> None:
        self.entity_keys = {key for alarm in alarm_ids for key in alarm_entities(alarm)}

    def device(self, key: str) -> bool:
        return True

    def entities(self, keys: Iterable[tuple[Platform, str]]) -> bool:
        return all(key in self.entity_keys for key in keys)


@pytest.mark.parametrize(
    ("tool", "tier", "destructive"),
    [
        ({"name": "delete_alarm"}, ToolTier.CONTROL, True),
        ({"name": "list_alarms"}, ToolTier.READ, False),
        ({"name": "factory_reset", "annotations": {"destructiveHint": True}}, ToolTier.ADMIN, True),
        ({"name": "show_logs", "annotations": {"readOnlyHint": True}}, ToolTier.READ, False),
        ({"name": "firmware_update", "annotations": "not a mapping"}, ToolTier.ADMIN, False),
    ],
)
def test_classes(tool: dict[str, Any], tier: ToolTier, destructive: bool) -> None:
    """Known tools by the table; a new one is admin unless it says it only reads."""
    found = classify(tool)
    assert (found.tier, found.destructive) == (tier, destructive)


def test_listing_not_an_object() -> None:
    """An answer that cannot be filtered is refused rather than passed on."""
    with pytest.raises(UnknownListing):
        filter_alarms(["alarms"], _Shown())


def test_withheld_alarms_take_their_sessions_with_them() -> None:
    """A caller sees only its alarms, and no session (active or recent) of another's."""
    data = {
        "alarms": [{"id": "a1", "label": "Work"}, {"id": "a2", "label": "Gym"}, "junk"],
        "active_session": {"alarm_id": "a2", "state": "ringing"},
        "recent_sessions": [
            {"alarm_id": "a1", "state": "dismissed"},
            {"alarm_id": "a2", "state": "snoozed"},
            "junk",
        ],
    }
    answer, withheld = filter_alarms(data, _Shown("a1"))
    assert answer == {
        "alarms": [{"id": "a1", "label": "Work"}],
        "active_session": None,
        "recent_sessions": [{"alarm_id": "a1", "state": "dismissed"}, "junk"],
    }
    # Two alarms (one unreadable), the active session, one recent session.
    assert withheld == 4
    assert data["active_session"] == {"alarm_id": "a2", "state": "ringing"}  # not mutated


def test_state_without_alarms() -> None:
    """get_state with no alarm list: nothing is withheld, sessions of no alarm stay."""
    data = {"active_session": {"alarm_id": None}, "recent_sessions": "not a list", "volume": 3}
    assert filter_alarms(data, _Shown()) == (data, 0)
