"""Finding entities the way people name them: areas, floors and names, loosely but predictably.

A query word matches a word of a name when it is a prefix of it, ignoring case, plurals and
separators ("bedroom" finds "Master Bedroom", "kitchen lights" finds `light.kitchen_ceiling`
in the area Kitchen). Areas and floors match by id, name or alias; a whole-name match wins over
partial ones, so "Office" does not also pick "Office Annex".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import difflib
from typing import Final

from homeassistant.const import ATTR_DEVICE_CLASS, ATTR_FRIENDLY_NAME
from homeassistant.core import HomeAssistant, State
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    entity_registry as er,
    floor_registry as fr,
)

from ...core.words import words

# Words shorter than this must match a whole word ("tv" must not find "tvoc").
MIN_PREFIX: Final = 3
CLOSEST: Final = 5


def words_match(query: Sequence[str], haystack: Iterable[str]) -> bool:
    """Every query word starts some word of the haystack (short ones must equal it)."""
    pool = set(haystack)
    return all(
        any(word == have or (len(word) >= MIN_PREFIX and have.startswith(word)) for have in pool)
        for word in query
    )


@dataclass(frozen=True, slots=True)
class Named:
    """Something with an id, a name and aliases (an area or a floor)."""

    id: str
    name: str
    aliases: tuple[str, ...]

    def match(self, query: str) -> int:
        """2: a whole name, id or alias; 1: every word matches; 0: no match."""
        wanted = words(query)
        if not wanted:
            return 0
        names = [self.name, self.id, *self.aliases]
        if any(words(name) == wanted for name in names):
            return 2
        return 1 if any(words_match(wanted, words(name)) for name in names) else 0


def best(candidates: Iterable[Named], query: str) -> list[Named]:
    """Whole matches if any, else partial ones."""
    found = tiers(candidates, query)
    return found[0] if found else []


def tiers(candidates: Iterable[Named], query: str) -> list[list[Named]]:
    """The matches by quality, best first: whole matches, then partial ones (empty tiers left
    out)."""
    scored = [(item.match(query), item) for item in candidates]
    return [
        found for score in (2, 1) if (found := [item for have, item in scored if have == score])
    ]


def areas(hass: HomeAssistant) -> list[Named]:
    """Every area."""
    return [
        Named(area.id, area.name, tuple(sorted(area.aliases)))
        for area in ar.async_get(hass).async_list_areas()
    ]


def floors(hass: HomeAssistant) -> list[Named]:
    """Every floor."""
    return [
        Named(floor.floor_id, floor.name, tuple(sorted(floor.aliases)))
        for floor in fr.async_get(hass).async_list_floors()
    ]


def areas_on_floors(hass: HomeAssistant, floor_ids: set[str]) -> set[str]:
    """Ids of the areas on those floors."""
    return {area.id for area in ar.async_get(hass).async_list_areas() if area.floor_id in floor_ids}


# What people call an entity of a domain besides its name ("the thermostat", "the blinds").
DOMAIN_WORDS: Final[Mapping[str, str]] = {
    "climate": "thermostat temperature heating cooling",
    "cover": "blind shade shutter curtain",
    "alarm_control_panel": "alarm security",
    "media_player": "tv speaker player",
    "fan": "ventilator",
}


def entity_words(
    hass: HomeAssistant,
    entity_id: str,
    state: State | None,
    area_name: str | None,
    device_id: str | None,
) -> set[str]:
    """What a person may call an entity: its name, id, aliases, device, area, device class."""
    parts: list[str] = [entity_id, DOMAIN_WORDS.get(entity_id.split(".", 1)[0], "")]
    if state is not None:
        parts.append(str(state.attributes.get(ATTR_FRIENDLY_NAME, "")))
        parts.append(str(state.attributes.get(ATTR_DEVICE_CLASS, "")))
    if (entry := er.async_get(hass).async_get(entity_id)) is not None:
        # HA 2026.x lists the computed full name (a sentinel, not a str) among the aliases;
        # that name is the friendly name already above.
        parts.extend(alias for alias in entry.aliases if isinstance(alias, str))
        parts.append(entry.original_device_class or "")
    if area_name:
        parts.append(area_name)
    if device_id and (device := dr.async_get(hass).async_get(device_id)) is not None:
        parts.append(device.name_by_user or device.name or "")
    return {word for part in parts for word in words(part)}


def closest_names(query: str, names: Mapping[str, str]) -> list[str]:
    """The names most like the query (for an empty answer), best first."""
    wanted = " ".join(words(query))
    by_norm: dict[str, str] = {}
    for name in names.values():
        by_norm.setdefault(" ".join(words(name)), name)
    close = difflib.get_close_matches(wanted, list(by_norm), n=CLOSEST, cutoff=0.4)
    found = [by_norm[item] for item in close]
    if len(found) < CLOSEST:
        # A single word close to one word of a name ("frnt" → "Front door").
        for norm, name in by_norm.items():
            if name not in found and any(
                difflib.get_close_matches(word, norm.split(), n=1, cutoff=0.75)
                for word in wanted.split()
            ):
                found.append(name)
            if len(found) >= CLOSEST:
                break
    return found
