"""Polls one hub: a full inventory once, then only what changed.

An idle poll is two small reads whatever the number of devices: `hub_list_devices
{changedSince}` (devices with activity since the newest activity we saw) and
`hub_list_device_events {since}` without a device (location events: mode and HSM changes).
Every few minutes a sweep also lists the device ids (to find additions and removals without a
full inventory), the rules, the modes and the hub's own facts. A device, mode or HSM state a
command showed before the hub confirmed it is read once more by the next poll.

The state is `coordinator.data`: a `HubitatData` snapshot, replaced (never changed in place) by
polls and by commands' expected effects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
import logging
import time
from typing import TYPE_CHECKING, Any, Final

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryError
from homeassistant.helpers import (
    device_registry as dr,
    entity_registry as er,
    issue_registry as ir,
)
from homeassistant.util import dt as dt_util

from ...core.const import DOMAIN
from ...framework.base import Silence
from ...framework.coordinator import BackendCoordinator
from ...framework.entity import device_identifier, entry_uid
from ...mcp.errors import (
    McpError,
    McpProtocolError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
)
from .api import (
    DeviceEvent,
    HsmStatus,
    HubInfo,
    HubitatApi,
    HubitatDevice,
    HubitatRule,
    Modes,
    newest,
    parse_time,
)
from .const import (
    EVENTS_LIMIT,
    HUB_DEVICE_KEY,
    ISSUE_LOCATION_EVENTS,
    ISSUE_RULE_STATUS,
    ISSUE_RULES_FAILED,
    SWEEP_INTERVAL,
    rule_device_key,
)

if TYPE_CHECKING:
    from ...framework.base import McpGatewayConfigEntry

_LOGGER = logging.getLogger(__name__)

BUTTON_EVENTS = frozenset({"pushed", "held", "doubleTapped", "released"})
BUTTON_CAPABILITIES = frozenset(
    {"PushableButton", "HoldableButton", "DoubleTapableButton", "ReleasableButton"}
)
# Location event names after which mode or HSM are read again.
_MODE_EVENTS = frozenset({"mode"})
_HSM_EVENTS = frozenset({"hsmStatus", "hsmAlert", "hsmSetArm", "hsmArmState"})
# More new ids than this in a sweep: one paged inventory beats one call per device.
_MAX_SINGLE_FETCHES = 10
# Seconds after first seeing the newest activity (whole seconds on the hub) after which a
# listing surely holds all of that second: one second plus a margin for clocks and transit.
_SECOND_COMPLETE = 3.0
# Keys of the location values a command can show before the hub confirms them.
_MODE = "mode"
_HSM = "hsm"
# The keys of the HSM panel and mode select entities (entities.py derives them).
HSM_KEY: Final = "hub_hsm"
MODE_KEY: Final = "hub_mode"
# What one read feeds (`HubitatData.failed` names those whose last read failed).
FEED_DEVICES: Final = "devices"
FEED_RULES: Final = "rules"
FEED_MODES: Final = "modes"
FEED_HSM: Final = "hsm"
FEED_HUB: Final = "hub"
# A read failing so takes down only what it feeds: the hub answered, but not this (a tool
# error or `{success: false}`, a refused argument, a malformed or too large answer) or
# this read alone ran out of time. Anything else (unreachable, refused credentials) fails
# the whole poll.
_ONE_READ: Final = (McpToolError, McpRpcError, McpProtocolError, McpTimeoutError)
# The poll's first read tells whether the hub answers at all: a timeout there is the hub's.
_FIRST_READ: Final = (McpToolError, McpRpcError, McpProtocolError)
# How long a commanded attribute may read as it was before the command before the command is
# taken as not applied: the hub changes an attribute when the device reports it (a Z-Wave lock
# a second or two after the command), so reads until then still show the old value.
REPORT_WINDOW: Final = timedelta(seconds=10)


@dataclass(slots=True)
class _Expected:
    """A command's expected attribute values on one device, not yet reported by it."""

    # attribute -> (the value the command should bring, the value the hub held before it)
    values: dict[str, tuple[Any, Any]]
    # After this, a read still showing the value from before the command corrects ours.
    until: datetime


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class HubitatData:
    """The hub as the coordinator last saw it: a new snapshot whenever anything changed.

    Never changed in place: an update makes a new snapshot that shares the records of
    everything it did not change (frozen `HubitatDevice`s, rules, modes), so a poll of three
    changed devices makes three records and one shallow copy of the device map, whatever the
    size of the hub. An update that changed nothing keeps the same snapshot (and tells no one).
    """

    hub: HubInfo
    devices: Mapping[str, HubitatDevice]
    rules: Mapping[str, HubitatRule]
    modes: Modes
    hsm: HsmStatus
    # False on a hub without HSM (an optional hub app): no alarm panel then.
    hsm_supported: bool
    # The feeds (FEED_*) whose last read failed: their entities are unavailable meanwhile.
    failed: frozenset[str] = frozenset()
    # Changes only when entities must be re-derived (devices or rules came, went or changed
    # capabilities).
    structure: int = 1
    # The device keys whose entities the last notification concerned (None: all of them).
    changed: frozenset[str] | None = None


class HubitatCoordinator(BackendCoordinator[HubitatData]):
    """Keeps the hub's devices, modes, HSM state and rules as `HubitatData` snapshots."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        api: HubitatApi,
        update_interval: timedelta,
    ) -> None:
        super().__init__(
            hass,
            _LOGGER,
            entry,
            name=f"Hubitat {entry.title}",
            update_interval=update_interval,
            always_update=False,
        )
        self.api = api
        # False while the hub cannot read its location events (Hub Security without
        # credentials in the app, or a transient failure): mode and HSM are then read directly.
        self.location_events_ok = True
        self.full_inventories = 0
        self._newest_activity: datetime | None = None
        # When (monotonic) the newest activity was first seen, and whether a later listing
        # has shown its second complete, so the bookmark may move past it.
        self._newest_seen_at = 0.0
        self._newest_complete = False
        self._location_since: str | None = None
        self._last_sweep: datetime | None = None
        # Device keys whose entities need a state write; None = all of them.
        self._dirty: set[str] | None = None
        self._notified_success: bool | None = None
        # Devices showing a command's optimistic effect the device has not reported yet: each
        # poll reads them even if `changedSince` no longer lists them.
        self._unconfirmed: dict[str, _Expected] = {}
        self._heard: dict[str, tuple[HubitatDevice, datetime | None]] = {}
        # A token per snapshot, for readers that keep silences while the data stays the same.
        self._epoch_of: HubitatData | None = None
        self._epoch = object()
        # The same for mode and HSM: the next poll reads them even without a location event.
        self._unconfirmed_location: dict[str, int] = {}
        # Reads of mode and HSM so far, to tell whether a poll already read one.
        self._location_reads: dict[str, int] = {_MODE: 0, _HSM: 0}
        # Button devices whose events failed, with the bookmark to read them from again.
        self._events_retry: dict[str, str] = {}
        self._applied = 0
        # Scheduled polls and pushed reads take turns: both move the same bookmarks.
        self._fetch_lock = asyncio.Lock()
        # Told the location events each incremental read found (push watches for its own).
        self.location_listener: Callable[[list[DeviceEvent]], None] | None = None
        # Told the devices before and after each scheduled poll (push checks what it missed).
        self.poll_listener: (
            Callable[[Mapping[str, HubitatDevice], Mapping[str, HubitatDevice]], None] | None
        ) = None

    # -- listeners ---------------------------------------------------------------------------

    def mark(self, *keys: str) -> None:
        """Note that the entities of these device keys must show new state."""
        if self._dirty is not None:
            self._dirty.update(keys)

    def mark_all(self) -> None:
        """Every entity must show new state (first load, structure changes)."""
        self._dirty = None

    @callback
    def async_update_listeners(self) -> None:
        """Publish which devices changed, then tell the listeners (entities filter by it).

        A poll that saw 3 changed devices, or an action on one light, costs 3 or 1 devices'
        state writes instead of one per entity of the hub; the 20 lights of an area action are
        all applied before the first of them asks for a refresh, so one call covers them and
        the 19 after it find nothing left to do. Availability changes reach everyone.
        """
        dirty, self._dirty = self._dirty, set()
        everyone = dirty is None or self.last_update_success != self._notified_success
        self._notified_success = self.last_update_success
        if not everyone and not dirty:
            return
        data: HubitatData | None = self.data
        if data is not None:
            self.data = replace(data, changed=None if everyone else frozenset(dirty or ()))
        super().async_update_listeners()

    def changed_devices(self) -> frozenset[str] | None:
        """The device keys the last notification was about; None: all of them."""
        data: HubitatData | None = self.data
        return None if data is None else data.changed

    # -- snapshots ---------------------------------------------------------------------------

    def _set(self, **fields: Any) -> None:
        """A new snapshot with these fields, unless each already has its value."""
        data = self.data
        if any(getattr(data, name) != value for name, value in fields.items()):
            self.data = replace(data, **fields)

    def _set_devices(
        self, records: Mapping[str, HubitatDevice], gone: Collection[str] = ()
    ) -> None:
        """A new snapshot with these device records (and without the gone ones).

        The device map is copied shallowly: unchanged records are shared, not copied.
        """
        if not records and not gone:
            return
        devices = dict(self.data.devices)
        devices.update(records)
        for device_id in gone:
            devices.pop(device_id, None)
        self.data = replace(self.data, devices=devices)

    # -- the poll bookmark -------------------------------------------------------------------

    @property
    def changed_since(self) -> str | None:
        """The bookmark of the next incremental poll (epoch ms), None before the first."""
        if self._newest_activity is None:
            return None
        # `changedSince` is at-or-after (mcp-devices-lib.groovy toolListDevices) and activity
        # times are whole seconds, so the newest one seen round-trips as is: activity later in
        # its second is still listed. Once a listing made well after that second has shown it
        # complete, the bookmark moves past it, so idle polls list nothing at all.
        bookmark = self._newest_activity
        if self._newest_complete:
            bookmark += timedelta(seconds=1)
        return str(int(bookmark.timestamp() * 1000))

    # -- polling -----------------------------------------------------------------------------

    async def _async_fetch(self) -> HubitatData:
        async with self._fetch_lock:
            data: HubitatData | None = self.data
            if data is None:
                loaded = await self._load()
                self.mark_all()
                return loaded
            before = data.devices
            if await self._poll():
                self.mark_all()
                self.data = replace(self.data, structure=self.data.structure + 1)
            if self.poll_listener is not None:
                self.poll_listener(before, self.data.devices)
            # The same snapshot when nothing changed: HA then tells no listener.
            return self.data

    async def async_read_changes(self) -> None:
        """What changed since the last read, at once (a push told us): no sweep.

        Takes its turn with the scheduled polls, and counts as one: the next scheduled poll
        waits a full interval from here. Failures propagate; the scheduled polls go on.
        """
        async with self._fetch_lock:
            data: HubitatData | None = self.data
            if data is None:
                return
            if await self._poll(sweep=False):
                self.mark_all()
                self.data = replace(self.data, structure=self.data.structure + 1)
        self.async_set_updated_data(self.data)

    async def _load(self) -> HubitatData:
        """Everything, once: tools, hub, full inventory, modes, HSM, rules."""
        await self.api.detect_layout()
        hub = await self.api.get_info()
        expected = self.config_entry.unique_id
        # Only a hub id on both sides proves another hub (entries made while the hub gave no
        # zigbeeId have none to compare; an old entry may hold the placeholder "unavailable").
        if (
            expected is not None
            and hub.id is not None
            and expected.lower() != "unavailable"
            and hub.id != expected
        ):
            # Another hub now answers at this address: its devices must not replace ours.
            raise ConfigEntryError(
                translation_domain=DOMAIN,
                translation_key="hubitat_other_hub",
                translation_placeholders={"found": hub.id},
            )
        devices = await self._full_inventory(hub)
        # Identity and devices are what the entry is: without them set-up fails (and is
        # retried). Each read after them takes down only what it feeds.
        self.data = HubitatData(
            hub=hub,
            devices=devices,
            rules={},
            modes=Modes(current=None, names=()),
            hsm=HsmStatus(status=None),
            hsm_supported=False,
        )
        await self._reread_location(modes=True, hsm=True, probe=True)
        if FEED_HSM in self.data.failed and self._registered(Platform.ALARM_CONTROL_PANEL, HSM_KEY):
            self._set(hsm_supported=True)  # its panel stays, unavailable, until HSM reads
        rules = await self._read_rules()
        self._set(rules=self._remembered_rules() if rules is None else rules)
        await self._bookmark_location()
        self._last_sweep = dt_util.utcnow()
        return self.data

    async def _poll(self, *, sweep: bool = True) -> bool:
        """What changed since the last poll; a sweep now and then. True: structure changed."""
        # As for devices: only reads sent from here on can confirm mode or HSM values shown
        # so far; one applied while this poll is on the wire waits for the next poll.
        settle = dict(self._unconfirmed_location)
        reads = dict(self._location_reads)
        try:
            structural = await self._poll_devices()
        except _FIRST_READ as err:
            self._failed(FEED_DEVICES, err)
            structural = False
        else:
            self._recovered(FEED_DEVICES)
        await self._poll_location()
        if retry := self.data.failed & {FEED_MODES, FEED_HSM}:
            # A failed read of mode or HSM is tried again on every poll, not only on events.
            await self._reread_location(modes=FEED_MODES in retry, hsm=FEED_HSM in retry)
        now = dt_util.utcnow()
        if sweep and (self._last_sweep is None or now - self._last_sweep >= SWEEP_INTERVAL):
            structural = await self._sweep() or structural
            self._last_sweep = now
        if keys := [key for key in settle if self._location_reads[key] == reads[key]]:
            await self._reread_location(modes=_MODE in keys, hsm=_HSM in keys)
        for key, order in settle.items():
            # Confirmed only by a read that succeeded: after a failed one it stays pending.
            if (
                self._unconfirmed_location.get(key) == order
                and self._location_reads[key] > reads[key]
            ):
                del self._unconfirmed_location[key]
        return structural

    async def _full_inventory(self, hub: HubInfo) -> dict[str, HubitatDevice]:
        page = await self.api.list_devices()
        self.full_inventories += 1
        self._advance_bookmark(device.last_activity for device in page.devices)
        return {device.id: _adopted(device, hub) for device in page.devices}

    async def _poll_devices(self) -> bool:
        since = self.changed_since
        # This listing is evaluated well after the newest activity's second ended (the hub's
        # clock runs with ours): everything of that second is in it.
        completes = time.monotonic() - self._newest_seen_at >= _SECOND_COMPLETE
        if since is None:
            # No device has ever reported activity: there is no bookmark, read the whole list.
            page = await self.api.list_devices()
        else:
            page = await self.api.list_devices(changed_since=since)
        known = self.data.devices
        buttons = [
            fresh.id
            for fresh in page.devices
            if (old := known.get(fresh.id)) is not None and old.capabilities & BUTTON_CAPABILITIES
        ]
        structural = self._take(page.devices, adopt_new=True)
        if since is not None:
            # Devices whose events failed before are read from where they failed.
            windows = dict.fromkeys(buttons, since) | self._events_retry
            for device_id, window in windows.items():
                await self._read_button_events(device_id, window)
        newest = self._newest_activity
        self._advance_bookmark(device.last_activity for device in page.devices)
        if completes and newest is not None and self._newest_activity == newest:
            self._newest_complete = True
        listed = {device.id for device in page.devices}
        if await self._settle(
            [device_id for device_id in self._unconfirmed if device_id not in listed]
        ):
            structural = True
        return structural

    async def _settle(self, device_ids: list[str]) -> bool:
        """Read devices whose optimistic state the listing did not confirm.

        The bookmark can already be past a commanded device's activity (a poll read its final
        state before the command's answer applied the optimistic one), so `changedSince` would
        never list it again. These reads do not move the bookmark: activity of other devices
        between the listing and them would be skipped.
        """
        wanted = [device_id for device_id in device_ids if device_id in self.data.devices]
        if not wanted:
            return False
        if len(wanted) > _MAX_SINGLE_FETCHES:
            page = await self.api.list_devices()
            readings = [device for device in page.devices if device.id in wanted]
        else:
            readings = []
            for device_id in sorted(wanted):
                try:
                    readings.append(await self.api.get_device(device_id))
                except (McpToolError, McpRpcError) as err:
                    # Gone from the hub: the next sweep removes it.
                    _LOGGER.debug("Device %s could not be read: %s", device_id, err)
        return self._take(readings, adopt_new=False)

    def _take(self, readings: Iterable[HubitatDevice], *, adopt_new: bool) -> bool:
        """Fresh readings into one new snapshot; True when a device came or changed shape.

        Only devices whose reading differs get a new record (and a state write).
        """
        known = self.data.devices
        records: dict[str, HubitatDevice] = {}
        structural = False
        now = dt_util.utcnow()
        for reading in readings:
            fresh = self._held(reading, now) if reading.id in self._unconfirmed else reading
            old = known.get(fresh.id)
            if old is None:
                if adopt_new:
                    records[fresh.id] = _adopted(fresh, self.data.hub)
                    structural = True
                continue
            record, moved = _merge(old, fresh)
            if moved:
                self.mark(old.id)
            structural = structural or old.structure() != fresh.structure()
            if record is not old:
                records[fresh.id] = record
        self._set_devices(records)
        return structural

    async def _read_button_events(self, device_id: str, since: str) -> None:
        """New button events of one device; a failure takes down only its event entities.

        libraries/mcp-devices-lib.groovy toolGetDeviceHistory answers `{success: false}` when
        the device's eventsSince fails; the window is read again by the next poll.
        """
        if (device := self.data.devices.get(device_id)) is None:
            self._events_retry.pop(device_id, None)
            return
        try:
            events = await self.api.list_events(
                device_id=device_id, since=since, limit=EVENTS_LIMIT
            )
        except _ONE_READ as err:
            if device_id not in self._events_retry:
                _LOGGER.warning("The events of device %s could not be read: %s", device_id, err)
            self._events_retry.setdefault(device_id, since)
            self._events_readable(device_id, False)
            return
        self._events_retry.pop(device_id, None)
        self._events_readable(device_id, True)
        if (device := self.data.devices.get(device_id)) is None:
            return
        known = {event.marker for event in device.events}
        added = [
            event for event in events if event.name in BUTTON_EVENTS and event.marker not in known
        ]
        if added:
            self._set_devices({device_id: device.with_events(added)})
            self.mark(device_id)

    def _held(self, fresh: HubitatDevice, now: datetime) -> HubitatDevice:
        """A reading of a commanded device, keeping the expected values it does not yet show.

        A read that still shows the value from before the command (sent before the device
        reported it, or even before the command) does not undo it: the entity would change
        three times for one command. The expected value stands until the device reports it
        (or anything else), or until REPORT_WINDOW ends without a report: then the hub's value
        corrects it, the command not applied.
        """
        expected = self._unconfirmed[fresh.id]
        held: dict[str, Any] = {}
        for name, (wanted, before) in list(expected.values.items()):
            value = fresh.attributes.get(name)
            if value == before and value != wanted and now < expected.until:
                held[name] = wanted
            else:
                del expected.values[name]
        if not expected.values:
            del self._unconfirmed[fresh.id]
        if not held:
            return fresh
        return replace(fresh, attributes={**fresh.attributes, **held})

    def _events_readable(self, device_id: str, readable: bool) -> None:
        device = self.data.devices.get(device_id)
        if device is not None and device.events_failed == readable:
            self._set_devices({device_id: replace(device, events_failed=not readable)})
            self.mark(device_id)

    async def _poll_location(self) -> None:
        """Mode and HSM changes, from the location's event stream (or read directly)."""
        if not self.location_events_ok:
            await self._reread_location(modes=True, hsm=True)
            return
        try:
            if self._location_since is None:
                # No location event existed yet: whatever shows up now is new.
                events = await self.api.list_events(limit=10)
            else:
                events = await self.api.list_events(since=self._location_since)
        except _ONE_READ as err:
            self._location_events_failed(err)
            # Read mode and HSM themselves (two small reads instead of one event read).
            await self._reread_location(modes=True, hsm=True)
            return
        if not events:
            return
        if self.location_listener is not None:
            self.location_listener(events)
        self._location_since = newest([self._location_since, *(e.date for e in events)])
        names = {event.name for event in events}
        await self._reread_location(modes=bool(names & _MODE_EVENTS), hsm=bool(names & _HSM_EVENTS))

    async def _reread_location(self, *, modes: bool, hsm: bool, probe: bool = False) -> None:
        """Read mode and/or HSM again; a change marks the hub's entities.

        HSM is read only on a hub that has it, unless `probe` (it may have been installed).
        """
        before = self.data
        if modes and (read := await self._read_modes()) is not None:
            self._set(modes=read)
        if hsm and (probe or self.data.hsm_supported):
            status = await self._read_hsm()
            if status is not None:
                self._set(hsm=status, hsm_supported=status.status is not None)
        if (before.modes, before.hsm) != (self.data.modes, self.data.hsm):
            self.mark(HUB_DEVICE_KEY)

    async def _bookmark_location(self) -> None:
        try:
            events = await self.api.list_events(limit=10)
        except _ONE_READ as err:
            self._location_events_failed(err)
            return
        self._location_since = newest(event.date for event in events)
        if not self.location_events_ok:
            _LOGGER.info("The hub reads its location events again")
            self.location_events_ok = True
        self._issue(ISSUE_LOCATION_EVENTS, active=False)

    def _location_events_failed(self, err: McpError) -> None:
        """Location events failed ({success: false}): devices go on, mode and HSM are polled.

        The hub reads them from its internal /logs/eventsJson, which Hub Security guards; the
        app needs the hub's credentials in its settings for it.
        """
        if self.location_events_ok:
            _LOGGER.warning(
                "The hub could not read its location events (%s); reading mode and HSM "
                "directly instead",
                err,
            )
        self.location_events_ok = False
        self._issue(ISSUE_LOCATION_EVENTS, active=True)

    async def _sweep(self) -> bool:
        """Additions/removals by id, rules, modes, HSM and hub facts; True: structure changed."""
        try:
            structural = await self._sweep_devices()
        except _ONE_READ as err:
            # Additions and removals wait for the next sweep; the devices known go on.
            _LOGGER.debug("The hub's device ids could not be read: %s", err)
            structural = False

        before = self.data
        rules = await self._read_rules()
        if rules is not None:
            self._set(rules=rules)
            names = {r.id: r.name for r in rules.values()}
            if {r.id: r.name for r in before.rules.values()} != names:
                structural = True
            if before.rules != rules:
                self.mark(*(rule_device_key(rule_id) for rule_id in rules))

        before = self.data
        await self._reread_location(modes=True, hsm=True, probe=True)
        if (before.modes.names, before.hsm_supported) != (
            self.data.modes.names,
            self.data.hsm_supported,
        ):
            structural = True
        if not self.location_events_ok:
            await self._bookmark_location()  # back to events once the hub reads them again

        try:
            hub = await self.api.get_info()
        except _ONE_READ as err:
            self._failed(FEED_HUB, err)
            return structural
        self._recovered(FEED_HUB)
        old = self.data.hub
        if hub.raw != old.raw:
            self.mark(HUB_DEVICE_KEY)
        if (hub.name, hub.firmware) != (old.name, old.firmware):
            structural = True
        self._set(hub=hub)
        return structural

    async def _sweep_devices(self) -> bool:
        """Devices added or removed since the last sweep; True when there were any."""
        ids = await self.api.list_device_ids()
        known = self.data.devices
        gone = set(known) - ids
        new = ids - set(known)
        for device_id in gone:
            _LOGGER.debug("Device %s is gone from the hub", device_id)
        self._set_devices({}, gone)
        if len(new) > _MAX_SINGLE_FETCHES:
            inventory = await self._full_inventory(self.data.hub)
            self.data = replace(self.data, devices=inventory)
        else:
            added: dict[str, HubitatDevice] = {}
            for device_id in sorted(new):
                try:
                    device = await self.api.get_device(device_id)
                except (McpToolError, McpRpcError) as err:
                    # Gone again, or not readable yet: the next sweep looks again.
                    _LOGGER.debug("New device %s could not be read: %s", device_id, err)
                    continue
                added[device.id] = _adopted(device, self.data.hub)
            self._set_devices(added)
        return bool(gone or new)

    async def _read_modes(self) -> Modes | None:
        """The modes; None when the read failed (the mode select is unavailable meanwhile)."""
        try:
            modes = await self.api.list_modes()
        except _ONE_READ as err:
            self._failed(FEED_MODES, err)
            return None
        self._recovered(FEED_MODES)
        self._location_reads[_MODE] += 1
        return modes

    async def _read_hsm(self) -> HsmStatus | None:
        """HSM's state (a status of None on a hub without HSM); None when the read failed.

        libraries/mcp-system-lib.groovy toolGetHsmStatus answers a null status without HSM (an
        optional hub app), never an error: a failure leaves the panel, unavailable.
        """
        try:
            hsm = await self.api.get_hsm()
        except _ONE_READ as err:
            self._failed(FEED_HSM, err)
            return None
        self._recovered(FEED_HSM)
        self._location_reads[_HSM] += 1
        return hsm

    async def _read_rules(self) -> dict[str, HubitatRule] | None:
        """The rules; None when the read failed (rule entities are unavailable meanwhile).

        libraries/mcp-native-rules-lib.groovy toolListRmRules answers `{rules: [], success:
        false, error: "RMUtils calls failed…"}` when Rule Machine does not answer.
        """
        try:
            rules = {rule.id: rule for rule in await self.api.list_rules()}
        except _ONE_READ as err:
            self._failed(FEED_RULES, err)
            self._issue(ISSUE_RULES_FAILED, active=True)
            return None
        self._recovered(FEED_RULES)
        self._issue(ISSUE_RULES_FAILED, active=False)
        # _rmAnnotateRuleStatus: "unknown" while the hub's app tree is unreadable to the app.
        self._issue(ISSUE_RULE_STATUS, active=any(r.paused is None for r in rules.values()))
        return rules

    def _remembered_rules(self) -> dict[str, HubitatRule]:
        """The rules this entry showed before (from its devices), their state unknown.

        When the first read of the rules fails, their entities stay (unavailable) instead of
        being removed with the customizations a user made to them.
        """
        uid = entry_uid(self.config_entry)
        prefix = device_identifier(uid, rule_device_key(""))
        rules: dict[str, HubitatRule] = {}
        registry = dr.async_get(self.hass)
        for device in dr.async_entries_for_config_entry(registry, self.config_entry.entry_id):
            for identifier in device.identifiers:
                if identifier[0] == prefix[0] and identifier[1].startswith(prefix[1]):
                    rule_id = identifier[1].removeprefix(prefix[1])
                    name = device.name or f"Rule {rule_id}"
                    rules[rule_id] = HubitatRule(
                        id=rule_id, name=name, paused=None, type=device.model
                    )
        return rules

    def _registered(self, platform: Platform, key: str) -> bool:
        """Whether this entry had the entity of this key before."""
        unique_id = f"{entry_uid(self.config_entry)}_{key}"
        return er.async_get(self.hass).async_get_entity_id(platform, DOMAIN, unique_id) is not None

    # -- failed reads ------------------------------------------------------------------------

    def _failed(self, feed: str, err: McpError) -> None:
        """A read failed: what it feeds is unavailable until it reads again."""
        if feed in self.data.failed:
            return
        _LOGGER.warning(
            "Reading the hub's %s failed (%s); they are unavailable until a read succeeds",
            feed,
            err,
        )
        self.data = replace(self.data, failed=self.data.failed | {feed})
        self.mark_all()

    def _recovered(self, feed: str) -> None:
        if feed not in self.data.failed:
            return
        _LOGGER.info("The hub's %s read again", feed)
        self.data = replace(self.data, failed=self.data.failed - {feed})
        self.mark_all()

    def _issue(self, key: str, *, active: bool) -> None:
        """Raise or clear one of this hub's repair issues."""
        issue_id = f"{key}_{self.config_entry.entry_id}"
        if not active:
            ir.async_delete_issue(self.hass, DOMAIN, issue_id)
            return
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=key,
            translation_placeholders={"name": self.config_entry.title},
        )

    def _advance_bookmark(self, dates: Any) -> None:
        for date in dates:
            when = parse_time(date)
            if when is not None and (self._newest_activity is None or when > self._newest_activity):
                self._newest_activity = when
                self._newest_seen_at = time.monotonic()
                self._newest_complete = False

    # -- optimistic updates ------------------------------------------------------------------

    def awaits_report(self, device_key: str, entity_key: str) -> bool:
        """Whether the entity shows a command's expected effect no read has confirmed yet."""
        if device_key != HUB_DEVICE_KEY:
            return device_key in self._unconfirmed
        location = {HSM_KEY: _HSM, MODE_KEY: _MODE}.get(entity_key)
        return location is not None and location in self._unconfirmed_location

    def last_heard(self, device_key: str) -> datetime | None:
        """When the hub last heard from the device (its lastActivity)."""
        data: HubitatData | None = self.data
        device = data.devices.get(device_key) if data is not None else None
        if device is None:
            return None
        # Parsed once per device record (a poll replaces only the records that changed), not
        # on every read of its entities.
        known = self._heard.get(device_key)
        if known is None or known[0] is not device:
            known = self._heard[device_key] = (device, parse_time(device.last_activity))
        return known[1]

    def silence(self, device_key: str, now: datetime) -> Silence | None:
        """A device (not the hub, not a rule) silent for longer than its kind normally goes,
        or never heard from. lastActivity is any message the hub had from the device, not
        only changes (what libraries/mcp-diagnostics-lib.groovy's health check reads)."""
        data: HubitatData | None = self.data
        if data is None or (device := data.devices.get(device_key)) is None:
            return None
        if device.last_activity is None:
            return Silence(None)
        if (heard := self.last_heard(device_key)) is None:
            return None
        usual = usual_silence(device)
        return Silence(heard, usual) if now - heard > usual else None

    def silence_epoch(self) -> object:
        """The same object while the snapshot is (a new one may have new records)."""
        if self._epoch_of is not self.data:
            self._epoch_of, self._epoch = self.data, object()
        return self._epoch

    def silence_until(
        self, device_key: str, now: datetime
    ) -> tuple[Silence | None, datetime | None]:
        """`silence`, and the moment after which the clock alone makes a quiet device silent
        (None: never, while this snapshot lasts: a silent device stays so until a new record)."""
        if (silence := self.silence(device_key, now)) is not None:
            return silence, None
        data: HubitatData | None = self.data
        device = data.devices.get(device_key) if data is not None else None
        if device is None or (heard := self.last_heard(device_key)) is None:
            return None, None
        return None, heard + usual_silence(device)

    def apply(
        self, device_id: str, sent: Mapping[str, Any] | None = None, /, **attributes: Any
    ) -> None:
        """Show a command's expected effect at once; reads confirm or correct it.

        `sent`: the attributes as this copy showed them when the command was sent (default:
        now). One a read changed since came from the device after the command left: it is
        newer than the expectation, which is then not shown for it.
        """
        if (device := self.data.devices.get(device_id)) is None:
            return
        self.mark(device_id)
        if sent is not None:
            attributes = {
                name: value
                for name, value in attributes.items()
                if device.attr(name) == sent.get(name)
            }
        if not attributes:
            return
        record = replace(device, attributes={**device.attributes, **attributes})
        self._set_devices({device_id: record})
        pending = self._unconfirmed.setdefault(device_id, _Expected({}, dt_util.utcnow()))
        for name, value in attributes.items():
            # A second command before the first was reported: the hub still holds the value
            # from before both.
            before = pending.values[name][1] if name in pending.values else device.attr(name)
            pending.values[name] = (value, before)
        pending.until = dt_util.utcnow() + REPORT_WINDOW

    def attributes(self, device_id: str, names: Iterable[str]) -> dict[str, Any]:
        """A device's current values of these attributes (what `apply` compares with)."""
        device = self.data.devices.get(device_id)
        return {name: device.attr(name) if device else None for name in names}

    def apply_mode(self, mode: str) -> None:
        """Show an activated mode at once; the next poll reads the hub's mode."""
        self._set(modes=Modes(current=mode, names=self.data.modes.names))
        self._pending_location(_MODE)

    def apply_hsm(self, status: str) -> None:
        """Show an arm or disarm command's status at once; the next poll reads the hub's."""
        self._set(hsm=HsmStatus(status=status))
        self._pending_location(_HSM)

    def _pending_location(self, key: str) -> None:
        self.mark(HUB_DEVICE_KEY)
        self._applied += 1
        self._unconfirmed_location[key] = self._applied

    def set_rule_paused(self, rule_id: str, paused: bool) -> None:
        """Optimistic pause state of a rule."""
        if (rule := self.data.rules.get(rule_id)) is not None:
            self._set(rules={**self.data.rules, rule_id: replace(rule, paused=paused)})
            self.mark(rule_device_key(rule_id))


# Battery devices report their battery at least daily (Zigbee sensors far more often, Z-Wave
# ones at each wake-up): one missed day is normal, two are not.
BATTERY_SILENCE: Final = timedelta(hours=48)
# Meters report their readings on a schedule of minutes to hours.
METER_SILENCE: Final = timedelta(hours=24)
_METERS: Final = frozenset(
    {
        "PowerMeter",
        "EnergyMeter",
        "VoltageMeasurement",
        "CurrentMeter",
        "TemperatureMeasurement",
        "RelativeHumidityMeasurement",
        "IlluminanceMeasurement",
    }
)
# Mains devices without meters speak when they change (a light left alone for days says
# nothing): only a long silence says something.
QUIET_SILENCE: Final = timedelta(days=7)


def usual_silence(device: HubitatDevice) -> timedelta:
    """How long a device of its kind normally goes without a word to the hub."""
    if "Battery" in device.capabilities:
        return BATTERY_SILENCE
    if device.capabilities & _METERS:
        return METER_SILENCE
    return QUIET_SILENCE


def _adopted(device: HubitatDevice, hub: HubInfo) -> HubitatDevice:
    """A new device with what the hub reports once for all (its temperature scale)."""
    return replace(device, temperature_scale=hub.temperature_scale)


def _merge(old: HubitatDevice, fresh: HubitatDevice) -> tuple[HubitatDevice, bool]:
    """The record after a fresh reading (`old` itself if nothing differs), and whether its
    facts or states moved (not only its activity time)."""
    facts: dict[str, Any] = {
        "label": fresh.label,
        "name": fresh.name,
        "room": fresh.room,
        "capabilities": fresh.capabilities,
        "commands": fresh.commands,
        "attributes": fresh.attributes,
    }
    if fresh.listing:  # hub_get_device carries no disabled or parent: keep what listings said
        facts |= {"disabled": fresh.disabled, "parent_id": fresh.parent_id}
    moved = any(getattr(old, name) != value for name, value in facts.items())
    last_activity = fresh.last_activity or old.last_activity
    if not moved and last_activity == old.last_activity:
        return old, False
    return replace(old, last_activity=last_activity, **facts), moved
