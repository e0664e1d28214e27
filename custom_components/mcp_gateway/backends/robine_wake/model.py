"""Everything this integration assumes about the Robine Wake's MCP wire format, in one place.

Spec 50-002 fixes the transport and the tool names; the shapes of the tools' results, the error
codes and the session states are decisions of reference/robine-wake.md (the spec is silent about
them). When a real device disagrees, this module is the only one to change: the rest of the
backend sees only the dataclasses and constants below.

Identity: 50-002 defines no device id. A clock is recognised by what the spec guarantees, its ten
tool names (`SPEC_TOOLS`). When a clock does name itself (`device: {id, name, model, firmware}` in
get_state, else in serverInfo: a variation beyond the spec), `device.id` is the entry's unique id;
otherwise the address is (const.ADDRESS_UID_PREFIX).
Credentials: MCP-002 asks for "administrator credentials" without a scheme; the 401's
WWW-Authenticate names it (`requested_scheme`): Basic (user `admin`) or Bearer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
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


# 50-002: mcp_max_requests_per_minute defaults to 120 per source address.
DEVICE_RATE_LIMIT_PER_MINUTE: Final = 120
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

# The fields a client may write (create, update, preview), in the device's order.
ALARM_WRITABLE_FIELDS: Final = (
    F_LABEL,
    F_TIME,
    F_DAYS,
    F_DATE,
    F_ENABLED,
    F_SOUND_ID,
    F_VOLUME,
    F_RAMP_SECONDS,
    F_SNOOZE_MINUTES,
    F_MAX_SNOOZES,
    F_VIBRATION,
)
DAYS: Final = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
VIBRATION_PROFILES: Final = ("off", "gentle", "pulse", "strong")
LABEL_MAX_LENGTH: Final = 40
VOLUME_RANGE: Final = (1, 100)
RAMP_SECONDS_RANGE: Final = (0, 600)
SNOOZE_MINUTES_RANGE: Final = (1, 30)
MAX_SNOOZES_RANGE: Final = (0, 10)
VIBRATION_INTENSITY_RANGE: Final = (0, 100)
# 50-002 "retired presence policies": rejected by the device on every write. Listed so the
# gateway can explain the refusal; HA's own actions never offer them.
RETIRED_FIELDS: Final = ("presence_policy", "presence_dismissal", "wake_on_presence")


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


class ModelError(ValueError):
    """A reply that does not have the shape this module expects."""


# --- native objects --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeviceIdentity:
    """Who the clock is (our extension of get_state and serverInfo: `device`)."""

    id: str
    name: str | None
    model: str | None
    firmware: str | None


@dataclass(frozen=True, slots=True)
class Health:
    """get_state.health."""

    status: str
    uptime_s: int | None
    time_synced: bool | None
    firmware: str | None
    storage_ok: bool | None

    @property
    def ok(self) -> bool:
        """True unless the device reports itself degraded."""
        return self.status == HEALTH_OK


@dataclass(frozen=True, slots=True)
class Settings:
    """get_state.settings."""

    smartphone_dismissal_enabled: bool | None
    max_volume: int | None
    timezone: str | None


@dataclass(frozen=True, slots=True)
class Vibration:
    """The tactile profile of an alarm (spec 20-001)."""

    profile: str
    intensity: int


@dataclass(frozen=True, slots=True)
class Alarm:
    """An alarm. get_state gives the summary; list_alarms and writes add the details."""

    id: str
    revision: int
    label: str
    time: str
    days: tuple[str, ...]
    enabled: bool
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
        return Alarm(
            id=self.id,
            revision=self.revision,
            label=self.label,
            time=self.time,
            days=self.days,
            enabled=self.enabled,
            next_occurrence=self.next_occurrence,
            date=other.date,
            sound_id=other.sound_id,
            volume=other.volume,
            ramp_seconds=other.ramp_seconds,
            snooze_minutes=other.snooze_minutes,
            max_snoozes=other.max_snoozes,
            vibration=other.vibration,
            next_occurrences=other.next_occurrences,
            detailed=True,
        )


@dataclass(frozen=True, slots=True)
class Session:
    """A wake session: ringing → (snoozed → ringing)* → ended."""

    id: str
    alarm_id: str
    state: SessionState
    started_at: datetime | None
    snooze_count: int
    snooze_until: datetime | None = None
    ended_at: datetime | None = None
    end_reason: str | None = None


@dataclass(frozen=True, slots=True)
class DeviceState:
    """get_state's result."""

    device: DeviceIdentity | None
    health: Health
    settings: Settings
    alarms: dict[str, Alarm]
    active_session: Session | None
    recent_sessions: tuple[Session, ...]  # newest first, as the device lists them


@dataclass(frozen=True, slots=True)
class Sound:
    """list_sounds entry."""

    id: str
    name: str
    duration_s: int | None


@dataclass(frozen=True, slots=True)
class Preview:
    """preview_alarm's result; persists nothing on the device."""

    valid: bool
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


def _obj(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ModelError(f"{what} is not an object")
    return value


def _str(data: Mapping[str, Any], key: str, what: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise ModelError(f"{what}.{key} is not a non-empty string")
    return value


def _int(data: Mapping[str, Any], key: str, what: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelError(f"{what}.{key} is not an integer")
    return value


def _opt_int(data: Mapping[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _opt_str(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _opt_bool(data: Mapping[str, Any], key: str) -> bool | None:
    value = data.get(key)
    return value if isinstance(value, bool) else None


def parse_time(value: Any, what: str) -> datetime | None:
    """An ISO-8601 datetime with offset (None stays None); naive times are a model error."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ModelError(f"{what} is not a string")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as err:
        raise ModelError(f"{what} is not an ISO-8601 datetime") from err
    if parsed.tzinfo is None:
        # Without an offset a local time is ambiguous around DST changes.
        raise ModelError(f"{what} has no UTC offset")
    return parsed


def parse_identity(value: Any) -> DeviceIdentity | None:
    """The `device` object, or None when the device does not send one."""
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), str) or not value["id"]:
        return None
    return DeviceIdentity(
        id=value["id"],
        name=_opt_str(value, "name"),
        model=_opt_str(value, "model"),
        firmware=_opt_str(value, "firmware"),
    )


def identity_from_server_info(server_info: Mapping[str, Any]) -> DeviceIdentity | None:
    """The fallback identity: serverInfo.device (our extension), if the server gives one."""
    return parse_identity(server_info.get("device"))


def parse_alarm(value: Any) -> Alarm:
    """An alarm from get_state (summary) or list_alarms / a write (with details)."""
    data = _obj(value, "alarm")
    days = data.get(F_DAYS, [])
    if not isinstance(days, list) or not all(isinstance(day, str) for day in days):
        raise ModelError("alarm.days is not a list of strings")
    enabled = data.get(F_ENABLED)
    if not isinstance(enabled, bool):
        raise ModelError("alarm.enabled is not a boolean")
    occurrences_raw = data.get(F_NEXT_OCCURRENCES)
    detailed = F_SOUND_ID in data
    occurrences: tuple[datetime, ...] = ()
    if isinstance(occurrences_raw, list):
        occurrences = tuple(
            when
            for index, raw in enumerate(occurrences_raw)
            if (when := parse_time(raw, f"alarm.next_occurrences[{index}]")) is not None
        )
    if F_NEXT_OCCURRENCE in data:
        next_occurrence = parse_time(data[F_NEXT_OCCURRENCE], "alarm.next_occurrence")
    else:
        next_occurrence = occurrences[0] if occurrences else None
    vibration_raw = data.get(F_VIBRATION)
    vibration = None
    if isinstance(vibration_raw, Mapping):
        vibration = Vibration(
            profile=str(vibration_raw.get(F_VIBRATION_PROFILE, VIBRATION_PROFILES[0])),
            intensity=_opt_int(vibration_raw, F_VIBRATION_INTENSITY) or 0,
        )
    return Alarm(
        id=_str(data, F_ID, "alarm"),
        revision=_int(data, F_REVISION, "alarm"),
        label=str(data.get(F_LABEL, "")),
        time=_str(data, F_TIME, "alarm"),
        days=tuple(days),
        enabled=enabled,
        next_occurrence=next_occurrence,
        date=_opt_str(data, F_DATE),
        sound_id=_opt_str(data, F_SOUND_ID),
        volume=_opt_int(data, F_VOLUME),
        ramp_seconds=_opt_int(data, F_RAMP_SECONDS),
        snooze_minutes=_opt_int(data, F_SNOOZE_MINUTES),
        max_snoozes=_opt_int(data, F_MAX_SNOOZES),
        vibration=vibration,
        next_occurrences=occurrences,
        detailed=detailed,
    )


def parse_session(value: Any) -> Session:
    """A wake session."""
    data = _obj(value, "session")
    raw_state = data.get("state")
    if not isinstance(raw_state, str) or raw_state not in SessionState:
        raise ModelError(f"session.state {raw_state!r} is unknown")
    state = SessionState(raw_state)
    return Session(
        id=_str(data, "id", "session"),
        alarm_id=str(data.get("alarm_id", "")),
        state=state,
        started_at=parse_time(data.get("started_at"), "session.started_at"),
        snooze_count=_opt_int(data, "snooze_count") or 0,
        snooze_until=parse_time(data.get("snooze_until"), "session.snooze_until"),
        ended_at=parse_time(data.get("ended_at"), "session.ended_at"),
        end_reason=_opt_str(data, "end_reason"),
    )


def parse_state(value: Any) -> DeviceState:
    """get_state's structured result."""
    data = _obj(value, "get_state result")
    health = _obj(data.get("health"), "health")
    settings = _obj(data.get("settings", {}), "settings")
    alarms_raw = data.get("alarms")
    if not isinstance(alarms_raw, list):
        raise ModelError("get_state result has no alarms list")
    alarms = {alarm.id: alarm for alarm in map(parse_alarm, alarms_raw)}
    active_raw = data.get("active_session")
    recent_raw = data.get("recent_sessions", [])
    if not isinstance(recent_raw, list):
        raise ModelError("recent_sessions is not a list")
    return DeviceState(
        device=parse_identity(data.get("device")),
        health=Health(
            status=_str(health, "status", "health"),
            uptime_s=_opt_int(health, "uptime_s"),
            time_synced=_opt_bool(health, "time_synced"),
            firmware=_opt_str(health, "firmware"),
            storage_ok=_opt_bool(health, "storage_ok"),
        ),
        settings=Settings(
            smartphone_dismissal_enabled=_opt_bool(settings, "smartphone_dismissal_enabled"),
            max_volume=_opt_int(settings, "max_volume"),
            timezone=_opt_str(settings, "timezone"),
        ),
        alarms=alarms,
        active_session=parse_session(active_raw) if active_raw is not None else None,
        recent_sessions=tuple(parse_session(item) for item in recent_raw),
    )


def parse_alarm_list(value: Any) -> list[Alarm]:
    """list_alarms' structured result."""
    alarms = _obj(value, "list_alarms result").get("alarms")
    if not isinstance(alarms, list):
        raise ModelError("list_alarms result has no alarms list")
    return [parse_alarm(item) for item in alarms]


def parse_alarm_result(value: Any) -> Alarm:
    """create_alarm / update_alarm: `{alarm}`."""
    return parse_alarm(_obj(value, "alarm result").get("alarm"))


def parse_session_result(value: Any) -> Session:
    """trigger_alarm / snooze_session / dismiss_session: `{session}`."""
    return parse_session(_obj(value, "session result").get("session"))


def parse_sounds(value: Any) -> list[Sound]:
    """list_sounds' structured result."""
    sounds = _obj(value, "list_sounds result").get("sounds")
    if not isinstance(sounds, list):
        raise ModelError("list_sounds result has no sounds list")
    result = []
    for item in sounds:
        data = _obj(item, "sound")
        sound_id = _str(data, "id", "sound")
        result.append(
            Sound(
                id=sound_id,
                name=_opt_str(data, "name") or sound_id,
                duration_s=_opt_int(data, "duration_s"),
            )
        )
    return result


def parse_preview(value: Any) -> Preview:
    """preview_alarm's structured result (an invalid alarm is an answer, not a failure)."""
    data = _obj(value, "preview result")
    valid = data.get("valid")
    if not isinstance(valid, bool):
        raise ModelError("preview result has no boolean 'valid'")
    occurrences = data.get(F_NEXT_OCCURRENCES) or []
    if not isinstance(occurrences, list):
        raise ModelError("preview next_occurrences is not a list")
    alarm = data.get("alarm")
    warnings = data.get("warnings") or []
    error = data.get("error")
    return Preview(
        valid=valid,
        alarm=dict(alarm) if isinstance(alarm, Mapping) else None,
        next_occurrences=tuple(
            when
            for index, raw in enumerate(occurrences)
            if (when := parse_time(raw, f"preview.next_occurrences[{index}]")) is not None
        ),
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


def alarm_as_dict(alarm: Alarm) -> dict[str, Any]:
    """An alarm for action responses and diagnostics (HA-side, JSON-friendly)."""
    result: dict[str, Any] = {
        F_ID: alarm.id,
        F_REVISION: alarm.revision,
        F_LABEL: alarm.label,
        F_TIME: alarm.time,
        F_DAYS: list(alarm.days),
        F_ENABLED: alarm.enabled,
        F_NEXT_OCCURRENCE: alarm.next_occurrence.isoformat() if alarm.next_occurrence else None,
    }
    if alarm.detailed:
        result.update(
            {
                F_DATE: alarm.date,
                F_SOUND_ID: alarm.sound_id,
                F_VOLUME: alarm.volume,
                F_RAMP_SECONDS: alarm.ramp_seconds,
                F_SNOOZE_MINUTES: alarm.snooze_minutes,
                F_MAX_SNOOZES: alarm.max_snoozes,
                F_VIBRATION: (
                    {
                        F_VIBRATION_PROFILE: alarm.vibration.profile,
                        F_VIBRATION_INTENSITY: alarm.vibration.intensity,
                    }
                    if alarm.vibration
                    else None
                ),
                F_NEXT_OCCURRENCES: [when.isoformat() for when in alarm.next_occurrences],
            }
        )
    return result
