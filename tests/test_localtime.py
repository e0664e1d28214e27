"""The shared local-time formatting of results (core/localtime.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from homeassistant.core import HomeAssistant, State
import pytest

from custom_components.mcp_gateway.core.localtime import (
    ISO_INSTANT,
    local_iso,
    local_iso_text,
    local_state,
    localize_json,
    localize_result,
    localize_text,
)
from custom_components.mcp_gateway.mcp.client import ToolResult

BERLIN = ZoneInfo("Europe/Berlin")


def test_local_iso() -> None:
    """Aware times become local ISO text with their offset."""
    when = datetime(2026, 11, 30, 5, 45, tzinfo=UTC)
    assert local_iso(when, BERLIN) == "2026-11-30T06:45:00+01:00"
    assert local_iso(when.replace(microsecond=5), BERLIN) == "2026-11-30T06:45:00.000005+01:00"
    summer = datetime(2026, 7, 1, 4, 45, tzinfo=UTC)
    assert local_iso(summer, BERLIN) == "2026-07-01T06:45:00+02:00"


async def test_local_iso_defaults_to_home_assistants_zone(hass: HomeAssistant) -> None:
    """Without a zone, Home Assistant's own zone is used."""
    await hass.config.async_set_time_zone("America/New_York")
    assert local_iso(datetime(2026, 11, 30, 5, 45, tzinfo=UTC)) == "2026-11-30T00:45:00-05:00"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T05:45:00+00:00", "2026-11-30T06:45:00+01:00"),
        ("2026-11-30T05:45:00Z", "2026-11-30T06:45:00+01:00"),
        ("2026-11-30 05:45+00:00", "2026-11-30T06:45:00+01:00"),
        ("2026-11-30T06:45:00", "2026-11-30T06:45:00"),  # naive: no instant, left alone
        ("2026-11-30", "2026-11-30"),
        ("2026-13-30T05:45:00Z", "2026-13-30T05:45:00Z"),  # shaped like one, but no date
        ("on", "on"),
    ],
)
def test_local_iso_text(text: str, expected: str) -> None:
    """ISO times inside text are localized."""
    assert local_iso_text(text, BERLIN) == expected


def test_localize_text_and_json() -> None:
    """Texts and JSON have their times localized, the input left unchanged."""
    assert (
        localize_text("Snoozed until 2026-11-30T06:04:00Z (1 so far), id 2026-11-30x.", BERLIN)
        == "Snoozed until 2026-11-30T07:04:00+01:00 (1 so far), id 2026-11-30x."
    )
    value = {"a": ["2026-11-30T05:45:00Z", 3, None], "b": {"c": "2026-11-30T05:45:00+00:00"}}
    assert localize_json(value, BERLIN) == {
        "a": ["2026-11-30T06:45:00+01:00", 3, None],
        "b": {"c": "2026-11-30T06:45:00+01:00"},
    }
    assert value["a"][0] == "2026-11-30T05:45:00Z"  # a copy


def test_localize_result_rebuilds_only_what_holds_an_instant() -> None:
    """An answer without instants comes back as it was; one with them is a new result whose
    other parts are kept as they were."""
    plain = ToolResult([{"type": "text", "text": '{"level": 50}'}])
    assert localize_result(plain, BERLIN) is plain
    image = {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    timed = ToolResult([{"type": "text", "text": "at 2026-11-30T05:45:00Z"}, image])
    local = localize_result(timed, BERLIN)
    assert local.text == "at 2026-11-30T06:45:00+01:00"
    assert local.content[1] is image
    assert timed.text == "at 2026-11-30T05:45:00Z"
    structured = ToolResult([], {"at": "2026-11-30T05:45:00Z"})
    assert localize_result(structured, BERLIN).structured == {"at": "2026-11-30T06:45:00+01:00"}


@pytest.mark.parametrize(
    "text",
    [
        '{"lastActivity":"2026-11-30T05:45:00+0000","level":50}',
        "alarm at 2026-11-30 05:45:00.000-0600, rang at 2026-11-30T05:46Z.",
        "2026-11-30T05:45+01:00",
        '{"date":"2026-11-30","time":"05:45","id":"12-30-40"}',
        "no instant: 2026-11-30T05:45 (naive), 2026-13-30T05:45:00Z (month 13)",
        "",
    ],
)
def test_localize_text_finds_what_the_full_pattern_finds(text: str) -> None:
    """The quick look for a date and time before the full pattern changes nothing: every
    text is localized exactly as the pattern alone does, and one without is returned as is."""
    expected = ISO_INSTANT.sub(lambda match: local_iso_text(match.group(0), BERLIN), text)
    assert localize_text(text, BERLIN) == expected
    if not ISO_INSTANT.search(text):
        assert localize_text(text, BERLIN) is text


def test_local_state() -> None:
    """Timestamp sensor states are localized; other states are left alone."""
    stamp = State("sensor.next", "2026-11-30T05:45:00+00:00", {"device_class": "timestamp"})
    assert local_state(stamp, BERLIN) == "2026-11-30T06:45:00+01:00"
    assert local_state(State("sensor.next", "unknown", {"device_class": "timestamp"})) == "unknown"
    plain = State("sensor.text", "2026-11-30T05:45:00+00:00", {})
    assert local_state(plain, BERLIN) == "2026-11-30T05:45:00+00:00"  # only timestamps
    # A button's, an event's, a scene's state is when it last happened.
    for entity_id in ("button.run_goodnight", "event.doorbell", "scene.evening"):
        pressed = State(entity_id, "2026-11-30T05:45:00.114+00:00")
        assert local_state(pressed, BERLIN) == "2026-11-30T06:45:00.114000+01:00"
