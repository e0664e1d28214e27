"""Fixtures of the framework tests: the publisher's slices, held and recorded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from custom_components.mcp_gateway.framework import publisher as publisher_module
from custom_components.mcp_gateway.framework.publisher import EntityPublisher


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Holds the publisher between slices until set (open by default)."""
    between = asyncio.Event()
    between.set()

    async def pause(held: float) -> None:
        await asyncio.sleep(0)
        await between.wait()

    monkeypatch.setattr(publisher_module, "_pause", pause)
    return between


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch, gate: asyncio.Event) -> list[tuple[str, int]]:
    """Small slices, and a record of every step the publisher takes (kind, size)."""
    monkeypatch.setattr(publisher_module, "SLICE", 8)
    monkeypatch.setattr(publisher_module, "AT_ONCE", 8)
    # The loop yielded after every slice, whatever the clock says.
    monkeypatch.setattr(publisher_module, "STEP_SECONDS", 0.0)
    taken: list[tuple[str, int]] = []
    ensure, add = EntityPublisher._ensure_devices, EntityPublisher._add_entities

    def ensure_devices(self: EntityPublisher, devices: Any) -> None:
        devices = list(devices)
        taken.append(("devices", len(devices)))
        ensure(self, devices)

    def add_entities(self: EntityPublisher, specs: Any) -> None:
        specs = list(specs)
        taken.append(("entities", len(specs)))
        add(self, specs)

    monkeypatch.setattr(EntityPublisher, "_ensure_devices", ensure_devices)
    monkeypatch.setattr(EntityPublisher, "_add_entities", add_entities)
    return taken
