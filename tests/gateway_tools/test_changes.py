"""What a run changed: only real changes of entities the caller may read are listed."""

from __future__ import annotations

from unittest.mock import patch

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.mcp_gateway.gateway.tools import changes as changes_module
from custom_components.mcp_gateway.gateway.tools.changes import ChangeWatch, with_changes

PLUG = "switch.kitchen_plug"
LAMP = "light.desk_lamp"
THERMO = "sensor.hall_thermometer"


@pytest.mark.usefixtures("fake_entry")
async def test_only_state_and_level_changes_are_listed(
    hass: HomeAssistant, hass_admin_user: MockUser
) -> None:
    """An attribute of no interest changing, or an entity removed, is no change; a changed
    state is listed, with its name only when it has one."""
    lamp = hass.states.get(LAMP)
    assert lamp is not None
    watch = ChangeWatch(hass, hass_admin_user)
    hass.states.async_set(LAMP, lamp.state, {**lamp.attributes, "linkquality": 42})
    hass.states.async_remove(THERMO)
    hass.states.async_set(PLUG, "off" if hass.states.get(PLUG).state == "on" else "on", {})
    await hass.async_block_till_done()
    watch.stop()
    watch.stop()  # idempotent
    summary = watch.summary()
    assert [item["entity_id"] for item in summary["changed"]] == [PLUG]
    assert "name" not in summary["changed"][0]
    assert summary["changed_note"].startswith("Entities whose state changed")


@pytest.mark.usefixtures("fake_entry")
async def test_a_long_list_says_how_many_more(
    hass: HomeAssistant, hass_admin_user: MockUser
) -> None:
    watch = ChangeWatch(hass, hass_admin_user)
    hass.states.async_set(PLUG, "unavailable")
    hass.states.async_set(LAMP, "unavailable")
    await hass.async_block_till_done()
    with patch.object(changes_module, "MAX_LISTED", 1):
        summary = watch.summary()
    watch.stop()
    assert [item["entity_id"] for item in summary["changed"]] == [LAMP]
    assert summary["changed_note"].endswith(" 1 more changed.")


async def test_the_backends_answer_keeps_its_own_content(
    hass: HomeAssistant, fake_entry: MockConfigEntry, hass_admin_user: MockUser
) -> None:
    """A failed run's error stays alone; a structured answer gains the changes beside its
    own fields, and the backend's answer itself is not modified."""
    watch = ChangeWatch(hass, hass_admin_user)
    summary = watch.summary()
    watch.stop()
    error = {"isError": True, "content": [{"type": "text", "text": "hub unreachable"}]}
    assert with_changes(error, summary) is error
    answer = {"content": [{"type": "text", "text": "ran"}], "structuredContent": {"ok": True}}
    annotated = with_changes(answer, summary)
    assert annotated["structuredContent"] == {"ok": True, "gateway_changes": summary}
    assert annotated["content"][0] == {"type": "text", "text": "ran"}
    assert annotated["content"][1]["text"] == summary["changed_note"]
    assert answer == {
        "content": [{"type": "text", "text": "ran"}],
        "structuredContent": {"ok": True},
    }
    assert summary["changed"] == []
    assert summary["changed_note"].startswith("No entity changed")
