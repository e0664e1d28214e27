"""The typed API against the simulated clock, and the wire model's parsing rules."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any

import aiohttp
import pytest

from custom_components.mcp_gateway.backends.robine_wake import model
from custom_components.mcp_gateway.backends.robine_wake.api import (
    RevisionConflict,
    RobineDomainError,
    RobineWakeApi,
)
from custom_components.mcp_gateway.mcp.client import BasicAuth, McpClient, ToolResult
from custom_components.mcp_gateway.mcp.errors import McpAuthError, McpProtocolError

from .conftest import PASSWORD, Sim, SimFactory


@pytest.fixture
async def session() -> AsyncGenerator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _api(session: aiohttp.ClientSession, sim: Sim, password: str | None = None) -> RobineWakeApi:
    auth = BasicAuth(model.ADMIN_USER, password) if password else None
    return RobineWakeApi(McpClient(session, sim.url, auth=auth, prefer_modern=False))


async def test_reads(session: aiohttp.ClientSession, sim: Sim) -> None:
    api = _api(session, sim)
    state = await api.get_state()
    assert state.device is None  # 50-002 defines no identity
    assert state.health.ok
    assert state.settings.max_volume == 85
    assert {alarm.label for alarm in state.alarms.values()} == {
        "Weekdays",
        "Weekend",
        "Train to the coast",
    }
    assert not any(alarm.detailed for alarm in state.alarms.values())
    alarms = await api.list_alarms()
    weekdays = next(alarm for alarm in alarms if alarm.label == "Weekdays")
    assert weekdays.detailed
    assert weekdays.vibration == model.Vibration("gentle", 40)
    assert len(weekdays.next_occurrences) == 5
    assert weekdays.next_occurrence == weekdays.next_occurrences[0]
    sounds = await api.list_sounds()
    assert sounds[0] == model.Sound("sunrise_birds", "Sunrise Birds", 180)


async def test_writes_and_their_failures(session: aiohttp.ClientSession, sim: Sim) -> None:
    api = _api(session, sim)
    alarm = await api.create_alarm({"label": "Nap", "time": "14:00", "days": ["sun", "sat"]})
    assert alarm.days == ("sat", "sun")
    assert alarm.revision == 1
    updated = await api.update_alarm(alarm.id, 1, {"volume": 20})
    assert updated.revision == 2
    with pytest.raises(RevisionConflict) as conflict:
        await api.update_alarm(alarm.id, 1, {"volume": 30})
    assert conflict.value.current_revision == 2
    assert conflict.value.sent_revision == 1
    assert conflict.value.code == model.ErrorCode.REVISION_CONFLICT
    assert "holds revision 2" in str(conflict.value)
    with pytest.raises(ValueError, match="nothing to change"):
        await api.update_alarm(alarm.id, 2, {})
    with pytest.raises(RobineDomainError) as retired:
        await api.create_alarm({"label": "Old", "time": "07:00", "presence_policy": "on"})
    assert retired.value.code == model.ErrorCode.RETIRED_FIELD
    assert retired.value.info.details == {"fields": ["presence_policy"]}
    with pytest.raises(RobineDomainError) as ceiling:
        await api.update_alarm(alarm.id, 2, {"volume": 100})
    assert ceiling.value.code == model.ErrorCode.CEILING_EXCEEDED
    await api.delete_alarm(alarm.id, 2)
    assert alarm.id not in sim.device.alarms
    with pytest.raises(RobineDomainError) as missing:
        await api.delete_alarm(alarm.id, 2)
    assert missing.value.code == model.ErrorCode.NOT_FOUND


async def test_session_tools(session: aiohttp.ClientSession, sim: Sim) -> None:
    api = _api(session, sim)
    alarm_id = sim.alarm_id("Weekdays")
    session_ = await api.trigger_alarm(alarm_id)
    assert session_.state is model.SessionState.RINGING
    snoozed = await api.snooze()
    assert snoozed.state is model.SessionState.SNOOZED
    assert snoozed.snooze_until is not None
    dismissed = await api.dismiss()
    assert dismissed.state is model.SessionState.ENDED
    assert dismissed.end_reason == model.EndReason.MCP
    with pytest.raises(RobineDomainError) as err:
        await api.snooze()
    assert err.value.code == model.ErrorCode.NO_ACTIVE_SESSION


async def test_preview(session: aiohttp.ClientSession, sim: Sim) -> None:
    api = _api(session, sim)
    preview = await api.preview_alarm({"label": "P", "time": "06:00", "enabled": False})
    assert preview.valid
    assert preview.next_occurrences == ()
    assert preview.warnings == ("The alarm is disabled and will not ring.",)
    invalid = await api.preview_alarm({"label": "P", "time": "06:00", "sound_id": "nope"})
    assert not invalid.valid
    assert invalid.error is not None
    assert invalid.error.code == "validation_failed"


async def test_password(session: aiohttp.ClientSession, sim_factory: SimFactory) -> None:
    sim = await sim_factory(password=PASSWORD)
    with pytest.raises(McpAuthError):
        await _api(session, sim).get_state()
    with pytest.raises(McpAuthError):
        await _api(session, sim, "wrong").get_state()
    assert (await _api(session, sim, PASSWORD).get_state()).health.ok


class _FakeClient:
    """Answers every call with one fixed tool result."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = ToolResult.from_result(result)
        self.server_info: dict[str, Any] = {}

    async def call_tool(self, name: str, args: Any, *, kind: str = "read") -> ToolResult:
        return self.result


async def test_error_without_structured_content() -> None:
    api = RobineWakeApi(
        _FakeClient({"content": [{"type": "text", "text": "broke"}], "isError": True})
    )  # type: ignore[arg-type]
    with pytest.raises(RobineDomainError) as err:
        await api.get_state()
    assert err.value.code == "unknown"
    assert str(err.value) == "get_state: broke"


async def test_text_only_result_is_parsed_from_json() -> None:
    """A device that puts the JSON only in the text content is still understood."""
    body = '{"sounds": [{"id": "a"}]}'
    api = RobineWakeApi(_FakeClient({"content": [{"type": "text", "text": body}]}))  # type: ignore[arg-type]
    assert await api.list_sounds() == [model.Sound("a", "a", None)]
    api = RobineWakeApi(_FakeClient({"content": [{"type": "text", "text": "hello"}]}))  # type: ignore[arg-type]
    with pytest.raises(McpProtocolError, match="list_sounds: unexpected reply"):
        await api.list_sounds()


# --- model -----------------------------------------------------------------------------------

ALARM: dict[str, Any] = {
    "id": "alm_1",
    "revision": 1,
    "label": "A",
    "time": "06:00",
    "days": [],
    "enabled": True,
    "next_occurrence": None,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"days": "mon"}, "days"),
        ({"enabled": "yes"}, "enabled"),
        ({"id": ""}, "alarm.id"),
        ({"revision": True}, "alarm.revision"),
        ({"next_occurrence": "2026-11-30T06:00:00"}, "no UTC offset"),
        ({"next_occurrence": "tomorrow"}, "not an ISO-8601"),
        ({"next_occurrence": 5}, "not a string"),
    ],
)
def test_alarm_shapes(change: dict[str, Any], message: str) -> None:
    with pytest.raises(model.ModelError, match=message):
        model.parse_alarm({**ALARM, **change})


def test_alarm_summary_and_details() -> None:
    summary = model.parse_alarm({**ALARM, "next_occurrence": "2026-11-30T06:00:00+01:00"})
    assert summary.next_occurrence == datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
    assert not summary.detailed
    assert "volume" not in model.alarm_as_dict(summary)
    detail = model.parse_alarm(
        {
            **{k: v for k, v in ALARM.items() if k != "next_occurrence"},
            "sound_id": "s",
            "volume": 10,
            "next_occurrences": ["2026-11-30T06:00:00+01:00"],
        }
    )
    assert detail.detailed
    assert detail.vibration is None
    merged = summary.with_details_of(detail)
    assert merged.detailed
    assert model.alarm_as_dict(merged)["volume"] == 10
    assert model.alarm_as_dict(merged)["vibration"] is None


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ([], "get_state result is not an object"),
        ({"health": {"status": "ok"}}, "no alarms list"),
        ({"health": {"status": "ok"}, "alarms": [], "recent_sessions": {}}, "recent_sessions"),
        ({"health": {}, "alarms": []}, "health.status"),
        (
            {"health": {"status": "ok"}, "alarms": [], "active_session": {"id": "s", "state": "x"}},
            "session.state 'x' is unknown",
        ),
    ],
)
def test_state_shapes(state: Any, message: str) -> None:
    with pytest.raises(model.ModelError, match=message):
        model.parse_state(state)


def test_other_result_shapes() -> None:
    with pytest.raises(model.ModelError):
        model.parse_alarm_list({"alarms": None})
    with pytest.raises(model.ModelError):
        model.parse_sounds({"sounds": "x"})
    with pytest.raises(model.ModelError):
        model.parse_preview({"valid": "yes"})
    with pytest.raises(model.ModelError):
        model.parse_preview({"valid": True, "next_occurrences": "soon"})
    assert model.parse_error("x") is None
    assert model.parse_error({"message": "no code"}) is None
    assert model.error_of_result(None) is None
    info = model.parse_error({"code": "revision_conflict", "details": {"current_revision": "2"}})
    assert info is not None
    assert info.current_revision is None  # not an integer: unknown, never guessed
    assert model.parse_identity({"id": ""}) is None


def test_alarm_arguments() -> None:
    assert model.alarm_arguments(
        {"days": ["sun", "mon"], "vibration_profile": "gentle", "vibration_intensity": 20}
    ) == {"days": ["mon", "sun"], "vibration": {"profile": "gentle", "intensity": 20}}
    assert model.alarm_arguments({"presence_policy": "x"}) == {"presence_policy": "x"}
    with pytest.raises(ValueError, match="needs vibration_profile"):
        model.alarm_arguments({"vibration_intensity": 20})
