"""The demo's recorded week (demo/history_seed): a recorder that holds a lived-in week, so the
history questions a user asks of the demo are answered as a real home's are — by the recorder
alone, whole, with nothing to fetch from the backends."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.framework.entity import key_of_unique_id
from demo.history_seed import async_backfill

from .assistant import Home


def _ours(hass: HomeAssistant, domain: str, device_class: str | None = None) -> list[str]:
    """The gateway's enabled entities of a domain (and device class), with their backend."""
    registry = er.async_get(hass)
    found = []
    for entry in registry.entities.values():
        state = hass.states.get(entry.entity_id)
        if entry.platform != DOMAIN or entry.domain != domain or state is None:
            continue
        if device_class is None or state.attributes.get("device_class") == device_class:
            found.append(entry.entity_id)
    return sorted(found)


def _kind(hass: HomeAssistant, entity_id: str) -> str:
    entry = er.async_get(hass).async_get(entity_id)
    assert entry is not None
    assert entry.config_entry_id is not None
    config = hass.config_entries.async_get_entry(entry.config_entry_id)
    assert config is not None
    kind: str = config.runtime_data.kind
    return kind


def _span(points: list[list[Any]]) -> timedelta:
    times = [dt_util.parse_datetime(when) for when, _ in points]
    assert all(t is not None for t in times)
    return max(t for t in times if t) - min(t for t in times if t)


async def test_a_recorded_week_answers_history_from_the_recorder(home: Home) -> None:
    """After the week is written: every entity keeps its current state; "the basement
    temperature this morning", "did the door open", "when was it unlocked" are the recorder's
    answers, whole (no coverage note, nothing fetched from a backend)."""
    hass = home.hass
    ours = [
        e for d in ("sensor", "binary_sensor", "light", "lock", "switch") for e in _ours(hass, d)
    ]
    before = {entity_id: hass.states.get(entity_id) for entity_id in ours}
    written = await async_backfill(hass)
    await async_wait_recording_done(hass)
    assert written["entities"] >= len(ours)
    assert written["states"] > written["entities"] * 10
    for entity_id, state in before.items():
        now = hass.states.get(entity_id)
        assert state is not None
        assert now is not None
        assert now.state == state.state, entity_id
        assert now.attributes == state.attributes, entity_id

    temperature = next(
        e for e in _ours(hass, "sensor", "temperature") if _kind(hass, e) == "homecast"
    )
    data, is_error = await home.assistant.call(
        "get_history", {"entity_ids": [temperature], "hours": 24}
    )
    assert not is_error, data
    assert "coverage" not in data, data
    entity = data["entities"][temperature]
    assert "backend" not in entity
    assert "backend_history" not in entity
    assert entity["points"][0][0] == data["start"]
    assert entity["count"] >= 12
    assert _span(entity["points"]) >= timedelta(hours=12)
    assert entity["points"][-1][1] == hass.states.get(temperature).state  # type: ignore[union-attr]

    motion = _ours(hass, "binary_sensor", "motion")[:5]
    locks = _ours(hass, "lock")
    # A setting that held all week is held from the week's start too.
    held = [e for e in _ours(hass, "select") if hass.states.get(e).state != "unknown"][:1]  # type: ignore[union-attr]
    assert held
    data, is_error = await home.assistant.call(
        "get_history", {"entity_ids": [*motion, *locks, *held], "hours": 48}
    )
    assert not is_error, data
    assert "coverage" not in data, data
    assert any(
        state == "on" for entity in motion for _, state in data["entities"][entity]["points"]
    ), data
    for lock in locks:
        states = [state for _, state in data["entities"][lock]["points"]]
        assert {"unlocked", "locked"} <= set(states), (lock, states)


async def test_the_recorded_week_ends_when_the_device_last_reported(home: Home) -> None:
    """A hub device silent for a day has no recorded change after its last report: the
    history the demo shows agrees with the hub's own account of when it last heard from it."""
    hass = home.hass
    registry = er.async_get(hass)
    now = dt_util.utcnow()
    silent: dict[str, Any] = {}
    for domain in ("sensor", "binary_sensor", "light", "lock", "switch"):
        for entity_id in _ours(hass, domain):
            if _kind(hass, entity_id) != "hubitat":
                continue
            entry = registry.async_get(entity_id)
            assert entry is not None
            assert entry.config_entry_id is not None
            config = hass.config_entries.async_get_entry(entry.config_entry_id)
            assert config is not None
            heard = config.runtime_data.last_heard(
                entry.domain, key_of_unique_id(config, entry.unique_id)
            )
            if heard is not None and now - timedelta(days=6) < heard < now - timedelta(days=1):
                silent[entity_id] = heard
    assert silent, "the test hub has devices silent for more than a day"
    await async_backfill(hass)
    await async_wait_recording_done(hass)
    data, is_error = await home.assistant.call(
        "get_history", {"entity_ids": sorted(silent)[:20], "hours": 168}
    )
    assert not is_error, data
    for entity_id, entity in data["entities"].items():
        times = [dt_util.parse_datetime(when) for when, _ in entity["points"]]
        assert all(t is not None and t <= silent[entity_id] for t in times), (
            entity_id,
            silent[entity_id],
            entity["points"][-3:],
        )
