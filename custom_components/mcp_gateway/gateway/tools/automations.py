"""automations: Home Assistant automations across every backend, built by an assistant and
approved by a person.

One tool with an `action`: list, get, explain (why it ran or not, from HA's traces), save
(create or update), enable, disable, delete. The automation is HA's own config, as its editor
stores it, validated by HA's own automation validation and written through HA's own editor
into automations.yaml (automations_store.py), so people see and change it under Settings →
Automations. Saving and deleting wait for a person (the approval channels), shown a summary
in words (automations_config.py), any action that lets people in in bold, then the exact
config; what is approved is what is written, byte for byte. Only those HA lets edit
automations may (administrators, unless the settings let others), and only over entities
their assistant could reach directly.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.const import CONF_ID
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.util import dt as dt_util
from homeassistant.util.yaml import parse_yaml

from ...core.settings import GatewaySettings, gateway_settings
from ...framework.base import ToolTier
from ...permissions.policy import async_record_write, user_display_name
from ...permissions.visibility import can_control_entity
from ..approval.gate import async_gate
from ..approval.rules import ApprovalReason
from ..approval.texts import GateRefusal
from ..catalog.schemas.validate import JSON_TEXT_TITLE
from ..catalog.store import ToolFailure
from . import automations_store as store
from .automations_config import (
    Namer,
    backend_labels,
    may_read_all,
    references,
    require_editor,
    require_reachable,
    sensitive_actions,
    summary,
)
from .automations_explain import async_explain

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

TOOL: Final = "automations"
ACTIONS: Final = ("list", "get", "explain", "save", "enable", "disable", "delete")
# Free-form: declared as JSON text, the object itself taken too (YAML text as well).
_TEXT: Final = {"type": "string", "title": JSON_TEXT_TITLE}

AUTOMATIONS_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "automation": {"type": "string", "description": "id, entity_id or alias"},
        "config": {
            **_TEXT,
            "description": "save: alias, triggers, conditions, actions, mode as HA's editor",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}

DESCRIPTION: Final = (
    "Create, change, list, delete Home Assistant automations over all backends; explain: why "
    "one did or did not run. A person approves saves and deletes."
)


async def async_automations(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Run one action of the automations tool."""
    user: User = ctx.user
    action = args["action"]
    if action == "list":
        return await _async_list(hass, user)
    if action == "save":
        return await _async_save(hass, ctx, user, args)
    if not isinstance(wanted := args.get("automation"), str) or not wanted.strip():
        raise ToolFailure(
            f'{action} needs "automation": its id, entity_id or alias.', code="invalid"
        )
    # Only automations the caller may see are found (and named when none is).
    automation = store.find(await _async_visible(hass, user), wanted)
    settings = gateway_settings(hass)
    if action == "delete":
        return await _async_delete(hass, ctx, user, settings, automation)
    if action == "get":
        return _described(hass, automation, await store.record(hass).async_made())
    if action == "explain":
        return await async_explain(hass, automation)
    return await _async_switch(hass, ctx, user, settings, automation, on=action == "enable")


async def _async_visible(hass: HomeAssistant, user: User) -> list[store.Automation]:
    """The automations whose every entity the user may read and is exposed."""
    return [
        automation
        for automation in await store.async_automations(hass)
        if may_read_all(hass, user, references(hass, automation.config or {}))
    ]


async def _async_list(hass: HomeAssistant, user: User) -> dict[str, Any]:
    """Every automation the user's assistant may see: alias, on/off, last run, backends."""
    made = await store.record(hass).async_made()
    listed = []
    withheld = 0
    for automation in await store.async_automations(hass):
        found = references(hass, automation.config or {})
        if not may_read_all(hass, user, found):
            withheld += 1
            continue
        item: dict[str, Any] = {
            "alias": automation.alias,
            "id": automation.config_id,
            "entity_id": automation.entity_id,
            "enabled": automation.enabled,
            "last_triggered": automation.last_triggered,
            "backends": backend_labels(hass, found.entities),
        }
        if store.made_by_ai(automation, made):
            item["made_by_ai"] = True
        listed.append(item)
    answer: dict[str, Any] = {"automations": listed}
    if withheld:
        answer["withheld"] = (
            f"{withheld} automation(s) reaching entities you may not read, or not exposed to "
            "assistants, were left out."
        )
    return answer


def _described(
    hass: HomeAssistant, automation: store.Automation, made: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    config = automation.config or {}
    answer: dict[str, Any] = {
        "id": automation.config_id,
        "entity_id": automation.entity_id,
        "enabled": automation.enabled,
        "last_triggered": automation.last_triggered,
        "summary": summary(hass, config),
        "made_by_ai": store.made_by_ai(automation, made),
        "config": config,
    }
    if automation.config_id is not None and automation.config_id in made:
        answer["saved_through_gateway"] = made[automation.config_id]
    return answer


# --- save ------------------------------------------------------------------------------------


def _config(args: dict[str, Any]) -> dict[str, Any]:
    """The automation config the call gives under `config` (its id is the tool's to give)."""
    given = args.get("config")
    parsed = _parsed(given, "config") if given is not None else None
    if not isinstance(parsed, dict) or not parsed:
        raise ToolFailure(
            'save needs "config": one automation, an object with alias, triggers, '
            "conditions, actions, mode.",
            code="invalid",
        )
    config = dict(parsed)
    config.pop(CONF_ID, None)
    return config


def _parsed(value: Any, key: str) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        pass
    try:
        return parse_yaml(value)
    except HomeAssistantError as err:
        raise ToolFailure(f"{key} is neither JSON nor YAML: {err}", code="invalid") from err


def _new_id(user: User, config: dict[str, Any]) -> str:
    """A new automation's id, the same for the same request (a repeated call after its
    approval finds the same approval, and saves one automation, not two)."""
    canonical = json.dumps([user.id, config], sort_keys=True, default=str)
    return f"ai_{hashlib.sha256(canonical.encode()).hexdigest()[:12]}"


async def _async_save(
    hass: HomeAssistant, ctx: RequestContext, user: User, args: dict[str, Any]
) -> dict[str, Any]:
    settings = gateway_settings(hass)
    require_editor(user, settings)
    config = _config(args)
    existing = None
    if isinstance(wanted := args.get("automation"), str) and wanted.strip():
        existing = store.find(await _async_visible(hass, user), wanted)
        if existing.config_id is None:
            raise ToolFailure(
                f"{existing.alias} has no id, so it is not kept in automations.yaml; edit it "
                "where it is written.",
                code="invalid",
            )
        if existing.config is not None:
            # A user may change only an automation that reaches what they may reach.
            require_reachable(hass, user, references(hass, existing.config))
    editor = store.editor(hass)
    config_id = (
        existing.config_id
        if existing is not None and existing.config_id is not None
        else _new_id(user, config)
    )
    if problem := await editor.async_validate(hass, config_id, config):
        raise ToolFailure(
            f"Home Assistant refuses this automation: {problem}. Fix the config and save "
            "again (HA's editor format: triggers with trigger:, conditions with condition:, "
            "actions with action: and target:).",
            code="invalid",
        )
    found = references(hass, config)
    require_reachable(hass, user, found)
    config["description"] = store.marked(config.get("description"))
    value = editor.stored_value(config_id, config)
    text = store.as_yaml(value)
    digest = store.fingerprint(value)
    in_words = summary(hass, config)
    alias = str(config.get("alias") or config_id)
    verb = "Change" if existing is not None else "Create"
    title = f"{verb} the automation {alias!r}: {in_words}"
    sensitive = sensitive_actions(hass, settings, found)
    approved_by = await _async_approved(
        hass,
        ctx,
        user,
        arguments={"action": "save", "id": config_id, "sha256": digest},
        summary=_with_warning(hass, title, sensitive),
        details=f"```yaml\n{text}```\nSHA-256 {digest}",
        entity_ids=sorted(found.control),
    )
    # What was approved is what is written: the same object, checked once more.
    if store.fingerprint(value) != digest:
        raise ToolFailure("The automation changed after approval; nothing was saved.")
    try:
        entity_id = await store.async_save(hass, config_id, value)
    except OSError as err:
        raise ToolFailure(
            f"Home Assistant could not write automations.yaml ({err.strerror}); nothing was saved.",
            code="failed",
        ) from err
    facts = {
        "asked_by": user_display_name(user),
        "client": ctx.client_name or "unknown client",
        "approved_by": approved_by,
        "saved": dt_util.now().isoformat(timespec="seconds"),
    }
    await store.record(hass).async_note(config_id, facts)
    async_record_write(
        hass,
        user=user,
        client_name=ctx.client_name,
        tool=TOOL,
        summary=f"{'changed' if existing else 'created'} the automation {alias!r}"
        + (f", approved by {approved_by}" if approved_by else ""),
        success=entity_id is not None,
        entity_id=entity_id,
    )
    answer: dict[str, Any] = {
        "saved": config_id,
        "entity_id": entity_id,
        "alias": alias,
        "summary": in_words,
        "sha256": digest,
    }
    if approved_by:
        answer["approved_by"] = approved_by
    if entity_id is None:
        answer["note"] = "Saved, but Home Assistant has not loaded it; see its log."
    return answer


def _with_warning(hass: HomeAssistant, text: str, sensitive: list[tuple[str, str]]) -> str:
    """The summary, with any action that lets people in said first, in bold."""
    if not sensitive:
        return text
    namer = Namer(hass)
    doing = "; ".join(f"{verb} {namer.name(entity_id)}" for verb, entity_id in sensitive)
    return f"**Sensitive: this automation will {doing}.** {text}"


async def _async_approved(
    hass: HomeAssistant,
    ctx: RequestContext,
    user: User,
    *,
    arguments: dict[str, Any],
    summary: str,
    details: str,
    entity_ids: list[str],
) -> str | None:
    """Wait for a person to approve this change (approval on, the user not exempt): who
    approved, else ToolFailure saying it waits, was declined or expired."""
    # The approval is bound to the config's hash: another config asks again.
    answer = await async_gate(
        hass,
        ctx,
        user,
        tool=TOOL,
        arguments=arguments,
        reason=ApprovalReason(summary, tuple(entity_ids)),
        tier=ToolTier.ADMIN,
        details=details,
    )
    if isinstance(answer, GateRefusal):
        raise ToolFailure(answer.message, code=answer.code, **answer.details)
    return answer.approved_by


# --- delete, enable, disable -----------------------------------------------------------------


async def _async_delete(
    hass: HomeAssistant,
    ctx: RequestContext,
    user: User,
    settings: GatewaySettings,
    automation: store.Automation,
) -> dict[str, Any]:
    require_editor(user, settings)
    config = automation.config or {}
    found = references(hass, config)
    require_reachable(hass, user, found)
    if automation.config_id is None:
        raise ToolFailure(
            f"{automation.alias} is not kept in automations.yaml; remove it where it is written.",
            code="invalid",
        )
    editor = store.editor(hass)
    value = editor.stored_value(automation.config_id, config)
    digest = store.fingerprint(value)
    approved_by = await _async_approved(
        hass,
        ctx,
        user,
        arguments={"action": "delete", "id": automation.config_id, "sha256": digest},
        summary=f"Delete the automation {automation.alias!r}: {summary(hass, config)}",
        details=f"```yaml\n{store.as_yaml(value)}```",
        entity_ids=sorted(found.control),
    )
    try:
        deleted = await store.async_delete(hass, automation.config_id)
    except OSError as err:
        raise ToolFailure(
            f"Home Assistant could not write automations.yaml ({err.strerror}); nothing was "
            "deleted.",
            code="failed",
        ) from err
    if not deleted:
        raise ToolFailure(f"{automation.alias} was already gone.", code="not_found")
    await store.record(hass).async_forget(automation.config_id)
    async_record_write(
        hass,
        user=user,
        client_name=ctx.client_name,
        tool=TOOL,
        summary=f"deleted the automation {automation.alias!r}"
        + (f", approved by {approved_by}" if approved_by else ""),
        success=True,
    )
    answer: dict[str, Any] = {"deleted": automation.config_id, "alias": automation.alias}
    if approved_by:
        answer["approved_by"] = approved_by
    return answer


async def _async_switch(
    hass: HomeAssistant,
    ctx: RequestContext,
    user: User,
    settings: GatewaySettings,
    automation: store.Automation,
    *,
    on: bool,
) -> dict[str, Any]:
    """Turn an automation on or off, as the user (HA checks their right to its entity)."""
    if not can_control_entity(user, automation.entity_id):
        raise ToolFailure(
            f"Permission denied: this user may not turn {automation.alias} on or off.",
            code="forbidden",
        )
    if on and automation.config is not None:
        found = references(hass, automation.config)
        require_reachable(hass, user, found)
        if sensitive := sensitive_actions(hass, settings, found):
            # Turning on an automation that unlocks or opens lets it do so: a person agrees.
            await _async_approved(
                hass,
                ctx,
                user,
                arguments={"action": "enable", "entity_id": automation.entity_id},
                summary=_with_warning(
                    hass, f"Turn on the automation {automation.alias!r}", sensitive
                ),
                details="",
                entity_ids=sorted(found.control),
            )
    service = "turn_on" if on else "turn_off"
    try:
        await hass.services.async_call(
            store.AUTOMATION,
            service,
            {"entity_id": automation.entity_id},
            blocking=True,
            context=Context(user_id=user.id),
        )
    except Unauthorized as err:
        raise ToolFailure(
            f"Permission denied: Home Assistant refused to turn {automation.alias} "
            f"{'on' if on else 'off'}.",
            code="forbidden",
        ) from err
    except HomeAssistantError as err:
        raise ToolFailure(
            f"Home Assistant could not turn {automation.alias} {'on' if on else 'off'}: {err}",
            code="failed",
        ) from err
    async_record_write(
        hass,
        user=user,
        client_name=ctx.client_name,
        tool=TOOL,
        summary=f"turned the automation {automation.alias!r} {'on' if on else 'off'}",
        success=True,
        entity_id=automation.entity_id,
    )
    state = hass.states.get(automation.entity_id)
    return {"entity_id": automation.entity_id, "enabled": state is not None and state.state == "on"}
