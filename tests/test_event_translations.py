"""Every event entity's name and event types are translations, so the UI shows words."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.mcp_gateway.platforms.event import GatewayEventDescription
from custom_components.mcp_gateway.registry import BACKENDS

STRINGS = Path(__file__).parent.parent / "custom_components" / "mcp_gateway" / "strings.json"


def _event_descriptions() -> list[tuple[str, GatewayEventDescription[Any]]]:
    """The event descriptions each registered backend's `entities` module defines."""
    found = []
    for row in BACKENDS:
        package = row.runtime.__module__.rsplit(".", 1)[0]
        module = importlib.import_module(f"{package}.entities")
        found += [
            (row.kind, value)
            for value in vars(module).values()
            if isinstance(value, GatewayEventDescription)
        ]
    return found


DESCRIPTIONS = _event_descriptions()


def test_every_backend_event_is_found() -> None:
    """The search above is not vacuous."""
    assert len(DESCRIPTIONS) >= 4, DESCRIPTIONS


@pytest.mark.parametrize(
    "description",
    [description for _, description in DESCRIPTIONS],
    ids=[f"{kind}-{description.key}" for kind, description in DESCRIPTIONS],
)
def test_event_names_and_types_are_translated(description: GatewayEventDescription[Any]) -> None:
    events = json.loads(STRINGS.read_text())["entity"]["event"]
    assert description.translation_key in events
    texts = events[description.translation_key]
    assert texts["name"]
    states = texts["state_attributes"]["event_type"]["state"]
    assert set(description.event_types or []) <= set(states)
