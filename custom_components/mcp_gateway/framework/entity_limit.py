"""Home Assistant 2026.x's cap on an entry's enabled entities, planned before HA applies it.

HA refuses a new enabled entity, with a warning, once a config entry has
MAX_ENABLED_ENTITIES_PER_CONFIG_ENTRY (10,000) enabled ones (2025.4 has no cap), and drops it.
EntityLimitPlanner predicts what the registry will do with each new entity and tells the
publisher which ones wait, the least needed first; it keeps a repair issue saying how many,
and watches the entry's registry changes while any wait, since they can make room.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Set as AbstractSet
import logging
from typing import Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import EntityCategory, Platform
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import (
    entity_platform,
    entity_registry as er,
    issue_registry as ir,
)
from homeassistant.helpers.debounce import Debouncer
from homeassistant.helpers.typing import UNDEFINED

from ..core.const import DOMAIN
from .entity import EntitySpec, SpecKey

_LOGGER = logging.getLogger(__name__)

# An entry over the cap gets its entities in this order of precedence, so that what waits is
# the least needed: what users act on, then readings, then events, buttons and the like.
_CONTROLS: Final = frozenset(
    {
        Platform.ALARM_CONTROL_PANEL,
        Platform.CLIMATE,
        Platform.COVER,
        Platform.FAN,
        Platform.LIGHT,
        Platform.LOCK,
        Platform.SCENE,
        Platform.SWITCH,
        Platform.VALVE,
    }
)
_READINGS: Final = frozenset({Platform.SENSOR, Platform.BINARY_SENSOR})
# A deleted entity restored with these comes back enabled (HA 2026.x's registry).
_RESTORED_ENABLED: Final = (None, er.RegistryEntryDisabler.CONFIG_ENTRY)


def limit_issue_id(entry_id: str) -> str:
    """The repair issue of an entry with more entities than HA's cap lets in."""
    return f"entity_limit_{entry_id}"


def _cap() -> int | None:
    """HA's cap on an entry's enabled entities; None where HA has none (2025.4)."""
    value: int | None = getattr(entity_platform, "MAX_ENABLED_ENTITIES_PER_CONFIG_ENTRY", None)
    return value


class EntityLimitPlanner:
    """Which of an entry's wanted entities wait for room under HA's cap.

    The publisher asks `plan` before it adds anything and adds none of the keys it returns.
    While some wait, the entry's registry creates and disables call `replan` (debounced: a
    thousand disables are one plan); `stop` ends the watch and withdraws the repair issue.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        entry: ConfigEntry,
        unique_id: Callable[[EntitySpec], str],
        replan: Callable[[], None],
    ) -> None:
        """`unique_id` gives a spec's registry unique id; `replan` asks for a new plan."""
        self._hass = hass
        self._entry = entry
        self._unique_id = unique_id
        self._withheld: set[SpecKey] = set()
        self._unwatch_registry: Callable[[], None] | None = None
        # Disabling a thousand entities is a thousand events: one plan for the lot.
        self._replan = Debouncer(hass, _LOGGER, cooldown=1.0, immediate=True, function=replan)

    @property
    def withheld(self) -> AbstractSet[SpecKey]:
        """The keys of the last plan's entities that wait for room."""
        return self._withheld

    @callback
    def plan(
        self, specs: Mapping[SpecKey, EntitySpec], published: AbstractSet[SpecKey]
    ) -> AbstractSet[SpecKey]:
        """Withhold the entities HA would refuse under its cap, the least needed first.

        `specs` are all the entry wants, `published` those already handed to a platform. HA
        counts the entry's registered enabled entities; an entity it has registered before is
        always let in, a new one only while there is room. Entities handed over but not
        registered yet hold their places. Returns the keys that wait.
        """
        limit = _cap()
        before = len(self._withheld)
        if limit is None or len(specs) <= limit:
            self._withheld = set()
        elif self._withheld or any(key not in published for key in specs):
            # Planned before the platforms register too: the publisher adds devices first,
            # and one whose entities all wait is not registered empty.
            self._withheld = self._over(limit, specs, published)
        if self._withheld or before:
            self._report(limit or 0)
        return self._withheld

    @callback
    def stop(self) -> None:
        """When the entry unloads: nothing waits any more, and the repair issue goes."""
        self._withheld.clear()
        self._watch_registry(False)
        self._replan.async_shutdown()
        ir.async_delete_issue(self._hass, DOMAIN, limit_issue_id(self._entry.entry_id))

    def _over(
        self, limit: int, specs: Mapping[SpecKey, EntitySpec], published: AbstractSet[SpecKey]
    ) -> set[SpecKey]:
        """The new entities that would not fit, as HA decides when it registers them.

        HA checks the cap for an entity enabled by default; then the registry may restore a
        deleted entity's own `disabled_by` (HA 2026.x) or disable every new entity (the entry's
        "enable newly added entities" off). A place is taken by what ends up enabled; what
        is checked but ends up disabled still needs the entry below the cap when it comes.
        """
        registry = er.async_get(self._hass)
        entry = self._entry
        # By platform and unique id: two platforms' entities may share a key.
        registered = {
            (entity.domain, entity.unique_id): entity
            for entity in er.async_entries_for_config_entry(registry, entry.entry_id)
        }
        occupied = sum(1 for entity in registered.values() if entity.disabled_by is None)
        holding = 0
        takers: list[tuple[SpecKey, EntitySpec]] = []  # would end up enabled
        checked_only: list[SpecKey] = []  # checked against the cap, then disabled
        for key, spec in specs.items():
            unique_id = self._unique_id(spec)
            if (key[0], unique_id) in registered:
                continue
            checked = spec.description.entity_registry_enabled_default
            deleted = registry.deleted_entities.get((key[0], DOMAIN, unique_id))
            restored = getattr(deleted, "disabled_by", UNDEFINED)
            enabled = checked if restored is UNDEFINED else restored in _RESTORED_ENABLED
            takes_place = enabled and not entry.pref_disable_new_entities
            if key in published:
                holding += takes_place
            elif takes_place:
                takers.append((key, spec))
            elif checked:
                checked_only.append(key)
        takers.sort(key=lambda taker: precedence(taker[1]))
        room = limit - occupied - holding
        withheld = [key for key, _ in takers[max(0, room) :]]
        if room <= len(takers):
            withheld += checked_only
        return set(withheld)

    def _report(self, limit: int) -> None:
        entry = self._entry
        self._watch_registry(bool(self._withheld))
        if not self._withheld:
            ir.async_delete_issue(self._hass, DOMAIN, limit_issue_id(entry.entry_id))
            return
        ir.async_create_issue(
            self._hass,
            DOMAIN,
            limit_issue_id(entry.entry_id),
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key="entity_limit",
            translation_placeholders={
                "title": entry.title,
                "limit": str(limit),
                "count": str(len(self._withheld)),
            },
        )

    def _watch_registry(self, watch: bool) -> None:
        """While entities wait, the entry's registry changes can make room for them.

        An entity the user disables frees a place (HA reloads an entry when one of its
        entities is enabled, not when one is disabled, and a backend may not refresh for long:
        Hubitat only when its devices change). An entity HA registers shows whether it took a
        place that was kept for it (HA may register it disabled).
        """
        if watch and self._unwatch_registry is None:
            self._unwatch_registry = self._hass.bus.async_listen(
                er.EVENT_ENTITY_REGISTRY_UPDATED,
                self._on_registry_change,
                event_filter=self._frees_or_takes_place,
            )
        elif not watch and self._unwatch_registry is not None:
            self._unwatch_registry()
            self._unwatch_registry = None

    @callback
    def _frees_or_takes_place(self, data: er.EventEntityRegistryUpdatedData) -> bool:
        if data["action"] == "update":
            if "disabled_by" not in data["changes"]:
                return False
        elif data["action"] != "create":
            return False
        entity = er.async_get(self._hass).async_get(data["entity_id"])
        return entity is not None and entity.config_entry_id == self._entry.entry_id

    @callback
    def _on_registry_change(self, _: Event[er.EventEntityRegistryUpdatedData]) -> None:
        self._replan.async_schedule_call()


def precedence(spec: EntitySpec) -> tuple[int, int]:
    """Primary entities before settings and diagnostics; controls, then readings, then the rest."""
    category = spec.description.entity_category
    kind = 0 if spec.platform in _CONTROLS else 1 if spec.platform in _READINGS else 2
    return (0 if category is None else 1 if category is EntityCategory.CONFIG else 2, kind)
