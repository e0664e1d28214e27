"""Every event entity's name and event types are translations, so the UI shows words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.mcp_gateway.backends.homecast import entities as homecast
from custom_components.mcp_gateway.backends.hubitat import entities as hubitat
from custom_components.mcp_gateway.backends.robine_wake import entities as robine_wake
from custom_components.mcp_gateway.platforms.event import GatewayEventDescription

STRINGS = Path(__file__).parent.parent / "custom_components" / "mcp_gateway" / "strings.json"


@pytest.mark.parametrize(
    "description",
    [hubitat.BUTTON_EVENT, homecast.DOORBELL, homecast.BUTTON_EVENT, robine_wake.SESSION_EVENT],
    ids=lambda d: d.key,
)
def test_event_names_and_types_are_translated(description: GatewayEventDescription[Any]) -> None:
    events = json.loads(STRINGS.read_text())["entity"]["event"]
    assert description.translation_key in events
    texts = events[description.translation_key]
    assert texts["name"]
    states = texts["state_attributes"]["event_type"]["state"]
    assert set(description.event_types or []) <= set(states)


def test_hubitat_buttons_are_numbered_by_placeholder() -> None:
    """Not an English f-string: the number is a placeholder of the translated name."""
    names = json.loads(STRINGS.read_text())["entity"]["event"]
    assert "{number}" in names[hubitat.BUTTON_EVENT.translation_key]["name"]
    third = hubitat.button_event(3)
    assert third.translation_placeholders == {"number": "3"}
    assert third is hubitat.button_event(3)  # one per number, shared by every device
