"""A typed API over the Hubitat MCP Rule Server's tools.

Nothing outside this package knows the wire format: results arrive as a JSON string in the
first text content, device ids are strings, command parameters are strings, writes carry the
best-practice key, and most tools sit behind a category gateway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
import functools
import logging
from typing import Any, Final

from ...mcp.client import McpClient, ToolResult
from ...mcp.errors import McpProtocolError, McpRpcError, McpToolError
from .const import BEST_PRACTICE_KEY

_LOGGER = logging.getLogger(__name__)

INVALID_PARAMS: Final = -32602
_PAGE_LIMIT: Final = 50
_MAX_PAGES: Final = 500
_EVENTS_KEPT: Final = 20

# Which gateway reaches a sub-tool (reads through the read-only gateways).
GATEWAY_OF: Final[dict[str, str]] = {
    "hub_list_devices": "hub_read_devices",
    "hub_get_device": "hub_read_devices",
    "hub_list_device_events": "hub_read_devices",
    "hub_call_device_command": "hub_manage_devices",
    "hub_list_rooms": "hub_read_rooms",
    "hub_list_rules": "hub_read_rules",
    "hub_call_rule": "hub_manage_native_rules_and_apps",
    "hub_set_rule_paused": "hub_manage_native_rules_and_apps",
    "hub_get_custom_rule": "hub_read_rules",
    "hub_create_custom_rule": "hub_manage_custom_rules",
    "hub_update_custom_rule": "hub_manage_custom_rules",
    "hub_delete_custom_rule": "hub_manage_custom_rules",
}


class HubitatKeyRefusedError(McpRpcError):
    """The hub refused a write because of its best-practice key gate."""


class HubitatBusyError(McpToolError):
    """The hub refused a write at its write cap (`too_many_writes_in_flight`); nothing ran."""

    def __init__(self, tool: str, result: ToolResult, data: Mapping[str, Any]) -> None:
        super().__init__(f"{tool}: {BUSY_STATUS}", result)
        limit, active = data.get("limit"), data.get("active")
        self.limit = limit if isinstance(limit, int) else None
        self.active = len(active) if isinstance(active, list) else None


class HubitatTooLargeError(McpProtocolError):
    """The hub replaced an answer over 120,000 bytes with `response_too_large`."""


class HubitatUnavailableError(McpToolError):
    """A read answered `{success: false, error}` (e.g. an internal endpoint Hub Security guards)."""


# hubitat-mcp-server.groovy _writeCapacityRefusalLocked: the write cap's refusal status.
BUSY_STATUS: Final = "too_many_writes_in_flight"
# What hub_get_info gives as zigbeeId when the hub does not say (or reading it threw).
_NO_HUB_ID: Final = frozenset({"", "unavailable", "null", "none", "unknown"})


def is_key_refusal(err: McpRpcError) -> bool:
    """Whether a JSON-RPC error is the hub's best-practice key gate refusing a write."""
    if err.code != INVALID_PARAMS:
        return False
    text = f"{err.message} {err.data or ''}".lower()
    return "bestpracticekey" in text or "best-practice" in text or "best practice" in text


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 time as the hub writes it (seconds or millis, `Z` or `+hhmm`), else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


# ---------------------------------------------------------------------------------------------
# Native objects
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceEvent:
    """One event of a device (e.g. a button push)."""

    name: str
    value: str
    date: str
    unit: str | None = None

    @property
    def marker(self) -> str:
        """Identity of the occurrence (the hub gives events no id)."""
        return f"{self.date}|{self.name}|{self.value}"


@dataclass(frozen=True, slots=True, kw_only=True)
class HubitatDevice:
    """A device as the hub reports it: a record that is replaced, never changed.

    Snapshots of the coordinator share the records of unchanged devices, so `attributes` is
    never written either (a write's expected effect makes a new record).
    """

    id: str
    name: str
    label: str | None = None
    room: str | None = None
    capabilities: frozenset[str] = frozenset()
    attributes: Mapping[str, Any] = field(default_factory=dict)
    commands: frozenset[str] = frozenset()
    last_activity: str | None = None
    disabled: bool = False
    parent_id: str | None = None
    type_name: str | None = None
    # False for a `hub_get_device` reading, which carries no activity, disabled or parent.
    listing: bool = True
    # The hub's temperature scale ("F" or "C"), which its temperatures are reported in.
    temperature_scale: str | None = None
    # Recent button events, oldest first (the newest _EVENTS_KEPT).
    events: tuple[DeviceEvent, ...] = ()
    # True while reading the device's events fails (its event entities are unavailable).
    events_failed: bool = False

    @property
    def display_name(self) -> str:
        """What the hub shows for the device: its label, else its driver-given name."""
        return self.label or self.name or f"Device {self.id}"

    def has(self, *capabilities: str) -> bool:
        """Whether the device has any of the capabilities."""
        return any(cap in self.capabilities for cap in capabilities)

    def attr(self, name: str) -> Any:
        """An attribute's current value, or None."""
        return self.attributes.get(name)

    def with_events(self, events: Iterable[DeviceEvent]) -> HubitatDevice:
        """The record with these events after its own (only the newest are kept)."""
        return replace(self, events=(*self.events, *events)[-_EVENTS_KEPT:])

    def structure(self) -> tuple[Any, ...]:
        """What decides the device's entities and device info (not its states)."""
        return (
            self.capabilities,
            frozenset(self.attributes),
            self.label,
            self.name,
            self.room,
            self.attributes.get("numberOfButtons"),
        )


@dataclass(frozen=True, slots=True)
class HubInfo:
    """The hub's identity and health.

    `id` is the hub's Zigbee EUI (`zigbeeId`), None when the hub does not give one.
    """

    id: str | None
    name: str | None
    model: str | None
    firmware: str | None
    app_version: str | None
    temperature_scale: str | None
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Modes:
    """Location modes and the active one."""

    current: str | None
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HsmStatus:
    """Hubitat Safety Monitor state."""

    status: str | None
    alert: str | None = None


@dataclass(frozen=True, slots=True)
class HubitatRule:
    """A native rule (Rule Machine or another automation app)."""

    id: str
    name: str
    # None when the hub could not tell (status "unknown": its app tree was unreadable).
    paused: bool | None
    disabled: bool = False
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Command:
    """One device command, parameters as the strings the hub expects."""

    device_id: str
    command: str
    parameters: tuple[str, ...] = ()

    def as_wire(self) -> dict[str, Any]:
        """The batch entry form."""
        entry: dict[str, Any] = {"deviceId": self.device_id, "command": self.command}
        if self.parameters:
            entry["parameters"] = list(self.parameters)
        return entry


@dataclass(frozen=True, slots=True)
class CommandOutcome:
    """What the hub said about one command."""

    success: bool
    error: str | None = None
    # The write cap's refusal, when that is why it failed (nothing ran).
    busy: HubitatBusyError | None = None


@dataclass(frozen=True, slots=True)
class DevicePage:
    """Devices of one listing (all pages joined)."""

    devices: list[HubitatDevice]
    total: int | None = None


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


def _require_dict(data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise McpProtocolError(f"{what}: expected a JSON object, got {type(data).__name__}")
    return data


def _names(items: Any) -> frozenset[str]:
    """Capability/command lists come as strings or as {name: …} objects."""
    if not isinstance(items, list):
        return frozenset()
    out: set[str] = set()
    for item in items:
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            out.add(item["name"])
    return _shared(frozenset(out))


@functools.lru_cache(maxsize=512)
def _shared(names: frozenset[str]) -> frozenset[str]:
    """The first equal set seen: devices of one driver share their capability and command
    sets (two per device, which every full garbage collection walks; a few hundred drivers)."""
    return names


def _attributes(item: Mapping[str, Any]) -> dict[str, Any]:
    attributes = item.get("attributes")
    out: dict[str, Any] = {}
    if isinstance(attributes, list):
        for attribute in attributes:
            if isinstance(attribute, dict) and isinstance(attribute.get("name"), str):
                out[attribute["name"]] = attribute.get("value")
    elif isinstance(attributes, dict):
        out.update(attributes)
    # Summary listings only carry a few states, under currentStates.
    states = item.get("currentStates")
    if isinstance(states, dict):
        for name, value in states.items():
            out.setdefault(name, value)
    return out


def _opt_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def parse_device(item: Any, *, listing: bool = True) -> HubitatDevice:
    """A device from a listing item or (listing=False) a `hub_get_device` result."""
    data = _require_dict(item, "device")
    device_id = data.get("id")
    if device_id is None or isinstance(device_id, bool | dict | list):
        raise McpProtocolError("device without an id")
    return HubitatDevice(
        id=str(device_id),
        name=str(data.get("name") or ""),
        label=_opt_str(data.get("label")),
        room=_opt_str(data.get("room")),
        capabilities=_names(data.get("capabilities")),
        attributes=_attributes(data),
        commands=_names(data.get("commands")),
        last_activity=_opt_str(data.get("lastActivity")),
        disabled=data.get("disabled") is True,
        parent_id=_opt_str(data.get("parentDeviceId")),
        type_name=_opt_str(data.get("type")),
        listing=listing,
    )


def parse_hub_info(data: Any) -> HubInfo:
    """The hub's identity from `hub_get_info`.

    libraries/mcp-system-lib.groovy toolGetHubInfo answers one flat map. Its `zigbeeId` (the
    radio's EUI, unique per hub) is the entry's unique id; it can be null or "unavailable",
    and then the hub has no id that could not collide with another hub's.
    """
    info = _require_dict(data, "hub_get_info")
    zigbee = _opt_str(info.get("zigbeeId"))
    if zigbee is not None and zigbee.strip().lower() in _NO_HUB_ID:
        zigbee = None
    return HubInfo(
        id=zigbee,
        name=_opt_str(info.get("name")),
        model=_opt_str(info.get("model")),
        firmware=_opt_str(info.get("firmwareVersion")),
        app_version=_opt_str(info.get("mcpServerVersion")),
        temperature_scale=_opt_str(info.get("temperatureScale")),
        raw=info,
    )


def parse_event(item: Any) -> DeviceEvent | None:
    """An event item, or None when it lacks what identifies it."""
    if not isinstance(item, dict):
        return None
    name, date = item.get("name"), item.get("date")
    if not isinstance(name, str) or not isinstance(date, str):
        return None
    value = item.get("value")
    return DeviceEvent(
        name=name,
        value="" if value is None else str(value),
        date=date,
        unit=_opt_str(item.get("unit")),
    )


def parse_rule(item: Any) -> HubitatRule | None:
    """A rule listing item, or None when it has no id.

    libraries/mcp-native-rules-lib.groovy _rmAnnotateRuleStatus: `paused` and `disabled` are
    only there when the hub's app tree was readable; otherwise `status` is "unknown" (Hub
    Security on without the hub's login in the app) and so is whether the rule is paused.
    """
    if not isinstance(item, dict) or item.get("id") is None:
        return None
    paused = item.get("paused")
    if not isinstance(paused, bool):
        status = str(item.get("status") or "unknown").lower()
        paused = None if status == "unknown" else status == "paused"
    return HubitatRule(
        id=str(item["id"]),
        name=str(item.get("label") or item.get("name") or f"Rule {item['id']}"),
        paused=paused,
        disabled=item.get("disabled") is True,
        type=_opt_str(item.get("type") or item.get("appType")),
    )


def newest(dates: Iterable[str | None]) -> str | None:
    """The latest of the hub's timestamps (compared as times, not strings)."""
    best: tuple[datetime, str] | None = None
    for date in dates:
        parsed = parse_time(date)
        if parsed is not None and date is not None and (best is None or parsed > best[0]):
            best = (parsed, date)
    return None if best is None else best[1]


# ---------------------------------------------------------------------------------------------
# The API
# ---------------------------------------------------------------------------------------------


class HubitatApi:
    """Typed calls to one hub's MCP Rule Server."""

    def __init__(self, client: McpClient, *, send_key: bool = True) -> None:
        self.client = client
        self.send_key = send_key
        # True when the server lists every tool flat (its `useGateways` setting off).
        self.flat = False
        # Devices per inventory page; shrinks when the hub finds a page too large.
        self.page_limit = _PAGE_LIMIT
        # Called with the refusal when the hub's key gate refuses a write, and with None
        # after a write passes the gate.
        self.on_key_gate: Callable[[HubitatKeyRefusedError | None], None] | None = None

    # -- plumbing ----------------------------------------------------------------------------

    def route(self, tool: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The tools/call name and arguments that reach a (possibly gated) tool."""
        gateway = GATEWAY_OF.get(tool)
        if gateway is None or self.flat:
            return tool, dict(args)
        return gateway, {"tool": tool, "args": dict(args)}

    def with_key(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Write arguments with the best-practice key, when the user lets us send it."""
        out = dict(args)
        if self.send_key:
            out["bestPracticeKey"] = BEST_PRACTICE_KEY
        return out

    async def _call(self, tool: str, args: Mapping[str, Any] | None = None) -> Any:
        """Call a read tool and return its parsed JSON, raising on runtime failures."""
        name, arguments = self.route(tool, args or {})
        result = await self.client.call_tool(name, arguments, kind="read")
        return self._data(tool, result)

    async def _write(self, tool: str, args: Mapping[str, Any]) -> Any:
        """Call a write tool with the key, reporting the key gate's verdict."""
        name, arguments = self.route(tool, self.with_key(args))
        try:
            result = await self.client.call_tool(name, arguments, kind="write")
        except McpRpcError as err:
            if is_key_refusal(err):
                refused = HubitatKeyRefusedError(err.code, err.message, err.data)
                if self.on_key_gate is not None:
                    self.on_key_gate(refused)
                raise refused from err
            raise
        if self.on_key_gate is not None:
            self.on_key_gate(None)
        return self._data(tool, result)

    @staticmethod
    def _data(tool: str, result: ToolResult) -> Any:
        data = result.data
        # hubitat-mcp-server.groovy _renderToolResult: the notice comes with isError when the
        # owner turned publishOutputSchemas on (tools advertising an output schema); it asks
        # for less either way.
        if isinstance(data, dict) and data.get("response_too_large") is True:
            raise HubitatTooLargeError(f"{tool}: the hub's answer was too large")
        if result.is_error:
            if isinstance(data, dict) and data.get("status") == BUSY_STATUS:
                raise HubitatBusyError(tool, result, data)
            message = data.get("error") if isinstance(data, dict) else None
            raise McpToolError(f"{tool}: {message or result.text or 'failed'}", result)
        if isinstance(data, dict) and data.get("success") is False and "results" not in data:
            raise HubitatUnavailableError(f"{tool}: {data.get('error') or 'failed'}", result)
        return data

    # -- hub ---------------------------------------------------------------------------------

    async def get_info(self) -> HubInfo:
        """The hub's identity, firmware and health."""
        return parse_hub_info(await self._call("hub_get_info"))

    async def detect_layout(self) -> None:
        """Read tools/list once to tell whether the server uses gateways (`flat`)."""
        names = {str(tool.get("name")) for tool in await self.client.list_tools()}
        self.flat = "hub_list_devices" in names and "hub_read_devices" not in names

    # -- devices -----------------------------------------------------------------------------

    async def list_devices(
        self, *, changed_since: str | None = None, detailed: bool = True
    ) -> DevicePage:
        """Every visible device (all pages), or only those with activity at or after a time.

        Pages start at 50 (the hub's default) and halve whenever the hub answers
        `response_too_large` (any result over 120,000 bytes: devices with many attributes and
        commands are 2-4 KB each), down to one device per page.
        """
        args: dict[str, Any] = {"format": "detailed" if detailed else "summary"}
        if changed_since is not None:
            args["changedSince"] = changed_since
        devices: list[HubitatDevice] = []
        total: int | None = None
        offset = 0
        limit = self.page_limit
        for _ in range(_MAX_PAGES):
            try:
                answer = await self._call(
                    "hub_list_devices", {**args, "offset": offset, "limit": limit}
                )
            except HubitatTooLargeError:
                if limit == 1:
                    raise
                limit = max(1, limit // 2)
                # Later inventories start at the size that fitted.
                self.page_limit = limit
                continue
            data = _require_dict(answer, "hub_list_devices")
            items = data.get("devices")
            if not isinstance(items, list):
                raise McpProtocolError("hub_list_devices: no 'devices' list")
            devices.extend(parse_device(item) for item in items)
            if isinstance(data.get("total"), int):
                total = data["total"]
            if not data.get("hasMore"):
                return DevicePage(devices, total)
            next_offset = data.get("nextOffset")
            if not isinstance(next_offset, int) or next_offset <= offset:
                next_offset = offset + len(items)
            if next_offset <= offset:
                raise McpProtocolError("hub_list_devices: paging does not advance")
            offset = next_offset
        raise McpProtocolError("hub_list_devices: too many pages")

    async def list_device_ids(self) -> set[str]:
        """The ids of every visible device (cheap: no states)."""
        ids: set[str] = set()
        offset = 0
        for _ in range(_MAX_PAGES):
            data = _require_dict(
                await self._call("hub_list_devices", {"format": "ids", "offset": offset}),
                "hub_list_devices",
            )
            items = data.get("deviceIds")
            if not isinstance(items, list):
                raise McpProtocolError("hub_list_devices(ids): no 'deviceIds' list")
            ids.update(str(item) for item in items if not isinstance(item, dict | list | bool))
            next_offset = data.get("nextOffset")
            if not data.get("hasMore") or not isinstance(next_offset, int) or next_offset <= offset:
                return ids
            offset = next_offset
        raise McpProtocolError("hub_list_devices(ids): too many pages")

    async def get_device(self, device_id: str) -> HubitatDevice:
        """One device in full."""
        data = await self._call("hub_get_device", {"deviceId": device_id})
        return parse_device(data, listing=False)

    async def list_events(
        self, *, device_id: str | None = None, since: str | None = None, limit: int | None = None
    ) -> list[DeviceEvent]:
        """A device's (or, without a device, the location's) events, oldest first."""
        args: dict[str, Any] = {}
        if device_id is not None:
            args["deviceId"] = device_id
        if since is not None:
            args["since"] = since
        if limit is not None:
            args["limit"] = limit
        data = _require_dict(await self._call("hub_list_device_events", args), "events")
        items = data.get("events")
        if not isinstance(items, list):
            raise McpProtocolError("hub_list_device_events: no 'events' list")
        events = [event for item in items if (event := parse_event(item)) is not None]
        events.sort(key=lambda event: parse_time(event.date) or datetime.min.astimezone())
        return events

    async def send_command(self, command: Command) -> CommandOutcome:
        """One command in the single form."""
        args: dict[str, Any] = {"deviceId": command.device_id, "command": command.command}
        if command.parameters:
            args["parameters"] = list(command.parameters)
        try:
            await self._write("hub_call_device_command", args)
        except HubitatBusyError as err:
            return CommandOutcome(False, str(err), err)
        except McpToolError as err:
            return CommandOutcome(False, str(err))
        return CommandOutcome(True)

    async def send_commands(self, commands: Sequence[Command]) -> list[CommandOutcome]:
        """Up to 20 commands in one call; one outcome per command, in order."""
        if len(commands) == 1:
            return [await self.send_command(commands[0])]
        try:
            data = await self._write(
                "hub_call_device_command", {"commands": [c.as_wire() for c in commands]}
            )
        except HubitatBusyError as err:
            return [CommandOutcome(False, str(err), err) for _ in commands]
        except McpToolError as err:
            # An all-failed batch comes back as isError with the per-entry results inside.
            data = err.result.data if isinstance(err.result, ToolResult) else None
            if not isinstance(data, dict) or not isinstance(data.get("results"), list):
                return [CommandOutcome(False, str(err)) for _ in commands]
        data = _require_dict(data, "hub_call_device_command")
        results = data.get("results")
        if not isinstance(results, list):
            raise McpProtocolError("hub_call_device_command: batch answer without results")
        return _match_outcomes(commands, results)

    # -- modes, HSM, rules -------------------------------------------------------------------

    async def list_modes(self) -> Modes:
        """The location's modes."""
        data = _require_dict(await self._call("hub_list_modes"), "hub_list_modes")
        modes = data.get("modes")
        if not isinstance(modes, list):
            raise McpProtocolError("hub_list_modes: no 'modes' list")
        names = tuple(
            str(mode["name"]) for mode in modes if isinstance(mode, dict) and mode.get("name")
        )
        current = data.get("currentMode")
        if isinstance(current, dict):
            current = current.get("name")
        return Modes(current=_opt_str(current), names=names)

    async def set_mode(self, mode: str) -> None:
        """Activate a location mode."""
        await self._write("hub_manage_mode", {"action": "activate", "mode": mode})

    async def get_hsm(self) -> HsmStatus:
        """Hubitat Safety Monitor's state."""
        data = _require_dict(await self._call("hub_get_hsm_status"), "hub_get_hsm_status")
        return HsmStatus(status=_opt_str(data.get("status")), alert=_opt_str(data.get("alert")))

    async def set_hsm(self, arm_command: str) -> None:
        """Arm or disarm HSM (armAway, armHome, armNight, disarm)."""
        await self._write("hub_set_hsm", {"armCommand": arm_command})

    async def list_rules(self) -> list[HubitatRule]:
        """Native rules (all pages).

        libraries/mcp-native-rules-lib.groovy toolListRmRules pages only with `cursor` (""
        for the first page, then `nextCursor`); without one it answers the whole list.
        """
        rules: list[HubitatRule] = []
        cursor = ""
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            data = _require_dict(
                await self._call("hub_list_rules", {"cursor": cursor}), "hub_list_rules"
            )
            items = data.get("rules")
            if not isinstance(items, list):
                raise McpProtocolError("hub_list_rules: no 'rules' list")
            rules.extend(rule for item in items if (rule := parse_rule(item)) is not None)
            next_cursor = data.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
                return rules
            seen.add(next_cursor)
            cursor = next_cursor
        raise McpProtocolError("hub_list_rules: too many pages")

    async def run_rule(self, rule_id: str) -> None:
        """Run a rule's actions (upstream action "actions" = RMUtils runRuleAct)."""
        await self._write("hub_call_rule", {"ruleId": _rule_id(rule_id), "action": "actions"})

    async def set_rule_paused(self, rule_id: str, paused: bool) -> None:
        """Pause or resume a rule."""
        await self._write("hub_set_rule_paused", {"ruleId": _rule_id(rule_id), "paused": paused})

    # -- custom-engine rules (libraries/mcp-custom-rules-lib.groovy) --------------------------

    async def list_custom_rules(self) -> list[dict[str, Any]]:
        """The app's custom rules as toolListRules summarises them (id, name, enabled, ...)."""
        data = _require_dict(await self._call("hub_get_custom_rule", {}), "hub_get_custom_rule")
        items = data.get("rules")
        if not isinstance(items, list):
            raise McpProtocolError("hub_get_custom_rule: no 'rules' list")
        return [item for item in items if isinstance(item, dict) and item.get("id") is not None]

    async def create_custom_rule(self, rule: Mapping[str, Any]) -> str:
        """Create a custom rule; its id."""
        data = _require_dict(await self._write("hub_create_custom_rule", rule), "create")
        return str(data.get("ruleId"))

    async def update_custom_rule(self, rule_id: str, changes: Mapping[str, Any]) -> None:
        """Change a custom rule (only `enabled` while the hub's engine setting is off)."""
        await self._write("hub_update_custom_rule", {"ruleId": rule_id, **changes})

    async def delete_custom_rule(self, rule_id: str) -> None:
        """Delete a custom rule (confirmed; test rules leave no backup file)."""
        await self._write("hub_delete_custom_rule", {"ruleId": rule_id, "confirm": True})


def _rule_id(rule_id: str) -> int | str:
    """Rule ids are integers in the hub's schemas; ours are their strings."""
    return int(rule_id) if rule_id.isdigit() else rule_id


def _match_outcomes(commands: Sequence[Command], results: list[Any]) -> list[CommandOutcome]:
    """Pair batch results with commands: by position, checked against the device id."""
    outcomes: list[CommandOutcome] = []
    for index, command in enumerate(commands):
        entry = results[index] if index < len(results) else None
        if not isinstance(entry, dict) or str(entry.get("deviceId")) != command.device_id:
            entry = next(
                (
                    r
                    for r in results
                    if isinstance(r, dict)
                    and str(r.get("deviceId")) == command.device_id
                    and r.get("command") == command.command
                ),
                None,
            )
        if entry is None:
            outcomes.append(CommandOutcome(False, "the hub did not report this command"))
        elif entry.get("success") is True:
            outcomes.append(CommandOutcome(True))
        else:
            error = entry.get("error") or entry.get("note") or "failed"
            outcomes.append(CommandOutcome(False, str(error)))
    return outcomes
