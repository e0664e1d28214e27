"""The MCP app's legacy custom rule engine: rules that run actions on device and location events.

Follows upstream Hubitat-local-MCP-server:
- hubitat-mcp-server.groovy: the `enableCustomRuleEngine` setting (default OFF),
  getCustomEngineMode (full / readonly / off), executeTool's custom-engine gate,
  normalizeTrigger, validateTrigger, validateAction, findDevice (selected devices only);
- libraries/mcp-custom-rules-lib.groovy: toolListRules, toolGetRule, toolCreateRule,
  toolUpdateRule (read-only mode: only `enabled`), toolDeleteRule (confirm, backup file unless
  testRule);
- hubitat-mcp-rule.groovy: subscribeToTriggers, handleDeviceEvent, handleButtonEvent,
  handleModeEvent, handleHsmEvent, executeRule (the loop guard: `loopGuardMax` runs within
  `loopGuardWindowSec`, hub settings of 5..200 and 10..300, 30 and 60 by default
  (hubitat-mcp-server.groovy preferences); every run counts, mode and HSM runs too; tripping
  disables the rule, then notifyLoopGuard sends an `mcpLoopGuard` location event and a
  `deviceNotification` to every selected device that has the command), executeAction
  `http_request` (httpGet / httpPost with the static body, sent synchronously within the run:
  a rule's handlers run one at a time, so a slow answer holds up the rule's next event; the
  answer is parsed by the request's contentType, and any failure is only logged), getRuleData.

Existing rules keep firing while the engine setting is off (the app's settings page says so):
the setting only governs which tools may create, change or delete them.
"""

from __future__ import annotations

import asyncio
from collections import deque
from datetime import timedelta
import json
import logging
import re
from typing import TYPE_CHECKING, Any

import aiohttp

from ..base import INVALID_PARAMS, RpcFailure
from .hub import CustomRule, epoch_ms, hub_time

if TYPE_CHECKING:
    from .devices import Device, Event
    from .hub import Hub

_LOGGER = logging.getLogger(__name__)

BUTTON_ACTIONS = ("pushed", "held", "doubleTapped", "released")
MAX_DURATION = 7200
_TIME = re.compile(r"^([01]?[0-9]|2[0-3]):[0-5][0-9]$")
# Custom rule tools visible in read-only mode (engine off, Read master on).
READONLY_TOOLS = frozenset(
    {"hub_get_custom_rule", "hub_test_custom_rule", "hub_update_custom_rule"}
)
# getValidOperators.
VALID_OPERATORS = ("==", "!=", ">", "<", ">=", "<=", "equals", "not_equals")


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def _invalid(message: str) -> RpcFailure:
    """IllegalArgumentException: the server answers JSON-RPC -32602 with the message."""
    return RpcFailure(INVALID_PARAMS, message)


def _validate_time_trigger(trigger: dict[str, Any]) -> None:
    """validateTrigger's `time` case: HH:mm, sunrise or sunset."""
    if not trigger.get("time") and not trigger.get("sunrise") and not trigger.get("sunset"):
        raise _invalid(
            "time trigger requires time (HH:mm), sunrise, or sunset. Examples: "
            '{"type":"time","time":"08:30"}, {"type":"time","sunrise":true,"offset":30}'
        )
    if trigger.get("time") and not _TIME.match(str(trigger["time"])):
        raise _invalid(
            f"time trigger: Invalid time format '{trigger['time']}'. Expected format: "
            "HH:mm (e.g., 08:30, 23:45)"
        )


class RuleEngine:
    """The custom rules of one app and what they do when the hub's events fire."""

    def __init__(self, hub: Hub, *, enabled: bool = False) -> None:
        self.hub = hub
        # settings.enableCustomRuleEngine: defaultValue false (hubitat-mcp-server.groovy).
        self.enabled = enabled
        self.read_enabled = True  # settings.enableRead (the Read master, default ON)
        self.loop_guard_max = 30  # settings.loopGuardMax (range 5..200)
        self.loop_guard_window = 60  # settings.loopGuardWindowSec (range 10..300)
        # notifyLoopGuard's deviceNotification calls: (device id, message).
        self.notifications: list[tuple[int, str]] = []
        # http_request answers the hub could not parse by the request's contentType.
        self.parse_errors = 0
        # Each rule's handlers, run one at a time (an app instance is single-threaded).
        self._queues: dict[str, deque[tuple[Device | None, Event]]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}
        # What the rules' http_request actions sent: (url, method, body, HTTP status or None).
        self.requests: deque[tuple[str, str, str | None, int | None]] = deque(maxlen=1000)
        self.request_failures = 0
        self.reachable = True  # tests cut the hub's network path to HA with this
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        hub.event_listeners.append(self.on_event)

    # ---- settings and the tool gate ----

    def set_loop_guard(self, runs: int, seconds: int) -> None:
        """The app's Loop Guard settings, within their inputs' ranges (hubitat-mcp-server.groovy
        preferences: loopGuardMax range 5..200, loopGuardWindowSec range 10..300)."""
        if not (5 <= runs <= 200 and 10 <= seconds <= 300):
            raise ValueError("outside the settings' ranges (5..200 runs, 10..300 s)")
        self.loop_guard_max, self.loop_guard_window = runs, seconds

    def mode(self) -> str:
        """hubitat-mcp-server.groovy getCustomEngineMode."""
        if self.enabled:
            return "full"
        return "readonly" if self.read_enabled else "off"

    def gate(self, tool: str) -> None:
        """hubitat-mcp-server.groovy executeTool's custom-engine gate (hub_<verb>_custom_rule)."""
        mode = self.mode()
        if mode == "off":
            raise _invalid(
                f"{tool} is not available. 'Enable Custom Rule Engine' is OFF and the Read "
                "master is OFF. Turn on Custom Rule Engine to use the legacy custom-rule tools "
                "(hub_*_custom_rule), or use native Hubitat Rule Machine via "
                "hub_manage_native_rules_and_apps."
            )
        if mode == "readonly" and tool not in READONLY_TOOLS:
            raise _invalid(
                f"{tool} is not available in read-only mode. The Custom Rule Engine toggle is "
                "OFF. Turn it ON in MCP Rule Server settings to use create/delete/export/"
                "import/clone operations. NOTE: the custom MCP rule engine is legacy -- for new "
                "rule work prefer hub_manage_native_rules_and_apps."
            )

    # ---- tools (libraries/mcp-custom-rules-lib.groovy) ----

    def rule(self, ref: Any) -> CustomRule:
        """A custom rule by id, as libraries/mcp-custom-rules-lib.groovy toolGetRule finds it."""
        rule = self.hub.custom_rules.get(str(ref))
        if rule is None:
            raise _invalid(f"Rule not found: {ref}")
        return rule

    def rule_data(self, rule: CustomRule) -> dict[str, Any]:
        """hubitat-mcp-rule.groovy getRuleData (+ the source marker toolGetRule adds)."""
        tz = self.hub.tz
        return {
            "id": rule.id,
            "name": rule.name,
            "description": rule.description,
            "enabled": rule.enabled,
            "testRule": rule.test_rule,
            "triggers": rule.triggers,
            "conditions": rule.conditions,
            "conditionLogic": "all",
            "actions": rule.actions,
            "localVariables": {},
            "createdAt": epoch_ms(rule.created_at) if rule.created_at else None,
            "updatedAt": epoch_ms(rule.updated_at) if rule.updated_at else None,
            "lastTriggered": hub_time(rule.last_triggered, tz) if rule.last_triggered else None,
            "executionCount": rule.execution_count,
            "source": "mcp_custom_engine",
        }

    def list_rules(self) -> dict[str, Any]:
        """libraries/mcp-custom-rules-lib.groovy toolListRules: pages of at most 50, no total
        unless a cursor is asked for.
        """
        rules = [
            {
                "id": r.id,
                "name": r.name,
                "description": r.description,
                "enabled": r.enabled,
                "triggerCount": len(r.triggers),
                "conditionCount": len(r.conditions),
                "actionCount": len(r.actions),
                "lastTriggered": hub_time(r.last_triggered, self.hub.tz)
                if r.last_triggered
                else None,
                "executionCount": r.execution_count,
                "source": "mcp_custom_engine",
            }
            for r in self.hub.custom_rules.values()
        ]
        return {"rules": rules[:50], "count": len(rules[:50])}

    def create(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-custom-rules-lib.groovy toolCreateRule: validate, then add the child."""
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _invalid("Rule name is required")
        triggers = args.get("triggers")
        if not isinstance(triggers, list) or not triggers:
            raise _invalid("At least one trigger is required")
        actions = args.get("actions")
        if not isinstance(actions, list) or not actions:
            raise _invalid("At least one action is required")
        triggers = [self._normalized(t) for t in triggers]
        for trigger in triggers:
            self._validate_trigger(trigger)
        for action in actions:
            self._validate_action(action)
        rule_id = str(self.hub._new_id())  # child apps share the hub's app ids
        now = self.hub.now()
        rule = CustomRule(
            rule_id,
            name.strip(),
            args.get("enabled") is not False,
            triggers,
            list(actions),
            bool(args.get("testRule") or False),
            description=str(args.get("description") or ""),
            conditions=list(args.get("conditions") or []),
            created_at=now,
            updated_at=now,
        )
        self.hub.custom_rules[rule_id] = rule
        return {
            "success": True,
            "ruleId": rule_id,
            "message": f"Rule '{name}' created successfully",
            "diagnostics": {
                "storedTriggers": len(triggers),
                "storedActions": len(actions),
                "durationMs": 12,
            },
        }

    def update(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-custom-rules-lib.groovy toolUpdateRule; read-only mode: only `enabled`.

        Every argument but ruleId and enabled counts as structural there, the write key
        included (upstream compares the whole argument map).
        """
        rule = self.rule(args.get("ruleId"))
        if self.mode() == "readonly":
            structural = sorted(k for k in args if k not in ("enabled", "ruleId"))
            if structural:
                raise _invalid(
                    "In read-only mode (Custom Rule Engine toggle OFF), only the 'enabled' "
                    "field can be updated. Structural fields provided: "
                    f"{', '.join(structural)}. To modify rule structure (triggers/conditions/"
                    "actions), turn ON the Custom Rule Engine toggle in MCP server settings. "
                    "The custom rule engine is legacy -- for new rule structure work, use "
                    "hub_manage_rule_machine hub_set_rule instead."
                )
        triggers = args.get("triggers")
        if triggers is not None:
            triggers = [self._normalized(t) for t in triggers]
            for trigger in triggers:
                self._validate_trigger(trigger)
        for action in args.get("actions") or []:
            self._validate_action(action)
        if isinstance(args.get("name"), str):
            rule.name = args["name"].strip()
        if args.get("description") is not None:
            rule.description = str(args["description"])
        if triggers is not None:
            rule.triggers = triggers
        if args.get("actions") is not None:
            rule.actions = list(args["actions"])
        if args.get("conditions") is not None:
            rule.conditions = list(args["conditions"])
        if args.get("testRule") is not None:
            rule.test_rule = bool(args["testRule"])
        if args.get("enabled") is not None:
            rule.enabled = bool(args["enabled"])
        # updateRuleFromParent: the loop-guard window starts afresh.
        rule.recent_runs.clear()
        rule.updated_at = self.hub.now()
        return {
            "success": True,
            "ruleId": rule.id,
            "message": f"Rule '{rule.name}' updated successfully",
        }

    def delete(self, args: dict[str, Any]) -> dict[str, Any]:
        """libraries/mcp-custom-rules-lib.groovy toolDeleteRule: confirm first; a backup file
        unless testRule or skipBackupCheck.
        """
        if not args.get("confirm"):
            raise _invalid(
                "SAFETY CHECK FAILED: You must set confirm=true to delete a rule. This action "
                "is IRREVERSIBLE."
            )
        rule = self.rule(args.get("ruleId"))
        message = f"Rule '{rule.name}' deleted permanently."
        result: dict[str, Any] = {"success": True}
        if not args.get("skipBackupCheck") and not rule.test_rule:
            safe = re.sub(r"[^A-Za-z0-9]", "_", rule.name)[:30]
            backup = f"mcp_rule_backup_{safe}_{self.hub.now():%Y%m%d-%H%M%S}.json"
            self.hub.files[backup] = json.dumps({"exportVersion": "1.0", "rule": rule.name})
            result["backupFile"] = backup
            message += f" Backup saved to File Manager: {backup}"
        elif rule.test_rule:
            message += " (No backup - test rule)"
        del self.hub.custom_rules[rule.id]
        result["message"] = message
        return result

    # ---- validation (hubitat-mcp-server.groovy) ----

    @staticmethod
    def _normalized(trigger: Any) -> dict[str, Any]:
        """normalizeTrigger: sunrise/sunset shorthands become time triggers."""
        if not isinstance(trigger, dict):
            raise _invalid("Trigger type is required")
        out = dict(trigger)
        kind = out.get("type")
        if kind in ("sunrise", "sunset"):
            out["type"] = "time"
            out[kind] = True
        elif kind == "sun" and out.get("event") in ("sunrise", "sunset"):
            out["type"] = "time"
            out[out.pop("event")] = True
        return out

    def _validate_trigger(self, trigger: dict[str, Any]) -> None:
        """hubitat-mcp-server.groovy validateTrigger: one check per trigger type."""
        kind = trigger.get("type")
        if not kind:
            raise _invalid("Trigger type is required")
        if kind == "device_event":
            self._validate_device_event(trigger)
        elif kind == "button_event":
            self._validate_button_event(trigger)
        elif kind == "time":
            _validate_time_trigger(trigger)
        elif kind == "periodic":
            if trigger.get("interval") is None:
                raise _invalid("periodic trigger requires interval")
        elif kind not in ("mode_change", "hsm_change"):
            raise _invalid(f"Unknown trigger type: {kind}")

    def _validate_device_event(self, trigger: dict[str, Any]) -> None:
        """validateTrigger's `device_event` case: visible devices, attribute, operator and
        duration, matchMode for a deviceIds list."""
        if not trigger.get("deviceId") and not trigger.get("deviceIds"):
            raise _invalid("device_event trigger requires deviceId or deviceIds")
        if not trigger.get("attribute"):
            raise _invalid("device_event trigger requires attribute")
        if trigger.get("deviceId") and self.hub.visible(trigger["deviceId"]) is None:
            raise _invalid(f"Device not found: {trigger['deviceId']}")
        if trigger.get("deviceIds"):
            self._validate_device_ids(trigger)
        self._validate_operator(trigger.get("operator"), "device_event trigger")
        self._validate_duration(trigger.get("duration"), "device_event trigger")

    def _validate_device_ids(self, trigger: dict[str, Any]) -> None:
        ids = trigger["deviceIds"]
        if not isinstance(ids, list) or not ids:
            raise _invalid("device_event trigger deviceIds must be a non-empty list")
        for device_id in ids:
            if self.hub.visible(device_id) is None:
                raise _invalid(f"Device not found: {device_id}")
        match = trigger.get("matchMode")
        if match and match not in ("any", "all"):
            raise _invalid(f"device_event trigger matchMode must be 'any' or 'all' (got '{match}')")

    def _validate_button_event(self, trigger: dict[str, Any]) -> None:
        """validateTrigger's `button_event` case: a visible device and a known action."""
        if not trigger.get("deviceId"):
            raise _invalid("button_event trigger requires deviceId")
        if self.hub.visible(trigger["deviceId"]) is None:
            raise _invalid(f"Device not found: {trigger['deviceId']}")
        action = trigger.get("action")
        if action is not None and action not in BUTTON_ACTIONS:
            raise _invalid(
                f"button_event trigger: Invalid button action '{action}'. Valid actions: "
                f"{', '.join(BUTTON_ACTIONS)}"
            )

    @staticmethod
    def _validate_operator(operator: Any, context: str) -> None:
        if operator is not None and operator not in VALID_OPERATORS:
            raise _invalid(
                f"{context}: Invalid operator '{operator}'. Valid operators: "
                f"{', '.join(VALID_OPERATORS)}"
            )

    @staticmethod
    def _validate_duration(duration: Any, context: str) -> None:
        if duration is None:
            return
        try:
            seconds = int(duration)
        except (TypeError, ValueError):
            raise _invalid(f"{context}: Duration must be a valid number") from None
        if seconds < 0:
            raise _invalid(f"{context}: Duration cannot be negative")
        if seconds > MAX_DURATION:
            raise _invalid(
                f"{context}: Duration cannot exceed {MAX_DURATION} seconds (2 hours). "
                f"Provided: {seconds} seconds"
            )

    def _validate_action(self, action: Any) -> None:
        if not isinstance(action, dict) or not action.get("type"):
            raise _invalid("Action type is required")
        kind = action["type"]
        if kind == "http_request":
            url = action.get("url")
            if not url:
                raise _invalid("http_request action requires url")
            if not str(url).startswith(("http://", "https://")):
                raise _invalid("http_request: url must start with http:// or https://")
            method = action.get("method")
            if method and method not in ("GET", "POST"):
                raise _invalid("http_request: method must be GET or POST")
            if method == "POST" and not action.get("body"):
                raise _invalid("http_request: body is required for POST requests")
        elif kind == "device_command":
            if not action.get("deviceId"):
                raise _invalid("device_command action requires deviceId")
            if not action.get("command"):
                raise _invalid("device_command action requires command")
            device = self.hub.visible(action["deviceId"])
            if device is None:
                raise _invalid(f"Device not found: {action['deviceId']}")
            if action["command"] not in device.commands:
                raise _invalid(
                    f"Device {device.label} does not support command: {action['command']}"
                )
        elif kind == "log":
            if not action.get("message"):
                raise _invalid("log action requires message")
        elif kind not in ("stop", "comment", "cancel_delayed", "delay"):
            # The simulator runs what the integration and its tests use; upstream knows more
            # action types, and refuses every other one so.
            raise _invalid(f"Unknown action type: {kind}")

    # ---- running rules (hubitat-mcp-rule.groovy) ----

    def on_event(self, device: Device | None, event: Event) -> None:
        """The hub's event bus: each enabled rule subscribed to the event gets it, in order.

        Upstream: hubitat-mcp-rule.groovy subscribeToTriggers with handleDeviceEvent,
        handleButtonEvent, handleModeEvent and handleHsmEvent. Each rule handles its events one
        after the other (its http_request is synchronous), so they queue behind a slow answer.
        """
        for rule in list(self.hub.custom_rules.values()):
            if not rule.enabled:
                continue
            self._queues.setdefault(rule.id, deque()).append((device, event))
            worker = self._workers.get(rule.id)
            if worker is None or worker.done():
                task = asyncio.get_running_loop().create_task(self._work(rule.id))
                self._workers[rule.id] = task
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _work(self, rule_id: str) -> None:
        queue = self._queues.get(rule_id)
        while queue:
            device, event = queue.popleft()
            rule = self.hub.custom_rules.get(rule_id)
            if rule is None or not rule.enabled:  # `if (!settings.ruleEnabled) return`
                continue
            if device is None:
                trigger = self._location_trigger(rule, event)
            else:
                trigger = self._device_trigger(rule, device, event)
            if trigger is not None:
                await self._execute(rule)

    @staticmethod
    def _location_trigger(rule: CustomRule, event: Event) -> dict[str, Any] | None:
        """handleModeEvent / handleHsmEvent (toMode / status filters)."""
        for trigger in rule.triggers:
            kind = trigger.get("type")
            wanted = {"mode_change": "toMode", "hsm_change": "status"}.get(str(kind))
            subscribed = {"mode_change": "mode", "hsm_change": "hsmStatus"}.get(str(kind))
            if (
                wanted is not None
                and event.name == subscribed
                and (not trigger.get(wanted) or trigger[wanted] == event.value)
            ):
                return trigger
        return None

    def _device_trigger(
        self, rule: CustomRule, device: Device, event: Event
    ) -> dict[str, Any] | None:
        """handleDeviceEvent / handleButtonEvent: the first trigger the event matches.

        Only devices the app may see were subscribed (subscribeToTriggers via findDevice).
        """
        if self.hub.visible(device.id) is None:
            return None
        device_id = str(device.id)
        for trigger in rule.triggers:
            kind = trigger.get("type")
            if kind == "device_event" and trigger.get("attribute") == event.name:
                ids = trigger.get("deviceIds")
                matches = (
                    any(str(i) == device_id for i in ids)
                    if ids
                    else str(trigger.get("deviceId")) == device_id
                )
                wanted = trigger.get("value")
                if matches and (wanted is None or str(wanted) == event.value):
                    return trigger
            if (
                kind == "button_event"
                and str(trigger.get("deviceId")) == device_id
                and trigger.get("action") == event.name
                and (
                    trigger.get("buttonNumber") is None
                    or str(trigger["buttonNumber"]) == event.value
                )
            ):
                return trigger
        return None

    async def _execute(self, rule: CustomRule) -> None:
        """executeRule: the loop guard, then the actions."""
        now = self.hub.now()
        window = timedelta(seconds=self.loop_guard_window)
        runs = [t for t in rule.recent_runs if t > now - window]
        if len(runs) >= self.loop_guard_max:
            rule.enabled = False
            rule.recent_runs.clear()
            message = (
                f"Rule '{rule.name}' auto-disabled: {len(runs)} executions in "
                f"{self.loop_guard_window}s — possible infinite loop."
            )
            self._notify_loop_guard(rule, message)
            return
        runs.append(now)
        rule.recent_runs[:] = runs
        rule.last_triggered = now
        rule.execution_count += 1
        for action in rule.actions:
            if action.get("type") == "http_request":
                await self._send(action)
            elif action.get("type") == "device_command":
                device = self.hub.visible(action.get("deviceId"))
                if device is not None:
                    self.hub.run_command(device, str(action["command"]), [])
            elif action.get("type") == "stop":
                return

    def _notify_loop_guard(self, rule: CustomRule, message: str) -> None:
        """notifyLoopGuard: the location event, then deviceNotification on every selected
        device that has the command (parent.getSelectedDevices, dev.hasCommand)."""
        self.hub.location_event("mcpLoopGuard", rule.name, message)
        for device in self.hub.devices.values():
            if device.selected and "deviceNotification" in device.commands:
                self.notifications.append((device.id, message))

    async def _send(self, action: dict[str, Any]) -> None:
        """executeAction http_request: the static body (no variables), awaited within the run;
        httpPost parses the answer by the request's contentType; errors only logged."""
        url = str(action["url"])
        method = str(action.get("method") or "GET")
        body = action.get("body")
        status: int | None = None
        try:
            if not self.reachable:
                raise aiohttp.ClientConnectionError("Connect timed out")
            if self._session is None or self._session.closed:
                self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10))
            content_type = str(action.get("contentType") or "application/json")
            headers = {"Content-Type": content_type}
            data = str(body).encode() if body is not None and method == "POST" else None
            async with self._session.request(method, url, data=data, headers=headers) as resp:
                status = resp.status
                answer = await resp.read()
            if "json" in content_type and (
                "json" not in (resp.content_type or "") or not _is_json(answer)
            ):
                raise aiohttp.ContentTypeError(
                    resp.request_info, (), message=f"cannot parse the answer as {content_type}"
                )
        except (aiohttp.ClientError, TimeoutError) as err:
            if isinstance(err, aiohttp.ContentTypeError):
                self.parse_errors += 1
            self.request_failures += 1
            self.hub.debug_logs.append(
                {
                    "level": "error",
                    "message": f"Error executing HTTP {method} to {url.split('?')[0]}: {err}",
                }
            )
        self.requests.append((url, method, None if body is None else str(body), status))

    async def drain(self) -> None:
        """Wait for the requests rules have started (tests, shutdown).

        Simulator-only: waits for the http_request actions rules started.
        """
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """Simulator-only: cancels what rules still run, on app cleanup."""
        await self.drain()
        if self._session is not None:
            await self._session.close()
