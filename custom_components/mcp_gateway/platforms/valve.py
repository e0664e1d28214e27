"""Valves: water valves and irrigation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.valve import ValveEntity, ValveEntityDescription, ValveEntityFeature

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayValveDescription[NativeT](GatewayEntityDescription[NativeT], ValveEntityDescription):
    """How a valve reads and moves a native object."""

    is_closed_fn: Callable[[NativeT], bool | None]
    open_fn: Callable[[Any, NativeT], Awaitable[Any]]
    close_fn: Callable[[Any, NativeT], Awaitable[Any]]


class GatewayValve(GatewayEntity, ValveEntity):
    """A backend valve: open or closed.

    No backend reports a valve's position (Hubitat's Valve capability and HomeKit's valve
    service are open/closed only), so none is offered.
    """

    entity_description: GatewayValveDescription[Any]
    _attr_supported_features = ValveEntityFeature.OPEN | ValveEntityFeature.CLOSE
    _attr_reports_position = False

    @property
    def is_closed(self) -> bool | None:
        """Whether it is closed."""
        return self.read(self.entity_description.is_closed_fn)

    @translate_errors
    async def async_open_valve(self) -> None:
        """Open."""
        await self.entity_description.open_fn(self.runtime, self.native)

    @translate_errors
    async def async_close_valve(self) -> None:
        """Close."""
        await self.entity_description.close_fn(self.runtime, self.native)
