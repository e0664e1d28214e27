"""Sensors: measurements, timestamps and diagnostic values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from homeassistant.components.sensor import SensorEntity, SensorEntityDescription
from homeassistant.helpers.typing import StateType

from ..framework.entity import GatewayEntity, GatewayEntityDescription


@dataclass(frozen=True, kw_only=True)
class GatewaySensorDescription[NativeT](GatewayEntityDescription[NativeT], SensorEntityDescription):
    """How a sensor reads a native object."""

    value_fn: Callable[[NativeT], StateType | date | datetime | Decimal]
    # For backends whose unit is only known at run time (a hub set to °F or °C).
    unit_fn: Callable[[NativeT], str | None] | None = None


class GatewaySensor(GatewayEntity, SensorEntity):
    """A backend sensor."""

    entity_description: GatewaySensorDescription[Any]

    @property
    def native_value(self) -> StateType | date | datetime | Decimal:
        """The current value."""
        return self.read(self.entity_description.value_fn)

    @property
    def native_unit_of_measurement(self) -> str | None:
        """The unit: the native object's when the description reads it, else the static one."""
        if self.entity_description.unit_fn is not None and self.native is not None:
            return self.entity_description.unit_fn(self.native)
        return self.entity_description.native_unit_of_measurement
