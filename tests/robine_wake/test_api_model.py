"""The typed API against the simulated clock, and the wire model's parsing rules."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp
import pytest

from custom_components.mcp_gateway.backends.robine_wake import model
from custom_components.mcp_gateway.backends.robine_wake.api import (
    RevisionConflict,
    RobineDomainError,
    RobineWakeApi,
)
from custom_components.mcp_gateway.mcp.client import BasicAuth, McpClient, ToolResult
from custom_components.mcp_gateway.mcp.errors import McpAuthError

from .conftest import PASSWORD, Sim, SimFactory


@pytest.fixture
async def session() -> AsyncGenerator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def _api(session: aiohttp.ClientSession, sim: Sim, password: str | None = None) -> RobineWakeApi:
    auth = BasicAuth(model.ADMIN_USER, password) if password else None
    return RobineWakeApi(McpClient(session, sim.url, auth=auth, prefer_modern=False))


async def test_reads(session: aiohttp.ClientSession, sim: Sim) -> None:
    """The API reads state, alarms and details as the clock sends them."""
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
    listed = await api.list_alarms()
    assert listed is not None
    assert listed.complete
    weekdays = next(alarm for alarm in listed.alarms.values() if alarm.label == "Weekdays")
    assert weekdays.detailed
    assert weekdays.vibration == model.Vibration("gentle", 40)
    assert len(weekdays.next_occurrences) == 5
    assert weekdays.next_occurrence == weekdays.next_occurrences[0]
    # In the clock's zone (settings.timezone), as the clock shows it.
    assert weekdays.next_occurrence.isoformat() == "2026-11-30T06:45:00+01:00"


async def test_writes_and_their_failures(session: aiohttp.ClientSession, sim: Sim) -> None:
    """Writes return the stored alarm; stale revisions and bad input raise."""
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
    """trigger, snooze and dismiss return the session in its new state."""
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
    """preview_alarm answers validity, occurrences and warnings."""
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
    """A clock with a password refuses without it or with a wrong one."""
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
    """An error result without structured content is an unknown domain error with its text."""
    api = RobineWakeApi(
        _FakeClient({"content": [{"type": "text", "text": "broke"}], "isError": True})
    )  # type: ignore[arg-type]
    with pytest.raises(RobineDomainError) as err:
        await api.get_state()
    assert err.value.code == "unknown"
    assert str(err.value) == "get_state: broke"


async def test_text_only_result_is_parsed_from_json() -> None:
    """A device that puts the JSON only in the text content is still understood."""
    body = '{"alarms": []}'
    api = RobineWakeApi(_FakeClient({"content": [{"type": "text", "text": body}]}))  # type: ignore[arg-type]
    assert await api.list_alarms() == model.AlarmList({}, complete=True)
    api = RobineWakeApi(_FakeClient({"content": [{"type": "text", "text": "hello"}]}))  # type: ignore[arg-type]
    assert await api.list_alarms() is None  # not the model's shape: nothing to offer, no failure


# --- model -----------------------------------------------------------------------------------

BERLIN = ZoneInfo("Europe/Berlin")
ALARM: dict[str, Any] = {
    "id": "alm_1",
    "revision": 1,
    "label": "A",
    "time": "06:00",
    "days": [],
    "enabled": True,
    "next_occurrence": None,
}


def _reading() -> model.Reading:
    return model.Reading(BERLIN)


@pytest.mark.parametrize(
    ("change", "field", "value", "problem"),
    [
        ({"days": "mon"}, "days", None, "days is a text, not a list"),
        ({"days": ["Monday", "funday", 3]}, "days", ("mon",), "no weekday"),
        ({"enabled": "yes"}, "enabled", None, "enabled is a text, not a boolean"),
        ({"revision": True}, "revision", None, "revision is a boolean, not an integer"),
        ({"revision": 2.0}, "revision", 2, None),
        ({"label": 7}, "label", "alm_1", "label is a number, not a text"),
        ({"time": "6 am"}, "time", None, "time is not HH:MM"),
        ({"time": "06:45:00"}, "time", "06:45", None),
        (
            {"next_occurrence": "2026-11-30T06:00:00"},
            "next_occurrence",
            datetime(2026, 11, 30, 6, 0, tzinfo=BERLIN),
            "no UTC offset (read as the clock's local time)",
        ),
        ({"next_occurrence": "tomorrow"}, "next_occurrence", None, "not an ISO-8601 datetime"),
        ({"next_occurrence": 5}, "next_occurrence", None, "is a number, not an ISO-8601 text"),
        ({"vibration": "strong"}, "vibration", None, "vibration is a text, not an object"),
    ],
)
def test_alarm_fields_degrade_alone(
    change: dict[str, Any], field: str, value: Any, problem: str | None
) -> None:
    """A field the clock sent in another shape is unknown; the rest of the alarm stays."""
    reading = _reading()
    alarm = model.parse_alarm(reading, {**ALARM, **change})
    assert alarm is not None
    assert getattr(alarm, field) == value
    untouched = {"id": "alm_1", "revision": 1, "label": "A", "time": "06:00", "enabled": True}
    for name, expected in untouched.items():
        if name != field:
            assert getattr(alarm, name) == expected
    if problem is None:
        assert reading.problems == []
    else:
        assert len(reading.problems) == 1
        assert reading.problems[0].startswith("alarm alm_1")
        assert problem in reading.problems[0]


@pytest.mark.parametrize("value", [None, "alm_1", [], {"id": ""}, {"label": "no id"}])
def test_alarm_without_an_id_is_skipped(value: Any) -> None:
    """An alarm without an id is skipped and noted; a numeric id counts."""
    reading = _reading()
    assert model.parse_alarm(reading, value) is None
    assert len(reading.problems) == 1
    assert model.parse_alarm(reading, {**ALARM, "id": 42}) is not None  # a number is an id too


def test_alarm_summary_and_details() -> None:
    """Alarm summaries and details parse their times in the clock's zone."""
    reading = _reading()
    summary = model.parse_alarm(reading, {**ALARM, "next_occurrence": "2026-11-30T05:00:00Z"})
    assert summary is not None
    assert summary.next_occurrence == datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
    # Shown in the clock's zone, whatever offset the clock used.
    assert summary.next_occurrence.isoformat() == "2026-11-30T06:00:00+01:00"
    assert not summary.detailed
    assert "volume" not in model.alarm_as_dict(summary)
    detail = model.parse_alarm(
        reading,
        {
            **{k: v for k, v in ALARM.items() if k != "next_occurrence"},
            "sound_id": "s",
            "volume": 10,
            "next_occurrences": ["2026-11-30T06:00:00+01:00", "later", None],
        },
    )
    assert detail is not None
    assert detail.detailed
    assert detail.vibration is None
    assert len(detail.next_occurrences) == 1
    merged = summary.with_details_of(detail)
    assert merged.detailed
    as_dict = model.alarm_as_dict(merged)
    assert as_dict["volume"] == 10
    assert as_dict["vibration"] is None
    assert as_dict["next_occurrence"] == "2026-11-30T06:00:00+01:00"
    assert reading.problems == ["alarm alm_1 next_occurrences[1]: is not an ISO-8601 datetime"]


@pytest.mark.parametrize(
    ("state", "check", "problem"),
    [
        ([], lambda s: s.alarms is None and s.health.ok is None, "get_state: is a list"),
        ({"health": {"status": "ok"}}, lambda s: s.alarms is None and s.health.ok, "alarms"),
        (
            {"health": {"status": "ok"}, "alarms": [], "recent_sessions": {}},
            lambda s: s.recent_sessions is None and s.alarms == {},
            "recent_sessions is an object",
        ),
        ({"health": {}, "alarms": []}, lambda s: s.health.ok is None, "health: status"),
        (
            {"health": {"status": "ok"}, "alarms": [], "active_session": {"id": "s", "state": "x"}},
            lambda s: s.active_session.state is None and s.session_known,
            "active_session: state is not one of",
        ),
        (
            {"health": {"status": "ok"}, "alarms": [], "active_session": "ringing"},
            lambda s: s.active_session is None and not s.session_known,
            "active_session: is a text",
        ),
        (
            {"health": "fine", "settings": {"max_volume": "loud"}, "alarms": []},
            lambda s: s.health.status is None and s.settings.max_volume is None,
            "health: is a text",
        ),
    ],
)
def test_state_shapes_degrade(state: Any, check: Any, problem: str) -> None:
    """Odd state shapes degrade to missing values with a noted problem."""
    reading = _reading()
    parsed = model.parse_state(reading, state)
    assert check(parsed)
    assert any(problem in text for text in reading.problems), reading.problems


def test_sessions_without_ids() -> None:
    """Sessions without ids get a stable one from their alarm and time."""
    reading = _reading()
    session = model.parse_session(
        reading, {"alarm_id": "alm_1", "started_at": "2026-11-30T06:45:00+01:00", "state": "ended"}
    )
    assert session is not None
    assert session.id == "alm_1@2026-11-30T06:45:00+01:00"  # stable across polls
    assert model.parse_session(reading, {"state": "ringing"}) is None


def test_other_result_shapes() -> None:
    """Alarm lists, previews and results of other shapes parse tolerantly."""
    reading = _reading()
    assert model.parse_alarm_list(reading, {"alarms": None}) is None
    assert model.parse_alarm_list(reading, "x") is None
    assert model.parse_alarm_list(reading, {"alarms": [ALARM, 3]}) == model.AlarmList(
        {"alm_1": model.parse_alarm(reading, ALARM)}, complete=False
    )
    assert model.parse_preview(reading, {"valid": "yes"}).valid is None
    assert model.parse_preview(reading, {"valid": True, "next_occurrences": "soon"}) == (
        model.Preview(valid=True, alarm=None, next_occurrences=(), warnings=())
    )
    assert model.parse_alarm_result(reading, {"alarm": "gone"}) is None
    assert model.parse_session_result(reading, {}) is None
    assert model.parse_error("x") is None
    assert model.parse_error({"message": "no code"}) is None
    assert model.error_of_result(None) is None
    info = model.parse_error({"code": "revision_conflict", "details": {"current_revision": "2"}})
    assert info is not None
    assert info.current_revision is None  # not an integer: unknown, never guessed
    assert model.parse_identity({"id": ""}) is None


@pytest.mark.parametrize(
    ("challenge", "scheme"),
    [
        ('Basic realm="Robine Wake"', model.AuthScheme.BASIC),
        ("Bearer", model.AuthScheme.BEARER),
        ('bearer error="invalid_token"', model.AuthScheme.BEARER),
        ('Digest realm="x", nonce="n", Basic realm="x"', model.AuthScheme.BASIC),
        ('Digest realm="basic"', None),
        ("Negotiate abc==", None),
        ("", None),
        (None, None),
    ],
)
def test_requested_scheme(challenge: str | None, scheme: model.AuthScheme | None) -> None:
    """The first scheme we can answer is read from a WWW-Authenticate header."""
    assert model.requested_scheme(challenge) is scheme


def test_alarm_arguments() -> None:
    """Action fields become the clock's alarm arguments."""
    assert model.alarm_arguments(
        {"days": ["sun", "mon"], "vibration_profile": "gentle", "vibration_intensity": 20}
    ) == {"days": ["mon", "sun"], "vibration": {"profile": "gentle", "intensity": 20}}
    assert model.alarm_arguments({"presence_policy": "x"}) == {"presence_policy": "x"}
    with pytest.raises(ValueError, match="needs vibration_profile"):
        model.alarm_arguments({"vibration_intensity": 20})
