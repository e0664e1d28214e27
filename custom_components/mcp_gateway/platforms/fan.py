"""Fans."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.fan import FanEntity, FanEntityDescription, FanEntityFeature

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayFanDescription[NativeT](GatewayEntityDescription[NativeT], FanEntityDescription):
    """How a fan reads and sets a native object."""

    is_on_fn: Callable[[NativeT], bool | None]
    percentage_fn: Callable[[NativeT], int | None] | None = None
    speed_count: int = 100
    turn_on_fn: Callable[[Any, NativeT, int | None], Awaitable[Any]]
    turn_off_fn: Callable[[Any, NativeT], Awaitable[Any]]
    set_percentage_fn: Callable[[Any, NativeT, int], Awaitable[Any]] | None = None


class GatewayFan(GatewayEntity, FanEntity):
    """A backend fan."""

    entity_description: GatewayFanDescription[Any]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        features = FanEntityFeature.TURN_ON | FanEntityFeature.TURN_OFF
        if self.entity_description.set_percentage_fn is not None:
            features |= FanEntityFeature.SET_SPEED
        self._attr_supported_features = features
        self._attr_speed_count = self.entity_description.speed_count

    @property
    def is_on(self) -> bool | None:
        """Whether it runs."""
        return self.read(self.entity_description.is_on_fn)

    @property
    def percentage(self) -> int | None:
        """Speed as a percentage."""
        return self.read(self.entity_description.percentage_fn)

    @translate_errors
    async def async_turn_on(
        self, percentage: int | None = None, preset_mode: str | None = None, **kwargs: Any
    ) -> None:
        """Turn on, at a speed when one is given."""
        await self.entity_description.turn_on_fn(self.runtime, self.native, percentage)

    @translate_errors
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn off."""
        await self.entity_description.turn_off_fn(self.runtime, self.native)

    @translate_errors
    async def async_set_percentage(self, percentage: int) -> None:
        """Set the speed (0 turns the fan off)."""
        description = self.entity_description
        if percentage == 0:
            await description.turn_off_fn(self.runtime, self.native)
        elif description.set_percentage_fn is not None:
            await description.set_percentage_fn(self.runtime, self.native, percentage)
