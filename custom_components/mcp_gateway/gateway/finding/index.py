"""An index of the integration's registry entities by id, entry, device, area and domain.

Built once per hass on first use and kept current from the entity and device registries'
events, so a gateway read that names a few entities touches only those: no registry walk, no
device lookup and no permission check for the thousands it does not return.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.util.hass_dict import HassKey

from ...core.const import DOMAIN

DATA_INDEX: Final[HassKey[EntityIndex]] = HassKey(f"{DOMAIN}_entity_index")


@dataclass(frozen=True, slots=True)
class IndexedEntity:
    """What the gateway needs of one registry entry, without asking the registries again."""

    entity_id: str
    entry_id: str
    device_id: str | None
    own_area_id: str | None
    disabled: bool
    # The registry's unique id: which of the backend's entities this is, read without asking
    # the registry again on every read.
    unique_id: str = ""

    @property
    def domain(self) -> str:
        """The entity's platform domain."""
        return self.entity_id.split(".", 1)[0]


class EntityIndex:
    """Our registry entities, indexed; follows registry events (run synchronously as callbacks)."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._hass = hass
        self._entities: dict[str, IndexedEntity] = {}
        self._by_entry: dict[str, set[str]] = {}
        self._by_device: dict[str, set[str]] = {}
        self._by_domain: dict[str, set[str]] = {}
        # Area of each device one of our entities lives on (an entity without its own area
        # is in its device's area).
        self._device_area: dict[str, str | None] = {}
        self._built = False
        # Sorted entity ids per entry set: the unfiltered read needs them in order, and
        # sorting thousands of ids on every read would cost what the index saves.
        self._sorted: dict[tuple[str, ...], list[str]] = {}
        # What readers derive from the index (selection.py's refs of an unfiltered read),
        # dropped whenever the index changes.
        self.derived: dict[Any, Any] = {}

    @classmethod
    def get(cls, hass: HomeAssistant) -> EntityIndex:
        """The hass-wide index, built (and subscribed to the registries) on first use."""
        if (index := hass.data.get(DATA_INDEX)) is None:
            index = hass.data[DATA_INDEX] = cls(hass)
        if not index._built:
            index._build()
        return index

    # --- queries ---------------------------------------------------------------------------

    def area_of(self, entity: IndexedEntity) -> str | None:
        """The entity's own area, else its device's."""
        if entity.own_area_id is not None or entity.device_id is None:
            return entity.own_area_id
        return self._device_area.get(entity.device_id)

    def entities(
        self,
        entry_ids: Iterable[str],
        *,
        entity_ids: Iterable[str] | None = None,
        domains: Iterable[str] | None = None,
    ) -> list[IndexedEntity]:
        """Enabled entities of the given entries, narrowed by id or domain, in entity id order.

        Only the narrowest given key is walked: asking for three entity ids costs three lookups
        whatever the number of entities.
        """
        entries = frozenset(entry_ids)
        if entity_ids is not None:
            ids: Iterable[str] = sorted(set(entity_ids))
        elif domains is not None:
            ids = sorted({eid for domain in domains for eid in self._by_domain.get(domain, ())})
        else:
            ids = self._sorted_ids(entries)
        found: list[IndexedEntity] = []
        for entity_id in ids:
            entity = self._entities.get(entity_id)
            if entity is not None and not entity.disabled and entity.entry_id in entries:
                found.append(entity)
        return found

    def _sorted_ids(self, entries: frozenset[str]) -> list[str]:
        key = tuple(sorted(entries))
        if (cached := self._sorted.get(key)) is None:
            cached = sorted(eid for entry in entries for eid in self._by_entry.get(entry, ()))
            self._sorted[key] = cached
        return cached

    # --- upkeep ----------------------------------------------------------------------------

    def _build(self) -> None:
        self._built = True
        hass = self._hass
        registry = er.async_get(hass)
        for entry in registry.entities.values():
            if entry.platform == DOMAIN:
                self._put(entry)
        hass.bus.async_listen(er.EVENT_ENTITY_REGISTRY_UPDATED, self._entity_event)
        hass.bus.async_listen(dr.EVENT_DEVICE_REGISTRY_UPDATED, self._device_event)

    def _put(self, entry: er.RegistryEntry) -> None:
        if entry.config_entry_id is None:
            return
        self._drop(entry.entity_id)
        entity = IndexedEntity(
            entry.entity_id,
            entry.config_entry_id,
            entry.device_id,
            entry.area_id,
            entry.disabled_by is not None,
            entry.unique_id,
        )
        self._entities[entity.entity_id] = entity
        self._by_entry.setdefault(entity.entry_id, set()).add(entity.entity_id)
        self._by_domain.setdefault(entity.domain, set()).add(entity.entity_id)
        if entity.device_id is not None:
            self._by_device.setdefault(entity.device_id, set()).add(entity.entity_id)
            if entity.device_id not in self._device_area:
                device = dr.async_get(self._hass).async_get(entity.device_id)
                self._device_area[entity.device_id] = device.area_id if device else None
        self._sorted.clear()
        self.derived.clear()

    def _drop(self, entity_id: str) -> None:
        entity = self._entities.pop(entity_id, None)
        if entity is None:
            return
        self._by_entry.get(entity.entry_id, set()).discard(entity_id)
        self._by_domain.get(entity.domain, set()).discard(entity_id)
        if entity.device_id is not None:
            siblings = self._by_device.get(entity.device_id)
            if siblings is not None:
                siblings.discard(entity_id)
                if not siblings:
                    del self._by_device[entity.device_id]
                    self._device_area.pop(entity.device_id, None)
        self._sorted.clear()
        self.derived.clear()

    @callback
    def _entity_event(self, event: Event[er.EventEntityRegistryUpdatedData]) -> None:
        data: Mapping[str, Any] = event.data
        entity_id: str = data["entity_id"]
        if (old := data.get("old_entity_id")) is not None:
            self._drop(old)
        if data["action"] == "remove":
            self._drop(entity_id)
            return
        entry = er.async_get(self._hass).async_get(entity_id)
        if entry is None or entry.platform != DOMAIN:
            self._drop(entity_id)
            return
        self._put(entry)

    @callback
    def _device_event(self, event: Event[dr.EventDeviceRegistryUpdatedData]) -> None:
        device_id: str = event.data["device_id"]
        if device_id not in self._device_area:
            return  # not a device of ours
        device = dr.async_get(self._hass).async_get(device_id)
        self._device_area[device_id] = device.area_id if device is not None else None
        self.derived.clear()
