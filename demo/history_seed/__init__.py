"""The demo's past: a week of recorded states for the gateway's entities (demo only).

A home that has run for a while answers "what was the temperature this morning" from Home
Assistant's recorder; the demo's recorder would start empty. The service `demo_history.backfill`
writes a plausible week for every entity of the gateway, through the state machine with the
states' own past times (so the recorder, the history panel and the logbook hold them as they
hold real ones), ending in each entity's current state: temperatures and humidity following the
day, light levels the sun, motion and doors tripping in waking hours, lights on in the
evenings, locks opened in the morning and evening; nothing after the device last reported to
its backend, so the history agrees with the backend's own health check. Each entity's week is
written in one go (nothing of its own can come between), the event loop yielded between
entities; the answer comes once the recorder has written it all and counts it as held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
import math
import random
import time
from typing import Any, Final

from homeassistant.const import (
    STATE_OFF,
    STATE_ON,
    STATE_UNAVAILABLE,
    STATE_UNKNOWN,
    Platform,
)
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    State,
    SupportsResponse,
)
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.recorder import get_instance
from homeassistant.helpers.typing import ConfigType
from homeassistant.util import dt as dt_util

from custom_components.mcp_gateway.framework.entity import key_of_unique_id

DOMAIN: Final = "demo_history"
PLATFORM: Final = "mcp_gateway"
DAYS: Final = 7
# Nothing is written in the last minute: the entities' own states follow.
MARGIN: Final = 60.0

Point = tuple[float, str]
Plan = Callable[[random.Random, State, float, float, Any], list[Point]]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register `demo_history.backfill`."""

    async def backfill(call: ServiceCall) -> ServiceResponse:
        return await async_backfill(hass)

    hass.services.async_register(
        DOMAIN, "backfill", backfill, supports_response=SupportsResponse.ONLY
    )
    return True


async def async_backfill(hass: HomeAssistant, days: int = DAYS) -> dict[str, Any]:
    """Write `days` of states for every enabled entity of the gateway; how many of each."""
    now = time.time()
    start = now - days * 86400
    zone = dt_util.get_default_time_zone()
    registry = er.async_get(hass)
    ids = sorted(
        (entry.entity_id, entry)
        for entry in registry.entities.values()
        if entry.platform == PLATFORM and entry.disabled_by is None
    )
    entities = states = 0
    for entity_id, entry in ids:
        current = hass.states.get(entity_id)
        if current is None or current.state in (STATE_UNAVAILABLE, STATE_UNKNOWN):
            continue  # nothing known of it now: no past to tell either
        # The current state stands from the device's last report (or a minute ago) on.
        end = max(start, min(now - MARGIN, _last_heard(hass, entry)))
        points = plan(current, start, end, zone)
        _replay(hass, current, points, end)
        entities += 1
        states += len(points)
        await asyncio.sleep(0)
    recorder = get_instance(hass)
    await recorder.async_block_till_done()
    # The recorder answers a window with the state at its start only from the oldest state
    # it knows of, which it reads from the database at start and after a purge: a purge
    # that keeps all it holds has it read again, so the week counts from now on.
    await hass.services.async_call("recorder", "purge", {"keep_days": days + 3}, blocking=True)
    await recorder.async_block_till_done()
    return {"entities": entities, "states": states, "days": days}


def _last_heard(hass: HomeAssistant, entry: er.RegistryEntry) -> float:
    """When the entity's device last reported to its backend (the runtime's `last_heard`,
    by the key its unique id ends in); infinity when the backend does not say."""
    config = hass.config_entries.async_get_entry(entry.config_entry_id or "")
    runtime = getattr(config, "runtime_data", None)
    last_heard = getattr(runtime, "last_heard", None)
    if config is None or last_heard is None:
        return math.inf
    try:
        heard = last_heard(Platform(entry.domain), key_of_unique_id(config, entry.unique_id))
    except ValueError:
        return math.inf
    return heard.timestamp() if isinstance(heard, datetime) else math.inf


def _replay(hass: HomeAssistant, current: State, points: list[Point], end: float) -> None:
    """The points in order, then the current state again at `end` (a change only where it
    differs). The first is written even where it is the current state: the week's opening
    row."""
    attributes = dict(current.attributes)
    info = current.state_info
    for number, (when, value) in enumerate(points):
        hass.states.async_set(
            current.entity_id,
            value,
            attributes,
            force_update=number == 0,
            state_info=info,
            timestamp=when,
        )
    hass.states.async_set(
        current.entity_id,
        current.state,
        attributes,
        force_update=not points,
        state_info=info,
        timestamp=end,
    )


def plan(current: State, start: float, end: float, zone: Any) -> list[Point]:
    """An entity's week: (time, state) in time order, from `start`, all before `end`."""
    rng = random.Random(current.entity_id)
    domain = current.domain
    value = current.state
    chooser: Plan | None = None
    if domain == "sensor" and _number(value) is not None:
        chooser = _numeric
    elif domain == "binary_sensor" and value in (STATE_ON, STATE_OFF):
        chooser = _tripping
    elif domain in ("light", "switch", "fan") and value in (STATE_ON, STATE_OFF):
        chooser = _evenings
    elif domain == "lock" and value in ("locked", "unlocked"):
        chooser = _lock
    elif domain == "cover" and value in ("open", "closed"):
        chooser = _cover
    if chooser is None:
        return [(start, value)]  # held all week: settings, modes, timestamps, panels
    points = [p for p in chooser(rng, current, start, end, zone) if start <= p[0] < end]
    return points or [(start, value)]


def _number(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _days(start: float, end: float, zone: Any) -> Iterator[datetime]:
    """Local midnights from the day `start` falls in to the one `end` does."""
    day = datetime.fromtimestamp(start, zone).replace(hour=0, minute=0, second=0, microsecond=0)
    last = datetime.fromtimestamp(end, zone)
    while day <= last:
        yield day
        day = (day + timedelta(days=1, hours=2)).replace(hour=0)  # DST-safe next midnight


def _at(day: datetime, rng: random.Random, first: float, last: float) -> float:
    """A moment between the local hours `first` and `last` of `day`."""
    return (day + timedelta(hours=rng.uniform(first, last))).timestamp()


def _spells(
    rng: random.Random,
    span: tuple[float, float, Any],
    *,
    on: str,
    off: str,
    times: Callable[[random.Random, datetime], list[tuple[float, float]]],
) -> list[Point]:
    """Off, then on/off spells: `times(rng, day)` gives each day's (from, seconds)."""
    start, end, zone = span
    points: list[Point] = [(start, off)]
    for day in _days(start, end, zone):
        for begin, seconds in sorted(times(rng, day)):
            if begin <= points[-1][0]:
                continue
            points += [(begin, on), (begin + seconds, off)]
    return points


def _tripping(
    rng: random.Random, current: State, start: float, end: float, zone: Any
) -> list[Point]:
    """Motion in waking hours (several a day, a few minutes each); doors and windows opened
    a few times a day; anything else held."""
    kind = current.attributes.get("device_class")
    if kind in ("motion", "occupancy", "presence", "moving"):
        count, lasting = (6, 16), (60.0, 300.0)
    elif kind in ("door", "window", "opening", "garage_door", "lock"):
        count, lasting = (2, 6), (30.0, 600.0)
    else:
        return [(start, current.state)]

    def times(rng: random.Random, day: datetime) -> list[tuple[float, float]]:
        return [
            (_at(day, rng, 6.5, 23.0), rng.uniform(*lasting)) for _ in range(rng.randint(*count))
        ]

    return _spells(rng, (start, end, zone), on=STATE_ON, off=STATE_OFF, times=times)


def _evenings(
    rng: random.Random, current: State, start: float, end: float, zone: Any
) -> list[Point]:
    """On most evenings (and some mornings) for a few hours."""

    def times(rng: random.Random, day: datetime) -> list[tuple[float, float]]:
        spells = []
        if rng.random() < 0.4:
            spells.append((_at(day, rng, 6.5, 7.5), rng.uniform(1800, 5400)))
        if rng.random() < 0.8:
            spells.append((_at(day, rng, 18.0, 20.0), rng.uniform(7200, 16000)))
        return spells

    return _spells(rng, (start, end, zone), on=STATE_ON, off=STATE_OFF, times=times)


def _lock(rng: random.Random, current: State, start: float, end: float, zone: Any) -> list[Point]:
    """Unlocked for a minute or two leaving in the morning and coming home in the evening."""

    def times(rng: random.Random, day: datetime) -> list[tuple[float, float]]:
        return [
            (_at(day, rng, 7.5, 8.75), rng.uniform(40, 180)),
            (_at(day, rng, 17.5, 19.5), rng.uniform(60, 300)),
        ]

    return _spells(rng, (start, end, zone), on="unlocked", off="locked", times=times)


def _cover(rng: random.Random, current: State, start: float, end: float, zone: Any) -> list[Point]:
    """Garage doors and gates open a few minutes once or twice a day; blinds and shades
    open in the morning and close at night."""
    kind = current.attributes.get("device_class")

    def times(rng: random.Random, day: datetime) -> list[tuple[float, float]]:
        if kind in ("garage", "gate", "door"):
            return [
                (_at(day, rng, 7.0, 21.0), rng.uniform(120, 480)) for _ in range(rng.randint(1, 2))
            ]
        opened = _at(day, rng, 7.0, 8.5)
        return [(opened, _at(day, rng, 20.0, 22.0) - opened)]

    return _spells(rng, (start, end, zone), on="open", off="closed", times=times)


def _numeric(
    rng: random.Random, current: State, start: float, end: float, zone: Any
) -> list[Point]:
    """Hourly readings that follow the day and end near the current value: temperatures and
    humidity swing gently, light levels follow the sun, batteries drain slowly."""
    value = _number(current.state)
    assert value is not None
    digits = min(2, len(current.state.partition(".")[2]))
    kind = current.attributes.get("device_class")
    unit = current.attributes.get("unit_of_measurement")
    step = 3600.0
    first = math.ceil(start / step) * step
    moments = [first + k * step for k in range(int((end - first) // step) + 1)]

    def hour(when: float) -> float:
        local = datetime.fromtimestamp(when, zone)
        return local.hour + local.minute / 60

    if kind == "battery":
        top = min(100.0, value + rng.randint(1, 4))
        series = [top + (value - top) * (t - start) / (end - start) for t in moments]
    elif kind == "illuminance":
        peak = max(value * 2, 400.0)
        series = [
            max(0.0, peak * math.sin(math.pi * (hour(t) - 6) / 14)) * rng.uniform(0.8, 1.1)
            if 6 <= hour(t) <= 20
            else 0.0
            for t in moments
        ]
    else:
        swing = {"temperature": 2.7 if unit == "°F" else 1.5, "humidity": 6.0}.get(
            str(kind), abs(value) * 0.05
        )

        def wave(when: float) -> float:
            return math.sin(2 * math.pi * (hour(when) - 9) / 24)

        series = [value + swing * (wave(t) - wave(end)) + rng.gauss(0, swing / 6) for t in moments]
        if kind == "humidity":
            series = [min(100.0, max(0.0, v)) for v in series]
    points: list[Point] = []
    for when, reading in zip(moments, series, strict=True):
        text = f"{reading:.{digits}f}" if digits else str(round(reading))
        if not points or points[-1][1] != text:
            points.append((when, text))
    return points
