"""Covers: shades, blinds, garage doors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.cover import (
    ATTR_POSITION,
    CoverEntity,
    CoverEntityDescription,
    CoverEntityFeature,
)

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors

type _Act[N] = Callable[[Any, N], Awaitable[Any]]


@dataclass(frozen=True, kw_only=True)
class GatewayCoverDescription[NativeT](GatewayEntityDescription[NativeT], CoverEntityDescription):
    """How a cover reads and moves a native object; features follow from the callables set."""

    is_closed_fn: Callable[[NativeT], bool | None]
    position_fn: Callable[[NativeT], int | None] | None = None
    is_opening_fn: Callable[[NativeT], bool | None] = lambda _: None
    is_closing_fn: Callable[[NativeT], bool | None] = lambda _: None
    open_fn: _Act[NativeT]
    close_fn: _Act[NativeT]
    stop_fn: _Act[NativeT] | None = None
    set_position_fn: Callable[[Any, NativeT, int], Awaitable[Any]] | None = None


class GatewayCover(GatewayEntity, CoverEntity):
    """A backend cover."""

    entity_description: GatewayCoverDescription[Any]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        description = self.entity_description
        features = CoverEntityFeature.OPEN | CoverEntityFeature.CLOSE
        if description.stop_fn is not None:
            features |= CoverEntityFeature.STOP
        if description.set_position_fn is not None:
            features |= CoverEntityFeature.SET_POSITION
        self._attr_supported_features = features

    @property
    def is_closed(self) -> bool | None:
        """Whether it is closed."""
        return self.read(self.entity_description.is_closed_fn)

    @property
    def current_cover_position(self) -> int | None:
        """Position 0 (closed) to 100 (open)."""
        return self.read(self.entity_description.position_fn)

    @property
    def is_opening(self) -> bool | None:
        """Whether it is opening."""
        return self.read(self.entity_description.is_opening_fn)

    @property
    def is_closing(self) -> bool | None:
        """Whether it is closing."""
        return self.read(self.entity_description.is_closing_fn)

    @translate_errors
    async def async_open_cover(self, **kwargs: Any) -> None:
        """Open."""
        await self.entity_description.open_fn(self.runtime, self.native)

    @translate_errors
    async def async_close_cover(self, **kwargs: Any) -> None:
        """Close."""
        await self.entity_description.close_fn(self.runtime, self.native)

    @translate_errors
    async def async_stop_cover(self, **kwargs: Any) -> None:
        """Stop moving."""
        if self.entity_description.stop_fn is not None:
            await self.entity_description.stop_fn(self.runtime, self.native)

    @translate_errors
    async def async_set_cover_position(self, **kwargs: Any) -> None:
        """Move to a position."""
        if self.entity_description.set_position_fn is not None:
            await self.entity_description.set_position_fn(
                self.runtime, self.native, int(kwargs[ATTR_POSITION])
            )
