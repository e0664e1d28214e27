"""Robine Wake alarm clock: spec 50-002 (HTTP MCP), plus decisions where it is silent (`Decision:`).

Transport: POST /mcp only, one JSON-RPC message per request, JSON answers, no sessions, versions
2025-06-18 and 2025-03-26, Origin check, per-address rate limit, optional admin credentials (HTTP
Basic by default, Bearer or any other scheme when configured: 50-002 names no scheme).
Identity: 50-002 defines no device id, so by default the clock sends none; `device_id=` is the
variation of a clock that does (`device` in get_state and serverInfo). `reshape=` bends tool
results into the variations a real clock might send (the tolerance tests).
Domain: alarms with revisions (optimistic concurrency), safety ceilings, retired presence fields,
vibration profiles, next occurrences in the device's time zone, and wake sessions that ring, snooze,
time out and get dismissed. Time comes from a SimClock and is evaluated lazily (`tick()`), so no
background task and no sleeping is needed to make alarms ring.

In a test:
    clock = SimClock(); clock.set(datetime(2026, 11, 30, 5, 0, tzinfo=UTC))
    app = create_app(clock=clock, command_delay=0)      # options: see RobineWake
    device = app[ROBINE]                                # inspect state, act as a person:
    device.press_snooze(); device.press_dismiss(); device.edit_alarm(alarm_id, label="x")
    clock.advance(45 * 60)                              # the 06:45 alarm rings on the next request
Standalone: python -m simulators.robine_wake --port 8793 [--password PW] [--timezone TZ]
            [--auth-scheme basic|bearer|SCHEME] [--device-id ID]
Demo control: POST /_sim/clock {"advance": s} | {"set": iso}; GET/POST /_sim/device {"action": ...}.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
import hmac
import json
import math
import random
import re
from typing import Any
from zoneinfo import ZoneInfo

from aiohttp import web

from simulators.base import (
    CLOCK,
    FAULTS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    STATS,
    RpcFailure,
    SimClock,
    iso,
    make_app,
    parse_json_body,
    rpc_error,
    rpc_result,
    run_standalone,
    standalone_parser,
)

SUPPORTED_VERSIONS = ("2025-06-18", "2025-03-26")
LATEST_VERSION = SUPPORTED_VERSIONS[0]
# 50-002: a missing MCP-Protocol-Version header means the 2025-03-26 compatibility behaviour.
COMPAT_VERSION = "2025-03-26"

MODEL = "Robine Wake"
DEFAULT_FIRMWARE = "2.3.1"
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
VIBRATION_PROFILES = ("off", "gentle", "pulse", "strong")
VIBRATION_CEILING = 80  # calibration limit of the tactile hardware (spec 20-001 via 50-002)
DEFAULT_MAX_VOLUME = 85
DEFAULT_RING_TIMEOUT = 600.0  # seconds of continuous ringing before the session ends by itself
DEFAULT_RATE_LIMIT = 120  # requests per minute per source address (mcp_max_requests_per_minute)
RATE_WINDOW = 60.0
RECENT_SESSIONS = 10
OCCURRENCES = 5
# Decision: the device stores a bounded number of alarms; beyond it a create is a domain failure.
MAX_ALARMS = 20
# Fields of the camera era: rejected on every new write (50-002 "retired presence policies").
RETIRED_FIELDS = ("presence_policy", "presence_dismissal", "wake_on_presence")
ADMIN_USER = "admin"
AUTH_REALM = "Robine Wake"
# Decision: transport-level refusals (rate limit, Origin, auth) carry a JSON-RPC error body with
# id null and this server-defined code, so a client can always parse the body as JSON.
TRANSPORT_ERROR = -32000

_TIME_RE = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
_DATE_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


@dataclass(frozen=True)
class Sound:
    """A validated sound stored on the device."""

    id: str
    name: str
    duration_s: int


DEFAULT_SOUNDS = (
    Sound("sunrise_birds", "Sunrise Birds", 180),
    Sound("morning_chimes", "Morning Chimes", 95),
    Sound("ocean_waves", "Ocean Waves", 240),
    Sound("classic_bell", "Classic Bell", 30),
    Sound("soft_piano", "Soft Piano", 150),
)

# Defaults the domain service fills in for fields a client leaves out on create.
ALARM_DEFAULTS: dict[str, Any] = {
    "days": [],
    "date": None,
    "enabled": True,
    "sound_id": DEFAULT_SOUNDS[0].id,
    "volume": 50,
    "ramp_seconds": 60,
    "snooze_minutes": 9,
    "max_snoozes": 3,
    # 50-002: old clients omit the vibration profile; it is then off.
    "vibration": {"profile": "off", "intensity": 0},
}
DEFAULT_VIBRATION_INTENSITY = 50

STARTER_ALARMS: tuple[dict[str, Any], ...] = (
    {
        "label": "Weekdays",
        "time": "06:45",
        "days": ["mon", "tue", "wed", "thu", "fri"],
        "sound_id": "sunrise_birds",
        "volume": 45,
        "ramp_seconds": 120,
        "snooze_minutes": 9,
        "max_snoozes": 3,
        "vibration": {"profile": "gentle", "intensity": 40},
    },
    {
        "label": "Weekend",
        "time": "08:30",
        "days": ["sat", "sun"],
        "sound_id": "soft_piano",
        "volume": 35,
        "ramp_seconds": 300,
        "snooze_minutes": 15,
        "max_snoozes": 2,
    },
    {
        "label": "Train to the coast",
        "time": "05:10",
        "days": [],
        "enabled": False,
        "sound_id": "classic_bell",
        "volume": 70,
        "ramp_seconds": 0,
        "snooze_minutes": 5,
        "max_snoozes": 1,
        "vibration": {"profile": "strong", "intensity": 80},
    },
)


class DomainError(Exception):
    """A domain failure: answered as a tool result with isError, never as a JSON-RPC error."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def as_dict(self) -> dict[str, Any]:
        """The `error` object of the structured result.

        50-002 "Tools" (MCP-006): a domain failure is a tool result with isError; the object's shape
        is the simulator's decision.
        """
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            error["details"] = self.details
        return error


@dataclass
class Alarm:
    """One stored alarm; `revision` grows with every persisted change."""

    id: str
    revision: int
    label: str
    time: str
    days: list[str]
    date: str | None
    enabled: bool
    sound_id: str
    volume: int
    ramp_seconds: int
    snooze_minutes: int
    max_snoozes: int
    vibration: dict[str, Any]

    def fields(self) -> dict[str, Any]:
        """The editable fields (no id, no revision).

        50-002 "Tools": what create_alarm and update_alarm may write.
        """
        return {
            "label": self.label,
            "time": self.time,
            "days": list(self.days),
            "date": self.date,
            "enabled": self.enabled,
            "sound_id": self.sound_id,
            "volume": self.volume,
            "ramp_seconds": self.ramp_seconds,
            "snooze_minutes": self.snooze_minutes,
            "max_snoozes": self.max_snoozes,
            "vibration": dict(self.vibration),
        }

    def as_dict(self) -> dict[str, Any]:
        """The alarm as the device serialises it (date is null for recurring alarms).

        50-002 "Tools" (list_alarms); the field names are the simulator's decision, the spec lists
        none.
        """
        return {"id": self.id, "revision": self.revision, **self.fields()}


@dataclass
class Session:
    """A wake session: ringing → (snoozed → ringing)* → ended."""

    # Times are kept in UTC: aware arithmetic in a ZoneInfo zone is wall-clock arithmetic and
    # would be off by an hour across a DST change.
    id: str
    alarm_id: str
    state: str
    started_at: datetime
    ring_started_at: datetime  # internal: start of the current ringing phase, for the timeout
    snooze_count: int = 0
    snooze_until: datetime | None = None
    ended_at: datetime | None = None
    end_reason: str | None = None

    def as_dict(self, tz: ZoneInfo) -> dict[str, Any]:
        """Times in the device's zone; optional keys appear only when they apply.

        50-002 "Tools" (get_state: recent and active sessions); the shape is the simulator's
        decision.
        """
        result: dict[str, Any] = {
            "id": self.id,
            "alarm_id": self.alarm_id,
            "state": self.state,
            "started_at": iso(self.started_at.astimezone(tz)),
            "snooze_count": self.snooze_count,
        }
        if self.snooze_until is not None:
            result["snooze_until"] = iso(self.snooze_until.astimezone(tz))
        if self.ended_at is not None:
            result["ended_at"] = iso(self.ended_at.astimezone(tz))
        if self.end_reason is not None:
            result["end_reason"] = self.end_reason
        return result


class RateLimiter:
    """Sliding one-minute window per source address on the simulated clock."""

    def __init__(self, per_minute: int | None) -> None:
        self.per_minute = per_minute
        self._hits: dict[str, deque[float]] = {}

    def check(self, address: str, now: float) -> float | None:
        """Count one request; return None when allowed, else seconds until one is allowed.

        50-002 "Security boundary" and MCP-008: requests limited per source address, 120 a minute by
        default.
        """
        if not self.per_minute:
            return None
        hits = self._hits.setdefault(address, deque())
        while hits and hits[0] <= now - RATE_WINDOW:
            hits.popleft()
        if len(hits) >= self.per_minute:
            # Decision: refused requests are not counted, so a client that backs off recovers.
            return hits[0] + RATE_WINDOW - now
        hits.append(now)
        return None

    def reset(self) -> None:
        """Forget every address.

        Test hook, no spec section: tests start from a fresh limit.
        """
        self._hits.clear()


# --- input schemas (our own wording) -------------------------------------------------------------

_ALARM_PROPERTIES: dict[str, Any] = {
    "label": {
        "type": "string",
        "minLength": 1,
        "maxLength": 40,
        "description": "Shown on the clock.",
    },
    "time": {"type": "string", "pattern": _TIME_RE, "description": "Local 24-hour time, HH:MM."},
    "days": {
        "type": "array",
        "items": {"type": "string", "enum": list(DAYS)},
        "uniqueItems": True,
        "description": "Weekdays to repeat on; empty for a one-shot alarm.",
    },
    "date": {
        "type": ["string", "null"],
        "pattern": _DATE_RE,
        "description": "One-shot alarms only: the local date YYYY-MM-DD (else the next HH:MM).",
    },
    "enabled": {"type": "boolean"},
    "sound_id": {"type": "string", "minLength": 1, "description": "An id from list_sounds."},
    "volume": {
        "type": "integer",
        "minimum": 1,
        "maximum": 100,
        "description": "Final volume; must not exceed the device's max_volume setting.",
    },
    "ramp_seconds": {"type": "integer", "minimum": 0, "maximum": 600},
    "snooze_minutes": {"type": "integer", "minimum": 1, "maximum": 30},
    "max_snoozes": {"type": "integer", "minimum": 0, "maximum": 10},
    "vibration": {
        "type": "object",
        "properties": {
            "profile": {"type": "string", "enum": list(VIBRATION_PROFILES)},
            "intensity": {
                "type": "integer",
                "minimum": 0,
                "maximum": 100,
                "description": f"Percent; the hardware ceiling is {VIBRATION_CEILING}.",
            },
        },
        "required": ["profile"],
        "additionalProperties": False,
    },
}

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
_ID = {"type": "string", "minLength": 1, "description": "Alarm id (alm_...)."}
_REVISION = {"type": "integer", "minimum": 1, "description": "The revision you last read."}


def _annotations(
    title: str, *, read_only: bool, destructive: bool, idempotent: bool
) -> dict[str, Any]:
    return {
        "title": title,
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }


TOOLS: tuple[dict[str, Any], ...] = (
    {
        "name": "get_state",
        "description": "Device health, settings, alarm overview, the active wake session and the "
        "last ended sessions.",
        "inputSchema": _EMPTY_SCHEMA,
        "annotations": _annotations(
            "Clock state", read_only=True, destructive=False, idempotent=True
        ),
    },
    {
        "name": "list_alarms",
        "description": "Every stored alarm with its revision and its next five local occurrences.",
        "inputSchema": _EMPTY_SCHEMA,
        "annotations": _annotations(
            "List alarms", read_only=True, destructive=False, idempotent=True
        ),
    },
    {
        "name": "list_sounds",
        "description": "Sounds stored on the clock that an alarm can use.",
        "inputSchema": _EMPTY_SCHEMA,
        "annotations": _annotations(
            "List sounds", read_only=True, destructive=False, idempotent=True
        ),
    },
    {
        "name": "preview_alarm",
        "description": "Check an alarm definition and show when it would ring; stores nothing.",
        "inputSchema": {
            "type": "object",
            "properties": _ALARM_PROPERTIES,
            "required": ["label", "time"],
            "additionalProperties": False,
        },
        "annotations": _annotations(
            "Preview alarm", read_only=True, destructive=False, idempotent=True
        ),
    },
    {
        "name": "create_alarm",
        "description": "Store a new alarm. Omitted fields take the clock's defaults.",
        "inputSchema": {
            "type": "object",
            "properties": _ALARM_PROPERTIES,
            "required": ["label", "time"],
            "additionalProperties": False,
        },
        "annotations": _annotations(
            "Create alarm", read_only=False, destructive=False, idempotent=False
        ),
    },
    {
        "name": "update_alarm",
        "description": "Change fields of an alarm. Pass the revision you read; a newer revision on "
        "the clock makes this fail with revision_conflict.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": _ID, "revision": _REVISION, **_ALARM_PROPERTIES},
            "required": ["id", "revision"],
            "additionalProperties": False,
        },
        "annotations": _annotations(
            "Update alarm", read_only=False, destructive=True, idempotent=False
        ),
    },
    {
        "name": "delete_alarm",
        "description": "Remove an alarm, guarded by the revision you read.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": _ID, "revision": _REVISION},
            "required": ["id", "revision"],
            "additionalProperties": False,
        },
        "annotations": _annotations(
            "Delete alarm", read_only=False, destructive=True, idempotent=True
        ),
    },
    {
        "name": "trigger_alarm",
        "description": "Make an alarm ring now, starting a wake session.",
        "inputSchema": {
            "type": "object",
            "properties": {"id": _ID},
            "required": ["id"],
            "additionalProperties": False,
        },
        "annotations": _annotations(
            "Ring alarm now", read_only=False, destructive=False, idempotent=False
        ),
    },
    {
        "name": "snooze_session",
        "description": "Snooze the ringing wake session for the alarm's snooze length.",
        "inputSchema": _EMPTY_SCHEMA,
        "annotations": _annotations("Snooze", read_only=False, destructive=False, idempotent=False),
    },
    {
        "name": "dismiss_session",
        "description": "End the active wake session (only when smartphone dismissal is enabled).",
        "inputSchema": _EMPTY_SCHEMA,
        "annotations": _annotations("Dismiss", read_only=False, destructive=True, idempotent=False),
    },
)
TOOLS_BY_NAME = {tool["name"]: tool for tool in TOOLS}
MUTATING_TOOLS = frozenset(
    {
        "create_alarm",
        "update_alarm",
        "delete_alarm",
        "trigger_alarm",
        "snooze_session",
        "dismiss_session",
    }
)

_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    # Decision: 40.0 is not an integer (the device's JSON decoder keeps floats as floats).
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def validate_schema(value: Any, schema: dict[str, Any], path: str = "arguments") -> None:
    """Check `value` against the subset of JSON Schema our tool schemas use; raise ValueError.

    50-002 "Tools": tool definitions include JSON Schema inputs, and invalid arguments are a
    JSON-RPC error; the keywords are checked in this order: type, enum, then the keywords of
    the value's own kind."""
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_JSON_TYPES[k](value) for k in kinds):
            raise ValueError(f"{path}: expected {' or '.join(kinds)}")
    if value is None:
        return
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{path}: must be one of {', '.join(map(str, schema['enum']))}")
    if isinstance(value, str):
        _check_string(value, schema, path)
    if isinstance(value, int) and not isinstance(value, bool):
        _check_integer(value, schema, path)
    if isinstance(value, list):
        _check_array(value, schema, path)
    if isinstance(value, dict):
        _check_object(value, schema, path)


def _check_string(value: str, schema: dict[str, Any], path: str) -> None:
    """JSON Schema minLength, maxLength and pattern."""
    if len(value) < schema.get("minLength", 0):
        raise ValueError(f"{path}: too short")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        raise ValueError(f"{path}: longer than {schema['maxLength']} characters")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        raise ValueError(f"{path}: does not match {schema['pattern']}")


def _check_integer(value: int, schema: dict[str, Any], path: str) -> None:
    """JSON Schema minimum and maximum."""
    if "minimum" in schema and value < schema["minimum"]:
        raise ValueError(f"{path}: below {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        raise ValueError(f"{path}: above {schema['maximum']}")


def _check_array(value: list[Any], schema: dict[str, Any], path: str) -> None:
    """JSON Schema uniqueItems, then each item against `items`."""
    if schema.get("uniqueItems") and len({json.dumps(v) for v in value}) != len(value):
        raise ValueError(f"{path}: items must be unique")
    for index, item in enumerate(value):
        validate_schema(item, schema.get("items", {}), f"{path}[{index}]")


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: str) -> None:
    """JSON Schema required, properties and additionalProperties: false."""
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            raise ValueError(f"{path}.{name}: required")
    for name, item in value.items():
        if name in properties:
            validate_schema(item, properties[name], f"{path}.{name}")
        elif schema.get("additionalProperties") is False:
            raise ValueError(f"{path}.{name}: unknown property")


def _local_at(day: date, hhmm: str, tz: ZoneInfo) -> datetime:
    """`day` at `hhmm` in `tz`, as an aware datetime with the offset that really applies.

    A time that falls in a spring-forward gap (02:30 in Berlin on the last Sunday of March) rings
    after the gap, shifted by its length (zoneinfo's fold=0 reading); a time that occurs twice in
    autumn rings once, at its first occurrence. Decision: the spec is silent, this is what a
    clock that converts local wall time with the tz database does.
    """
    hour, minute = (int(part) for part in hhmm.split(":"))
    wall = datetime(day.year, day.month, day.day, hour, minute, tzinfo=tz)
    return wall.astimezone(UTC).astimezone(tz)


def _days_text(alarm: Alarm) -> str:
    if alarm.days:
        return ", ".join(alarm.days)
    return f"once on {alarm.date}" if alarm.date else "once"


def _refuse_retired(changes: dict[str, Any]) -> None:
    """50-002 "Camera-free state and tactile configuration": retired presence policies are
    rejected on new writes."""
    retired = sorted(name for name in RETIRED_FIELDS if name in changes)
    if retired:
        raise DomainError(
            "retired_field",
            f"Presence-based fields are retired and cannot be written: {', '.join(retired)}",
            {"fields": retired},
        )


def _merged_fields(changes: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
    """`changes` over `base` (or the defaults): a vibration replaces the whole profile, days
    come in week order and make a one-shot date go."""
    fields = dict(base) if base is not None else {**ALARM_DEFAULTS}
    fields["vibration"] = dict(fields.get("vibration") or ALARM_DEFAULTS["vibration"])
    fields.update({k: v for k, v in changes.items() if k != "vibration"})
    if "vibration" in changes:
        vibration = dict(changes["vibration"])
        if vibration["profile"] == "off":
            # Decision: "off" ignores any intensity, stored as 0.
            vibration["intensity"] = 0
        else:
            vibration.setdefault("intensity", DEFAULT_VIBRATION_INTENSITY)
        fields["vibration"] = vibration
    if fields["days"]:
        if changes.get("days") and "date" not in changes:
            fields["date"] = None  # becoming a repeating alarm drops a one-shot date
        fields["days"] = [day for day in DAYS if day in fields["days"]]
    return fields


class RobineWake:
    """The simulated clock's state, its domain service, and hooks for tests to act as a person."""

    def __init__(
        self,
        *,
        clock: SimClock | None = None,
        password: str | None = None,
        auth_scheme: str = "basic",
        timezone: str = "Europe/Berlin",
        rate_limit: int | None = DEFAULT_RATE_LIMIT,
        allowed_origins: tuple[str, ...] | list[str] = (),
        smartphone_dismissal: bool = True,
        starter_alarms: bool = True,
        device_id: str | None = None,
        device_name: str = "Bedroom clock",
        firmware: str = DEFAULT_FIRMWARE,
        max_volume: int = DEFAULT_MAX_VOLUME,
        ring_timeout: float = DEFAULT_RING_TIMEOUT,
        command_delay: float = 0.05,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        sounds: tuple[Sound, ...] = DEFAULT_SOUNDS,
        seed: int = 1,
    ) -> None:
        self.clock = clock or SimClock()
        self.password = password
        # MCP-002 wants administrator credentials but 50-002 names no scheme: Basic (user admin)
        # is the reference's decision; "bearer" takes the password as the token; any other
        # name is a scheme a client cannot answer (the 401 still names it).
        self.auth_scheme = auth_scheme.lower()
        # A test's variation of tool results: (tool, structuredContent) -> structuredContent.
        self.reshape: Callable[[str, Any], Any] | None = None
        # Tools that fail, in one of the two shapes 50-002 gives a failure: "domain" (a tool
        # result with isError, MCP-006) or "rpc" (a JSON-RPC error, -32603 Internal error).
        self.failing_tools: dict[str, str] = {}
        self.tz = ZoneInfo(timezone)
        self.timezone = timezone
        self.rate_limiter = RateLimiter(rate_limit)
        self.allowed_origins = {origin.rstrip("/").lower() for origin in allowed_origins}
        self.smartphone_dismissal_enabled = smartphone_dismissal
        self.max_volume = max_volume
        self.ring_timeout = ring_timeout
        # Mutations take effect after this many seconds, as the device writes to flash first.
        self.command_delay = command_delay
        self._sleep = sleep or asyncio.sleep
        self.sounds = {sound.id: sound for sound in sounds}
        self._rng = random.Random(seed)
        self.device_id = device_id
        self.device_name = device_name
        self.firmware = firmware
        self.time_synced = True
        self.storage_ok = True
        self.booted_at = self.clock.now()
        self.alarms: dict[str, Alarm] = {}
        self.active_session: Session | None = None
        self.recent_sessions: deque[Session] = deque(maxlen=RECENT_SESSIONS)
        # What happened on the device, oldest first: {"type", "at", "session_id", "alarm_id", ...}.
        self.events: list[dict[str, Any]] = []
        self._cursor = self.clock.now()
        self._write_lock = asyncio.Lock()
        if starter_alarms:
            for fields in STARTER_ALARMS:
                self.add_alarm(**fields)

    # --- identity ---------------------------------------------------------------------------

    def device_info(self) -> dict[str, Any] | None:
        """A variation beyond 50-002: an identity in get_state and serverInfo (None: the spec's)."""
        if self.device_id is None:
            return None
        return {
            "id": self.device_id,
            "name": self.device_name,
            "model": MODEL,
            "firmware": self.firmware,
        }

    # --- time -------------------------------------------------------------------------------

    def next_occurrences(
        self, alarm: Alarm, after: datetime | None = None, count: int = OCCURRENCES
    ) -> list[datetime]:
        """The next `count` local ring times strictly after `after` (disabled alarms: none).

        50-002 "Tools": list_alarms reads alarms with their next five occurrences.
        """
        if not alarm.enabled:
            return []
        after = after or self.clock.now()
        if alarm.date is not None:
            at = _local_at(date.fromisoformat(alarm.date), alarm.time, self.tz)
            return [at] if at > after else []
        weekdays = {DAYS.index(day) for day in alarm.days}
        result: list[datetime] = []
        day = after.astimezone(self.tz).date()
        while len(result) < count:
            if not weekdays or day.weekday() in weekdays:
                at = _local_at(day, alarm.time, self.tz)
                if at > after:
                    result.append(at)
                    if not weekdays:
                        break  # a one-shot without a date rings at the next HH:MM only
            day += timedelta(days=1)
        return result

    def tick(self) -> list[dict[str, Any]]:
        """Play everything due between the last evaluation and now; return the new events.

        Simulator-only: the clock's own timeline (alarms ring, snooze, time out), evaluated lazily.
        """
        now = self.clock.now()
        first_new = len(self.events)
        if now <= self._cursor:
            self._cursor = now  # the clock was set back: nothing is due
            return []
        for _ in range(100_000):  # bound: a clock moved by years must not spin forever
            due = self._next_due(now)
            if due is None:
                break
            when, action = due
            self._cursor = when
            action(when)
        self._cursor = now
        return self.events[first_new:]

    def _next_due(self, now: datetime) -> tuple[datetime, Callable[[datetime], None]] | None:
        candidates: list[tuple[datetime, int, Callable[[datetime], None]]] = []
        session = self.active_session
        if session is not None:
            # Session transitions sort before alarm starts at the same instant (priority 0).
            if session.state == "ringing":
                timeout_at = session.ring_started_at + timedelta(seconds=self.ring_timeout)
                candidates.append((timeout_at, 0, self._time_out))
            elif session.state == "snoozed" and session.snooze_until is not None:
                candidates.append((session.snooze_until, 0, self._ring_again))
        for alarm in list(self.alarms.values()):
            upcoming = self.next_occurrences(alarm, self._cursor, 1)
            if upcoming:
                candidates.append((upcoming[0], 1, partial(self._fire, alarm.id)))
        due = [c for c in candidates if c[0] <= now]
        if not due:
            return None
        when, _, action = min(due, key=lambda c: (c[0], c[1]))
        return when, action

    def _event(self, kind: str, when: datetime, session: Session, **extra: Any) -> None:
        self.events.append(
            {
                "type": kind,
                "at": iso(when.astimezone(self.tz)),
                "session_id": session.id,
                "alarm_id": session.alarm_id,
                **extra,
            }
        )

    def _fire(self, alarm_id: str, when: datetime) -> None:
        alarm = self.alarms[alarm_id]
        if not alarm.days:
            # A one-shot is used up when its time comes; the device persists that (new revision).
            alarm.enabled = False
            alarm.revision += 1
        if self.active_session is not None:
            # Decision: one speaker, one session; an alarm due meanwhile is skipped, not queued.
            self.events.append(
                {
                    "type": "missed",
                    "at": iso(when.astimezone(self.tz)),
                    "session_id": None,
                    "alarm_id": alarm_id,
                }
            )
            return
        self._start_session(alarm, when)

    def _start_session(self, alarm: Alarm, when: datetime) -> Session:
        when = when.astimezone(UTC)
        session = Session(
            id=f"ses_{self._rng.getrandbits(48):012x}",
            alarm_id=alarm.id,
            state="ringing",
            started_at=when,
            ring_started_at=when,
        )
        self.active_session = session
        self._event("ringing", when, session)
        return session

    def _ring_again(self, when: datetime) -> None:
        session = self.active_session
        assert session is not None
        session.state = "ringing"
        session.snooze_until = None
        session.ring_started_at = when.astimezone(UTC)
        self._event("ringing", when, session)

    def _time_out(self, when: datetime) -> None:
        self._end(when, "timeout")

    def _end(self, when: datetime, reason: str) -> Session:
        session = self.active_session
        assert session is not None
        session.state = "ended"
        session.snooze_until = None
        session.ended_at = when.astimezone(UTC)
        session.end_reason = reason
        self.active_session = None
        self.recent_sessions.appendleft(session)
        self._event("ended", when, session, reason=reason)
        return session

    # --- alarm validation ---------------------------------------------------------------------

    def build_alarm_fields(
        self, changes: dict[str, Any], base: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], list[str]]:
        """Merge `changes` over `base` (or the defaults), apply domain rules; raise DomainError.

        Schema checks (types, ranges, patterns) happened before; these are the rules a schema
        cannot state (50-002 "Purpose": the alarm domain's validation and safety ceilings;
        "Camera-free state and tactile configuration": retired presence fields, the
        vibration profile): known sound, one-shot dates, the ceilings.
        """
        _refuse_retired(changes)
        fields = _merged_fields(changes, base)
        label = str(fields["label"]).strip()
        if not label:
            raise DomainError(
                "validation_failed", "The label must not be blank.", {"field": "label"}
            )
        fields["label"] = label
        if fields["sound_id"] not in self.sounds:
            raise DomainError(
                "validation_failed",
                f"Unknown sound {fields['sound_id']!r}.",
                {"field": "sound_id", "known": sorted(self.sounds)},
            )
        if fields["date"] is not None:
            self._check_one_shot_date(fields)
        self._check_ceilings(fields)
        return fields, self._alarm_warnings(fields)

    def _check_one_shot_date(self, fields: dict[str, Any]) -> None:
        """A date belongs to a one-shot alarm only, and an enabled one may not be in the past."""
        if fields["days"]:
            raise DomainError(
                "validation_failed",
                "A date is only allowed for one-shot alarms (no days).",
                {"field": "date"},
            )
        try:
            day = date.fromisoformat(fields["date"])
        except ValueError:
            raise DomainError(
                "validation_failed", f"{fields['date']} is not a date.", {"field": "date"}
            ) from None
        # A used-up, disabled one-shot may keep its past date (inert); enabling it may not.
        if fields["enabled"] and _local_at(day, fields["time"], self.tz) <= self.clock.now():
            raise DomainError(
                "validation_failed",
                f"{fields['date']} {fields['time']} is in the past.",
                {"field": "date"},
            )

    def _check_ceilings(self, fields: dict[str, Any]) -> None:
        """50-002's safety ceilings: the device's maximum volume, the calibrated vibration."""
        if fields["volume"] > self.max_volume:
            raise DomainError(
                "ceiling_exceeded",
                f"Volume {fields['volume']} exceeds the maximum of {self.max_volume}.",
                {"field": "volume", "limit": self.max_volume},
            )
        if fields["vibration"]["intensity"] > VIBRATION_CEILING:
            raise DomainError(
                "ceiling_exceeded",
                f"Vibration intensity {fields['vibration']['intensity']} exceeds the "
                f"calibrated ceiling of {VIBRATION_CEILING}.",
                {"field": "vibration.intensity", "limit": VIBRATION_CEILING},
            )

    def _alarm_warnings(self, fields: dict[str, Any]) -> list[str]:
        """What a valid alarm still deserves a word about."""
        warnings: list[str] = []
        if not fields["enabled"]:
            warnings.append("The alarm is disabled and will not ring.")
        if fields["vibration"]["profile"] != "off" and fields["vibration"]["intensity"] == 0:
            warnings.append("The vibration profile has intensity 0 and will not be felt.")
        if fields["ramp_seconds"] > self.sounds[fields["sound_id"]].duration_s:
            warnings.append("The ramp is longer than the sound; the sound repeats while ramping.")
        return warnings

    def _alarm(self, alarm_id: str) -> Alarm:
        alarm = self.alarms.get(alarm_id)
        if alarm is None:
            raise DomainError("not_found", f"No alarm {alarm_id}.", {"id": alarm_id})
        return alarm

    def _check_revision(self, alarm: Alarm, revision: int) -> None:
        if revision != alarm.revision:
            raise DomainError(
                "revision_conflict",
                f"Alarm {alarm.id} is at revision {alarm.revision}, not {revision}; "
                "read it again before changing it.",
                {"id": alarm.id, "current_revision": alarm.revision},
            )

    def alarm_with_occurrences(self, alarm: Alarm) -> dict[str, Any]:
        """An alarm plus its next five occurrences, as list_alarms and the writes return it.

        50-002 "Tools": list_alarms reads alarms with their next five occurrences.
        """
        return {
            **alarm.as_dict(),
            "next_occurrences": [iso(at) for at in self.next_occurrences(alarm)],
        }

    # --- domain service (shared by the tools and by the test hooks) -----------------------------

    def create(self, fields: dict[str, Any]) -> Alarm:
        """Validate and persist a new alarm.

        50-002 "Tools" (create_alarm) and MCP-004: mutations call the domain service.
        """
        if len(self.alarms) >= MAX_ALARMS:
            raise DomainError(
                "validation_failed",
                f"The clock holds at most {MAX_ALARMS} alarms.",
                {"limit": MAX_ALARMS},
            )
        normalised, _ = self.build_alarm_fields(fields)
        alarm = Alarm(id=f"alm_{self._rng.getrandbits(48):012x}", revision=1, **normalised)
        self.alarms[alarm.id] = alarm
        return alarm

    def update(self, alarm_id: str, revision: int | None, changes: dict[str, Any]) -> Alarm:
        """Apply `changes`; `revision=None` is the device's own UI (no concurrency guard).

        50-002 "Tools" (update_alarm) and MCP-004: the current resource revision, revision conflicts
        preserved.
        """
        alarm = self._alarm(alarm_id)
        if revision is not None:
            self._check_revision(alarm, revision)
        normalised, _ = self.build_alarm_fields(changes, alarm.fields())
        for name, value in normalised.items():
            setattr(alarm, name, value)
        alarm.revision += 1
        return alarm

    def delete(self, alarm_id: str, revision: int | None) -> None:
        """Remove an alarm unless it is ringing or snoozed right now.

        50-002 "Tools" (delete_alarm) and MCP-004: the current resource revision.
        """
        alarm = self._alarm(alarm_id)
        if revision is not None:
            self._check_revision(alarm, revision)
        if self.active_session is not None and self.active_session.alarm_id == alarm_id:
            raise DomainError(
                "session_active",
                f"Alarm {alarm_id} is in an active wake session; end it first.",
                {"session_id": self.active_session.id},
            )
        del self.alarms[alarm_id]

    def trigger(self, alarm_id: str) -> Session:
        """Ring an alarm now (disabled alarms too: this is an explicit request).

        50-002 "Tools" (trigger_alarm): start an existing alarm immediately.
        """
        alarm = self._alarm(alarm_id)
        if self.active_session is not None:
            raise DomainError(
                "session_active",
                "A wake session is already active.",
                {"session_id": self.active_session.id},
            )
        return self._start_session(alarm, self.clock.now())

    def snooze(self) -> Session:
        """Snooze the ringing session; a snoozed one is left as it is.

        50-002 "Tools" (snooze_session).
        """
        session = self._active()
        if session.state == "snoozed":
            # Decision: pressing snooze again while snoozed changes nothing (no extra count).
            return session
        alarm = self.alarms.get(session.alarm_id)
        max_snoozes = alarm.max_snoozes if alarm else 0
        minutes = alarm.snooze_minutes if alarm else ALARM_DEFAULTS["snooze_minutes"]
        if session.snooze_count >= max_snoozes:
            raise DomainError(
                "snooze_limit_reached",
                f"This alarm allows {max_snoozes} snoozes; all are used.",
                {"snooze_count": session.snooze_count, "max_snoozes": max_snoozes},
            )
        now = self.clock.now()
        session.state = "snoozed"
        session.snooze_count += 1
        session.snooze_until = now + timedelta(minutes=minutes)
        self._event("snoozed", now, session)
        return session

    def dismiss(self, reason: str) -> Session:
        """End the active session with `reason` ("mcp" from the tool, "dismissed" on the device).

        50-002 "Tools" (dismiss_session): reason mcp, only when smartphone dismissal is enabled.
        """
        session = self._active()
        now = self.clock.now()
        self._event("dismissed", now, session, reason=reason)
        return self._end(now, reason)

    def _active(self) -> Session:
        if self.active_session is None:
            raise DomainError("no_active_session", "No wake session is active.")
        return self.active_session

    # --- hooks for tests and the demo: things a person or the device does -----------------------

    def add_alarm(self, **fields: Any) -> dict[str, Any]:
        """Someone sets an alarm on the clock itself.

        Test hook, no spec section.
        """
        self.tick()
        return self.create(fields).as_dict()

    def edit_alarm(self, alarm_id: str, **changes: Any) -> dict[str, Any]:
        """Someone edits an alarm on the clock: the revision moves on under any client.

        Test hook, no spec section: a person at the clock; the revision conflict of MCP-004 follows.
        """
        self.tick()
        return self.update(alarm_id, None, changes).as_dict()

    def remove_alarm(self, alarm_id: str) -> None:
        """Someone deletes an alarm on the clock.

        Test hook, no spec section.
        """
        self.tick()
        self.delete(alarm_id, None)

    def press_snooze(self) -> dict[str, Any]:
        """The snooze bar on the clock.

        Test hook, no spec section.
        """
        self.tick()
        return self.snooze().as_dict(self.tz)

    def press_dismiss(self) -> dict[str, Any]:
        """The off button on the clock: works whatever the smartphone setting.

        Test hook, no spec section.
        """
        self.tick()
        return self.dismiss("dismissed").as_dict(self.tz)

    def set_settings(
        self,
        *,
        smartphone_dismissal_enabled: bool | None = None,
        max_volume: int | None = None,
        time_synced: bool | None = None,
        storage_ok: bool | None = None,
    ) -> None:
        """Change device settings or health as the owner (or a failing part) would.

        Test hook, no spec section: the owner's settings or a failing part.
        """
        if smartphone_dismissal_enabled is not None:
            self.smartphone_dismissal_enabled = smartphone_dismissal_enabled
        if max_volume is not None:
            self.max_volume = max_volume
        if time_synced is not None:
            self.time_synced = time_synced
        if storage_ok is not None:
            self.storage_ok = storage_ok

    # --- tool results -------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """get_state's structured result (no presence, confidence or camera fields, by spec)."""
        now = self.clock.now()
        alarms = []
        for alarm in self.alarms.values():
            upcoming = self.next_occurrences(alarm, now, 1)
            alarms.append(
                {
                    "id": alarm.id,
                    "revision": alarm.revision,
                    "label": alarm.label,
                    "time": alarm.time,
                    "days": list(alarm.days),
                    "enabled": alarm.enabled,
                    "next_occurrence": iso(upcoming[0]) if upcoming else None,
                }
            )
        healthy = self.time_synced and self.storage_ok
        result: dict[str, Any] = {
            "health": {
                "status": "ok" if healthy else "degraded",
                "uptime_s": max(0, int((now - self.booted_at).total_seconds())),
                "time_synced": self.time_synced,
                "firmware": self.firmware,
                "storage_ok": self.storage_ok,
            },
            "settings": {
                "smartphone_dismissal_enabled": self.smartphone_dismissal_enabled,
                "max_volume": self.max_volume,
                "timezone": self.timezone,
            },
            "alarms": alarms,
            "active_session": self.active_session.as_dict(self.tz) if self.active_session else None,
            "recent_sessions": [session.as_dict(self.tz) for session in self.recent_sessions],
        }
        if (device := self.device_info()) is not None:
            result["device"] = device
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool; schema failures raise RpcFailure, domain failures give isError.

        50-002 "Tools": invalid arguments and unknown tools are JSON-RPC errors, domain failures
        isError (MCP-006); every result has text and structuredContent.
        """
        tool = TOOLS_BY_NAME.get(name)
        if tool is None:
            raise RpcFailure(INVALID_PARAMS, f"Unknown tool: {name}")
        checked = arguments
        if name in {"preview_alarm", "create_alarm", "update_alarm"}:
            # Retired fields are a domain rule (retired_field, below), not a schema error.
            checked = {k: v for k, v in arguments.items() if k not in RETIRED_FIELDS}
        try:
            validate_schema(checked, tool["inputSchema"])
        except ValueError as err:
            raise RpcFailure(INVALID_PARAMS, f"Invalid arguments for {name}: {err}") from err
        failure = self.failing_tools.get(name)
        if failure == "rpc":
            raise RpcFailure(-32603, "Internal error")
        try:
            if failure == "domain":
                raise DomainError("internal_error", f"{name} could not be completed.")
            if name in MUTATING_TOOLS:
                # One write at a time, applied after the device's write delay; the revision check
                # happens inside, so two writers holding the same revision cannot both win.
                async with self._write_lock:
                    if self.command_delay > 0:
                        await self._sleep(self.command_delay)
                    self.tick()
                    return self._reshaped(name, self._mutate(name, arguments))
            self.tick()
            return self._reshaped(name, self._read(name, arguments))
        except DomainError as err:
            return {
                "content": [{"type": "text", "text": err.message}],
                "structuredContent": {"error": err.as_dict()},
                "isError": True,
            }

    def _reshaped(self, name: str, result: dict[str, Any]) -> dict[str, Any]:
        """A successful result as the test's variation of the device sends it."""
        if self.reshape is not None:
            result["structuredContent"] = self.reshape(name, result["structuredContent"])
        return result

    def _read(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "get_state":
            data = self.state()
            session = data["active_session"]
            text = (
                f"{self.device_name}: {data['health']['status']}, {len(self.alarms)} alarms, "
                + (f"session {session['state']}." if session else "no active session.")
            )
            return _ok(text, data)
        if name == "list_alarms":
            alarms = [self.alarm_with_occurrences(alarm) for alarm in self.alarms.values()]
            lines = [
                f"{a['label']} ({a['id']}, rev {a['revision']}): {a['time']} "
                f"{', '.join(a['days']) or 'once'}{'' if a['enabled'] else ', disabled'}"
                for a in alarms
            ]
            return _ok("\n".join(lines) or "No alarms.", {"alarms": alarms})
        if name == "list_sounds":
            sounds = [
                {"id": s.id, "name": s.name, "duration_s": s.duration_s}
                for s in self.sounds.values()
            ]
            return _ok(", ".join(f"{s['name']} ({s['id']})" for s in sounds), {"sounds": sounds})
        # preview_alarm: domain failures are part of the answer (valid false), not isError.
        try:
            fields, warnings = self.build_alarm_fields(arguments)
        except DomainError as err:
            return _ok(
                f"Not valid: {err.message}",
                {
                    "valid": False,
                    "alarm": None,
                    "next_occurrences": [],
                    "warnings": [],
                    "error": err.as_dict(),
                },
            )
        preview = Alarm(id="", revision=0, **fields)
        upcoming = [iso(at) for at in self.next_occurrences(preview)]
        text = f"Valid. {fields['label']} would ring " + (
            f"next at {upcoming[0]}." if upcoming else "never (disabled or in the past)."
        )
        return _ok(
            text,
            {"valid": True, "alarm": fields, "next_occurrences": upcoming, "warnings": warnings},
        )

    def _mutate(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if name == "create_alarm":
            alarm = self.create(arguments)
            return _ok(
                f"Created {alarm.label} ({alarm.id}) at {alarm.time} {_days_text(alarm)}.",
                {"alarm": self.alarm_with_occurrences(alarm)},
            )
        if name == "update_alarm":
            changes = {k: v for k, v in arguments.items() if k not in {"id", "revision"}}
            if not changes:
                raise DomainError(
                    "validation_failed", "Nothing to change.", {"id": arguments["id"]}
                )
            alarm = self.update(arguments["id"], arguments["revision"], changes)
            return _ok(
                f"Updated {alarm.label} ({alarm.id}), now revision {alarm.revision}.",
                {"alarm": self.alarm_with_occurrences(alarm)},
            )
        if name == "delete_alarm":
            self.delete(arguments["id"], arguments["revision"])
            return _ok(f"Deleted alarm {arguments['id']}.", {"deleted": arguments["id"]})
        if name == "trigger_alarm":
            session = self.trigger(arguments["id"])
            return _ok(
                f"Alarm {session.alarm_id} is ringing.", {"session": session.as_dict(self.tz)}
            )
        if name == "snooze_session":
            session = self.snooze()
            shown = session.as_dict(self.tz)
            return _ok(
                f"Snoozed until {shown['snooze_until']} ({session.snooze_count} so far).",
                {"session": shown},
            )
        # dismiss_session
        if not self.smartphone_dismissal_enabled:
            self._active()  # no session beats a disabled setting in the error order
            raise DomainError(
                "dismissal_disabled",
                "Dismissal from a phone or assistant is switched off on this clock.",
            )
        session = self.dismiss("mcp")
        return _ok("Wake session dismissed.", {"session": session.as_dict(self.tz)})


def _ok(text: str, data: dict[str, Any]) -> dict[str, Any]:
    """A successful tool result: human text plus the same facts as structuredContent."""
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": data,
        "isError": False,
    }


ROBINE = web.AppKey("robine", RobineWake)


# --- HTTP ------------------------------------------------------------------------------------


def _refuse(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(
        rpc_error(None, TRANSPORT_ERROR, message), status=status, headers=headers
    )


def _origin_ok(request: web.Request, device: RobineWake) -> bool:
    origin = request.headers.get("Origin")
    if origin is None:
        return True  # native MCP clients send none
    origin = origin.rstrip("/").lower()
    own = f"{request.scheme}://{request.host}".lower()
    return origin == own or origin in device.allowed_origins


def _auth_ok(request: web.Request, device: RobineWake) -> bool:
    if request.app[FAULTS].revoked:
        return False
    if device.password is None:
        return True
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != device.auth_scheme:
        return False
    if device.auth_scheme == "bearer":
        return hmac.compare_digest(token.strip().encode(), device.password.encode())
    if device.auth_scheme != "basic":
        return False  # a scheme the simulator only names (Digest, ...): nothing answers it
    try:
        decoded = base64.b64decode(token.strip(), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return False
    user, sep, password = decoded.partition(":")
    # Both compared in constant time so a wrong user costs the same as a wrong password.
    user_ok = hmac.compare_digest(user.encode(), ADMIN_USER.encode())
    password_ok = hmac.compare_digest(password.encode(), device.password.encode())
    return bool(sep) and user_ok and password_ok


def _challenge(device: RobineWake) -> str:
    """The 401's WWW-Authenticate: the configured scheme (RFC 9110 §11.6.1 challenge form)."""
    return f'{device.auth_scheme.capitalize()} realm="{AUTH_REALM}"'


def _accepts_json(request: web.Request) -> bool:
    # The device only ever answers JSON, so application/json (or a wildcard) is what it needs;
    # it does not insist on text/event-stream. A missing Accept is refused: MCP requires one.
    accept = request.headers.get("Accept")
    if accept is None:
        return False
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(types & {"application/json", "application/*", "*/*"})


async def _handle_mcp(request: web.Request) -> web.Response:
    """POST /mcp (50-002 "Protocol profile" and "Security boundary"): one JSON-RPC message
    per request, answered synchronously as JSON; notifications get 202 and no body."""
    device = request.app[ROBINE]
    refused = _http_refusal(request, device)
    if refused is not None:
        return refused
    raw = await request.read()
    try:
        message = parse_json_body(raw)
    except RpcFailure as err:
        return web.json_response(rpc_error(None, err.code, err.message), status=400)
    request.app[STATS].record_message(message)
    request_id = message.get("id") if isinstance(message, dict) else None
    invalid = _message_refusal(message, request_id, request.headers.get("MCP-Protocol-Version"))
    if invalid is not None:
        return invalid
    method = message.get("method")
    if method is None and ("result" in message or "error" in message):
        return web.Response(status=202)  # a response to us: the device never asks, so ignore
    if not isinstance(method, str):
        return web.json_response(
            rpc_error(request_id, INVALID_REQUEST, "method must be a string"), status=400
        )
    if "id" not in message:
        device.tick()
        return web.Response(status=202)
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return web.json_response(
            rpc_error(None, INVALID_REQUEST, "id must be a string or an integer"), status=400
        )
    params = message.get("params", {})
    if not isinstance(params, dict):
        return web.json_response(rpc_error(request_id, INVALID_PARAMS, "params must be an object"))
    try:
        result = await _dispatch(device, method, params)
    except RpcFailure as err:
        return web.json_response(
            rpc_error(request_id, err.code, err.message, err.data), status=err.status
        )
    return web.json_response(rpc_result(request_id, result))


def _http_refusal(request: web.Request, device: RobineWake) -> web.Response | None:
    """The HTTP-level answer before the body is read, in the order of the device's plug
    pipeline: rate limit (MCP-008), Origin (MCP-003), credentials (MCP-002), then the route:
    POST only, a JSON body, an Accept that takes JSON."""
    wait = device.rate_limiter.check(request.remote or "?", device.clock.monotonic())
    if wait is not None:
        return _refuse(429, "Too many requests", {"Retry-After": str(max(1, math.ceil(wait)))})
    if not _origin_ok(request, device):
        return _refuse(403, "Origin not allowed")
    if not _auth_ok(request, device):
        return _refuse(401, "Authentication required", {"WWW-Authenticate": _challenge(device)})
    if request.method != "POST":
        # No server-initiated stream (GET) and no session to end (DELETE).
        return _refuse(405, "Method not allowed", {"Allow": "POST"})
    if request.content_type != "application/json":
        return _refuse(415, "Content-Type must be application/json")
    if not _accepts_json(request):
        return _refuse(406, "Accept must include application/json")
    return None


def _message_refusal(message: Any, request_id: Any, version: str | None) -> web.Response | None:
    """An unsupported MCP-Protocol-Version (400, -32602 with the supported versions), a batch
    or anything that is not a JSON-RPC 2.0 object."""
    if version is not None and version not in SUPPORTED_VERSIONS:
        return web.json_response(
            rpc_error(
                request_id,
                INVALID_PARAMS,
                f"Unsupported protocol version {version}; supported: "
                + ", ".join(SUPPORTED_VERSIONS),
                {"supported": list(SUPPORTED_VERSIONS), "requested": version},
            ),
            status=400,
        )
    if isinstance(message, list):
        return web.json_response(
            rpc_error(None, INVALID_REQUEST, "One JSON-RPC message per request; no batches"),
            status=400,
        )
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return web.json_response(
            rpc_error(None, INVALID_REQUEST, "Not a JSON-RPC 2.0 message"), status=400
        )
    return None


async def _dispatch(device: RobineWake, method: str, params: dict[str, Any]) -> dict[str, Any]:
    device.tick()
    if method == "initialize":
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise RpcFailure(INVALID_PARAMS, "initialize needs protocolVersion")
        return {
            # Offer the client's version when we speak it, else our latest (MCP negotiation).
            "protocolVersion": requested if requested in SUPPORTED_VERSIONS else LATEST_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {
                "name": "robine-wake",
                "title": MODEL,
                "version": device.firmware,
                **({"device": info} if (info := device.device_info()) is not None else {}),
            },
            "instructions": "Alarm clock. Read list_alarms before update_alarm or delete_alarm "
            "and pass the revision you read.",
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [dict(tool) for tool in TOOLS]}
    if method == "tools/call":
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcFailure(INVALID_PARAMS, "tools/call needs a tool name")
        arguments = params.get("arguments", {})
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise RpcFailure(INVALID_PARAMS, "arguments must be an object")
        return await device.call_tool(name, arguments)
    raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {method}")


# --- control routes for the demo -------------------------------------------------------------


async def _control_device(request: web.Request) -> web.Response:
    """GET: the device's state and event log. POST {"action": ...}: act on the device as a person.

    Actions: press_snooze, press_dismiss, trigger {id}, add_alarm {fields}, edit_alarm {id,
    fields}, remove_alarm {id}, settings {smartphone_dismissal_enabled, max_volume, time_synced,
    storage_ok}, tick.
    """
    device = request.app[ROBINE]
    result: Any = None
    if request.method == "POST":
        try:
            body = await request.json()
            action = body.get("action")
            if action == "press_snooze":
                result = device.press_snooze()
            elif action == "press_dismiss":
                result = device.press_dismiss()
            elif action == "trigger":
                device.tick()
                result = device.trigger(body["id"]).as_dict(device.tz)
            elif action == "add_alarm":
                result = device.add_alarm(**body.get("fields", {}))
            elif action == "edit_alarm":
                result = device.edit_alarm(body["id"], **body.get("fields", {}))
            elif action == "remove_alarm":
                device.remove_alarm(body["id"])
            elif action == "settings":
                device.set_settings(**body.get("fields", {}))
            elif action == "tick":
                result = device.tick()
            else:
                return web.json_response({"error": f"unknown action {action!r}"}, status=400)
        except DomainError as err:
            return web.json_response({"error": err.as_dict()}, status=409)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            return web.json_response({"error": f"bad request: {err}"}, status=400)
    else:
        device.tick()
    return web.json_response(
        {
            "result": result,
            "now": iso(device.clock.now().astimezone(device.tz)),
            "state": device.state(),
            "events": device.events[-50:],
        }
    )


async def _control_clock(request: web.Request) -> web.Response:
    """POST {"advance": seconds} | {"set": iso} | {"resume": true} moves the device's clock."""
    clock = request.app[CLOCK]
    device = request.app[ROBINE]
    if request.method == "POST":
        try:
            body = await request.json()
            if "set" in body:
                clock.set(datetime.fromisoformat(body["set"]))
            if "advance" in body:
                clock.advance(float(body["advance"]))
            if body.get("resume"):
                clock.resume()
        except (TypeError, ValueError, AttributeError) as err:
            return web.json_response({"error": f"bad request: {err}"}, status=400)
    events = device.tick()
    return web.json_response({"now": iso(clock.now().astimezone(device.tz)), "events": events})


def create_app(**options: Any) -> web.Application:
    """The simulated clock as an aiohttp app; `app[ROBINE]` is its state (options: RobineWake).

    50-002 "Protocol profile": POST /mcp on the device's HTTP listener; the /_sim/ control routes
    are the simulator's.
    """
    clock = options.pop("clock", None) or SimClock()
    app = make_app(clock)
    app[ROBINE] = RobineWake(clock=clock, **options)
    app.router.add_route("*", "/mcp", _handle_mcp)
    app.router.add_route("*", "/_sim/device", _control_device)
    app.router.add_route("*", "/_sim/clock", _control_clock)
    return app


def main() -> None:
    """Run the simulator on its own (loopback only).

    Simulator entry point (`python -m simulators.robine_wake`), no spec section.
    """
    parser = standalone_parser("Robine Wake alarm clock simulator (MCP 50-002)", 8793)
    parser.add_argument("--password", default=None, help="admin password (or Bearer token)")
    parser.add_argument("--auth-scheme", default="basic", help="basic (user admin), bearer, ...")
    parser.add_argument("--timezone", default="Europe/Berlin")
    parser.add_argument("--rate-limit", type=int, default=DEFAULT_RATE_LIMIT)
    parser.add_argument("--allowed-origin", action="append", default=[])
    parser.add_argument("--no-smartphone-dismissal", action="store_true")
    parser.add_argument("--no-starter-alarms", action="store_true")
    parser.add_argument("--device-id", default=None)
    parser.add_argument("--command-delay", type=float, default=0.1)
    parser.add_argument("--ring-timeout", type=float, default=DEFAULT_RING_TIMEOUT)
    args = parser.parse_args()
    if args.host != "127.0.0.1":
        parser.error("the simulator binds 127.0.0.1 only")
    app = create_app(
        password=args.password,
        auth_scheme=args.auth_scheme,
        timezone=args.timezone,
        rate_limit=args.rate_limit,
        allowed_origins=args.allowed_origin,
        smartphone_dismissal=not args.no_smartphone_dismissal,
        starter_alarms=not args.no_starter_alarms,
        device_id=args.device_id,
        command_delay=args.command_delay,
        ring_timeout=args.ring_timeout,
        seed=args.seed,
    )
    run_standalone(app, args.host, args.port, "Robine Wake simulator")


if __name__ == "__main__":
    main()
