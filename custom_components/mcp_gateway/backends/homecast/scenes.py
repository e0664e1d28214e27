"""Scene entities that survive a rename in the Home app.

Homecast knows scenes by name only: get_state lists each home's `_scenes` as plain names, and
run_scene / update_scene / delete_scene address a scene by its name. No tool result carries a
scene's HomeKit UUID, so a scene's key, and with it its entity's unique id, can only come from
its name (`home_<tail>_scene_<slugified name>`).

Left alone, a rename would add a new entity and delete the old one, breaking the automations
and dashboards that use its entity id. After every poll each followed home is compared with the
entity registry: when exactly one registered scene of the home is gone and exactly one scene
name is new, they are taken to be the same scene renamed, and the registry entry moves to the
new unique id, keeping its entity id and the user's settings. Because the comparison is against
the registry rather than the previous poll, a rename made while Home Assistant was stopped is
followed at the next start too.

The cost of matching by elimination: a scene deleted and another created within one poll (or
while Home Assistant was stopped) look exactly like a rename, and the new scene inherits the old
entity id. With two or more scenes gone and new at once nothing can be matched, and they are
removed and added as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
import logging
from typing import TYPE_CHECKING

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_platform, entity_registry as er

from ...const import DOMAIN
from .api import Home, HomecastState, slugify_name

if TYPE_CHECKING:
    from ..base import McpGatewayConfigEntry

_LOGGER = logging.getLogger(__name__)


def home_device_key(home: Home) -> str:
    """Device key of a home (holds its scenes and automations)."""
    return f"home_{home.tail}"


def scene_prefix(home: Home) -> str:
    """What the keys of a home's scenes start with."""
    return f"{home_device_key(home)}_scene_"


def scene_key(home: Home, name: str) -> str:
    """The key of a scene: its home and its name (scenes carry no other identity)."""
    return f"{scene_prefix(home)}{slugify_name(name)}"


@dataclass(frozen=True, slots=True)
class SceneRename:
    """A scene entity that moves from one key to another."""

    old_key: str
    new_key: str


def match_rename(registered: Iterable[str], current: Iterable[str]) -> SceneRename | None:
    """The rename that explains the difference, when exactly one key left and one arrived."""
    registered_keys, current_keys = set(registered), set(current)
    gone = registered_keys - current_keys
    new = current_keys - registered_keys
    if len(gone) == 1 and len(new) == 1:
        return SceneRename(gone.pop(), new.pop())
    return None


def entry_uid(entry: McpGatewayConfigEntry) -> str:
    """The prefix of every unique id of the entry (as the publisher builds them)."""
    return entry.unique_id or entry.entry_id


async def async_follow_scene_renames(
    hass: HomeAssistant, entry: McpGatewayConfigEntry, state: HomecastState
) -> list[SceneRename]:
    """Move the registry entry of each renamed scene to its new key; the renames made."""
    registry = er.async_get(hass)
    uid = entry_uid(entry)
    scene_entries = [
        item
        for item in er.async_entries_for_config_entry(registry, entry.entry_id)
        if item.domain == Platform.SCENE and item.platform == DOMAIN
    ]
    done: list[SceneRename] = []
    for home in state.homes.values():
        if home.missing:
            # A home the credential cannot see keeps its last scenes (unavailable).
            continue
        prefix = f"{uid}_{scene_prefix(home)}"
        registered = {
            item.unique_id.removeprefix(f"{uid}_"): item
            for item in scene_entries
            if item.unique_id.startswith(prefix)
        }
        rename = match_rename(registered, (scene_key(home, name) for name in home.scenes))
        if rename is None:
            continue
        item = registered[rename.old_key]
        new_uid = f"{uid}_{rename.new_key}"
        if (holder := registry.async_get_entity_id(Platform.SCENE, DOMAIN, new_uid)) is not None:
            # A leftover entry (of another config entry) already has the id: leave both be.
            _LOGGER.warning(
                "%s cannot follow its renamed scene: %s already has its new id",
                item.entity_id,
                holder,
            )
            continue
        # The entity object still runs under the old unique id: remove it first, so the
        # publisher can add the scene's new entity under the same entity id.
        await _async_remove_live_entity(hass, entry, item.entity_id)
        registry.async_update_entity(item.entity_id, new_unique_id=new_uid)
        _LOGGER.debug("%s follows its scene to the key %s", item.entity_id, rename.new_key)
        done.append(rename)
    return done


async def _async_remove_live_entity(
    hass: HomeAssistant, entry: McpGatewayConfigEntry, entity_id: str
) -> None:
    """Take a running scene entity of the entry out of HA (its registry entry stays)."""
    for platform in entity_platform.async_get_platforms(hass, DOMAIN):
        if (
            platform.domain == Platform.SCENE
            and platform.config_entry is not None
            and platform.config_entry.entry_id == entry.entry_id
            and entity_id in platform.entities
        ):
            await platform.async_remove_entity(entity_id)
