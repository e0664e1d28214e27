"""A typed API over the Robine Wake's MCP tools (the wire format stays in model.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import tzinfo
import logging
from typing import Any

from homeassistant.util import dt as dt_util

from ...mcp.client import McpClient, ToolResult
from ...mcp.errors import McpToolError
from . import model
from .model import (
    Alarm,
    AlarmList,
    DeviceIdentity,
    DeviceState,
    DomainErrorInfo,
    ErrorCode,
    Preview,
    Reading,
    Session,
)

_LOGGER = logging.getLogger(__name__)


class RobineDomainError(McpToolError):
    """The device refused a valid call for a domain reason (`error.code`)."""

    def __init__(self, tool: str, info: DomainErrorInfo, result: ToolResult) -> None:
        super().__init__(f"{tool}: {info.message}", result)
        self.tool = tool
        self.info = info

    @property
    def code(self) -> str:
        """The device's error code (model.ErrorCode values)."""
        return self.info.code


class RevisionConflict(RobineDomainError):
    """An update or delete carried a revision the device has moved past."""

    def __init__(
        self, tool: str, info: DomainErrorInfo, result: ToolResult, alarm_id: str, sent: int
    ) -> None:
        super().__init__(tool, info, result)
        self.alarm_id = alarm_id
        self.sent_revision = sent
        self.current_revision = info.current_revision
        current = (
            "a newer revision"
            if self.current_revision is None
            else (f"revision {self.current_revision}")
        )
        # The message is what a user reads: it names the revision to read again.
        self.args = (
            f"Alarm {alarm_id} was changed elsewhere: the clock holds {current}, "
            f"this change was based on revision {sent}. Nothing was overwritten; "
            "read the alarm again and retry.",
        )


class RobineWakeApi:
    """The clock's tools as typed calls. Raises McpError subclasses (and RobineDomainError).

    Replies are read tolerantly (model.Reading): what does not fit the model degrades that value
    and is logged once per kind. Times come out in the clock's zone (get_state's
    settings.timezone), else in `default_tz()` (Home Assistant's).
    """

    def __init__(
        self,
        client: McpClient,
        default_tz: Callable[[], tzinfo] = dt_util.get_default_time_zone,
    ) -> None:
        self.client = client
        self._default_tz = default_tz
        self.clock_tz: tzinfo | None = None
        self._zone_name: str | None = None
        self._reported: set[str] = set()

    @property
    def tz(self) -> tzinfo:
        """The zone times are shown in: the clock's, else Home Assistant's."""
        return self.clock_tz or self._default_tz()

    async def _call(self, tool: str, arguments: Mapping[str, Any], *, write: bool) -> ToolResult:
        result = await self.client.call_tool(tool, arguments, kind="write" if write else "read")
        if result.is_error:
            info = model.error_of_result(result.structured) or DomainErrorInfo(
                code="unknown", message=result.text or f"{tool} failed"
            )
            if info.code == ErrorCode.REVISION_CONFLICT:
                raise RevisionConflict(
                    tool,
                    info,
                    result,
                    str(arguments.get(model.F_ID, "")),
                    int(arguments.get(model.F_REVISION, 0)),
                )
            raise RobineDomainError(tool, info, result)
        return result

    async def _parsed[T](
        self,
        tool: str,
        arguments: Mapping[str, Any],
        parse: Callable[[Reading, Any], T],
        *,
        write: bool = False,
    ) -> T:
        result = await self._call(tool, arguments, write=write)
        reading = Reading(self.tz)
        parsed = parse(reading, result.structured if result.structured is not None else result.data)
        self._report(tool, reading)
        return parsed

    def _report(self, tool: str, reading: Reading) -> None:
        """Log each kind of deviation once: a clock repeats it on every poll."""
        for problem in reading.problems:
            if problem not in self._reported:
                self._reported.add(problem)
                _LOGGER.warning(
                    "The clock's %s reply does not fit the model this integration assumes "
                    "(%s); that value shows as unknown",
                    tool,
                    problem,
                )

    async def _follow_zone(self, name: str | None) -> None:
        """Show times in the clock's zone from now on (a zone file is read off the loop)."""
        if name == self._zone_name:
            return
        self._zone_name = name
        zone = None
        if name is not None:
            try:
                zone = await dt_util.async_get_time_zone(name)
            except (ValueError, OSError):
                # Free text: not a well-formed key, a tzdata directory ("Europe"), a name
                # longer than a file name. Times carry offsets, so only this value degrades.
                zone = None
            if zone is None:
                reading = Reading(self.tz)
                reading.problem("settings", "timezone is not a known IANA time zone")
                self._report(model.TOOL_GET_STATE, reading)
        self.clock_tz = zone

    async def identity(self) -> DeviceIdentity | None:
        """The clock's identity if it names one: get_state.device, else serverInfo.device."""
        state = await self.get_state()
        return state.device or model.identity_from_server_info(self.client.server_info)

    async def get_state(self) -> DeviceState:
        """Health, settings, alarm summaries, the active session and recent ones."""
        result = await self._call(model.TOOL_GET_STATE, {}, write=False)
        data = result.structured if result.structured is not None else result.data
        await self._follow_zone(model.timezone_of_state(data))
        reading = Reading(self.tz)
        state = model.parse_state(reading, data)
        self._report(model.TOOL_GET_STATE, reading)
        return state

    async def list_alarms(self) -> AlarmList | None:
        """Every alarm with its details and next five occurrences (None: no readable list)."""
        return await self._parsed(model.TOOL_LIST_ALARMS, {}, model.parse_alarm_list)

    async def preview_alarm(self, fields: Mapping[str, Any]) -> Preview:
        """Validate an alarm definition without storing it."""
        return await self._parsed(
            model.TOOL_PREVIEW_ALARM, model.alarm_arguments(fields), model.parse_preview
        )

    async def create_alarm(self, fields: Mapping[str, Any]) -> Alarm | None:
        """Store a new alarm; returns it with revision 1 (None: stored, echo unreadable)."""
        return await self._parsed(
            model.TOOL_CREATE_ALARM,
            model.alarm_arguments(fields),
            model.parse_alarm_result,
            write=True,
        )

    async def update_alarm(
        self, alarm_id: str, revision: int, changes: Mapping[str, Any]
    ) -> Alarm | None:
        """Change fields of an alarm the caller saw at `revision` (RevisionConflict if stale)."""
        if not changes:
            raise ValueError("nothing to change")
        arguments = {
            model.F_ID: alarm_id,
            model.F_REVISION: revision,
            **model.alarm_arguments(changes),
        }
        return await self._parsed(
            model.TOOL_UPDATE_ALARM, arguments, model.parse_alarm_result, write=True
        )

    async def delete_alarm(self, alarm_id: str, revision: int) -> None:
        """Remove an alarm the caller saw at `revision`."""
        await self._call(
            model.TOOL_DELETE_ALARM,
            {model.F_ID: alarm_id, model.F_REVISION: revision},
            write=True,
        )

    async def trigger_alarm(self, alarm_id: str) -> Session | None:
        """Ring an alarm now."""
        return await self._parsed(
            model.TOOL_TRIGGER_ALARM,
            {model.F_ID: alarm_id},
            model.parse_session_result,
            write=True,
        )

    async def snooze(self) -> Session | None:
        """Snooze the ringing session."""
        return await self._parsed(
            model.TOOL_SNOOZE_SESSION, {}, model.parse_session_result, write=True
        )

    async def dismiss(self) -> Session | None:
        """Dismiss the active session (needs smartphone dismissal on the clock)."""
        return await self._parsed(
            model.TOOL_DISMISS_SESSION, {}, model.parse_session_result, write=True
        )
