"""A write whose connection drops after it was sent is reported as of unknown outcome ("may
have run"), never as not run: through a backend's gateway tool, the core set_state, the
integration's actions and entity commands. The simulators run the call, then close the
connection before answering (their `drop_answer` fault).
"""

from __future__ import annotations

from typing import Any

from homeassistant.const import Platform
from homeassistant.helpers import entity_registry as er
import pytest

from custom_components.mcp_gateway.backends.homecast.const import KIND as HOMECAST_KIND
from custom_components.mcp_gateway.backends.hubitat.const import KIND as HUBITAT_KIND
from custom_components.mcp_gateway.backends.robine_wake.const import KIND as ROBINE_WAKE_KIND
from custom_components.mcp_gateway.core.const import (
    DOMAIN,
)
from tests.homecast import sim as homecast_helpers

from .conftest import HOMECAST_GATEWAY, SIGNED_IN, SecurityHome, error_code

# Who may switch the living-room light (the policy user's one entity).
MAY_SWITCH = {"admin", "user", "policy"}


def _light(home: SecurityHome) -> tuple[Any, Any, Any]:
    followed = home.homecast.homes[0]
    living = homecast_helpers.device_of(home.sims[HOMECAST_KIND], "light", nth=0)
    return followed, followed.room_of(living), living


async def _ws_call(home: SecurityHome, kind: str, domain: str, service: str, data: Any) -> Any:
    assert home.ws_factory is not None
    ws = await home.ws_factory(home.hass, access_token=home.tokens[kind])
    await ws.send_json_auto_id(
        {"type": "call_service", "domain": domain, "service": service, "service_data": data}
    )
    message = await ws.receive_json()
    await ws.close()
    return message


@pytest.mark.parametrize("kind", SIGNED_IN)
async def test_a_backend_write_cut_off_after_sending_may_have_run(
    home: SecurityHome, kind: str
) -> None:
    """The issue: such a write was reported "unreachable" although the backend applied it."""
    followed, room, light = _light(home)
    before = light.values["on"]
    home.sims[HOMECAST_KIND].faults.drop_answer = True
    update = {"home": followed.slug, "room": room.slug, "accessory": light.slug, "on": not before}
    result = await home.call(
        kind, HOMECAST_GATEWAY, {"tool": "set_state", "args": {"updates": [update]}}
    )
    if kind not in MAY_SWITCH:
        assert error_code(result) == "forbidden"  # refused before anything was sent
        assert light.values["on"] is before
        return
    assert error_code(result) == "outcome_unknown", result
    text = result["content"][0]["text"]
    assert "may have run" in text
    assert "unreachable" not in text
    assert light.values["on"] is (not before)  # and it did run


async def test_a_backend_that_cannot_be_reached_did_not_run_it(
    home: SecurityHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other case stays as it was: no connection at all means nothing was sent."""
    followed, room, light = _light(home)
    before = light.values["on"]
    client = home.homecast_entry.runtime_data.client
    await home.call("admin", HOMECAST_GATEWAY, {})  # the catalog, while it is reachable
    monkeypatch.setattr(client, "_url", client._url.with_port(1))  # nothing listens there
    update = {"home": followed.slug, "room": room.slug, "accessory": light.slug, "on": not before}
    result = await home.call(
        "admin", HOMECAST_GATEWAY, {"tool": "set_state", "args": {"updates": [update]}}
    )
    assert error_code(result) == "unavailable", result
    assert light.values["on"] is before


@pytest.mark.parametrize("kind", sorted(MAY_SWITCH))
async def test_set_state_reports_a_cut_off_write_as_unknown(home: SecurityHome, kind: str) -> None:
    """The core set_state, through the light entity: "may have run", never "not applied"."""
    _, _, light = _light(home)
    before = light.values["on"]
    home.sims[HOMECAST_KIND].faults.drop_answer = True
    result = await home.call(
        kind,
        "set_state",
        {"updates": [{"entity_id": home.policy_light, "state": "off" if before else "on"}]},
    )
    assert error_code(result) == "outcome_unknown", result
    text = result["content"][0]["text"]
    assert "may have run" in text
    assert "No update was applied" not in text
    assert light.values["on"] is (not before)


async def test_an_action_cut_off_after_sending_may_have_run(home: SecurityHome) -> None:
    """An integration action over the websocket says so in translated words."""
    alarm = min(home.robine.alarms.values(), key=lambda a: a.id)
    home.sims[ROBINE_WAKE_KIND].faults.drop_answer = True
    message = await _ws_call(
        home,
        "user",
        DOMAIN,
        "trigger_alarm",
        {"config_entry_id": home.robine_entry.entry_id, "alarm_id": alarm.id},
    )
    assert not message["success"]
    assert message["error"]["translation_key"] == "outcome_unknown", message
    assert "may have run" in message["error"]["message"]
    assert home.robine.active_session is not None  # the clock did start ringing


async def test_an_entity_command_cut_off_after_sending_may_have_run(home: SecurityHome) -> None:
    """A Hubitat switch's turn_on over the websocket: the same translated "may have run"."""
    registry = er.async_get(home.hass)
    switch = next(
        e.entity_id
        for e in er.async_entries_for_config_entry(registry, home.hubitat_entry.entry_id)
        if e.domain == Platform.SWITCH and e.unique_id.endswith("_switch")
    )
    home.sims[HUBITAT_KIND].faults.drop_answer = True
    message = await _ws_call(home, "admin", "switch", "turn_on", {"entity_id": switch})
    assert not message["success"]
    assert message["error"]["translation_key"] == "outcome_unknown", message
