"""Scenes a backend can run (HomeKit scenes through Homecast)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from homeassistant.components.scene import Scene
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import entity_platform, entity_registry as er

from ..core.compat import record_scene_activation
from ..core.const import DOMAIN
from ..framework.entity import GatewayEntity, GatewayEntityDescription, entry_uid, translate_errors


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

    @callback
    def async_record_activation(self) -> None:
        """The scene ran another way (the backend's own tool): show when, as HA does when it
        runs it (through HA's private hook: core/compat.py)."""
        record_scene_activation(self)
        self.async_write_ha_state()


@callback
def async_scene_ran(hass: HomeAssistant, entry: ConfigEntry, key: str) -> str | None:
    """Record a run of the entry's scene `key` on its entity; its entity id, if it has one."""
    unique_id = f"{entry_uid(entry)}_{key}"
    entity_id = er.async_get(hass).async_get_entity_id(Platform.SCENE, DOMAIN, unique_id)
    if entity_id is None:
        return None
    for platform in entity_platform.async_get_platforms(hass, DOMAIN):
        entity = platform.entities.get(entity_id)
        if platform.domain == Platform.SCENE and isinstance(entity, GatewayScene):
            entity.async_record_activation()
    return entity_id
