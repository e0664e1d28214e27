"""The Robine Wake backend runtime: client, coordinator, entities and gateway hooks."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import asdict
from datetime import datetime
from typing import Any, ClassVar, Self

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.util import dt as dt_util
from yarl import URL

from ...core.const import DOMAIN
from ...core.localtime import localize_result
from ...core.settings import backend_answer_cap
from ...framework.base import (
    BackendHealth,
    BackendRuntime,
    CallEffect,
    EntityChange,
    McpGatewayConfigEntry,
    Shown,
    ToolClass,
    ToolTier,
)
from ...framework.entity import EntitySpec
from ...framework.publisher import EntityPublisher
from ...mcp.client import BasicAuth, BearerAuth, McpAuth, McpClient, ToolResult
from ...mcp.errors import McpRateLimitError
from . import model
from .api import RevisionConflict, RobineWakeApi
from .const import (
    CONF_AUTH_SCHEME,
    CONF_PASSWORD,
    CONF_SCAN_INTERVAL,
    CONF_URL,
    DEFAULT_SCAN_INTERVAL,
    DEVICE_KEY,
    KIND,
    PLATFORMS,
    is_address_title,
    password_issue_id,
    unnamed_title,
)
from .coordinator import RobineWakeCoordinator
from .entities import SESSION_EVENT, SESSION_STATE, alarm_key, derive_specs
from .model import Alarm, AuthScheme, Preview, Session
from .tools import ALARM_TOOLS, classify, filter_alarms


def credentials(secret: str | None, scheme: AuthScheme | None) -> McpAuth | None:
    """The admin secret sent the way the clock asked: Basic (user admin) or as a Bearer token."""
    if not secret:
        return None
    if scheme is AuthScheme.BEARER:
        return BearerAuth(secret)
    return BasicAuth(model.ADMIN_USER, secret)


def entry_scheme(data: Mapping[str, Any]) -> AuthScheme:
    """The scheme an entry's secret is sent with (entries from before it was stored: Basic)."""
    try:
        return AuthScheme(data.get(CONF_AUTH_SCHEME, AuthScheme.BASIC))
    except ValueError:
        return AuthScheme.BASIC


def make_client(
    hass: HomeAssistant,
    url: str,
    password: str | None,
    scheme: AuthScheme | None = None,
    *,
    timeout: float | None = None,
) -> McpClient:
    """An MCP client for a clock, on HA's shared HTTP session."""
    return McpClient(
        async_get_clientsession(hass),
        url,
        auth=credentials(password, scheme),
        timeout=timeout or model.REQUEST_TIMEOUT,
        prefer_modern=model.PREFER_MODERN_PROTOCOL,
        # The clock applies one write at a time anyway; queue ours instead of piling them up.
        limits={"write": 1},
        max_response_bytes=backend_answer_cap(hass),
    )


class RobineWakeRuntime(BackendRuntime):
    """One Robine Wake alarm clock."""

    kind = KIND
    platforms: ClassVar[tuple[Platform, ...]] = PLATFORMS
    repeats_core: ClassVar[frozenset[str]] = frozenset({model.TOOL_GET_STATE})

    def __init__(
        self, hass: HomeAssistant, entry: McpGatewayConfigEntry, client: McpClient
    ) -> None:
        super().__init__(hass, entry, client)
        self.api = RobineWakeApi(client)
        interval = float(entry.options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL))
        self.coordinator = RobineWakeCoordinator(hass, entry, self.api, interval)
        self.publisher = EntityPublisher(hass, self, lambda: derive_specs(self))
        self._tools: list[dict[str, Any]] | None = None

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: McpGatewayConfigEntry) -> Self:
        """Client with the admin password when the entry has one."""
        data = entry.data
        client = make_client(hass, data[CONF_URL], data.get(CONF_PASSWORD), entry_scheme(data))
        return cls(hass, entry, client)

    @property
    def configuration_url(self) -> str:
        """The clock's own web interface (the listener that also serves /mcp)."""
        return str(URL(self.entry.data[CONF_URL]).with_path("/").with_query(None))

    async def async_setup(self) -> None:
        """First poll (auth failures start reauth), then follow updates with the publisher."""
        self._retitle()
        await self.coordinator.async_config_entry_first_refresh()
        self.entry.async_on_unload(
            self.coordinator.async_add_listener(self.publisher.async_refresh)
        )

    def _retitle(self) -> None:
        """An entry titled after its address by an earlier version ("Robine Wake (127.0.0.1)")
        takes the readable title a new one gets; its unique ids and entity ids stay."""
        entry = self.entry
        if not is_address_title(entry.title):
            return
        others = (
            other.title
            for other in self.hass.config_entries.async_entries(DOMAIN)
            if other.entry_id != entry.entry_id
        )
        self.hass.config_entries.async_update_entry(entry, title=unnamed_title(others))

    async def async_shutdown(self) -> None:
        """Close the client; a repair about the password belongs to this entry's lifetime."""
        ir.async_delete_issue(self.hass, DOMAIN, password_issue_id(self.entry))
        await super().async_shutdown()

    # --- actions (entities and HA actions) ----------------------------------------------------

    async def _guard[T](self, call: Awaitable[T]) -> T:
        """A 429 on an action also slows the polls down."""
        try:
            return await call
        except McpRateLimitError as err:
            self.coordinator.note_rate_limited(err.retry_after)
            raise

    async def async_create_alarm(self, fields: Mapping[str, Any]) -> Alarm | None:
        """Create an alarm and show it at once."""
        alarm = await self._guard(self.api.create_alarm(fields))
        await self.coordinator.async_apply_alarm(alarm)
        return alarm

    async def async_update_alarm(
        self, alarm_id: str, revision: int, changes: Mapping[str, Any]
    ) -> Alarm | None:
        """Change an alarm seen at `revision`; on a conflict read the clock again, then raise."""
        try:
            alarm = await self._guard(self.api.update_alarm(alarm_id, revision, changes))
        except RevisionConflict:
            await self.coordinator.async_refresh()
            raise
        await self.coordinator.async_apply_alarm(alarm)
        return alarm

    async def async_delete_alarm(self, alarm_id: str, revision: int) -> None:
        """Delete an alarm seen at `revision`; on a conflict read the clock again, then raise."""
        try:
            await self._guard(self.api.delete_alarm(alarm_id, revision))
        except RevisionConflict:
            await self.coordinator.async_refresh()
            raise
        await self.coordinator.async_apply_alarm_deleted(alarm_id)

    async def async_trigger_alarm(self, alarm_id: str) -> Session | None:
        """Ring an alarm now."""
        session = await self._guard(self.api.trigger_alarm(alarm_id))
        await self.coordinator.async_apply_session(session)
        return session

    async def async_preview_alarm(self, fields: Mapping[str, Any]) -> Preview:
        """Validate an alarm without storing it."""
        return await self._guard(self.api.preview_alarm(fields))

    async def async_snooze(self) -> Session | None:
        """Snooze the ringing session."""
        session = await self._guard(self.api.snooze())
        await self.coordinator.async_apply_session(session)
        return session

    async def async_dismiss(self) -> Session | None:
        """Dismiss the active session."""
        session = await self._guard(self.api.dismiss())
        await self.coordinator.async_apply_session(session)
        return session

    # --- gateway hooks ------------------------------------------------------------------------

    async def async_list_tools(self) -> list[dict[str, Any]]:
        """The clock's tools; its list is stable (listChanged false), so read it once."""
        if self._tools is None:
            self._tools = await self._guard(self.client.list_tools())
        return self._tools

    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Pass a call through; after a write, poll so HA shows its effect."""
        read = classify({"name": name}).tier is ToolTier.READ
        result = await self._guard(
            self.client.call_tool(name, arguments, kind="read" if read else "write")
        )
        if not read and not result.is_error:
            await self.coordinator.async_request_refresh()
        # The model reads every time in Home Assistant's zone, as get_state and the other
        # backends give them (the clock's own zone stays for its entities and actions).
        return localize_result(result)

    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        """From the classification table (tools.py)."""
        return classify(tool)

    def device_keys_in_call(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        """Every tool but the sound list reads or acts on the one clock: its entities."""
        return [] if name == model.TOOL_LIST_SOUNDS else [DEVICE_KEY]

    def entity_keys_in_call(
        self, name: str, arguments: Mapping[str, Any]
    ) -> list[tuple[Platform, str]]:
        """The alarm a call names (`id`, or an action's `alarm_id`): its switch, and its time
        entity when an update sets the ring time (so a caller needs that entity too)."""
        alarm_id = arguments.get(model.F_ID, arguments.get("alarm_id"))
        if name not in ALARM_TOOLS or alarm_id is None:
            return []
        keys = [(Platform.SWITCH, alarm_key(str(alarm_id), "enabled"))]
        if name == model.TOOL_UPDATE_ALARM and model.F_TIME in arguments:
            keys.append((Platform.TIME, alarm_key(str(alarm_id), "time")))
        return keys

    def call_effect(self, name: str, arguments: Mapping[str, Any]) -> CallEffect | None:
        """An alarm tool changes that alarm (its switch; an update's time, its time entity); the
        clock's other tools change the clock's settings and alarms, none of them a lock, an
        alarm panel or a door."""
        return CallEffect(
            changes=tuple(
                EntityChange(platform, key)
                for platform, key in self.entity_keys_in_call(name, arguments)
            )
        )

    def call_subject(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """A snooze or dismiss acts on the ringing session: "alarm <its label>"."""
        if name not in (model.TOOL_SNOOZE_SESSION, model.TOOL_DISMISS_SESSION):
            return None
        data = self.coordinator.latest
        session = data.state.active_session if data is not None else None
        if session is None or session.alarm_id is None:
            return None
        alarm = data.alarms.get(session.alarm_id) if data is not None else None
        return f"alarm {alarm.label if alarm is not None else session.alarm_id}"

    def history_call(self, spec: EntitySpec, start: datetime) -> tuple[str, dict[str, Any]] | None:
        """get_state, whose recent wake sessions are the clock's own record of them (50-002
        "Tools"): for the session's state and its events; the clock keeps no other past."""
        if spec.description.key not in (SESSION_STATE.key, SESSION_EVENT.key):
            return None
        return model.TOOL_GET_STATE, {}

    def history_events(self, result: ToolResult) -> list[tuple[datetime, str]] | None:
        """The active and recent sessions as when each began ringing and ended (and why);
        which alarm rang is left out, as the alarms this caller may see are not known here."""
        data = result.data if isinstance(result.data, dict) else {}
        state = model.parse_state(model.Reading(dt_util.get_default_time_zone()), data)
        if "recent_sessions" not in data or state.recent_sessions is None:
            raise ValueError("the clock's answer holds no readable sessions")
        active = () if state.active_session is None else (state.active_session,)
        events: list[tuple[datetime, str]] = []
        for session in (*active, *state.recent_sessions):
            if session.started_at is not None:
                events.append((session.started_at, model.SessionState.RINGING.value))
            if session.ended_at is not None:
                reason = f" ({session.end_reason})" if session.end_reason else ""
                events.append((session.ended_at, f"{model.SessionState.ENDED.value}{reason}"))
        return events

    def lists_devices(self, name: str) -> bool:
        """get_state and list_alarms list alarms: filtered per caller."""
        return name in (model.TOOL_GET_STATE, model.TOOL_LIST_ALARMS)

    def filter_listing(self, name: str, data: Any, shown: Shown) -> tuple[Any, int]:
        """The alarms (and their sessions) whose entities `shown` admits."""
        return filter_alarms(data, shown)

    def health(self) -> BackendHealth:
        """Reachability, protocol and the clock's own health."""
        data = self.coordinator.latest
        details: dict[str, Any] = {
            "poll_interval_s": self.coordinator.interval.total_seconds(),
            "rate_limited_until": (
                until.isoformat() if (until := self.coordinator.rate_limited_until) else None
            ),
        }
        if data is not None:
            details["device_status"] = data.state.health.status
            details["session"] = data.session_state
            details["alarms"] = len(data.alarms)
        return BackendHealth(
            available=self.coordinator.last_update_success,
            protocol_version=self.client.protocol_version,
            latency_ms=self.coordinator.latency_ms,
            details=details,
        )

    def diagnostics(self) -> dict[str, Any]:
        """State as last read (alarms, sessions, health), traffic counters; no credentials."""
        data = self.coordinator.latest
        result: dict[str, Any] = {
            "server_info": self.client.server_info,
            "protocol_version": self.client.protocol_version,
            "requests": self.client.stats.requests,
            "last_update_success": self.coordinator.last_update_success,
            "poll_interval_s": self.coordinator.interval.total_seconds(),
            "has_password": bool(self.entry.data.get(CONF_PASSWORD)),
        }
        if data is not None:
            state = data.state
            result.update(
                {
                    "device": None if state.device is None else asdict(state.device),
                    "health": asdict(state.health),
                    "settings": asdict(state.settings),
                    "alarms": [model.alarm_as_dict(alarm) for alarm in data.alarms.values()],
                    "session_state": data.session_state,
                    "recent_events": [
                        {"type": event.event_type, **event.attributes} for event in data.events
                    ],
                }
            )
        return result
