"""Climate: thermostats and heater-coolers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.climate import ClimateEntity, ClimateEntityDescription
from homeassistant.components.climate.const import (
    ATTR_HVAC_MODE,
    ATTR_TARGET_TEMP_HIGH,
    ATTR_TARGET_TEMP_LOW,
    ClimateEntityFeature,
    HVACAction,
    HVACMode,
)
from homeassistant.const import ATTR_TEMPERATURE, UnitOfTemperature

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors

type _Read[N, T] = Callable[[N], T]


@dataclass(frozen=True, slots=True)
class ClimateTarget:
    """What a set_temperature asked for; None means not asked."""

    temperature: float | None = None
    target_temp_low: float | None = None
    target_temp_high: float | None = None
    hvac_mode: HVACMode | None = None


def _none(_: Any) -> None:
    return None


@dataclass(frozen=True, kw_only=True)
class GatewayClimateDescription[NativeT](
    GatewayEntityDescription[NativeT], ClimateEntityDescription
):
    """How a climate entity reads and sets a native object; features follow from what it reads."""

    hvac_mode_fn: _Read[NativeT, HVACMode | None]
    hvac_modes_fn: _Read[NativeT, list[HVACMode]]
    hvac_action_fn: _Read[NativeT, HVACAction | None] = _none
    current_temperature_fn: _Read[NativeT, float | None] = _none
    target_temperature_fn: _Read[NativeT, float | None] | None = None
    target_temperature_low_fn: _Read[NativeT, float | None] | None = None
    target_temperature_high_fn: _Read[NativeT, float | None] | None = None
    current_humidity_fn: _Read[NativeT, float | None] = _none
    fan_mode_fn: _Read[NativeT, str | None] | None = None
    fan_modes_fn: _Read[NativeT, list[str] | None] = _none
    temperature_unit_fn: _Read[NativeT, str] = lambda _: UnitOfTemperature.CELSIUS
    min_temp: float | None = None
    max_temp: float | None = None
    target_temperature_step: float | None = None
    set_hvac_mode_fn: Callable[[Any, NativeT, HVACMode], Awaitable[Any]]
    set_temperature_fn: Callable[[Any, NativeT, ClimateTarget], Awaitable[Any]]
    set_fan_mode_fn: Callable[[Any, NativeT, str], Awaitable[Any]] | None = None


class GatewayClimate(GatewayEntity, ClimateEntity):
    """A backend thermostat or heater-cooler."""

    entity_description: GatewayClimateDescription[Any]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        description = self.entity_description
        features = ClimateEntityFeature(0)
        if description.target_temperature_fn is not None:
            features |= ClimateEntityFeature.TARGET_TEMPERATURE
        if description.target_temperature_low_fn is not None:
            features |= ClimateEntityFeature.TARGET_TEMPERATURE_RANGE
        if description.fan_mode_fn is not None and description.set_fan_mode_fn is not None:
            features |= ClimateEntityFeature.FAN_MODE
        self._attr_supported_features = features | (
            ClimateEntityFeature.TURN_ON | ClimateEntityFeature.TURN_OFF
        )
        if description.min_temp is not None:
            self._attr_min_temp = description.min_temp
        if description.max_temp is not None:
            self._attr_max_temp = description.max_temp
        if description.target_temperature_step is not None:
            self._attr_target_temperature_step = description.target_temperature_step

    @property
    def temperature_unit(self) -> str:
        """The unit the device reports in."""
        return self.read(self.entity_description.temperature_unit_fn) or UnitOfTemperature.CELSIUS

    @property
    def hvac_mode(self) -> HVACMode | None:
        """Current mode."""
        return self.read(self.entity_description.hvac_mode_fn)

    @property
    def hvac_modes(self) -> list[HVACMode]:
        """Modes offered."""
        return self.read(self.entity_description.hvac_modes_fn) or [HVACMode.OFF]

    @property
    def hvac_action(self) -> HVACAction | None:
        """What it is doing now."""
        return self.read(self.entity_description.hvac_action_fn)

    @property
    def current_temperature(self) -> float | None:
        """Measured temperature."""
        return self.read(self.entity_description.current_temperature_fn)

    @property
    def target_temperature(self) -> float | None:
        """Single setpoint."""
        return self.read(self.entity_description.target_temperature_fn)

    @property
    def target_temperature_low(self) -> float | None:
        """Heating setpoint of a range."""
        return self.read(self.entity_description.target_temperature_low_fn)

    @property
    def target_temperature_high(self) -> float | None:
        """Cooling setpoint of a range."""
        return self.read(self.entity_description.target_temperature_high_fn)

    @property
    def current_humidity(self) -> float | None:
        """Measured humidity."""
        return self.read(self.entity_description.current_humidity_fn)

    @property
    def fan_mode(self) -> str | None:
        """Current fan mode."""
        return self.read(self.entity_description.fan_mode_fn)

    @property
    def fan_modes(self) -> list[str] | None:
        """Fan modes offered."""
        return self.read(self.entity_description.fan_modes_fn)

    @translate_errors
    async def async_set_hvac_mode(self, hvac_mode: HVACMode) -> None:
        """Change mode."""
        await self.entity_description.set_hvac_mode_fn(self.runtime, self.native, hvac_mode)

    @translate_errors
    async def async_set_temperature(self, **kwargs: Any) -> None:
        """Change setpoints (and the mode, when asked together)."""
        target = ClimateTarget(
            temperature=kwargs.get(ATTR_TEMPERATURE),
            target_temp_low=kwargs.get(ATTR_TARGET_TEMP_LOW),
            target_temp_high=kwargs.get(ATTR_TARGET_TEMP_HIGH),
            hvac_mode=kwargs.get(ATTR_HVAC_MODE),
        )
        await self.entity_description.set_temperature_fn(self.runtime, self.native, target)

    @translate_errors
    async def async_set_fan_mode(self, fan_mode: str) -> None:
        """Change the fan mode."""
        if self.entity_description.set_fan_mode_fn is not None:
            await self.entity_description.set_fan_mode_fn(self.runtime, self.native, fan_mode)
