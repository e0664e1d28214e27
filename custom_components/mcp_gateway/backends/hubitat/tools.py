"""How the gateway classifies the hub's tools: read, control (devices, HSM, mode) or admin.

Read/write follows the app's own read-only list; a tool missing from these tables is admin
(unless it is not a hub_ tool and marks itself read-only).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
import copy
import re
from typing import Any, Final

from homeassistant.const import Platform

from ...framework.base import Shown, ToolClass, ToolTier, UnknownListing
from .const import rule_device_key

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
# backups, installed apps' settings, logs, and custom rules (their actions carry webhook URLs,
# the live-update rule's secret among them, and the ids of every device they use, hidden ones
# too). Only administrators may make them.
ADMIN_READS: Final = frozenset(
    {
        "hub_get_custom_rule",
        "hub_test_custom_rule",
        "hub_get_visual_rule",
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


# Reads that answer with devices, rooms or rules: the gateway filters them.
LISTINGS: Final = frozenset(
    {
        "hub_list_devices",
        "hub_get_room",
        "hub_get_device_health",
        "hub_list_rooms",
        "hub_list_rules",
        "hub_get_rule_health",
    }
)
# Reads of one Rule Machine rule by its `ruleId` (a rule is a device of switch and button).
RULE_READS: Final = frozenset({"hub_get_rule_health", "hub_list_rule_local_variables"})
HSM_PANEL: Final = (Platform.ALARM_CONTROL_PANEL, "hub_hsm")
MODE_SELECT: Final = (Platform.SELECT, "hub_mode")


def entity_keys(name: str, arguments: Mapping[str, Any]) -> list[tuple[Platform, str]]:
    """The hub-wide entities a call acts on or reads: the HSM panel, the mode select."""
    if name in ("hub_set_hsm", "hub_get_hsm_status"):
        return [HSM_PANEL]
    if name == "hub_list_modes":
        return [MODE_SELECT]
    if name == "hub_manage_mode" and str(arguments.get("action", "")).strip().lower() == "activate":
        return [MODE_SELECT]
    return []


# java.lang.String.trim(): every character up to U+0020, and nothing else.
_JAVA_TRIM: Final = "".join(chr(code) for code in range(0x21))
# java.lang.Long.parseLong: an optional sign, then ASCII digits.
_JAVA_LONG: Final = re.compile(r"[+-]?[0-9]+")


def canonical_id(value: Any) -> str | None:
    """A device-id argument as the app compares it (mcp-devices-lib.groovy
    _canonicalDeviceIdArg): text trimmed, an integral number as its digits, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value.strip(_JAVA_TRIM) or None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return None


def numeric_id(text: str) -> str | None:
    """The device a hub-internal lookup by id reaches (the app's device-allowlist bypass
    fetches /device/fullJson/<id>, which the hub reads as a number): "023", "+23" → "23"."""
    return str(int(text)) if _JAVA_LONG.fullmatch(text) else None


def device_keys(arguments: Mapping[str, Any]) -> list[str]:
    """The device ids a call addresses (deviceId, deviceIds, commands[].deviceId), each in
    the form the app compares (canonical_id); a value it cannot read stays as it was sent.

    A gateway call carries its sub-tool's arguments in `args`, which are searched too.
    """
    keys: list[str] = []

    def add(value: Any) -> None:
        if value is None or isinstance(value, dict | list) or value == "":
            return
        key = canonical_id(value)
        if key is None:
            key = str(value)
        if key not in keys:
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


def rule_keys(name: str, arguments: Mapping[str, Any]) -> list[str]:
    """The rule a rule read names (`ruleId`), in the form the app compares."""
    if name not in RULE_READS or arguments.get("ruleId") in (None, ""):
        return []
    rule_id = canonical_id(arguments["ruleId"])
    return [str(arguments["ruleId"]) if rule_id is None else rule_id]


def resolve_device(known: Collection[str], key: str) -> list[str]:
    """The devices an address may reach: the device the app finds by its canonical id, and
    the one the hub finds by its number (what no device of ours is comes back as it is)."""
    reached = [key] if key in known else []
    number = numeric_id(key)
    if number is not None and number not in reached:
        reached.append(number)
    return reached or [key]


# Where the app's answers list devices: lists of device records or ids (hub_get_device_health:
# mcp-diagnostics-lib.groovy toolDeviceHealthCheck's stale, unknown and healthy devices).
_DEVICE_LISTS: Final = (
    "devices",
    "staleDevices",
    "unknownDevices",
    "healthyDevices",
    "deviceIds",
)
# A line of format="context"'s summary: "- Label (id, room) - capabilities; states".
_CONTEXT_ID: Final = re.compile(r"\((\d+), ")


def filter_listing(data: Any, shown: Shown) -> tuple[Any, int]:
    """A listing's answer with only the devices (and HSM status, mode) `shown` admits."""
    if not isinstance(data, dict):
        raise UnknownListing("not an object")
    answer = copy.deepcopy(data)
    return answer, _filter_object(answer, shown)


def _device_of(item: Any) -> str | None:
    if isinstance(item, Mapping):
        item = item.get("id", item.get("deviceId"))
    return None if isinstance(item, Mapping | list) else canonical_id(item)


def _filter_object(node: dict[str, Any], shown: Shown) -> int:
    """Withholds from `node`, in place, what `shown` does not admit; returns how many."""
    return (
        _filter_rules(node, shown)
        + _filter_device_lists(node, shown)
        + _filter_hub_states(node, shown)
        + _filter_summary(node, shown)
        + _filter_nested(node, shown)
    )


def _filter_rules(node: dict[str, Any], shown: Shown) -> int:
    """The rules whose devices are shown (a rule's count follows)."""
    rules = node.get("rules")
    if not isinstance(rules, list):
        return 0
    kept_rules = [
        rule
        for rule in rules
        if isinstance(rule, Mapping)
        and (rule_id := _device_of({"id": rule.get("id", rule.get("ruleId"))})) is not None
        and shown.device(rule_device_key(rule_id))
    ]
    node["rules"] = kept_rules
    if node.get("count") == len(rules):
        node["count"] = len(kept_rules)
    return len(rules) - len(kept_rules)


def _filter_device_lists(node: dict[str, Any], shown: Shown) -> int:
    """The shown devices of each device list (a list's count follows)."""
    withheld = 0
    for key in _DEVICE_LISTS:
        items = node.get(key)
        if not isinstance(items, list):
            continue
        kept = [item for item in items if (d := _device_of(item)) is not None and shown.device(d)]
        withheld += len(items) - len(kept)
        node[key] = kept
        for count in ("count", "deviceCount"):
            if node.get(count) == len(items):
                node[count] = len(kept)
    return withheld


def _filter_hub_states(node: dict[str, Any], shown: Shown) -> int:
    """HSM status and the hub's mode, where their entities are not shown."""
    withheld = 0
    if "hsmStatus" in node and not shown.entities([HSM_PANEL]):
        del node["hsmStatus"]
        withheld += 1
    for key in ("mode", "currentMode"):
        if key in node and not shown.entities([MODE_SELECT]):
            del node[key]
            withheld += 1
    return withheld


def _filter_summary(node: dict[str, Any], shown: Shown) -> int:
    """The shown lines of format="context"'s summary."""
    summary = node.get("summary")
    if not isinstance(summary, str):
        return 0
    lines = summary.split("\n")
    kept_lines = [line for line in lines if _line_shown(line, shown)]
    node["summary"] = "\n".join(kept_lines)
    return len(lines) - len(kept_lines)


def _filter_nested(node: dict[str, Any], shown: Shown) -> int:
    """The objects within the node's other values, each filtered the same way."""
    withheld = 0
    for key, value in node.items():
        if key in _DEVICE_LISTS or key == "rules":
            continue
        if isinstance(value, dict):
            withheld += _filter_object(value, shown)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    withheld += _filter_object(item, shown)
    return withheld


def _line_shown(line: str, shown: Shown) -> bool:
    if line.startswith("HSM:"):
        return shown.entities([HSM_PANEL])
    if line.startswith("Mode:"):
        return shown.entities([MODE_SELECT])
    if not line.startswith("- "):
        return True
    ids = _CONTEXT_ID.findall(line)
    return bool(ids) and all(shown.device(device_id) for device_id in ids)
