"""Every use of a Home Assistant internal that has no stable API, fenced in one place.

Each function reads or calls something HA does not promise to keep: a private attribute,
another component's `hass.data` or its view. Each says which internal, on which releases it is
known (the two targets, 2025.4.4 and 2026.10.4, are tested in tests/test_compat.py), and what
happens when it changes: the function then fails soft, as its caller's comment says, and never
raises. When HA offers a public way, the function changes here and its callers do not.
"""

from __future__ import annotations

from collections.abc import Callable
import json
import logging
from typing import TYPE_CHECKING, Any, Final

from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
from homeassistant.util import dt as dt_util

if TYPE_CHECKING:
    from homeassistant.components.scene import Scene

_LOGGER = logging.getLogger(__name__)


def cached_translation(
    hass: HomeAssistant, category: str, integration: str, key: str
) -> str | None:
    """A translation HA has already loaded, in the system language (English for a language
    without it), or None.

    Internal: `homeassistant.helpers.translation.async_get_cached_translations`, HA's
    translation cache (no underscore, but not part of the documented integration API; both
    targets have it). If it goes or changes: None, and HA names the entity itself (our entity
    names then keep their device's name as a prefix, as HA shows them).
    """
    read = getattr(translation, "async_get_cached_translations", None)
    try:
        cached = read(hass, hass.config.language, category, integration)  # type: ignore[misc]
        text = cached.get(key)
    except Exception:  # an internal's changed shape must not break entity naming
        _LOGGER.debug("Home Assistant's translation cache could not be read", exc_info=True)
        return None
    return text if isinstance(text, str) else None


async def async_ha_oauth_metadata(request: web.Request) -> dict[str, Any]:
    """What the running HA declares in its own RFC 8414 document, or {}.

    Internal: the auth component's view `login_flow.WellKnownOAuthInfoView` (since HA 2022.9;
    2026.10 adds `code_challenge_methods_supported` and `client_id_metadata_document_supported`),
    called with the request as HA would. If it goes or changes shape: {}, and the gateway's
    metadata advertises no capability HA may not enforce (no PKCE, no metadata documents).
    """
    from homeassistant.components.auth import login_flow  # loaded with auth, HA's own

    view = getattr(login_flow, "WellKnownOAuthInfoView", None)
    try:
        response = await view().get(request)  # type: ignore[misc]
        document = json.loads(response.body)
    except Exception:  # another component's internals: fail closed, advertise less
        _LOGGER.debug("Home Assistant's own OAuth metadata could not be read", exc_info=True)
        return {}
    return document if isinstance(document, dict) else {}


def record_scene_activation(scene: Scene) -> None:
    """Note on a scene entity that it ran now (its state is that time), without running it.

    Internal: HA 2026.x's `BaseScene._async_record_activation` (private, what activating a
    scene calls); 2025.4 keeps the time only in the name-mangled field
    `Scene.__last_activated`, which is set instead. If both change: the field is set anyway
    and HA may ignore it, so the scene's state keeps its last run's time; nothing fails. The
    caller writes the state.
    """
    record = getattr(type(scene), "_async_record_activation", None)
    if callable(record):
        try:
            record(scene)
        except Exception:  # a changed private method: fall back to the field
            _LOGGER.debug("Scene._async_record_activation failed", exc_info=True)
        else:
            return
    scene._Scene__last_activated = dt_util.utcnow().isoformat()  # type: ignore[attr-defined]


class AutomationEditor:
    """Home Assistant's automation editor as its config view stores automations.

    Internal: the config component's `EditAutomationConfigView` (its `_write_value`, which
    orders the keys as the UI editor does, `_get_value`, `_delete_value`, `read_config`) and
    `config.view._write` (HA's YAML dump, written atomically), with the validator the view is
    registered with, `automation.config.async_validate_config_item`; the same on 2025.4 and
    2026.10 (2026 raises probatio's `Invalid` where 2025 raises voluptuous'). One instance per
    HA run, so the gateway's own writes are serialized by its lock; HA's view has a lock of its
    own (a save in the UI at the very same moment may be overwritten, as between two browser
    tabs). If the internals go: `automation_editor` answers None and the caller says
    automations cannot be edited on this Home Assistant.
    """

    def __init__(self, view: Any, write: Callable[[str, Any], None], validate: Any) -> None:
        self._view = view
        self._write = write
        self._validate = validate

    def stored_value(self, config_id: str, config: dict[str, Any]) -> dict[str, Any]:
        """The automation exactly as the editor writes it into automations.yaml."""
        data: list[dict[str, Any]] = []
        self._view._write_value(None, data, config_id, config)
        value: dict[str, Any] = data[0]
        return value

    async def async_validate(
        self, hass: HomeAssistant, config_id: str, config: dict[str, Any]
    ) -> str | None:
        """HA's own validation of one automation: None if valid, else HA's words."""
        try:
            await self._validate(hass, config_id, config)
        except Exception as err:
            return str(err) or type(err).__name__
        return None

    async def async_read(self, hass: HomeAssistant) -> list[dict[str, Any]]:
        """Every automation in automations.yaml (a copy)."""
        current = await self._view.read_config(hass)
        return [dict(item) for item in current if isinstance(item, dict)]

    async def async_write(self, hass: HomeAssistant, config_id: str, value: dict[str, Any]) -> None:
        """Write one automation as the editor does (created, or replaced by its id)."""
        async with self._view.mutation_lock:
            current = await self._view.read_config(hass)
            self._view._write_value(hass, current, config_id, value)
            await hass.async_add_executor_job(
                self._write, hass.config.path(self._view.path), current
            )

    async def async_delete(self, hass: HomeAssistant, config_id: str) -> bool:
        """Remove one automation as the editor does; False if the file has no such id."""
        async with self._view.mutation_lock:
            current = await self._view.read_config(hass)
            if self._view._get_value(hass, current, config_id) is None:
                return False
            self._view._delete_value(hass, current, config_id)
            await hass.async_add_executor_job(
                self._write, hass.config.path(self._view.path), current
            )
        return True


_AUTOMATION_EDITOR: Final = f"{__name__}.automation_editor"


def automation_editor(hass: HomeAssistant) -> AutomationEditor | None:
    """The automation editor of this HA run (see AutomationEditor), or None."""
    if (editor := hass.data.get(_AUTOMATION_EDITOR)) is not None:
        return editor  # type: ignore[no-any-return]
    try:
        from homeassistant.components.automation import DOMAIN as AUTOMATION_DOMAIN
        from homeassistant.components.automation.config import async_validate_config_item
        from homeassistant.components.config import view as config_view
        from homeassistant.components.config.automation import EditAutomationConfigView
        from homeassistant.config import AUTOMATION_CONFIG_PATH
        from homeassistant.helpers import config_validation as cv

        view = EditAutomationConfigView(
            AUTOMATION_DOMAIN,
            "config",
            AUTOMATION_CONFIG_PATH,
            cv.string,
            data_validator=async_validate_config_item,
        )
        write = config_view._write
        editor = AutomationEditor(view, write, async_validate_config_item)
    except Exception:  # another component's internals: no editing, said to the caller
        _LOGGER.debug("Home Assistant's automation editor could not be reached", exc_info=True)
        return None
    hass.data[_AUTOMATION_EDITOR] = editor
    return editor


def automation_raw_config(hass: HomeAssistant, entity_id: str) -> dict[str, Any] | None:
    """An automation's config as written (what HA's `automation/config` websocket command
    answers), also for automations outside automations.yaml, or None.

    Internal: the automation component's entity (`hass.data[DATA_COMPONENT]`, an
    EntityComponent) and its `raw_config`; the same on both targets. If it goes: None, and the
    caller reads automations.yaml only.
    """
    try:
        from homeassistant.components.automation import DATA_COMPONENT

        component = hass.data.get(DATA_COMPONENT)
        entity = component.get_entity(entity_id) if component is not None else None
        raw = getattr(entity, "raw_config", None)
    except Exception:  # another component's internals
        _LOGGER.debug("An automation's raw config could not be read", exc_info=True)
        return None
    return dict(raw) if isinstance(raw, dict) else None


async def async_automation_traces(hass: HomeAssistant, item_id: str) -> list[dict[str, Any]]:
    """The runs HA's trace component keeps of one automation (full traces, newest first),
    or [].

    Internal: `trace.util.async_list_traces` and `async_get_trace` (what the `trace/list`
    and `trace/get` websocket commands call), the same on both targets; 2026.x keeps traces
    of triggers whose trigger condition stopped them too, marked `not_triggered`. If they go
    or change: [], and the caller says no run is recorded.
    """
    try:
        from homeassistant.components.trace import util as trace_util

        key = f"automation.{item_id}"
        short = await trace_util.async_list_traces(hass, "automation", key)
        traces: list[dict[str, Any]] = []
        for run in short:
            full: Any = await trace_util.async_get_trace(hass, key, run["run_id"])
            traces.append(dict(full))
    except Exception:  # another component's internals
        _LOGGER.debug("An automation's traces could not be read", exc_info=True)
        return []
    traces.sort(key=lambda trace: str(trace.get("timestamp", {}).get("start", "")), reverse=True)
    return traces
