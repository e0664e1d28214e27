"""Whether this caller may make a backend call, and what it is: its class by its arguments,
every check, what it changes, why it waits for a person, and how the logbook names it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ...core.settings import gateway_settings
from ...framework.base import BackendRuntime, ToolClass, ToolTier
from ...permissions.exposure import require_assistant_call, require_exposed_entities
from ...permissions.policy import PermissionDenied, require_confirmation, require_tier
from ..approval.rules import ApprovalReason, backend_reason, call_effect, unmapped_devices
from ..catalog.schemas.convert import restore_arguments
from ..catalog.store import BackendTool, ExposedBackend
from .replies import devices_phrase


@dataclass(frozen=True, slots=True)
class AuthorizedCall:
    """A backend tool call the caller may make, and the entities it addresses."""

    name: str
    args: dict[str, Any]
    tool_class: ToolClass
    what: str
    entity_ids: list[str]
    # For the logbook: " on <names>" of what it acts on, and the one entity to link.
    phrase: str = ""
    logbook_entity: str | None = None
    # Why it waits for a person (None: it does not).
    approval: ApprovalReason | None = None


def authorize(
    hass: HomeAssistant,
    user: User,
    backend: ExposedBackend,
    runtime: BackendRuntime,
    sub: BackendTool,
    *,
    arguments: Mapping[str, Any],
) -> AuthorizedCall:
    """The call's class by its arguments, then every check (raises PermissionDenied)."""
    args: dict[str, Any] = restore_arguments(sub.raw_input_schema, arguments.get("args", {}))
    what = f"{backend.gateway_name}/{sub.name}"
    tool_class = runtime.call_class(sub.tool_class, sub.name, args)
    # The tier before the confirmation: a caller who may not use the tool learns that.
    require_tier(user, tool_class.tier, what)
    require_confirmation(tool_class, arguments, what)
    try:
        # Assistants reach only the devices HA exposes to them, and change only exposed
        # entities; a listing is filtered after the call instead (filtering.py).
        addressed = require_assistant_call(
            hass,
            user,
            runtime,
            tool_class=tool_class,
            name=sub.name,
            args=args,
            what=what,
        )
        read = tool_class.tier is ToolTier.READ
        # What the call changes, entity by entity, by the backend's word.
        changes, stored, effect = call_effect(
            hass, runtime, sub.name, args, addressed, tier=tool_class.tier
        )
        if not read:
            require_exposed_entities(hass, user, [change.entity_id for change in changes], what)
    except PermissionDenied as err:
        hint = runtime.refusal_hint(sub.name, args)
        if hint is None:
            raise
        raise PermissionDenied(f"Permission denied: {what} {hint}", err.reason) from err
    entity_ids = sorted(e for group in addressed.values() for e in group)
    # Weighed on every tier: the settings may name a read tool that needs a person.
    approval = backend_reason(
        hass,
        gateway_settings(hass),
        title=backend.entry.title,
        name=sub.name,
        tool_class=tool_class,
        changes=changes,
        stored=stored,
        effect=effect,
        unmapped=() if read else unmapped_devices(runtime, sub.name, args, addressed),
    )
    if read:
        # No logbook line for a read: its naming is not worked out.
        return AuthorizedCall(sub.name, args, tool_class, what, entity_ids, approval=approval)
    # The logbook names single entities a call acts on (an alarm, the HSM panel) rather
    # than their whole device, and links the line to one of them where there is one.
    singles = [
        addressed[key]
        for _, key in runtime.entity_keys_in_call(sub.name, args)
        if addressed.get(key)
    ]
    # What the backend names (the alarm a snooze reaches) says more than its device.
    subject = runtime.call_subject(sub.name, args)
    named = singles or ([] if subject else list(addressed.values()))
    entity_ids_named = [e for group in named for e in group]
    return AuthorizedCall(
        sub.name,
        args,
        tool_class,
        what,
        entity_ids,
        devices_phrase(hass, named, subject),
        entity_ids_named[0] if len(entity_ids_named) == 1 else None,
        approval,
    )
