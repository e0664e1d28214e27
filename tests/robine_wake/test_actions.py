"""HA actions and the alarm switch: revision-safe writes, conflicts, ceilings, domain errors."""

from __future__ import annotations

from datetime import date, time
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.components.switch import DOMAIN as SWITCH_DOMAIN
from homeassistant.const import ATTR_ENTITY_ID, SERVICE_TURN_OFF, SERVICE_TURN_ON
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
import voluptuous as vol

from custom_components.mcp_gateway.core.const import DOMAIN

from .conftest import PASSWORD, Sim, advance

WEEKEND = "switch.bedroom_clock_weekend"


async def _act(
    hass: HomeAssistant, service: str, entry: MockConfigEntry, **data: Any
) -> dict[str, Any]:
    response = await hass.services.async_call(
        DOMAIN,
        service,
        {"config_entry_id": entry.entry_id, **data},
        blocking=True,
        return_response=True,
    )
    assert response is not None
    return dict(response)


async def test_create_alarm_appears_at_once(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A created alarm is answered in full and its entities appear at once."""
    response = await _act(
        hass,
        "create_alarm",
        entry,
        label="Gym",
        time="07:15:00",
        days=["fri", "mon"],
        volume=30,
        vibration_profile="pulse",
        vibration_intensity=60,
    )
    alarm = response["alarm"]
    assert alarm["revision"] == 1
    assert alarm["days"] == ["mon", "fri"]
    assert alarm["vibration"] == {"profile": "pulse", "intensity": 60}
    assert alarm["next_occurrence"] == "2026-11-30T07:15:00+01:00"
    stored = sim.device.alarms[alarm["id"]]
    assert (stored.label, stored.time, stored.volume) == ("Gym", "07:15", 30)
    # No poll needed: the entity exists right after the action.
    state = hass.states.get("switch.bedroom_clock_gym")
    assert state.state == "on"
    assert state.attributes["revision"] == 1


async def test_update_with_the_seen_revision(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """An update with the revision last seen is applied."""
    alarm_id = sim.alarm_id("Weekend")
    response = await _act(
        hass, "update_alarm", entry, alarm_id=alarm_id, revision=1, time="09:00", label="Lazy"
    )
    assert response["alarm"]["revision"] == 2
    assert sim.device.alarms[alarm_id].time == "09:00"
    assert hass.states.get(WEEKEND).attributes["time"] == "09:00"


async def test_update_conflict_names_the_current_revision(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A stale revision is a conflict naming the current one."""
    alarm_id = sim.alarm_id("Weekend")
    sim.device.edit_alarm(alarm_id, volume=20)  # someone on the clock: revision 2
    sim.device.edit_alarm(alarm_id, volume=25)  # revision 3
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, "update_alarm", entry, alarm_id=alarm_id, revision=1, volume=60)
    assert err.value.translation_key == "robine_wake_revision_conflict"
    assert err.value.translation_placeholders == {
        "alarm_id": alarm_id,
        "current_revision": "3",
        "sent_revision": "1",
    }
    assert "revision 3" in str(err.value)
    assert sim.device.alarms[alarm_id].volume == 25  # nothing overwritten
    # The conflict made HA read the clock again: the entity shows revision 3 now.
    assert hass.states.get(WEEKEND).attributes["revision"] == 3


async def test_delete_is_revision_safe(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """Deleting with a stale revision is refused; with the current one it deletes."""
    alarm_id = sim.alarm_id("Weekend")
    sim.device.edit_alarm(alarm_id, volume=20)
    with pytest.raises(HomeAssistantError, match="revision 2"):
        await _act(hass, "delete_alarm", entry, alarm_id=alarm_id, revision=1)
    assert alarm_id in sim.device.alarms
    assert await _act(hass, "delete_alarm", entry, alarm_id=alarm_id, revision=2) == {
        "deleted": alarm_id
    }
    assert alarm_id not in sim.device.alarms
    assert hass.states.get(WEEKEND) is None


async def test_ceilings_are_input_errors(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """The clock's ceilings are input errors with its code."""
    with pytest.raises(ServiceValidationError) as err:
        await _act(hass, "create_alarm", entry, label="Loud", time="07:00", volume=95)
    assert err.value.translation_key == "robine_wake_rejected"
    assert err.value.translation_placeholders["code"] == "ceiling_exceeded"
    assert "maximum of 85" in err.value.translation_placeholders["message"]
    with pytest.raises(ServiceValidationError, match="ceiling"):
        await _act(
            hass,
            "update_alarm",
            entry,
            alarm_id=sim.alarm_id("Weekend"),
            revision=1,
            vibration_profile="strong",
            vibration_intensity=90,
        )
    assert len(sim.device.alarms) == 3


async def test_trigger_and_session_active(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """Triggering rings at once; a second trigger while ringing is refused."""
    alarm_id = sim.alarm_id("Train to the coast")
    response = await _act(hass, "trigger_alarm", entry, alarm_id=alarm_id)
    assert response["session"]["state"] == "ringing"
    assert response["session"]["alarm_id"] == alarm_id
    assert hass.states.get("sensor.bedroom_clock_session").state == "ringing"
    # A second session is a device refusal, not an input error.
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, "trigger_alarm", entry, alarm_id=alarm_id)
    assert not isinstance(err.value, ServiceValidationError)
    assert err.value.translation_placeholders["code"] == "session_active"
    # Deleting the ringing alarm is refused too.
    with pytest.raises(HomeAssistantError, match="session_active"):
        await _act(hass, "delete_alarm", entry, alarm_id=alarm_id, revision=1)


async def test_unknown_alarm(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """An unknown alarm id is an input error."""
    with pytest.raises(ServiceValidationError, match="not_found"):
        await _act(hass, "trigger_alarm", entry, alarm_id="alm_missing")


async def test_preview_persists_nothing(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A preview answers its occurrences and warnings and stores nothing."""
    response = await _act(
        hass, "preview_alarm", entry, label="Try", time="06:30", days=["tue"], ramp_seconds=600
    )
    assert response["valid"] is True
    assert response["next_occurrences"][0] == "2026-12-01T06:30:00+01:00"
    assert len(response["next_occurrences"]) == 5
    assert response["warnings"] == [
        "The ramp is longer than the sound; the sound repeats while ramping."
    ]
    assert response["error"] is None
    invalid = await _act(hass, "preview_alarm", entry, label="Try", time="06:30", volume=99)
    assert invalid["valid"] is False
    assert invalid["error"]["code"] == "ceiling_exceeded"
    assert len(sim.device.alarms) == 3


async def test_schema_rejects_bad_input(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """The action schemas refuse malformed input."""
    for data in (
        {"label": "x", "time": "25:00"},
        {"label": "x" * 41, "time": "06:00"},
        {"label": "x", "time": "06:00", "days": ["monday"]},
        {"label": "x", "time": "06:00", "volume": 0},
        {"label": "x", "time": "06:00", "presence_policy": "wake_when_present"},
    ):
        with pytest.raises(vol.Invalid):
            await _act(hass, "create_alarm", entry, **data)
    with pytest.raises(vol.Invalid):
        await _act(hass, "update_alarm", entry, alarm_id="alm_1", volume=10)  # no revision


async def test_update_needs_a_change(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """An update without any field to change is refused."""
    with pytest.raises(ServiceValidationError) as err:
        await _act(hass, "update_alarm", entry, alarm_id=sim.alarm_id("Weekend"), revision=1)
    assert err.value.translation_key == "robine_wake_nothing_to_change"


async def test_intensity_needs_a_profile(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """A vibration intensity without a profile is refused."""
    with pytest.raises(ServiceValidationError) as err:
        await _act(hass, "create_alarm", entry, label="x", time="06:00", vibration_intensity=30)
    assert err.value.translation_key == "invalid_value"


async def test_one_shot_with_a_date(hass: HomeAssistant, sim: Sim, entry: MockConfigEntry) -> None:
    """A one-shot alarm takes a date; a date in the past is refused."""
    response = await _act(
        hass, "create_alarm", entry, label="Flight", time=time(4, 10), date=date(2026, 12, 24)
    )
    assert response["alarm"]["date"] == "2026-12-24"
    assert response["alarm"]["next_occurrence"] == "2026-12-24T04:10:00+01:00"
    with pytest.raises(ServiceValidationError, match="in the past"):
        await _act(hass, "create_alarm", entry, label="Late", time="04:10", date="2026-11-29")


async def test_wrong_entry(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """An unknown or unloaded entry is a translated error."""
    other = MockConfigEntry(domain=DOMAIN, data={"backend": "another_backend"})
    other.add_to_hass(hass)
    for entry_id in ("nope", other.entry_id):
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(
                DOMAIN,
                "trigger_alarm",
                {"config_entry_id": entry_id, "alarm_id": "alm_1"},
                blocking=True,
                return_response=True,
            )
        assert err.value.translation_key == "robine_wake_entry_not_found"
    await hass.config_entries.async_unload(entry.entry_id)
    with pytest.raises(ServiceValidationError) as err:
        await _act(hass, "trigger_alarm", entry, alarm_id="alm_1")
    assert err.value.translation_key == "robine_wake_entry_not_loaded"


async def test_transport_failures_of_actions(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """Transport failures of actions are translated errors."""
    alarm_id = sim.alarm_id("Weekend")
    # The clock takes the request and drops the connection: it may have acted on it.
    sim.faults.offline = True
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, "trigger_alarm", entry, alarm_id=alarm_id)
    assert err.value.translation_key == "outcome_unknown"
    sim.faults.offline = False
    sim.faults.malformed = True
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, "trigger_alarm", entry, alarm_id=alarm_id)
    assert err.value.translation_key == "command_failed"
    sim.faults.malformed = False
    sim.device.password = PASSWORD
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, "trigger_alarm", entry, alarm_id=alarm_id)
    assert err.value.translation_key == "auth_failed"
    await hass.async_block_till_done()
    assert any(
        flow["context"]["source"] == "reauth" for flow in hass.config_entries.flow.async_progress()
    )


async def test_rate_limited_action_slows_the_polls(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, frozen: FrozenDateTimeFactory
) -> None:
    """An action refused by the rate limit also slows the polls."""
    coordinator = entry.runtime_data.coordinator
    sim.device.rate_limiter.per_minute = 1  # the owner turned the budget down
    with pytest.raises(HomeAssistantError) as err:
        await _act(hass, "trigger_alarm", entry, alarm_id=sim.alarm_id("Weekend"))
    assert err.value.translation_key == "rate_limited"
    assert coordinator.update_interval.total_seconds() == 60
    assert sim.device.active_session is None


async def test_switch_writes_with_its_revision(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry
) -> None:
    """The alarm switch writes with the revision it shows."""
    alarm_id = sim.alarm_id("Weekend")
    await hass.services.async_call(
        SWITCH_DOMAIN, SERVICE_TURN_OFF, {ATTR_ENTITY_ID: WEEKEND}, blocking=True
    )
    assert sim.device.alarms[alarm_id].enabled is False
    state = hass.states.get(WEEKEND)
    assert state.state == "off"
    assert state.attributes["revision"] == 2
    # A disabled alarm has no next ring.
    assert hass.states.get("sensor.bedroom_clock_weekend_next_ring").state == "unknown"
    await hass.services.async_call(
        SWITCH_DOMAIN, SERVICE_TURN_ON, {ATTR_ENTITY_ID: WEEKEND}, blocking=True
    )
    assert sim.device.alarms[alarm_id].enabled is True
    assert sim.device.alarms[alarm_id].revision == 3


async def test_switch_conflict_refreshes_and_explains(
    hass: HomeAssistant, sim: Sim, entry: MockConfigEntry, frozen: FrozenDateTimeFactory
) -> None:
    """A switch write on a stale revision refreshes and explains the conflict."""
    alarm_id = sim.alarm_id("Weekend")
    sim.device.edit_alarm(alarm_id, label="Weekend edited")  # the entity still holds rev 1
    with pytest.raises(HomeAssistantError, match=r"holds revision 2.*based on revision 1"):
        await hass.services.async_call(
            SWITCH_DOMAIN, SERVICE_TURN_OFF, {ATTR_ENTITY_ID: WEEKEND}, blocking=True
        )
    assert sim.device.alarms[alarm_id].enabled is True
    state = hass.states.get(WEEKEND)
    assert state.attributes["revision"] == 2
    assert state.attributes["label"] == "Weekend edited"
    # Now that it saw revision 2, the same switch works.
    await hass.services.async_call(
        SWITCH_DOMAIN, SERVICE_TURN_OFF, {ATTR_ENTITY_ID: WEEKEND}, blocking=True
    )
    assert sim.device.alarms[alarm_id].enabled is False
    await advance(hass, frozen, sim, 5)
    assert hass.states.get(WEEKEND).state == "off"
