"""Locks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.lock import LockEntity, LockEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayLockDescription[NativeT](GatewayEntityDescription[NativeT], LockEntityDescription):
    """How a lock reads and sets a native object."""

    is_locked_fn: Callable[[NativeT], bool | None]
    is_jammed_fn: Callable[[NativeT], bool | None] = lambda _: None
    set_locked_fn: Callable[[Any, NativeT, bool], Awaitable[Any]]


class GatewayLock(GatewayEntity, LockEntity):
    """A backend lock."""

    entity_description: GatewayLockDescription[Any]

    @property
    def is_locked(self) -> bool | None:
        """Whether it is locked."""
        return self.read(self.entity_description.is_locked_fn)

    @property
    def is_jammed(self) -> bool | None:
        """Whether it reports a jam."""
        return self.read(self.entity_description.is_jammed_fn)

    @translate_errors
    async def async_lock(self, **kwargs: Any) -> None:
        """Lock."""
        await self.entity_description.set_locked_fn(self.runtime, self.native, True)

    @translate_errors
    async def async_unlock(self, **kwargs: Any) -> None:
        """Unlock."""
        await self.entity_description.set_locked_fn(self.runtime, self.native, False)
