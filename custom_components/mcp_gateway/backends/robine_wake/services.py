"""Actions of the Robine Wake backend: alarm edits guarded by the revision the caller saw."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import time
import re
from typing import TYPE_CHECKING, Any, Final, cast

from homeassistant.core import ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import config_validation as cv
import voluptuous as vol

from ...core.const import DOMAIN
from ...framework.entity import backend_errors
from ...permissions.actions import (
    ATTR_CONFIG_ENTRY_ID,
    BackendAction,
    async_authorize,
    entry_runtime,
)
from . import model
from .api import RevisionConflict, RobineDomainError
from .const import KIND

if TYPE_CHECKING:
    from .runtime import RobineWakeRuntime

ATTR_ALARM_ID = "alarm_id"
ATTR_REVISION = "revision"

SERVICE_CREATE_ALARM = "create_alarm"
SERVICE_UPDATE_ALARM = "update_alarm"
SERVICE_DELETE_ALARM = "delete_alarm"
SERVICE_TRIGGER_ALARM = "trigger_alarm"
SERVICE_PREVIEW_ALARM = "preview_alarm"

_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$")


def _alarm_time(value: Any) -> str:
    """HH:MM (a time selector sends HH:MM:SS; the clock has no seconds)."""
    if isinstance(value, time):
        return value.strftime("%H:%M")
    text = str(value).strip()
    if not _HHMM.match(text):
        raise vol.Invalid("time must be HH:MM (24 h)")
    return text[:5]


def _alarm_date(value: Any) -> str:
    return cv.date(value).isoformat()


def _int_range(bounds: tuple[int, int]) -> Callable[[Any], Any]:
    # A validator, not vol.All: that class is generic in probatio (HA 2026.x) but not in voluptuous.
    return vol.All(vol.Coerce(int), vol.Range(min=bounds[0], max=bounds[1]))


_ALARM_FIELDS: dict[Any, Any] = {
    vol.Optional(model.F_DAYS): vol.All(cv.ensure_list, [vol.In(model.DAYS)]),
    vol.Optional(model.F_DATE): vol.Any(None, _alarm_date),
    vol.Optional(model.F_ENABLED): cv.boolean,
    vol.Optional(model.F_SOUND_ID): vol.All(cv.string, vol.Length(min=1)),
    vol.Optional(model.F_VOLUME): _int_range(model.VOLUME_RANGE),
    vol.Optional(model.F_RAMP_SECONDS): _int_range(model.RAMP_SECONDS_RANGE),
    vol.Optional(model.F_SNOOZE_MINUTES): _int_range(model.SNOOZE_MINUTES_RANGE),
    vol.Optional(model.F_MAX_SNOOZES): _int_range(model.MAX_SNOOZES_RANGE),
    vol.Optional("vibration_profile"): vol.In(model.VIBRATION_PROFILES),
    vol.Optional("vibration_intensity"): _int_range(model.VIBRATION_INTENSITY_RANGE),
}
_LABEL = vol.All(cv.string, vol.Length(min=1, max=model.LABEL_MAX_LENGTH))
_ENTRY = {vol.Required(ATTR_CONFIG_ENTRY_ID): cv.string}
_ALARM_ID = {vol.Required(ATTR_ALARM_ID): cv.string}
_REVISION = {vol.Required(ATTR_REVISION): vol.All(vol.Coerce(int), vol.Range(min=1))}

CREATE_SCHEMA = vol.Schema(
    {
        **_ENTRY,
        vol.Required(model.F_LABEL): _LABEL,
        vol.Required(model.F_TIME): _alarm_time,
        **_ALARM_FIELDS,
    }
)
PREVIEW_SCHEMA = CREATE_SCHEMA
UPDATE_SCHEMA = vol.Schema(
    {
        **_ENTRY,
        **_ALARM_ID,
        **_REVISION,
        vol.Optional(model.F_LABEL): _LABEL,
        vol.Optional(model.F_TIME): _alarm_time,
        **_ALARM_FIELDS,
    }
)
DELETE_SCHEMA = vol.Schema({**_ENTRY, **_ALARM_ID, **_REVISION})
TRIGGER_SCHEMA = vol.Schema({**_ENTRY, **_ALARM_ID})

_NOT_FIELDS = {ATTR_CONFIG_ENTRY_ID, ATTR_ALARM_ID, ATTR_REVISION}


def _fields(call: ServiceCall) -> dict[str, Any]:
    return {key: value for key, value in call.data.items() if key not in _NOT_FIELDS}


async def _authorized(call: ServiceCall, tool: str) -> RobineWakeRuntime:
    """The entry's runtime, once the caller may run `tool` (the gateway's policy)."""
    runtime = _runtime(call)
    await async_authorize(call, runtime, tool, call.data)
    return runtime


def _runtime(call: ServiceCall) -> RobineWakeRuntime:
    runtime = entry_runtime(
        call,
        KIND,
        not_found="robine_wake_entry_not_found",
        not_loaded="robine_wake_entry_not_loaded",
    )
    return cast("RobineWakeRuntime", runtime)


async def _run[T](runtime: RobineWakeRuntime, action: Awaitable[T]) -> T:
    """The clock's own refusals first, then the integration's shared error boundary."""
    with backend_errors(runtime):
        try:
            return await action
        except RevisionConflict as err:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="robine_wake_revision_conflict",
                translation_placeholders={
                    "alarm_id": err.alarm_id,
                    "current_revision": (
                        "unknown" if err.current_revision is None else str(err.current_revision)
                    ),
                    "sent_revision": str(err.sent_revision),
                },
            ) from err
        except RobineDomainError as err:
            error_class = (
                ServiceValidationError if err.code in model.CALLER_ERRORS else HomeAssistantError
            )
            raise error_class(
                translation_domain=DOMAIN,
                translation_key="robine_wake_rejected",
                translation_placeholders={"code": err.code, "message": err.info.message},
            ) from err


def _alarm_dict(alarm: model.Alarm | None) -> dict[str, Any] | None:
    # None: the clock did the write but its echo was unreadable (the next poll shows it).
    return None if alarm is None else model.alarm_as_dict(alarm)


async def _create(call: ServiceCall) -> ServiceResponse:
    runtime = await _authorized(call, model.TOOL_CREATE_ALARM)
    alarm = await _run(runtime, runtime.async_create_alarm(_fields(call)))
    return {"alarm": _alarm_dict(alarm)}


async def _update(call: ServiceCall) -> ServiceResponse:
    runtime = await _authorized(call, model.TOOL_UPDATE_ALARM)
    changes = _fields(call)
    if not changes:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="robine_wake_nothing_to_change"
        )
    alarm = await _run(
        runtime,
        runtime.async_update_alarm(call.data[ATTR_ALARM_ID], call.data[ATTR_REVISION], changes),
    )
    return {"alarm": _alarm_dict(alarm)}


async def _delete(call: ServiceCall) -> ServiceResponse:
    runtime = await _authorized(call, model.TOOL_DELETE_ALARM)
    alarm_id = call.data[ATTR_ALARM_ID]
    await _run(runtime, runtime.async_delete_alarm(alarm_id, call.data[ATTR_REVISION]))
    return {"deleted": alarm_id}


async def _trigger(call: ServiceCall) -> ServiceResponse:
    runtime = await _authorized(call, model.TOOL_TRIGGER_ALARM)
    session = await _run(runtime, runtime.async_trigger_alarm(call.data[ATTR_ALARM_ID]))
    return {"session": None if session is None else model.session_as_dict(session)}


async def _preview(call: ServiceCall) -> ServiceResponse:
    runtime = await _authorized(call, model.TOOL_PREVIEW_ALARM)
    preview = await _run(runtime, runtime.async_preview_alarm(_fields(call)))
    return {
        "valid": preview.valid,
        "alarm": preview.alarm,
        "next_occurrences": [when.isoformat() for when in preview.next_occurrences],
        "warnings": list(preview.warnings),
        "error": (
            None
            if preview.error is None
            else {"code": preview.error.code, "message": preview.error.message}
        ),
    }


ACTIONS: Final = (
    BackendAction(
        SERVICE_CREATE_ALARM,
        CREATE_SCHEMA,
        _create,
        SupportsResponse.OPTIONAL,
    ),
    BackendAction(
        SERVICE_UPDATE_ALARM,
        UPDATE_SCHEMA,
        _update,
        SupportsResponse.OPTIONAL,
    ),
    BackendAction(
        SERVICE_DELETE_ALARM,
        DELETE_SCHEMA,
        _delete,
        SupportsResponse.OPTIONAL,
    ),
    BackendAction(
        SERVICE_TRIGGER_ALARM,
        TRIGGER_SCHEMA,
        _trigger,
        SupportsResponse.OPTIONAL,
    ),
    BackendAction(
        SERVICE_PREVIEW_ALARM,
        PREVIEW_SCHEMA,
        _preview,
        SupportsResponse.ONLY,
    ),
)
