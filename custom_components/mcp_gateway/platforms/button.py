"""Buttons: one-shot actions such as running a rule or snoozing an alarm."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.button import ButtonEntity, ButtonEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayButtonDescription[NativeT](GatewayEntityDescription[NativeT], ButtonEntityDescription):
    """What pressing the button does."""

    press_fn: Callable[[Any, NativeT], Awaitable[Any]]


class GatewayButton(GatewayEntity, ButtonEntity):
    """A backend button."""

    entity_description: GatewayButtonDescription[Any]

    @translate_errors
    async def async_press(self) -> None:
        """Press it."""
        await self.entity_description.press_fn(self.runtime, self.native)
