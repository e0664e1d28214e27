"""Switches: anything with an on/off state a backend can set (plugs, rules, automations, alarms)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.switch import SwitchEntity, SwitchEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewaySwitchDescription[NativeT](GatewayEntityDescription[NativeT], SwitchEntityDescription):
    """How a switch reads and sets a native object."""

    is_on_fn: Callable[[NativeT], bool | None]
    set_fn: Callable[[Any, NativeT, bool], Awaitable[Any]]


class GatewaySwitch(GatewayEntity, SwitchEntity):
    """A backend switch."""

    entity_description: GatewaySwitchDescription[Any]

    @property
    def is_on(self) -> bool | None:
        """Whether it is on."""
        return self.read(self.entity_description.is_on_fn)

    @translate_errors
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Turn it on."""
        await self.entity_description.set_fn(self.runtime, self.native, True)

    @translate_errors
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn it off."""
        await self.entity_description.set_fn(self.runtime, self.native, False)
