"""Times of day: an alarm clock's ring times."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import time
from typing import Any

from homeassistant.components.time import TimeEntity, TimeEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayTimeDescription[NativeT](GatewayEntityDescription[NativeT], TimeEntityDescription):
    """How a time entity reads and sets a native object."""

    value_fn: Callable[[NativeT], time | None]
    set_fn: Callable[[Any, NativeT, time], Awaitable[Any]]


class GatewayTime(GatewayEntity, TimeEntity):
    """A backend time-of-day value."""

    entity_description: GatewayTimeDescription[Any]

    @property
    def native_value(self) -> time | None:
        """The current value (a wall-clock time, no zone)."""
        return self.read(self.entity_description.value_fn)

    @translate_errors
    async def async_set_value(self, value: time) -> None:
        """Set the value."""
        await self.entity_description.set_fn(self.runtime, self.native, value)
