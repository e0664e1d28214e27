"""Numbers: virtual number and counter accessories, speaker volume."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.number import NumberEntity, NumberEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayNumberDescription[NativeT](GatewayEntityDescription[NativeT], NumberEntityDescription):
    """How a number reads and sets a native object."""

    value_fn: Callable[[NativeT], float | None]
    # Per-object limits (a virtual number accessory carries its own); else the static ones.
    limits_fn: Callable[[NativeT], tuple[float, float, float] | None] | None = None
    set_fn: Callable[[Any, NativeT, float], Awaitable[Any]]


class GatewayNumber(GatewayEntity, NumberEntity):
    """A backend number."""

    entity_description: GatewayNumberDescription[Any]

    def _limit(self, index: int, default: float | None) -> float:
        limits = self.read(self.entity_description.limits_fn)
        if limits is not None:
            return limits[index]
        return float(default) if default is not None else (0.0, 100.0, 1.0)[index]

    @property
    def native_value(self) -> float | None:
        """The current value."""
        return self.read(self.entity_description.value_fn)

    @property
    def native_min_value(self) -> float:
        """Lowest value."""
        return self._limit(0, self.entity_description.native_min_value)

    @property
    def native_max_value(self) -> float:
        """Highest value."""
        return self._limit(1, self.entity_description.native_max_value)

    @property
    def native_step(self) -> float | None:
        """Step between values."""
        return self._limit(2, self.entity_description.native_step)

    @translate_errors
    async def async_set_native_value(self, value: float) -> None:
        """Set the value."""
        await self.entity_description.set_fn(self.runtime, self.native, value)
