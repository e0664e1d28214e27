"""Which of the integration's entities a Home Assistant-level tool works on.

The entities of every exposed backend entry (from the entity index), narrowed by the filters
get_state and get_history share (backend, floor, area, domain, name, availability, entity ids,
matched the way people name things: matching.py). What the caller may read of them, and what
HA exposes to assistants, is permissions/visibility.py's question.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from homeassistant.const import ATTR_FRIENDLY_NAME, STATE_UNAVAILABLE, Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er

from ...core.words import words
from ...framework.base import BackendRuntime
from ...framework.entity import entry_uid
from ..catalog.store import ExposedBackend, GatewayCatalog, ToolFailure
from . import homes, matching
from .index import EntityIndex
from .query import EntityQuery, casefold


@dataclass(frozen=True, slots=True)
class EntityRef:
    """One of the integration's entities, with where it lives."""

    entity_id: str
    backend: ExposedBackend
    area_id: str | None
    device_id: str | None
    # The registry's unique id ("": not known, the registry is asked).
    unique_id: str = ""

    @property
    def domain(self) -> str:
        """The entity's platform domain."""
        return self.entity_id.split(".", 1)[0]

    def home(self, hass: HomeAssistant) -> str:
        """The home the entity is in (homes.py)."""
        return homes.home_of(hass, self.backend, self.device_id)


def backend_key(hass: HomeAssistant, ref: EntityRef) -> tuple[BackendRuntime, Platform, str] | None:
    """The entity's loaded backend runtime and its (platform, EntitySpec key) there."""
    runtime = ref.backend.runtime
    if runtime is None:
        return None
    found = spec_key(hass, runtime, ref)
    return None if found is None else (runtime, *found)


def spec_key(
    hass: HomeAssistant, runtime: BackendRuntime, ref: EntityRef
) -> tuple[Platform, str] | None:
    """The entity's (platform, EntitySpec key) in its backend runtime, from its unique id
    (the index's; the registry's for a ref made without it)."""
    unique_id = ref.unique_id
    if not unique_id:
        entry = er.async_get(hass).async_get(ref.entity_id)
        unique_id = entry.unique_id if entry is not None else ""
    prefix = f"{entry_uid(runtime.entry)}_"
    if not unique_id.startswith(prefix) or (platform := _PLATFORMS.get(ref.domain)) is None:
        return None
    return platform, unique_id[len(prefix) :]


# Platform by its domain, without constructing the enum on every read.
_PLATFORMS: Final[Mapping[str, Platform]] = {platform.value: platform for platform in Platform}


def exposed_entities(
    hass: HomeAssistant,
    backends: Iterable[ExposedBackend],
    *,
    entity_ids: Iterable[str] | None = None,
    domains: Iterable[str] | None = None,
) -> list[EntityRef]:
    """The enabled registry entities of the given backend entries, in entity id order.

    `entity_ids` / `domains` narrow through the index first, so only those are built.
    """
    backends = tuple(backends)
    index = EntityIndex.get(hass)
    unfiltered = entity_ids is None and domains is None
    # Every read of the whole home builds the same refs until the index or the backends
    # change: built once, then copied.
    if unfiltered and (known := index.derived.get(("refs", backends))) is not None:
        return list(known)
    by_entry = {backend.entry.entry_id: backend for backend in backends}
    refs = [
        EntityRef(
            entity.entity_id,
            by_entry[entity.entry_id],
            index.area_of(entity),
            entity.device_id,
            entity.unique_id,
        )
        for entity in index.entities(by_entry, entity_ids=entity_ids, domains=domains)
    ]
    if unfiltered:
        if len(index.derived) >= 16:  # backends renamed or reloaded many times over
            index.derived.clear()
        index.derived[("refs", backends)] = refs
        return list(refs)
    return refs


def every_entity(hass: HomeAssistant) -> list[EntityRef]:
    """Every entity of the exposed backend entries (whoever may read it: permissions/
    visibility.py says who may)."""
    return exposed_entities(hass, GatewayCatalog.get(hass).exposed_backends())


def candidate_entities(hass: HomeAssistant, query: EntityQuery) -> list[EntityRef]:
    """Exposed entities narrowed by the index on the exact filters (entity_ids, domain)."""
    return exposed_entities(
        hass,
        GatewayCatalog.get(hass).exposed_backends(),
        entity_ids=query.entity_ids,
        domains=query.domain,
    )


# --- the shared filters (their schema and parse: query.py) -------------------------------------


@dataclass(slots=True)
class Selection:
    """Filtered entities, and what the filters found out along the way (for the AI)."""

    refs: list[EntityRef]
    notes: list[str]


def select_entities(
    hass: HomeAssistant, refs: Sequence[EntityRef], query: EntityQuery
) -> Selection:
    """Apply the shared filters, matching the way people name things (see matching.py); an
    unknown backend, floor or area is an error that lists the known."""
    selected = list(refs)
    notes: list[str] = []
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    if (backend := query.backend) is not None:
        selected = _by_backend(hass, selected, backend)
    if (home := query.home) is not None:
        wanted_homes = homes.wanted_homes(hass, home)
        selected = [ref for ref in selected if ref.home(hass) in wanted_homes]
    if (floor := query.floor) is not None:
        selected = _by_floor(hass, selected, floor, notes)
    # The area goes last: when its whole-name match leaves nothing, partial matches may not.
    before_filters = selected
    selected = _by_entity_filters(hass, selected, query, area_names)
    if (area := query.area) is not None:
        selected = _by_area(
            hass, selected, before_filters, area, area_names=area_names, notes=notes
        )
    return Selection(selected, notes)


def _by_entity_filters(
    hass: HomeAssistant,
    selected: list[EntityRef],
    query: EntityQuery,
    area_names: Mapping[str, str],
) -> list[EntityRef]:
    """The filters of the entities themselves: domain, name, availability, entity ids."""
    if wanted_domains := query.domain:
        selected = [ref for ref in selected if ref.domain in wanted_domains]
    if (name := query.name) is not None:
        selected = _by_name(hass, selected, name, area_names)
    if (available := query.available) is not None:
        selected = [ref for ref in selected if _is_available(hass, ref) is available]
    if (entity_ids := query.entity_ids) is not None:
        wanted_ids = set(entity_ids)
        selected = [ref for ref in selected if ref.entity_id in wanted_ids]
    return selected


def _by_name(
    hass: HomeAssistant, selected: list[EntityRef], name: str, area_names: Mapping[str, str]
) -> list[EntityRef]:
    """The entities whose words (name, alias, device, area) hold the name's, or whose name or
    entity id holds it as written."""
    wanted = words(name)
    raw = casefold(name)
    return [
        ref
        for ref in selected
        if matching.words_match(wanted, _words(hass, ref, area_names))
        or raw in _searchable_name(hass, ref)
    ]


def _by_floor(
    hass: HomeAssistant, selected: list[EntityRef], floor: str, notes: list[str]
) -> list[EntityRef]:
    """The entities on the floor(s) the words name; a home's name is taken as that home
    (people say "upstairs" and "at the flat" alike). Nothing matching is an error that lists
    the floors and the homes."""
    found = matching.best(matching.floors(hass), floor)
    if found:
        area_ids = matching.areas_on_floors(hass, {f.id for f in found})
        return [ref for ref in selected if ref.area_id in area_ids]
    if in_homes := set(homes.matching_homes(hass, floor)):
        notes.append(f"No floor is named '{floor}'; the home {', '.join(sorted(in_homes))}.")
        return [ref for ref in selected if ref.home(hass) in in_homes]
    known = ", ".join(sorted(f.name for f in matching.floors(hass))) or "none"
    raise ToolFailure(
        f"Unknown floor '{floor}'. Floors: {known}. "
        f"Homes (filter with home): {', '.join(homes.known_homes(hass)) or 'none'}.",
        code="not_found",
    )


def _by_area(
    hass: HomeAssistant,
    selected: list[EntityRef],
    every: list[EntityRef],
    area: str,
    *,
    area_names: Mapping[str, str],
    notes: list[str],
) -> list[EntityRef]:
    """The selected entities in the area(s) the words name: whole names first, then parts.

    Entities without an area are found by the area's words in their name too ("Bedroom Robine
    Wake" when nobody assigned the clock to an area). An area nothing could match is an error
    that lists the areas.
    """
    wanted = words(area)

    def unassigned(refs: Sequence[EntityRef]) -> list[EntityRef]:
        return [
            ref
            for ref in refs
            if ref.area_id is None and matching.words_match(wanted, _words(hass, ref, area_names))
        ]

    tiers = matching.tiers(matching.areas(hass), area)
    if not tiers and not unassigned(every):
        known = ", ".join(sorted(area_names.values())) or "none"
        raise ToolFailure(f"Unknown area '{area}'. Areas: {known}.", code="not_found")
    for rank, tier in enumerate(tiers):
        ids = {found.id for found in tier}
        in_area = [ref for ref in selected if ref.area_id in ids]
        chosen = in_area + [ref for ref in unassigned(selected) if ref not in in_area]
        if not chosen:
            continue
        if rank > 0:
            exact = ", ".join(found.name for found in tiers[0])
            notes.append(f"Nothing matches in {exact}; found in areas named like '{area}'.")
        if len(tier) > 1:
            notes.append(f"Areas matching '{area}': {', '.join(a.name for a in tier)}.")
        return chosen
    if not tiers:
        notes.append(f"No area matches '{area}'; these entities have it in their name.")
    return unassigned(selected)


def _by_backend(hass: HomeAssistant, refs: list[EntityRef], backend: str) -> list[EntityRef]:
    wanted = casefold(backend)
    all_backends = GatewayCatalog.get(hass).exposed_backends()
    matching_ids = {
        b.entry.entry_id
        for b in all_backends
        if wanted
        in (
            casefold(b.gateway_name),
            casefold(b.entry.title),
            b.kind,
            casefold(b.entry.entry_id),
        )
    }
    if not matching_ids:
        known = ", ".join(b.gateway_name for b in all_backends) or "none"
        raise ToolFailure(f"Unknown backend '{backend}'. Backends: {known}.", code="not_found")
    return [ref for ref in refs if ref.backend.entry.entry_id in matching_ids]


def _words(hass: HomeAssistant, ref: EntityRef, area_names: Mapping[str, str]) -> set[str]:
    return matching.entity_words(
        hass,
        ref.entity_id,
        hass.states.get(ref.entity_id),
        area_names.get(ref.area_id) if ref.area_id else None,
        ref.device_id,
    )


def _is_available(hass: HomeAssistant, ref: EntityRef) -> bool:
    state = hass.states.get(ref.entity_id)
    return state is not None and state.state != STATE_UNAVAILABLE


def _searchable_name(hass: HomeAssistant, ref: EntityRef) -> str:
    state = hass.states.get(ref.entity_id)
    name = state.attributes.get(ATTR_FRIENDLY_NAME, "") if state else ""
    return f"{casefold(str(name))} {ref.entity_id}"


def empty_hint(
    hass: HomeAssistant,
    refs: Sequence[EntityRef],
    query: EntityQuery,
    lead: str = "No entity matches these filters.",
) -> str:
    """What exists instead, for an answer without entities: closest names, areas with entities."""
    names = {}
    for ref in refs:
        state = hass.states.get(ref.entity_id)
        if state is not None:
            names[ref.entity_id] = str(state.attributes.get(ATTR_FRIENDLY_NAME, ref.entity_id))
    parts: list[str] = []
    asked = f"{query.area or ''} {query.name or ''}".strip()
    if asked and (close := matching.closest_names(asked, names)):
        parts.append(f"Closest names: {', '.join(close)}.")
    area_names = {area.id: area.name for area in ar.async_get(hass).async_list_areas()}
    used = sorted({area_names[ref.area_id] for ref in refs if ref.area_id in area_names})
    if used:
        parts.append(f"Areas with entities: {', '.join(used)}.")
    if not parts:
        parts.append(f"{len(refs)} entities exist; loosen the filters.")
    return f"{lead} {' '.join(parts)}"
