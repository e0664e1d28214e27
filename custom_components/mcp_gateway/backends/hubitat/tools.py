"""How the gateway classifies the hub's tools: read, control (devices, HSM, mode) or admin.

Read/write follows the app's own read-only list; a tool missing from these tables is admin
(unless it is not a hub_ tool and marks itself read-only).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homeassistant.const import Platform

from ..base import ToolClass, ToolTier

# hubitat-mcp-server.groovy getReadOnlyToolNames(): the union of the libraries'
# _readOnlyToolNames_part*() lists (release 4.0.2). Every other tool writes (it needs the
# best-practice key), including hub_export_custom_rule and hub_export_native_app, which save
# their export to File Manager.
HUB_READ_ONLY: Final = frozenset(
    {
        # bundles, code management, HPM
        "hub_list_bundles",
        "hub_list_apps",
        "hub_list_drivers",
        "hub_list_libraries",
        "hub_get_source",
        "hub_list_device_dependents",
        "hub_get_app_config",
        "hub_list_app_pages",
        "hub_list_hpm_packages",
        # custom and native rules, visual rules
        "hub_get_custom_rule",
        "hub_test_custom_rule",
        "hub_list_rules",
        "hub_get_rule_health",
        "hub_list_rule_local_variables",
        "hub_get_visual_rule",
        # dashboards, rooms, variables
        "hub_list_dashboards",
        "hub_get_dashboard",
        "hub_list_rooms",
        "hub_get_room",
        "hub_list_variables",
        "hub_get_variable",
        "hub_list_variable_changes",
        # devices
        "hub_list_devices",
        "hub_get_device",
        "hub_get_device_attribute",
        "hub_list_device_events",
        "hub_get_compatible_devices",
        # diagnostics, logs, discovery, system
        "hub_get_debug_logs",
        "hub_report_issue",
        "hub_list_captured_states",
        "hub_get_logs",
        "hub_get_performance_stats",
        "hub_get_jobs",
        "hub_get_memory_history",
        "hub_get_radio_details",
        "hub_get_metrics",
        "hub_get_device_health",
        "hub_get_tool_guide",
        "hub_search_tools",
        "hub_get_info",
        "hub_list_modes",
        "hub_get_hsm_status",
        # files and backups
        "hub_list_files",
        "hub_read_file",
        "hub_list_backups",
        "hub_get_backup",
    }
)

# Reads that show the hub's insides rather than the home: files, code and app/driver source,
# backups, installed apps' settings, logs. Only administrators may make them.
ADMIN_READS: Final = frozenset(
    {
        "hub_list_files",
        "hub_read_file",
        "hub_list_backups",
        "hub_get_backup",
        "hub_list_apps",
        "hub_list_drivers",
        "hub_list_libraries",
        "hub_list_bundles",
        "hub_get_source",
        "hub_list_hpm_packages",
        "hub_list_device_dependents",
        "hub_get_app_config",
        "hub_list_app_pages",
        "hub_get_logs",
        "hub_get_debug_logs",
        "hub_get_jobs",
        "hub_report_issue",
    }
)

READ_TOOLS: Final = HUB_READ_ONLY - ADMIN_READS

# Everyday control of the home: device commands, the alarm and the location mode (activate
# only: see call_class).
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


def _asks_confirm(tool: Mapping[str, Any]) -> bool:
    """Whether the hub's own schema takes `confirm` (its requireDestructiveConfirm gate)."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return isinstance(properties, Mapping) and "confirm" in properties


def classify(tool: Mapping[str, Any]) -> ToolClass:
    """The permission class of one tool definition (from the flattened catalog)."""
    name = str(tool.get("name", ""))
    if name in READ_TOOLS:
        return ToolClass(ToolTier.READ)
    if name in CONTROL_TOOLS:
        return ToolClass(ToolTier.CONTROL)
    if name in ADMIN_READS:
        return ToolClass(ToolTier.ADMIN)
    if name in DESTRUCTIVE_TOOLS or _asks_confirm(tool):
        return ToolClass(ToolTier.ADMIN, destructive=True)
    if name.startswith("hub_"):
        return ToolClass(ToolTier.ADMIN)
    # A tool of a newer app than 4.0.2: trust its own read-only hint, else admin.
    annotations = tool.get("annotations")
    if isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True:
        return ToolClass(ToolTier.READ)
    return ToolClass(ToolTier.ADMIN)


def call_class(tool_class: ToolClass, name: str, arguments: Mapping[str, Any]) -> ToolClass:
    """The class of one call, where the hub's tool does different things by its arguments."""
    if name == "hub_manage_mode":
        action = str(arguments.get("action", "")).strip().lower()
        if action == "activate":
            return ToolClass(ToolTier.CONTROL)
        # create, rename, delete: the hub's configuration; deleting is destructive (the app's
        # toolManageMode asks confirm for it).
        return ToolClass(ToolTier.ADMIN, destructive=action == "delete")
    if name == "hub_get_metrics" and arguments.get("recordSnapshot") is True:
        return ToolClass(ToolTier.ADMIN)  # also saves a CSV snapshot to File Manager
    return tool_class


def is_write(tool: Mapping[str, Any]) -> bool:
    """Whether calling the tool changes the hub (so it needs the best-practice key)."""
    name = str(tool.get("name", ""))
    if name in HUB_READ_ONLY:
        return False
    if name.startswith("hub_"):
        return True
    annotations = tool.get("annotations")
    return not (isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True)


def entity_keys(name: str, arguments: Mapping[str, Any]) -> list[tuple[Platform, str]]:
    """The hub-wide entities a call acts on: the HSM panel, the mode select."""
    if name == "hub_set_hsm":
        return [(Platform.ALARM_CONTROL_PANEL, "hub_hsm")]
    if name == "hub_manage_mode" and str(arguments.get("action", "")).strip().lower() == "activate":
        return [(Platform.SELECT, "hub_mode")]
    return []


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
