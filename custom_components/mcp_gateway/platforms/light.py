"""Lights: on/off, brightness, hue/saturation and colour temperature."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.light import (
    ATTR_BRIGHTNESS,
    ATTR_COLOR_TEMP_KELVIN,
    ATTR_HS_COLOR,
    ATTR_TRANSITION,
    LightEntity,
    LightEntityDescription,
)
from homeassistant.components.light.const import ColorMode, LightEntityFeature

from ..framework.entity import GatewayEntity, GatewayEntityDescription, translate_errors


@dataclass(frozen=True, slots=True)
class LightCommand:
    """What a turn_on asked for; None means not asked."""

    brightness: int | None = None  # 0-255
    hs_color: tuple[float, float] | None = None  # hue 0-360, saturation 0-100
    color_temp_kelvin: int | None = None
    transition: float | None = None  # seconds


@dataclass(frozen=True, kw_only=True)
class GatewayLightDescription[NativeT](GatewayEntityDescription[NativeT], LightEntityDescription):
    """How a light reads and sets a native object."""

    is_on_fn: Callable[[NativeT], bool | None]
    brightness_fn: Callable[[NativeT], int | None] = lambda _: None
    hs_color_fn: Callable[[NativeT], tuple[float, float] | None] = lambda _: None
    color_temp_kelvin_fn: Callable[[NativeT], int | None] = lambda _: None
    color_mode_fn: Callable[[NativeT], ColorMode]
    supported_color_modes_fn: Callable[[NativeT], set[ColorMode]]
    min_color_temp_kelvin: int = 2000
    max_color_temp_kelvin: int = 6500
    supports_transition: bool = False
    turn_on_fn: Callable[[Any, NativeT, LightCommand], Awaitable[Any]]
    turn_off_fn: Callable[[Any, NativeT], Awaitable[Any]]


class GatewayLight(GatewayEntity, LightEntity):
    """A backend light."""

    entity_description: GatewayLightDescription[Any]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._attr_min_color_temp_kelvin = self.entity_description.min_color_temp_kelvin
        self._attr_max_color_temp_kelvin = self.entity_description.max_color_temp_kelvin
        if self.entity_description.supports_transition:
            self._attr_supported_features = LightEntityFeature.TRANSITION

    @property
    def is_on(self) -> bool | None:
        """Whether it is on."""
        return self.read(self.entity_description.is_on_fn)

    @property
    def brightness(self) -> int | None:
        """Brightness 0-255."""
        return self.read(self.entity_description.brightness_fn)

    @property
    def hs_color(self) -> tuple[float, float] | None:
        """Hue and saturation."""
        return self.read(self.entity_description.hs_color_fn)

    @property
    def color_temp_kelvin(self) -> int | None:
        """Colour temperature in kelvin."""
        return self.read(self.entity_description.color_temp_kelvin_fn)

    @property
    def color_mode(self) -> ColorMode | None:
        """The mode the light is in now."""
        return self.read(self.entity_description.color_mode_fn)

    @property
    def supported_color_modes(self) -> set[ColorMode] | None:
        """The modes the light offers."""
        return self.read(self.entity_description.supported_color_modes_fn) or {ColorMode.ONOFF}

    @translate_errors
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Turn on, with whatever brightness/colour was asked."""
        command = LightCommand(
            brightness=kwargs.get(ATTR_BRIGHTNESS),
            hs_color=kwargs.get(ATTR_HS_COLOR),
            color_temp_kelvin=kwargs.get(ATTR_COLOR_TEMP_KELVIN),
            transition=kwargs.get(ATTR_TRANSITION),
        )
        await self.entity_description.turn_on_fn(self.runtime, self.native, command)

    @translate_errors
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn off."""
        await self.entity_description.turn_off_fn(self.runtime, self.native)
