"""Binary sensors: contact, motion, water, presence, health and the like."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.binary_sensor import (
    BinarySensorEntity,
    BinarySensorEntityDescription,
)

from ..framework.entity import GatewayEntity, GatewayEntityDescription


@dataclass(frozen=True, kw_only=True)
class GatewayBinarySensorDescription[NativeT](
    GatewayEntityDescription[NativeT], BinarySensorEntityDescription
):
    """How a binary sensor reads a native object."""

    is_on_fn: Callable[[NativeT], bool | None]


class GatewayBinarySensor(GatewayEntity, BinarySensorEntity):
    """A backend binary sensor."""

    entity_description: GatewayBinarySensorDescription[Any]

    @property
    def is_on(self) -> bool | None:
        """Whether the sensed condition holds."""
        return self.read(self.entity_description.is_on_fn)
