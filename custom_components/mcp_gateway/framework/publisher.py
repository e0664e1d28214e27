"""Keeps HA's entities and devices in step with what a backend currently has.

A backend derives the full list of EntitySpecs from its data after every update; the publisher
adds entities for new keys and removes entities and devices whose keys are gone, so devices
come and go without a reload.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator, Set as AbstractSet
from functools import partial
import logging
import math
import time
from typing import TYPE_CHECKING, Final

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import (
    AddConfigEntryEntitiesCallback,
    AddEntitiesCallback,
)

from ..core.const import DOMAIN
from .entity import (
    DeviceSpec,
    EntitySpec,
    SpecKey,
    device_identifier,
    device_info,
    entry_uid,
    spec_key,
)
from .entity_limit import EntityLimitPlanner

if TYPE_CHECKING:
    from .base import BackendRuntime, McpGatewayConfigEntry

_LOGGER = logging.getLogger(__name__)

type EntityFactory = Callable[[BackendRuntime, EntitySpec], Entity]


# Devices or entities handed to the registries per call: a hub with thousands of devices is
# added in slices this size (each ~0.2-0.5 ms: registry entries, states, listeners).
SLICE: Final = 4
# The event loop is yielded once slices have held it this long: whatever else is ready (a
# gateway read, an HTTP request) waits for at most about this, not for a whole large step.
STEP_SECONDS: Final = 0.002
# How much longer than a step held the loop it is then left idle: adding takes three times
# its work, in exchange for reads that mostly do not wait.
REST_FACTOR: Final = 2.0
# Up to this many devices and entities are added at once (a few ms to ~60 ms).
AT_ONCE: Final = 200
# Specs derived from a backend's data at once; a larger backend continues in a task, yielding
# the loop every STEP_SECONDS.
DERIVE_CHUNK: Final = 500


class EntityPublisher:
    """Diffs a backend's entity specs against what HA has and applies the difference.

    Only the difference costs registry work: devices whose description changed, entities that
    are new, entities and devices that are gone. Large differences are applied in slices with
    the event loop yielded between them, so adding a 5,000-device hub does not stall HA.
    """

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
        self._published: set[SpecKey] = set()
        self._specs: dict[SpecKey, EntitySpec] = {}
        # Gateway calls that address devices look their entities up on every call.
        self._by_device: dict[str, list[EntitySpec]] = {}
        # Device specs as last written to the registry, by key.
        self._devices: dict[str, DeviceSpec] = {}
        self._device_ids: dict[str, str] = {}  # device key -> device registry id
        self._homes: dict[str, str | None] = {}  # device registry id -> its DeviceSpec's home
        # The registry may hold entities and devices from before a restart: the first
        # refresh compares it whole, later ones only what changed.
        self._reconciled = False
        self._slicing: asyncio.Task[None] | None = None
        self._deriving: asyncio.Task[None] | None = None
        # Bumped by every refresh: slices planned before one are planned again.
        self._generation = 0
        # HA's cap on enabled entities: what it leaves no room for waits, planned again on
        # every refresh and, while some wait, when the entry's entities are registered or
        # disabled (then the planner calls _apply).
        self._limit = EntityLimitPlanner(hass, runtime.entry, self.unique_id, self._apply)

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

    def home_of(self, device_id: str) -> str | None:
        """The home a registry device of this entry is in (None: HA's own, or not ours)."""
        return self._homes.get(device_id)

    def homes(self) -> set[str | None]:
        """The homes of this entry's devices (None: HA's own)."""
        return set(self._homes.values())

    def unique_id(self, spec: EntitySpec) -> str:
        """The unique id the entity of a spec gets."""
        return f"{self._entry_uid}_{spec.key}"

    @property
    def pending(self) -> bool:
        """Whether slices of a large difference are still being applied."""
        return self._slicing is not None and not self._slicing.done()

    @callback
    def register_platform(
        self, platform: Platform, add_entities: AddEntitiesCallback, factory: EntityFactory
    ) -> None:
        """Called from a platform's async_setup_entry; publishes that platform's entities."""
        self._platforms[platform] = (add_entities, factory)
        self._apply()

    @property
    def withheld(self) -> int:
        """How many entities wait for room under HA's cap on an entry's enabled entities."""
        return len(self._limit.withheld)

    @callback
    def async_stop(self) -> None:
        """Before the platforms unload: no more adding, and no slice left half done."""
        self._platforms.clear()
        self._limit.stop()
        self._generation += 1  # a derivation in progress is dropped
        if self._slicing is not None:
            self._slicing.cancel()
            self._slicing = None

    @callback
    def async_refresh(self) -> None:
        """Re-derive the specs (after a coordinator update) and apply the difference.

        A small backend is derived at once; a large one (thousands of devices) continues in a
        task that yields every DERIVE_CHUNK specs, and its result replaces the current specs
        in one step when complete (a newer refresh meanwhile supersedes it).
        """
        self._generation += 1
        specs = iter(self._derive())
        derived: dict[SpecKey, EntitySpec] = {}
        if self._take(specs, derived):
            self._commit(derived)
            return
        self._deriving = self._hass.async_create_task(
            self._async_derive(specs, derived, self._generation), f"{DOMAIN} derive"
        )

    async def async_derived(self) -> None:
        """Wait until a derivation in progress is applied (entry setup reads the specs)."""
        while (task := self._deriving) is not None and not task.done():
            await asyncio.shield(task)

    @staticmethod
    def _take(
        specs: Iterator[EntitySpec], derived: dict[SpecKey, EntitySpec], until: float = math.inf
    ) -> bool:
        """Derive up to DERIVE_CHUNK more specs, or until the monotonic time `until` (looked
        at every few specs); True once there are no more."""
        for count, spec in enumerate(specs, 1):
            derived[spec_key(spec)] = spec
            if count >= DERIVE_CHUNK or (count % _CHECK_EVERY == 0 and time.monotonic() > until):
                return False
        return True

    async def _async_derive(
        self,
        specs: Iterator[EntitySpec],
        derived: dict[SpecKey, EntitySpec],
        generation: int,
    ) -> None:
        held = 0.0
        while True:
            await _pause(held)
            if self._generation != generation:
                return  # a newer refresh derives afresh
            began = time.monotonic()
            done = self._take(specs, derived, began + STEP_SECONDS)
            held = time.monotonic() - began
            if done:
                self._commit(derived)
                return

    def _commit(self, derived: dict[SpecKey, EntitySpec]) -> None:
        before = self._specs
        self._specs = derived
        by_device: dict[str, list[EntitySpec]] = {}
        for spec in derived.values():
            by_device.setdefault(spec.device.key, []).append(spec)
        self._by_device = by_device
        if self._reconciled:
            self._remove_keys([before[key] for key in before.keys() - derived.keys()])
        else:
            self._remove_gone()
            self._reconciled = True
        self._apply()

    # --- adding ----------------------------------------------------------------------------

    def _pending_devices(self, withheld: AbstractSet[SpecKey]) -> list[DeviceSpec]:
        """Devices (parents first) whose registry entry is missing or described differently."""
        devices: dict[str, DeviceSpec] = {}
        for key, spec in self._specs.items():
            if key in withheld:
                continue  # a device whose entities all wait would be an empty one
            device: DeviceSpec | None = spec.device
            while device is not None and device.key not in devices:
                devices[device.key] = device
                device = device.via
        changed = [d for key, d in devices.items() if self._devices.get(key) != d]
        return sorted(changed, key=_depth)

    def _pending_entities(self, withheld: AbstractSet[SpecKey]) -> list[EntitySpec]:
        return [
            spec
            for key, spec in self._specs.items()
            if key[0] in self._platforms and key not in self._published and key not in withheld
        ]

    @callback
    def _apply(self) -> None:
        """Add what is new: at once when it is a few hundred, else in slices from a task."""
        if self.pending:
            return  # the running task looks again when it has done its slices
        devices, entities = self._planned()
        if len(devices) + len(entities) <= AT_ONCE:
            self._ensure_devices(devices)
            self._add_entities(entities)
            return
        # A tracked task: whoever waits for Home Assistant to settle waits for it too.
        self._slicing = self._hass.async_create_task(
            self._async_apply_slices(devices, entities), f"{DOMAIN} publish"
        )

    async def _async_apply_slices(
        self, devices: list[DeviceSpec], entities: list[EntitySpec]
    ) -> None:
        while devices or entities:
            generation = self._generation
            slices = [
                *(
                    partial(self._ensure_devices, devices[i : i + SLICE])
                    for i in range(0, len(devices), SLICE)
                ),
                *(
                    partial(self._add_entities, entities[i : i + SLICE])
                    for i in range(0, len(entities), SLICE)
                ),
            ]
            began = time.monotonic()
            for add in slices:
                if self._generation != generation:
                    break  # a refresh changed the specs: plan what is left again
                add()
                if (held := time.monotonic() - began) >= STEP_SECONDS:
                    await _pause(held)
                    began = time.monotonic()
            await _pause(time.monotonic() - began)
            # A refresh meanwhile may have brought new specs: planned again, the cap too.
            devices, entities = self._planned()

    def _planned(self) -> tuple[list[DeviceSpec], list[EntitySpec]]:
        """What to add now: the cap planned first, so nothing it withholds is handed over."""
        withheld = self._limit.plan(self._specs, self._published)
        return self._pending_devices(withheld), self._pending_entities(withheld)

    def _ensure_devices(self, devices: Iterable[DeviceSpec]) -> None:
        registry = dr.async_get(self._hass)
        entry_id = self._runtime.entry.entry_id
        for device in devices:
            entry = registry.async_get_or_create(
                config_entry_id=entry_id, **device_info(self._entry_uid, device)
            )
            self._device_ids[device.key] = entry.id
            self._homes[entry.id] = device.home
            # Linked through the registry: DeviceInfo's via_device is deprecated (HA 2026.x).
            # Parents come first (sorted by depth), in this slice or an earlier one.
            via_id = self._device_ids.get(device.via.key) if device.via is not None else None
            if entry.via_device_id != via_id:
                registry.async_update_device(entry.id, via_device_id=via_id)
            self._devices[device.key] = device

    def _add_entities(self, specs: Iterable[EntitySpec]) -> None:
        by_platform: dict[Platform, list[EntitySpec]] = {}
        for spec in specs:
            if spec.platform in self._platforms and spec_key(spec) not in self._published:
                by_platform.setdefault(spec.platform, []).append(spec)
        for platform, new in by_platform.items():
            add_entities, factory = self._platforms[platform]
            self._published.update(spec_key(spec) for spec in new)
            add_entities([factory(self._runtime, spec) for spec in new])

    # --- removing --------------------------------------------------------------------------

    def _remove_keys(self, gone: list[EntitySpec]) -> None:
        """Remove the entities of specs the backend no longer has, and devices left empty."""
        if not gone:
            return
        entities = er.async_get(self._hass)
        for spec in gone:
            self._published.discard(spec_key(spec))
            entity_id = entities.async_get_entity_id(spec.platform, DOMAIN, self.unique_id(spec))
            if entity_id is not None:
                _LOGGER.debug("Removing %s: gone from the backend", entity_id)
                entities.async_remove(entity_id)
        wanted = self._wanted_devices()
        devices = dr.async_get(self._hass)
        entry_id = self._runtime.entry.entry_id
        # This entry's devices by identifier: HA 2026.x deprecates async_get_device (identifiers
        # are unique per config entry there); this look-up reads the same on 2025.4.
        registered = {
            identifier: device
            for device in dr.async_entries_for_config_entry(devices, entry_id)
            for identifier in device.identifiers
        }
        candidates: dict[str, DeviceSpec] = {}
        for spec in gone:
            device: DeviceSpec | None = spec.device
            while device is not None:
                candidates[device.key] = device
                device = device.via
        for key in candidates:
            identifier = device_identifier(self._entry_uid, key)
            if identifier in wanted:
                continue
            self._devices.pop(key, None)
            if (device_id := self._device_ids.pop(key, None)) is not None:
                self._homes.pop(device_id, None)
            entry = registered.get(identifier)
            if entry is not None:
                _LOGGER.debug("Removing device %s: gone from the backend", entry.name)
                _drop_device(devices, entry, entry_id)

    def _remove_gone(self) -> None:
        """Remove registry entries and devices of this entry that the backend no longer has."""
        entry_id = self._runtime.entry.entry_id
        entities = er.async_get(self._hass)
        # A new entry has nothing registered yet: no wanted sets to build for it.
        if registered := er.async_entries_for_config_entry(entities, entry_id):
            wanted_uids = {self.unique_id(spec) for spec in self._specs.values()}
            for entity in registered:
                if entity.unique_id not in wanted_uids:
                    _LOGGER.debug("Removing %s: gone from the backend", entity.entity_id)
                    entities.async_remove(entity.entity_id)
        self._published &= set(self._specs)

        devices = dr.async_get(self._hass)
        registered_devices = dr.async_entries_for_config_entry(devices, entry_id)
        wanted_devices = self._wanted_devices() if registered_devices else set()
        for device in registered_devices:
            ours = {ident for ident in device.identifiers if ident[0] == DOMAIN}
            if ours and not ours & wanted_devices:
                _LOGGER.debug("Removing device %s: gone from the backend", device.name)
                _drop_device(devices, device, entry_id)

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


# Specs derived between looks at the clock.
_CHECK_EVERY: Final = 16


async def _pause(held: float) -> None:
    """After a step that held the event loop `held` seconds: let it run whatever else is
    ready, and leave it idle REST_FACTOR times as long, so that most requests arriving while
    a large backend is added find the loop free (a step costs one that does not)."""
    await asyncio.sleep(held * REST_FACTOR)


def _drop_device(devices: dr.DeviceRegistry, device: dr.DeviceEntry, entry_id: str) -> None:
    """Take this entry's device out of the registry, leaving other entries' share of it.

    HA 2026.x gives a device one config entry (`config_entry_id`) and deprecates removing an
    entry from it, so the device itself goes; on 2025.4 other entries may share the device, and
    removing our entry removes the device only when it was the last.
    """
    if getattr(device, "config_entry_id", None) == entry_id:
        devices.async_remove_device(device.id)
    else:
        devices.async_update_device(device.id, remove_config_entry_id=entry_id)


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
