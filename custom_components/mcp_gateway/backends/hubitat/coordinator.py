"""Polls one hub: a full inventory once, then only what changed.

An idle poll is two small reads whatever the number of devices: `hub_list_devices
{changedSince}` (devices with activity since the newest activity we saw) and
`hub_list_device_events {since}` without a device (location events: mode and HSM changes).
Every few minutes a sweep also lists the device ids (to find additions and removals without a
full inventory), the rules, the modes and the hub's own facts. A device, mode or HSM state a
command showed before the hub confirmed it is read once more by the next poll.
"""

from __future__ import annotations

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
    DeviceEvent,
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


@dataclass(frozen=True, slots=True, eq=False)
class HubitatData:
    """What the last update changed: a new object whenever anything did (so listeners run).

    `structure` changes only when entities must be re-derived (devices or rules came, went or
    changed capabilities). `changed`: the device keys whose entities must show new state (None:
    all of them). States are the coordinator's live objects, merged in place so a poll of three
    changed devices touches three objects whatever the size of the hub.
    """

    version: int
    structure: int
    changed: frozenset[str] | None = None


class HubitatCoordinator(BackendCoordinator[HubitatData]):
    """Keeps the hub's devices, modes, HSM state and rules."""

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
        self.hub: HubInfo | None = None
        self.devices: dict[str, HubitatDevice] = {}
        self.modes = Modes(current=None, names=())
        self.hsm = HsmStatus(status=None)
        self.hsm_supported = True
        # False while the hub cannot read its location events (Hub Security without
        # credentials in the app, or a transient failure): mode and HSM are then read directly.
        self.location_events_ok = True
        self.rules: dict[str, HubitatRule] = {}
        self.full_inventories = 0
        self._loaded = False
        self._version = 0
        self._structure = 0
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
        if self.data is not None:
            self.data = replace(self.data, changed=None if everyone else frozenset(dirty or ()))
        super().async_update_listeners()

    def changed_devices(self) -> frozenset[str] | None:
        """The device keys the last notification was about; None: all of them."""
        data: HubitatData | None = self.data
        return None if data is None else data.changed

    # -- helpers for entities and writes ------------------------------------------------------

    def request_sweep(self) -> None:
        """Make the next poll also list ids, rules, modes and hub facts (bench/hubitat.py)."""
        self._last_sweep = None

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
        changed, structural = await (self._load() if not self._loaded else self._poll())
        if structural:
            self._structure += 1
            self.mark_all()
        if changed or structural or self.data is None:
            self._version += 1
            return HubitatData(self._version, self._structure)
        return self.data

    async def _load(self) -> tuple[bool, bool]:
        """Everything, once: tools, hub, full inventory, modes, HSM, rules."""
        await self.api.detect_layout()
        self.hub = await self.api.get_info()
        expected = self.config_entry.unique_id
        # Only a hub id on both sides proves another hub (entries made while the hub gave no
        # zigbeeId have none to compare; an old entry may hold the placeholder "unavailable").
        if (
            expected is not None
            and self.hub.id is not None
            and expected.lower() != "unavailable"
            and self.hub.id != expected
        ):
            # Another hub now answers at this address: its devices must not replace ours.
            raise ConfigEntryError(
                translation_domain=DOMAIN,
                translation_key="hubitat_other_hub",
                translation_placeholders={"found": self.hub.id},
            )
        await self._full_inventory()
        await self._read_modes()
        await self._read_hsm()
        await self._read_rules()
        await self._bookmark_location()
        self._last_sweep = dt_util.utcnow()
        self._loaded = True
        return True, True

    async def _poll(self) -> tuple[bool, bool]:
        """What changed since the last poll; a sweep now and then."""
        # As for devices: only reads sent from here on can confirm mode or HSM values shown
        # so far; one applied while this poll is on the wire waits for the next poll.
        settle = dict(self._unconfirmed_location)
        reads = dict(self._location_reads)
        changed, structural = await self._poll_devices()
        if await self._poll_location():
            changed = True
        now = dt_util.utcnow()
        if self._last_sweep is None or now - self._last_sweep >= SWEEP_INTERVAL:
            sweep_changed, sweep_structural = await self._sweep()
            self._last_sweep = now
            changed = changed or sweep_changed
            structural = structural or sweep_structural
        if await self._settle_location(
            [key for key in settle if self._location_reads[key] == reads[key]]
        ):
            changed = True
        for key, order in settle.items():
            if self._unconfirmed_location.get(key) == order:
                del self._unconfirmed_location[key]
        return changed, structural

    async def _full_inventory(self) -> None:
        page = await self.api.list_devices()
        self.full_inventories += 1
        self.devices = {device.id: self._adopt(device) for device in page.devices}
        self._advance_bookmark(device.last_activity for device in page.devices)

    async def _poll_devices(self) -> tuple[bool, bool]:
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
        changed = structural = False
        for fresh in page.devices:
            old = self.devices.get(fresh.id)
            if old is None:
                self.devices[fresh.id] = self._adopt(fresh)
                structural = changed = True
                continue
            moved, reshaped = self._take(old, fresh)
            changed = changed or moved
            structural = structural or reshaped
            if (
                old.capabilities & BUTTON_CAPABILITIES
                and since is not None
                and await self._read_button_events(old, since)
            ):
                self.mark(old.id)
                changed = True
        newest = self._newest_activity
        self._advance_bookmark(device.last_activity for device in page.devices)
        if completes and newest is not None and self._newest_activity == newest:
            self._newest_complete = True
        listed = {device.id for device in page.devices}
        moved, reshaped = await self._settle(
            [device_id for device_id in settle if device_id not in listed]
        )
        for device_id, order in settle.items():
            if self._unconfirmed.get(device_id) == order:
                del self._unconfirmed[device_id]
        return changed or moved, structural or reshaped

    async def _settle(self, device_ids: list[str]) -> tuple[bool, bool]:
        """Read devices whose optimistic state the listing did not confirm.

        The bookmark can already be past a commanded device's activity (a poll read its final
        state before the command's answer applied the optimistic one), so `changedSince` would
        never list it again. These reads do not move the bookmark: activity of other devices
        between the listing and them would be skipped.
        """
        changed = structural = False
        wanted = [device_id for device_id in device_ids if device_id in self.devices]
        if not wanted:
            return False, False
        if len(wanted) > _MAX_SINGLE_FETCHES:
            page = await self.api.list_devices()
            fresh_devices = [device for device in page.devices if device.id in wanted]
        else:
            fresh_devices = []
            for device_id in sorted(wanted):
                try:
                    fresh_devices.append(await self.api.get_device(device_id))
                except (McpToolError, McpRpcError) as err:
                    # Gone from the hub: the next sweep removes it.
                    _LOGGER.debug("Device %s could not be read: %s", device_id, err)
        for fresh in fresh_devices:
            if (old := self.devices.get(fresh.id)) is not None:
                moved, reshaped = self._take(old, fresh)
                changed = changed or moved
                structural = structural or reshaped
        return changed, structural

    def _take(self, old: HubitatDevice, fresh: HubitatDevice) -> tuple[bool, bool]:
        """Merge a fresh reading into the device entities hold: (state moved, shape changed)."""
        reshaped = old.structure() != fresh.structure()
        moved = _merge(old, fresh)
        if moved:
            self.mark(old.id)
        return moved, reshaped

    async def _read_button_events(self, device: HubitatDevice, since: str) -> bool:
        events = await self.api.list_events(device_id=device.id, since=since)
        known = {event.marker for event in device.events}
        added = False
        for event in events:
            if event.name in BUTTON_EVENTS and event.marker not in known:
                device.events.append(event)
                added = True
        return added

    async def _poll_location(self) -> bool:
        """Mode and HSM changes, from the location's event stream (or read directly)."""
        if not self.location_events_ok:
            return await self._read_location_directly()
        try:
            if self._location_since is None:
                # No location event existed yet: whatever shows up now is new.
                events = await self.api.list_events(limit=10)
            else:
                events = await self.api.list_events(since=self._location_since)
        except HubitatUnavailableError as err:
            self._location_events_failed(err)
            return await self._read_location_directly()
        if not events:
            return False
        self._location_since = newest([self._location_since, *(e.date for e in events)])
        return await self._apply_location(events)

    async def _settle_location(self, keys: list[str]) -> bool:
        """Read mode or HSM still showing a command's value that no read of this poll checked.

        A poll can have read the location's events (and the hub's value) before the command's
        answer applied ours; no later event would ever correct it.
        """
        if not keys:
            return False
        before = (self.modes, self.hsm)
        if _MODE in keys:
            await self._read_modes()
        if _HSM in keys:
            await self._read_hsm()
        if before == (self.modes, self.hsm):
            return False
        self.mark(HUB_DEVICE_KEY)
        return True

    async def _apply_location(self, events: list[DeviceEvent]) -> bool:
        names = {event.name for event in events}
        changed = False
        if names & _MODE_EVENTS:
            before = self.modes
            await self._read_modes()
            changed = changed or before != self.modes
        if names & _HSM_EVENTS:
            before_hsm = self.hsm
            await self._read_hsm()
            changed = changed or before_hsm != self.hsm
        if changed:
            self.mark(HUB_DEVICE_KEY)
        return changed

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

    async def _read_location_directly(self) -> bool:
        """Read mode and HSM themselves (two small reads instead of one event read)."""
        before = (self.modes, self.hsm)
        await self._read_modes()
        await self._read_hsm()
        if before == (self.modes, self.hsm):
            return False
        self.mark(HUB_DEVICE_KEY)
        return True

    async def _sweep(self) -> tuple[bool, bool]:
        """Additions/removals by id, rules, modes and hub facts."""
        structural = False
        ids = await self.api.list_device_ids()
        gone = set(self.devices) - ids
        new = ids - set(self.devices)
        for device_id in gone:
            _LOGGER.debug("Device %s is gone from the hub", device_id)
            del self.devices[device_id]
        if len(new) > _MAX_SINGLE_FETCHES:
            await self._full_inventory()
        else:
            for device_id in sorted(new):
                device = await self.api.get_device(device_id)
                self.devices[device.id] = self._adopt(device)
        structural = bool(gone or new)
        before_rules = self.rules
        await self._read_rules()
        if {r.id: (r.name,) for r in before_rules.values()} != {
            r.id: (r.name,) for r in self.rules.values()
        }:
            structural = True
        if before_rules != self.rules:
            self.mark(*(rule_device_key(rule_id) for rule_id in self.rules))
        changed = structural or before_rules != self.rules
        before_modes = self.modes
        await self._read_modes()
        if before_modes.names != self.modes.names:
            structural = True
        changed = changed or before_modes != self.modes
        if before_modes != self.modes:
            self.mark(HUB_DEVICE_KEY)
        if not self.location_events_ok:
            await self._bookmark_location()  # back to events once the hub reads them again
        hsm_before = self.hsm_supported
        await self._read_hsm(probe=True)
        if hsm_before != self.hsm_supported:
            structural = changed = True
        hub = await self.api.get_info()
        if hub.raw != (self.hub.raw if self.hub else None):
            self.mark(HUB_DEVICE_KEY)
            changed = True
        if self.hub is not None and (hub.name, hub.firmware) != (self.hub.name, self.hub.firmware):
            structural = True
        self.hub = hub
        return changed, structural

    async def _read_modes(self) -> None:
        self.modes = await self.api.list_modes()
        self._location_reads[_MODE] += 1

    async def _read_hsm(self, *, probe: bool = False) -> None:
        """HSM's state; `probe` also asks a hub that had none (HSM may have been installed)."""
        if not self.hsm_supported and not probe:
            return
        try:
            self.hsm = await self.api.get_hsm()
            self._location_reads[_HSM] += 1
        except McpToolError as err:
            _LOGGER.debug("HSM is not available on this hub: %s", err)
            self.hsm = HsmStatus(status=None)
        # libraries/mcp-system-lib.groovy toolGetHsmStatus: status null without HSM (an
        # optional hub app); then there is no alarm panel to show.
        self.hsm_supported = self.hsm.status is not None

    async def _read_rules(self) -> None:
        self.rules = {rule.id: rule for rule in await self.api.list_rules()}

    def _adopt(self, device: HubitatDevice) -> HubitatDevice:
        """Give a new device what the hub reports once for all (its temperature scale)."""
        device.temperature_scale = self.hub.temperature_scale if self.hub else None
        return device

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
        if (device := self.devices.get(device_id)) is not None:
            device.attributes.update(attributes)
            self.mark(device_id)
            if attributes:
                self._applied += 1
                self._unconfirmed[device_id] = self._applied

    def apply_mode(self, mode: str) -> None:
        """Show an activated mode at once; the next poll reads the hub's mode."""
        self.modes = Modes(current=mode, names=self.modes.names)
        self._pending_location(_MODE)

    def apply_hsm(self, status: str) -> None:
        """Show an arm or disarm command's status at once; the next poll reads the hub's."""
        self.hsm = HsmStatus(status=status)
        self._pending_location(_HSM)

    def _pending_location(self, key: str) -> None:
        self.mark(HUB_DEVICE_KEY)
        self._applied += 1
        self._unconfirmed_location[key] = self._applied

    def set_rule_paused(self, rule_id: str, paused: bool) -> None:
        """Optimistic pause state of a rule."""
        if (rule := self.rules.get(rule_id)) is not None:
            self.rules[rule_id] = HubitatRule(
                id=rule.id, name=rule.name, paused=paused, disabled=rule.disabled, type=rule.type
            )
            self.mark(rule_device_key(rule_id))


def _merge(old: HubitatDevice, fresh: HubitatDevice) -> bool:
    """Take the fresh listing's facts into the object entities hold; True if anything moved."""
    changed = False
    names: tuple[str, ...] = ("label", "name", "room", "capabilities", "commands")
    if fresh.listing:  # hub_get_device carries no disabled or parent: keep what listings said
        names += ("disabled", "parent_id")
    for name in names:
        value = getattr(fresh, name)
        if getattr(old, name) != value:
            setattr(old, name, value)
            changed = True
    if old.attributes != fresh.attributes:
        old.attributes.clear()
        old.attributes.update(fresh.attributes)
        changed = True
    old.last_activity = fresh.last_activity or old.last_activity
    return changed
