"""The state of the simulated hub and the plain-Python hooks tests use to inspect and change it."""

from __future__ import annotations

import asyncio
import bisect
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone as fixed_zone, tzinfo
import random
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..base import SimClock
from .devices import (
    KINDS,
    ROOMS,
    VIRTUAL_KINDS,
    WEIGHTS,
    Attribute,
    Device,
    Event,
    Stage,
    build_device,
    effect_for,
)

# Button attributes report every press, even when the number repeats.
ALWAYS_EVENT = frozenset({"pushed", "held", "doubleTapped", "released"})
HSM_ARM = {"armAway": "armedAway", "armHome": "armedHome", "armNight": "armedNight"}
_ACTIVITY_CAP = 200_000


@dataclass
class Room:
    id: int
    name: str
    device_ids: list[int] = field(default_factory=list)


@dataclass
class Mode:
    id: int
    name: str
    icon: str | None = None


type RuleAction = tuple[int, str, list[Any]]
"""What a native rule does: (device id, command, parameters)."""


@dataclass
class Rule:
    """A native (Rule Machine, Room Lighting...) app instance the MCP app can run or pause."""

    id: int
    name: str
    app_type: str
    actions: list[RuleAction]
    paused: bool = False
    disabled: bool = False
    private_boolean: bool = True
    stopped: bool = False
    last_run: datetime | None = None
    run_count: int = 0


@dataclass
class CustomRule:
    id: str
    name: str
    enabled: bool
    triggers: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    test_rule: bool = False
    last_triggered: datetime | None = None
    description: str = ""
    conditions: list[dict[str, Any]] = field(default_factory=list)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    execution_count: int = 0
    # hubitat-mcp-rule.groovy atomicState.recentExecutions (the loop guard's window).
    recent_runs: list[datetime] = field(default_factory=list)


@dataclass
class Variable:
    name: str
    type: str
    value: Any


def hub_time(when: datetime, tz: tzinfo) -> str:
    """Second precision with Java's XXX offset (`Z` for UTC), as lastActivity is reported.

    Upstream: libraries/mcp-devices-lib.groovy formatLastActivity.
    """
    local = when.astimezone(tz)
    offset = local.strftime("%z")
    suffix = "Z" if offset == "+0000" else f"{offset[:3]}:{offset[3:]}"
    return local.strftime("%Y-%m-%dT%H:%M:%S") + suffix


def event_time(when: datetime, tz: tzinfo) -> str:
    """Millisecond precision with Java's Z offset (`-0600`, no colon), as event dates are.

    Hub platform model, no upstream function: the platform's event date as
    libraries/mcp-devices-lib.groovy toolGetDeviceEvents passes it on.
    """
    local = when.astimezone(tz)
    return f"{local.strftime('%Y-%m-%dT%H:%M:%S')}.{local.microsecond // 1000:03d}{local:%z}"


def epoch_ms(when: datetime) -> int:
    """Milliseconds since the epoch, the unit of libraries/mcp-devices-lib.groovy _parseSinceArg and
    the platform's dates.
    """
    return int(when.timestamp() * 1000)


class Hub:
    """Devices, rooms, modes, HSM, rules and variables of one hub, driven by a SimClock."""

    def __init__(
        self,
        clock: SimClock,
        *,
        devices: int = 40,
        seed: int = 1,
        hub_id: str | None = None,
        hub_name: str = "Home Hub",
        command_delay: float | None = 0.1,
        timezone: str = "America/Chicago",
        hidden_devices: int = 2,
        backup_age_hours: float | None = 3.0,
        realistic_devices: bool = False,
    ) -> None:
        self.clock = clock
        # Devices with everything real drivers report (2-4 KB each in detailed listings).
        self.realistic_devices = realistic_devices
        self.rng = random.Random(seed)
        self.seed = seed
        self.hub_name = hub_name
        self.hub_id = hub_id or "%08x-%04x-4%03x-a%03x-%012x" % (  # noqa: UP031
            self.rng.getrandbits(32),
            self.rng.getrandbits(16),
            self.rng.getrandbits(12),
            self.rng.getrandbits(12),
            self.rng.getrandbits(48),
        )
        # location.hub.zigbeeId: tests may set None or "unavailable" (hubs that do not give it).
        self.zigbee_id: str | None = self.hub_id
        self.temperature_scale = "F"
        # Failure switches, each as upstream fails (all off by default, as on a hub with Hub
        # Security off, the app's default, and Rule Machine answering):
        # Hub Security on without credentials in the app (hubitat-mcp-server.groovy
        # getHubSecurityCookie gives none): the hub's internal endpoints refuse the app, so
        # location events fail (mcp-devices-lib.groovy toolGetDeviceHistory) and rules have
        # status "unknown" (mcp-native-rules-lib.groovy _rmAnnotateRuleStatus).
        self.hub_security_blocks = False
        # RMUtils.getRuleList throws for 4.x and 5.x (mcp-native-rules-lib.groovy
        # toolListRmRules answers success: false).
        self.rm_fails = False
        # Devices whose eventsSince throws (mcp-devices-lib.groovy toolGetDeviceHistory,
        # device branch: success: false).
        self.history_fails: set[int] = set()
        # Rules whose /hub2/appsList node lacks its name or data.disabled: status "unknown"
        # for that rule alone (mcp-native-rules-lib.groovy _rmAnnotateRuleStatus).
        self.rule_nodes_incomplete: set[int] = set()
        # Tools (leaf names) that throw an exception their own code does not catch, with its
        # message: hubitat-mcp-server.groovy handleToolsCallLegacy answers "Tool error: …".
        self.tools_throw: dict[str, str] = {}
        self.mac = ":".join(f"{self.rng.getrandbits(8):02X}" for _ in range(2))
        self.mac = "34:E1:D1:80:" + self.mac
        self.command_delay = command_delay
        self.tz: tzinfo
        try:
            self.tz = ZoneInfo(timezone)
        except ZoneInfoNotFoundError:
            # No tz database on this machine: a fixed offset keeps the awkward format.
            self.tz = UTC if timezone == "UTC" else fixed_zone(timedelta(hours=-6))
        self.devices: dict[int, Device] = {}
        self.rooms: dict[int, Room] = {}
        self.modes = [Mode(1, "Day"), Mode(2, "Evening"), Mode(3, "Night"), Mode(4, "Away")]
        self.current_mode = 1
        self.hsm_status: str | None = "disarmed"
        self.hsm_alert: str | None = None
        self.location_events: deque[Event] = deque(maxlen=1000)
        self.rules: dict[int, Rule] = {}
        self.custom_rules: dict[str, CustomRule] = {}
        self.variables: dict[str, Variable] = {}
        self.variable_changes: deque[dict[str, Any]] = deque(maxlen=200)
        # Apps subscribed to every event (the custom rule engine): (device or None, event).
        self.event_listeners: list[Callable[[Device | None, Event], None]] = []
        self.files: dict[str, str] = {}
        self.admin_calls: list[tuple[str, dict[str, Any]]] = []
        self.log_level = "info"
        self.debug_logs: list[dict[str, Any]] = []
        now = self.now()
        self.last_backup: datetime | None = (
            None if backup_age_hours is None else now - timedelta(hours=backup_age_hours)
        )
        self.boot_time = now - timedelta(days=6, hours=3)
        self.mcp_requests = 0
        self.mcp_tool_calls = 0
        self.writes_in_flight = 0
        self.blocking_waits = 0  # attribute waits currently blocking a request
        self.write_hold: asyncio.Event | None = None  # tests hold writes open with this
        # Tests hold a write's answer with this after the write took effect on the hub: a
        # slow link or a busy app delivers it late, and polls can run in between.
        self.answer_hold: asyncio.Event | None = None
        self.answers_held = 0
        # (epoch ms, device id) per device event, sorted: changedSince costs O(changed).
        self._activity: list[tuple[int, int]] = []
        self._activity_horizon = 0
        self._pending: list[tuple[float, int, int, dict[str, Any]]] = []
        self._pending_seq = 0
        self._change = asyncio.Event()
        self._next_id = 3 + self.rng.randint(0, 6)
        self._next_room = 1
        self._populate(devices, hidden_devices)

    # ---- time ----

    def now(self) -> datetime:
        """Clock time truncated to milliseconds (the hub's resolution).

        Hub platform model, no upstream function: the hub's clock.
        """
        now = self.clock.now()
        return now.replace(microsecond=now.microsecond // 1000 * 1000)

    # ---- population ----

    def _new_id(self) -> int:
        device_id = self._next_id
        # Real hubs show gaps where devices were removed.
        self._next_id += 1 if self.rng.random() < 0.85 else self.rng.randint(2, 5)
        return device_id

    def add_room(self, name: str) -> Room:
        """Hub platform model, no upstream function: a room (the app's toolCreateRoom in
        libraries/mcp-rooms-lib.groovy ends here).
        """
        room = Room(self._next_room, name)
        self._next_room += 1
        self.rooms[room.id] = room
        return room

    def _populate(self, count: int, hidden: int) -> None:
        """A generated hub: rooms, `count` selected devices and `hidden` unselected ones, their
        events, rules, hub variables and files. The seeded RNG is drawn in a fixed order."""
        now = self.now()
        room_count = max(3, min(len(ROOMS), count // 4))
        rooms = [self.add_room(name) for name in ROOMS[:room_count]]
        labels: set[str] = set()
        for index, kind_key in enumerate(self._device_kinds(count, hidden)):
            room = self._pick_room(kind_key, rooms)
            base = f"{room.name} {KINDS[kind_key].noun}" if room else KINDS[kind_key].noun
            label, n = base, 2
            while label in labels:
                label, n = f"{base} {n}", n + 1
            labels.add(label)
            # Drawn before the id, which draws too.
            when = self._last_seen(now, battery="Battery" in KINDS[kind_key].capabilities)
            device = build_device(
                kind_key,
                self._new_id(),
                label,
                self.rng,
                room_id=room.id if room else None,
                when=when,
                realistic=self.realistic_devices,
            )
            device.selected = index < count
            if index == count // 2 and count >= 20:
                # A device that was paired but never reported anything.
                for attr in device.attributes.values():
                    attr.value = attr.date = None
                device.last_activity = None
            self._install(device, room)
        if count >= 20:
            self._add_quirks([d for d in self.devices.values() if d.selected])
        self._populate_rules()
        self.variables = {
            "awayTimeout": Variable("awayTimeout", "integer", 30),
            "guestMode": Variable("guestMode", "boolean", False),
            "houseStatus": Variable("houseStatus", "string", "normal"),
        }
        self.files = {
            "notes.txt": "Hub notes\n",
            "mcp_rule_backup_porch_20261101.json": '{"name": "Porch lights"}',
        }

    def _device_kinds(self, count: int, hidden: int) -> list[str]:
        """Every kind once, then weighted draws; the hidden devices come last."""
        kinds = list(WEIGHTS)[:count]
        kinds += self.rng.choices(
            list(WEIGHTS), weights=list(WEIGHTS.values()), k=count - len(kinds)
        )
        if count >= 20:
            kinds[-2:] = ["switch", "switch"]  # become the components of a power strip
        # A few devices exist on the hub but were not selected in the MCP app.
        kinds += [("switch", "motion")[i % 2] for i in range(hidden)]
        return kinds

    def _pick_room(self, kind_key: str, rooms: list[Room]) -> Room | None:
        if kind_key == "garage" and any(r.name == "Garage" for r in rooms):
            return next(r for r in rooms if r.name == "Garage")
        if kind_key == "presence" or self.rng.random() < 0.06:
            return None  # phones and some forgotten devices sit in no room
        return self.rng.choice(rooms)

    def _last_seen(self, now: datetime, *, battery: bool) -> datetime:
        """A last activity minutes to days ago (weeks for a device gone silent), whole ms.

        Hub platform model, no upstream function: lastActivity is the last message the hub had
        from the device. A battery device sends its battery report at least daily, so it
        checks in within a day unless it went silent; a mains device speaks when it changes.
        """
        age = timedelta(seconds=self.rng.uniform(60, 3 * 86400))
        if self.rng.random() < 0.08:
            age = timedelta(days=self.rng.uniform(10, 40))  # a device gone silent
        elif battery:
            age %= timedelta(days=1)
        when = now - age
        return when.replace(microsecond=when.microsecond // 1000 * 1000)

    def _install(self, device: Device, room: Room | None) -> None:
        """Add a generated device to the hub and its room, with its current values as events."""
        self.devices[device.id] = device
        if room:
            room.device_ids.append(device.id)
        for attr in device.attributes.values():
            if attr.value is not None and attr.date is not None:
                self._store_event(device, attr, attr.value, attr.date, True)

    def _add_quirks(self, selected: list[Device]) -> None:
        """What real hubs accumulate: components, a disabled device, no label, twin labels."""
        outlets = [d for d in selected if d.kind == "outlet"]
        switches = [d for d in selected if d.kind == "switch"]
        if outlets and len(switches) >= 2:
            parent = outlets[0]
            for number, child in enumerate(switches[-2:], start=1):
                # Component children of a power strip: same room, the parent's name prefix.
                child.parent_id = parent.id
                child.name = child.driver = "Generic Component Switch"
                child.label = f"{parent.label} Outlet {number}"
                self.move_device(child, self.room_of(parent))

        def of(kind: str) -> list[Device]:
            return [d for d in selected if d.kind == kind and d.parent_id is None]

        bulbs, dimmers, colour = of("ct_light"), of("dimmer"), of("color_light")
        if bulbs:
            bulbs[0].disabled = True
        if dimmers:
            dimmers[0].label = ""  # never labelled: the hub shows the driver name instead
        if colour and len(bulbs) > 1:
            colour[0].label = bulbs[1].label = "Lamp"

    def _populate_rules(self) -> None:
        lights = [d for d in self.devices.values() if d.selected and "Switch" in d.capabilities]
        locks = [d for d in self.devices.values() if d.selected and d.kind == "lock"]
        goodnight: list[RuleAction] = [(d.id, "off", []) for d in lights[:6]]
        goodnight += [(d.id, "lock", []) for d in locks]
        welcome: list[RuleAction] = [(d.id, "on", []) for d in lights[:2]]
        for rule in (
            Rule(101, "Goodnight", "Rule-5.1", goodnight),
            Rule(102, "Welcome Home", "Rule-5.1", welcome),
            Rule(103, "Hallway Motion Lighting", "Room Lights", welcome[:1]),
            Rule(104, "Vacation Lights", "Rule-5.1", [], paused=True),
        ):
            self.rules[rule.id] = rule
        self.custom_rules["1"] = CustomRule(
            "1",
            "Porch light at sunset",
            True,
            [{"type": "sunset", "offset": 0}],
            [{"type": "device_command", "deviceId": str(welcome[0][0]) if welcome else "0"}],
        )

    # ---- events ----

    def _store_event(
        self, device: Device, attr: Attribute, value: Any, when: datetime, changed: bool
    ) -> Event:
        unit = attr.unit
        text = f"{device.display} {attr.name} is {value}{unit or ''}"
        event = Event(attr.name, str(value), unit, text, when, changed)
        device.events.append(event)
        self._heard(device, when)
        return event

    def _heard(self, device: Device, when: datetime) -> None:
        """The hub had a message from the device: its lastActivity (what
        libraries/mcp-devices-lib.groovy safeLastActivity reads, `device.getLastActivity()`)
        and the index `changedSince` walks.

        Hub platform model, no upstream function: any message counts, a report that repeats
        the value as much as one that changes it.
        """
        device.last_activity = when
        entry = (epoch_ms(when), device.id)
        if not self._activity or entry >= self._activity[-1]:
            self._activity.append(entry)
        else:
            bisect.insort(self._activity, entry)
        if len(self._activity) > _ACTIVITY_CAP:
            cut = len(self._activity) // 2
            self._activity_horizon = self._activity[cut][0]
            del self._activity[:cut]

    def set_attribute(self, device_id: int, name: str, value: Any) -> Event | None:
        """Something happened at the device (a person, a sensor, a command taking effect).

        Like the hub, a report that does not change the value makes no event, except buttons;
        the hub still heard the device (a thermostat answering a setpoint it already had), so
        its lastActivity is renewed all the same.

        Hub platform model, no upstream function: a device event.
        """
        device = self.devices[device_id]
        attr = device.attributes.get(name)
        if attr is None:
            dtype = "NUMBER" if isinstance(value, int | float) else "STRING"
            attr = device.attributes[name] = Attribute(name, dtype, None)
        changed = attr.value != value
        when = self.now()
        if not changed and name not in ALWAYS_EVENT:
            self._heard(device, when)
            return None
        attr.value, attr.date = value, when
        event = self._store_event(device, attr, value, when, True)
        self.notify()
        for listener in self.event_listeners:
            listener(device, event)
        return event

    def location_event(self, name: str, value: Any, description: str) -> Event:
        """Hub platform model, no upstream function: a location event (mode, hsmStatus, hsmAlert)
        that subscribed apps receive.
        """
        event = Event(name, str(value), None, description, self.now(), True)
        self.location_events.append(event)
        self.notify()
        for listener in self.event_listeners:
            listener(None, event)
        return event

    def notify(self) -> None:
        """Wake blocking attribute waits.

        Simulator-only: wakes the waits of libraries/mcp-devices-lib.groovy toolPollUntilAttribute.
        """
        change, self._change = self._change, asyncio.Event()
        change.set()

    async def wait_change(self, seconds: float) -> None:
        """Wait until something changes or `seconds` pass (no error when nothing changed).

        Simulator-only: the waiting of libraries/mcp-devices-lib.groovy toolPollUntilAttribute.
        """
        change = self._change
        try:
            await asyncio.wait_for(change.wait(), max(seconds, 0))
        except TimeoutError:
            return

    def changed_since(self, since_ms: int) -> list[Device]:
        """Devices with activity at or after `since_ms`, in id order; cost ~ changes.

        libraries/mcp-devices-lib.groovy toolListDevices: `la.time >= changedSinceDate.time`.
        """
        if since_ms < self._activity_horizon:
            ids = {d.id for d in self.devices.values()}
        else:
            start = bisect.bisect_left(self._activity, (since_ms, -1))
            ids = {device_id for _, device_id in self._activity[start:]}
        out = []
        for device_id in sorted(ids):
            device = self.devices.get(device_id)
            if device and device.last_activity and epoch_ms(device.last_activity) >= since_ms:
                out.append(device)
        return out

    # ---- commands ----

    def run_command(self, device: Device, command: str, params: list[Any]) -> None:
        """Start a command; it takes effect after the command delay (raises on driver errors).

        Hub platform model, no upstream function: the driver runs a command
        libraries/mcp-devices-lib.groovy toolSendCommand sends.
        """
        if device.broken:
            raise RuntimeError(f"{device.display} did not respond (driver error)")
        stages = effect_for(device, command)(device, params)
        self.schedule(device.id, stages)

    def schedule(self, device_id: int, stages: list[Stage]) -> None:
        """Hub platform model, no upstream function: a command stage that takes effect later
        (runIn).
        """
        delay = self.command_delay
        for factor, changes in stages:
            if delay is None:
                self._pending_seq += 1
                self._pending.append((factor, self._pending_seq, device_id, changes))
            elif delay == 0:
                self._apply(device_id, changes)
            else:
                asyncio.get_running_loop().call_later(
                    delay * factor, self._apply, device_id, changes
                )

    def _apply(self, device_id: int, changes: dict[str, Any]) -> None:
        if device_id not in self.devices:
            return  # removed while the command travelled
        for name, value in changes.items():
            self.set_attribute(device_id, name, value)

    def apply_pending(self) -> int:
        """With command_delay=None: let every queued command stage take effect now, in order.

        Test hook, no upstream function: the queued command stages take effect.
        """
        pending, self._pending = sorted(self._pending), []
        for _, _, device_id, changes in pending:
            if device_id < 0:
                self._apply_location(changes)
            else:
                self._apply(device_id, changes)
        return len(pending)

    def _apply_location(self, changes: dict[str, Any]) -> None:
        if "hsmStatus" in changes:
            self.set_hsm_status(changes["hsmStatus"])

    # ---- location ----

    def mode_by(self, ref: str) -> Mode | None:
        """A location mode by name or id, as libraries/mcp-system-lib.groovy toolManageMode looks it
        up.
        """
        ref = str(ref).strip().lower()
        return next((m for m in self.modes if str(m.id) == ref or m.name.lower() == ref), None)

    def set_mode(self, name: str) -> None:
        """Hub platform model, no upstream function: the location mode changes
        (libraries/mcp-system-lib.groovy toolManageMode ends here).
        """
        mode = self.mode_by(name)
        if mode is None:
            raise KeyError(name)
        if mode.id != self.current_mode:
            self.current_mode = mode.id
            self.location_event("mode", mode.name, f"Mode changed to {mode.name}")

    @property
    def mode_name(self) -> str:
        """Hub platform model, no upstream function: the current location mode."""
        return next(m.name for m in self.modes if m.id == self.current_mode)

    def set_hsm_status(self, status: str) -> None:
        """Hub platform model, no upstream function: HSM's status changes and is sent as an
        hsmStatus location event.
        """
        if status != self.hsm_status:
            self.hsm_status = status
            if status in ("disarmed", "allDisarmed") and self.hsm_alert not in (None, "cancel"):
                # Disarming cancels the alert: location.hsmAlert keeps "cancel" as the last one.
                self.hsm_alert = "cancel"
                self.location_event("hsmAlert", "cancel", "HSM alert: cancel")
            self.location_event("hsmStatus", status, f"HSM status is {status}")

    def arm_hsm(self, command: str) -> None:
        """Arming passes through arming* (exit delay) before armed*; all asynchronous.

        Hub platform model, no upstream function: HSM arming (libraries/mcp-system-lib.groovy
        toolSetHsm sends the arm command).
        """
        if command == "disarm":
            stages: list[Stage] = [(1.0, {"hsmStatus": "disarmed"})]
        else:
            target = HSM_ARM[command]
            stages = [(1.0, {"hsmStatus": target.replace("armed", "arming")})]
            stages.append((4.0, {"hsmStatus": target}))
        delay = self.command_delay
        for factor, changes in stages:
            if delay is None:
                self._pending_seq += 1
                self._pending.append((factor, self._pending_seq, -1, changes))
            elif delay == 0:
                self._apply_location(changes)
            else:
                asyncio.get_running_loop().call_later(delay * factor, self._apply_location, changes)

    def trigger_hsm_alert(self, alert: str) -> None:
        """An intrusion / water / smoke alert raised by HSM.

        Test hook, no upstream function: an alert HSM raises.
        """
        self.hsm_alert = alert
        self.location_event("hsmAlert", alert, f"HSM alert: {alert}")

    def set_variable(self, name: str, value: Any) -> None:
        """Hub platform model, no upstream function: a hub variable changes
        (libraries/mcp-variables-lib.groovy toolSetVariable ends here).
        """
        variable = self.variables[name]
        old, variable.value = variable.value, value
        self.variable_changes.append(
            {"name": name, "oldValue": old, "value": value, "time": epoch_ms(self.now())}
        )
        self.location_event(f"variable:{name}", value, f"Variable {name} set to {value}")

    # ---- devices ----

    def visible(self, device_id: Any) -> Device | None:
        """The device if the MCP app may see it (selected, or its own child device).

        Upstream: hubitat-mcp-server.groovy findDevice (selected devices and the app's own
        children).
        """
        try:
            key = int(str(device_id).strip())
        except ValueError:
            return None
        device = self.devices.get(key)
        if device is None or not (device.selected or device.mcp_managed):
            return None
        return device

    def visible_devices(self) -> list[Device]:
        """Upstream: hubitat-mcp-server.groovy getSelectedDevices plus the app's child devices
        (getChildDevices, as findDevice searches).
        """
        return [d for d in self.devices.values() if d.selected or d.mcp_managed]

    def room_of(self, device: Device) -> Room | None:
        """Hub platform model, no upstream function: a device's room."""
        return self.rooms.get(device.room_id) if device.room_id is not None else None

    def room_by(self, ref: str) -> Room | None:
        """A room by name or id, as libraries/mcp-devices-lib.groovy toolUpdateDevice resolves
        `room`.
        """
        ref = str(ref).strip().lower()
        return next(
            (r for r in self.rooms.values() if str(r.id) == ref or r.name.lower() == ref), None
        )

    def move_device(self, device: Device, room: Room | None) -> None:
        """Hub platform model, no upstream function: a device moves to a room (or none)."""
        old = self.room_of(device)
        if old:
            old.device_ids.remove(device.id)
        device.room_id = room.id if room else None
        if room:
            room.device_ids.append(device.id)

    def pair_device(
        self,
        kind: str,
        label: str,
        room: str | None = None,
        *,
        selected: bool = True,
    ) -> Device:
        """A new device joins the hub (selected=True: the owner also adds it to the MCP app).

        Test hook, no upstream function: a device paired on the hub.
        """
        target = self.room_by(room) if room else None
        if room and target is None:
            target = self.add_room(room)
        device = build_device(
            kind, self._new_id(), label, self.rng, when=self.now(), realistic=self.realistic_devices
        )
        device.selected = selected
        self.devices[device.id] = device
        self.move_device(device, target)
        for attr in device.attributes.values():
            if attr.value is not None:
                self._store_event(
                    device, attr, attr.value, device.last_activity or self.now(), True
                )
        self.notify()
        return device

    def create_virtual(self, driver_type: str, label: str, namespace: str = "hubitat") -> Device:
        """Hub platform model, no upstream function: a virtual child device
        (libraries/mcp-virtual-devices-lib.groovy toolManageVirtualDevice ends here).
        """
        kind = VIRTUAL_KINDS.get(driver_type, "switch")
        device = build_device(kind, self._new_id(), label, self.rng, when=self.now())
        device.name = device.driver = driver_type
        device.mcp_managed = True
        device.selected = False
        device.driver_namespace = namespace
        stamp = epoch_ms(self.now())
        device.dni = f"mcp-virtual-{stamp:x}-{self.rng.getrandbits(16):04x}"
        self.devices[device.id] = device
        return device

    def remove_device(self, device_id: int) -> Device:
        """The device is excluded/deleted from the hub.

        Test hook, no upstream function: a device removed from the hub.
        """
        device = self.devices.pop(device_id)
        room = self.room_of(device)
        if room and device_id in room.device_ids:
            room.device_ids.remove(device_id)
        self.notify()
        return device

    def random_activity(self, count: int = 1) -> list[Event]:
        """Life in the house: `count` plausible sensor/switch changes on visible devices.

        Test hook, no upstream function: life in the house.
        """
        events: list[Event] = []
        candidates = [d for d in self.visible_devices() if not d.disabled]
        for _ in range(count * 3):
            if len(events) >= count or not candidates:
                break
            device = self.rng.choice(candidates)
            change = self._plausible_change(device)
            if change is None:
                continue
            event = self.set_attribute(device.id, *change)
            if event is not None:
                events.append(event)
        return events

    def _plausible_change(self, device: Device) -> tuple[str, Any] | None:
        flips = {
            "motion": ("active", "inactive"),
            "contact": ("open", "closed"),
            "switch": ("on", "off"),
            "presence": ("present", "not present"),
        }
        for name, (a, b) in flips.items():
            if name in device.attributes and device.kind not in ("fan", "garage"):
                return name, b if device.value(name) == a else a
        for name, step in (("temperature", 0.5), ("humidity", 1), ("illuminance", 25)):
            value = device.value(name)
            if isinstance(value, int | float):
                return name, round(value + self.rng.choice((-step, step)), 1)
        return None

    def break_device(self, device_id: int, broken: bool = True) -> None:
        """Make the device's driver throw on every command (a dead Z-Wave node).

        Test hook, no upstream function: a driver that throws.
        """
        self.devices[device_id].broken = broken

    def find(self, *, kind: str | None = None, capability: str | None = None) -> list[Device]:
        """Visible devices of a kind or with a capability (a test convenience).

        Test hook, no upstream function: device lookup for tests.
        """
        return [
            d
            for d in self.visible_devices()
            if (kind is None or d.kind == kind)
            and (capability is None or capability in d.capabilities)
        ]

    # ---- rules ----

    def run_rule(self, rule: Rule) -> list[str]:
        """Run a rule's actions; returns the errors of actions that could not run.

        Hub platform model, no upstream function: a rule's actions run (Rule Machine or the app's
        custom rule).
        """
        errors = []
        rule.last_run = self.now()
        rule.run_count += 1
        for device_id, command, params in rule.actions:
            device = self.devices.get(device_id)
            if device is None:
                errors.append(f"device {device_id} is gone")
                continue
            try:
                self.run_command(device, command, params)
            except Exception as err:
                errors.append(str(err))
        return errors

    # ---- writes ----

    async def wait_writes_in_flight(self, count: int) -> None:
        """Return once at least `count` writes are in flight (tests of the write cap).

        Test hook, no upstream function: tests of the write cap (hubitat-mcp-server.groovy
        _activeWritesLocked).
        """
        while self.writes_in_flight < count:
            await self.wait_change(1.0)

    async def hold_answer(self, hold: asyncio.Event) -> None:
        """Keep a finished write's answer until `hold` is set.

        Test hook, no upstream function: tests of answers that leave late.
        """
        self.answers_held += 1
        self.notify()
        try:
            await hold.wait()
        finally:
            self.answers_held -= 1

    async def wait_answers_held(self, count: int = 1) -> None:
        """Return once at least `count` finished writes wait for their answer to leave.

        Test hook, no upstream function: tests of answers that leave late.
        """
        while self.answers_held < count:
            await self.wait_change(1.0)

    async def wait_blocking(self, count: int = 1) -> None:
        """Return once at least `count` attribute waits are blocking (inject changes then).

        Test hook, no upstream function: tests of libraries/mcp-devices-lib.groovy
        toolPollUntilAttribute.
        """
        while self.blocking_waits < count:
            await self.wait_change(1.0)
