"""Entity names: never doubled with their device's name, through HA's public naming API only.

An in-memory backend gives devices whose names end with the words of the entity's own name,
from each source HA names an entity by: a translation key, a static description name, a
device class, a backend label.
"""

from __future__ import annotations

from dataclasses import dataclass
import importlib
from typing import Any, Self

from homeassistant.components.binary_sensor import BinarySensorDeviceClass
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.entity import EntityDescription
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.framework.entity import (
    NAMED_BY_DEVICE_CLASS,
    DeviceSpec,
    EntitySpec,
    GatewayEntity,
)
from custom_components.mcp_gateway.platforms.binary_sensor import GatewayBinarySensorDescription
from custom_components.mcp_gateway.platforms.event import GatewayEventDescription
from custom_components.mcp_gateway.platforms.sensor import GatewaySensorDescription
from tests.simulation import FakeClient, InMemoryRuntime, setup_in_memory


@dataclass
class Thing:
    """A native object: the device it is, and whatever it reads."""

    device_name: str
    label: str | None = None  # a backend label, for entities named by the backend


HUB_TEMPERATURE = GatewaySensorDescription[Thing](
    key="temperature", translation_key="hub_temperature", value_fn=lambda t: 21.5
)
BUTTON = GatewayEventDescription[Thing](
    key="button", translation_key="button", event_types=["pushed"], events_fn=lambda t: []
)
MOTION = GatewayBinarySensorDescription[Thing](
    key="motion", device_class=BinarySensorDeviceClass.MOTION, is_on_fn=lambda t: False
)
POWER_USE = GatewaySensorDescription[Thing](key="power", name="Power use", value_fn=lambda t: 3)
LABELLED = GatewaySensorDescription[Thing](key="labelled", value_fn=lambda t: 1)

# item id -> (platform, description)
ROWS: dict[str, tuple[Platform, EntityDescription]] = {
    "hub": (Platform.SENSOR, HUB_TEMPERATURE),
    "doorbell": (Platform.EVENT, BUTTON),
    "hall": (Platform.BINARY_SENSOR, MOTION),
    "porch": (Platform.BINARY_SENSOR, MOTION),
    "garage": (Platform.SENSOR, POWER_USE),
    "meter": (Platform.SENSOR, LABELLED),
}


class NamesRuntime(InMemoryRuntime):
    """Things whose device names overlap their entities' names (or do not)."""

    kind = "names"
    platforms = (Platform.SENSOR, Platform.BINARY_SENSOR, Platform.EVENT)
    things: dict[str, Thing]

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: Any) -> Self:
        runtime = cls(hass, entry, FakeClient())  # type: ignore[arg-type]
        runtime.things = {
            "hub": Thing("Home Hub"),  # + "Hub temperature"
            "doorbell": Thing("Front door button"),  # + "Button": nothing left
            "hall": Thing("Hall motion"),  # + "Motion", HA's name for the device class
            "porch": Thing("Porch"),  # + "Motion", no overlap
            "garage": Thing("Garage power"),  # + "Power use"
            "meter": Thing("Water meter", label="Meter reading"),
        }
        return runtime

    async def _poll(self) -> dict[str, Thing]:
        return dict(self.things)

    def _specs(self) -> list[EntitySpec]:
        specs = []
        for item_id, thing in self.coordinator.data.items():
            platform, description = ROWS[item_id]
            device = DeviceSpec(key=item_id, name=thing.device_name)
            specs.append(self.item_spec(platform, description, device, item_id, thing.label))
        return specs


@pytest.fixture
async def entry(hass: HomeAssistant) -> MockConfigEntry:
    """A loaded entry of the in-memory backend."""
    return await setup_in_memory(hass, NamesRuntime, unique_id="names")


def _named(hass: HomeAssistant, platform: Platform, item_id: str) -> tuple[str, str, str | None]:
    """Entity id, friendly name and registry name HA gave the entity of `item_id`."""
    key = ROWS[item_id][1].key
    entity_id = er.async_get(hass).async_get_entity_id(platform, DOMAIN, f"names_{item_id}_{key}")
    assert entity_id is not None
    registry_entry = er.async_get(hass).async_get(entity_id)
    assert registry_entry is not None
    friendly = hass.states.get(entity_id).attributes["friendly_name"]
    return entity_id, friendly, registry_entry.original_name


@pytest.mark.usefixtures("entry")
@pytest.mark.parametrize(
    ("platform", "item_id", "expected"),
    [
        # A translated name that begins with the words the device's name ends with.
        (
            Platform.SENSOR,
            "hub",
            ("sensor.home_hub_temperature", "Home Hub Temperature", "Temperature"),
        ),
        # A translated name that is only the device's last word: named as its device.
        (Platform.EVENT, "doorbell", ("event.front_door_button", "Front door button", None)),
        # HA's device class name ("Motion"), for a device already called "... motion".
        (Platform.BINARY_SENSOR, "hall", ("binary_sensor.hall_motion", "Hall motion", None)),
        # No overlap: HA's own name, untouched.
        (Platform.BINARY_SENSOR, "porch", ("binary_sensor.porch_motion", "Porch Motion", "Motion")),
        # A static description name.
        (Platform.SENSOR, "garage", ("sensor.garage_power_use", "Garage power Use", "Use")),
        # A backend label.
        (
            Platform.SENSOR,
            "meter",
            ("sensor.water_meter_reading", "Water meter Reading", "Reading"),
        ),
    ],
)
async def test_names_are_not_doubled(
    hass: HomeAssistant, platform: Platform, item_id: str, expected: tuple[str, str, str | None]
) -> None:
    """Friendly name, entity id and registry name drop the device's repeated words."""
    assert _named(hass, platform, item_id) == expected


async def test_device_rename_undoes_the_overlap(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A device renamed so that its name no longer overlaps shows the entity's whole name."""
    runtime: NamesRuntime = entry.runtime_data
    runtime.things["doorbell"].device_name = "Front door"
    runtime.things["hub"].device_name = "Basement hub"  # still overlapping
    await runtime.coordinator.async_refresh()
    await hass.async_block_till_done()
    # (The registry keeps the name the entity was added with; the state follows.)
    assert _named(hass, Platform.EVENT, "doorbell")[1] == "Front door Button"
    assert _named(hass, Platform.SENSOR, "hub")[1] == "Basement hub Temperature"


async def test_names_follow_the_system_language(hass: HomeAssistant) -> None:
    """Names are in the system language, as HA's own translated names are (HA translates
    entity names in the language of Settings → System → General, not per user), and follow
    a change of it at the next set-up, overlap removed in whichever language."""
    hass.config.language = "de"
    entry = await setup_in_memory(hass, NamesRuntime, unique_id="names")
    # "Taste" does not repeat "Front door button": German, whole.
    assert _named(hass, Platform.EVENT, "doorbell")[1:] == ("Front door button Taste", "Taste")
    assert _named(hass, Platform.SENSOR, "hub")[1] == "Home Hub Hub-Temperatur"

    hass.config.language = "en"
    assert await hass.config_entries.async_unload(entry.entry_id)
    await setup_in_memory(hass, NamesRuntime, entry)
    # The state follows at once; "Button" repeats the device's last word: named as it.
    assert _named(hass, Platform.EVENT, "doorbell")[1] == "Front door button"
    assert _named(hass, Platform.SENSOR, "hub")[1] == "Home Hub Temperature"


def _entity_classes() -> list[type[GatewayEntity]]:
    classes: list[type[GatewayEntity]] = [GatewayEntity]
    for platform in Platform:
        try:
            module = importlib.import_module(f"custom_components.mcp_gateway.platforms.{platform}")
        except ModuleNotFoundError:
            continue
        classes += [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, GatewayEntity)
            and value.__module__ == module.__name__
        ]
    return classes


# The protected hooks HA documents for subclasses to override.
DOCUMENTED_HOOKS = {"_handle_coordinator_update"}


def test_no_private_home_assistant_attribute_is_overridden() -> None:
    """Our entity classes override only HA's public API (and its documented hooks).

    A private attribute of HA's (as `_name_internal` was) changes or goes without notice
    between releases; `use_device_name` is already gone in HA 2026.x. A private class-level
    flag is HA's too (ours are methods): `_enable_turn_on_off_backwards_compatibility` had
    silently stopped meaning anything.
    """
    overridden = []
    classes = _entity_classes()
    assert len(classes) > 15
    for cls in classes:
        ha_bases = [base for base in cls.__mro__ if base.__module__.startswith("homeassistant")]
        for name, value in vars(cls).items():
            if name in {"use_device_name", "_name_internal"}:
                overridden.append(f"{cls.__name__}.{name}")
            # Public names, `_attr_` shorthands, and what metaclasses add (mangled, ABC's).
            if not name.startswith("_") or name.startswith(("__", "_attr_", "_abc_")):
                continue
            if "__" in name or name in DOCUMENTED_HOOKS:
                continue
            if any(name in vars(base) for base in ha_bases) or not callable(value):
                overridden.append(f"{cls.__name__}.{name}")
    assert overridden == []


def test_device_class_naming_platforms_match_home_assistant() -> None:
    """Our list of platforms HA names by device class agrees with this HA release's.

    Read from HA's platform entity classes (not called): which of them override Entity's
    default, on each platform we have.
    """
    named = set()
    for cls in _entity_classes()[1:]:
        platform = Platform(cls.__module__.rsplit(".", 1)[-1])
        if any(
            "_default_to_device_class_name" in vars(base)
            for base in cls.__mro__
            if base.__module__.startswith("homeassistant.components.")
        ):
            named.add(platform)
    assert named == set(NAMED_BY_DEVICE_CLASS) & {
        Platform(cls.__module__.rsplit(".", 1)[-1]) for cls in _entity_classes()[1:]
    }
    assert Platform.SENSOR in named
