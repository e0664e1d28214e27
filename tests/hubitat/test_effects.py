"""What a hub call changes, entity by entity: the approval gate's view of Hubitat's tools."""

from __future__ import annotations

from homeassistant.const import Platform

from custom_components.mcp_gateway.backends.hubitat.effects import call_effect
from custom_components.mcp_gateway.backends.hubitat.tools import HSM_PANEL
from custom_components.mcp_gateway.framework.base import EntityChange

# Device 23 is a lock with a battery sensor; 7 a garage door; 5 a lamp.
DEVICES = {"23": object(), "7": object(), "5": object()}
ENTITIES = {
    "23": [(Platform.LOCK, "23_lock")],
    "7": [(Platform.COVER, "7_garage_door")],
    "5": [(Platform.LIGHT, "5_light")],
}


def _entities(key: str) -> list[tuple[Platform, str]]:
    return ENTITIES.get(key, [])


def test_a_command_changes_the_entity_it_acts_on_in_any_spelling() -> None:
    """The lock, not its battery, by its id as a number, text, padded or with zeros."""
    for address in (23, "23", " 23 ", "023", 23.0):
        effect = call_effect(
            "hub_call_device_command",
            {"deviceId": address, "command": "unlock"},
            DEVICES,
            _entities,
        )
        assert effect is not None
        assert effect.changes == (
            EntityChange(Platform.LOCK, "23_lock", "unlocked", None, "unlock"),
        ), address


def test_every_item_of_a_batch_and_its_parameters() -> None:
    effect = call_effect(
        "hub_call_device_command",
        {
            "commands": [
                {"deviceId": "5", "command": "setLevel", "parameters": ["40"]},
                {"deviceId": "7", "command": "setPosition", "parameters": ["30"]},
                {"deviceId": "23", "command": "lock"},
                {"deviceId": "23", "command": "refresh"},
            ]
        },
        DEVICES,
        _entities,
    )
    assert effect is not None
    assert [(c.key, c.target, c.position, c.action) for c in effect.changes] == [
        ("5_light", "setlevel", None, "setLevel 40"),
        ("7_garage_door", None, 30.0, "setPosition 30"),
        ("23_lock", "locked", None, "lock"),
    ]


def test_hsm_commands_act_on_the_panel() -> None:
    for command, target in (("disarm", "disarmed"), ("armAway", "armed_away"), ("x", None)):
        effect = call_effect("hub_set_hsm", {"armCommand": command}, DEVICES, _entities)
        assert effect is not None
        (change,) = effect.changes
        assert (change.platform, change.key, change.target) == (*HSM_PANEL, target)


def test_a_rule_stores_its_device_actions_nested_ones_too() -> None:
    actions = [
        {"type": "device_command", "deviceId": "5", "command": "on"},
        {
            "type": "if_then_else",
            "thenActions": [{"type": "unlock", "deviceId": "023"}],
            "elseActions": [
                {"type": "repeat", "actions": [{"type": "set_hsm", "status": "disarm"}]}
            ],
        },
        {"type": "restore_state", "deviceIds": ["7"]},
    ]
    effect = call_effect("hub_create_custom_rule", {"actions": actions}, DEVICES, _entities)
    assert effect is not None
    assert not effect.changes
    assert [(c.key, c.target) for c in effect.stored] == [
        ("5_light", "on"),
        ("23_lock", "unlocked"),
        ("hub_hsm", "disarmed"),
        ("7_garage_door", None),  # restoring: a state no argument shows
    ]
    update = call_effect(
        "hub_update_custom_rule", {"ruleId": "1", "enabled": True}, DEVICES, _entities
    )
    assert update is not None
    assert not update.stored


def test_copies_and_imports_are_unread_and_other_tools_unknown() -> None:
    for tool in ("hub_clone_custom_rule", "hub_import_custom_rule", "hub_import_native_app"):
        effect = call_effect(tool, {}, DEVICES, _entities)
        assert effect is not None
        assert effect.unread, tool
    assert call_effect("hub_update_device", {"deviceId": "23"}, DEVICES, _entities) is None
