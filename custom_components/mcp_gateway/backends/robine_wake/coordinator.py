"""Polls the clock and turns state differences into session events."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
import logging
from typing import TYPE_CHECKING, Any

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.event import async_track_point_in_utc_time
from homeassistant.helpers.update_coordinator import UpdateFailed
from homeassistant.util import dt as dt_util

from ...core.const import DOMAIN
from ...framework.coordinator import BackendCoordinator
from ...mcp.errors import McpAuthError, McpError, McpRateLimitError
from ...platforms.event import EventOccurrence
from .api import RobineWakeApi
from .const import (
    CONF_PASSWORD,
    EVENT_DISMISSED,
    EVENT_ENDED,
    RATE_LIMIT_FALLBACK_WAIT,
    SESSION_IDLE,
    SESSION_SCAN_INTERVAL,
    is_address_uid,
    password_issue_id,
)
from .model import DISMISS_REASONS, Alarm, AlarmList, DeviceState, Session, SessionState

if TYPE_CHECKING:
    from ...framework.base import McpGatewayConfigEntry

_LOGGER = logging.getLogger(__name__)

# Enough for every session of a busy morning; older occurrences have long been fired.
EVENT_LOG_SIZE = 50
# The clock says when it will ring next (an alarm, the end of a snooze): one extra read just
# after that instant shows the ring at once instead of up to a poll interval later. The margin
# covers the device's own evaluation and small clock differences; the regular poll stays the
# safety net when the clocks disagree more.
DUE_CHECK_MARGIN = timedelta(seconds=1)
# A due moment the clock has not acted on yet (its ring still ahead of it in the reply) is looked
# at again this soon, this many times, before the regular poll alone follows it.
DUE_RETRY = timedelta(seconds=1)
DUE_RETRIES = 5


@dataclass(frozen=True, slots=True)
class RobineWakeData:
    """One poll: the device state, alarms completed with details, and recent session events.

    `unread_alarm_ids`: alarms known from earlier polls while this one had no readable alarm
    list; their entities stay (unavailable) rather than being removed.
    """

    state: DeviceState
    alarms: dict[str, Alarm]
    events: tuple[EventOccurrence, ...]
    unread_alarm_ids: frozenset[str] = frozenset()

    @property
    def session_state(self) -> str | None:
        """idle, ringing or snoozed; None when the clock's session cannot be read."""
        if not self.state.session_known:
            return None
        session = self.state.active_session
        if session is None:
            return SESSION_IDLE
        if session.state in (SessionState.RINGING, SessionState.SNOOZED):
            return str(session.state)
        return None  # a state we do not know (or an "active" ended one)

    @property
    def next_alarm(self) -> Alarm | None:
        """The alarm that rings next, of all enabled ones."""
        upcoming = [
            (alarm.next_occurrence, alarm)
            for alarm in self.alarms.values()
            if alarm.next_occurrence is not None
        ]
        return min(upcoming, key=lambda item: item[0])[1] if upcoming else None


class RobineWakeCoordinator(BackendCoordinator[RobineWakeData]):
    """get_state every poll; list_alarms only when an alarm changed or its occurrences ran out."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        api: RobineWakeApi,
        interval: float,
    ) -> None:
        super().__init__(
            hass,
            _LOGGER,
            entry,
            name=f"Robine Wake {entry.title}",
            update_interval=timedelta(seconds=interval),
        )
        self.api = api
        self.interval = timedelta(seconds=interval)
        self.rate_limited_until: datetime | None = None
        self._details: dict[str, Alarm] = {}
        self._alarm_ids: frozenset[str] = frozenset()
        self._events: deque[EventOccurrence] = deque(maxlen=EVENT_LOG_SIZE)
        self._seen_phases: set[str] = set()
        self._reported_ends: set[str] = set()
        self._primed = False
        self._unsub_due: CALLBACK_TYPE | None = None
        self._polling = False
        # A due check that fell during a poll: run right after it, never dropped.
        self._due_deferred = False
        self._overdue_checks = 0
        # Alarms as our writes left them (the device's answer, with its revision), and alarms
        # we deleted: a poll sent before the write still reads them as they were.
        self._written: dict[str, Alarm] = {}
        self._deleted: set[str] = set()

    @property
    def latest(self) -> RobineWakeData | None:
        """The last successful poll, or None before the first one."""
        # DataUpdateCoordinator types `data` as always set, but it is None until the first poll.
        data: RobineWakeData | None = self.data
        return data

    async def _async_update_data(self) -> RobineWakeData:
        self._polling = True
        try:
            return await super()._async_update_data()
        finally:
            self._polling = False
            if self._due_deferred:
                # The poll under way may have started before the moment it was due for.
                self._due_deferred = False
                self._run_due_check()

    def _on_auth_failed(self, err: McpAuthError) -> None:
        self._raise_password_issue()

    async def _async_fetch(self) -> RobineWakeData:
        try:
            state = await self.api.get_state()
            summaries = state.alarms
            if summaries is None or not state.alarms_complete or self._details_stale(summaries):
                listed = await self._list_alarms()
                if listed is not None:
                    self._details = listed.alarms
                    if summaries is None:
                        # A get_state without a readable list: list_alarms' stands in.
                        state = replace(
                            state, alarms=listed.alarms, alarms_complete=listed.complete
                        )
                    elif not state.alarms_complete:
                        # Entries get_state sent unreadably: list_alarms' stand in for them.
                        state = replace(
                            state,
                            alarms={**listed.alarms, **summaries},
                            alarms_complete=listed.complete,
                        )
        except McpRateLimitError as err:
            wait = self.note_rate_limited(err.retry_after)
            raise UpdateFailed(
                translation_domain=DOMAIN,
                translation_key="robine_wake_rate_limited",
                translation_placeholders={"wait": f"{wait:.0f}"},
            ) from err
        expected = self.config_entry.unique_id
        if (
            state.device is not None
            and expected
            and not is_address_uid(expected)
            and state.device.id != expected
        ):
            # The address now leads to another clock (a new DHCP lease): showing its alarms
            # under this entry would be wrong. Reconfigure fixes the address.
            raise UpdateFailed(
                translation_domain=DOMAIN,
                translation_key="robine_wake_other_clock",
                translation_placeholders={"found": state.device.id},
            )
        if self.rate_limited_until is not None:
            self.rate_limited_until = None
        ir.async_delete_issue(self.hass, DOMAIN, password_issue_id(self.config_entry))
        return self._build(self._not_older_than_writes(state))

    def _not_older_than_writes(self, state: DeviceState) -> DeviceState:
        """The polled state without what our writes already replaced.

        An alarm whose polled revision is older than the one a write answered with was read
        before the write (one write would otherwise change the entity three times); a deleted
        alarm a poll still lists was listed before the delete. Once a poll shows the written
        revision (or a newer one), or no longer lists the deleted alarm, it is the device's.
        """
        if state.alarms is None or not (self._written or self._deleted):
            return state
        alarms = dict(state.alarms)
        for alarm_id, written in list(self._written.items()):
            polled = alarms.get(alarm_id)
            if (
                polled is not None
                and polled.revision is not None
                and written.revision is not None
                and polled.revision < written.revision
            ):
                alarms[alarm_id] = written
            else:
                del self._written[alarm_id]
        for alarm_id in list(self._deleted):
            if alarms.pop(alarm_id, None) is None:
                self._deleted.discard(alarm_id)
        return replace(state, alarms=alarms)

    async def _list_alarms(self) -> AlarmList | None:
        """list_alarms, or None when it failed: it feeds only the alarms' details.

        get_state was just read, so the clock answers; this read failing (a tool error, a
        JSON-RPC error, a malformed or late answer) leaves the alarm entities to get_state's
        list, or unavailable when that was unreadable too. A refused credential or the rate
        limit concerns every read, so those still fail the poll.
        """
        try:
            return await self.api.list_alarms()
        except (McpAuthError, McpRateLimitError):
            raise
        except McpError as err:
            _LOGGER.debug("list_alarms failed; the alarms keep what get_state says: %s", err)
            return None

    def _details_stale(self, summaries: dict[str, Alarm]) -> bool:
        """Whether list_alarms must be read again (one extra request, rarely)."""
        if summaries.keys() != self._details.keys():
            return True
        now = dt_util.utcnow()
        for alarm_id, summary in summaries.items():
            detail = self._details[alarm_id]
            if detail.revision != summary.revision:
                return True
            if detail.next_occurrences and detail.next_occurrences[0] <= now:
                return True  # a ring time passed: the list of five moved on
        return False

    def note_rate_limited(self, retry_after: float | None) -> float:
        """Poll no sooner than the device allows; never faster than the configured interval."""
        wait = max(retry_after or RATE_LIMIT_FALLBACK_WAIT, self.interval.total_seconds())
        self.rate_limited_until = dt_util.utcnow() + timedelta(seconds=wait)
        self.update_interval = timedelta(seconds=wait)
        _LOGGER.debug("Rate limited by the clock; polling again in %.0f s", wait)
        return wait

    def _raise_password_issue(self) -> None:
        """The clock wants a password this entry does not have: tell the user how to fix it."""
        if self.config_entry.data.get(CONF_PASSWORD):
            return  # a changed password: the reauth flow alone says it
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            password_issue_id(self.config_entry),
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key="robine_wake_password_required",
            translation_placeholders={"title": self.config_entry.title},
        )

    # --- building data and events ------------------------------------------------------------

    def _build(self, state: DeviceState) -> RobineWakeData:
        alarms = {}
        for alarm_id, summary in (state.alarms or {}).items():
            detail = self._details.get(alarm_id)
            if detail is not None and detail.revision == summary.revision:
                alarms[alarm_id] = summary.with_details_of(detail)
            else:
                alarms[alarm_id] = summary
        unread: frozenset[str] = frozenset()
        if state.alarms_complete:
            self._alarm_ids = frozenset(alarms)
        else:
            # Alarms known before that no list could be read for: kept, unavailable.
            unread = self._alarm_ids - alarms.keys()
        self._derive_events(state)
        self._schedule_due_check(state)
        self._pace(state)
        return RobineWakeData(
            state=state, alarms=alarms, events=tuple(self._events), unread_alarm_ids=unread
        )

    def _pace(self, state: DeviceState) -> None:
        """Poll faster while a session rings or snoozes; the clock's Retry-After always wins."""
        if self.rate_limited_until is not None:
            return
        session = state.active_session if state.session_known else None
        waking = session is not None and session.state in (
            SessionState.RINGING,
            SessionState.SNOOZED,
        )
        fast = timedelta(seconds=SESSION_SCAN_INTERVAL)
        self.update_interval = min(self.interval, fast) if waking else self.interval

    def _schedule_due_check(self, state: DeviceState) -> None:
        """Read the clock again just after the next moment it will ring."""
        if self._unsub_due is not None:
            self._unsub_due()
            self._unsub_due = None
        moments = [a.next_occurrence for a in (state.alarms or {}).values() if a.next_occurrence]
        session = state.active_session
        if session is not None and session.snooze_until is not None:
            moments.append(session.snooze_until)
        if not moments or self._shutdown_requested:
            return
        now = dt_util.utcnow()
        upcoming = [moment for moment in moments if moment + DUE_CHECK_MARGIN > now]
        if len(upcoming) < len(moments) and self._overdue_checks < DUE_RETRIES:
            # The clock still announces a moment that has passed: it has not rung yet.
            self._overdue_checks += 1
            when = now + DUE_RETRY
        elif upcoming:
            if len(upcoming) == len(moments):
                self._overdue_checks = 0
            when = min(upcoming) + DUE_CHECK_MARGIN
        else:
            return  # the regular poll follows what the clock keeps announcing
        self._unsub_due = async_track_point_in_utc_time(self.hass, self._due_check, when)

    @callback
    def _due_check(self, _now: datetime) -> None:
        self._unsub_due = None
        self._run_due_check()

    @callback
    def _run_due_check(self) -> None:
        if self._shutdown_requested:
            return
        if self._polling:
            self._due_deferred = True  # read again as soon as this poll is done
            return
        if self.rate_limited_until is not None and dt_util.utcnow() < self.rate_limited_until:
            # The clock asked for quiet: its Retry-After wins, then the check runs.
            if self._unsub_due is not None:
                self._unsub_due()
            self._unsub_due = async_track_point_in_utc_time(
                self.hass, self._due_check, self.rate_limited_until
            )
            return
        self.config_entry.async_create_background_task(
            self.hass, self.async_refresh(), "robine_wake ring check"
        )

    async def async_shutdown(self) -> None:
        """Also cancel the pending ring check."""
        if self._unsub_due is not None:
            self._unsub_due()
            self._unsub_due = None
        await super().async_shutdown()

    def _derive_events(self, state: DeviceState) -> None:
        """Append what changed since the last poll to the event log.

        Ended sessions (from recent_sessions) are always reported, even if they began and ended
        between two polls; ringing/snoozed phases are reported when a poll sees them. On the
        first poll everything is only recorded: history from before setup is never replayed.
        """
        fire = self._primed
        self._primed = True
        if state.recent_sessions is not None:  # unreadable: nothing to learn, nothing to forget
            self._derive_ends(state, state.recent_sessions, fire=fire)
        if not state.session_known:
            return  # a session the clock sent but we cannot read: wait for a readable one
        active = state.active_session
        if active is None:
            self._seen_phases.clear()
            return
        if active.state not in (SessionState.RINGING, SessionState.SNOOZED):
            return  # no event for a state we do not know
        # A phase is the state plus the snooze count: ringing:0, snoozed:1, ringing:1, ...
        phase = f"{active.id}:{active.state}:{active.snooze_count}"
        self._seen_phases = {p for p in self._seen_phases if p.startswith(f"{active.id}:")}
        if phase in self._seen_phases:
            return
        self._seen_phases.add(phase)
        if fire:
            self._events.append(
                EventOccurrence(phase, str(active.state), _attributes(active, state))
            )

    def _derive_ends(self, state: DeviceState, recent: tuple[Session, ...], *, fire: bool) -> None:
        """Report every ended session once (dismissed first when a person ended it)."""
        for session in reversed(recent):  # the device lists newest first
            if session.id in self._reported_ends:
                continue
            self._reported_ends.add(session.id)
            if not fire:
                continue
            attributes = _attributes(session, state)
            if session.end_reason in DISMISS_REASONS:
                self._events.append(
                    EventOccurrence(f"{session.id}:dismissed", EVENT_DISMISSED, attributes)
                )
            self._events.append(EventOccurrence(f"{session.id}:ended", EVENT_ENDED, attributes))
        # The device forgets old sessions; so can we.
        self._reported_ends &= {session.id for session in recent}

    # --- optimistic updates after our own writes ---------------------------------------------

    async def async_apply_alarm(self, alarm: Alarm | None) -> None:
        """A write returned the alarm's new revision: show it at once (else read the clock)."""
        state = self.data.state
        if alarm is None or not state.alarms_complete or state.alarms is None:
            await self.async_request_refresh()
            return
        if alarm.detailed:
            self._details[alarm.id] = alarm
        if alarm.revision is not None:
            self._written[alarm.id] = alarm
        self._deleted.discard(alarm.id)
        self.async_set_updated_data(
            self._build(replace(state, alarms={**state.alarms, alarm.id: alarm}))
        )

    async def async_apply_alarm_deleted(self, alarm_id: str) -> None:
        """The alarm is gone from the device."""
        self._details.pop(alarm_id, None)
        self._written.pop(alarm_id, None)
        self._deleted.add(alarm_id)
        state = self.data.state
        if not state.alarms_complete or state.alarms is None:
            await self.async_request_refresh()
            return
        alarms = {key: value for key, value in state.alarms.items() if key != alarm_id}
        self.async_set_updated_data(self._build(replace(state, alarms=alarms)))

    async def async_apply_session(self, session: Session | None) -> None:
        """A session tool returned the session as it is now (else read the clock)."""
        if session is None or session.state is None:
            await self.async_request_refresh()
            return
        state = self.data.state
        if session.state is SessionState.ENDED:
            recent = state.recent_sessions
            if recent is not None:
                recent = (session, *(s for s in recent if s.id != session.id))
            state = replace(state, active_session=None, recent_sessions=recent, session_known=True)
        else:
            state = replace(state, active_session=session, session_known=True)
        self.async_set_updated_data(self._build(state))


def _attributes(session: Session, state: DeviceState) -> dict[str, Any]:
    """What an automation may want to know about a session event."""
    alarm = (state.alarms or {}).get(session.alarm_id) if session.alarm_id else None
    attributes: dict[str, Any] = {
        "session_id": session.id,
        "alarm_id": session.alarm_id,
        "alarm_label": alarm.label if alarm else None,
        "snooze_count": session.snooze_count,
    }
    if session.snooze_until is not None:
        attributes["snooze_until"] = session.snooze_until.isoformat()
    if session.end_reason is not None:
        attributes["end_reason"] = session.end_reason
    return attributes
