"""HA's "expose to assistants" settings, as the gateway honours them for backend calls.

Whether an entity is exposed, and whether exposure applies at all, are visibility.py's
questions; here they are asked of what a backend call addresses, and of what one caller may
see of one backend (CallerView).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from homeassistant.auth.models import User
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant

from ..framework.base import BackendRuntime, ToolClass
from .policy import (
    PermissionDenied,
    Refusal,
    Role,
    device_entity_ids,
    readable_subjects,
    require_backend_call,
    spec_entity_id,
    user_role,
)
from .visibility import can_read_entity, exposure_applies, is_exposed_entity


def require_exposed(
    hass: HomeAssistant, user: User, addressed: Mapping[str, Sequence[str]], what: str
) -> None:
    """A backend call may address a device only if one of its entities is exposed.

    HA exposes entities, not devices; a device whose every entity is hidden from assistants
    is hidden (its diagnostic entities, never exposed by default, do not hide it). An address
    no entity stands for has no exposure setting at all, so it is refused too, for every
    caller: it may reach a hidden device under another spelling.
    """
    if not exposure_applies(hass):
        return
    unmapped = sorted(key for key, entity_ids in addressed.items() if not entity_ids)
    if unmapped:
        raise PermissionDenied(
            f"Permission denied: {what} addresses {', '.join(unmapped)}, which no Home "
            "Assistant entity exposed to assistants stands for.",
            Refusal.UNMAPPED,
            unmapped,
        )
    hidden = [
        entity_ids[0]
        for entity_ids in addressed.values()
        if not any(is_exposed_entity(hass, e) for e in entity_ids)
    ]
    if hidden:
        raise PermissionDenied(
            f"Permission denied: {what} addresses {', '.join(readable_subjects(user, hidden))}, "
            "not exposed to assistants in Home Assistant (Settings → Voice assistants → "
            "Expose)."
        )


def require_exposed_entities(
    hass: HomeAssistant, user: User, entity_ids: Sequence[str], what: str
) -> None:
    """A backend command changes only entities exposed to assistants: the entity it acts on
    (the lock), whatever else of its device is exposed (its battery sensor)."""
    if not exposure_applies(hass):
        return
    hidden = [e for e in dict.fromkeys(entity_ids) if not is_exposed_entity(hass, e)]
    if hidden:
        raise PermissionDenied(
            f"Permission denied: {what} changes {', '.join(readable_subjects(user, hidden))}, "
            "not exposed to assistants in Home Assistant (Settings → Voice assistants → "
            "Expose)."
        )


def require_assistant_call(
    hass: HomeAssistant,
    user: User,
    runtime: BackendRuntime,
    *,
    tool_class: ToolClass,
    name: str,
    args: Mapping[str, Any],
    what: str,
) -> dict[str, list[str]]:
    """The checks of a backend call an assistant makes (a gateway tool's, or one get_history
    runs for it): the caller's tier and HA permissions on what it addresses, then those
    devices exposed to assistants (raises PermissionDenied). Returns the entities of each
    addressed device (or single entity) key.

    HA's actions are not assistants: they run `policy.require_backend_call` alone.
    """
    addressed = require_backend_call(
        hass, user, runtime, tool_class=tool_class, name=name, args=args, what=what
    )
    require_exposed(hass, user, addressed, what)
    return addressed


class CallerView:
    """What one caller may see of one backend through the gateway (framework.base.Shown).

    Shown: what the caller may read in full (every entity of a device) and, while exposure
    applies, what has an entity exposed to assistants. What no entity stands for is shown to
    administrators only, and to no one while exposure applies.
    """

    def __init__(
        self, hass: HomeAssistant, user: User, runtime: BackendRuntime, *, assistant: bool = True
    ) -> None:
        self.hass = hass
        self.user = user
        self.runtime = runtime
        # Exposure is for assistants: an action's caller sees what their rights allow.
        self.exposure = assistant and exposure_applies(hass)
        self._devices: dict[str, bool] = {}

    def device(self, key: str) -> bool:
        """Whether the device may be shown."""
        if (known := self._devices.get(key)) is None:
            known = self._devices[key] = self._shown(
                device_entity_ids(self.hass, self.runtime, key)
            )
        return known

    def entities(self, keys: Iterable[tuple[Platform, str]]) -> bool:
        """Whether what these entities stand for may be shown."""
        ids = [
            entity_id
            for platform, key in keys
            if (entity_id := spec_entity_id(self.hass, self.runtime, platform, key)) is not None
        ]
        return self._shown(ids)

    def secrets(self) -> bool:
        """Whether the caller may read a listing's secrets: administrators only."""
        return user_role(self.user) is Role.ADMIN

    def _shown(self, entity_ids: Sequence[str]) -> bool:
        if not entity_ids:
            return not self.exposure and user_role(self.user) is Role.ADMIN
        if not all(can_read_entity(self.user, e) for e in entity_ids):
            return False
        return not self.exposure or any(is_exposed_entity(self.hass, e) for e in entity_ids)
