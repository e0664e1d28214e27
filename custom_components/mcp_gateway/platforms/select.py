"""Selects: the hub mode, virtual mode accessories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.select import SelectEntity, SelectEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewaySelectDescription[NativeT](GatewayEntityDescription[NativeT], SelectEntityDescription):
    """How a select reads its options and sets one."""

    current_option_fn: Callable[[NativeT], str | None]
    options_fn: Callable[[NativeT], list[str]]
    select_fn: Callable[[Any, NativeT, str], Awaitable[Any]]


class GatewaySelect(GatewayEntity, SelectEntity):
    """A backend select."""

    entity_description: GatewaySelectDescription[Any]

    @property
    def current_option(self) -> str | None:
        """The selected option."""
        return self.read(self.entity_description.current_option_fn)

    @property
    def options(self) -> list[str]:
        """The options offered now (they can change, e.g. a new hub mode)."""
        return self.read(self.entity_description.options_fn) or []

    @translate_errors
    async def async_select_option(self, option: str) -> None:
        """Select an option."""
        await self.entity_description.select_fn(self.runtime, self.native, option)
