"""The hub's button events: one translated name per button number."""

from __future__ import annotations

import json
from pathlib import Path

from custom_components.mcp_gateway.backends.hubitat import entities as hubitat

STRINGS = Path(__file__).parents[2] / "custom_components" / "mcp_gateway" / "strings.json"


def test_hubitat_buttons_are_numbered_by_placeholder() -> None:
    """Not an English f-string: the number is a placeholder of the translated name."""
    names = json.loads(STRINGS.read_text())["entity"]["event"]
    assert "{number}" in names[hubitat.BUTTON_EVENT.translation_key]["name"]
    third = hubitat.button_event(3)
    assert third.translation_placeholders == {"number": "3"}
    assert third is hubitat.button_event(3)  # one per number, shared by every device
