"""The one rule of what needs a person, over resolved entity changes, and its texts."""

from __future__ import annotations

from homeassistant.core import HomeAssistant

from custom_components.mcp_gateway.core.settings import GatewaySettings
from custom_components.mcp_gateway.gateway.approval.rules import Change, sensitive_change
from custom_components.mcp_gateway.gateway.approval.texts import clean_client_name, client_label


async def test_what_needs_a_person(hass: HomeAssistant) -> None:
    """Locks not locked, alarms not armed, garage/gate/door covers not closed, entities the
    settings name; an unknown target is the most sensitive; other entities never."""
    hass.states.async_set("cover.garage", "closed", {"device_class": "garage"})
    hass.states.async_set("cover.blind", "closed", {"device_class": "blind"})
    settings = GatewaySettings(approval_entities=("switch.kettle",))
    cases = {
        Change("lock.door", "unlocked"): True,
        Change("lock.door", "open"): True,
        Change("lock.door"): True,
        Change("lock.door", "locked"): False,
        Change("alarm_control_panel.hsm", "disarmed"): True,
        Change("alarm_control_panel.hsm"): True,
        Change("alarm_control_panel.hsm", "armed_away"): False,
        Change("cover.garage", "open"): True,
        Change("cover.garage", None, 10): True,
        Change("cover.garage"): True,
        Change("cover.garage", "closed"): False,
        Change("cover.garage", None, 0): False,
        Change("cover.garage", "stop"): False,
        Change("cover.blind", "open"): False,
        Change("switch.kettle", "on"): True,
        Change("switch.lamp"): False,
    }
    for change, expected in cases.items():
        assert sensitive_change(hass, settings, change) is expected, change


def test_the_clients_name_is_its_own_claim() -> None:
    assert client_label(None) == "an app that gave no name"
    assert client_label("") == "an app that gave no name"
    assert client_label("claude_code") == "“claude_code” (the app's own name for itself)"
    assert clean_client_name("a\u202eb\nc\td") == "a b c d"
    assert clean_client_name("__bold__ `code` # head") == "bold code head"
    assert clean_client_name("see www.evil.example/x or evil.example/path now") == "see or now"
    assert len(clean_client_name("y" * 500)) == 40
