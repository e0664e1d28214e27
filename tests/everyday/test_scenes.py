"""A scene run at one of two homes: the answer names no change that did not happen."""

from __future__ import annotations

from .assistant import GEORGE_STREET, Home, entities, results


async def test_run_good_night_at_george_street(home: Home) -> None:
    """ "Run Good Night at George Street." — the answer names no change that did not happen."""
    before = {state.entity_id: state.state for state in home.hass.states.async_all()}
    data, _ = await home.assistant.call(
        "get_state", {"domain": ["scene"], "name": f"{GEORGE_STREET} good night"}
    )
    [scene] = entities(data)
    data, _ = await home.assistant.call(
        "set_state", {"updates": [{"entity_id": scene["entity_id"], "state": "on"}]}
    )
    [result] = results(data)
    assert result["status"] == "done", data
    changed = result.get("changed") or []
    for item in changed:
        entity_id = item["entity_id"] if isinstance(item, dict) else item
        assert home.hass.states.get(entity_id).state != before.get(entity_id), (item, data)
