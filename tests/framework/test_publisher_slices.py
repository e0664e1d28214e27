"""The publisher at scale: large differences in slices, later refreshes cost what changed."""

from __future__ import annotations

import asyncio
import gc
from typing import Any
from unittest.mock import patch

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.framework import publisher as publisher_module
from custom_components.mcp_gateway.framework.publisher import EntityPublisher
from tests.registry import device_of

from .test_publisher_and_entities import FakeRuntime, Plug

PLUGS = 12  # 3 entities and 1 device each, plus the hub: 49 registry items


class ManyPlugs(FakeRuntime):
    """The fake backend with more plugs than a slice holds."""

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: Any) -> ManyPlugs:
        runtime = super().from_entry(hass, entry)
        runtime.plugs = {str(n): Plug(str(n), f"Plug {n}") for n in range(PLUGS)}
        return runtime


async def _setup(hass: HomeAssistant) -> MockConfigEntry:
    entry = MockConfigEntry(domain=DOMAIN, data={CONF_BACKEND: "fake"}, unique_id="fake-1")
    entry.add_to_hass(hass)
    with patch("custom_components.mcp_gateway.runtime_class", return_value=ManyPlugs):
        assert await hass.config_entries.async_setup(entry.entry_id)
    return entry


def _ours(hass: HomeAssistant, entry: MockConfigEntry) -> tuple[int, int]:
    entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    devices = dr.async_entries_for_config_entry(dr.async_get(hass), entry.entry_id)
    return len(entities), len(devices)


async def test_large_setup_is_added_in_slices(
    hass: HomeAssistant, steps: list[tuple[str, int]], gate: asyncio.Event
) -> None:
    """Setup returns before every entity exists; each step stays within a slice."""
    gate.clear()
    entry = await _setup(hass)
    assert entry.state is ConfigEntryState.LOADED
    publisher: EntityPublisher = entry.runtime_data.publisher
    assert publisher.pending
    assert steps == [("devices", 8)]  # then it waits for the loop
    # Other work runs between slices.
    hass.loop.call_soon(steps.append, ("other work", 0))
    gate.set()
    await hass.async_block_till_done()  # the slices are a tracked task: waited for
    assert steps.index(("other work", 0)) < len(steps) - 1
    steps.remove(("other work", 0))
    assert not publisher.pending
    assert _ours(hass, entry) == (3 * PLUGS, PLUGS + 1)
    assert max(size for _, size in steps) <= 8
    assert sum(size for kind, size in steps if kind == "entities") == 3 * PLUGS
    assert sum(size for kind, size in steps if kind == "devices") == PLUGS + 1
    hub = device_of(hass, (DOMAIN, "fake-1_hub"))
    plug = device_of(hass, (DOMAIN, "fake-1_plug_0"))
    assert hub is not None
    assert plug is not None
    assert plug.via_device_id == hub.id  # parents still come first


async def test_slices_hold_the_loop_for_a_step_then_rest(
    hass: HomeAssistant, steps: list[tuple[str, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slices run until a step has held the loop STEP_SECONDS (a clock each slice advances
    by 1 ms here), then the loop is yielded with how long it was held, for its rest."""
    clock = [0.0]

    def monotonic() -> float:
        return clock[0]

    def counted(step: Any) -> Any:
        def run(self: EntityPublisher, items: Any) -> None:
            clock[0] += 0.001
            step(self, items)

        return run

    monkeypatch.setattr(publisher_module.time, "monotonic", monotonic)
    monkeypatch.setattr(publisher_module, "STEP_SECONDS", 0.0025)
    monkeypatch.setattr(publisher_module, "SLICE", 2)
    monkeypatch.setattr(
        EntityPublisher, "_ensure_devices", counted(EntityPublisher._ensure_devices)
    )
    monkeypatch.setattr(EntityPublisher, "_add_entities", counted(EntityPublisher._add_entities))
    rests: list[float] = []

    async def pause(held: float) -> None:
        rests.append(round(held, 4))
        steps.append(("rest", 0))
        await asyncio.sleep(0)

    monkeypatch.setattr(publisher_module, "_pause", pause)
    entry = await _setup(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert _ours(hass, entry) == (3 * PLUGS, PLUGS + 1)
    # Slices of 2 (13 devices: 7 slices): three slices to a step, each rest told 3 ms.
    kinds = [kind for kind, _ in steps]
    assert kinds[:8] == ["devices"] * 3 + ["rest"] + ["devices"] * 3 + ["rest"]
    assert rests[:2] == [0.003, 0.003]
    runs = "".join("r" if kind == "rest" else "s" for kind in kinds).split("r")
    assert all(len(run) <= 3 for run in runs), runs
    assert max(rests) <= 0.003


async def test_refresh_while_slicing_plans_again(
    hass: HomeAssistant,
    steps: list[tuple[str, int]],
    gate: asyncio.Event,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A device removed before its slice ran never appears; one added meanwhile does."""
    gate.clear()
    entry = await _setup(hass)
    runtime: ManyPlugs = entry.runtime_data
    assert runtime.publisher.pending
    del runtime.plugs[str(PLUGS - 1)]
    runtime.plugs["new"] = Plug("new", "New plug")
    await runtime.coordinator.async_refresh()
    gate.set()
    await hass.async_block_till_done(wait_background_tasks=True)
    registry = er.async_get(hass)
    assert registry.async_get_entity_id("switch", DOMAIN, f"fake-1_{PLUGS - 1}_power") is None
    assert registry.async_get_entity_id("switch", DOMAIN, "fake-1_new_power") is not None
    assert device_of(hass, (DOMAIN, f"fake-1_plug_{PLUGS - 1}")) is None
    # The removed plug's device is found and removed without what HA 2026.x deprecates
    # (HA's frame reports say what "will stop working").
    assert "will stop working" not in caplog.text
    assert _ours(hass, entry) == (3 * PLUGS, PLUGS + 1)


async def test_later_refreshes_touch_only_what_changed(
    hass: HomeAssistant, steps: list[tuple[str, int]]
) -> None:
    """One plug added or renamed: one device written, its entities added; nothing else."""
    entry = await _setup(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    runtime: ManyPlugs = entry.runtime_data
    steps.clear()
    runtime.plugs["new"] = Plug("new", "New plug")
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    assert steps == [("devices", 1), ("entities", 3)]

    steps.clear()
    runtime.plugs["0"].name = "Renamed"
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    assert steps == [("devices", 1), ("entities", 0)]
    device = device_of(hass, (DOMAIN, "fake-1_plug_0"))
    assert device is not None
    assert device.name == "Renamed"

    steps.clear()
    await runtime.coordinator.async_refresh()  # nothing changed
    await hass.async_block_till_done()
    assert steps == [("devices", 0), ("entities", 0)]


async def test_unload_while_slicing(
    hass: HomeAssistant, steps: list[tuple[str, int]], gate: asyncio.Event
) -> None:
    """Unloading stops the slices: nothing is added to platforms that are gone."""
    gate.clear()
    entry = await _setup(hass)
    publisher: EntityPublisher = entry.runtime_data.publisher
    assert publisher.pending
    assert await hass.config_entries.async_unload(entry.entry_id)
    gate.set()
    await hass.async_block_till_done(wait_background_tasks=True)
    assert not publisher.pending
    assert entry.state is ConfigEntryState.NOT_LOADED
    added = sum(size for kind, size in steps if kind == "entities")
    assert added < 3 * PLUGS


async def test_large_derivation_yields_and_swaps_at_once(
    hass: HomeAssistant,
    steps: list[tuple[str, int]],
    gate: asyncio.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Deriving thousands of specs yields between chunks; lookups see the old set until the
    new one is complete, and a newer refresh supersedes one in progress."""
    monkeypatch.setattr(publisher_module, "DERIVE_CHUNK", 10)
    entry = await _setup(hass)  # setup waits for its derivation
    await hass.async_block_till_done(wait_background_tasks=True)
    runtime: ManyPlugs = entry.runtime_data
    publisher: EntityPublisher = runtime.publisher
    assert len(publisher.specs) == 3 * PLUGS

    gate.clear()
    runtime.plugs["new"] = Plug("new", "New plug")
    await runtime.coordinator.async_refresh()
    assert publisher.device_specs("plug_new") == []  # still the old set
    del runtime.plugs["0"]
    await runtime.coordinator.async_refresh()  # supersedes the first
    gate.set()
    await publisher.async_derived()
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(publisher.device_specs("plug_new")) == 3
    assert publisher.device_specs("plug_0") == []
    registry = er.async_get(hass)
    assert registry.async_get_entity_id("switch", DOMAIN, "fake-1_0_power") is None
    assert registry.async_get_entity_id("switch", DOMAIN, "fake-1_new_power") is not None


async def test_unload_drops_a_derivation_in_progress(
    hass: HomeAssistant,
    steps: list[tuple[str, int]],
    gate: asyncio.Event,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A derivation still running when the entry unloads is never applied."""
    monkeypatch.setattr(publisher_module, "DERIVE_CHUNK", 10)
    entry = await _setup(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    runtime: ManyPlugs = entry.runtime_data
    gate.clear()
    runtime.plugs["new"] = Plug("new", "New plug")
    await runtime.coordinator.async_refresh()
    assert await hass.config_entries.async_unload(entry.entry_id)
    gate.set()
    await hass.async_block_till_done(wait_background_tasks=True)
    assert runtime.publisher.device_specs("plug_new") == []


async def test_a_gone_plug_takes_its_device(
    hass: HomeAssistant, steps: list[tuple[str, int]], caplog: pytest.LogCaptureFixture
) -> None:
    """A plug the backend drops after setup loses its entities and device, nothing else."""
    entry = await _setup(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    runtime: ManyPlugs = entry.runtime_data
    del runtime.plugs["0"]
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    assert device_of(hass, (DOMAIN, "fake-1_plug_0")) is None
    assert device_of(hass, (DOMAIN, "fake-1_plug_1")) is not None
    assert _ours(hass, entry) == (3 * (PLUGS - 1), PLUGS)
    # Removed the way each HA version supports (2026.x reports what "will stop working").
    assert "will stop working" not in caplog.text


async def test_published_keys_are_left_alone_by_the_collector(hass: HomeAssistant) -> None:
    """The publisher's two keys per entity hold strings only, so the garbage collector stops
    tracking them (with the Platform member in them every full collection walked them), and
    look-ups by Platform still find them."""
    entry = await _setup(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    publisher: EntityPublisher = entry.runtime_data.publisher
    gc.collect()
    keys = [*publisher._specs, *publisher._published]
    assert len(keys) == 2 * 3 * PLUGS
    assert [key for key in keys if gc.is_tracked(key)] == []
    for spec in publisher.specs:
        assert publisher.spec(spec.platform, spec.key) is spec
