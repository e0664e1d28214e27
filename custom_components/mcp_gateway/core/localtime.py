"""Times as people read them: in a local zone, with the UTC offset (one format for all results).

Home Assistant keeps instants in UTC (a timestamp sensor's state is `...+00:00`); an assistant
relaying "05:45:00+00:00" for a 06:45 alarm in Berlin misleads. Results meant for people and
assistants show times in the zone that matters (a device's own, else Home Assistant's), with the
offset so nothing is lost. Naive times and plain dates are left alone: they carry no instant.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, tzinfo
import re
from typing import Any, Final, cast

from homeassistant.components.sensor import SensorDeviceClass
from homeassistant.const import ATTR_DEVICE_CLASS
from homeassistant.core import State
from homeassistant.util import dt as dt_util

from ..mcp.client import ToolResult
from ..mcp.types import ContentBlock

# An ISO-8601 date-time with an offset (or Z), as found inside text; the offset may lack its
# colon, as Java writes it (Hubitat's event dates: `...05:45:00.000-0600`).
ISO_INSTANT = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})(?![\w:])"
)

# What every such instant holds (a date and the start of its time, "-05-06T"): a search the
# engine runs as a fast scan, where ISO_INSTANT is tried at each position of a text (a
# backend's answer of a few KB without instants took ~20 µs, this <1 µs).
_DATE_TIME: Final = re.compile(r"-\d\d-\d\d[T ]")


def local_iso(when: datetime, tz: tzinfo | None = None) -> str:
    """An aware datetime in `tz` (default Home Assistant's zone) as ISO 8601 with offset."""
    local = when.astimezone(tz or dt_util.get_default_time_zone())
    return local.isoformat(timespec="seconds" if local.microsecond == 0 else "auto")


def local_iso_text(text: str, tz: tzinfo | None = None) -> str:
    """`text` if it is no ISO instant with offset, else that instant in `tz`."""
    if not ISO_INSTANT.fullmatch(text):
        return text
    try:
        return local_iso(datetime.fromisoformat(text), tz)
    except ValueError:  # shaped like one, but no real date (month 13)
        return text


def localize_text(text: str, tz: tzinfo | None = None) -> str:
    """Every ISO instant with offset inside free text, shown in `tz`."""
    if _DATE_TIME.search(text) is None:
        return text
    return ISO_INSTANT.sub(lambda match: local_iso_text(match.group(0), tz), text)


def localize_json(value: Any, tz: tzinfo | None = None) -> Any:
    """A JSON value with every string that is an ISO instant shown in `tz` (a copy)."""
    if isinstance(value, str):
        return local_iso_text(value, tz)
    if isinstance(value, Mapping):
        return {key: localize_json(item, tz) for key, item in value.items()}
    if isinstance(value, list):
        return [localize_json(item, tz) for item in value]
    return value


def localize_result(result: ToolResult, tz: tzinfo | None = None) -> ToolResult:
    """A backend tool's result with every instant in `tz` (default Home Assistant's zone),
    in its text and its structured content alike, however the backend wrote them."""
    content = [_localize_part(part, tz) for part in result.content]
    if result.structured is None and all(
        new is old for new, old in zip(content, result.content, strict=True)
    ):
        return result  # most answers hold no instant: nothing to rebuild
    structured = None if result.structured is None else localize_json(result.structured, tz)
    return ToolResult(content, structured, result.is_error, result.meta)


def _localize_part(part: ContentBlock, tz: tzinfo | None) -> ContentBlock:
    """A part with its text localized: a text part, or any kind a server gives a text."""
    text = part.get("text") if isinstance(part, dict) else None
    if not isinstance(text, str):
        return part
    if (local := localize_text(text, tz)) is text:
        return part
    # The part's own kind kept, only its text replaced.
    return cast(ContentBlock, {**part, "text": local})


# Domains whose state is an instant: a datetime's value, or when a button was last pressed,
# an event last fired, a scene last activated (each UTC in HA's state machine).
INSTANT_DOMAINS: Final = frozenset({"datetime", "button", "event", "scene", "input_button"})


def holds_instant(state: State) -> bool:
    """Whether an entity's state is an instant (those domains, a timestamp sensor's)."""
    return state.domain in INSTANT_DOMAINS or (
        state.domain == "sensor"
        and state.attributes.get(ATTR_DEVICE_CLASS) == SensorDeviceClass.TIMESTAMP
    )


def local_state(state: State, tz: tzinfo | None = None) -> str:
    """An entity's state; an instant (holds_instant) in `tz` instead of UTC."""
    return local_iso_text(state.state, tz) if holds_instant(state) else state.state
