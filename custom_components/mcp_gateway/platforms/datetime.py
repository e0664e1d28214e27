"""Date-times: virtual date accessories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homeassistant.components.datetime import DateTimeEntity, DateTimeEntityDescription

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, kw_only=True)
class GatewayDateTimeDescription[NativeT](
    GatewayEntityDescription[NativeT], DateTimeEntityDescription
):
    """How a date-time entity reads and sets a native object."""

    value_fn: Callable[[NativeT], datetime | None]
    set_fn: Callable[[Any, NativeT, datetime], Awaitable[Any]]


class GatewayDateTime(GatewayEntity, DateTimeEntity):
    """A backend date-time value."""

    entity_description: GatewayDateTimeDescription[Any]

    @property
    def native_value(self) -> datetime | None:
        """The current value (timezone-aware)."""
        return self.read(self.entity_description.value_fn)

    @translate_errors
    async def async_set_value(self, value: datetime) -> None:
        """Set the value."""
        await self.entity_description.set_fn(self.runtime, self.native, value)
