"""Scene entities that survive a rename.

Homecast knows scenes by name only: get_state lists each home's `_scenes` as plain names, and
run_scene / update_scene / delete_scene address a scene by its name. No tool result carries a
scene's HomeKit UUID, so a scene's key, and with it its entity's unique id, can only come from
its name (`home_<tail>_scene_<slugified name>`).

Left alone, a rename would add a new entity and delete the old one, breaking the automations
and dashboards that use its entity id. So after every poll each followed home is compared with
the entity registry, and the registry entry of a renamed scene moves to the new unique id,
keeping its entity id and the user's settings. A rename is known for certain when it went
through us (update_scene with new_name, from an action or the gateway). Otherwise, when exactly
one registered scene of a home is gone and exactly one scene name is new, the two are taken to
be the same scene renamed in the Home app. Because the comparison is against the registry
rather than the previous poll, a rename made while Home Assistant was stopped is followed at
the next start too.

The cost of matching by elimination: a scene deleted and another created within one poll (or
while Home Assistant was stopped) look exactly like a rename, and the new scene inherits the old
entity id. With two or more scenes gone and new at once, nothing is guessed: they are removed
and added as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
import logging
from typing import TYPE_CHECKING

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_platform, entity_registry as er

from ...core.const import DOMAIN
from ...framework.entity import entry_uid
from .api import Home, HomecastState, SceneRenamed, slugify_name

if TYPE_CHECKING:
    from ...framework.base import McpGatewayConfigEntry

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


def plan_renames(
    registered: Iterable[str], current: Iterable[str], told: Iterable[tuple[str, str]] = ()
) -> list[SceneRename]:
    """The renames that explain the difference: those we were told of, then one by elimination.

    `told` holds (old key, new key) pairs in the order they were made, so a scene renamed twice
    before a poll follows both steps.
    """
    registered_keys, current_keys = set(registered), set(current)
    latest = {key: key for key in registered_keys}  # registered key -> where it was renamed to
    for old, new in told:
        if old == new or new in latest.values():
            continue
        for original, now in latest.items():
            if now == old:
                latest[original] = new
                break
    plan = [
        SceneRename(original, now)
        for original, now in latest.items()
        if original != now and now in current_keys and original not in current_keys
    ]
    guess = match_rename(
        registered_keys - {r.old_key for r in plan}, current_keys - {r.new_key for r in plan}
    )
    return [*plan, guess] if guess is not None else plan


class SceneRenameFollower:
    """Moves the registry entries of renamed scenes, poll after poll."""

    # A rename made through us is used at the first poll that shows its new name; one that a
    # poll never shows (renamed again in the Home app, home gone) is forgotten after these.
    TOLD_POLLS = 3

    def __init__(self) -> None:
        self._told: list[tuple[SceneRenamed, int]] = []  # with the polls that have not shown it

    @property
    def pending(self) -> list[SceneRenamed]:
        """Renames made through us that no poll has shown yet."""
        return [rename for rename, _ in self._told]

    async def async_follow(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        state: HomecastState,
        told: Iterable[SceneRenamed] = (),
    ) -> list[SceneRename]:
        """Follow this poll's renames (`told`: those made through us since the last poll)."""
        self._told.extend((rename, 0) for rename in told)
        registry = er.async_get(hass)
        uid = entry_uid(entry)
        scene_entries = [
            item
            for item in er.async_entries_for_config_entry(registry, entry.entry_id)
            if item.domain == Platform.SCENE and item.platform == DOMAIN
        ]
        shown: set[SceneRenamed] = set()
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
            current = {scene_key(home, name) for name in home.scenes}
            told_here = [r for r, _ in self._told if state.home(r.home) is home]
            shown.update(r for r in told_here if scene_key(home, r.new_name) in current)
            pairs = [(scene_key(home, r.old_name), scene_key(home, r.new_name)) for r in told_here]
            for rename in plan_renames(registered, current, pairs):
                item = registered[rename.old_key]
                if await _async_move(hass, entry, registry, item, f"{uid}_{rename.new_key}"):
                    done.append(rename)
        self._told = [
            (rename, polls + 1)
            for rename, polls in self._told
            if rename not in shown and polls + 1 < self.TOLD_POLLS
        ]
        return done


async def _async_move(
    hass: HomeAssistant,
    entry: McpGatewayConfigEntry,
    registry: er.EntityRegistry,
    item: er.RegistryEntry,
    new_uid: str,
) -> bool:
    """Give a scene's registry entry its new unique id; False when another entry has it."""
    if (holder := registry.async_get_entity_id(Platform.SCENE, DOMAIN, new_uid)) is not None:
        # A leftover entry (of another config entry) already has the id: leave both be.
        _LOGGER.warning(
            "%s cannot follow its renamed scene: %s already has its new id",
            item.entity_id,
            holder,
        )
        return False
    # The entity object still runs under the old unique id: remove it first, so the
    # publisher can add the scene's new entity under the same entity id.
    await _async_remove_live_entity(hass, entry, item.entity_id)
    registry.async_update_entity(item.entity_id, new_unique_id=new_uid)
    _LOGGER.debug("%s follows its renamed scene", item.entity_id)
    return True


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
