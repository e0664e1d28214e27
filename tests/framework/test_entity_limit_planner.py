"""The entity limit's planning on its own: what waits under HA 2026.x's cap, and why.

No backend and no publisher: the planner is given the specs an entry wants and which of them
were handed to a platform, and the registry is arranged by hand. The cap is lowered (or taken
away) per test; on 2025.4, which has no cap, the lowered value is the planner's alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any, cast

from homeassistant.const import EntityCategory, Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import (
    entity_platform,
    entity_registry as er,
    issue_registry as ir,
)
from homeassistant.helpers.entity import EntityDescription
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.framework.entity import DeviceSpec, EntitySpec, SpecKey, spec_key
from custom_components.mcp_gateway.framework.entity_limit import (
    EntityLimitPlanner,
    limit_issue_id,
    precedence,
)

DEVICE = DeviceSpec(key="device", name="Device")
PRIMARY = EntityDescription(key="value")
CONFIG = replace(PRIMARY, entity_category=EntityCategory.CONFIG)
DIAGNOSTIC = replace(PRIMARY, entity_category=EntityCategory.DIAGNOSTIC)
HIDDEN = replace(PRIMARY, entity_registry_enabled_default=False)


def _spec(platform: Platform, key: str, description: EntityDescription = PRIMARY) -> EntitySpec:
    return EntitySpec(
        platform=platform,
        key=key,
        device=DEVICE,
        description=description,
        coordinator=cast(Any, None),  # the planner reads no data
        source=lambda: None,
    )


def _specs(*specs: EntitySpec) -> dict[SpecKey, EntitySpec]:
    return {spec_key(spec): spec for spec in specs}


def _unique_id(spec: EntitySpec) -> str:
    return f"uid_{spec.key}"


def _keys(*specs: EntitySpec) -> set[SpecKey]:
    return {spec_key(spec) for spec in specs}


class Planned:
    """A planner for an entry, with a record of the new plans it asks for."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.replans = 0
        self.planner = EntityLimitPlanner(hass, entry, _unique_id, self._replan)

    @callback
    def _replan(self) -> None:
        self.replans += 1


@pytest.fixture
def entry(hass: HomeAssistant) -> MockConfigEntry:
    entry = MockConfigEntry(domain=DOMAIN, title="Hub", unique_id="hub-1")
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
async def planned(hass: HomeAssistant, entry: MockConfigEntry) -> AsyncIterator[Planned]:
    planned = Planned(hass, entry)
    yield planned
    planned.planner.stop()  # as the publisher does when the entry unloads


def _cap(monkeypatch: pytest.MonkeyPatch, value: int) -> None:
    monkeypatch.setattr(
        entity_platform, "MAX_ENABLED_ENTITIES_PER_CONFIG_ENTRY", value, raising=False
    )


def _register(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    spec: EntitySpec,
    disabled_by: er.RegistryEntryDisabler | None = None,
) -> er.RegistryEntry:
    return er.async_get(hass).async_get_or_create(
        spec.platform, DOMAIN, _unique_id(spec), config_entry=entry, disabled_by=disabled_by
    )


def _issue(hass: HomeAssistant, entry: MockConfigEntry) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, limit_issue_id(entry.entry_id))


def _watchers(hass: HomeAssistant) -> int:
    return hass.bus.async_listeners().get(er.EVENT_ENTITY_REGISTRY_UPDATED, 0)


SWITCHES = [_spec(Platform.SWITCH, f"switch_{n}") for n in range(3)]
SENSORS = [_spec(Platform.SENSOR, f"sensor_{n}") for n in range(3)]


async def test_without_a_cap_or_within_it_nothing_waits(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HA 2025.4 has no cap; under one, an entry that fits has nothing withheld, no repair."""
    monkeypatch.delattr(entity_platform, "MAX_ENABLED_ENTITIES_PER_CONFIG_ENTRY", raising=False)
    watchers = _watchers(hass)
    specs = _specs(*SWITCHES, *SENSORS)
    assert planned.planner.plan(specs, set()) == set()

    _cap(monkeypatch, len(specs))
    assert planned.planner.plan(specs, set()) == set()
    assert _issue(hass, entry) is None
    assert _watchers(hass) == watchers


def test_the_order_of_precedence() -> None:
    """Primary before config before diagnostic entities; within each, controls, then
    readings, then the rest."""
    ranked = [
        _spec(Platform.LIGHT, "light"),
        _spec(Platform.BINARY_SENSOR, "motion"),
        _spec(Platform.EVENT, "button"),
        _spec(Platform.SWITCH, "child_lock", CONFIG),
        _spec(Platform.NUMBER, "brightness_step", CONFIG),
        _spec(Platform.SENSOR, "signal", DIAGNOSTIC),
        _spec(Platform.BUTTON, "restart", DIAGNOSTIC),
    ]
    ranks = [precedence(spec) for spec in ranked]
    assert ranks == sorted(set(ranks))  # each ranks strictly after the one before


async def test_over_the_cap_the_least_needed_wait_and_a_repair_says_how_many(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """4 places for 3 diagnostic sensors, 3 switches: the switches and one sensor come."""
    _cap(monkeypatch, 4)
    diagnostics = [replace(spec, description=DIAGNOSTIC) for spec in SENSORS]
    specs = _specs(*diagnostics, *SWITCHES)

    withheld = planned.planner.plan(specs, set())

    assert withheld == _keys(*diagnostics[1:])
    assert planned.planner.withheld == withheld
    issue = _issue(hass, entry)
    assert issue is not None
    assert issue.translation_key == "entity_limit"
    assert issue.severity is ir.IssueSeverity.WARNING
    assert not issue.is_fixable
    assert issue.translation_placeholders == {"title": "Hub", "limit": "4", "count": "2"}


async def test_registered_entities_never_wait_and_enabled_ones_take_places(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HA always lets a registered entity back in; only the enabled ones count."""
    _register(hass, entry, SWITCHES[0])
    _register(hass, entry, SWITCHES[1])
    _register(hass, entry, SWITCHES[2], er.RegistryEntryDisabler.USER)
    _cap(monkeypatch, 3)
    specs = _specs(*SWITCHES, *SENSORS)

    # Two places taken, one left: a sensor comes, two wait; no registered switch waits.
    assert planned.planner.plan(specs, set()) == _keys(*SENSORS[1:])

    _cap(monkeypatch, 1)  # already over: every new one waits, the registered stay
    assert planned.planner.plan(specs, set()) == _keys(*SENSORS)


async def test_entities_handed_over_hold_their_places(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Handed to a platform, not registered yet: never withheld, and its place is kept."""
    _cap(monkeypatch, 4)
    specs = _specs(*SWITCHES, *SENSORS)

    assert planned.planner.plan(specs, _keys(*SWITCHES)) == _keys(*SENSORS[1:])


async def test_entities_disabled_by_default_never_wait(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HA does not check the cap for an entity disabled by default: it comes, and takes no
    place from the enabled ones."""
    _cap(monkeypatch, 3)
    hidden = [replace(spec, description=HIDDEN) for spec in SENSORS]
    specs = _specs(*hidden, *SWITCHES, _spec(Platform.EVENT, "button"))

    assert planned.planner.plan(specs, set()) == _keys(_spec(Platform.EVENT, "button"))


async def test_new_entities_added_disabled_wait_only_for_a_full_entry(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With "enable newly added entities" off, a new entity takes no place but is still
    checked against the cap: below it every one comes, at it all wait."""
    _register(hass, entry, SWITCHES[0])
    _register(hass, entry, SWITCHES[1])
    hass.config_entries.async_update_entry(entry, pref_disable_new_entities=True)
    specs = _specs(*SWITCHES[:2], *SENSORS)

    _cap(monkeypatch, 3)
    assert planned.planner.plan(specs, set()) == set()

    _cap(monkeypatch, 2)
    assert planned.planner.plan(specs, set()) == _keys(*SENSORS)


async def test_a_deleted_entity_comes_back_as_the_registry_kept_it(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HA 2026.x restores a deleted entity's `disabled_by`: one the user had disabled takes
    no place when it comes back, though HA checks it against the cap; 2025.4 restores it
    enabled."""
    registry = er.async_get(hass)
    registry.async_remove(
        _register(hass, entry, SENSORS[0], er.RegistryEntryDisabler.USER).entity_id
    )
    deleted = registry.deleted_entities[("sensor", DOMAIN, _unique_id(SENSORS[0]))]
    specs = _specs(*SENSORS, *SWITCHES[:1])
    if not hasattr(deleted, "disabled_by"):
        # HA 2025.4 forgets it: the entity comes back enabled and needs its place (no cap
        # applies on that release, but the plan must still read its registry right).
        _cap(monkeypatch, 4)
        assert planned.planner.plan(specs, set()) == set()
        _cap(monkeypatch, 3)
        assert planned.planner.plan(specs, set()) == {spec_key(SENSORS[2])}
        return

    # Three places for the three enabled ones; the one the user disabled needs none, but
    # HA checks it against the cap, so it waits when the others would fill the entry.
    _cap(monkeypatch, 4)
    assert planned.planner.plan(specs, set()) == set()
    _cap(monkeypatch, 3)
    assert planned.planner.plan(specs, set()) == {spec_key(SENSORS[0])}

    _cap(monkeypatch, 2)
    assert planned.planner.plan(specs, set()) == {spec_key(SENSORS[2]), spec_key(SENSORS[0])}


async def test_the_registry_is_watched_while_entities_wait(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The entry's disables and creates ask for a new plan, a burst of them once more after
    a second; other changes, and other entries' entities, ask for nothing."""
    registry = er.async_get(hass)
    switch = _register(hass, entry, SWITCHES[0])
    other_switch = _register(hass, entry, SWITCHES[1])
    other_entry = MockConfigEntry(domain=DOMAIN, unique_id="other")
    other_entry.add_to_hass(hass)
    other = registry.async_get_or_create("switch", DOMAIN, "other_1", config_entry=other_entry)
    watchers = _watchers(hass)
    _cap(monkeypatch, 1)
    specs = _specs(*SWITCHES[:2], *SENSORS)
    assert planned.planner.plan(specs, set()) == _keys(*SENSORS)
    assert _watchers(hass) == watchers + 1

    registry.async_update_entity(other.entity_id, disabled_by=er.RegistryEntryDisabler.USER)
    registry.async_update_entity(switch.entity_id, name="Renamed")
    await hass.async_block_till_done()
    assert planned.replans == 0

    registry.async_update_entity(switch.entity_id, disabled_by=er.RegistryEntryDisabler.USER)
    await hass.async_block_till_done()
    assert planned.replans == 1  # at once
    _register(hass, entry, SENSORS[0])
    registry.async_update_entity(other_switch.entity_id, disabled_by=er.RegistryEntryDisabler.USER)
    await hass.async_block_till_done()
    assert planned.replans == 1
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=2))
    await hass.async_block_till_done()
    assert planned.replans == 2  # the burst: once

    # Room for all: nothing waits, the repair goes, and so does the watch.
    _cap(monkeypatch, 10)
    assert planned.planner.plan(specs, set()) == set()
    assert _issue(hass, entry) is None
    assert _watchers(hass) == watchers


async def test_stopping_ends_the_watch_and_withdraws_the_repair(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    planned: Planned,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the entry unloads nothing waits any more; later changes ask for no plan."""
    switch = _register(hass, entry, SWITCHES[0])
    watchers = _watchers(hass)
    _cap(monkeypatch, 1)
    assert planned.planner.plan(_specs(*SWITCHES[:1], *SENSORS), set())
    assert _issue(hass, entry) is not None

    planned.planner.stop()

    assert planned.planner.withheld == set()
    assert _issue(hass, entry) is None
    assert _watchers(hass) == watchers
    er.async_get(hass).async_update_entity(
        switch.entity_id, disabled_by=er.RegistryEntryDisabler.USER
    )
    await hass.async_block_till_done()
    assert planned.replans == 0
