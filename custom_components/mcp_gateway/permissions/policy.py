"""Who may use which gateway tool, and the audit trail of what they changed.

Home Assistant access tokens carry no scopes, so the gateway derives trust from the user behind
the token: owner and administrators reach every tier, ordinary users read and control, members
of HA's read-only group only read. Entity-level rights stay HA's own: writes run as HA service
calls under the caller's context, and backend calls that address devices are checked against
the entities those devices became.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, Final

from homeassistant.auth.const import GROUP_ID_READ_ONLY
from homeassistant.auth.models import User
from homeassistant.const import Platform
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er

from ..core.const import DOMAIN
from ..framework.base import BackendRuntime, ToolClass, ToolTier
from .visibility import can_control_entity, can_read_entity

# Fired for every write made through the gateway; logbook.py turns it into a logbook line.
EVENT_GATEWAY_WRITE: Final = f"{DOMAIN}_write"

ATTR_USER_NAME: Final = "user_name"
ATTR_CLIENT_NAME: Final = "client_name"
ATTR_TOOL: Final = "tool"
ATTR_BACKEND: Final = "backend"
ATTR_SUMMARY: Final = "summary"
ATTR_SUCCESS: Final = "success"


class Role(StrEnum):
    """The three kinds of Home Assistant user the gateway distinguishes."""

    ADMIN = "admin"
    USER = "user"
    READ_ONLY = "read_only"


_TIERS: Final[Mapping[Role, frozenset[ToolTier]]] = {
    Role.ADMIN: frozenset(ToolTier),
    Role.USER: frozenset({ToolTier.READ, ToolTier.CONTROL}),
    Role.READ_ONLY: frozenset({ToolTier.READ}),
}


ROLE_LABELS: Final[Mapping[Role, str]] = {
    Role.ADMIN: "an administrator",
    Role.USER: "a non-admin user",
    Role.READ_ONLY: "a read-only user",
}


def describe_tiers(tiers: Iterable[ToolTier]) -> str:
    """Tiers in their natural order (read, control, admin), for messages."""
    wanted = set(tiers)
    return ", ".join(str(tier) for tier in ToolTier if tier in wanted) or "none"


class Refusal(StrEnum):
    """Why a call was refused, for callers that translate the message (HA actions)."""

    TIER = "tier"
    READ = "read"
    CONTROL = "control"
    UNMAPPED = "unmapped"
    OTHER = "other"


class PermissionDenied(Exception):
    """The caller may not do this; the message says why, for the AI and the user.

    `reason` and `subjects` (the tier, or the entities or devices refused) say the same for
    callers that build their own, translated, message.
    """

    code = "forbidden"

    def __init__(
        self, message: str, reason: Refusal = Refusal.OTHER, subjects: Iterable[str] = ()
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.subjects = tuple(subjects)


class ConfirmationRequired(PermissionDenied):
    """A destructive tool was called without `confirm: true`."""

    code = "confirmation_required"


def user_role(user: User) -> Role:
    """Owner/admin beats read-only when a user is in both groups (HA merges policies too)."""
    if user.is_admin:
        return Role.ADMIN
    if any(group.id == GROUP_ID_READ_ONLY for group in user.groups):
        return Role.READ_ONLY
    return Role.USER


def allowed_tiers(user: User) -> frozenset[ToolTier]:
    """The tool tiers a user may call."""
    if not user.is_active:
        return frozenset()
    return _TIERS[user_role(user)]


def may_use_tier(user: User, tier: ToolTier) -> bool:
    """Whether a user may call tools of a tier."""
    return tier in allowed_tiers(user)


def may_use_gateway(user: User, allow_non_admin: bool) -> bool:
    """The gateway-wide switch: non-admins may be kept out entirely."""
    return user.is_active and (allow_non_admin or user.is_admin)


def require_tier(user: User, tier: ToolTier, what: str) -> None:
    """Raise PermissionDenied naming the tool and the tier it needs."""
    if may_use_tier(user, tier):
        return
    raise PermissionDenied(
        f"Permission denied: {what} needs the '{tier}' tier; you act as "
        f"{ROLE_LABELS[user_role(user)]} of Home Assistant, who may use: "
        f"{describe_tiers(allowed_tiers(user))}.",
        Refusal.TIER,
        (str(tier),),
    )


def require_confirmation(tool_class: ToolClass, arguments: Mapping[str, Any], what: str) -> None:
    """Destructive tools run only with an explicit `confirm: true` from the caller."""
    if tool_class.destructive and arguments.get("confirm") is not True:
        raise ConfirmationRequired(
            f'{what} is destructive: repeat the call with "confirm": true once the user '
            "has agreed to it."
        )


def readable_subjects(user: User, entity_ids: Iterable[str]) -> list[str]:
    """Entity ids for a refusal: only those the caller may read; the rest only counted, so
    a refusal never tells anyone of an entity they may not see."""
    ids = sorted(entity_ids)
    named = [eid for eid in ids if can_read_entity(user, eid)]
    if others := len(ids) - len(named):
        named.append(f"{others} entit{'y' if others == 1 else 'ies'} you may not read")
    return named


def require_read(user: User, entity_ids: Iterable[str], what: str) -> None:
    """Every addressed entity must be readable by the caller."""
    denied = [eid for eid in entity_ids if not can_read_entity(user, eid)]
    if denied:
        subjects = readable_subjects(user, denied)
        raise PermissionDenied(
            f"Permission denied: {what} reads {', '.join(subjects)}, which this Home "
            "Assistant user may not read.",
            Refusal.READ,
            subjects,
        )


def require_control(user: User, entity_ids: Iterable[str], what: str) -> None:
    """Every addressed entity must be controllable by the caller."""
    denied = [eid for eid in entity_ids if not can_control_entity(user, eid)]
    if denied:
        subjects = readable_subjects(user, denied)
        raise PermissionDenied(
            f"Permission denied: {what} addresses {', '.join(subjects)}, which this Home "
            "Assistant user may not control.",
            Refusal.CONTROL,
            subjects,
        )


def require_backend_call(
    hass: HomeAssistant,
    user: User,
    runtime: BackendRuntime,
    *,
    tool_class: ToolClass,
    name: str,
    args: Mapping[str, Any],
    what: str,
) -> dict[str, list[str]]:
    """The one check of a backend tool call, on every path (gateway tools and HA actions).

    The tier first, then HA's own entity permissions on the devices the call addresses:
    reads need read permission, everything else control. A device that is no entity has no
    permission to consult, so only administrators may address it. Returns the entities of each
    addressed device (or single entity) key.
    """
    require_tier(user, tool_class.tier, what)
    addressed = addressed_entities(hass, runtime, name, args)
    unmapped = sorted(key for key, entity_ids in addressed.items() if not entity_ids)
    if unmapped and user_role(user) is not Role.ADMIN:
        raise PermissionDenied(
            f"Permission denied: {what} addresses devices that are not Home Assistant "
            f"entities ({', '.join(unmapped)}); only administrators may do that.",
            Refusal.UNMAPPED,
            unmapped,
        )
    entity_ids = [entity_id for group in addressed.values() for entity_id in group]
    if tool_class.tier is ToolTier.READ:
        require_read(user, entity_ids, what)
    else:
        require_control(user, entity_ids, what)
    return addressed


def addressed_entities(
    hass: HomeAssistant, runtime: BackendRuntime, name: str, args: Mapping[str, Any]
) -> dict[str, list[str]]:
    """The HA entities of each device key (and single entity key) a backend call addresses.

    A key that is no entity maps to an empty list.
    """
    addressed: dict[str, list[str]] = {}
    for key in runtime.device_keys_in_call(name, args):
        addressed.setdefault(key, []).extend(device_entity_ids(hass, runtime, key))
    # Single entities a call acts on (Hubitat's HSM panel and mode select, a clock's alarm),
    # checked like devices.
    for platform, spec_key in runtime.entity_keys_in_call(name, args):
        group = addressed.setdefault(spec_key, [])
        if (entity_id := spec_entity_id(hass, runtime, platform, spec_key)) is not None:
            group.append(entity_id)
    return addressed


def device_entity_ids(hass: HomeAssistant, runtime: BackendRuntime, key: str) -> list[str]:
    """The entities of one of the backend's devices (none for a device no entity stands for)."""
    registry = er.async_get(hass)
    publisher = runtime.publisher
    return [
        entity_id
        for spec in publisher.device_specs(key)
        if (
            entity_id := registry.async_get_entity_id(
                spec.platform, DOMAIN, publisher.unique_id(spec)
            )
        )
        is not None
    ]


def spec_entity_id(
    hass: HomeAssistant, runtime: BackendRuntime, platform: Platform, key: str
) -> str | None:
    """The entity of one EntitySpec key, if the backend has it and HA registered it."""
    spec = runtime.publisher.spec(platform, key)
    if spec is None:
        return None
    registry = er.async_get(hass)
    return registry.async_get_entity_id(platform, DOMAIN, runtime.publisher.unique_id(spec))


def classify(
    tool: Mapping[str, Any], table: Mapping[str, ToolClass], *, default_read_only: bool = True
) -> ToolClass:
    """The class of a backend tool from its backend's table.

    A tool missing from the table is admin, unless the backend marks it read-only (and the
    caller lets that hint count): new backend tools must never silently become controllable.
    """
    name = tool.get("name")
    if isinstance(name, str) and name in table:
        return table[name]
    annotations = tool.get("annotations")
    if (
        default_read_only
        and isinstance(annotations, Mapping)
        and annotations.get("readOnlyHint") is True
    ):
        return ToolClass(ToolTier.READ)
    return ToolClass(ToolTier.ADMIN)


def user_display_name(user: User) -> str:
    """A name for logbook lines: the user's name, else their id."""
    return user.name or user.id


@callback
def async_record_write(
    hass: HomeAssistant,
    *,
    user: User,
    client_name: str | None,
    tool: str,
    summary: str,
    success: bool,
    backend: str | None = None,
    entity_id: str | None = None,
    context: Context | None = None,
) -> None:
    """Put one gateway write on the event bus; logbook.py describes it in the logbook.

    The context carries the user id, so HA's logbook also attributes the line to the user; pass
    the context the write itself ran under to link both.
    """
    data: dict[str, Any] = {
        ATTR_USER_NAME: user_display_name(user),
        ATTR_CLIENT_NAME: client_name or "unknown client",
        ATTR_TOOL: tool,
        ATTR_SUMMARY: summary,
        ATTR_SUCCESS: success,
    }
    if backend is not None:
        data[ATTR_BACKEND] = backend
    if entity_id is not None:
        data["entity_id"] = entity_id
    hass.bus.async_fire(EVENT_GATEWAY_WRITE, data, context=context or Context(user_id=user.id))
