"""Everything this integration assumes about the Robine Wake's MCP wire format, in one place.

Spec 50-002 fixes the transport ("Protocol profile") and the tool names ("Tools"); the shapes of
the tools' results, the error codes and the session states are decisions taken where the spec is
silent (its "Tools" section names each tool's effect, not its result). When a real device
disagrees, this module is the only one to change: the rest of the backend sees only the
dataclasses and constants below.

Identity: 50-002 defines no device id. A clock is recognised by what the spec guarantees, its ten
tool names (`SPEC_TOOLS`). When a clock does name itself (`device: {id, name, model, firmware}` in
get_state, else in serverInfo: a variation beyond the spec), `device.id` is the entry's unique id;
otherwise the address is (const.ADDRESS_UID_PREFIX).
Credentials: MCP-002 asks for "administrator credentials" without a scheme; the 401's
WWW-Authenticate names it (`requested_scheme`): Basic (user `admin`) or Bearer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from enum import StrEnum
import re
from typing import Any, Final

# --- transport (spec 50-002) -----------------------------------------------------------------

DEFAULT_PATH: Final = "/mcp"
# Decision: when the device asks for HTTP Basic, the user name of its administrator.
ADMIN_USER: Final = "admin"


class AuthScheme(StrEnum):
    """Credential schemes a clock may ask for in its 401 (RFC 9110 auth-scheme, lowercase)."""

    BASIC = "basic"
    BEARER = "bearer"


# A challenge's scheme: a token at the start or after a comma that is not a parameter (`x=`).
_CHALLENGE_SCHEME = re.compile(r"(?:^|,)\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?=\s|,|$)(?!\s*=)")


def requested_scheme(challenge: str | None) -> AuthScheme | None:
    """The first scheme of a WWW-Authenticate header that we can answer; None: none we can."""
    for match in _CHALLENGE_SCHEME.finditer(challenge or ""):
        name = match.group(1).lower()
        if name in AuthScheme.__members__.values():
            return AuthScheme(name)
    return None


# The device only speaks the initialize handshake (2025-06-18 / 2025-03-26); probing the
# stateless 2026 form first would cost a request of the rate budget on every connect.
PREFER_MODERN_PROTOCOL: Final = False
REQUEST_TIMEOUT: Final = 10.0

# --- tools (spec 50-002) ---------------------------------------------------------------------

TOOL_GET_STATE: Final = "get_state"
TOOL_LIST_ALARMS: Final = "list_alarms"
TOOL_LIST_SOUNDS: Final = "list_sounds"
TOOL_PREVIEW_ALARM: Final = "preview_alarm"
TOOL_CREATE_ALARM: Final = "create_alarm"
TOOL_UPDATE_ALARM: Final = "update_alarm"
TOOL_DELETE_ALARM: Final = "delete_alarm"
TOOL_TRIGGER_ALARM: Final = "trigger_alarm"
TOOL_SNOOZE_SESSION: Final = "snooze_session"
TOOL_DISMISS_SESSION: Final = "dismiss_session"
# What 50-002 guarantees of every clock, and so what recognises one.
SPEC_TOOLS: Final = frozenset(
    {
        TOOL_GET_STATE,
        TOOL_LIST_ALARMS,
        TOOL_LIST_SOUNDS,
        TOOL_PREVIEW_ALARM,
        TOOL_CREATE_ALARM,
        TOOL_UPDATE_ALARM,
        TOOL_DELETE_ALARM,
        TOOL_TRIGGER_ALARM,
        TOOL_SNOOZE_SESSION,
        TOOL_DISMISS_SESSION,
    }
)


def offers_spec_tools(tools: list[dict[str, Any]]) -> bool:
    """Whether a tools/list is a Robine Wake's: every tool 50-002 names (more are fine)."""
    return SPEC_TOOLS.issubset(tool.get("name") for tool in tools if isinstance(tool, Mapping))


# --- alarm fields (decision of the reference page) -------------------------------------------

F_ID: Final = "id"
F_REVISION: Final = "revision"
F_LABEL: Final = "label"
F_TIME: Final = "time"
F_DAYS: Final = "days"
F_DATE: Final = "date"
F_ENABLED: Final = "enabled"
F_SOUND_ID: Final = "sound_id"
F_VOLUME: Final = "volume"
F_RAMP_SECONDS: Final = "ramp_seconds"
F_SNOOZE_MINUTES: Final = "snooze_minutes"
F_MAX_SNOOZES: Final = "max_snoozes"
F_VIBRATION: Final = "vibration"
F_VIBRATION_PROFILE: Final = "profile"
F_VIBRATION_INTENSITY: Final = "intensity"
F_NEXT_OCCURRENCE: Final = "next_occurrence"  # get_state's alarm summary
F_NEXT_OCCURRENCES: Final = "next_occurrences"  # list_alarms / writes / preview

DAYS: Final = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
VIBRATION_PROFILES: Final = ("off", "gentle", "pulse", "strong")
LABEL_MAX_LENGTH: Final = 40
VOLUME_RANGE: Final = (1, 100)
RAMP_SECONDS_RANGE: Final = (0, 600)
SNOOZE_MINUTES_RANGE: Final = (1, 30)
MAX_SNOOZES_RANGE: Final = (0, 10)
VIBRATION_INTENSITY_RANGE: Final = (0, 100)


class SessionState(StrEnum):
    """States of a wake session on the device."""

    RINGING = "ringing"
    SNOOZED = "snoozed"
    ENDED = "ended"


class EndReason(StrEnum):
    """Why a session ended: the clock's off button, a dismiss over MCP, or ringing too long."""

    DISMISSED = "dismissed"
    MCP = "mcp"
    TIMEOUT = "timeout"


# End reasons that mean a person turned the alarm off (the `dismissed` event).
DISMISS_REASONS: Final = frozenset({EndReason.DISMISSED, EndReason.MCP})
HEALTH_OK: Final = "ok"


class ErrorCode(StrEnum):
    """`structuredContent.error.code` of a tool result with isError."""

    VALIDATION_FAILED = "validation_failed"
    NOT_FOUND = "not_found"
    REVISION_CONFLICT = "revision_conflict"
    SESSION_ACTIVE = "session_active"
    NO_ACTIVE_SESSION = "no_active_session"
    SNOOZE_LIMIT_REACHED = "snooze_limit_reached"
    DISMISSAL_DISABLED = "dismissal_disabled"
    RETIRED_FIELD = "retired_field"
    CEILING_EXCEEDED = "ceiling_exceeded"


# Errors caused by what the caller asked for (shown as input errors, not device failures).
CALLER_ERRORS: Final = frozenset(
    {
        ErrorCode.VALIDATION_FAILED,
        ErrorCode.NOT_FOUND,
        ErrorCode.RETIRED_FIELD,
        ErrorCode.CEILING_EXCEEDED,
    }
)
DETAIL_CURRENT_REVISION: Final = "current_revision"


_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$")


# --- native objects --------------------------------------------------------------------------
# Every field beyond the tool names is our model: a value the clock sent in another shape is
# None here (the entity shows unknown), never a failed read. `Reading.problems` says what was
# degraded, for the log.


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    """Who the clock is (a variation beyond 50-002: `device` in get_state or serverInfo)."""

    id: str
    name: str | None
    model: str | None
    firmware: str | None


@dataclass(frozen=True, slots=True)
class Health:
    """get_state.health."""

    status: str | None
    uptime_s: int | None
    time_synced: bool | None
    firmware: str | None
    storage_ok: bool | None

    @property
    def ok(self) -> bool | None:
        """True unless the device reports a problem; None when it reports no status."""
        return None if self.status is None else self.status == HEALTH_OK


@dataclass(frozen=True, slots=True)
class Settings:
    """get_state.settings."""

    smartphone_dismissal_enabled: bool | None
    max_volume: int | None
    timezone: str | None


@dataclass(frozen=True, slots=True)
class Vibration:
    """The tactile profile of an alarm (spec 20-001)."""

    profile: str | None
    intensity: int | None


@dataclass(frozen=True, slots=True)
class Alarm:
    """An alarm. get_state gives the summary; list_alarms and writes add the details.

    Only `id` is certain; a field the clock sent in another shape is None (`label` falls back to
    the id, as entities need a name).
    """

    id: str
    revision: int | None
    label: str
    time: str | None
    days: tuple[str, ...] | None
    enabled: bool | None
    next_occurrence: datetime | None
    date: str | None = None
    sound_id: str | None = None
    volume: int | None = None
    ramp_seconds: int | None = None
    snooze_minutes: int | None = None
    max_snoozes: int | None = None
    vibration: Vibration | None = None
    next_occurrences: tuple[datetime, ...] = ()
    detailed: bool = False

    def with_details_of(self, other: Alarm) -> Alarm:
        """This summary completed with the details of `other` (same id and revision)."""
        return replace(
            other,
            revision=self.revision,
            label=self.label,
            time=self.time,
            days=self.days,
            enabled=self.enabled,
            next_occurrence=self.next_occurrence,
            detailed=True,
        )


@dataclass(frozen=True, slots=True)
class Session:
    """A wake session: ringing → (snoozed → ringing)* → ended. `state` None: one we do not know."""

    id: str
    alarm_id: str | None
    state: SessionState | None
    started_at: datetime | None
    snooze_count: int
    snooze_until: datetime | None = None
    ended_at: datetime | None = None
    end_reason: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceState:
    """get_state's result.

    `alarms` None: no readable alarm list; `alarms_complete` False: some of its entries had no
    readable id (list_alarms may stand in for both). `session_known` False: the active session
    is missing or was sent in a shape we cannot read (null is "no session").
    """

    device: DeviceIdentity | None
    health: Health
    settings: Settings
    alarms: dict[str, Alarm] | None
    active_session: Session | None
    recent_sessions: tuple[Session, ...] | None  # newest first; None: no readable list
    session_known: bool = True
    alarms_complete: bool = True


@dataclass(frozen=True, slots=True)
class AlarmList:
    """list_alarms' result; `complete` False: some entries had no readable id."""

    alarms: dict[str, Alarm]
    complete: bool


@dataclass(frozen=True, slots=True)
class Preview:
    """preview_alarm's result; persists nothing on the device."""

    valid: bool | None
    alarm: dict[str, Any] | None
    next_occurrences: tuple[datetime, ...]
    warnings: tuple[str, ...]
    error: DomainErrorInfo | None = None


@dataclass(frozen=True, slots=True)
class DomainErrorInfo:
    """`structuredContent.error` of a failed tool call."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def current_revision(self) -> int | None:
        """For revision conflicts: the revision the device holds now."""
        value = self.details.get(DETAIL_CURRENT_REVISION)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- parsing ---------------------------------------------------------------------------------


@dataclass
class Reading:
    """How one reply is read: the clock's time zone, and what had to be degraded.

    Times are shown in `tz` (the clock's zone, else Home Assistant's); a time without offset is
    read as wall time there. `problems` are stable texts (no values), so a caller can log each
    once however often the clock repeats it.
    """

    tz: tzinfo
    problems: list[str] = field(default_factory=list)

    def problem(self, where: str, what: str) -> None:
        """Note a value that did not fit the model (once per reply)."""
        if (text := f"{where}: {what}") not in self.problems:
            self.problems.append(text)


_JSON_KINDS: Final = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a text",
    list: "a list",
    dict: "an object",
}


def _kind(value: Any) -> str:
    """What a JSON value is, for a problem's text (never the value: it may change every poll)."""
    if value is None:
        return "missing"
    return _JSON_KINDS.get(type(value), f"a {type(value).__name__}")


# Home Assistant refuses a state longer than this; a longer text is shown as unknown.
STATE_TEXT_LIMIT: Final = 255


def _text(
    reading: Reading,
    data: Mapping[str, Any],
    key: str,
    where: str,
    *,
    expected: bool = False,
    limit: int | None = None,
) -> str | None:
    value = data.get(key)
    if isinstance(value, str) and value:
        if limit is not None and len(value) > limit:
            reading.problem(where, f"{key} is longer than {limit} characters")
            return None
        return value
    if value is not None or expected:
        reading.problem(where, f"{key} is {_kind(value)}, not a text")
    return None


def _integer(
    reading: Reading, data: Mapping[str, Any], key: str, where: str, *, expected: bool = False
) -> int | None:
    value = data.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value is not None or expected:
        reading.problem(where, f"{key} is {_kind(value)}, not an integer")
    return None


def _boolean(
    reading: Reading, data: Mapping[str, Any], key: str, where: str, *, expected: bool = False
) -> bool | None:
    value = data.get(key)
    if isinstance(value, bool):
        return value
    if value is not None or expected:
        reading.problem(where, f"{key} is {_kind(value)}, not a boolean")
    return None


def _object(reading: Reading, value: Any, where: str) -> Mapping[str, Any]:
    """An object, or an empty one (every field then unknown) when the clock sent none."""
    if isinstance(value, Mapping):
        return value
    reading.problem(where, f"is {_kind(value)}, not an object")
    return {}


def parse_time(reading: Reading, value: Any, where: str) -> datetime | None:
    """An ISO-8601 datetime shown in the clock's zone; None when absent or unreadable."""
    if value is None:
        return None
    if not isinstance(value, str):
        reading.problem(where, f"is {_kind(value)}, not an ISO-8601 text")
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        reading.problem(where, "is not an ISO-8601 datetime")
        return None
    if parsed.tzinfo is None:
        # The reference model sends offsets; without one, the clock's own wall time is the
        # only reading that makes sense (ambiguous only within a DST change's hour).
        reading.problem(where, "has no UTC offset (read as the clock's local time)")
        return parsed.replace(tzinfo=reading.tz)
    return parsed.astimezone(reading.tz)


def _times(reading: Reading, value: Any, where: str) -> tuple[datetime, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reading.problem(where, f"is {_kind(value)}, not a list")
        return ()
    return tuple(
        when
        for index, raw in enumerate(value)
        if (when := parse_time(reading, raw, f"{where}[{index}]")) is not None
    )


def parse_identity(value: Any) -> DeviceIdentity | None:
    """The `device` object, or None when the device does not send one."""
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str) or not value["id"]:
        return None

    def text(key: str) -> str | None:
        item = value.get(key)
        return item if isinstance(item, str) else None

    return DeviceIdentity(
        id=value["id"], name=text("name"), model=text("model"), firmware=text("firmware")
    )


def identity_from_server_info(server_info: Mapping[str, Any]) -> DeviceIdentity | None:
    """The fallback identity: serverInfo.device (beyond 50-002), if the server gives one."""
    return parse_identity(server_info.get("device"))


def _native_id(value: Any) -> str | None:
    """An id as text (a number is taken as its digits)."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _days(reading: Reading, value: Any, where: str) -> tuple[str, ...] | None:
    """Weekday names as the model's three-letter keys (monday, Mon → mon); others are dropped."""
    if value is None:
        return ()
    if not isinstance(value, list):
        reading.problem(where, f"days is {_kind(value)}, not a list")
        return None
    days = []
    for item in value:
        key = item[:3].lower() if isinstance(item, str) else None
        if key in DAYS:
            days.append(key)
        else:
            reading.problem(where, "days holds a value that is no weekday")
    return tuple(day for day in DAYS if day in days)


def _vibration(reading: Reading, value: Any, where: str) -> Vibration | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        reading.problem(where, f"vibration is {_kind(value)}, not an object")
        return None
    return Vibration(
        profile=_text(reading, value, F_VIBRATION_PROFILE, f"{where} vibration"),
        intensity=_integer(reading, value, F_VIBRATION_INTENSITY, f"{where} vibration"),
    )


def parse_alarm(reading: Reading, value: Any, where: str = "alarm") -> Alarm | None:
    """An alarm from get_state (summary) or list_alarms / a write (details); None without an id."""
    if not isinstance(value, Mapping):
        reading.problem(where, f"is {_kind(value)}, not an object (skipped)")
        return None
    alarm_id = _native_id(value.get(F_ID))
    if alarm_id is None:
        reading.problem(where, "has no id (skipped)")
        return None
    where = f"alarm {alarm_id}"
    occurrences = _times(reading, value.get(F_NEXT_OCCURRENCES), f"{where} next_occurrences")
    if F_NEXT_OCCURRENCE in value:
        next_occurrence = parse_time(
            reading, value[F_NEXT_OCCURRENCE], f"{where} {F_NEXT_OCCURRENCE}"
        )
    else:
        next_occurrence = occurrences[0] if occurrences else None
    time_of_day = _text(reading, value, F_TIME, where, expected=True)
    if time_of_day is not None and not _HHMM.match(time_of_day):
        reading.problem(where, "time is not HH:MM")
        time_of_day = None
    return Alarm(
        id=alarm_id,
        revision=_integer(reading, value, F_REVISION, where, expected=True),
        label=_text(reading, value, F_LABEL, where, expected=True) or alarm_id,
        time=time_of_day[:5] if time_of_day else None,
        days=_days(reading, value.get(F_DAYS), where),
        enabled=_boolean(reading, value, F_ENABLED, where, expected=True),
        next_occurrence=next_occurrence,
        date=_text(reading, value, F_DATE, where),
        sound_id=_text(reading, value, F_SOUND_ID, where),
        volume=_integer(reading, value, F_VOLUME, where),
        ramp_seconds=_integer(reading, value, F_RAMP_SECONDS, where),
        snooze_minutes=_integer(reading, value, F_SNOOZE_MINUTES, where),
        max_snoozes=_integer(reading, value, F_MAX_SNOOZES, where),
        vibration=_vibration(reading, value.get(F_VIBRATION), where),
        next_occurrences=occurrences,
        detailed=F_SOUND_ID in value,
    )


def _alarms(reading: Reading, value: Any, where: str) -> tuple[dict[str, Alarm] | None, bool]:
    """The alarms of a list (None: no list at all), and whether every entry could be read."""
    if not isinstance(value, list):
        reading.problem(where, f"alarms is {_kind(value)}, not a list")
        return None, False
    alarms = [parse_alarm(reading, item, f"{where} alarms[{i}]") for i, item in enumerate(value)]
    return {alarm.id: alarm for alarm in alarms if alarm is not None}, None not in alarms


def parse_session(reading: Reading, value: Any, where: str = "session") -> Session | None:
    """A wake session; None when it is no object or cannot be told apart from others."""
    if not isinstance(value, Mapping):
        reading.problem(where, f"is {_kind(value)}, not an object")
        return None
    alarm_id = _native_id(value.get("alarm_id"))
    started_raw = value.get("started_at")
    session_id = _native_id(value.get("id"))
    if session_id is None:
        reading.problem(where, "has no id")
        if alarm_id is None or not isinstance(started_raw, str):
            return None
        # Stable across polls, which is all the event log needs.
        session_id = f"{alarm_id}@{started_raw}"
    raw_state = value.get("state")
    state = None
    if isinstance(raw_state, str) and raw_state in SessionState.__members__.values():
        state = SessionState(raw_state)
    else:
        reading.problem(where, "state is not one of ringing, snoozed, ended")
    return Session(
        id=session_id,
        alarm_id=alarm_id,
        state=state,
        started_at=parse_time(reading, started_raw, f"{where} started_at"),
        snooze_count=_integer(reading, value, "snooze_count", where) or 0,
        snooze_until=parse_time(reading, value.get("snooze_until"), f"{where} snooze_until"),
        ended_at=parse_time(reading, value.get("ended_at"), f"{where} ended_at"),
        end_reason=_text(reading, value, "end_reason", where),
    )


def timezone_of_state(value: Any) -> str | None:
    """get_state's settings.timezone (an IANA name), read before the rest needs the zone."""
    if isinstance(value, Mapping) and isinstance(settings := value.get("settings"), Mapping):
        name = settings.get("timezone")
        return name if isinstance(name, str) and name else None
    return None


def parse_state(reading: Reading, value: Any) -> DeviceState:
    """get_state's structured result; whatever cannot be read is None, never a failure."""
    data = _object(reading, value, "get_state")
    health = _object(reading, data.get("health"), "health")
    settings = _object(reading, data.get("settings"), "settings")
    active_raw = data.get("active_session")
    active = None if active_raw is None else parse_session(reading, active_raw, "active_session")
    if "active_session" not in data:
        reading.problem("get_state", "active_session is missing")
    recent_raw = data.get("recent_sessions", [])
    recent: tuple[Session, ...] | None = None
    if isinstance(recent_raw, list):
        parsed = (
            parse_session(reading, item, f"recent_sessions[{index}]")
            for index, item in enumerate(recent_raw)
        )
        recent = tuple(session for session in parsed if session is not None)
    else:
        reading.problem("get_state", f"recent_sessions is {_kind(recent_raw)}, not a list")
    alarms, complete = _alarms(reading, data.get("alarms"), "get_state")
    return DeviceState(
        device=parse_identity(data.get("device")),
        health=Health(
            status=_text(reading, health, "status", "health", expected=True),
            uptime_s=_integer(reading, health, "uptime_s", "health"),
            time_synced=_boolean(reading, health, "time_synced", "health"),
            firmware=_text(reading, health, "firmware", "health", limit=STATE_TEXT_LIMIT),
            storage_ok=_boolean(reading, health, "storage_ok", "health"),
        ),
        settings=Settings(
            smartphone_dismissal_enabled=_boolean(
                reading, settings, "smartphone_dismissal_enabled", "settings"
            ),
            max_volume=_integer(reading, settings, "max_volume", "settings"),
            timezone=_text(reading, settings, "timezone", "settings", limit=STATE_TEXT_LIMIT),
        ),
        alarms=alarms,
        active_session=active,
        recent_sessions=recent,
        session_known=active is not None or ("active_session" in data and active_raw is None),
        alarms_complete=complete,
    )


def parse_alarm_list(reading: Reading, value: Any) -> AlarmList | None:
    """list_alarms' structured result; None when it holds no alarm list."""
    data = _object(reading, value, "list_alarms")
    alarms, complete = _alarms(reading, data.get("alarms"), "list_alarms")
    return None if alarms is None else AlarmList(alarms, complete)


def parse_alarm_result(reading: Reading, value: Any) -> Alarm | None:
    """create_alarm / update_alarm: `{alarm}` (None: the write happened, its echo is unreadable)."""
    return parse_alarm(reading, _object(reading, value, "alarm result").get("alarm"))


def parse_session_result(reading: Reading, value: Any) -> Session | None:
    """trigger_alarm / snooze_session / dismiss_session: `{session}` (None: unreadable echo)."""
    return parse_session(reading, _object(reading, value, "session result").get("session"))


def parse_preview(reading: Reading, value: Any) -> Preview:
    """preview_alarm's structured result (an invalid alarm is an answer, not a failure)."""
    data = _object(reading, value, "preview_alarm")
    alarm = data.get("alarm")
    warnings = data.get("warnings") or []
    error = data.get("error")
    return Preview(
        valid=_boolean(reading, data, "valid", "preview_alarm", expected=True),
        alarm=dict(alarm) if isinstance(alarm, Mapping) else None,
        next_occurrences=_times(reading, data.get(F_NEXT_OCCURRENCES), "preview next_occurrences"),
        warnings=tuple(str(item) for item in warnings) if isinstance(warnings, list) else (),
        error=parse_error(error) if isinstance(error, Mapping) else None,
    )


def parse_error(value: Any) -> DomainErrorInfo | None:
    """The `error` object of a failed tool result, None when absent or shapeless."""
    if not isinstance(value, Mapping):
        return None
    code = value.get("code")
    if not isinstance(code, str):
        return None
    details = value.get("details")
    return DomainErrorInfo(
        code=code,
        message=str(value.get("message", code)),
        details=dict(details) if isinstance(details, Mapping) else {},
    )


def error_of_result(structured: Any) -> DomainErrorInfo | None:
    """The domain error inside a failed tool result's structuredContent."""
    if not isinstance(structured, Mapping):
        return None
    return parse_error(structured.get("error"))


# --- building arguments ----------------------------------------------------------------------


def alarm_arguments(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Tool arguments for create/update/preview from flat HA-side fields.

    HA actions carry the vibration as two flat fields; the device wants one object.
    Unknown keys (retired presence fields included) are passed through so the device itself
    answers them: a client must not pretend a field was accepted.
    """
    arguments: dict[str, Any] = {}
    vibration: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "vibration_profile":
            vibration[F_VIBRATION_PROFILE] = value
        elif key == "vibration_intensity":
            vibration[F_VIBRATION_INTENSITY] = value
        elif key == F_DAYS:
            arguments[F_DAYS] = [day for day in DAYS if day in value]
        else:
            arguments[key] = value
    if vibration:
        if F_VIBRATION_PROFILE not in vibration:
            # The device requires a profile; an intensity alone means "keep it, stronger".
            raise ValueError("vibration_intensity needs vibration_profile")
        arguments[F_VIBRATION] = vibration
    return arguments


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def alarm_as_dict(alarm: Alarm) -> dict[str, Any]:
    """An alarm for attributes, action responses and diagnostics (times in the clock's zone)."""
    result: dict[str, Any] = {
        F_ID: alarm.id,
        F_REVISION: alarm.revision,
        F_LABEL: alarm.label,
        F_TIME: alarm.time,
        F_DAYS: None if alarm.days is None else list(alarm.days),
        F_ENABLED: alarm.enabled,
        F_NEXT_OCCURRENCE: _iso(alarm.next_occurrence),
    }
    if alarm.detailed:
        vibration = alarm.vibration
        result.update(
            {
                F_DATE: alarm.date,
                F_SOUND_ID: alarm.sound_id,
                F_VOLUME: alarm.volume,
                F_RAMP_SECONDS: alarm.ramp_seconds,
                F_SNOOZE_MINUTES: alarm.snooze_minutes,
                F_MAX_SNOOZES: alarm.max_snoozes,
                F_VIBRATION: (
                    None
                    if vibration is None
                    else {
                        F_VIBRATION_PROFILE: vibration.profile,
                        F_VIBRATION_INTENSITY: vibration.intensity,
                    }
                ),
                F_NEXT_OCCURRENCES: [when.isoformat() for when in alarm.next_occurrences],
            }
        )
    return result


def session_as_dict(session: Session) -> dict[str, Any]:
    """A session for action responses (times in the clock's zone); unset fields left out."""
    result: dict[str, Any] = {
        "id": session.id,
        "alarm_id": session.alarm_id,
        "state": None if session.state is None else str(session.state),
        "started_at": _iso(session.started_at),
        "snooze_count": session.snooze_count,
    }
    for key, when in (("snooze_until", session.snooze_until), ("ended_at", session.ended_at)):
        if when is not None:
            result[key] = when.isoformat()
    if session.end_reason is not None:
        result["end_reason"] = session.end_reason
    return result
