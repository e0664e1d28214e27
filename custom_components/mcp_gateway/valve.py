"""Valves: water valves and irrigation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.valve import (
    ValveEntity,
    ValveEntityDescription,
    ValveEntityFeature,
)
from homeassistant.const import Platform

from .entity import GatewayEntity, GatewayEntityDescription, translate_errors
from .publisher import platform_setup

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class GatewayValveDescription[NativeT](GatewayEntityDescription[NativeT], ValveEntityDescription):
    """How a valve reads and moves a native object."""

    is_closed_fn: Callable[[NativeT], bool | None]
    position_fn: Callable[[NativeT], int | None] | None = None
    open_fn: Callable[[Any, NativeT], Awaitable[Any]]
    close_fn: Callable[[Any, NativeT], Awaitable[Any]]
    set_position_fn: Callable[[Any, NativeT, int], Awaitable[Any]] | None = None


class GatewayValve(GatewayEntity, ValveEntity):
    """A backend valve."""

    entity_description: GatewayValveDescription[Any]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        description = self.entity_description
        features = ValveEntityFeature.OPEN | ValveEntityFeature.CLOSE
        if description.set_position_fn is not None:
            features |= ValveEntityFeature.SET_POSITION
        self._attr_supported_features = features
        self._attr_reports_position = description.position_fn is not None

    @property
    def is_closed(self) -> bool | None:
        """Whether it is closed."""
        return self.read(self.entity_description.is_closed_fn)

    @property
    def current_valve_position(self) -> int | None:
        """Position 0-100 when the valve reports one."""
        return self.read(self.entity_description.position_fn)

    @translate_errors
    async def async_open_valve(self) -> None:
        """Open."""
        await self.entity_description.open_fn(self.runtime, self.native)

    @translate_errors
    async def async_close_valve(self) -> None:
        """Close."""
        await self.entity_description.close_fn(self.runtime, self.native)

    @translate_errors
    async def async_set_valve_position(self, position: int) -> None:
        """Move to a position."""
        if self.entity_description.set_position_fn is not None:
            await self.entity_description.set_position_fn(self.runtime, self.native, position)


async_setup_entry = platform_setup(Platform.VALVE, GatewayValve)
