"""Benchmark only: the least any integration does to give Home Assistant N entities (the floor).

`bench.scale` adds a 5,000-device hub through our integration, then adds the same entities through
this one in the same Home Assistant: every entity of ours becomes a plain `SwitchEntity` (where
ours can be switched) or `SensorEntity` (the rest) with its own unique id and DeviceInfo, on the
same number of devices with the same entities each, disabled by default where ours are; state
set once, no polling, no coordinator. Whatever Home Assistant keeps per entity and per device
(registry entries, states, the platform's and the registries' listeners) is kept for these too,
so the tracked objects and full garbage collections measured here are what any integration
adding that many entities brings. With `coordinated`, the entities are HA's `CoordinatorEntity`s
of one `DataUpdateCoordinator` (as most polling integrations and ours write them; it never
refreshes here), each listening with its device as context: what that pattern adds per entity.

Set up with Home Assistant's test helpers (`mock_integration` / `mock_platform`, as HA's own
tests register integrations): the config entry, its forwarding to the platforms, the entity
platforms and registries are HA's real code. Entities are added in slices of `slice_size` per
platform from a task, yielding the loop between slices as ours does (`publisher.SLICE`), or with
`slice_size` 0 in one `async_add_entities` per platform, as most integrations do.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
import logging
from typing import Final

from homeassistant.components.sensor import SensorEntity
from homeassistant.components.switch import SwitchEntity
from homeassistant.config_entries import ConfigEntry, ConfigFlow
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import AddEntitiesCallback
from homeassistant.helpers.update_coordinator import CoordinatorEntity, DataUpdateCoordinator
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    MockPlatform,
    mock_integration,
    mock_platform,
)

DOMAIN: Final = "bench_floor"
PLATFORMS: Final = (Platform.SENSOR, Platform.SWITCH)
# Our platforms whose entities a user switches; every other platform's become sensors.
SWITCHED: Final = frozenset(
    {
        Platform.COVER,
        Platform.FAN,
        Platform.LIGHT,
        Platform.LOCK,
        Platform.SIREN,
        Platform.SWITCH,
        Platform.VALVE,
    }
)


# A layout is one string per device, a letter per entity: s a sensor, w a switch, in capitals
# when disabled by default. Strings in a tuple: nothing the garbage collector walks, so the
# layout kept from the hub's run does not weigh on the floor's collections.
type Layout = tuple[str, ...]


def layout_of(hass: HomeAssistant, entry_id: str) -> Layout:
    """The devices and entities a config entry has, as the floor's layout."""
    devices: dict[str | None, str] = {}
    for entity in er.async_entries_for_config_entry(er.async_get(hass), entry_id):
        letter = "w" if entity.domain in SWITCHED else "s"
        letter = letter if entity.disabled_by is None else letter.upper()
        devices[entity.device_id] = devices.get(entity.device_id, "") + letter
    return tuple(devices.values())


def describe(layout: Layout) -> str:
    """E.g. `5,005 devices, 11,322 entities (8,481 sensors, 2,841 switches, 419 disabled
    by default)`."""
    letters = Counter("".join(layout))
    sensors, switches = letters["s"] + letters["S"], letters["w"] + letters["W"]
    return (
        f"{len(layout):,} devices, {sensors + switches:,} entities ({sensors:,} sensors,"
        f" {switches:,} switches, {letters['S'] + letters['W']:,} disabled by default)"
    )


class FloorFlow(ConfigFlow, domain=DOMAIN):
    """Home Assistant sets up entries only of integrations with a flow (defining it registers
    it); the benchmark adds its entry directly."""

    VERSION = 1


def _device_info(index: int) -> DeviceInfo:
    # A new DeviceInfo per entity, as integrations write it in their entity's constructor.
    return DeviceInfo(
        identifiers={(DOMAIN, f"device-{index}")},
        name=f"Floor device {index}",
        manufacturer="Bench",
        model="Floor",
    )


class FloorEntity(Entity):
    """What every floor entity is: named by its number, on its device, never polled."""

    _attr_has_entity_name = True
    _attr_should_poll = False
    _label: str

    def __init__(self, unique_id: str, device: int, enabled: bool) -> None:
        self._attr_unique_id = unique_id
        self._attr_name = f"{self._label} {unique_id.rsplit('-', 1)[1]}"
        self._attr_device_info = _device_info(device)
        self._attr_entity_registry_enabled_default = enabled


class FloorSensor(FloorEntity, SensorEntity):
    """A sensor whose value is set once."""

    _label = "Value"

    def __init__(self, unique_id: str, device: int, enabled: bool) -> None:
        super().__init__(unique_id, device, enabled)
        self._attr_native_value = device % 100


class FloorSwitch(FloorEntity, SwitchEntity):
    """A switch that is off (and stays off: nothing here switches it)."""

    _label = "Switch"
    _attr_is_on = False


type Coordinator = DataUpdateCoordinator[None]


class CoordinatedSensor(CoordinatorEntity[Coordinator], FloorSensor):
    """The sensor as a coordinator's entity."""

    def __init__(
        self, coordinator: Coordinator, unique_id: str, device: int, enabled: bool
    ) -> None:
        CoordinatorEntity.__init__(self, coordinator, context=device)
        FloorSensor.__init__(self, unique_id, device, enabled)


class CoordinatedSwitch(CoordinatorEntity[Coordinator], FloorSwitch):
    """The switch as a coordinator's entity."""

    def __init__(
        self, coordinator: Coordinator, unique_id: str, device: int, enabled: bool
    ) -> None:
        CoordinatorEntity.__init__(self, coordinator, context=device)
        FloorSwitch.__init__(self, unique_id, device, enabled)


def _entities(layout: Layout, platform: Platform, coordinator: Coordinator | None) -> list[Entity]:
    letter = "w" if platform is Platform.SWITCH else "s"
    wanted = [
        (f"device-{device}-{number}", device, entity == letter)
        for device, entities in enumerate(layout)
        for number, entity in enumerate(entities)
        if entity.lower() == letter
    ]
    if coordinator is None:
        plain = FloorSwitch if platform is Platform.SWITCH else FloorSensor
        return [plain(*args) for args in wanted]
    coordinated = CoordinatedSwitch if platform is Platform.SWITCH else CoordinatedSensor
    return [coordinated(coordinator, *args) for args in wanted]


def register(hass: HomeAssistant, layout: Layout, slice_size: int, coordinated: bool) -> None:
    """Make the floor integration (and its two platforms) known to Home Assistant."""

    async def setup_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        entry.runtime_data = (
            DataUpdateCoordinator(
                hass, logging.getLogger(__name__), config_entry=entry, name="floor"
            )
            if coordinated
            else None
        )
        await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
        return True

    async def unload_entry(hass: HomeAssistant, entry: ConfigEntry) -> bool:
        return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)

    mock_integration(
        hass, MockModule(DOMAIN, async_setup_entry=setup_entry, async_unload_entry=unload_entry)
    )
    # The config_flow platform HA imports before an entry's setup (FloorFlow is the flow).
    mock_platform(hass, f"{DOMAIN}.config_flow")
    for platform in PLATFORMS:

        async def setup_platform(
            hass: HomeAssistant,
            entry: ConfigEntry,
            add_entities: AddEntitiesCallback,
            platform: Platform = platform,
        ) -> None:
            entities = _entities(layout, platform, entry.runtime_data)
            if slice_size <= 0:
                add_entities(entities)
                return
            # Tracked by the entry, so waiting for Home Assistant to settle waits for it.
            entry.async_create_task(hass, _add_in_slices(entities, add_entities, slice_size))

        mock_platform(hass, f"{DOMAIN}.{platform}", MockPlatform(async_setup_entry=setup_platform))


async def _add_in_slices(
    entities: Sequence[Entity], add_entities: AddEntitiesCallback, size: int
) -> None:
    for start in range(0, len(entities), size):
        add_entities(entities[start : start + size])
        await asyncio.sleep(0)


async def add_floor(
    hass: HomeAssistant, layout: Layout, slice_size: int, *, coordinated: bool = False
) -> MockConfigEntry:
    """Set up the floor entry and wait until every entity exists."""
    register(hass, layout, slice_size, coordinated)
    entry = MockConfigEntry(domain=DOMAIN, title="Floor", unique_id="floor", data={})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    return entry


def forget_removed(hass: HomeAssistant) -> None:
    """Drop the registries' memory of removed entries' entities and devices.

    Home Assistant keeps a removed entity's and device's registry entry for 30 days (so a
    re-added one gets its old id and settings back): after one benchmark hub is removed, tens of
    thousands of them would stay on the heap that the next measurement's garbage collections
    walk.
    """
    entities = er.async_get(hass)
    for key in [k for k, e in entities.deleted_entities.items() if e.orphaned_timestamp]:
        del entities.deleted_entities[key]
    devices = dr.async_get(hass)
    # HA 2026.x deprecates the public name (reading it raises outside a running HA).
    deleted = getattr(devices, "_deleted_devices", None)
    if deleted is None:
        deleted = devices.deleted_devices
    for device_id in [k for k, d in deleted.items() if d.orphaned_timestamp]:
        del deleted[device_id]
