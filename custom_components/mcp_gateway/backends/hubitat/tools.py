"""How the gateway classifies the hub's tools: read, control (devices, HSM, mode) or admin.

A tool missing from these tables is admin, unless the hub itself marks it read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..base import ToolClass, ToolTier

READ_TOOLS: Final = frozenset(
    {
        "hub_get_info",
        "hub_list_modes",
        "hub_get_hsm_status",
        "hub_get_tool_guide",
        "hub_search_tools",
        "hub_report_issue",
        # devices and rooms
        "hub_list_devices",
        "hub_get_device",
        "hub_get_device_attribute",
        "hub_list_device_events",
        "hub_get_compatible_devices",
        "hub_list_rooms",
        "hub_get_room",
        # rules and variables
        "hub_get_custom_rule",
        "hub_test_custom_rule",
        "hub_export_custom_rule",
        "hub_list_rules",
        "hub_get_rule_health",
        "hub_list_rule_local_variables",
        "hub_get_visual_rule",
        "hub_export_native_app",
        "hub_list_variables",
        "hub_get_variable",
        "hub_list_variable_changes",
        # diagnostics and logs
        "hub_get_logs",
        "hub_get_performance_stats",
        "hub_get_jobs",
        "hub_get_debug_logs",
        "hub_get_metrics",
        "hub_get_memory_history",
        "hub_get_device_health",
        "hub_get_radio_details",
        "hub_list_captured_states",
        # apps, code, files, dashboards
        "hub_list_apps",
        "hub_list_drivers",
        "hub_get_source",
        "hub_list_libraries",
        "hub_list_bundles",
        "hub_list_backups",
        "hub_get_backup",
        "hub_list_device_dependents",
        "hub_get_app_config",
        "hub_list_app_pages",
        "hub_list_hpm_packages",
        "hub_list_files",
        "hub_read_file",
        "hub_list_dashboards",
        "hub_get_dashboard",
    }
)

# Everyday control of the home: device commands, the alarm and the location mode.
CONTROL_TOOLS: Final = frozenset({"hub_call_device_command", "hub_set_hsm", "hub_manage_mode"})

# Admin tools that lose data or take the hub down: the caller must also confirm.
DESTRUCTIVE_TOOLS: Final = frozenset(
    {
        "hub_reboot",
        "hub_shutdown",
        "hub_update_firmware",
        "hub_delete_device",
        "hub_call_destructive_ops",
        "hub_restore_backup",
        "hub_delete_backup",
        "hub_delete_item",
        "hub_delete_bundle",
        "hub_delete_file",
        "hub_write_file",
        "hub_delete_room",
        "hub_delete_dashboard",
        "hub_delete_custom_rule",
        "hub_delete_native_app",
        "hub_delete_visual_rule",
        "hub_delete_variable",
        "hub_delete_connector",
        "hub_delete_captured_state",
        "hub_delete_debug_logs",
        "hub_call_device_swap",
        "hub_call_device_replace",
        "hub_set_zwave",
        "hub_set_zigbee",
        "hub_call_zwave",
        "hub_call_zigbee",
        "hub_call_matter",
        "hub_set_system_settings",
        "hub_update_mcp_settings",
        "hub_update_app",
        "hub_update_driver",
        "hub_update_library",
        "hub_install_bundle",
        "hub_manage_virtual_device",
    }
)


def classify(tool: Mapping[str, Any]) -> ToolClass:
    """The permission class of one tool definition (from the flattened catalog)."""
    name = str(tool.get("name", ""))
    if name in READ_TOOLS:
        return ToolClass(ToolTier.READ)
    if name in CONTROL_TOOLS:
        return ToolClass(ToolTier.CONTROL)
    if name in DESTRUCTIVE_TOOLS:
        return ToolClass(ToolTier.ADMIN, destructive=True)
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True:
        return ToolClass(ToolTier.READ)
    return ToolClass(ToolTier.ADMIN)


def is_write(tool: Mapping[str, Any]) -> bool:
    """Whether calling the tool changes the hub (so it needs the best-practice key)."""
    name = str(tool.get("name", ""))
    if name in READ_TOOLS:
        return False
    annotations = tool.get("annotations")
    return not (isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True)


def device_keys(arguments: Mapping[str, Any]) -> list[str]:
    """The device ids a call addresses: deviceId, deviceIds, commands[].deviceId.

    A gateway call carries its sub-tool's arguments in `args`, which are searched too.
    """
    keys: list[str] = []

    def add(value: Any) -> None:
        if value is None or isinstance(value, dict | list | bool) or not str(value):
            return
        if (key := str(value)) not in keys:
            keys.append(key)

    add(arguments.get("deviceId"))
    device_ids = arguments.get("deviceIds")
    if isinstance(device_ids, list):
        for value in device_ids:
            add(value)
    commands = arguments.get("commands")
    if isinstance(commands, list):
        for command in commands:
            if isinstance(command, Mapping):
                add(command.get("deviceId"))
    inner = arguments.get("args")
    if isinstance(inner, Mapping):
        for key in device_keys(inner):
            add(key)
    return keys
