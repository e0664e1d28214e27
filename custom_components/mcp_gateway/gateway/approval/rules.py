"""What needs a person: one rule over resolved targets, asked by every path.

A call is weighed only after its targets are resolved (an entity id, a name and home, a
device id in any spelling, each item of a batch, each action a rule or scene stores): the
tool or backend resolves, and this module judges each entity change it found. What a
backend call changes comes from the backend itself (`BackendRuntime.call_effect`); a backend
that says nothing is judged by every controllable entity of the devices it reaches, each as
changed to an unknown state, so the default is the cautious one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import hashlib
import json
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_DEVICE_CLASS
from homeassistant.core import HomeAssistant

from ...core.settings import GatewaySettings
from ...framework.base import (
    REPORTING_PLATFORMS,
    BackendRuntime,
    CallEffect,
    EntityChange,
    ToolClass,
    ToolTier,
)
from ...permissions.policy import spec_entity_id
from .texts import GateRefusal, entity_name, too_many_refusal

# Covers that let people in: opening them is sensitive.
SENSITIVE_COVER_CLASSES: Final = frozenset({"garage", "gate", "door"})
# Open approvals one user may have at once, and all users together; the owner is never
# refused for the others' (one user cannot starve the owner of approvals).
MAX_OPEN_PER_USER: Final = 5
MAX_OPEN: Final = 20
# States that only make a home safer.
_SAFE_LOCK: Final = frozenset({"locked", "locking"})
_SAFE_COVER: Final = frozenset({"closed", "closing", "stop"})


@dataclass(frozen=True, slots=True)
class ApprovalReason:
    """Why a call waits for a person, in one phrase for them, and what it acts on."""

    summary: str
    entity_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Change:
    """One entity change, resolved to its HA entity."""

    entity_id: str
    target: str | None = None
    position: float | None = None
    action: str | None = None


def call_key(user_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """What binds an approval to one call: the user, the tool and the exact arguments."""
    canonical = json.dumps(
        [user_id, tool, arguments], sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def approval_applies(settings: GatewaySettings, user: User) -> bool:
    """Approval is on, and this user's calls are not exempt from it."""
    return settings.approval and user.id not in settings.approval_exempt_users


def sensitive_change(hass: HomeAssistant, settings: GatewaySettings, change: Change) -> bool:
    """Whether one entity change needs a person: a lock not locked, an alarm not armed, a
    garage door, gate or door not closed, or any change of an entity the settings name. An
    unknown target counts as the most sensitive change the entity can make."""
    entity_id = change.entity_id
    if entity_id in settings.approval_entities:
        return True
    domain = entity_id.split(".", 1)[0]
    target = change.target
    if domain == "lock":
        return target not in _SAFE_LOCK
    if domain == "alarm_control_panel":
        return target is None or not target.startswith("arm")
    if domain == "cover":
        state = hass.states.get(entity_id)
        device_class = state.attributes.get(ATTR_DEVICE_CLASS) if state is not None else None
        if device_class not in SENSITIVE_COVER_CLASSES:
            return False
        if change.position is not None:
            return change.position > 0
        return target not in _SAFE_COVER
    return False


def unmapped_devices(
    runtime: BackendRuntime,
    name: str,
    arguments: Mapping[str, Any],
    addressed: Mapping[str, list[str]],
) -> list[str]:
    """The device addresses of a call that no HA entity stands for (a device the backend
    hides from Home Assistant but reaches by its number)."""
    devices = runtime.device_keys_in_call(name, arguments)
    return sorted(key for key in dict.fromkeys(devices) if not addressed.get(key))


def backend_changes(
    hass: HomeAssistant,
    runtime: BackendRuntime,
    changes: Iterable[EntityChange],
) -> list[Change]:
    """A backend's entity changes as HA entities (a change of an entity HA has not
    registered is left out: nothing of it can be approved or exposed)."""
    return [
        Change(entity_id, change.target, change.position, change.action)
        for change in changes
        if (entity_id := spec_entity_id(hass, runtime, change.platform, change.key)) is not None
    ]


def call_effect(
    hass: HomeAssistant,
    runtime: BackendRuntime,
    name: str,
    arguments: Mapping[str, Any],
    addressed: Mapping[str, list[str]],
    *,
    tier: ToolTier,
) -> tuple[list[Change], list[Change], CallEffect]:
    """What a backend call changes now and stores, as HA entities, by the backend's word;
    where it says nothing, a read (by its tier) changes nothing, anything else every
    controllable entity of every device it addresses, to an unknown state."""
    effect = runtime.call_effect(name, arguments)
    if effect is None and tier is ToolTier.READ:
        return [], [], CallEffect()
    if effect is None:
        reporting = _reporting_ids(hass, runtime, addressed)
        changes = [
            Change(entity_id)
            for group in addressed.values()
            for entity_id in group
            if entity_id not in reporting
        ]
        return changes, [], CallEffect()
    return (
        backend_changes(hass, runtime, effect.changes),
        backend_changes(hass, runtime, effect.stored),
        effect,
    )


def _reporting_ids(
    hass: HomeAssistant, runtime: BackendRuntime, addressed: Mapping[str, list[str]]
) -> set[str]:
    """The entities of the addressed devices that only report (sensors, events)."""
    reporting: set[str] = set()
    for key in addressed:
        for spec in runtime.publisher.device_specs(key):
            if spec.platform in REPORTING_PLATFORMS and (
                entity_id := spec_entity_id(hass, runtime, spec.platform, spec.key)
            ):
                reporting.add(entity_id)
    return reporting


def backend_reason(
    hass: HomeAssistant,
    settings: GatewaySettings,
    *,
    title: str,
    name: str,
    tool_class: ToolClass,
    changes: list[Change],
    stored: list[Change],
    effect: CallEffect,
    unmapped: Sequence[str] = (),
) -> ApprovalReason | None:
    """Why a backend call waits for a person, or None: destructive tools, tools the settings
    name, a sensitive change now, a sensitive action stored to run later, or stored actions
    the backend cannot read."""
    now = [change for change in changes if sensitive_change(hass, settings, change)]
    later = [change for change in stored if sensitive_change(hass, settings, change)]
    # A write to an address no HA entity stands for (a device the hub hides from Home
    # Assistant, reached by its number) cannot be weighed: it is asked.
    blind = bool(unmapped) and tool_class.tier is not ToolTier.READ
    forced = tool_class.destructive or name in settings.approval_tools or effect.unread or blind
    if not (forced or now or later) or (tool_class.tier is ToolTier.READ and not forced):
        return None
    # Every change of the call (each item of a batch), not only the sensitive ones: the
    # approver sees all that will happen.
    parts = list(dict.fromkeys(describe_change(hass, change) for change in changes))
    if later:
        stored_all = dict.fromkeys(describe_change(hass, change) for change in stored)
        parts.append("stores, to run later without asking: " + "; ".join(stored_all))
    if effect.unread:
        parts.append("stores or runs actions the gateway cannot read")
    if blind:
        parts.append(f"reaches devices Home Assistant does not know: {', '.join(unmapped)}")
    what = f"{title}: {name}"
    summary = f"{what} ({'; '.join(parts)})" if parts else what
    entity_ids = tuple(dict.fromkeys(change.entity_id for change in (*now, *later)))
    return ApprovalReason(summary, entity_ids)


def describe_change(hass: HomeAssistant, change: Change) -> str:
    """One change for people: "Front Door: unlock", "Garage Door → open (position 40)"."""
    name = entity_name(hass, change.entity_id)
    if change.action:
        return f"{name}: {change.action}"
    if change.target is None and change.position is None:
        return f"{name}: any change"
    text = f"{name} → {change.target}" if change.target else name
    return f"{text} (position {change.position:g})" if change.position is not None else text


def too_busy(open_users: list[str], user: User) -> GateRefusal | None:
    """Why a new approval of this user is not opened, given the users of every open one
    (None: it may be): the user has as many open as one may, or all users together have,
    and this user is not the owner."""
    mine = open_users.count(user.id)
    if mine >= MAX_OPEN_PER_USER:
        return too_many_refusal(mine, MAX_OPEN_PER_USER)
    if len(open_users) >= MAX_OPEN and not user.is_owner:
        return too_many_refusal(len(open_users), MAX_OPEN)
    return None
