"""The Hubitat MCP Rule Server tool catalog: 117 tools, 13 core + 23 gateways.

Names, gateway membership and read/write classification follow the reference page; the
descriptions and input schemas are our own wording.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
import re
from typing import Any

BEST_PRACTICE_KEY = "bps-ack-299"


@dataclass(frozen=True)
class ToolDef:
    """One tool: schema, classification and whether it needs the destructive confirm tier."""

    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...] = ()
    write: bool = False
    confirm: bool = False  # confirm=true + a hub backup younger than 24 h
    idempotent: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def input_schema(self) -> dict[str, Any]:
        """A tool's inputSchema as hubitat-mcp-server.groovy getToolDefinitions lists it; write
        tools take the bestPracticeKey that _mrtrValidateAccess checks.
        """
        schema: dict[str, Any] = {"type": "object", "properties": dict(self.properties)}
        if self.write:
            schema["properties"]["bestPracticeKey"] = _s(
                "Acknowledgment key for write tools (see hub_get_tool_guide best_practices)."
            )
        if self.required:
            schema["required"] = list(self.required)
        return schema

    def annotations(self) -> dict[str, bool]:
        """MCP annotations as hubitat-mcp-server.groovy annotationsForLeaf gives them (readOnlyHint,
        destructiveHint on every write, idempotentHint, openWorldHint).
        """
        return {
            "readOnlyHint": not self.write,
            "destructiveHint": self.write,
            "idempotentHint": self.idempotent or not self.write,
            "openWorldHint": False,
        }

    @property
    def full_description(self) -> str:
        """What clients see: write tools carry the server's pre-flight checklists.

        The checklist texts are the simulator's own, sized like upstream's
        (hubitat-mcp-server.groovy getToolDefinitions).
        """
        text = self.description
        if self.write:
            text += WRITE_CHECKLIST
        if self.confirm:
            text += CONFIRM_CHECKLIST
        return text

    def definition(self) -> dict[str, Any]:
        """One tools/list entry, as hubitat-mcp-server.groovy getToolDefinitions builds it."""
        return {
            "name": self.name,
            "description": self.full_description,
            "inputSchema": self.input_schema(),
            "annotations": self.annotations(),
        }


# The real server prefixes every write tool with a long safety checklist; these texts are ours,
# sized so that the flat catalog weighs about what a real hub's does (~100 KB).
WRITE_CHECKLIST = """

BEFORE CALLING (write tool):
1. The user asked for exactly this change. Resolve names to ids exactly; if nothing matches
   exactly, ask which candidate they meant instead of picking one.
2. Pass bestPracticeKey (inside args through a gateway). At most 2 writes run at once: batch.
3. On failure report it as is; never retry blindly or fall back to another device.
4. A success reply means the hub accepted the call, not that the device already changed:
   verify with hub_get_device_attribute and expectedValue when the outcome matters."""

CONFIRM_CHECKLIST = """
DESTRUCTIVE: needs confirm=true (only after the user agreed to this exact operation) and a
hub backup under 24 hours old; ask before running hub_create_backup. May not be undoable."""


def _s(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **extra}


def _i(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": desc, **extra}


def _b(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": desc, **extra}


def _o(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "description": desc, **extra}


def _a(desc: str, items: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "array", "description": desc, "items": items or {"type": "string"}, **extra}


CONFIRM = {"confirm": _b("Must be true: you confirm the user asked for this change.")}
DEVICE_ID = {"deviceId": _s('Device id as a string, e.g. "12" (see hub_list_devices).')}
PAGING = {
    "offset": _i("Index of the first item to return.", minimum=0),
    "limit": _i("Items per page (default 50).", minimum=1),
    "cursor": _s("Opaque cursor from a previous page's nextCursor."),
}
WAIT_PROPS = {
    "expectedValue": {"description": "Block until the attribute equals this value."},
    "expectedValues": _a("Accepted values; for comparator=between: [low, high].", {}),
    "comparator": _s(
        "How to compare.", enum=["eq", "ne", "gt", "gte", "lt", "lte", "between"], default="eq"
    ),
    "stableForMs": _i("The match must hold this long before it counts (< timeoutMs)."),
    "timeoutMs": _i("Longest wait in milliseconds (default 5000, at most 60000)."),
}
VIRTUAL_TYPES = (
    "Virtual Switch",
    "Virtual Button",
    "Virtual Contact Sensor",
    "Virtual Motion Sensor",
    "Virtual Presence",
    "Virtual Lock",
    "Virtual Temperature Sensor",
    "Virtual Humidity Sensor",
    "Virtual Dimmer",
    "Virtual RGBW Light",
    "Virtual Shade",
    "Virtual Garage Door Opener",
    "Virtual Water Sensor",
    "Virtual Omni Sensor",
    "Virtual Fan Controller",
)


def _r(name: str, desc: str, props: dict[str, Any] | None = None, *req: str) -> ToolDef:
    return ToolDef(name, desc, props or {}, tuple(req))


def _w(
    name: str,
    desc: str,
    props: dict[str, Any] | None = None,
    *req: str,
    confirm: bool = False,
    idempotent: bool = False,
) -> ToolDef:
    props = dict(props or {})
    if confirm:
        props.update(CONFIRM)
    return ToolDef(name, desc, props, tuple(req), True, confirm, idempotent)


# hubitat-mcp-server.groovy getReadOnlyToolNames() = the union of the libraries'
# _readOnlyToolNames_part*() lists; every other tool is a write.
READ_ONLY_TOOL_NAMES = frozenset(
    {
        *("hub_list_bundles",),
        *("hub_list_apps", "hub_list_drivers", "hub_list_libraries", "hub_get_source"),
        *("hub_list_device_dependents", "hub_get_app_config", "hub_list_app_pages"),
        *("hub_get_custom_rule", "hub_test_custom_rule"),
        *("hub_list_dashboards", "hub_get_dashboard"),
        *("hub_get_debug_logs", "hub_report_issue"),
        *("hub_list_devices", "hub_get_device", "hub_get_device_attribute"),
        *("hub_list_device_events", "hub_get_compatible_devices"),
        *("hub_list_captured_states", "hub_get_logs", "hub_get_performance_stats"),
        *("hub_get_jobs", "hub_get_memory_history", "hub_get_radio_details"),
        *("hub_get_metrics", "hub_get_device_health"),
        *("hub_get_tool_guide", "hub_search_tools"),
        *("hub_list_files", "hub_read_file", "hub_list_hpm_packages"),
        *("hub_list_backups", "hub_get_backup"),
        *("hub_list_rules", "hub_get_rule_health", "hub_list_rule_local_variables"),
        *("hub_list_rooms", "hub_get_room"),
        *("hub_get_info", "hub_list_modes", "hub_get_hsm_status"),
        *("hub_list_variables", "hub_get_variable", "hub_list_variable_changes"),
        *("hub_get_visual_rule",),
    }
)

# hubitat-mcp-server.groovy _mrtrEligibleTools(): in the 2026-07-28 era these answer first with
# `input_required` (see _mrtrEligibleCall for the per-call conditions).
MRTR_TOOLS = frozenset(
    {
        "hub_set_rule",
        "hub_set_native_app",
        "hub_call_rule",
        "hub_clone_native_app",
        "hub_import_native_app",
        "hub_create_driver",
        "hub_update_driver",
        "hub_delete_item",
    }
)

TOOLS: tuple[ToolDef, ...] = (
    # ---- core ----
    _r(
        "hub_get_info",
        "Who and how the hub is: model, firmware, hub id, memory/temperature/database health, "
        "MCP server statistics and (while reads are allowed) location name, IP and time zone. "
        "Use it to identify the hub.",
        {"includeAppUpdate": _b("Also check whether a newer MCP app version exists.")},
    ),
    _r("hub_list_modes", "The location modes and which one is active."),
    _w(
        "hub_manage_mode",
        "Create, rename, delete or activate a location mode. Activation is the everyday use; "
        "delete needs confirm (libraries/mcp-system-lib.groovy toolManageMode).",
        {
            "action": _s("What to do.", enum=["create", "rename", "delete", "activate"]),
            "mode": _s("Existing mode name or id (activate, rename, delete)."),
            "name": _s("New name (create, rename)."),
            "icon": _s("Optional icon name."),
            **CONFIRM,
        },
        "action",
    ),
    _w(
        "hub_set_mode_manager",
        "Configure the hub's Mode Manager schedule (time or sun based mode changes).",
        {"schedule": _o("Mode -> trigger map.")},
    ),
    _r("hub_get_hsm_status", "Hubitat Safety Monitor: current arm state and any active alert."),
    _w(
        "hub_set_hsm",
        "Arm or disarm Hubitat Safety Monitor. Arming is applied asynchronously by the hub.",
        {"armCommand": _s("Arm command.", enum=["armAway", "armHome", "armNight", "disarm"])},
        "armCommand",
    ),
    _w(
        "hub_manage_virtual_device",
        "Create or delete an MCP-managed virtual (child) device, from a built-in virtual "
        "driver or a user-installed driver.",
        {
            "action": _s("create or delete.", enum=["create", "delete"]),
            "deviceType": _s("Built-in virtual driver name.", enum=list(VIRTUAL_TYPES)),
            "customDriver": _o(
                "User driver instead of deviceType.",
                properties={"namespace": _s("Driver namespace."), "name": _s("Driver name.")},
            ),
            "deviceLabel": _s("Label of the new device."),
            "deviceId": _s("Device to delete (must be MCP-managed)."),
        },
        "action",
        confirm=True,
    ),
    _w(
        "hub_create_backup",
        "Take a full hub database backup now (unlocks destructive tools for 24 hours).",
        dict(CONFIRM),  # confirm only: it is the backup the other tools wait for
    ),
    _w(
        "hub_update_firmware",
        "Install the pending platform update; the hub reboots.",
        {},
        confirm=True,
    ),
    _w(
        "hub_set_system_settings",
        "Change hub-wide settings such as name, time zone or temperature scale.",
        {"settings": _o("Setting name -> value.")},
        "settings",
        confirm=True,
    ),
    _r(
        "hub_report_issue",
        "Prepare a bug report about the MCP server with recent diagnostics attached.",
        {"title": _s("Short summary."), "details": _s("What happened.")},
        "title",
    ),
    _r(
        "hub_get_tool_guide",
        "Longer reference for the tools, by section (best_practices holds the write key).",
        {"section": _s("Section name; omit for the table of contents.")},
    ),
    _r(
        "hub_search_tools",
        "Rank all tools, including those behind gateways, against a natural-language query.",
        {"query": _s("What you want to do."), "limit": _i("Most results (default 8).")},
        "query",
    ),
    # ---- devices ----
    _r(
        "hub_list_devices",
        "Devices the MCP app may see, paged (50 per page). Formats: summary (a few key "
        "states), detailed (all attributes/commands), ids, context. Filters narrow the set; "
        "changedSince returns only devices with activity after a timestamp, for cheap polling.",
        {
            "format": _s("Shape of each item.", enum=["summary", "detailed", "ids", "context"]),
            "filter": _s("enabled, disabled, virtual or stale:N (no activity for N hours)."),
            "labelFilter": _s("Case-insensitive substring of the label."),
            "capabilityFilter": _s("Capability name, e.g. Switch."),
            "roomFilter": _s("Room name (case-insensitive)."),
            "onlyOn": _b("Only devices whose switch is on."),
            "changedSince": _s("Epoch milliseconds or ISO-8601 time with offset; strictly after."),
            **PAGING,
        },
    ),
    _r(
        "hub_get_device",
        "One device in full: capabilities, typed attributes and commands with argument types.",
        DEVICE_ID,
        "deviceId",
    ),
    _r(
        "hub_get_device_attribute",
        "Read one attribute of one device or of several (deviceIds, at most 20). With an "
        "expected value it blocks, polling until the attribute matches or the timeout passes.",
        {
            **DEVICE_ID,
            "deviceIds": _a("Several device ids (exclusive with deviceId).", maxItems=20),
            "attribute": _s("Attribute name, e.g. switch."),
            "mode": _s("Multi-device convergence: all or any.", enum=["all", "any"]),
            **WAIT_PROPS,
        },
        "attribute",
    ),
    _r(
        "hub_list_device_events",
        "Recent events of a device (default 10), or a history window with hoursBack (<= 168), "
        "since (strictly after; round-trip a returned date) or attribute (default 100, max "
        "500). Without deviceId: location events (mode, HSM, hub variables).",
        {
            **DEVICE_ID,
            "limit": _i("Most events to return."),
            "hoursBack": _i("History window in hours (<= 168).", maximum=168),
            "since": _s("Epoch ms or ISO-8601 with offset; only events strictly after it."),
            "attribute": _s("Only events of this attribute."),
        },
    ),
    _r(
        "hub_get_compatible_devices",
        "Search the hub's catalog of supported device models.",
        {"query": _s("Brand or model text.")},
        "query",
    ),
    _w(
        "hub_call_device_command",
        "Send a command to a device: {deviceId, command, parameters} with parameters as an array "
        "of strings (converted on the hub), optionally waitFor an attribute. Or batch up to 20 "
        "commands with commands=[{deviceId, command, parameters?}] in one call.",
        {
            **DEVICE_ID,
            "command": _s("Command name, e.g. on, setLevel."),
            "parameters": _a('Command arguments as strings, e.g. ["75"].'),
            "waitFor": _o(
                "Wait for the effect before answering.",
                properties={"attribute": _s("Attribute to watch."), **WAIT_PROPS},
            ),
            "commands": _a(
                "Batch form (1-20 entries, exclusive with deviceId/command, no waitFor).",
                {
                    "type": "object",
                    "properties": {
                        "deviceId": _s("Device id."),
                        "command": _s("Command name."),
                        "parameters": _a("Arguments as strings."),
                    },
                    "required": ["deviceId", "command"],
                },
                maxItems=20,
            ),
        },
    ),
    _w(
        "hub_call_device_swap",
        "Replace one device by another in every app and rule that uses it.",
        {"fromDeviceId": _s("Old device."), "toDeviceId": _s("New device.")},
        "fromDeviceId",
        "toDeviceId",
        confirm=True,
    ),
    _w(
        "hub_call_device_replace",
        "Move a failed device's identity onto a newly paired one.",
        {"oldDeviceId": _s("Failed device."), "newDeviceId": _s("Replacement.")},
        "oldDeviceId",
        "newDeviceId",
        confirm=True,
    ),
    _w(
        "hub_update_device",
        "Change a device's label, name, room, enabled state, preferences, tags or data values; "
        "only the given fields change.",
        {
            **DEVICE_ID,
            "label": _s("New label."),
            "name": _s("New name."),
            "room": _s("Room name; empty string unassigns."),
            "enabled": _b("False disables the device."),
            "preferences": _o("Preference name -> {type, value}."),
            "tags": _a("Device tags."),
            "dataValues": _o("Data value name -> string."),
        },
        "deviceId",
        idempotent=True,
    ),
    _w(
        "hub_create_device",
        "Create a standalone (non-child) device from any installed driver.",
        {"driverName": _s("Driver."), "namespace": _s("Driver namespace."), "label": _s("Label.")},
        "driverName",
        confirm=True,
    ),
    # ---- rooms ----
    _r("hub_list_rooms", "All rooms with their ids and device ids."),
    _r(
        "hub_get_room",
        "One room by name or id, with its devices' states.",
        {"room": _s("Room name (case-insensitive) or id.")},
        "room",
    ),
    _w("hub_create_room", "Create a room.", {"name": _s("Room name.")}, "name", confirm=True),
    _w(
        "hub_delete_room",
        "Delete a room; its devices become unassigned.",
        {"room": _s("Room name or id.")},
        "room",
        confirm=True,
    ),
    _w(
        "hub_update_room",
        "Rename a room, keeping its devices.",
        {"room": _s("Room name or id."), "name": _s("New name.")},
        "room",
        "name",
        confirm=True,
    ),
    # ---- custom-engine rules ----
    _r(
        "hub_get_custom_rule",
        "One MCP custom-engine rule, or all of them when ruleId is omitted.",
        {"ruleId": _s("Rule id."), "detailed": _b("Include diagnostics.")},
    ),
    _w(
        "hub_create_custom_rule",
        "Create a custom-engine rule from triggers, conditions and actions.",
        {
            "name": _s("Rule name."),
            "triggers": _a("Triggers.", {}),
            "conditions": _a("Conditions.", {}),
            "actions": _a("Actions.", {}),
            "enabled": _b("Start enabled (default true)."),
            "description": _s("Rule description."),
            "testRule": _b("Skip the backup on delete."),
        },
        "name",
    ),
    _w(
        "hub_update_custom_rule",
        "Change a custom-engine rule; enabled=false pauses it.",
        {
            "ruleId": _s("Rule id."),
            "enabled": _b("Enable or disable."),
            "name": _s("New name."),
            "triggers": _a("Triggers.", {}),
            "actions": _a("Actions.", {}),
        },
        "ruleId",
    ),
    _w(
        "hub_delete_custom_rule",
        "Delete a custom-engine rule (a backup file is written first).",
        {
            "ruleId": _s("Rule id."),
            "confirm": _b("REQUIRED: Set to true to confirm deletion."),
            "skipBackupCheck": _b("Skip the backup."),
        },
        "ruleId",
    ),
    _r(
        "hub_test_custom_rule",
        "Dry-run a custom-engine rule: what would happen now.",
        {"ruleId": _s("Rule id.")},
        "ruleId",
    ),
    # Not read-only upstream: the export persists a file in File Manager
    # (libraries/mcp-custom-rules-lib.groovy, _readOnlyToolNames_partCustomRules).
    _w(
        "hub_export_custom_rule",
        "Portable JSON export of a custom-engine rule, saved to File Manager.",
        {"ruleId": _s("Rule id.")},
        "ruleId",
    ),
    _w(
        "hub_import_custom_rule",
        "Create a custom-engine rule from an export.",
        {"exportData": _o("Export JSON."), "deviceMapping": _o("Old id -> new id.")},
        "exportData",
    ),
    _w(
        "hub_clone_custom_rule",
        "Copy a custom-engine rule.",
        {"ruleId": _s("Rule id."), "name": _s("Name of the copy.")},
        "ruleId",
    ),
    # ---- native rules and apps ----
    # libraries/mcp-native-rules-lib.groovy (hub_list_rules schema, toolListRmRules): only a
    # cursor; without one the whole list comes back.
    _r(
        "hub_list_rules",
        "List all Rule Machine rules with their live status.",
        {
            "cursor": _s(
                'Opt-in pagination cursor. Omit for unbounded; pass "" for the first page, '
                "iterate nextCursor (page size 50)."
            )
        },
    ),
    # libraries/mcp-native-rules-lib.groovy (hub_call_rule schema, toolRunRmRule).
    _w(
        "hub_call_rule",
        "Trigger one or more Rule Machine rules.",
        {
            "ruleId": {
                "type": ["integer", "array"],
                "items": {"type": "integer"},
                "description": "Rule ID from hub_list_rules, or an array of rule IDs.",
            },
            "action": _s(
                "Which RM action to invoke. Default: rule.",
                enum=["rule", "actions", "stop", "start"],
            ),
        },
        "ruleId",
    ),
    _w(
        "hub_set_rule_paused",
        "Pause or resume a native rule.",
        {"ruleId": _s("Rule id."), "paused": _b("True pauses.")},
        "ruleId",
        "paused",
        idempotent=True,
    ),
    _w(
        "hub_set_rule_private_boolean",
        "Set a native rule's private boolean.",
        {"ruleId": _s("Rule id."), "value": _b("New value.")},
        "ruleId",
        "value",
        idempotent=True,
    ),
    _r("hub_get_rule_health", "Health checks of native rules.", {"ruleId": _s("One rule.")}),
    _r(
        "hub_list_rule_local_variables",
        "Local variables of a Rule Machine rule.",
        {"ruleId": _s("Rule id.")},
        "ruleId",
    ),
    _r("hub_get_visual_rule", "Visual Rules Builder rules, or one by id.", {"ruleId": _s("Id.")}),
    _w(
        "hub_set_native_app",
        "Create or edit a classic app instance through its settings pages.",
        {"appType": _s("App type."), "appId": _s("Existing app."), "settings": _o("Settings.")},
        confirm=True,
    ),
    _w(
        "hub_set_app_disabled",
        "Disable or enable an installed app.",
        {"appId": _s("App id."), "disabled": _b("True disables.")},
        "appId",
        "disabled",
        idempotent=True,
    ),
    _w(
        "hub_delete_native_app",
        "Delete an installed app instance.",
        {"appId": _s("App id.")},
        "appId",
        confirm=True,
    ),
    _w(
        "hub_clone_native_app",
        "Copy an installed app instance.",
        {"appId": _s("App id.")},
        "appId",
        confirm=True,
    ),
    # Write upstream: it instantiates a cloner app and persists the export
    # (libraries/mcp-native-rules-lib.groovy, _readOnlyToolNames_partNativeRM).
    _w(
        "hub_export_native_app",
        "Export an installed app's settings to File Manager.",
        {"appId": _s("Id.")},
        "appId",
    ),
    _w(
        "hub_import_native_app",
        "Create an app instance from an export.",
        {"exportData": _o("Export.")},
        "exportData",
        confirm=True,
    ),
    _w(
        "hub_set_rule",
        "Create or edit a Rule Machine rule.",
        {"ruleId": _s("Existing rule."), "name": _s("Rule name."), "definition": _o("Rule.")},
        confirm=True,
    ),
    _w(
        "hub_set_visual_rule",
        "Create or replace a Visual Rules Builder rule.",
        {"ruleId": _s("Existing rule."), "rule": _o("Rule JSON.")},
        "rule",
        confirm=True,
    ),
    _w(
        "hub_delete_visual_rule",
        "Delete a Visual Rules Builder rule.",
        {"ruleId": _s("Rule id.")},
        "ruleId",
        confirm=True,
    ),
    # ---- variables ----
    _r("hub_list_variables", "Hub variables with types and values."),
    _r("hub_get_variable", "One hub variable.", {"name": _s("Variable name.")}, "name"),
    _w(
        "hub_set_variable",
        "Set a hub variable's value.",
        {"name": _s("Variable name."), "value": {"description": "New value."}},
        "name",
        "value",
        idempotent=True,
    ),
    _w(
        "hub_create_variable",
        "Create a hub variable.",
        {
            "name": _s("Name."),
            "type": _s("Type.", enum=["string", "integer", "decimal", "boolean", "datetime"]),
            "value": {"description": "Initial value."},
        },
        "name",
        "type",
    ),
    _w("hub_delete_variable", "Delete a hub variable.", {"name": _s("Name.")}, "name"),
    _w(
        "hub_create_connector",
        "Create a connector device for a hub variable.",
        {"name": _s("Variable name.")},
        "name",
    ),
    _w(
        "hub_delete_connector",
        "Remove a hub variable's connector device.",
        {"name": _s("Variable name.")},
        "name",
    ),
    _r(
        "hub_list_variable_changes",
        "Recent changes of hub variables.",
        {"name": _s("One variable."), "limit": _i("Most changes.")},
    ),
    # ---- diagnostics and logs ----
    _r(
        "hub_get_logs",
        "Hub log entries, newest first.",
        {"level": _s("Lowest level."), "deviceId": _s("Only this device."), "limit": _i("Most.")},
    ),
    _r("hub_get_performance_stats", "Device and app run-time statistics."),
    _r("hub_get_jobs", "Scheduled jobs on the hub."),
    _r("hub_get_debug_logs", "The MCP server's own debug log.", {"limit": _i("Most entries.")}),
    _w("hub_delete_debug_logs", "Clear the MCP server's debug log."),
    _w(
        "hub_set_log_level",
        "Set the MCP server's debug log level.",
        {"level": _s("Level.", enum=["debug", "info", "warn", "error"])},
        "level",
        idempotent=True,
    ),
    _r("hub_get_metrics", "Hub CPU, memory and database metrics."),
    _r("hub_get_memory_history", "Free memory over the last hours."),
    _w("hub_call_gc", "Ask the hub to run garbage collection."),
    _r(
        "hub_get_device_health",
        "Devices that look stale or unhealthy.",
        {"hours": _i("Stale age.")},
    ),
    _r(
        "hub_get_radio_details",
        "Z-Wave or Zigbee radio details.",
        {"radio": _s("Which radio.", enum=["zwave", "zigbee"])},
    ),
    _r("hub_list_captured_states", "Saved device-state snapshots."),
    _w(
        "hub_delete_captured_state",
        "Delete a saved device-state snapshot.",
        {"stateId": _s("Snapshot id.")},
        "stateId",
    ),
    # ---- radio ----
    _w("hub_set_zwave", "Configure the Z-Wave radio.", {"settings": _o("Settings.")}, confirm=True),
    _w(
        "hub_set_zigbee", "Configure the Zigbee radio.", {"settings": _o("Settings.")}, confirm=True
    ),
    _w(
        "hub_call_zwave",
        "Run a Z-Wave operation such as a network repair.",
        {"operation": _s("Operation.")},
        "operation",
        confirm=True,
    ),
    _w(
        "hub_call_zigbee",
        "Run a Zigbee operation.",
        {"operation": _s("Operation.")},
        "operation",
        confirm=True,
    ),
    _w(
        "hub_call_matter",
        "Run a Matter operation.",
        {"operation": _s("Operation.")},
        "operation",
        confirm=True,
    ),
    # ---- destructive ----
    _w("hub_reboot", "Restart the hub.", {}, confirm=True),
    _w("hub_shutdown", "Power the hub down (needs a manual power cycle).", {}, confirm=True),
    _w(
        "hub_delete_device",
        "Permanently remove a device from the hub.",
        DEVICE_ID,
        "deviceId",
        confirm=True,
    ),
    _w(
        "hub_call_destructive_ops",
        "Radio resets, network disconnect, cloud controller toggles.",
        {"target": _s("What to reset."), "operation": _s("Operation.")},
        "target",
        confirm=True,
    ),
    # ---- apps and code ----
    _r("hub_list_apps", "Installed apps or app code.", {"scope": _s("instances or code.")}),
    _r("hub_list_drivers", "Installed driver code.", {"filter": _s("Name substring.")}),
    _r(
        "hub_get_source",
        "Source code of an app, driver or library.",
        {"type": _s("Kind.", enum=["app", "driver", "library"]), "id": _s("Code id.")},
        "type",
        "id",
    ),
    _r("hub_list_libraries", "Installed libraries."),
    _r("hub_list_bundles", "Installed bundles."),
    _r("hub_list_backups", "Code backups and whole-hub database backups."),
    _r("hub_get_backup", "Source saved in a code backup.", {"key": _s("Backup key.")}, "key"),
    _r(
        "hub_list_device_dependents",
        "Apps that use a device.",
        DEVICE_ID,
        "deviceId",
    ),
    _r(
        "hub_get_app_config",
        "An installed app's settings page.",
        {"appId": _s("App id."), "pageName": _s("Page.")},
        "appId",
    ),
    _r("hub_list_app_pages", "Page names of an installed app.", {"appId": _s("App id.")}, "appId"),
    _r("hub_list_hpm_packages", "Packages installed through HPM.", {"includeDrift": _b("Drift.")}),
    _w("hub_create_app", "Install app code.", {"source": _s("Groovy.")}, "source", confirm=True),
    _w(
        "hub_create_driver",
        "Install driver code.",
        {"source": _s("Groovy.")},
        "source",
        confirm=True,
    ),
    _w(
        "hub_update_app",
        "Replace app code (backed up first).",
        {"id": _s("Code id."), "source": _s("Groovy.")},
        "id",
        "source",
        confirm=True,
    ),
    _w(
        "hub_update_driver",
        "Replace driver code (backed up first).",
        {"id": _s("Code id."), "source": _s("Groovy.")},
        "id",
        "source",
        confirm=True,
    ),
    _w(
        "hub_delete_item",
        "Delete app, driver or library code.",
        {"type": _s("Kind.", enum=["app", "driver", "library"]), "id": _s("Code id.")},
        "type",
        "id",
        confirm=True,
    ),
    _w(
        "hub_create_library",
        "Install a library.",
        {"source": _s("Groovy.")},
        "source",
        confirm=True,
    ),
    _w(
        "hub_update_library",
        "Replace a library.",
        {"id": _s("Id."), "source": _s("Groovy.")},
        "id",
        "source",
        confirm=True,
    ),
    _w(
        "hub_install_bundle",
        "Install a bundle from a URL.",
        {"url": _s("Url.")},
        "url",
        confirm=True,
    ),
    _w("hub_delete_bundle", "Delete a bundle.", {"id": _s("Bundle id.")}, "id", confirm=True),
    _w("hub_export_bundle", "Export a bundle to File Manager.", {"id": _s("Bundle id.")}, "id"),
    # ---- backups ----
    _w(
        "hub_restore_backup",
        "Push a code backup back onto the hub.",
        {"key": _s("Backup key.")},
        "key",
        confirm=True,
    ),
    _w(
        "hub_delete_backup",
        "Delete a whole-hub database backup.",
        {"name": _s("Backup file.")},
        "name",
        confirm=True,
    ),
    # ---- files ----
    _r("hub_list_files", "Files in File Manager.", {"filter": _s("Name substring.")}),
    _r("hub_read_file", "Read a File Manager file.", {"fileName": _s("File name.")}, "fileName"),
    _w(
        "hub_write_file",
        "Write a File Manager file (an existing one is backed up first).",
        {"fileName": _s("File name."), "content": _s("Text content.")},
        "fileName",
        "content",
        confirm=True,
    ),
    _w(
        "hub_delete_file",
        "Delete a File Manager file (backed up first).",
        {"fileName": _s("File name.")},
        "fileName",
        confirm=True,
    ),
    # ---- dashboards ----
    _r("hub_list_dashboards", "Easy and legacy dashboards."),
    _r("hub_get_dashboard", "One dashboard's layout.", {"dashboardId": _s("Id.")}, "dashboardId"),
    _w(
        "hub_create_dashboard",
        "Create a dashboard.",
        {"name": _s("Name."), "deviceIds": _a("Devices shown.")},
        "name",
        confirm=True,
    ),
    _w(
        "hub_update_dashboard",
        "Replace a dashboard's layout.",
        {"dashboardId": _s("Id."), "layout": _o("Layout.")},
        "dashboardId",
        confirm=True,
    ),
    _w(
        "hub_delete_dashboard",
        "Delete a dashboard.",
        {"dashboardId": _s("Id.")},
        "dashboardId",
        confirm=True,
    ),
    _w(
        "hub_clone_dashboard",
        "Copy a dashboard.",
        {"dashboardId": _s("Id."), "name": _s("Name.")},
        "dashboardId",
        confirm=True,
    ),
    # ---- MCP self-administration ----
    _w(
        "hub_update_mcp_settings",
        "Change the MCP app's own settings, such as which devices it may use (Developer Mode).",
        {"settings": _o("Setting -> value.")},
        "settings",
        confirm=True,
    ),
)

TOOL_BY_NAME: dict[str, ToolDef] = {tool.name: tool for tool in TOOLS}
assert all(tool.write == (tool.name not in READ_ONLY_TOOL_NAMES) for tool in TOOLS)

CORE_TOOLS: tuple[str, ...] = (
    "hub_get_info",
    "hub_list_modes",
    "hub_manage_mode",
    "hub_set_mode_manager",
    "hub_get_hsm_status",
    "hub_set_hsm",
    "hub_manage_virtual_device",
    "hub_create_backup",
    "hub_update_firmware",
    "hub_set_system_settings",
    "hub_report_issue",
    "hub_get_tool_guide",
    "hub_search_tools",
)

_DEV_READ = (
    "hub_list_devices",
    "hub_get_device",
    "hub_get_device_attribute",
    "hub_list_device_events",
)
_RM_INTEROP = ("hub_list_rules", "hub_call_rule", "hub_set_rule_paused")
_LOGS = ("hub_get_logs", "hub_get_performance_stats", "hub_get_jobs", "hub_get_debug_logs")

GATEWAYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hub_read_devices": (
        "Read devices: list, details, attributes, events, supported models.",
        (*_DEV_READ, "hub_get_compatible_devices"),
    ),
    "hub_manage_devices": (
        "Control and edit devices: commands, swap/replace, create, update, plus the reads.",
        (
            "hub_call_device_command",
            "hub_call_device_swap",
            "hub_call_device_replace",
            "hub_update_device",
            "hub_create_device",
            *_DEV_READ,
        ),
    ),
    "hub_read_rooms": ("Read rooms.", ("hub_list_rooms", "hub_get_room")),
    "hub_manage_rooms": (
        "Room create, rename, delete and reads.",
        ("hub_list_rooms", "hub_get_room", "hub_create_room", "hub_delete_room", "hub_update_room"),
    ),
    "hub_read_rules": (
        "Read rules of every engine and their health.",
        (
            "hub_get_custom_rule",
            "hub_test_custom_rule",
            "hub_list_rules",
            "hub_get_rule_health",
            "hub_list_rule_local_variables",
            "hub_get_visual_rule",
        ),
    ),
    "hub_manage_custom_rules": (
        "MCP custom-engine rules: full lifecycle.",
        (
            "hub_get_custom_rule",
            "hub_create_custom_rule",
            "hub_update_custom_rule",
            "hub_delete_custom_rule",
            "hub_test_custom_rule",
            "hub_export_custom_rule",
            "hub_import_custom_rule",
            "hub_clone_custom_rule",
        ),
    ),
    "hub_manage_native_rules_and_apps": (
        "Native rules and classic apps: run, pause, booleans, app admin.",
        (
            *_RM_INTEROP,
            "hub_set_rule_private_boolean",
            "hub_set_native_app",
            "hub_set_app_disabled",
            "hub_delete_native_app",
            "hub_clone_native_app",
            "hub_export_native_app",
            "hub_import_native_app",
            "hub_get_rule_health",
        ),
    ),
    "hub_manage_rule_machine": (
        "Rule Machine authoring and Visual Rules Builder.",
        (
            "hub_set_rule",
            *_RM_INTEROP,
            "hub_set_rule_private_boolean",
            "hub_get_rule_health",
            "hub_list_rule_local_variables",
            "hub_delete_native_app",
            "hub_get_visual_rule",
            "hub_set_visual_rule",
            "hub_delete_visual_rule",
        ),
    ),
    "hub_read_variables": (
        "Read hub variables and their history.",
        ("hub_list_variables", "hub_get_variable", "hub_list_variable_changes"),
    ),
    "hub_manage_variables": (
        "Hub variables and connectors.",
        (
            "hub_list_variables",
            "hub_get_variable",
            "hub_set_variable",
            "hub_create_variable",
            "hub_delete_variable",
            "hub_create_connector",
            "hub_delete_connector",
            "hub_list_variable_changes",
        ),
    ),
    "hub_read_diagnostics": (
        "Logs, statistics, health and radio details (read only).",
        (
            *_LOGS,
            "hub_get_metrics",
            "hub_get_memory_history",
            "hub_get_device_health",
            "hub_get_radio_details",
            "hub_list_captured_states",
        ),
    ),
    "hub_manage_logs": (
        "Logs and the MCP debug log, including clearing it.",
        (*_LOGS, "hub_delete_debug_logs", "hub_set_log_level"),
    ),
    "hub_manage_diagnostics": (
        "Diagnostics with state snapshots and garbage collection.",
        (
            "hub_get_metrics",
            "hub_get_memory_history",
            "hub_call_gc",
            "hub_get_device_health",
            "hub_get_radio_details",
            "hub_list_captured_states",
            "hub_delete_captured_state",
        ),
    ),
    "hub_manage_radio": (
        "Z-Wave, Zigbee and Matter radio administration.",
        (
            "hub_get_radio_details",
            "hub_set_zwave",
            "hub_set_zigbee",
            "hub_call_zwave",
            "hub_call_zigbee",
            "hub_call_matter",
        ),
    ),
    "hub_manage_destructive_ops": (
        "Reboot, shutdown, device deletion and radio resets.",
        ("hub_reboot", "hub_shutdown", "hub_delete_device", "hub_call_destructive_ops"),
    ),
    "hub_read_apps_code": (
        "Apps, drivers, libraries, bundles, code backups (read only).",
        (
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
        ),
    ),
    "hub_manage_code": (
        "Install, update and delete apps, drivers, libraries and bundles.",
        (
            "hub_create_app",
            "hub_create_driver",
            "hub_update_app",
            "hub_update_driver",
            "hub_delete_item",
            "hub_create_library",
            "hub_update_library",
            "hub_install_bundle",
            "hub_delete_bundle",
            "hub_export_bundle",
        ),
    ),
    "hub_manage_backup": (
        "Code and database backups: list, read, restore, delete.",
        ("hub_list_backups", "hub_get_backup", "hub_restore_backup", "hub_delete_backup"),
    ),
    "hub_read_files": ("Read File Manager.", ("hub_list_files", "hub_read_file")),
    "hub_manage_files": (
        "File Manager read, write and delete.",
        ("hub_list_files", "hub_read_file", "hub_write_file", "hub_delete_file"),
    ),
    "hub_read_dashboards": ("Read dashboards.", ("hub_list_dashboards", "hub_get_dashboard")),
    "hub_manage_dashboards": (
        "Dashboard create, update, delete, clone and reads.",
        (
            "hub_list_dashboards",
            "hub_get_dashboard",
            "hub_create_dashboard",
            "hub_update_dashboard",
            "hub_delete_dashboard",
            "hub_clone_dashboard",
        ),
    ),
    "hub_manage_mcp": ("The MCP app's own settings.", ("hub_update_mcp_settings",)),
}


def is_write(name: str) -> bool:
    """Whether a tool (not a gateway) is a write.

    Upstream: the complement of hubitat-mcp-server.groovy getReadOnlyToolNames.
    """
    tool = TOOL_BY_NAME.get(name)
    return tool is not None and tool.write


def gateway_definition(name: str) -> dict[str, Any]:
    """The tools/list entry of a gateway: a summary of its sub-tools, {tool, args} arguments.

    Upstream: hubitat-mcp-server.groovy getGatewayConfig and annotationsForGateway.
    """
    summary, members = GATEWAYS[name]
    lines = [summary, "Call with no arguments for the full schemas, then with {tool, args}."]
    lines += [f"- {m}: {TOOL_BY_NAME[m].description.split('.')[0]}." for m in members]
    read_only = not any(is_write(m) for m in members)
    return {
        "name": name,
        "description": "\n".join(lines),
        "inputSchema": {
            "type": "object",
            "properties": {
                "tool": _s("Sub-tool to run; omit to get the catalog.", enum=list(members)),
                "args": _o("Arguments of the sub-tool (write keys go here too)."),
            },
        },
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": not read_only,
            "idempotentHint": read_only,
            "openWorldHint": False,
        },
    }


def list_tools(*, gateways: bool) -> list[dict[str, Any]]:
    """What tools/list shows: 13 core + 23 gateways, or every tool but hub_search_tools.

    Upstream: hubitat-mcp-server.groovy handleToolsList / getToolDefinitions (flat mode drops
    hub_search_tools).
    """
    if gateways:
        core = [TOOL_BY_NAME[name].definition() for name in CORE_TOOLS]
        return core + [gateway_definition(name) for name in GATEWAYS]
    return [tool.definition() for tool in TOOLS if tool.name != "hub_search_tools"]


_WORD = re.compile(r"[a-z0-9]+")


_STOP = frozenset({"a", "an", "and", "the", "of", "on", "to", "or", "in", "is", "it", "hub", "for"})


def _tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower().replace("_", " ")) if w not in _STOP]


def search_tools(query: str, limit: int = 8) -> list[dict[str, Any]]:
    """BM25 over name + description of all 117 tools, with the gateway that reaches each one.

    Upstream: libraries/mcp-discovery-lib.groovy toolSearchTools.
    """
    docs = [(tool, _tokens(f"{tool.name} {tool.description}")) for tool in TOOLS]
    avg = sum(len(d) for _, d in docs) / len(docs)
    terms = set(_tokens(query))
    scored: list[tuple[float, ToolDef]] = []
    for tool, words in docs:
        score = 0.0
        for term in terms:
            freq = words.count(term)
            if not freq:
                continue
            containing = sum(1 for _, d in docs if term in d)
            idf = math.log(1 + (len(docs) - containing + 0.5) / (containing + 0.5))
            score += idf * freq * 2.2 / (freq + 1.2 * (0.25 + 0.75 * len(words) / avg))
        if score > 0:
            scored.append((score, tool))
    scored.sort(key=lambda item: (-item[0], item[1].name))
    out = []
    for score, tool in scored[:limit]:
        via = [g for g, (_, members) in GATEWAYS.items() if tool.name in members]
        out.append(
            {
                "name": tool.name,
                "score": round(score, 3),
                "description": tool.description,
                "gateways": via,
                "core": tool.name in CORE_TOOLS,
            }
        )
    return out
