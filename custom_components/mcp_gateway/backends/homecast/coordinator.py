"""Polls Homecast (get_state plus the automation lists of both engines, in one update) and
applies the live-update socket's changes: push hands them over, only this writes them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
import logging
from typing import TYPE_CHECKING, Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from ...core.const import DOMAIN
from ...framework.coordinator import BackendCoordinator
from ...mcp.errors import McpAuthError, McpRpcError, McpToolError
from .api import Accessory, ButtonPress, HomecastApi, HomecastState
from .const import DEFAULT_SCAN_INTERVAL
from .scenes import SceneRenameFollower
from .vocabulary import EVENT_KEY, device_key

if TYPE_CHECKING:
    from ...framework.base import McpGatewayConfigEntry

_LOGGER = logging.getLogger(__name__)

# HomeKit automations by home (None: keep the last ones) and the view-only home keys.
type _Automations = tuple[dict[str, list[dict[str, Any]]] | None, set[str]]

# Presses remembered per doorbell/button (the event entity fires those it has not seen).
_EVENT_MEMORY = 5
# How long a written value may still read as it was before the write: the relay answers
# set_state before HomeKit applied it (src/server/homekit-write.ts executeHomeKitWrite), and a
# lock's current state follows its motor. After this, a read showing the old value wins.
REPORT_WINDOW: Final = timedelta(seconds=10)

# (home key, accessory uid, value key) -> (the written value, the value before, until when)
type _Expected = dict[tuple[str, str, str], tuple[Any, Any, datetime]]


@dataclass(frozen=True, slots=True)
class ValueChange:
    """One value the live-update socket reported, in get_state's words (push_changes.py).

    Numbered by the coordinator as it applies them, which is the order they arrived in: the
    socket hands each message's changes over as soon as it has read it.
    """

    home: str  # the home's UUID, lower case (HomecastState.homes' key)
    uid: str  # the accessory's uid within the home
    key: str  # the value key get_state shows it under
    value: Any
    # A stateless switch's press: an event each time, even when the value repeats.
    press: bool = False


@dataclass(frozen=True, slots=True)
class _Pushed:
    """A pushed value, laid again over a poll that was already under way when it came."""

    seq: int
    value: Any


class HomecastCoordinator(BackendCoordinator[HomecastState]):
    """One poll = get_state (all homes in one call) + get_automations + get_hc_automations."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        api: HomecastApi,
        homes: set[str] | None,
        interval: float = DEFAULT_SCAN_INTERVAL,
    ) -> None:
        super().__init__(
            hass,
            _LOGGER,
            entry,
            name=entry.title,
            update_interval=timedelta(seconds=interval),
        )
        self.api = api
        self.homes = homes
        self.polls = 0
        self.automations_supported = True
        self.hc_automations_supported = True
        self.scene_renames = SceneRenameFollower()
        self._changed: frozenset[str] | None = None
        # Written values that reads have not shown yet (see `expect_write`).
        self._expected: _Expected = {}
        # Pushed values since the oldest poll still under way started: (home, uid, key) -> newest.
        self._pushed: dict[tuple[str, str, str], _Pushed] = {}
        self._polls_running: list[int] = []
        self._last_push = 0
        self._presses = 0

    def changed_devices(self) -> frozenset[str] | None:
        """The devices a pushed update concerns; None (every entity) after a poll."""
        return self._changed

    # -- pushes: the socket hands its changes over, the data is written here only -----------

    def apply_changes(self, changes: Iterable[ValueChange]) -> frozenset[str]:
        """Apply pushed values; tell the entities of the devices they changed, once.

        A value is kept only under a key the accessory's last read had (a characteristic
        get_state never showed is not taken from a push), so memory stays bounded whatever a
        socket sends. No poll, no new timer. Returns the device keys that changed.
        """
        data: HomecastState | None = self.data
        if data is None:
            return frozenset()
        changed: set[str] = set()
        for change in changes:
            home = data.homes.get(change.home)
            acc = home.accessories.get(change.uid) if home is not None else None
            if acc is None:
                continue
            if change.press:
                # Each message is one press, whatever the value before it.
                self._presses += 1
                press = ButtonPress(f"push:{self._presses}", change.value)
                acc.events = (*acc.events, press)[-_EVENT_MEMORY:]
                acc.values[EVENT_KEY] = change.value
            elif change.key not in acc.values:
                continue
            else:
                self._remember(change)
                if acc.values[change.key] == change.value:
                    continue
                acc.values[change.key] = change.value
            changed.add(device_key(change.home, change.uid))
        if changed:
            self._changed = frozenset(changed)
            try:
                self.async_update_listeners()
            finally:
                self._changed = None
        return frozenset(changed)

    def _remember(self, change: ValueChange) -> None:
        self._last_push += 1
        if self._polls_running:
            slot = (change.home, change.uid, change.key)
            self._pushed[slot] = _Pushed(self._last_push, change.value)

    def poll_started(self) -> int:
        """A poll begins: pushes from now on are newer than what it may read."""
        self._polls_running.append(self._last_push)
        return self._last_push

    def poll_finished(self, started: int, state: HomecastState | None) -> None:
        """Lay the pushes received while the poll ran over what it read (they are newer)."""
        if started in self._polls_running:
            self._polls_running.remove(started)
        if state is not None:
            for (home_id, uid, key), item in self._pushed.items():
                if item.seq <= started:
                    continue
                home = state.homes.get(home_id)
                acc = home.accessories.get(uid) if home is not None else None
                if acc is not None and key in acc.values:
                    acc.values[key] = item.value
        oldest = min(self._polls_running, default=None)
        self._pushed = (
            {}
            if oldest is None
            else {slot: item for slot, item in self._pushed.items() if item.seq > oldest}
        )

    # -- writes ----------------------------------------------------------------------------

    def expect_write(self, acc: Accessory, values: Mapping[str, Any]) -> None:
        """Show values a write set at once, and keep them over reads that predate it.

        A poll sent before the write (or answered before HomeKit applied it) still reads the
        old value: shown, it would undo the write until the next read (three changes for one
        write). Until a read shows anything but the old value, or REPORT_WINDOW ends, the
        written value stands. The accessory a poll put in place meanwhile gets it too.
        """
        until = dt_util.utcnow() + REPORT_WINDOW
        current = self._current(acc.home_key, acc.uid)
        for key, value in values.items():
            slot = (acc.home_key, acc.uid, key)
            before = self._expected[slot][1] if slot in self._expected else acc.values.get(key)
            self._expected[slot] = (value, before, until)
        for target in {id(acc): acc, id(current): current}.values():
            if target is not None:
                target.values.update(values)

    def _current(self, home_key: str, uid: str) -> Accessory | None:
        data: HomecastState | None = self.data
        if data is None:
            return None
        for home in data.homes.values():
            if home.key == home_key:
                return home.accessories.get(uid)
        return None

    def _hold_written(self, state: HomecastState) -> None:
        """Written values a read predating them shows as before: the written ones stay."""
        if not self._expected:
            return
        now = dt_util.utcnow()
        homes = {home.key: home for home in state.homes.values()}
        for slot, (wanted, before, until) in list(self._expected.items()):
            home_key, uid, key = slot
            home = homes.get(home_key)
            acc = home.accessories.get(uid) if home is not None else None
            value = acc.values.get(key) if acc is not None else None
            if acc is not None and value == before and value != wanted and now < until:
                acc.values[key] = wanted
            else:
                del self._expected[slot]

    async def _async_update_data(self) -> HomecastState:
        started = self.poll_started()
        state: HomecastState | None = None
        try:
            state = await super()._async_update_data()
        finally:
            # Pushes that arrived while this poll ran are newer than what it read.
            self.poll_finished(started, state)
        return state

    async def _async_fetch(self) -> HomecastState:
        # Wait for all three even when one fails, so no call is left running unobserved.
        state: HomecastState | BaseException
        automations: _Automations | BaseException
        hc_automations: dict[str, list[dict[str, Any]]] | BaseException | None
        state, automations, hc_automations = await asyncio.gather(
            self.api.async_get_state(self.homes),
            self._automations(),
            self._hc_automations(),
            return_exceptions=True,
        )
        results = (state, automations, hc_automations)
        # A refused credential wins over the other failures: it alone needs the user.
        for result in results:
            if isinstance(result, McpAuthError):
                raise result
        for result in results:
            if isinstance(result, BaseException):
                raise result
        # Narrowed for the type checker: every exception was raised above.
        assert not isinstance(state, BaseException)
        assert not isinstance(automations, BaseException)
        assert not isinstance(hc_automations, BaseException)
        self.polls += 1
        # Typed as always set by HA, but None until the first poll succeeded.
        previous: HomecastState | None = self.data
        self._report_missing_homes(state, previous)
        automations_by_home, view_only = automations
        for home in state.homes.values():
            if home.missing:
                continue
            home.view_only = home.key in view_only
            if automations_by_home is not None:
                home.automations = automations_by_home.get(home.key, [])
            elif previous is not None and (old := previous.homes.get(home.uuid)) is not None:
                home.automations = old.automations
            if hc_automations is not None:
                home.hc_automations = hc_automations.get(home.key, [])
            elif previous is not None and (old := previous.homes.get(home.uuid)) is not None:
                home.hc_automations = old.hc_automations
            self._carry_events(state, home.uuid, previous)
        self._hold_written(state)
        # Before the listeners publish the new scene keys, so a renamed scene keeps its entity.
        await self.scene_renames.async_follow(
            self.hass, self.config_entry, state, self.api.take_scene_renames()
        )
        return state

    async def _automations(self) -> _Automations:
        """HomeKit automations by home; None (keep the last ones) when listing them failed."""
        if not self.automations_supported:
            return {}, set()
        try:
            return await self.api.async_get_automations()
        except (McpToolError, McpRpcError) as err:
            # Not an outage: a busy relay, or a server without the tool.
            if _unknown_tool(err):
                self.automations_supported = False
                return {}, set()
            _LOGGER.debug("get_automations failed, automations stay as they were: %s", err)
            return None, set()

    async def _hc_automations(self) -> dict[str, list[dict[str, Any]]] | None:
        """Homecast automations by home; None (keep the last ones) when listing them failed."""
        if not self.hc_automations_supported:
            return {}
        try:
            return await self.api.async_get_hc_automations()
        except (McpToolError, McpRpcError) as err:
            if _unknown_tool(err):
                self.hc_automations_supported = False
                return {}
            _LOGGER.debug("get_hc_automations failed, automations stay as they were: %s", err)
            return None

    def _report_missing_homes(self, state: HomecastState, previous: HomecastState | None) -> None:
        """A followed home the credential no longer sees needs the user (reconfigure or share).

        Its last known form is kept, marked missing, so its entities and devices stay (and
        show unavailable) instead of being deleted; a repair issue says why, and goes once
        the home is back.
        """
        issue_id = f"homecast_home_missing_{self.config_entry.entry_id}"
        missing = (self.homes or set()) - set(state.homes)
        for uuid in missing:
            if previous is not None and (old := previous.homes.get(uuid)) is not None:
                old.missing = True
                state.homes[uuid] = old
        if not missing:
            ir.async_delete_issue(self.hass, DOMAIN, issue_id)
            return
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key="homecast_home_missing",
            translation_placeholders={"title": self.config_entry.title, "count": str(len(missing))},
        )

    def _carry_events(
        self, state: HomecastState, home_uuid: str, previous: HomecastState | None
    ) -> None:
        """Turn a changed press value into a new occurrence, keeping recent ones.

        Polling only sees the last press between two polls, and two identical presses in a
        row look like none. Homecast's MCP tools offer no way to see each press: get_state
        holds only the last ProgrammableSwitchEvent value, no tool takes a `since` or keeps a
        press counter, and the history tools (opt-in Analytics) are not documented to record
        button events. The push channels (WebSocket, webhooks, MQTT) would see each press but
        are not MCP and out of scope here.
        """
        home = state.homes[home_uuid]
        old_home = previous.homes.get(home_uuid) if previous is not None else None
        for uid, acc in home.accessories.items():
            if EVENT_KEY not in acc.values:
                continue
            old = old_home.accessories.get(uid) if old_home is not None else None
            events = old.events if old is not None else ()
            value = acc.values[EVENT_KEY]
            if old is None or old.values.get(EVENT_KEY) != value or not events:
                marker = f"{self.polls}:{value}"
                if isinstance(value, int) and not isinstance(value, bool):
                    events = (*events, ButtonPress(marker, value))[-_EVENT_MEMORY:]
            acc.events = events


def _unknown_tool(err: Exception) -> bool:
    """A server without the tool (older or community servers): stop asking for it."""
    # MCP answers an unknown tool with invalid params (-32602); some servers say -32601. The
    # community server answers a tool result with isError, "Error: Unknown tool: <name>"
    # (homecast-web src/server/local-mcp.ts, callTool's default case).
    if isinstance(err, McpToolError):
        return str(err).removeprefix("Error:").strip().startswith("Unknown tool:")
    return isinstance(err, McpRpcError) and err.code in (-32601, -32602)
