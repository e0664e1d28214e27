"""Home Assistant 2026.x's cap on an entry's enabled entities: controls first, the rest waits.

HA refuses a new enabled entity, with a warning, once a config entry has
`MAX_ENABLED_ENTITIES_PER_CONFIG_ENTRY` (10,000) enabled ones. These tests lower the cap to fit
the fake backend (12 plugs: a switch, a binary sensor and an event each). On 2025.4, which has
no cap, the lowered value is ours alone to honour; on the current release HA enforces it too,
and must never have to drop anything.
"""

from __future__ import annotations

import asyncio
from collections import Counter
import dataclasses
from datetime import timedelta
import logging
from unittest.mock import patch

from homeassistant.const import EntityCategory, Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    device_registry as dr,
    entity_platform,
    entity_registry as er,
    issue_registry as ir,
)
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.framework.entity_limit import limit_issue_id
from custom_components.mcp_gateway.framework.publisher import EntityPublisher
from tests.simulation import setup_in_memory

from .test_publisher_and_entities import PRESSES, REACHABLE, SWITCH, Plug
from .test_publisher_slices import PLUGS, ManyPlugs, _setup


def _cap(monkeypatch: pytest.MonkeyPatch, value: int) -> None:
    monkeypatch.setattr(
        entity_platform, "MAX_ENABLED_ENTITIES_PER_CONFIG_ENTRY", value, raising=False
    )


async def _setup_capped(
    hass: HomeAssistant,
    monkeypatch: pytest.MonkeyPatch,
    cap: int,
    runtime: type[ManyPlugs] = ManyPlugs,
    entry: MockConfigEntry | None = None,
) -> MockConfigEntry:
    """The fake backend's entry set up under a cap of `cap` enabled entities."""
    _cap(monkeypatch, cap)
    return await setup_in_memory(hass, runtime, entry, unique_id="fake-1")


def _entities(hass: HomeAssistant, entry: MockConfigEntry) -> list[er.RegistryEntry]:
    return er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)


def _registered(hass: HomeAssistant, entry: MockConfigEntry) -> Counter[str]:
    return Counter(entity.domain for entity in _entities(hass, entry))


def _issue(hass: HomeAssistant, entry: MockConfigEntry) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, limit_issue_id(entry.entry_id))


async def _refresh(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    await entry.runtime_data.coordinator.async_refresh()
    await hass.async_block_till_done()


async def test_over_the_cap_controls_come_first_and_a_repair_says_how_many_wait(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """20 places for 36 entities: every switch, 8 binary sensors; 16 wait, named in a repair."""
    caplog.set_level(logging.WARNING)
    entry = await _setup_capped(hass, monkeypatch, 20)

    assert _registered(hass, entry) == {"switch": PLUGS, "binary_sensor": 8}
    publisher: EntityPublisher = entry.runtime_data.publisher
    assert publisher.withheld == 3 * PLUGS - 20
    issue = _issue(hass, entry)
    assert issue is not None
    assert issue.translation_key == "entity_limit"
    assert issue.severity is ir.IssueSeverity.WARNING
    assert issue.translation_placeholders == {
        "title": entry.title,
        "limit": "20",
        "count": str(3 * PLUGS - 20),
    }
    # HA itself never had to refuse one (on 2026.x it logs when it does).
    assert "Reached the maximum" not in caplog.text
    assert await async_setup_component(hass, "diagnostics", {})
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    assert diagnostics["entities"] == {"derived": 3 * PLUGS, "waiting_for_room": 16}

    # A poll with nothing new changes nothing.
    await _refresh(hass, entry)
    assert _registered(hass, entry) == {"switch": PLUGS, "binary_sensor": 8}


async def test_room_a_user_makes_is_filled_at_once(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Disabling entities frees places: the waiting binary sensors come, then events, within
    a second, without waiting for the backend to refresh (Hubitat's refreshes only when its
    devices change)."""
    entry = await _setup_capped(hass, monkeypatch, 20)
    registry = er.async_get(hass)
    switches = [entity.entity_id for entity in _entities(hass, entry) if entity.domain == "switch"]
    watching = hass.bus.async_listeners().get(er.EVENT_ENTITY_REGISTRY_UPDATED, 0)
    for entity_id in switches[:10]:
        registry.async_update_entity(entity_id, disabled_by=er.RegistryEntryDisabler.USER)
    # One plan for a burst of changes, within a second.
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=2))
    await hass.async_block_till_done()

    assert _registered(hass, entry) == {"switch": PLUGS, "binary_sensor": PLUGS, "event": 6}
    issue = _issue(hass, entry)
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["count"] == str(PLUGS - 6)

    # With room for all, the rest comes and the repair goes.
    _cap(monkeypatch, 100)
    await _refresh(hass, entry)
    assert _registered(hass, entry) == {"switch": PLUGS, "binary_sensor": PLUGS, "event": PLUGS}
    assert entry.runtime_data.publisher.withheld == 0
    assert _issue(hass, entry) is None
    # Nothing waits: the registry is no longer watched.
    assert hass.bus.async_listeners()[er.EVENT_ENTITY_REGISTRY_UPDATED] == watching - 1


async def test_registered_entities_always_come_back(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cap counts new entities only: a reload keeps every registered one, with no repair."""
    entry = await setup_in_memory(hass, ManyPlugs, unique_id="fake-1")
    assert _registered(hass, entry).total() == 3 * PLUGS

    _cap(monkeypatch, 10)
    with patch("custom_components.mcp_gateway.runtime_class", return_value=ManyPlugs):
        assert await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()

    assert _registered(hass, entry).total() == 3 * PLUGS
    states = [
        entity.entity_id
        for entity in _entities(hass, entry)
        if hass.states.get(entity.entity_id) is not None
    ]
    assert len(states) == 3 * PLUGS
    assert entry.runtime_data.publisher.withheld == 0
    assert _issue(hass, entry) is None


async def test_unloading_withdraws_the_repair(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notice belongs to the loaded entry: gone when it unloads."""
    entry = await _setup_capped(hass, monkeypatch, 20)
    assert _issue(hass, entry) is not None

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()

    assert _issue(hass, entry) is None


async def test_a_refresh_while_slicing_is_planned_within_the_cap(
    hass: HomeAssistant,
    monkeypatch: pytest.MonkeyPatch,
    steps: list[tuple[str, int]],
    gate: asyncio.Event,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Plugs that arrive while a large addition runs in slices still count against the cap.

    A large hub's specs are derived while the first slices run; the slices' own re-planning
    must plan the cap again, or everything derived later goes to HA, which drops the excess.
    """
    _cap(monkeypatch, 20)
    caplog.set_level(logging.WARNING)
    gate.clear()
    entry = await _setup(hass)
    runtime: ManyPlugs = entry.runtime_data
    assert runtime.publisher.pending
    for n in range(4):
        runtime.plugs[f"late{n}"] = Plug(f"late{n}", f"Late plug {n}")
    await runtime.coordinator.async_refresh()
    gate.set()
    await hass.async_block_till_done(wait_background_tasks=True)

    total = 3 * (PLUGS + 4)
    assert _registered(hass, entry) == {"switch": PLUGS + 4, "binary_sensor": 4}
    assert runtime.publisher.withheld == total - 20
    issue = _issue(hass, entry)
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["count"] == str(total - 20)
    assert "Reached the maximum" not in caplog.text


DIAGNOSTIC_REACHABLE = dataclasses.replace(REACHABLE, entity_category=EntityCategory.DIAGNOSTIC)
HIDDEN_PRESSES = dataclasses.replace(
    PRESSES, key="hidden_button", entity_registry_enabled_default=False
)


class MixedPlugs(ManyPlugs):
    """Per plug: a switch, a diagnostic binary sensor, an event, and an event disabled by
    default."""

    descriptions = (
        (Platform.SWITCH, SWITCH),
        (Platform.BINARY_SENSOR, DIAGNOSTIC_REACHABLE),
        (Platform.EVENT, PRESSES),
        (Platform.EVENT, HIDDEN_PRESSES),
    )


async def test_primary_entities_before_diagnostics_and_disabled_ones_take_no_place(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """26 places: the switches, then the (primary) events before the diagnostic binary
    sensors; the events disabled by default are registered beside them, taking no place."""
    entry = await _setup_capped(hass, monkeypatch, 2 * PLUGS + 2, MixedPlugs)

    entities = _entities(hass, entry)
    enabled = Counter(entity.domain for entity in entities if entity.disabled_by is None)
    disabled = Counter(entity.domain for entity in entities if entity.disabled_by is not None)
    assert enabled == {"switch": PLUGS, "event": PLUGS, "binary_sensor": 2}
    assert disabled == {"event": PLUGS}
    assert entry.runtime_data.publisher.withheld == PLUGS - 2


async def test_new_entities_added_disabled_wait_for_nothing(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With "enable newly added entities" off, every new entity is registered disabled and
    takes no place: nothing waits, however low the cap."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        data={CONF_BACKEND: ManyPlugs.kind},
        unique_id="fake-1",
        pref_disable_new_entities=True,
    )
    entry = await _setup_capped(hass, monkeypatch, 5, entry=entry)

    entities = _entities(hass, entry)
    assert len(entities) == 3 * PLUGS
    assert all(entity.disabled_by is not None for entity in entities)
    assert entry.runtime_data.publisher.withheld == 0
    assert _issue(hass, entry) is None


async def test_a_device_whose_entities_all_wait_is_not_registered(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Room for 10 switches of 12 plugs: two plugs have no entity yet, and no empty device."""
    entry = await _setup_capped(hass, monkeypatch, 10)

    entities = _entities(hass, entry)
    devices = dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    plugs = [d for d in devices if (DOMAIN, "fake-1_hub") not in d.identifiers]
    assert len(entities) == 10
    assert {d.id for d in plugs} == {entity.device_id for entity in entities}
