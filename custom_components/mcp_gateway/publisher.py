"""Keeps HA's entities and devices in step with what a backend currently has.

A backend derives the full list of EntitySpecs from its data after every update; the publisher
adds entities for new keys and removes entities and devices whose keys are gone, so devices
come and go without a reload.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
import logging
from typing import TYPE_CHECKING

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import (
    AddConfigEntryEntitiesCallback,
    AddEntitiesCallback,
)

from .const import DOMAIN
from .entity import DeviceSpec, EntitySpec, device_identifier, device_info, entry_uid

if TYPE_CHECKING:
    from .backends.base import BackendRuntime, McpGatewayConfigEntry

_LOGGER = logging.getLogger(__name__)

type EntityFactory = Callable[[BackendRuntime, EntitySpec], Entity]


class EntityPublisher:
    """Diffs a backend's entity specs against what HA has and applies the difference."""

    def __init__(
        self,
        hass: HomeAssistant,
        runtime: BackendRuntime,
        derive_specs: Callable[[], Iterable[EntitySpec]],
    ) -> None:
        self._hass = hass
        self._runtime = runtime
        self._derive = derive_specs
        self._platforms: dict[Platform, tuple[AddEntitiesCallback, EntityFactory]] = {}
        self._published: set[tuple[Platform, str]] = set()
        self._specs: dict[tuple[Platform, str], EntitySpec] = {}
        # Gateway calls that address devices look their entities up on every call.
        self._by_device: dict[str, list[EntitySpec]] = {}

    @property
    def _entry_uid(self) -> str:
        return entry_uid(self._runtime.entry)

    @property
    def specs(self) -> list[EntitySpec]:
        """The specs of the last refresh."""
        return list(self._specs.values())

    def spec(self, platform: Platform, key: str) -> EntitySpec | None:
        """The latest spec of an entity, or None once the backend no longer has it."""
        return self._specs.get((platform, key))

    def device_specs(self, device_key: str) -> list[EntitySpec]:
        """The specs of one device's entities; empty when the backend has no such device."""
        return self._by_device.get(device_key, [])

    def unique_id(self, spec: EntitySpec) -> str:
        """The unique id the entity of a spec gets."""
        return f"{self._entry_uid}_{spec.key}"

    @callback
    def register_platform(
        self, platform: Platform, add_entities: AddEntitiesCallback, factory: EntityFactory
    ) -> None:
        """Called from a platform's async_setup_entry; publishes that platform's entities."""
        self._platforms[platform] = (add_entities, factory)
        self._publish({platform})

    @callback
    def async_refresh(self) -> None:
        """Re-derive the specs (after a coordinator update) and apply the difference."""
        self._specs = {(spec.platform, spec.key): spec for spec in self._derive()}
        by_device: dict[str, list[EntitySpec]] = {}
        for spec in self._specs.values():
            by_device.setdefault(spec.device.key, []).append(spec)
        self._by_device = by_device
        self._ensure_devices()
        self._publish(set(self._platforms))
        self._remove_gone()

    def _ensure_devices(self) -> None:
        """Create devices before their entities, parents (via devices) first."""
        registry = dr.async_get(self._hass)
        devices: dict[str, DeviceSpec] = {}
        for spec in self._specs.values():
            device: DeviceSpec | None = spec.device
            while device is not None and device.key not in devices:
                devices[device.key] = device
                device = device.via
        ids: dict[str, str] = {}
        for device in sorted(devices.values(), key=_depth):
            entry = registry.async_get_or_create(
                config_entry_id=self._runtime.entry.entry_id,
                **device_info(self._entry_uid, device),
            )
            ids[device.key] = entry.id
            via_id = ids[device.via.key] if device.via is not None else None
            if entry.via_device_id != via_id:
                registry.async_update_device(entry.id, via_device_id=via_id)

    def _publish(self, platforms: set[Platform]) -> None:
        for platform in platforms:
            if platform not in self._platforms:
                continue
            add_entities, factory = self._platforms[platform]
            new = [
                spec
                for (spec_platform, key), spec in self._specs.items()
                if spec_platform is platform and (platform, key) not in self._published
            ]
            if not new:
                continue
            self._published.update((platform, spec.key) for spec in new)
            add_entities([factory(self._runtime, spec) for spec in new])

    def _remove_gone(self) -> None:
        """Remove registry entries and devices of this entry that the backend no longer has."""
        entry_id = self._runtime.entry.entry_id
        wanted_uids = {self.unique_id(spec) for spec in self._specs.values()}
        entities = er.async_get(self._hass)
        for entity in er.async_entries_for_config_entry(entities, entry_id):
            if entity.unique_id not in wanted_uids:
                _LOGGER.debug("Removing %s: gone from the backend", entity.entity_id)
                entities.async_remove(entity.entity_id)
        self._published &= set(self._specs)

        wanted_devices = self._wanted_devices()
        devices = dr.async_get(self._hass)
        for device in dr.async_entries_for_config_entry(devices, entry_id):
            ours = {ident for ident in device.identifiers if ident[0] == DOMAIN}
            if ours and not ours & wanted_devices:
                _LOGGER.debug("Removing device %s: gone from the backend", device.name)
                devices.async_update_device(device.id, remove_config_entry_id=entry_id)

    def _wanted_devices(self) -> set[tuple[str, str]]:
        """Identifiers of every device a spec lives on, with the hubs they are reached through."""
        wanted: set[tuple[str, str]] = set()
        for spec in self._specs.values():
            device: DeviceSpec | None = spec.device
            while device is not None:
                wanted.add(device_identifier(self._entry_uid, device.key))
                device = device.via
        return wanted

    def has_device(self, identifiers: set[tuple[str, str]]) -> bool:
        """Whether a registry device is still one the backend has (for manual removal)."""
        return bool(identifiers & self._wanted_devices())


def _depth(device: DeviceSpec) -> int:
    """How many hubs stand between a device and HA: parents are created first."""
    depth = 0
    while device.via is not None:
        depth += 1
        device = device.via
    return depth


def platform_setup(
    platform: Platform, factory: EntityFactory
) -> Callable[
    [HomeAssistant, McpGatewayConfigEntry, AddConfigEntryEntitiesCallback], Awaitable[None]
]:
    """The `async_setup_entry` of a generic platform module: hand the platform to the publisher."""

    async def async_setup_entry(
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        async_add_entities: AddConfigEntryEntitiesCallback,
    ) -> None:
        entry.runtime_data.publisher.register_platform(platform, async_add_entities, factory)

    return async_setup_entry
