"""What an answer in the AI app may approve: the categories of a request, and the settings."""

from __future__ import annotations

import pytest

from custom_components.mcp_gateway.core.settings import GatewaySettings
from custom_components.mcp_gateway.gateway.approval.in_app import (
    approval_categories,
    in_app_allowed,
)


@pytest.mark.parametrize(
    ("tool", "entity_ids", "expected"),
    [
        ("set_state", ["lock.front"], {"locks"}),
        ("set_state", ["alarm_control_panel.home"], {"alarms"}),
        ("set_state", ["cover.garage"], {"covers"}),
        ("set_state", ["lock.front", "switch.heater"], {"locks", "other"}),
        ("set_state", ["switch.heater"], {"other"}),
        ("backend/hub_reboot", [], {"other"}),
        ("backend/hub_set_hsm", [], {"alarms"}),
        ("backend/hub_create_custom_rule", [], {"automations"}),
        ("backend/update_automation", ["lock.front"], {"automations", "locks"}),
        ("backend/set_scene", [], {"automations"}),
    ],
)
def test_categories(tool: str, entity_ids: list[str], expected: set[str]) -> None:
    assert approval_categories(tool, entity_ids) == expected


def test_defaults_allow_only_what_lets_nobody_in() -> None:
    """By default the AI app may approve a destructive tool, never an unlock, a disarm, a
    garage door or a stored rule; every category of a request must be allowed."""
    defaults = GatewaySettings()
    assert in_app_allowed(defaults, "backend/hub_reboot", [])
    assert not in_app_allowed(defaults, "set_state", ["lock.front"])
    assert not in_app_allowed(defaults, "backend/hub_set_hsm", [])
    assert not in_app_allowed(defaults, "set_state", ["cover.garage"])
    assert not in_app_allowed(defaults, "backend/hub_create_custom_rule", [])
    locks = GatewaySettings(in_app_approval=("locks",))
    assert in_app_allowed(locks, "set_state", ["lock.front"])
    assert not in_app_allowed(locks, "set_state", ["lock.front", "switch.heater"])
    assert not in_app_allowed(GatewaySettings(in_app_approval=()), "backend/hub_reboot", [])
