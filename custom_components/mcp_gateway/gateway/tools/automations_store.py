"""Automations where Home Assistant keeps them: automations.yaml through HA's own editor
(core/compat.py's AutomationEditor), the automation entities, HA's traces; and the gateway's
own record of which automations assistants saved."""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
import logging
from typing import Any, Final

from homeassistant.const import ATTR_FRIENDLY_NAME, CONF_ID
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey
from homeassistant.util.yaml import dump

from ...core import compat
from ...core.const import DOMAIN
from ..catalog.store import ToolFailure

_LOGGER = logging.getLogger(__name__)

AUTOMATION: Final = "automation"
# The description of an automation an assistant saved ends with this line: the user sees in
# Settings → Automations what an AI wrote.
MARKER: Final = "Saved by an AI assistant through MCP Gateway."
STORAGE_KEY: Final = f"{DOMAIN}.automations"
STORAGE_VERSION: Final = 1
DATA_RECORD: HassKey[AutomationRecord] = HassKey(f"{DOMAIN}_automations")


@dataclass(frozen=True, slots=True)
class Automation:
    """One automation HA runs: its entity, its config id, its config as stored."""

    entity_id: str
    config_id: str | None
    alias: str
    enabled: bool
    last_triggered: str | None
    config: dict[str, Any] | None


def editor(hass: HomeAssistant) -> compat.AutomationEditor:
    """HA's automation editor, or a failure saying automations cannot be edited here."""
    if (found := compat.automation_editor(hass)) is None:
        raise ToolFailure(
            "This Home Assistant's automation editor is not available, so automations cannot "
            "be changed through the gateway.",
            code="unavailable",
        )
    return found


def as_yaml(value: dict[str, Any]) -> str:
    """The automation as automations.yaml holds it (HA's own YAML dumper)."""
    return dump([value])


def fingerprint(value: dict[str, Any]) -> str:
    """SHA-256 of exactly what is written: what a person approves is what is saved."""
    return hashlib.sha256(as_yaml(value).encode()).hexdigest()


async def async_automations(hass: HomeAssistant) -> list[Automation]:
    """Every automation entity, with its config from automations.yaml (else as HA loaded it)."""
    stored: dict[str, dict[str, Any]] = {}
    if (found := compat.automation_editor(hass)) is not None:
        stored = {
            str(item[CONF_ID]): item for item in await found.async_read(hass) if CONF_ID in item
        }
    automations = []
    for state in hass.states.async_all(AUTOMATION):
        config_id = state.attributes.get(CONF_ID)
        config = stored.get(str(config_id)) if config_id is not None else None
        if config is None:
            config = compat.automation_raw_config(hass, state.entity_id)
        last: Any = state.attributes.get("last_triggered")
        automations.append(
            Automation(
                entity_id=state.entity_id,
                config_id=str(config_id) if config_id is not None else None,
                alias=str(state.attributes.get(ATTR_FRIENDLY_NAME, state.entity_id)),
                enabled=state.state == "on",
                last_triggered=dt_util.as_local(last).isoformat(timespec="seconds")
                if hasattr(last, "isoformat")
                else (str(last) if last else None),
                config=config,
            )
        )
    return automations


def find(automations: list[Automation], wanted: str) -> Automation:
    """The automation `wanted` names: its id, entity id or alias (any case)."""
    text = wanted.strip()
    folded = text.casefold()
    for automation in automations:
        if text in (automation.config_id, automation.entity_id):
            return automation
    named = [a for a in automations if a.alias.casefold() == folded]
    if len(named) == 1:
        return named[0]
    known = ", ".join(f"{a.alias} ({a.config_id or a.entity_id})" for a in automations[:20])
    raise ToolFailure(
        f"No single automation is {wanted!r}. Give its id, entity_id or alias; known: "
        f"{known or 'none'}.",
        code="not_found",
    )


async def async_save(hass: HomeAssistant, config_id: str, value: dict[str, Any]) -> str | None:
    """Write the automation as the editor does and load it, as the editor's own hook does
    (automation.reload of that id); its entity id once HA runs it."""
    await editor(hass).async_write(hass, config_id, value)
    try:
        await hass.services.async_call(
            AUTOMATION, "reload", {CONF_ID: config_id}, blocking=True, context=Context()
        )
    except HomeAssistantError:
        # Saved where the editor keeps it; HA loads it once automations load (its log says
        # why they did not).
        _LOGGER.warning("Automations could not be reloaded after saving %s", config_id)
        return None
    return er.async_get(hass).async_get_entity_id(AUTOMATION, AUTOMATION, config_id)


async def async_delete(hass: HomeAssistant, config_id: str) -> bool:
    """Remove the automation as the editor does: from the file, then its entity."""
    if not await editor(hass).async_delete(hass, config_id):
        return False
    registry = er.async_get(hass)
    if (entity_id := registry.async_get_entity_id(AUTOMATION, AUTOMATION, config_id)) is not None:
        registry.async_remove(entity_id)
    return True


class AutomationRecord:
    """Which automations assistants saved through the gateway, who asked and who approved."""

    def __init__(self, hass: HomeAssistant) -> None:
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, STORAGE_KEY)
        self._made: dict[str, dict[str, Any]] | None = None

    async def async_made(self) -> dict[str, dict[str, Any]]:
        """Config id → who asked, through which client, who approved, when."""
        if self._made is None:
            data = await self._store.async_load()
            made = data.get("made") if isinstance(data, dict) else None
            self._made = dict(made) if isinstance(made, dict) else {}
        return self._made

    async def async_note(self, config_id: str, facts: dict[str, Any]) -> None:
        """Remember an automation an assistant saved."""
        made = await self.async_made()
        made[config_id] = facts
        await self._store.async_save({"made": made})

    async def async_forget(self, config_id: str) -> None:
        """Forget a deleted automation."""
        made = await self.async_made()
        if made.pop(config_id, None) is not None:
            await self._store.async_save({"made": made})


def record(hass: HomeAssistant) -> AutomationRecord:
    """The gateway's record of the automations assistants saved."""
    if (found := hass.data.get(DATA_RECORD)) is None:
        found = hass.data[DATA_RECORD] = AutomationRecord(hass)
    return found


def made_by_ai(automation: Automation, made: dict[str, dict[str, Any]]) -> bool:
    """Saved by an assistant: in the gateway's record, or marked so in its description."""
    if automation.config_id is not None and automation.config_id in made:
        return True
    description = (automation.config or {}).get("description")
    return isinstance(description, str) and MARKER in description


def marked(description: Any) -> str:
    """The description with the gateway's marker line (once)."""
    text = description.strip() if isinstance(description, str) else ""
    if MARKER in text:
        return text
    return f"{text}\n\n{MARKER}" if text else MARKER
