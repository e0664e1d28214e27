"""Event entities: button presses, doorbells, alarm-clock session changes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from homeassistant.components.event import EventEntity, EventEntityDescription
from homeassistant.core import callback

from ..framework.entity import GatewayEntity, GatewayEntityDescription


@dataclass(frozen=True, slots=True)
class EventOccurrence:
    """One thing that happened; `marker` identifies it so it fires once."""

    marker: str
    event_type: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class GatewayEventDescription[NativeT](GatewayEntityDescription[NativeT], EventEntityDescription):
    """Where an event entity finds the recent occurrences of its native object."""

    events_fn: Callable[[NativeT], Sequence[EventOccurrence]]


class GatewayEvent(GatewayEntity, EventEntity):
    """Fires each new occurrence once; history from before HA started is never replayed."""

    entity_description: GatewayEventDescription[Any]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._attr_event_types = list(self.entity_description.event_types or [])
        self._fired: set[str] = set()
        self._primed = False

    async def async_added_to_hass(self) -> None:
        """Record what has already happened, then follow updates."""
        await super().async_added_to_hass()
        self._collect(fire=False)

    @callback
    def _handle_coordinator_update(self) -> None:
        self._collect(fire=True)
        super()._handle_coordinator_update()

    def _collect(self, *, fire: bool) -> None:
        native = self.native
        if native is None:
            return
        occurrences = self.entity_description.events_fn(native)
        for occurrence in occurrences:
            if occurrence.marker in self._fired:
                continue
            if fire and self._primed and occurrence.event_type in self._attr_event_types:
                self._trigger_event(occurrence.event_type, occurrence.attributes)
                # One state write per occurrence: two events in one update (dismissed, then
                # ended) must both reach automations, not only the last.
                self.async_write_ha_state()
        # Remember only what the backend still reports, so the set stays small.
        self._fired = {occurrence.marker for occurrence in occurrences}
        self._primed = True
