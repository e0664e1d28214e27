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

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
import logging
import time
from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryError
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from ...const import DOMAIN
from ...mcp.errors import McpRpcError, McpToolError
from ..coordinator import BackendCoordinator
from .api import (
    HsmStatus,
    HubInfo,
    HubitatApi,
    HubitatDevice,
    HubitatRule,
    HubitatUnavailableError,
    Modes,
    newest,
    parse_time,
)
from .const import HUB_DEVICE_KEY, ISSUE_LOCATION_EVENTS, SWEEP_INTERVAL, rule_device_key

if TYPE_CHECKING:
    from ..base import McpGatewayConfigEntry

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
        # Devices showing a command's optimistic effect, with the order it was applied in: the
        # next poll reads each of them even if `changedSince` no longer lists it.
        self._unconfirmed: dict[str, int] = {}
        # The same for mode and HSM: the next poll reads them even without a location event.
        self._unconfirmed_location: dict[str, int] = {}
        # Reads of mode and HSM so far, to tell whether a poll already read one.
        self._location_reads: dict[str, int] = {_MODE: 0, _HSM: 0}
        self._applied = 0

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
        data: HubitatData | None = self.data
        if data is None:
            loaded = await self._load()
            self.mark_all()
            return loaded
        if await self._poll():
            self.mark_all()
            self.data = replace(self.data, structure=self.data.structure + 1)
        # The same snapshot when nothing changed: HA then tells no listener.
        return self.data

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
        modes = await self._read_modes()
        hsm = await self._read_hsm()
        rules = await self._read_rules()
        await self._bookmark_location()
        self._last_sweep = dt_util.utcnow()
        return HubitatData(
            hub=hub,
            devices=devices,
            rules=rules,
            modes=modes,
            hsm=hsm,
            hsm_supported=hsm.status is not None,
        )

    async def _poll(self) -> bool:
        """What changed since the last poll; a sweep now and then. True: structure changed."""
        # As for devices: only reads sent from here on can confirm mode or HSM values shown
        # so far; one applied while this poll is on the wire waits for the next poll.
        settle = dict(self._unconfirmed_location)
        reads = dict(self._location_reads)
        structural = await self._poll_devices()
        await self._poll_location()
        now = dt_util.utcnow()
        if self._last_sweep is None or now - self._last_sweep >= SWEEP_INTERVAL:
            structural = await self._sweep() or structural
            self._last_sweep = now
        if keys := [key for key in settle if self._location_reads[key] == reads[key]]:
            await self._reread_location(modes=_MODE in keys, hsm=_HSM in keys)
        for key, order in settle.items():
            if self._unconfirmed_location.get(key) == order:
                del self._unconfirmed_location[key]
        return structural

    async def _full_inventory(self, hub: HubInfo) -> dict[str, HubitatDevice]:
        page = await self.api.list_devices()
        self.full_inventories += 1
        self._advance_bookmark(device.last_activity for device in page.devices)
        return {device.id: _adopted(device, hub) for device in page.devices}

    async def _poll_devices(self) -> bool:
        # Only reads sent after an optimistic update can confirm or correct it; one applied
        # while this poll is on the wire waits for the next poll.
        settle = dict(self._unconfirmed)
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
            for device_id in buttons:
                await self._read_button_events(device_id, since)
        newest = self._newest_activity
        self._advance_bookmark(device.last_activity for device in page.devices)
        if completes and newest is not None and self._newest_activity == newest:
            self._newest_complete = True
        listed = {device.id for device in page.devices}
        if await self._settle([device_id for device_id in settle if device_id not in listed]):
            structural = True
        for device_id, order in settle.items():
            if self._unconfirmed.get(device_id) == order:
                del self._unconfirmed[device_id]
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
        for fresh in readings:
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
        events = await self.api.list_events(device_id=device_id, since=since)
        if (device := self.data.devices.get(device_id)) is None:
            return
        known = {event.marker for event in device.events}
        added = [
            event for event in events if event.name in BUTTON_EVENTS and event.marker not in known
        ]
        if added:
            self._set_devices({device_id: device.with_events(added)})
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
        except HubitatUnavailableError as err:
            self._location_events_failed(err)
            # Read mode and HSM themselves (two small reads instead of one event read).
            await self._reread_location(modes=True, hsm=True)
            return
        if not events:
            return
        self._location_since = newest([self._location_since, *(e.date for e in events)])
        names = {event.name for event in events}
        await self._reread_location(modes=bool(names & _MODE_EVENTS), hsm=bool(names & _HSM_EVENTS))

    async def _reread_location(self, *, modes: bool, hsm: bool, probe: bool = False) -> None:
        """Read mode and/or HSM again; a change marks the hub's entities.

        HSM is read only on a hub that has it, unless `probe` (it may have been installed).
        """
        before = self.data
        if modes:
            self._set(modes=await self._read_modes())
        if hsm and (probe or self.data.hsm_supported):
            status = await self._read_hsm()
            self._set(hsm=status, hsm_supported=status.status is not None)
        if (before.modes, before.hsm) != (self.data.modes, self.data.hsm):
            self.mark(HUB_DEVICE_KEY)

    async def _bookmark_location(self) -> None:
        try:
            events = await self.api.list_events(limit=10)
        except HubitatUnavailableError as err:
            self._location_events_failed(err)
            return
        self._location_since = newest(event.date for event in events)
        if not self.location_events_ok:
            _LOGGER.info("The hub reads its location events again")
            self.location_events_ok = True
        ir.async_delete_issue(self.hass, DOMAIN, self._location_issue_id)

    @property
    def _location_issue_id(self) -> str:
        return f"{ISSUE_LOCATION_EVENTS}_{self.config_entry.entry_id}"

    def _location_events_failed(self, err: HubitatUnavailableError) -> None:
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
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            self._location_issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_LOCATION_EVENTS,
            translation_placeholders={"name": self.config_entry.title},
        )

    async def _sweep(self) -> bool:
        """Additions/removals by id, rules, modes, HSM and hub facts; True: structure changed."""
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
                device = await self.api.get_device(device_id)
                added[device.id] = _adopted(device, self.data.hub)
            self._set_devices(added)
        structural = bool(gone or new)

        before = self.data
        rules = await self._read_rules()
        self._set(rules=rules)
        if {r.id: r.name for r in before.rules.values()} != {r.id: r.name for r in rules.values()}:
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

        hub = await self.api.get_info()
        old = self.data.hub
        if hub.raw != old.raw:
            self.mark(HUB_DEVICE_KEY)
        if (hub.name, hub.firmware) != (old.name, old.firmware):
            structural = True
        self._set(hub=hub)
        return structural

    async def _read_modes(self) -> Modes:
        modes = await self.api.list_modes()
        self._location_reads[_MODE] += 1
        return modes

    async def _read_hsm(self) -> HsmStatus:
        """HSM's state; a status of None on a hub without HSM."""
        try:
            hsm = await self.api.get_hsm()
        except McpToolError as err:
            _LOGGER.debug("HSM is not available on this hub: %s", err)
            # libraries/mcp-system-lib.groovy toolGetHsmStatus: status null without HSM (an
            # optional hub app); then there is no alarm panel to show.
            return HsmStatus(status=None)
        self._location_reads[_HSM] += 1
        return hsm

    async def _read_rules(self) -> dict[str, HubitatRule]:
        return {rule.id: rule for rule in await self.api.list_rules()}

    def _advance_bookmark(self, dates: Any) -> None:
        for date in dates:
            when = parse_time(date)
            if when is not None and (self._newest_activity is None or when > self._newest_activity):
                self._newest_activity = when
                self._newest_seen_at = time.monotonic()
                self._newest_complete = False

    # -- optimistic updates ------------------------------------------------------------------

    def apply(self, device_id: str, **attributes: Any) -> None:
        """Show a command's expected effect at once; the next poll confirms or corrects it."""
        if (device := self.data.devices.get(device_id)) is None:
            return
        self.mark(device_id)
        if attributes:
            record = replace(device, attributes={**device.attributes, **attributes})
            self._set_devices({device_id: record})
            self._applied += 1
            self._unconfirmed[device_id] = self._applied

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
