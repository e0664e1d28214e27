"""Scenes a backend can run (HomeKit scenes through Homecast)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.scene import Scene
from homeassistant.const import Platform

from .entity import GatewayEntity, GatewayEntityDescription, translate_errors
from .publisher import platform_setup

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class GatewaySceneDescription[NativeT](GatewayEntityDescription[NativeT]):
    """How a scene is run."""

    activate_fn: Callable[[Any, NativeT], Awaitable[Any]]


class GatewayScene(GatewayEntity, Scene):
    """A backend scene."""

    entity_description: GatewaySceneDescription[Any]

    @translate_errors
    async def async_activate(self, **kwargs: Any) -> None:
        """Run the scene."""
        await self.entity_description.activate_fn(self.runtime, self.native)


async_setup_entry = platform_setup(Platform.SCENE, GatewayScene)
