"""Tool implementations of the simulated Hubitat MCP Rule Server.

Validation failures raise RpcFailure(-32602) (the server maps IllegalArgumentException so);
runtime failures are results `{success: false, error, note}`; ToolError becomes `isError: true`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
import json
import re
import time
from typing import Any
import uuid

from ..base import INVALID_PARAMS, RpcFailure
from .catalog import (
    BEST_PRACTICE_KEY,
    CORE_TOOLS,
    GATEWAYS,
    MRTR_TOOLS,
    TOOL_BY_NAME,
    VIRTUAL_TYPES,
    ToolDef,
    gateway_definition,
    search_tools,
)
from .devices import CommandFailed, Device, Event
from .hub import Hub, Mode, Room, Rule, Variable, epoch_ms, event_time, hub_time
from .rule_engine import RuleEngine

# The newest release (a385ffd1, "chore(release): 4.0.2").
SERVER_VERSION = "4.0.2"
FIRMWARE = "2.4.3.149"
SUMMARY_STATES = ("switch", "level", "motion", "contact", "temperature", "humidity", "battery")
PAGE_SIZE = 50
MAX_BATCH = 20
_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CUSTOM_DRIVERS = {("community", "Sonoff Zigbee Plug"), ("community", "Tuya Zigbee Dimmer")}


# hubitat-mcp-server.groovy _writeLeaseMs() (an MRTR record's active TTL) and
# _mrtrTerminalTtlMs() (how long a finished request's result stays replayable).
MRTR_LEASE = timedelta(minutes=3)
MRTR_TERMINAL = timedelta(minutes=10)


@dataclass
class Lease:
    """One MRTR record: bound to the tool and its exact arguments."""

    outer: str
    leaf: str
    digest: str
    started: datetime
    expires: datetime
    status: str = "active"
    terminal: dict[str, Any] = field(default_factory=dict)
    terminal_error: bool = False

    def matches(self, outer: str, leaf: str, digest: str) -> bool:
        """Upstream: hubitat-mcp-server.groovy _mrtrBindingMatches (outer tool, leaf tool and
        argument digest of _mrtrBinding).
        """
        return (self.outer, self.leaf, self.digest) == (outer, leaf, digest)

    def expired(self, now: datetime) -> bool:
        """Upstream: an MRTR record past its expiresAt no longer counts (hubitat-mcp-server.groovy
        _activeWritesLocked).
        """
        return self.expires <= now


class ToolError(Exception):
    """A tool outcome the server marks `isError: true`."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(payload.get("error"))
        self.payload = payload


class ToolThrew(Exception):
    """A tool threw an exception no handler of its own caught (`hub.tools_throw`).

    hubitat-mcp-server.groovy handleToolsCallLegacy (every call outside MRTR, so every read)
    answers it with isError and the plain text "Tool error: <message>"; handleToolsCall's MRTR
    path renders {success: false, isError: true, error: "Tool error: <message>", tool}.
    """


def invalid(message: str, data: Any = None) -> RpcFailure:
    """An invalid-params failure, as upstream's IllegalArgumentException reaches the client."""
    return RpcFailure(INVALID_PARAMS, message, data)


def _str(args: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = args.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise invalid(f"{key} is required")
        return None
    if isinstance(value, dict | list):
        raise invalid(f"{key} must be a string")
    return str(value).strip()


def _int(
    args: dict[str, Any], key: str, default: int, *, low: int = 0, high: int | None = None
) -> int:
    value = args.get(key)
    if value is None:
        return default
    try:
        number = int(str(value).strip())
    except ValueError as err:
        raise invalid(f"{key} must be an integer, got '{value}'") from err
    if number < low or (high is not None and number > high):
        bound = f" and {high}" if high is not None else ""
        raise invalid(f"{key} must be between {low}{bound}, got {number}")
    return number


def _device_filter(args: dict[str, Any]) -> tuple[str | None, int | None]:
    """toolListDevices' `filter`: enabled, disabled, virtual or stale:N (N hours)."""
    flt = _str(args, "filter")
    if flt and flt.startswith("stale:"):
        try:
            return flt, int(flt[6:])
        except ValueError as err:
            raise invalid(f"filter stale:N needs a number of hours, got '{flt}'") from err
    if flt not in (None, "enabled", "disabled", "virtual"):
        raise invalid("filter must be enabled, disabled, virtual or stale:N")
    return flt, None


def _preferences(prefs: Any) -> dict[str, Any] | None:
    """toolUpdateDevice's `preferences`: names mapped to {type, value}."""
    if prefs is not None and (
        not isinstance(prefs, dict)
        or not all(isinstance(v, dict) and "type" in v and "value" in v for v in prefs.values())
    ):
        raise invalid("preferences must map names to {type, value}")
    return prefs


def _apply_device_update(
    hub: Hub, d: Device, args: dict[str, Any], room_target: Room | None, prefs: Any
) -> list[str]:
    """toolUpdateDevice's writes, in its order; the names of the fields it changed."""
    updated = []
    if args.get("label") is not None:
        d.label = str(args["label"])
        updated.append("label")
    if args.get("name") is not None:
        d.name = str(args["name"])
        updated.append("name")
    if args.get("room") is not None:
        hub.move_device(d, room_target)
        updated.append("room")
    if args.get("enabled") is not None:
        d.disabled = not _bool(args["enabled"])
        updated.append("enabled")
    if prefs:
        d.preferences.update({k: v["value"] for k, v in prefs.items()})
        updated.append("preferences")
    if args.get("tags") is not None:
        d.tags = [str(t) for t in args["tags"]]
        updated.append("tags")
    if args.get("dataValues") is not None:
        d.data_values.update({str(k): str(v) for k, v in dict(args["dataValues"]).items()})
        updated.append("dataValues")
    return updated


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes", "on")
    return bool(value)


def parse_time(value: Any, key: str) -> int:
    """Epoch ms (number or digits) or ISO-8601 with an offset -> epoch ms.

    Upstream: libraries/mcp-devices-lib.groovy _parseSinceArg.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as err:
        raise invalid(f"{key} must be epoch milliseconds or ISO-8601, got '{value}'") from err
    if parsed.tzinfo is None:
        raise invalid(f"{key} needs a UTC offset, got '{value}'")
    return int(parsed.timestamp() * 1000)


def convert_parameter(value: Any) -> Any:
    """The hub turns string parameters into numbers or JSON maps where they look like one.

    Upstream: libraries/mcp-devices-lib.groovy normalizeCommandParams / convertParamElements.
    """
    if not isinstance(value, str):
        return value
    text = value.strip()
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text[:1] in "{[":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text
    return text


class Tools:
    """Dispatch and implementations; one per app, sharing the Hub."""

    def __init__(
        self,
        hub: Hub,
        *,
        gateways: bool = True,
        best_practice_gate: bool = True,
        write_cap: int = 2,
        app_id: str = "42",
        custom_rule_engine: bool = False,
    ) -> None:
        self.hub = hub
        self.gateways = gateways
        self.best_practice_gate = best_practice_gate
        self.write_cap = write_cap
        self.app_id = app_id
        self.leases: dict[str, Lease] = {}
        self.running: list[tuple[str, int]] = []
        self.engine = RuleEngine(hub, enabled=custom_rule_engine)
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            name[len("_t_") :]: getattr(self, name) for name in dir(self) if name.startswith("_t_")
        }

    # ---- dispatch ----

    async def call(self, name: str, args: Any) -> dict[str, Any]:
        """Run a tool or gateway by name; returns the result payload (the JSON in the text).

        Upstream: hubitat-mcp-server.groovy executeTool, with handleGateway for a gateway.
        """
        if not isinstance(args, dict):
            raise invalid("arguments must be an object")
        if name in GATEWAYS:
            return await self._gateway(name, args)
        tool = TOOL_BY_NAME.get(name)
        if tool is None or (name == "hub_search_tools" and not self.gateways):
            raise invalid(f"Unknown tool: {name}")
        if not tool.write:
            return await self._run(tool, args)
        self.require_key(name, args)
        hub = self.hub
        if (refusal := self.capacity_refusal()) is not None:
            raise ToolError(refusal)
        running = (name, epoch_ms(hub.now()))
        self.running.append(running)
        hub.writes_in_flight += 1
        hub.notify()
        try:
            if hub.write_hold is not None:
                await hub.write_hold.wait()
            result = await self._run(tool, args)
        finally:
            hub.writes_in_flight -= 1
            self.running.remove(running)
        if hub.answer_hold is not None:
            await hub.hold_answer(hub.answer_hold)
        return result

    def require_key(self, name: str, args: dict[str, Any]) -> None:
        """hubitat-mcp-server.groovy _mrtrValidateAccess: the mandatory best-practice key."""
        if self.best_practice_gate and args.get("bestPracticeKey") != BEST_PRACTICE_KEY:
            raise invalid(
                "Mandatory best-practice acknowledgment is enabled for write tools. Read "
                "hub_get_tool_guide(section='best_practice_reference') to obtain the required "
                "acknowledgment key, then pass it as the bestPracticeKey argument on this call. "
                "The key appears only in that guide section.",
                {"missing": "bestPracticeKey"},
            )

    def active_writes(self) -> list[dict[str, Any]]:
        """hubitat-mcp-server.groovy _activeWritesLocked: running writes and live MRTR leases."""
        now = self.hub.now()
        self.leases = {k: v for k, v in self.leases.items() if not v.expired(now)}
        active: list[dict[str, Any]] = [
            {"tool": tool, "startedAt": started, "transport": "legacy"}
            for tool, started in self.running
        ]
        active.extend(
            {"tool": lease.leaf, "startedAt": epoch_ms(lease.started), "transport": "mrtr"}
            for lease in self.leases.values()
            if lease.status == "active"
        )
        return active

    def capacity_refusal(self) -> dict[str, Any] | None:
        """hubitat-mcp-server.groovy _writeCapacityRefusalLocked (rendered with isError)."""
        if self.write_cap <= 0:
            return None
        active = self.active_writes()
        if len(active) < self.write_cap:
            return None
        return {
            "success": False,
            "isError": True,
            "status": "too_many_writes_in_flight",
            "limit": self.write_cap,
            "active": active,
            "note": f"{len(active)} write operation(s) are already active (cap "
            f"{self.write_cap}, the maxConcurrentWrites setting). Nothing was run; wait for "
            "one to finish, then retry.",
        }

    # ---- MCP 2026-07-28 multi round-trip requests (hubitat-mcp-server.groovy) ----

    def mrtr_leaf(self, name: str, args: Any) -> tuple[str, dict[str, Any]] | None:
        """hubitat-mcp-server.groovy _mrtrEligibleCall: the leaf tool and its arguments when this
        call goes through MRTR.
        """
        if not isinstance(args, dict):
            return None
        leaf, leaf_args = name, args
        if name in GATEWAYS:
            sub = args.get("tool")
            if not isinstance(sub, str) or sub not in GATEWAYS[name][1]:
                return None  # a mis-routed gateway call refuses through ordinary dispatch
            leaf = sub
            sub_args = args.get("args")
            leaf_args = sub_args if isinstance(sub_args, dict) else {}
        if leaf not in MRTR_TOOLS:
            return None
        if leaf == "hub_delete_item":
            return (leaf, leaf_args) if str(leaf_args.get("type")) == "driver" else None
        if leaf == "hub_call_rule":
            ids = leaf_args.get("ruleId")
            count = len(ids) if isinstance(ids, list) else (0 if ids is None else 1)
            if leaf_args.get("action") not in ("stop", "start") or count <= 1:
                return None
        return leaf, leaf_args

    async def call_modern(
        self, name: str, args: Any, request_state: Any
    ) -> dict[str, Any] | tuple[dict[str, Any], bool]:
        """hubitat-mcp-server.groovy handleToolsCall: `input_required`, or (payload, isError).

        Round zero validates access, reserves a write slot for the lease (3 minutes) and runs
        nothing; the continuation with the same arguments and the requestState executes,
        releases the slot and keeps the terminal result for replay (10 minutes).
        """
        routed = self.mrtr_leaf(name, args)
        if routed is None:
            if request_state is not None:
                raise invalid("Invalid params: requestState is not valid for this tool call.")
            try:
                return await self.call(name, args), False
            except ToolError as err:
                return err.payload, True
        leaf, leaf_args = routed
        digest = json.dumps(args, sort_keys=True, separators=(",", ":"))
        now = self.hub.now()
        if request_state is None:
            self.require_key(leaf, leaf_args)
            self.active_writes()  # sweeps expired records
            for state_id, existing in self.leases.items():
                # An identical replay of round zero rejoins the active lease.
                if existing.matches(name, leaf, digest) and existing.status == "active":
                    return {
                        "resultType": "input_required",
                        "requestState": state_id,
                        "rejoined": True,
                    }
            if (refusal := self.capacity_refusal()) is not None:
                return refusal, True
            state_id = f"mrtr-{uuid.uuid4()}"
            self.leases[state_id] = Lease(name, leaf, digest, now, now + MRTR_LEASE)
            self.hub.notify()
            return {"resultType": "input_required", "requestState": state_id}
        lease = self.leases.get(str(request_state))
        if lease is None or lease.expired(now):
            raise invalid("Invalid params: Invalid or expired requestState")
        if not lease.matches(name, leaf, digest):
            raise invalid(
                "Invalid params: requestState does not match this tool and its original arguments"
            )
        if lease.status == "terminal":
            return lease.terminal, lease.terminal_error
        tool = TOOL_BY_NAME[leaf]
        self.hub.writes_in_flight += 1
        try:
            payload, is_error = await self._run(tool, leaf_args), False
        except RpcFailure:
            # _mrtrAbandon: a validation error frees the slot and keeps no record.
            del self.leases[str(request_state)]
            raise
        except ToolError as err:
            payload, is_error = err.payload, True
        except ToolThrew as err:
            payload, is_error = (
                {
                    "success": False,
                    "isError": True,
                    "error": f"Tool error: {err}",
                    "tool": leaf,
                },
                True,
            )
        finally:
            self.hub.writes_in_flight -= 1
            self.hub.notify()
        lease.status, lease.terminal, lease.terminal_error = "terminal", payload, is_error
        lease.expires = now + MRTR_TERMINAL
        return payload, is_error

    async def _run(self, tool: ToolDef, args: dict[str, Any]) -> dict[str, Any]:
        if (thrown := self.hub.tools_throw.get(tool.name)) is not None:
            raise ToolThrew(thrown)
        if tool.name.endswith("_custom_rule"):
            self.engine.gate(tool.name)
        for key in tool.required:
            if args.get(key) is None or args.get(key) == "":
                raise invalid(f"Missing required parameter: {key}")
        for key, schema in tool.properties.items():
            allowed = schema.get("enum")
            if allowed and key in args and args[key] not in allowed:
                raise invalid(f"{key} must be one of: {', '.join(map(str, allowed))}")
        if tool.confirm:
            self.require_confirm(args)
        handler = self._handlers.get(tool.name[len("hub_") :])
        if handler is None:
            return self._generic(tool, args)
        return await handler(args)

    def require_confirm(self, args: dict[str, Any]) -> None:
        """confirm=true and a hub backup younger than 24 hours (the destructive tier).

        Upstream: hubitat-mcp-server.groovy requireDestructiveConfirm.
        """
        if args.get("confirm") is not True:
            raise invalid("This operation requires confirm=true after the user agreed to it.")
        last = self.hub.last_backup
        if last is None or self.hub.now() - last > timedelta(hours=24):
            raise invalid(
                "No hub backup within the last 24 hours. Run hub_create_backup(confirm=true) first."
            )

    async def _gateway(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        _, members = GATEWAYS[name]
        sub = args.get("tool")
        if not sub:
            return {
                "gateway": name,
                "mode": "catalog",
                "description": gateway_definition(name)["description"].split("\n")[0],
                "tools": [
                    {
                        "name": member,
                        "description": TOOL_BY_NAME[member].full_description,
                        "inputSchema": TOOL_BY_NAME[member].input_schema(),
                    }
                    for member in members
                ],
            }
        if sub not in members:
            raise invalid(
                f"Tool '{sub}' is not available through {name}. Available: {', '.join(members)}"
            )
        sub_args = args.get("args") or {}
        if not isinstance(sub_args, dict):
            raise invalid("args must be an object")
        return await self.call(sub, sub_args)

    def _generic(self, tool: ToolDef, args: dict[str, Any]) -> dict[str, Any]:
        """Admin tools the integration does not live on: record the call, answer plausibly."""
        clean = {k: v for k, v in args.items() if k != "bestPracticeKey"}
        self.hub.admin_calls.append((tool.name, clean))
        if tool.write:
            return {"success": True, "tool": tool.name, "message": f"{tool.name} completed."}
        return {"tool": tool.name, "items": [], "count": 0}

    # ---- formatting ----

    def _device_base(self, d: Device) -> dict[str, Any]:
        hub = self.hub
        room = hub.room_of(d)
        item: dict[str, Any] = {
            "id": str(d.id),
            "name": d.name,
            "label": d.label or None,
            "room": room.name if room else None,
            "disabled": d.disabled,
            "deviceNetworkId": d.dni,
            "lastActivity": hub_time(d.last_activity, hub.tz) if d.last_activity else None,
            "parentDeviceId": str(d.parent_id) if d.parent_id else None,
        }
        if d.mcp_managed:
            item["mcpManaged"] = True
        return item

    def summary(self, d: Device) -> dict[str, Any]:
        """One device of libraries/mcp-devices-lib.groovy toolListDevices format 'summary'
        (currentStates).
        """
        item = self._device_base(d)
        item["currentStates"] = {
            name: d.attributes[name].value
            for name in SUMMARY_STATES
            if name in d.attributes and d.attributes[name].value is not None
        }
        return item

    def detailed(self, d: Device) -> dict[str, Any]:
        """One device of libraries/mcp-devices-lib.groovy toolListDevices format 'detailed'
        (capabilities, attributes, commands).
        """
        item = self.summary(d)
        item["capabilities"] = list(d.capabilities)
        item["attributes"] = [{"name": a.name, "value": a.value} for a in d.attributes.values()]
        item["commands"] = list(d.commands)
        return item

    def context(self, d: Device) -> dict[str, Any]:
        """One device of libraries/mcp-devices-lib.groovy toolListDevices format 'context' (room and
        current states).
        """
        room = self.hub.room_of(d)
        states = ", ".join(
            f"{a.name}={a.value}" for a in d.attributes.values() if a.value is not None
        )
        return {
            "id": str(d.id),
            "label": d.label,
            "room": room.name if room else None,
            "states": states,
        }

    def snapshot(self, d: Device) -> dict[str, Any]:
        """Upstream: libraries/mcp-devices-lib.groovy _snapshotDeviceState (the device's state in a
        command's answer).
        """
        return {
            a.name: {"value": str(a.value), "timestamp": event_time(a.date, self.hub.tz)}
            for a in d.attributes.values()
            if a.value is not None and a.date is not None
        }

    def event_json(self, e: Event) -> dict[str, Any]:
        """One event as libraries/mcp-devices-lib.groovy toolGetDeviceEvents renders it."""
        return {
            "name": e.name,
            "value": e.value,
            "unit": e.unit,
            "description": e.description,
            "date": event_time(e.date, self.hub.tz),
            "isStateChange": e.is_state_change,
        }

    def device(self, device_id: Any) -> Device:
        """Upstream: hubitat-mcp-server.groovy findDevice, with the tools' 'Device not found'."""
        if device_id is None or device_id == "":
            raise invalid("deviceId is required")
        device = self.hub.visible(device_id)
        if device is None:
            raise invalid(f"Device not found: {device_id}")
        return device

    def _page(self, args: dict[str, Any], total: int) -> tuple[int, int]:
        limit = _int(args, "limit", PAGE_SIZE, low=1)
        cursor = args.get("cursor")
        if cursor not in (None, ""):
            # Cursors are the next offset as a string; anything else is refused.
            if not str(cursor).isdigit() or int(str(cursor)) > total:
                raise invalid(f"Invalid cursor: {cursor}")
            return int(str(cursor)), limit
        return _int(args, "offset", 0), limit

    @staticmethod
    def _paged(items: list[Any], offset: int, limit: int, total: int) -> dict[str, Any]:
        more = offset + limit < total
        out: dict[str, Any] = {"count": len(items), "total": total, "offset": offset}
        out["limit"] = limit
        out["hasMore"] = more
        if more:
            out["nextOffset"] = offset + limit
            out["nextCursor"] = str(offset + limit)
        return out

    # ---- devices ----

    async def _t_list_devices(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-devices-lib.groovy toolListDevices: filters, then a format and a page."""
        hub = self.hub
        fmt = args.get("format") or "summary"
        if fmt not in ("summary", "detailed", "ids", "context"):
            raise invalid("format must be one of: summary, detailed, ids, context")
        flt, stale_hours = _device_filter(args)
        if flt == "virtual":
            return self._list_virtual()
        candidates = self._list_candidates(args)
        keep = self._device_predicate(args, flt, stale_hours)
        matches = [d for d in candidates if keep(d)]
        if fmt == "ids":
            ids = [d.id for d in matches]
            return {"deviceIds": ids, "count": len(ids), "total": len(hub.visible_devices())}
        offset, limit = self._page(args, len(matches))
        page = matches[offset : offset + limit]
        render = {"summary": self.summary, "detailed": self.detailed, "context": self.context}[fmt]
        result: dict[str, Any] = {"devices": [render(d) for d in page]}
        result.update(self._paged(page, offset, limit, len(matches)))
        return result

    def _list_candidates(self, args: dict[str, Any]) -> list[Device]:
        """toolListDevices' starting set: the devices changed since `changedSince` (selected
        or MCP-managed), else every visible device by id."""
        if args.get("changedSince") not in (None, ""):
            since = parse_time(args["changedSince"], "changedSince")
            return [d for d in self.hub.changed_since(since) if d.selected or d.mcp_managed]
        return sorted(self.hub.visible_devices(), key=lambda d: d.id)

    def _device_predicate(
        self, args: dict[str, Any], flt: str | None, stale_hours: int | None
    ) -> Callable[[Device], bool]:
        """toolListDevices' per-device filters: enabled/disabled, stale:N, labelFilter,
        capabilityFilter, roomFilter (exact room name) and onlyOn."""
        hub = self.hub
        label = (_str(args, "labelFilter") or "").lower()
        capability = (_str(args, "capabilityFilter") or "").lower()
        room_filter = (_str(args, "roomFilter") or "").lower()
        only_on = _bool(args.get("onlyOn", False))
        now = hub.now()

        def fresh(d: Device) -> bool:
            last = d.last_activity
            return (
                stale_hours is not None
                and last is not None
                and now - last < timedelta(hours=stale_hours)
            )

        def in_room(d: Device) -> bool:
            room = hub.room_of(d)
            return room is not None and room.name.lower() == room_filter

        def keep(d: Device) -> bool:
            if (flt == "enabled" and d.disabled) or (flt == "disabled" and not d.disabled):
                return False
            if fresh(d):
                return False
            if label and label not in d.label.lower():
                return False
            if capability and capability not in (c.lower() for c in d.capabilities):
                return False
            if room_filter and not in_room(d):
                return False
            return not (only_on and d.value("switch") != "on")

        return keep

    def _list_virtual(self) -> dict[str, Any]:
        devices = []
        for d in sorted(self.hub.visible_devices(), key=lambda x: x.id):
            if not d.mcp_managed:
                continue
            devices.append(
                {
                    "id": str(d.id),
                    "name": d.name,
                    "label": d.label,
                    "deviceNetworkId": d.dni,
                    "driverNamespace": d.driver_namespace,
                    "driverType": d.driver,
                    "typeName": d.driver,
                    "capabilities": list(d.capabilities),
                    "commands": list(d.commands),
                    "currentStates": {a.name: a.value for a in d.attributes.values()},
                }
            )
        return {
            "devices": devices,
            "count": len(devices),
            "message": f"{len(devices)} MCP-managed virtual device(s)",
        }

    async def _t_get_device(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-devices-lib.groovy toolGetDevice: no activity, disabled or parent."""
        d = self.device(args.get("deviceId"))
        room = self.hub.room_of(d)
        item: dict[str, Any] = {
            "id": str(d.id),
            "name": d.name,
            "label": d.label or d.name,
            "room": room.name if room else None,
        }
        item["capabilities"] = list(d.capabilities)
        item["attributes"] = [
            {"name": a.name, "dataType": a.data_type, "value": a.value}
            for a in d.attributes.values()
        ]
        item["commands"] = [
            {
                "name": name,
                "arguments": [{"name": n, "type": t} for n, t in spec] if spec else None,
            }
            for name, spec in d.commands.items()
        ]
        return item

    def _attribute_of(self, d: Device, attribute: str) -> Any:
        if attribute not in d.attributes:
            raise invalid(
                f"Attribute '{attribute}' not found on device '{d.display}'. "
                f"Available: {', '.join(d.attributes)}"
            )
        return d.attributes[attribute].value

    @staticmethod
    def _wait_spec(args: dict[str, Any], max_timeout: int) -> dict[str, Any] | None:
        expected = list(args.get("expectedValues") or [])
        if "expectedValue" in args and args["expectedValue"] is not None:
            expected.append(args["expectedValue"])
        if not expected:
            return None
        comparator = args.get("comparator") or "eq"
        if comparator not in ("eq", "ne", "gt", "gte", "lt", "lte", "between"):
            raise invalid("comparator must be one of eq, ne, gt, gte, lt, lte, between")
        if comparator == "between" and len(expected) != 2:
            raise invalid("comparator=between needs expectedValues=[low, high]")
        timeout = _int(args, "timeoutMs", 5000, low=0, high=max_timeout)
        stable = _int(args, "stableForMs", 0, low=0)
        if stable and stable >= timeout:
            raise invalid("stableForMs must be less than timeoutMs")
        return {
            "expected": expected,
            "comparator": comparator,
            "timeout": timeout,
            "stable": stable,
        }

    @staticmethod
    def _matches(value: Any, spec: dict[str, Any]) -> tuple[bool, bool]:
        """(matched, non-numeric) for one reading."""
        comparator, expected = spec["comparator"], spec["expected"]
        if comparator in ("eq", "ne"):
            hit = any(str(value) == str(e) or _num_eq(value, e) for e in expected)
            return (hit if comparator == "eq" else not hit), False
        try:
            number = float(value)
            bounds = [float(e) for e in expected]
        except (TypeError, ValueError):
            return False, True
        if comparator == "between":
            return min(bounds) <= number <= max(bounds), False
        ref = bounds[0]
        result = {
            "gt": number > ref,
            "gte": number >= ref,
            "lt": number < ref,
            "lte": number <= ref,
        }[comparator]
        return result, False

    async def _wait(
        self, devices: list[Device], attribute: str, spec: dict[str, Any], mode: str = "all"
    ) -> dict[str, Any]:
        """Block until the devices' attribute matches (all or any), stable, or time out."""
        self.hub.blocking_waits += 1
        self.hub.notify()
        try:
            return await self._wait_loop(devices, attribute, spec, mode)
        finally:
            self.hub.blocking_waits -= 1

    async def _wait_loop(
        self, devices: list[Device], attribute: str, spec: dict[str, Any], mode: str
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + spec["timeout"] / 1000
        stable = spec["stable"] / 1000
        matched_since: float | None = None
        polls = 0
        non_numeric = True
        never = True
        while True:
            polls += 1
            states = [self._matches(d.value(attribute), spec) for d in devices]
            hits = [m for m, _ in states]
            non_numeric = non_numeric and all(n for _, n in states)
            never = never and all(d.value(attribute) is None for d in devices)
            ok = all(hits) if mode == "all" else any(hits)
            now = loop.time()
            if ok:
                matched_since = now if matched_since is None else matched_since
                if now - matched_since >= stable:
                    return self._wait_result(
                        devices,
                        attribute,
                        hits,
                        success=True,
                        timed_out=False,
                        start=start,
                        polls=polls,
                    )
            else:
                matched_since = None
            if now >= deadline:
                out = self._wait_result(
                    devices,
                    attribute,
                    hits,
                    success=False,
                    timed_out=True,
                    start=start,
                    polls=polls,
                )
                if non_numeric and spec["comparator"] not in ("eq", "ne"):
                    out["nonNumericAttribute"] = True
                if never:
                    out["neverReported"] = True
                return out
            until = deadline if matched_since is None else min(deadline, matched_since + stable)
            await self.hub.wait_change(until - now)

    @staticmethod
    def _wait_result(
        devices: list[Device],
        attribute: str,
        hits: list[bool],
        *,
        success: bool,
        timed_out: bool,
        start: float,
        polls: int,
    ) -> dict[str, Any]:
        elapsed = int((asyncio.get_running_loop().time() - start) * 1000)
        out: dict[str, Any] = {
            "success": success,
            "timedOut": timed_out,
            "elapsedMs": elapsed,
            "polledCount": polls,
        }
        if len(devices) == 1:
            out["finalValue"] = devices[0].value(attribute)
        else:
            out["convergedCount"] = sum(hits)
            out["results"] = [
                {
                    "deviceId": str(d.id),
                    "device": d.display,
                    "value": d.value(attribute),
                    "matched": h,
                }
                for d, h in zip(devices, hits, strict=True)
            ]
        return out

    async def _t_get_device_attribute(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_device_attribute: libraries/mcp-devices-lib.groovy
        toolGetAttribute, or toolPollUntilAttribute when a poll argument is given.
        """
        attribute = _str(args, "attribute", required=True) or ""
        if args.get("deviceId") not in (None, "") and args.get("deviceIds"):
            raise invalid("deviceId and deviceIds are mutually exclusive")
        spec = self._wait_spec(args, 60000)
        ids = args.get("deviceIds")
        if ids:
            if not isinstance(ids, list) or len(ids) > MAX_BATCH:
                raise invalid(f"deviceIds must be a list of at most {MAX_BATCH} ids")
            devices = [self.device(i) for i in ids]
            for d in devices:
                self._attribute_of(d, attribute)
            mode = args.get("mode") or "all"
            if mode not in ("all", "any"):
                raise invalid("mode must be all or any")
            if spec is None:
                return {
                    "attribute": attribute,
                    "results": [
                        {"deviceId": str(d.id), "device": d.display, "value": d.value(attribute)}
                        for d in devices
                    ],
                    "count": len(devices),
                }
            result = await self._wait(devices, attribute, spec, mode)
            return {"attribute": attribute, "mode": mode, **result}
        d = self.device(args.get("deviceId"))
        value = self._attribute_of(d, attribute)
        out: dict[str, Any] = {"device": d.display, "attribute": attribute, "value": value}
        if spec is not None:
            out.update(await self._wait([d], attribute, spec))
            out["value"] = out["finalValue"]
        return out

    async def _t_list_device_events(self, args: dict[str, Any]) -> dict[str, Any]:
        """hubitat-mcp-server.groovy (case hub_list_device_events) and mcp-devices-lib.groovy.

        A device without a window reads its recent events (toolGetDeviceEvents); anything else
        is toolGetDeviceHistory, whose location branch (no deviceId) reads the hub's internal
        /logs/eventsJson: with Hub Security on and no credentials in the app, that read fails
        and the tool answers {success: false, error, source: "location", note}.
        """
        hub = self.hub
        device_id = args.get("deviceId")
        history = device_id in (None, "") or any(
            args.get(k) not in (None, "") for k in ("hoursBack", "since", "attribute")
        )
        # toolGetDeviceHistory clamps: Math.min(limit ?: 100, 500), Math.min(hoursBack, 168).
        limit = min(_int(args, "limit", 100 if history else 10, low=1), 500)
        since = parse_time(args["since"], "since") if args.get("since") not in (None, "") else None
        attribute = _str(args, "attribute")
        device = None
        if device_id not in (None, ""):
            device = self.device(device_id)
            source = device.events
            if history and device.id in hub.history_fails:
                # mcp-devices-lib.groovy toolGetDeviceHistory: device.eventsSince threw.
                return {
                    "success": False,
                    "error": "eventsSince not supported or failed: java.lang.NullPointerException",
                    "device": device.display,
                    "deviceId": device_id,
                    "note": "Retry; if persistent, drop hoursBack/attribute to read the "
                    "most-recent events instead, or check the device's Events page in the hub UI.",
                }
        else:
            if hub.hub_security_blocks:
                return {
                    "success": False,
                    "error": "Location event history fetch failed: status code: 401, reason "
                    "phrase: Unauthorized",
                    "source": "location",
                    "note": "Likely a transient hub blip (the same endpoint feeds the hub's "
                    "Logs page) -- retry.",
                }
            source = hub.location_events
        floor = None
        if history and since is None:
            hours = min(_int(args, "hoursBack", 24, low=0), 168)
            floor = epoch_ms(hub.now() - timedelta(hours=hours))
        events: list[dict[str, Any]] = []
        read = 0
        for event in reversed(source):  # newest first, as the hub returns them
            when = epoch_ms(event.date)
            if since is not None and when <= since:  # strictly after the bookmark
                break
            if floor is not None and when <= floor:
                break
            if device is not None:
                # The device branch reads device.eventsSince(sinceDate, [max: limit]) and only
                # then filters by attribute: the cap comes first, so a busy device may answer
                # fewer (even no) events of the attribute than it had.
                read += 1
                if read > limit:
                    break
            if attribute and event.name != attribute:
                continue
            events.append(self.event_json(event))
            if len(events) >= limit:
                break
        if device is None:
            return {"source": "location", "events": events, "count": len(events)}
        return {"device": device.display, "events": events, "count": len(events)}

    async def _t_get_compatible_devices(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_compatible_devices: libraries/mcp-devices-lib.groovy toolGetCompatibleDevices."""
        query = (_str(args, "query", required=True) or "").lower()
        catalog = ["Aqara Door Sensor", "Inovelli Blue Dimmer", "Zooz ZEN32", "Sengled Bulb"]
        hits = [{"model": m, "protocol": "zigbee"} for m in catalog if query in m.lower()]
        return {"query": query, "devices": hits, "count": len(hits)}

    def _validate_params(self, params: Any) -> list[Any]:
        if params is None:
            return []
        if not isinstance(params, list):
            raise invalid('parameters must be an array of strings, e.g. ["75"]')
        return [convert_parameter(p) for p in params]

    def _check_command(self, d: Device, command: str) -> None:
        if command not in d.commands:
            raise invalid(
                f"Command '{command}' is not supported by device '{d.display}'. "
                f"Available commands: {', '.join(d.commands)}"
            )

    def _send(self, d: Device, command: str, params: list[Any]) -> str | None:
        """Run a command; the error text when the hub/driver refused it."""
        if d.disabled:
            return f"Device '{d.display}' is disabled"
        spec = d.commands.get(command)
        if len(params) > len(spec or ()):
            return f"{command} takes {len(spec or ())} argument(s), got {len(params)}"
        try:
            self.hub.run_command(d, command, params)
        except CommandFailed as err:
            return f"{command} failed: {err}"
        except RuntimeError as err:
            return str(err)
        return None

    async def _t_call_device_command(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_call_device_command: libraries/mcp-devices-lib.groovy toolSendCommand."""
        if args.get("commands") is not None:
            return self._batch(args)
        d = self.device(args.get("deviceId"))
        command = _str(args, "command", required=True) or ""
        self._check_command(d, command)
        raw = args.get("parameters")
        params = self._validate_params(raw)
        wait = args.get("waitFor")
        spec = None
        if wait is not None:
            if not isinstance(wait, dict) or not wait.get("attribute"):
                raise invalid("waitFor needs an attribute")
            self._attribute_of(d, str(wait["attribute"]))
            spec = self._wait_spec(wait, 30000)
            if spec is None:
                raise invalid("waitFor needs expectedValue or expectedValues")
        before = self.snapshot(d)  # taken before the command lands, as on the hub
        error = self._send(d, command, params)
        if error:
            return {
                "success": False,
                "device": d.display,
                "command": command,
                "error": error,
                "note": "Check the device with hub_get_device and its commands' arguments.",
            }
        out: dict[str, Any] = {
            "success": True,
            "device": d.display,
            "command": command,
            "parameters": raw or [],
            "state": before,
        }
        if spec is not None and wait is not None:
            attribute = str(wait["attribute"])
            waited = await self._wait([d], attribute, spec)
            out["waitFor"] = {"attribute": attribute, **waited}
            out["state"] = self.snapshot(d)
        return out

    def _batch(self, args: dict[str, Any]) -> dict[str, Any]:
        entries = args["commands"]
        if args.get("deviceId") not in (None, "") or args.get("command"):
            raise invalid("commands is mutually exclusive with deviceId/command")
        if args.get("waitFor") is not None:
            raise invalid("waitFor is not supported with commands")
        if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_BATCH:
            raise invalid(f"commands must be a list of 1-{MAX_BATCH} entries")
        parsed = []
        for index, entry in enumerate(entries):  # the whole batch is validated first
            if not isinstance(entry, dict) or not entry.get("deviceId") or not entry.get("command"):
                raise invalid(f"commands[{index}] needs deviceId and command")
            parsed.append(
                (
                    str(entry["deviceId"]),
                    str(entry["command"]),
                    self._validate_params(entry.get("parameters")),
                )
            )
        results = []
        for device_id, command, params in parsed:
            d = self.hub.visible(device_id)
            error = None
            if d is None:
                error = f"Device not found: {device_id}"
            elif command not in d.commands:
                error = f"Command '{command}' is not supported by device '{d.display}'"
            else:
                error = self._send(d, command, params)
            if error:
                results.append(
                    {
                        "deviceId": device_id,
                        "command": command,
                        "success": False,
                        "error": error,
                        "note": "Other commands in the batch were still sent.",
                    }
                )
            else:
                assert d is not None
                results.append(
                    {
                        "deviceId": device_id,
                        "command": command,
                        "success": True,
                        "device": d.display,
                    }
                )
        failed = [r for r in results if not r["success"]]
        out: dict[str, Any] = {
            "success": not failed,
            "count": len(results),
            "sentCount": len(results) - len(failed),
            "failedCount": len(failed),
            "results": results,
        }
        if failed:
            out["failedDeviceIds"] = [r["deviceId"] for r in failed]
            if len(failed) == len(results):
                raise ToolError(out)
            out["partial"] = True
        return out

    async def _t_update_device(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-devices-lib.groovy toolUpdateDevice: check every field, then apply."""
        hub = self.hub
        d = self.device(args.get("deviceId"))
        fields = ("label", "name", "room", "enabled", "preferences", "tags", "dataValues")
        if not any(args.get(f) is not None for f in fields):
            raise invalid(f"Nothing to update: give at least one of {', '.join(fields)}")
        room_target = self._room_target(args.get("room"))
        prefs = _preferences(args.get("preferences"))
        updated = _apply_device_update(hub, d, args, room_target, prefs)
        hub.notify()
        room = hub.room_of(d)
        return {
            "success": True,
            "deviceId": str(d.id),
            "device": d.display,
            "updated": updated,
            "room": room.name if room else None,
            "disabled": d.disabled,
        }

    def _room_target(self, ref: Any) -> Room | None:
        """toolUpdateDevice's `room`: an existing room by name; blank leaves the room."""
        if ref is None or not str(ref).strip():
            return None
        room = self.hub.room_by(str(ref))
        if room is None:
            names = ", ".join(r.name for r in self.hub.rooms.values())
            raise invalid(f"Room not found: {ref}. Available rooms: {names}")
        return room

    async def _t_delete_device(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_delete_device: libraries/mcp-devices-lib.groovy toolDeleteDevice."""
        d = self.device(args.get("deviceId"))
        self.hub.remove_device(d.id)
        return {"success": True, "deviceId": str(d.id), "deviceLabel": d.display}

    async def _t_list_device_dependents(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_device_dependents: libraries/mcp-code-management-lib.groovy
        toolGetDeviceInUseBy.
        """
        d = self.device(args.get("deviceId"))
        apps = [
            {"id": str(r.id), "name": r.name, "disabled": r.disabled}
            for r in self.hub.rules.values()
            if any(a[0] == d.id for a in r.actions)
        ]
        return {"deviceId": str(d.id), "appsUsing": apps, "count": len(apps)}

    async def _t_get_device_health(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_device_health: libraries/mcp-diagnostics-lib.groovy toolDeviceHealthCheck."""
        hours = _int(args, "hours", 24, low=1)
        now = self.hub.now()
        stale = [
            {
                "id": str(d.id),
                "label": d.label,
                "lastActivity": hub_time(d.last_activity, self.hub.tz) if d.last_activity else None,
            }
            for d in self.hub.visible_devices()
            if d.last_activity is None or now - d.last_activity > timedelta(hours=hours)
        ]
        return {"staleDevices": stale, "count": len(stale), "thresholdHours": hours}

    # ---- virtual devices ----

    async def _t_manage_virtual_device(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_manage_virtual_device: libraries/mcp-virtual-devices-lib.groovy
        toolManageVirtualDevice.
        """
        hub = self.hub
        if args.get("action") == "delete":
            d = self.device(args.get("deviceId"))
            if not d.mcp_managed:
                raise invalid(f"Device {d.id} is not an MCP-managed virtual device")
            hub.remove_device(d.id)
            return {
                "success": True,
                "deviceId": str(d.id),
                "deviceNetworkId": d.dni,
                "deviceLabel": d.display,
                "message": f"Deleted virtual device '{d.display}'",
            }
        device_type = args.get("deviceType")
        custom = args.get("customDriver")
        blank_type = device_type is None or not str(device_type).strip()
        if custom is not None and device_type is not None:
            raise invalid("Give exactly one of deviceType or customDriver, not both")
        if blank_type and custom is None:
            raise invalid("deviceType or customDriver is required")
        namespace = "hubitat"
        if custom is not None:
            if not isinstance(custom, dict):
                raise invalid("customDriver must be {namespace, name}")
            namespace = str(custom.get("namespace") or "").strip()
            driver = str(custom.get("name") or "").strip()
            if not namespace or not driver:
                raise invalid("customDriver needs a non-empty namespace and name")
            if (namespace, driver) not in _CUSTOM_DRIVERS:
                raise invalid(
                    f"Driver '{namespace}:{driver}' is not installed; see hub_list_drivers."
                )
        else:
            driver = str(device_type).strip()
            if driver not in VIRTUAL_TYPES:
                raise invalid(f"deviceType must be one of: {', '.join(VIRTUAL_TYPES)}")
        label = _str(args, "deviceLabel") or driver
        d = hub.create_virtual(driver, label, namespace)
        return {
            "success": True,
            "message": f"Created '{label}'",
            "tips": "It is visible to MCP at once; list it with hub_list_devices filter='virtual'.",
            "device": {
                "id": str(d.id),
                "name": d.name,
                "label": d.label,
                "deviceNetworkId": d.dni,
                "driverNamespace": namespace,
                "driverType": driver,
                "typeName": driver,
                "capabilities": list(d.capabilities),
                "commands": list(d.commands),
                "attributes": [{"name": a.name, "value": a.value} for a in d.attributes.values()],
            },
        }

    # ---- modes and HSM ----

    async def _t_list_modes(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_modes: libraries/mcp-system-lib.groovy toolGetModes."""
        hub = self.hub
        return {
            "currentMode": hub.mode_name,
            "modes": [{"id": str(m.id), "name": m.name, "icon": m.icon} for m in hub.modes],
        }

    async def _t_manage_mode(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-system-lib.groovy toolManageMode: only delete asks for confirm."""
        hub = self.hub
        action = str(args["action"]).strip().lower()
        if action == "create":
            name = _str(args, "name", required=True) or ""
            if hub.mode_by(name):
                return {
                    "success": False,
                    "action": "create",
                    "error": f"Mode '{name}' exists",
                    "note": "Verify the mode name/id and Hub Security credentials; read current "
                    "modes with hub_list_modes. Nothing was changed.",
                }
            mode_id = max(m.id for m in hub.modes) + 1
            hub.modes.append(Mode(mode_id, name, _str(args, "icon")))
            return {
                "success": True,
                "action": "create",
                "note": "Read the updated mode list with hub_list_modes.",
            }
        if action == "activate":
            wanted = _str(args, "mode")
            if not wanted:
                raise invalid("mode (the mode name to activate) is required")
            target = next((m for m in hub.modes if m.name.lower() == wanted.lower()), None)
            if target is None:
                available = [m.name for m in hub.modes]
                raise invalid(f"Mode '{wanted}' not found. Available: {available}")
            previous = hub.mode_name
            hub.set_mode(target.name)
            return {
                "success": True,
                "action": "activate",
                "previousMode": previous,
                "newMode": target.name,
                "note": "Verify the active mode with hub_list_modes (setMode is a fire-and-return "
                "SDK call).",
            }
        mode = hub.mode_by(_str(args, "mode") or "")
        if mode is None:
            raise invalid(
                f"mode not found: '{args.get('mode')}'. Pass a mode id or name (from "
                "hub_list_modes)."
            )
        if action == "rename":
            new_name = _str(args, "name")
            if not new_name:
                raise invalid("name (the new mode name) is required to rename a mode")
            mode.name = new_name
            return {
                "success": True,
                "action": "rename",
                "note": "Read the updated mode list with hub_list_modes.",
            }
        self.require_confirm(args)
        if mode.id == hub.current_mode:
            return {
                "success": False,
                "action": "delete",
                "error": "/modes/jsonDelete did not report success",
                "note": "A mode that is current or referenced by Mode Manager/rules may be "
                "undeletable. Nothing was deleted.",
            }
        hub.modes.remove(mode)
        return {
            "success": True,
            "action": "delete",
            "deletedModeId": str(mode.id),
            "note": "Read the updated mode list with hub_list_modes.",
        }

    async def _t_get_hsm_status(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-system-lib.groovy toolGetHsmStatus: status null without HSM."""
        status = self.hub.hsm_status
        return {
            "status": status,
            "statusText": status
            or "unknown — HSM may be disabled or has not reported a status yet",
            "alert": self.hub.hsm_alert,
            "armCommands": ["disarm", "armAway", "armHome", "armNight"],
        }

    async def _t_set_hsm(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-system-lib.groovy toolSetHsm: sends the hsmSetArm location event and
        answers at once, before HSM acted (no word that it is asynchronous)."""
        command = args["armCommand"]
        previous = self.hub.hsm_status or "unknown"
        self.hub.arm_hsm(command)
        return {"success": True, "previousStatus": previous, "newMode": command}

    # ---- rooms ----

    def _room_json(self, room: Room) -> dict[str, Any]:
        # getRooms() reports every device in the room, selected in the MCP app or not.
        return {
            "id": str(room.id),
            "name": room.name,
            "deviceCount": len(room.device_ids),
            "deviceIds": list(room.device_ids),
        }

    async def _t_list_rooms(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_rooms: libraries/mcp-rooms-lib.groovy toolListRooms."""
        rooms = [self._room_json(r) for r in sorted(self.hub.rooms.values(), key=lambda r: r.name)]
        return {"rooms": rooms, "count": len(rooms)}

    def _room(self, ref: Any) -> Room:
        room = self.hub.room_by(str(ref))
        if room is None:
            raise invalid(f"Room not found: {ref}")
        return room

    async def _t_get_room(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_room: libraries/mcp-rooms-lib.groovy toolGetRoom."""
        room = self._room(args["room"])
        devices = [self.summary(d) for i in room.device_ids if (d := self.hub.visible(i))]
        return {**self._room_json(room), "devices": devices}

    async def _t_create_room(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_create_room: libraries/mcp-rooms-lib.groovy toolCreateRoom."""
        name = _str(args, "name", required=True) or ""
        if self.hub.room_by(name):
            return {"success": False, "error": f"Room '{name}' already exists", "note": ""}
        room = self.hub.add_room(name)
        return {"success": True, "room": self._room_json(room)}

    async def _t_delete_room(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_delete_room: libraries/mcp-rooms-lib.groovy toolDeleteRoom."""
        room = self._room(args["room"])
        for device_id in list(room.device_ids):
            if device_id in self.hub.devices:
                self.hub.move_device(self.hub.devices[device_id], None)
        del self.hub.rooms[room.id]
        return {"success": True, "deleted": room.name, "unassignedDevices": len(room.device_ids)}

    async def _t_update_room(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_update_room: libraries/mcp-rooms-lib.groovy toolRenameRoom."""
        room = self._room(args["room"])
        room.name = _str(args, "name", required=True) or room.name
        return {"success": True, "room": self._room_json(room)}

    # ---- native rules ----

    def _rule(self, ref: Any) -> Rule:
        try:
            rule = self.hub.rules.get(int(str(ref)))
        except ValueError:
            rule = None
        if rule is None:
            raise invalid(f"Rule not found: {ref}")
        return rule

    def _rule_json(self, rule: Rule) -> dict[str, Any]:
        """toolListRmRules + _rmAnnotateRuleStatus: integer ids and a live status.

        The status comes from the hub's /hub2/appsList (_collectLiveApps), which Hub Security
        guards: unreadable to the app, every rule is status "unknown" without paused/disabled.
        """
        base = {
            "id": rule.id,
            "label": rule.name,
            "name": rule.name,
            "type": rule.app_type,
            "rmVersion": "5.x",
        }
        if self.hub.hub_security_blocks or rule.id in self.hub.rule_nodes_incomplete:
            return {**base, "status": "unknown"}
        status = "disabled" if rule.disabled else "paused" if rule.paused else "active"
        if rule.stopped and status == "active":
            status = "stopped"
        return {**base, "status": status, "disabled": rule.disabled, "paused": rule.paused}

    async def _t_list_rules(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-native-rules-lib.groovy toolListRmRules: pages only with a cursor.

        With `hub.rm_fails` both RMUtils.getRuleList calls throw (not the "class missing" of a
        hub without Rule Machine): `{rules: [], count: 0, success: false, error, note}`.
        """
        cursor = args.get("cursor")
        if self.hub.rm_fails:
            failure = "java.util.concurrent.TimeoutException: Rule Machine did not answer"
            return {
                "rules": [],
                "count": 0,
                **({"total": 0} if cursor is not None else {}),
                "success": False,
                "error": f"RMUtils calls failed: v4={failure} v5={failure}",
                "note": "Rule Machine may not be installed on this hub.",
            }
        rules = sorted(self.hub.rules.values(), key=lambda r: r.name)
        out: dict[str, Any]
        if cursor is None:
            out = {"rules": [self._rule_json(r) for r in rules], "count": len(rules)}
            return self._status_note(out)
        start = self._cursor(cursor, len(rules), "hub_list_rules")
        page = rules[start : start + PAGE_SIZE]
        out = {
            "rules": [self._rule_json(r) for r in page],
            "count": len(page),
            "total": len(rules),
        }
        if start + PAGE_SIZE < len(rules):
            out["nextCursor"] = str(start + PAGE_SIZE)
        return self._status_note(out)

    def _status_note(self, out: dict[str, Any]) -> dict[str, Any]:
        """toolListRmRules: the note that comes with status "unknown" (tree unreadable)."""
        if self.hub.hub_security_blocks and self.hub.rules:
            out["statusNote"] = (
                '/hub2/appsList was unreadable, so each rule\'s status is "unknown" '
                "(enabled/paused/stopped/disabled could not be determined). Retry; if it "
                "persists the hub's internal API may need Hub Security credentials."
            )
        return out

    @staticmethod
    def _cursor(cursor: Any, total: int, tool: str) -> int:
        """hubitat-mcp-server.groovy _parseListCursor."""
        if cursor in (None, ""):
            return 0
        try:
            offset = int(str(cursor))
        except ValueError as err:
            raise invalid(
                f"cursor must be the opaque string returned by a prior {tool} nextCursor "
                f"(got: {str(cursor)[:80]})"
            ) from err
        if offset < 0:
            raise invalid(f"cursor {cursor} is out of range (must be >= 0)")
        if offset > 0 and offset >= total:
            raise invalid(f"cursor {cursor} is out of range (size={total})")
        return offset

    async def _t_call_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-native-rules-lib.groovy toolRunRmRule."""
        raw = args["ruleId"]
        rules = [self._rule(ref) for ref in (raw if isinstance(raw, list) else [raw])]
        ids = [rule.id for rule in rules]
        action = args.get("action") or "rule"
        if action in ("stop", "start"):
            results = []
            for rule in rules:
                stopped = action == "stop"
                note = None if rule.stopped != stopped else f"Rule already {action}ped"
                rule.stopped = stopped
                results.append({"success": True, "ruleId": rule.id, "note": note})
            if len(rules) == 1:
                return {**results[0], "ruleIds": ids, "rmAction": "stopRule toggle"}
            return {
                "success": True,
                "partial": False,
                "ruleIds": ids,
                "rmAction": f"stopRule toggle x{len(results)}",
                "results": results,
            }
        if action not in ("rule", "actions"):
            raise invalid(
                f"Invalid action '{action}'. Must be 'rule', 'actions', 'stop', or 'start'."
            )
        # RMUtils.sendAction: "runRule" evaluates the conditions first; "runRuleAct" runs the
        # actions. A paused or stopped rule ignores both (the hub still answers success).
        for rule in rules:
            if not (rule.paused or rule.disabled or rule.stopped):
                self.hub.run_rule(rule)
        rm_action = "runRule" if action == "rule" else "runRuleAct"
        out: dict[str, Any] = {"success": True, "ruleIds": ids, "rmAction": rm_action}
        if len(ids) == 1:
            out["ruleId"] = ids[0]
        return out

    async def _t_set_rule_paused(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_set_rule_paused: libraries/mcp-native-rules-lib.groovy toolSetRulePaused."""
        rule = self._rule(args["ruleId"])
        rule.paused = _bool(args["paused"])
        return {"success": True, "ruleId": str(rule.id), "name": rule.name, "paused": rule.paused}

    async def _t_set_rule_private_boolean(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_set_rule_private_boolean: libraries/mcp-native-rules-lib.groovy
        toolSetRmRuleBoolean.
        """
        rule = self._rule(args["ruleId"])
        rule.private_boolean = _bool(args["value"])
        return {"success": True, "ruleId": str(rule.id), "privateBoolean": rule.private_boolean}

    async def _t_get_rule_health(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_rule_health: libraries/mcp-native-rules-lib.groovy toolCheckRuleHealth."""
        rules = (
            [self._rule(args["ruleId"])] if args.get("ruleId") else list(self.hub.rules.values())
        )
        out = []
        for rule in rules:
            missing = [a[0] for a in rule.actions if a[0] not in self.hub.devices]
            out.append({**self._rule_json(rule), "healthy": not missing, "missingDevices": missing})
        return {"rules": out, "count": len(out)}

    # ---- custom-engine rules (rule_engine.py follows upstream) ----

    async def _t_get_custom_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_custom_rule: libraries/mcp-custom-rules-lib.groovy
        toolGetRule, or toolListRules without a ruleId.
        """
        if args.get("detailed") is True and args.get("ruleId") is None:
            raise invalid(
                "detailed=true requires a ruleId (it returns per-rule diagnostics). Omit "
                "detailed to list all rules."
            )
        if args.get("ruleId") in (None, ""):
            return self.engine.list_rules()
        return self.engine.rule_data(self.engine.rule(args["ruleId"]))

    async def _t_create_custom_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_create_custom_rule: libraries/mcp-custom-rules-lib.groovy toolCreateRule."""
        return self.engine.create(args)

    async def _t_update_custom_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_update_custom_rule: libraries/mcp-custom-rules-lib.groovy toolUpdateRule."""
        return self.engine.update(args)

    async def _t_delete_custom_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_delete_custom_rule: libraries/mcp-custom-rules-lib.groovy toolDeleteRule."""
        return self.engine.delete(args)

    async def _t_test_custom_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_test_custom_rule: libraries/mcp-custom-rules-lib.groovy toolTestRule."""
        rule = self.engine.rule(args["ruleId"])
        return {"ruleId": rule.id, "wouldRun": rule.enabled, "actions": rule.actions}

    async def _t_export_custom_rule(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_export_custom_rule: libraries/mcp-custom-rules-lib.groovy toolExportRule."""
        rule = self.engine.rule(args["ruleId"])
        return {"exportVersion": 1, "rule": self.engine.rule_data(rule)}

    # ---- variables ----

    def _variable(self, name: Any) -> Variable:
        variable = self.hub.variables.get(str(name))
        if variable is None:
            raise invalid(f"Variable not found: {name}")
        return variable

    async def _t_list_variables(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_variables: libraries/mcp-variables-lib.groovy toolListVariables."""
        items = [
            {"name": v.name, "type": v.type, "value": v.value} for v in self.hub.variables.values()
        ]
        return {"variables": items, "count": len(items)}

    async def _t_get_variable(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_variable: libraries/mcp-variables-lib.groovy toolGetVariable."""
        v = self._variable(args["name"])
        return {"name": v.name, "type": v.type, "value": v.value}

    async def _t_set_variable(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_set_variable: libraries/mcp-variables-lib.groovy toolSetVariable."""
        v = self._variable(args["name"])
        old = v.value
        self.hub.set_variable(v.name, args["value"])
        return {"success": True, "name": v.name, "previousValue": old, "value": v.value}

    async def _t_create_variable(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_create_variable: libraries/mcp-variables-lib.groovy toolCreateVariable."""
        name = str(args["name"])
        if name in self.hub.variables:
            return {"success": False, "error": f"Variable '{name}' exists", "note": ""}
        self.hub.variables[name] = Variable(name, str(args["type"]), args.get("value"))
        return {"success": True, "name": name}

    async def _t_delete_variable(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_delete_variable: libraries/mcp-variables-lib.groovy toolDeleteHubVariable."""
        v = self._variable(args["name"])
        del self.hub.variables[v.name]
        return {"success": True, "name": v.name}

    async def _t_list_variable_changes(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_variable_changes: libraries/mcp-variables-lib.groovy toolGetVariableHistory."""
        limit = _int(args, "limit", 50, low=1)
        changes = [
            c
            for c in reversed(self.hub.variable_changes)
            if not args.get("name") or c["name"] == args["name"]
        ]
        return {"changes": changes[:limit], "count": len(changes[:limit])}

    # ---- hub ----

    async def _t_get_info(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-system-lib.groovy toolGetHubInfo: one flat map.

        zigbeeId is whatever `location.hub.zigbeeId` gives: null on some hubs, the literal
        "unavailable" when reading it throws. Health values are the strings the hub's internal
        endpoints return.
        """
        hub = self.hub
        now = hub.now()
        info: dict[str, Any] = {
            "temperatureScale": hub.temperature_scale,
            "model": "C-8 Pro",
            "firmwareVersion": FIRMWARE,
            "zigbeeChannel": 20,
            "zwaveVersion": "7.18",
            "zigbeeId": hub.zigbee_id,
            "type": "PHYSICAL",
            "uptimeSeconds": int((now - hub.boot_time).total_seconds()),
            "freeMemoryKB": str(412_336 - len(hub.devices) * 12),
            "internalTempCelsius": "41.3",
            "databaseSizeKB": str(38 + len(hub.devices) // 10),
            "mcpServerVersion": SERVER_VERSION,
            "mcpDeviceCount": sum(1 for d in hub.devices.values() if d.selected),
            "mcpRuleCount": len(hub.custom_rules),
            "mcpLogEntries": len(hub.debug_logs),
            "mcpCapturedStates": 0,
            "lastBackupEpoch": epoch_ms(hub.last_backup) if hub.last_backup else None,
            "hubSecurityConfigured": False,
            "readEnabled": True,
            "writeEnabled": True,
            "customRuleEngineEnabled": self.engine.enabled,
            "developerModeEnabled": False,
        }
        uptime = info["uptimeSeconds"]
        info["uptimeFormatted"] = (
            f"{uptime // 86400}d {uptime % 86400 // 3600}h {uptime % 3600 // 60}m"
        )
        # While the Read master is on (the default): the hub's personal data.
        info.update(
            {
                "name": hub.hub_name,
                "localIP": "127.0.0.1",
                "timeZone": str(hub.tz),
                "latitude": 41.88,
                "longitude": -87.63,
                "zipCode": "60601",
                "hubData": None,
            }
        )
        return info

    async def _t_create_backup(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_create_backup: libraries/mcp-item-backups-lib.groovy toolCreateHubBackup."""
        if args.get("confirm") is not True:
            raise invalid("hub_create_backup requires confirm=true")
        hub = self.hub
        hub.last_backup = hub.now()
        name = f"{hub.hub_name.replace(' ', '_')}_{hub.last_backup:%Y-%m-%d~%H%M}.lzf"
        return {"success": True, "backupFile": name, "timestamp": epoch_ms(hub.last_backup)}

    async def _t_get_tool_guide(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_tool_guide: libraries/mcp-discovery-lib.groovy toolGetToolGuide."""
        sections = {
            "best_practices": (
                "Read before changing anything: confirm ambiguous device names with the user, "
                "batch multi-device commands, never retry a write blindly. Acknowledge by "
                f"passing bestPracticeKey='{BEST_PRACTICE_KEY}' on every write tool call."
            ),
            "devices": "hub_list_devices pages 50 at a time; use changedSince to poll changes.",
            "gateways": "Call a gateway with no arguments for its catalog, then {tool, args}.",
            "safety": "Destructive tools need confirm=true and a hub backup under 24 hours old.",
        }
        section = _str(args, "section")
        if section is None:
            return {"sections": list(sections), "coreTools": list(CORE_TOOLS)}
        if section not in sections:
            raise invalid(f"Unknown section: {section}. Available: {', '.join(sections)}")
        return {"section": section, "content": sections[section]}

    async def _t_search_tools(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_search_tools: libraries/mcp-discovery-lib.groovy toolSearchTools."""
        query = _str(args, "query", required=True) or ""
        results = search_tools(query, _int(args, "limit", 8, low=1, high=50))
        return {"query": query, "results": results, "count": len(results)}

    async def _t_report_issue(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_report_issue: libraries/mcp-debug-logging-lib.groovy toolGenerateBugReport."""
        report = f"## {args['title']}\n\n{args.get('details', '')}\n\nServer {SERVER_VERSION}"
        return {"report": report, "instructions": "Paste this into a new GitHub issue."}

    async def _t_get_logs(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_logs: libraries/mcp-diagnostics-lib.groovy toolGetHubLogs."""
        limit = _int(args, "limit", 100, low=1, high=500)
        entries = []
        devices = (
            [self.device(args["deviceId"])] if args.get("deviceId") else self.hub.visible_devices()
        )
        for d in devices:
            entries += [(e.date, d, e) for e in list(d.events)[-5:]]
        entries.sort(key=lambda item: item[0], reverse=True)
        logs = [
            {
                "time": event_time(w, self.hub.tz),
                "level": "info",
                "source": "dev",
                "id": str(d.id),
                "name": d.display,
                "message": e.description,
            }
            for w, d, e in entries[:limit]
        ]
        return {"logs": logs, "count": len(logs)}

    async def _t_get_metrics(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_metrics: libraries/mcp-diagnostics-lib.groovy toolGetHubPerformance."""
        return {
            "cpuLoad5m": 0.42,
            "freeMemoryKB": 412_000,
            "databaseSizeKB": 40,
            "devices": len(self.hub.devices),
        }

    async def _t_list_files(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_files: libraries/mcp-files-lib.groovy toolListFiles."""
        text = (_str(args, "filter") or "").lower()
        files = [
            {"name": n, "size": len(c.encode()), "date": epoch_ms(self.hub.now())}
            for n, c in sorted(self.hub.files.items())
            if text in n.lower()
        ]
        return {"files": files, "count": len(files)}

    def _file_name(self, args: dict[str, Any]) -> str:
        name = str(args["fileName"])
        if not _FILE_NAME.match(name):
            raise invalid(f"Invalid file name '{name}': letters, digits, . _ - only")
        return name

    async def _t_read_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_read_file: libraries/mcp-files-lib.groovy toolReadFile."""
        name = self._file_name(args)
        if name not in self.hub.files:
            return {
                "success": False,
                "error": f"File not found: {name}",
                "note": "See hub_list_files.",
            }
        return {"success": True, "fileName": name, "content": self.hub.files[name]}

    async def _t_write_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_write_file: libraries/mcp-files-lib.groovy toolWriteFile."""
        name = self._file_name(args)
        backup = None
        if name in self.hub.files:
            stem, _, ext = name.rpartition(".")
            backup = f"{stem or name}_backup_{int(time.time())}.{ext}"
            self.hub.files[backup] = self.hub.files[name]
        self.hub.files[name] = str(args["content"])
        return {"success": True, "fileName": name, "backupFile": backup}

    async def _t_delete_file(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_delete_file: libraries/mcp-files-lib.groovy toolDeleteFile."""
        name = self._file_name(args)
        if name not in self.hub.files:
            return {"success": False, "error": f"File not found: {name}", "note": ""}
        del self.hub.files[name]
        return {"success": True, "fileName": name}

    async def _t_list_apps(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_apps: libraries/mcp-code-management-lib.groovy toolListHubApps."""
        apps = [
            {"id": str(r.id), "name": r.name, "type": r.app_type, "disabled": r.disabled}
            for r in self.hub.rules.values()
        ]
        apps.append(
            {"id": self.app_id, "name": "MCP Rule Server", "type": "user", "disabled": False}
        )
        return {"apps": apps, "count": len(apps)}

    async def _t_list_drivers(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_drivers: libraries/mcp-code-management-lib.groovy toolListHubDrivers."""
        drivers = [
            {"id": str(200 + i), "namespace": ns, "name": n}
            for i, (ns, n) in enumerate(sorted(_CUSTOM_DRIVERS))
        ]
        return {"drivers": drivers, "count": len(drivers)}

    async def _t_list_dashboards(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_list_dashboards: libraries/mcp-dashboards-lib.groovy toolListDashboards."""
        return {"dashboards": [{"id": "1", "name": "Main", "type": "easy"}], "count": 1}

    async def _t_get_debug_logs(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_get_debug_logs: libraries/mcp-debug-logging-lib.groovy
        toolGetDebugLogs, or toolGetLoggingStatus with mode=status.
        """
        return {
            "entries": self.hub.debug_logs[-_int(args, "limit", 50, low=1) :],
            "logLevel": self.hub.log_level,
        }

    async def _t_set_log_level(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_set_log_level: libraries/mcp-debug-logging-lib.groovy toolSetLogLevel."""
        self.hub.log_level = str(args["level"])
        return {"success": True, "logLevel": self.hub.log_level}

    async def _t_delete_debug_logs(self, args: dict[str, Any]) -> dict[str, Any]:
        """hub_delete_debug_logs: libraries/mcp-debug-logging-lib.groovy toolClearDebugLogs."""
        count = len(self.hub.debug_logs)
        self.hub.debug_logs.clear()
        return {"success": True, "cleared": count}


def _num_eq(value: Any, expected: Any) -> bool:
    try:
        return float(value) == float(expected)
    except (TypeError, ValueError):
        return False
