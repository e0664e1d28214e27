"""Entity descriptions of the Robine Wake and the specs derived from a poll."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import time
from typing import TYPE_CHECKING, Any

from homeassistant.components.binary_sensor import BinarySensorDeviceClass
from homeassistant.components.sensor import SensorDeviceClass, SensorStateClass
from homeassistant.const import PERCENTAGE, EntityCategory, Platform, UnitOfTime

from ...framework.entity import DeviceSpec, EntitySpec
from ...platforms.binary_sensor import GatewayBinarySensorDescription
from ...platforms.button import GatewayButtonDescription
from ...platforms.event import EventOccurrence, GatewayEventDescription
from ...platforms.sensor import GatewaySensorDescription
from ...platforms.switch import GatewaySwitchDescription
from ...platforms.time import GatewayTimeDescription
from .const import (
    DEFAULT_MODEL,
    DEVICE_KEY,
    EVENT_TYPES,
    MANUFACTURER,
    SESSION_IDLE,
)
from .coordinator import RobineWakeData
from .model import F_TIME, Alarm, SessionState, alarm_as_dict

if TYPE_CHECKING:
    from .runtime import RobineWakeRuntime


SESSION_STATES = [SESSION_IDLE, SessionState.RINGING.value, SessionState.SNOOZED.value]


# --- per alarm -------------------------------------------------------------------------------


async def _set_enabled(runtime: RobineWakeRuntime, alarm: Alarm, on: bool) -> None:
    # The revision this entity last saw guards the write: never overwrite a newer edit.
    if alarm.revision is None:
        raise ValueError("the clock sent this alarm without a revision, so no change is safe")
    await runtime.async_update_alarm(alarm.id, alarm.revision, {"enabled": on})


def _ring_time(alarm: Alarm) -> time | None:
    # The model keeps only an HH:MM it could read; anything else is unknown, not an error.
    if alarm.time is None:
        return None
    try:
        return time.fromisoformat(alarm.time)
    except ValueError:
        return None


async def _set_ring_time(runtime: RobineWakeRuntime, alarm: Alarm, value: time) -> None:
    if alarm.revision is None:
        raise ValueError("the clock sent this alarm without a revision, so no change is safe")
    # The clock keeps minutes (HH:MM): a second it cannot hold is refused, not dropped.
    if value.second or value.microsecond:
        raise ValueError("the clock sets alarms to the minute (HH:MM)")
    await runtime.async_update_alarm(alarm.id, alarm.revision, {F_TIME: value.strftime("%H:%M")})


def _alarm_attributes(alarm: Alarm) -> Mapping[str, Any]:
    attributes = alarm_as_dict(alarm)
    attributes["alarm_id"] = attributes.pop("id")
    return attributes


ALARM_ENABLED = GatewaySwitchDescription[Alarm](
    key="alarm_enabled",
    translation_key="alarm_enabled",
    is_on_fn=lambda alarm: alarm.enabled,
    set_fn=_set_enabled,
    attributes_fn=_alarm_attributes,
)
ALARM_TIME = GatewayTimeDescription[Alarm](
    key="alarm_time",
    translation_key="alarm_time",
    value_fn=_ring_time,
    set_fn=_set_ring_time,
)
ALARM_NEXT = GatewaySensorDescription[Alarm](
    key="alarm_next",
    translation_key="alarm_next",
    device_class=SensorDeviceClass.TIMESTAMP,
    value_fn=lambda alarm: alarm.next_occurrence,
)


# --- per clock -------------------------------------------------------------------------------


def _session_attributes(data: RobineWakeData) -> Mapping[str, Any] | None:
    session = data.state.active_session
    if session is None:
        return None
    alarm = data.alarms.get(session.alarm_id) if session.alarm_id else None
    # Times in the clock's zone (model.Reading), so they read as the clock shows them.
    return {
        "session_id": session.id,
        "alarm_id": session.alarm_id,
        "alarm_label": alarm.label if alarm else None,
        "snooze_count": session.snooze_count,
        "snooze_until": session.snooze_until,
        "started_at": session.started_at,
    }


def _next_alarm_attributes(data: RobineWakeData) -> Mapping[str, Any] | None:
    alarm = data.next_alarm
    return None if alarm is None else {"alarm_id": alarm.id, "alarm_label": alarm.label}


def _events(data: RobineWakeData) -> tuple[EventOccurrence, ...]:
    return data.events


async def _snooze(runtime: RobineWakeRuntime, data: RobineWakeData) -> None:
    await runtime.async_snooze()


async def _dismiss(runtime: RobineWakeRuntime, data: RobineWakeData) -> None:
    await runtime.async_dismiss()


SESSION_STATE = GatewaySensorDescription[RobineWakeData](
    key="session_state",
    translation_key="session_state",
    device_class=SensorDeviceClass.ENUM,
    options=SESSION_STATES,
    value_fn=lambda data: data.session_state,
    attributes_fn=_session_attributes,
)
NEXT_ALARM = GatewaySensorDescription[RobineWakeData](
    key="next_alarm",
    translation_key="next_alarm",
    device_class=SensorDeviceClass.TIMESTAMP,
    value_fn=lambda data: alarm.next_occurrence if (alarm := data.next_alarm) else None,
    attributes_fn=_next_alarm_attributes,
)
SNOOZE = GatewayButtonDescription[RobineWakeData](
    key="snooze", translation_key="snooze", press_fn=_snooze
)
DISMISS = GatewayButtonDescription[RobineWakeData](
    key="dismiss", translation_key="dismiss", press_fn=_dismiss
)
SESSION_EVENT = GatewayEventDescription[RobineWakeData](
    key="wake_session",
    translation_key="wake_session",
    event_types=list(EVENT_TYPES),
    events_fn=_events,
)
HEALTH = GatewayBinarySensorDescription[RobineWakeData](
    key="health",
    translation_key="health",
    device_class=BinarySensorDeviceClass.PROBLEM,
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda data: None if (ok := data.state.health.ok) is None else not ok,
    attributes_fn=lambda data: {"status": data.state.health.status},
)
TIME_SYNCED = GatewayBinarySensorDescription[RobineWakeData](
    key="time_synced",
    translation_key="time_synced",
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda data: data.state.health.time_synced,
)
STORAGE = GatewayBinarySensorDescription[RobineWakeData](
    key="storage",
    translation_key="storage",
    device_class=BinarySensorDeviceClass.PROBLEM,
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda data: None if (ok := data.state.health.storage_ok) is None else not ok,
)
SMARTPHONE_DISMISSAL = GatewayBinarySensorDescription[RobineWakeData](
    key="smartphone_dismissal",
    translation_key="smartphone_dismissal",
    entity_category=EntityCategory.DIAGNOSTIC,
    is_on_fn=lambda data: data.state.settings.smartphone_dismissal_enabled,
)
UPTIME = GatewaySensorDescription[RobineWakeData](
    key="uptime",
    translation_key="uptime",
    device_class=SensorDeviceClass.DURATION,
    native_unit_of_measurement=UnitOfTime.SECONDS,
    state_class=SensorStateClass.MEASUREMENT,
    entity_category=EntityCategory.DIAGNOSTIC,
    # Changes with every poll: only for those who ask for it.
    entity_registry_enabled_default=False,
    value_fn=lambda data: data.state.health.uptime_s,
)
FIRMWARE = GatewaySensorDescription[RobineWakeData](
    key="firmware",
    translation_key="firmware",
    entity_category=EntityCategory.DIAGNOSTIC,
    value_fn=lambda data: data.state.health.firmware,
)
MAX_VOLUME = GatewaySensorDescription[RobineWakeData](
    key="max_volume",
    translation_key="max_volume",
    native_unit_of_measurement=PERCENTAGE,
    entity_category=EntityCategory.DIAGNOSTIC,
    value_fn=lambda data: data.state.settings.max_volume,
)
TIMEZONE = GatewaySensorDescription[RobineWakeData](
    key="timezone",
    translation_key="timezone",
    entity_category=EntityCategory.DIAGNOSTIC,
    entity_registry_enabled_default=False,
    value_fn=lambda data: data.state.settings.timezone,
)

CLOCK_ENTITIES: tuple[tuple[Platform, Any], ...] = (
    (Platform.SENSOR, SESSION_STATE),
    (Platform.SENSOR, NEXT_ALARM),
    (Platform.BUTTON, SNOOZE),
    (Platform.BUTTON, DISMISS),
    (Platform.EVENT, SESSION_EVENT),
    (Platform.BINARY_SENSOR, HEALTH),
    (Platform.BINARY_SENSOR, TIME_SYNCED),
    (Platform.BINARY_SENSOR, STORAGE),
    (Platform.BINARY_SENSOR, SMARTPHONE_DISMISSAL),
    (Platform.SENSOR, UPTIME),
    (Platform.SENSOR, FIRMWARE),
    (Platform.SENSOR, MAX_VOLUME),
    (Platform.SENSOR, TIMEZONE),
)


def alarm_key(alarm_id: str, what: str) -> str:
    """Entity key of an alarm's entity, from the device's alarm id."""
    return f"alarm_{alarm_id}_{what}"


def clock_device(runtime: RobineWakeRuntime, data: RobineWakeData) -> DeviceSpec:
    """The HA device of the clock."""
    identity = data.state.device
    return DeviceSpec(
        key=DEVICE_KEY,
        name=(identity.name if identity and identity.name else runtime.entry.title),
        manufacturer=MANUFACTURER,
        model=(identity.model if identity and identity.model else DEFAULT_MODEL),
        sw_version=data.state.health.firmware or (identity.firmware if identity else None),
        configuration_url=runtime.configuration_url,
    )


def derive_specs(runtime: RobineWakeRuntime) -> list[EntitySpec]:
    """The entities the last poll calls for: the clock's, and three per alarm."""
    coordinator = runtime.coordinator
    data = coordinator.latest
    if data is None:
        return []
    device = clock_device(runtime, data)

    def clock_source() -> RobineWakeData | None:
        return coordinator.latest

    specs = [
        EntitySpec(
            platform=platform,
            key=description.key,
            device=device,
            description=description,
            coordinator=coordinator,
            source=clock_source,
        )
        for platform, description in CLOCK_ENTITIES
    ]
    # Alarms this poll could not read keep their entities (unavailable, their names unchanged).
    labels: dict[str, str | None] = dict.fromkeys(data.unread_alarm_ids)
    labels.update({alarm.id: alarm.label for alarm in data.alarms.values()})
    for alarm_id, label in labels.items():

        def alarm_source(alarm_id: str = alarm_id) -> Alarm | None:
            current = coordinator.latest
            return current.alarms.get(alarm_id) if current is not None else None

        specs.append(
            EntitySpec(
                platform=Platform.SWITCH,
                key=alarm_key(alarm_id, "enabled"),
                device=device,
                description=ALARM_ENABLED,
                coordinator=coordinator,
                source=alarm_source,
                name=label,
            )
        )
        # Each names its alarm ("Work next ring", "Work time"), translated; an alarm not
        # read yet by its id.
        specs.extend(
            EntitySpec(
                platform=platform,
                key=alarm_key(alarm_id, part),
                device=device,
                description=description,
                coordinator=coordinator,
                source=alarm_source,
                translation_placeholders={"alarm": label or alarm_id},
            )
            for platform, part, description in (
                (Platform.SENSOR, "next", ALARM_NEXT),
                (Platform.TIME, "time", ALARM_TIME),
            )
        )
    return specs
