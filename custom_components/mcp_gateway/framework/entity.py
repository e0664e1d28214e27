"""The generic entity base and the specs backends use to describe their entities."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
import functools
from typing import TYPE_CHECKING, Any, Concatenate, Final, Protocol

from awesomeversion import AwesomeVersion
from homeassistant.components.sensor import SensorDeviceClass
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform, __version__ as HA_VERSION
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import EntityDescription
from homeassistant.helpers.typing import UNDEFINED
from homeassistant.helpers.update_coordinator import CoordinatorEntity, DataUpdateCoordinator

from ..core.compat import cached_translation
from ..core.const import DOMAIN
from ..core.words import split_words, unaccented
from ..mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpRateLimitError,
    McpResponseTooLargeError,
)
from .coordinator import BackendCoordinator

if TYPE_CHECKING:
    from .base import BackendRuntime


@dataclass(frozen=True, kw_only=True)
class GatewayEntityDescription[NativeT](EntityDescription):
    """What every platform description adds to HA's: attributes from the native.

    Generic over the native object its callables read, so a backend's table
    (`GatewaySensorDescription[HubitatDevice](value_fn=...)`) is type-checked.
    """

    attributes_fn: Callable[[NativeT], Mapping[str, Any] | None] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceSpec:
    """A device in HA's registry, as a backend describes it."""

    key: str  # unique within the entry, from native ids
    name: str
    manufacturer: str | None = None
    model: str | None = None
    sw_version: str | None = None
    hw_version: str | None = None
    suggested_area: str | None = None
    via: DeviceSpec | None = None  # the hub/bridge this device is reached through
    configuration_url: str | None = None
    # The home the device is in, as its backend names it (a Homecast home, a Hubitat hub's
    # location); None: Home Assistant's own home. Not in the registry: the gateway tells
    # twins of two homes apart by it.
    home: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EntitySpec:
    """One entity a backend wants to exist, bound to the native object it reads."""

    platform: Platform
    key: str  # unique within the entry, from native ids (never from display names)
    device: DeviceSpec
    description: EntityDescription
    coordinator: DataUpdateCoordinator[Any]
    # Returns the native object the description's callables read, or None when it is gone.
    source: Callable[[], Any]
    # A display name for entities whose name is not a translation (e.g. an alarm's label).
    name: str | None = None
    # The device's own availability (an accessory that stopped answering), read from the
    # native: a backend sets it once per device instead of on every description.
    available_fn: Callable[[Any], bool] | None = None
    # Placeholders of a translated name that names its native (an alarm's label), so the
    # name stays translated and follows a rename.
    translation_placeholders: Mapping[str, str] | None = None


# An entity's (platform, key), the platform as its plain string: the collector stops tracking a
# tuple of strings, while one holding the Platform member is walked by every full collection
# (the publisher keeps two per entity: the specs' key and the published one). Platform is a
# StrEnum, equal to and hashed as its string, so look-ups with a Platform member find these keys.
type SpecKey = tuple[str, str]


def spec_key(spec: EntitySpec) -> SpecKey:
    """The key the publisher and the entity limit know a spec by."""
    return (spec.platform.value, spec.key)


def entry_uid(entry: ConfigEntry) -> str:
    """What every unique id and device identifier of an entry starts with."""
    return entry.unique_id or entry.entry_id


def key_of_unique_id(entry: ConfigEntry, unique_id: str) -> str:
    """The EntitySpec key an entity's unique id (of this entry) ends in."""
    return unique_id.removeprefix(f"{entry_uid(entry)}_")


def device_identifier(entry_uid: str, device_key: str) -> tuple[str, str]:
    """The registry identifier of a device of an entry."""
    return (DOMAIN, f"{entry_uid}_{device_key}")


def device_info(entry_uid: str, spec: DeviceSpec) -> DeviceInfo:
    """DeviceInfo for a DeviceSpec, without its hub: the publisher links that by device id.

    DeviceInfo's `via_device` (an identifier) is deprecated (removal 2027.8) for `via_device_id`,
    which 2025.4 does not know; the registry's async_update_device takes via_device_id in both.
    """
    return DeviceInfo(
        identifiers={device_identifier(entry_uid, spec.key)},
        name=spec.name,
        manufacturer=spec.manufacturer,
        model=spec.model,
        sw_version=spec.sw_version,
        hw_version=spec.hw_version,
        suggested_area=spec.suggested_area,
        configuration_url=spec.configuration_url,
    )


@functools.lru_cache(maxsize=64)
def shared_device_info(entry_uid: str, spec: DeviceSpec) -> DeviceInfo:
    """One DeviceInfo for the entities of a device, which are added one after another.

    Each entity keeps its DeviceInfo for life and Home Assistant only reads it: shared, it is
    two objects per device instead of per entity (a dict and its identifier set), which every
    full garbage collection walks. Not to be changed by whoever holds it.
    """
    return device_info(entry_uid, spec)


# The first release whose entity registry begins a new entity id with the device's area
# (home-assistant/core PR 170560, "Prefix area to entity ID").
AREA_FIRST_RELEASE: Final = AwesomeVersion("2026.6.0")


def area_leads_entity_ids(hass: HomeAssistant) -> bool:
    """Whether HA builds a new entity id as area + device + entity name.

    From 2026.6 it does. The registry's `_async_generate_entity_id` joins the parts its
    settings' `entity_id_parts` name (None: its defaults, area, parent device, device, entity;
    a user may leave the area out). 2025.4 has no such settings and builds the id from device
    and entity name alone. A device name that starts with its area then reads it twice
    (`light.kitchen_kitchen_desk_lamp`).
    """
    settings = getattr(er.async_get(hass), "settings", None)
    if settings is None:
        return AwesomeVersion(HA_VERSION) >= AREA_FIRST_RELEASE
    parts = getattr(settings, "entity_id_parts", None)
    return parts is None or "area" in {str(part) for part in parts}


def without_area(area: str | None, name: str) -> str:
    """A device's name without the area it starts with, as often as it does ("Kitchen Desk
    Lamp" in the Kitchen: "Desk Lamp"; "Garage Garage Door" in the Garage: "Door"); never all
    of the name (a device called "Kitchen" in the Kitchen keeps it). Words compare as the
    gateway splits them, case, accents and separators aside ("Rob's Flat", "living-room");
    every word counts, filler words too ("The Den Lamp" in The Den: "Lamp")."""
    if not area or not (area_words := _plain_words(area)):
        return name
    tokens = name.split()
    while True:
        for size in range(1, len(tokens)):
            lead = _plain_words(" ".join(tokens[:size]))
            if lead == area_words:
                tokens = tokens[size:]
                break
            if len(lead) >= len(area_words):
                return " ".join(tokens)
        else:
            return " ".join(tokens)


def _plain_words(text: str) -> list[str]:
    return split_words(unaccented(text))


def without_overlap(device_name: str | None, name: str) -> str | None:
    """`name` minus its first words when the device's name ends with them; None if nothing
    is left (the entity is then named as its device)."""
    if not device_name:
        return name
    device_words = device_name.casefold().split()
    words = name.split()
    folded = [word.casefold() for word in words]
    for size in range(min(len(device_words), len(words)), 0, -1):
        if device_words[-size:] == folded[:size]:
            rest = " ".join(words[size:])
            return rest[:1].upper() + rest[1:] if rest else None
    return name


# Platforms whose unnamed entities HA names by their device class (each platform entity's
# `_default_to_device_class_name`, the same in HA 2025.4 and 2026.x); a sensor's ENUM is not.
NAMED_BY_DEVICE_CLASS = frozenset(
    {Platform.BINARY_SENSOR, Platform.BUTTON, Platform.EVENT, Platform.NUMBER, Platform.SENSOR}
)


def _named_by_device_class(platform: Platform, device_class: str) -> bool:
    return platform in NAMED_BY_DEVICE_CLASS and device_class != SensorDeviceClass.ENUM


class GatewayEntity(CoordinatorEntity[DataUpdateCoordinator[Any]]):
    """Base of every entity: naming, device, availability from the native object."""

    _attr_has_entity_name = True

    def __init__(self, runtime: BackendRuntime, spec: EntitySpec) -> None:
        super().__init__(spec.coordinator, context=spec.device.key)
        self.runtime = runtime
        self.spec = spec
        self.entity_description = spec.description
        uid = entry_uid(runtime.entry)
        self._attr_unique_id = f"{uid}_{spec.key}"
        self._attr_device_info = shared_device_info(uid, spec.device)
        if spec.translation_placeholders is not None:
            self._attr_translation_placeholders = spec.translation_placeholders
        self._name_without_overlap()

    def _name_without_overlap(self, *, renamed: bool = False) -> None:
        """Name the entity without the words its device's name already ends with.

        HA shows device name + entity name: "Kitchen Doorbell" + "Doorbell" would read
        "Kitchen Doorbell Doorbell". The name is fixed as `_attr_name` before the entity is
        added, so HA's friendly name and suggested entity id both follow it (HA 2025.x also
        reads a None `_attr_name` as "named as its device"). A translated name without
        overlap stays HA's own resolution. Either is in the system language: HA translates
        entity names in it, not per user, and resolves them at each set-up, as here.
        """
        if self.spec.name is not None:  # the backend's label
            self._attr_name = without_overlap(self.spec.device.name, self.spec.name)
            return
        if (name := self._description_name()) is None:
            return
        shorter = without_overlap(self.spec.device.name, name)
        # Once set, kept in step: a later rename of the device may undo the overlap. HA keeps
        # a translated name once resolved, so new placeholders need it set too.
        if shorter != name or hasattr(self, "_attr_name") or renamed:
            self._attr_name = shorter

    def _description_name(self) -> str | None:
        """The name HA gives the description (None: left to HA): its translation key's,
        else its static name, else (where HA's platform does so) its device class's."""
        description = self.entity_description
        hass = self.runtime.hass
        if self.has_entity_name and (translation_key := self.translation_key) is not None:
            # Loaded by the entity platform before it sets up our entities; HA falls back to
            # English for a language without our translations.
            key = f"component.{DOMAIN}.entity.{self.spec.platform}.{translation_key}.name"
            if (translated := cached_translation(hass, "entity", DOMAIN, key)) is not None:
                try:
                    return translated.format_map(self.translation_placeholders)
                except KeyError:
                    return None  # left to HA, which reports the mismatch
        if description.name is not UNDEFINED:
            return description.name
        if (device_class := self.device_class) is None or not _named_by_device_class(
            self.spec.platform, device_class
        ):
            return None
        return cached_translation(
            hass,
            "entity_component",
            self.spec.platform,
            f"component.{self.spec.platform}.entity_component.{device_class}.name",
        )

    @property
    def native(self) -> Any:
        """The backend's current object for this entity, or None when it is gone."""
        return self.spec.source()

    @callback
    def _handle_coordinator_update(self) -> None:
        """Follow the backend's latest spec, so a renamed alarm or rule shows its new name.

        A backend that tells which devices changed spares the other devices' state writes.
        """
        coordinator = self.coordinator
        if (
            isinstance(coordinator, BackendCoordinator)
            and (changed := coordinator.changed_devices()) is not None
            and self.coordinator_context not in changed
        ):
            return
        if (latest := self.runtime.publisher.spec(self.spec.platform, self.spec.key)) is not None:
            renamed = (
                latest.name,
                latest.device.name,
                latest.translation_placeholders,
            ) != (self.spec.name, self.spec.device.name, self.spec.translation_placeholders)
            self.spec = latest
            if latest.translation_placeholders is not None:
                self._attr_translation_placeholders = latest.translation_placeholders
            if renamed:
                self._name_without_overlap(renamed=True)
        super()._handle_coordinator_update()

    @property
    def available(self) -> bool:
        """Unavailable while the coordinator fails, the native is gone or says it is unreachable."""
        if not super().available or (native := self.native) is None:
            return False
        return self.spec.available_fn is None or self.spec.available_fn(native)

    @property
    def extra_state_attributes(self) -> Mapping[str, Any] | None:
        """Attributes the backend derives from the native object (e.g. a rule's definition)."""
        description = self.entity_description
        if (
            not isinstance(description, GatewayEntityDescription)
            or description.attributes_fn is None
            or (native := self.native) is None
        ):
            return None
        return description.attributes_fn(native)

    def read[T](self, value_fn: Callable[[Any], T] | None) -> T | None:
        """Apply a read callable to the native object; None when either is missing."""
        if value_fn is None or (native := self.native) is None:
            return None
        return value_fn(native)


@contextmanager
def backend_errors(runtime: BackendRuntime) -> Iterator[None]:
    """The one boundary from backend failures to the errors HA shows a user.

    Entity actions (through `translate_errors`) and backend actions use it alike; a backend
    catches its own domain errors inside it first.
    """
    try:
        yield
    except ValueError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="invalid_value",
            translation_placeholders={"error": str(err)},
        ) from err
    except McpAuthError as err:
        runtime.entry.async_start_reauth(runtime.hass)
        raise HomeAssistantError(translation_domain=DOMAIN, translation_key="auth_failed") from err
    except McpRateLimitError as err:
        raise HomeAssistantError(translation_domain=DOMAIN, translation_key="rate_limited") from err
    except McpConnectionError as err:
        if err.may_have_run:
            # Sent, then cut off: saying it failed would invite a second, duplicate command.
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="outcome_unknown",
                translation_placeholders={"error": str(err)},
            ) from err
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="communication_error",
            translation_placeholders={"error": str(err)},
        ) from err
    except McpResponseTooLargeError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="answer_too_large",
            translation_placeholders={"limit": str(err.limit // (1024 * 1024))},
        ) from err
    except McpError as err:  # tool results with isError, JSON-RPC errors, bad replies
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="command_failed",
            translation_placeholders={"error": str(err)},
        ) from err


class _EntityAction[E: GatewayEntity, **P](Protocol):
    """An entity method as written: `self` may be passed by name, as in `def f(self, **kwargs)`.

    `Concatenate[E, P]` would make the entity positional-only, which a method whose other
    parameters are `**kwargs` does not match (a caller could pass `self=` among them).
    """

    def __call__(_action, self: E, *args: P.args, **kwargs: P.kwargs) -> Awaitable[Any]: ...


def translate_errors[E: GatewayEntity, **P](
    func: _EntityAction[E, P],
) -> Callable[Concatenate[E, P], Coroutine[Any, Any, None]]:
    """Turn backend failures of an entity action into the errors HA shows a user.

    After a successful action the entity's listeners are refreshed, so an optimistic
    change the backend applied to its data shows at once.
    """

    @functools.wraps(func)
    async def wrapper(self: E, /, *args: P.args, **kwargs: P.kwargs) -> None:
        with backend_errors(self.runtime):
            await func(self, *args, **kwargs)
        self.coordinator.async_update_listeners()

    return wrapper
