"""Texts: virtual text accessories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.text import TextEntity, TextEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayTextDescription[NativeT](GatewayEntityDescription[NativeT], TextEntityDescription):
    """How a text entity reads and sets a native object."""

    value_fn: Callable[[NativeT], str | None]
    set_fn: Callable[[Any, NativeT, str], Awaitable[Any]]


class GatewayText(GatewayEntity, TextEntity):
    """A backend text value."""

    entity_description: GatewayTextDescription[Any]

    @property
    def native_value(self) -> str | None:
        """The current text."""
        return self.read(self.entity_description.value_fn)

    @translate_errors
    async def async_set_value(self, value: str) -> None:
        """Set the text."""
        await self.entity_description.set_fn(self.runtime, self.native, value)
