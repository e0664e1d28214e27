"""core/compat.py on the running Home Assistant (the suite runs on both targets), and each
function failing soft when its internal is gone or has changed shape."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from homeassistant.components.auth import login_flow
from homeassistant.components.scene import Scene
from homeassistant.const import MAJOR_VERSION
from homeassistant.core import HomeAssistant
from homeassistant.helpers import translation
from homeassistant.helpers.http import KEY_HASS
from homeassistant.setup import async_setup_component
import pytest

from custom_components.mcp_gateway.core import compat
from custom_components.mcp_gateway.core.const import DOMAIN

TEMPERATURE = "component.sensor.entity_component.temperature.name"
OURS = f"component.{DOMAIN}.entity.sensor.free_memory.name"

# --- the translation cache -------------------------------------------------------------------


async def test_cached_translation_reads_what_ha_loaded(hass: HomeAssistant) -> None:
    # What no integration loaded reads None (HA 2026 may have loaded sensor's texts already).
    unloaded = "component.mcp_gateway_absent.entity_component.temperature.name"
    assert (
        compat.cached_translation(hass, "entity_component", "mcp_gateway_absent", unloaded) is None
    )
    await translation.async_get_translations(hass, "en", "entity_component", {"sensor"})
    await translation.async_get_translations(hass, "en", "entity", {DOMAIN})
    assert compat.cached_translation(hass, "entity_component", "sensor", TEMPERATURE) == (
        "Temperature"
    )
    assert compat.cached_translation(hass, "entity", DOMAIN, OURS)
    assert compat.cached_translation(hass, "entity", DOMAIN, f"{OURS}.nothing") is None


@pytest.mark.parametrize(
    "replacement",
    [None, lambda *args: ["not", "a", "mapping"], lambda *args: {TEMPERATURE: 42}],
    ids=["gone", "another shape", "not text"],
)
async def test_cached_translation_fails_soft(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch, replacement: Any
) -> None:
    await translation.async_get_translations(hass, "en", "entity_component", {"sensor"})
    if replacement is None:
        monkeypatch.delattr(translation, "async_get_cached_translations")
    else:
        monkeypatch.setattr(translation, "async_get_cached_translations", replacement)
    assert compat.cached_translation(hass, "entity_component", "sensor", TEMPERATURE) is None


# --- HA's own OAuth metadata -----------------------------------------------------------------


def _request(hass: HomeAssistant) -> web.Request:
    app = web.Application()
    app[KEY_HASS] = hass
    return make_mocked_request("GET", "/.well-known/oauth-authorization-server", app=app)


async def test_oauth_metadata_is_what_ha_declares(hass: HomeAssistant) -> None:
    document = await compat.async_ha_oauth_metadata(_request(hass))
    assert document["token_endpoint"].endswith("/auth/token")
    # What the gateway passes on: declared from 2026.10 (PKCE enforced), absent in 2025.4.
    declares = "code_challenge_methods_supported" in document
    assert declares == (MAJOR_VERSION >= 2026)


async def test_oauth_metadata_fails_soft(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(login_flow, "WellKnownOAuthInfoView")
    assert await compat.async_ha_oauth_metadata(_request(hass)) == {}

    class Listing:
        async def get(self, request: web.Request) -> web.Response:
            return web.json_response(["not", "a", "document"])

    monkeypatch.setattr(login_flow, "WellKnownOAuthInfoView", Listing, raising=False)
    assert await compat.async_ha_oauth_metadata(_request(hass)) == {}


# --- a scene's activation time -----------------------------------------------------------------


class _Scene(Scene):
    async def async_activate(self, **kwargs: Any) -> None:
        """Nothing to run."""


async def test_scene_activation_is_recorded(hass: HomeAssistant) -> None:
    scene = _Scene()
    assert scene.state is None
    compat.record_scene_activation(scene)
    assert scene.state is not None
    assert datetime.fromisoformat(scene.state)


class _Changed(_Scene):
    def _async_record_activation(self) -> None:
        raise TypeError("a changed private method")


@pytest.mark.parametrize("scene_class", [_Changed], ids=["raises"])
async def test_scene_activation_fails_soft(hass: HomeAssistant, scene_class: type[Scene]) -> None:
    """A private hook that fails: the 2025.4 field is set instead, nothing raises."""
    scene = scene_class()
    compat.record_scene_activation(scene)
    assert scene._Scene__last_activated is not None  # type: ignore[attr-defined]


async def test_scene_activation_without_the_hook(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook gone (as in 2025.4): the field is set; nothing raises."""
    for klass in Scene.__mro__:
        if "_async_record_activation" in vars(klass):
            monkeypatch.delattr(klass, "_async_record_activation")
    scene = _Scene()
    compat.record_scene_activation(scene)
    assert scene._Scene__last_activated is not None  # type: ignore[attr-defined]
    if MAJOR_VERSION < 2026:
        assert scene.state == scene._Scene__last_activated  # type: ignore[attr-defined]


# --- the automation editor, raw configs and traces --------------------------------------------

_AUTOMATION = {
    "alias": "Compat",
    "triggers": [{"trigger": "event", "event_type": "compat_test"}],
    "actions": [{"event": "compat_done"}],
}


async def test_automation_editor_writes_as_the_ui_does(hass: HomeAssistant, tmp_path: Any) -> None:
    hass.config.config_dir = str(tmp_path)
    (tmp_path / "configuration.yaml").write_text("automation: !include automations.yaml\n")
    (tmp_path / "automations.yaml").write_text("[]\n")
    assert await async_setup_component(hass, "automation", {})
    editor = compat.automation_editor(hass)
    assert editor is not None
    assert compat.automation_editor(hass) is editor
    assert await editor.async_validate(hass, "c1", _AUTOMATION) is None
    bad = {**_AUTOMATION, "triggers": [{"trigger": "nope"}]}
    assert "nope" in str(await editor.async_validate(hass, "c1", bad))
    value = editor.stored_value("c1", {**_AUTOMATION, "mode": "single"})
    assert list(value) == ["id", "alias", "triggers", "actions", "mode"]
    await editor.async_write(hass, "c1", value)
    assert await editor.async_read(hass) == [value]
    await hass.services.async_call("automation", "reload", {"id": "c1"}, blocking=True)
    assert compat.automation_raw_config(hass, "automation.compat") == value
    hass.bus.async_fire("compat_test")
    await hass.async_block_till_done()
    [trace] = await compat.async_automation_traces(hass, "c1")
    assert trace["script_execution"] == "finished"
    assert "trigger/0" in trace["trace"]
    assert await editor.async_delete(hass, "c1")
    assert not await editor.async_delete(hass, "c1")
    assert await editor.async_read(hass) == []


async def test_automation_internals_fail_soft(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from homeassistant.components.config import automation as config_automation
    from homeassistant.components.trace import util as trace_util

    monkeypatch.delattr(config_automation, "EditAutomationConfigView")
    assert compat.automation_editor(hass) is None
    # Without the automation component loaded: no entity, no traces.
    assert compat.automation_raw_config(hass, "automation.any") is None
    monkeypatch.delattr(trace_util, "async_list_traces")
    assert await compat.async_automation_traces(hass, "c1") == []
