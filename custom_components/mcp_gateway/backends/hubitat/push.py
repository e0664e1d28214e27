"""Live updates from the hub: its rules call a webhook, HA reads what changed at once.

With the user's consent (the entry's `hubitat_push` option), the entry keeps a few rules of
the MCP app's custom rule engine on the hub (push_rules.py) that POST to a local-only webhook
with a secret id. A call starts one debounced incremental read (`HubitatCoordinator.
async_read_changes`): a burst of calls is one read, a call during a read one more read after
it, and reads start at most once per debounce window. The read asks the hub, never the body;
the body only tells the rules' calls (they carry the entry's push key) from forged ones, which
cost no read and change nothing HA believes about push. Every call is answered with a small
JSON body: the hub parses the answer by the request's content type.

Polling never stops. While push is healthy it slows to a safety poll; it returns to the user's
interval whenever push is off, cannot be set up (engine off, no write permission, no URL the
hub can reach) or breaks (the hub's loop guard disabled a rule, a rule went missing, or a poll
found a change no call announced). A repair issue says why; the next call or check recovers.
Nothing is lost meanwhile: the reads and the polls share one bookmark.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
import hmac
import json
import logging
import secrets
import time
from typing import Any, Final

import aiohttp
from aiohttp import web
from homeassistant.components import webhook
from homeassistant.components.sensor import SensorDeviceClass
from homeassistant.const import EntityCategory, Platform
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.event import async_track_time_interval
from homeassistant.helpers.network import NoURLAvailableError, get_url
from homeassistant.util import dt as dt_util
from yarl import URL

from ...core.const import DOMAIN
from ...framework.base import McpGatewayConfigEntry
from ...framework.entity import DeviceSpec, EntitySpec
from ...mcp.errors import McpError, McpRpcError
from ...platforms.sensor import GatewaySensorDescription
from .api import DeviceEvent, HubitatApi, HubitatDevice, parse_time
from .const import CONF_PUSH, CONF_WEBHOOK_ID, HUB_DEVICE_KEY, ISSUE_PUSH, SWEEP_INTERVAL
from .coordinator import HubitatCoordinator
from .push_rules import PushRule, is_ours, plan_rules, pushed_attributes

_LOGGER = logging.getLogger(__name__)

MODE_PUSH: Final = "push"
MODE_POLLING: Final = "polling"
# Why polling runs (None while push is healthy). The problems have a repair issue each.
REASON_NOT_ENABLED: Final = "not_enabled"
REASON_STARTING: Final = "starting"
REASON_ENGINE_OFF: Final = "engine_off"
REASON_NO_WRITE: Final = "no_write"
REASON_NO_URL: Final = "no_url"
REASON_SETUP_FAILED: Final = "setup_failed"
REASON_LOOP_GUARD: Final = "loop_guard"
REASON_NO_CALLS: Final = "no_calls"
REASON_CERTIFICATE: Final = "certificate"
PROBLEMS: Final = (
    *(REASON_ENGINE_OFF, REASON_NO_WRITE, REASON_NO_URL, REASON_CERTIFICATE),
    *(REASON_SETUP_FAILED, REASON_LOOP_GUARD, REASON_NO_CALLS),
)
# The repair issue of rules left on the hub after push was turned off (the engine refused).
ISSUE_LEFTOVER: Final = "hubitat_push_leftover"
# entry.data: the secret every rule's body carries (the webhook id alone may leak).
CONF_PUSH_KEY: Final = "push_key"

# The poll while push is healthy: catches what no rule reports (power meters, a lost call).
SAFETY_POLL_INTERVAL: Final = timedelta(seconds=60)
# How long a burst of calls is gathered into one read (seconds).
DEBOUNCE: Final = 0.05
# Reads start at most once in this window (seconds), however many calls arrive.
READ_WINDOW: Final = 0.25
# A change older than this that only a poll found was missed by push.
MISSED_AFTER: Final = timedelta(seconds=5)
# After the hub's loop guard disabled a rule: enable it again after this long (past the
# longest window the hub's setting allows, 300 s), doubling for each trip in a row of the same
# rule up to a day: a person's burst of toggles costs minutes of push, and a rule that keeps
# tripping notifies the owner's phones (notifyLoopGuard) ever more rarely.
LOOP_GUARD_RETRY: Final = timedelta(minutes=10)
LOOP_GUARD_RETRY_MAX: Final = timedelta(days=1)
# A rule that stayed enabled this long after a trip starts its backoff afresh.
LOOP_GUARD_CALM: Final = timedelta(days=1)
# The body of a call; more is never read.
MAX_BODY: Final = 1024
# hubitat-mcp-rule.groovy notifyLoopGuard: the location event a disabled rule sends.
LOOP_GUARD_EVENT: Final = "mcpLoopGuard"


class DebouncedReader:
    """Runs `read` once for a burst of pokes; a poke during a read runs it once more after."""

    def __init__(
        self, hass: HomeAssistant, read: Callable[[], Coroutine[Any, Any, None]], delay: float
    ) -> None:
        self._hass = hass
        self._read = read
        self._delay = delay
        self._pending = False
        self._task: asyncio.Task[None] | None = None
        self._last_start = -READ_WINDOW
        self.reads = 0

    @callback
    def poke(self) -> None:
        """Something changed on the hub: read soon (once for everything until then)."""
        self._pending = True
        if self._task is None or self._task.done():
            self._task = self._hass.async_create_background_task(
                self._run(), "mcp_gateway hubitat push read"
            )

    async def _run(self) -> None:
        while self._pending:
            spacing = self._last_start + READ_WINDOW - time.monotonic()
            await asyncio.sleep(max(self._delay, spacing))
            self._pending = False
            self.reads += 1
            self._last_start = time.monotonic()
            await self._read()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()


@dataclass(slots=True)
class _Trip:
    """A rule the hub's loop guard disabled: when to enable it, and its trips in a row."""

    retry_at: datetime
    streak: int
    enabled_at: datetime | None = None


class HubitatPush:
    """The push channel of one hub entry: webhook, hub-side rules, mode, reads."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry: McpGatewayConfigEntry,
        coordinator: HubitatCoordinator,
        api: HubitatApi,
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.coordinator = coordinator
        self.api = api
        self.consented = bool(entry.options.get(CONF_PUSH, False))
        self.poll_interval = coordinator.update_interval or SAFETY_POLL_INTERVAL
        self.mode = MODE_POLLING
        self.reason: str | None = REASON_STARTING if self.consented else REASON_NOT_ENABLED
        # What names this entry's rules on the hub (entry ids are unique per HA).
        self.marker = entry.entry_id[-6:].lower()
        self.rules: dict[str, str] = {}  # name -> rule id on the hub
        self.pushed: dict[str, frozenset[str]] = {}  # device id -> attributes its rule reports
        self.calls = 0
        self.forged = 0
        self.read_failures = 0
        self.last_call: datetime | None = None
        self.leftover: list[str] = []
        self._reader = DebouncedReader(hass, self._async_read, DEBOUNCE)
        self._sync_lock = asyncio.Lock()
        self._trips: dict[str, _Trip] = {}
        self._guards_seen: set[str] = set()
        self._key: str = str(entry.data.get(CONF_PUSH_KEY) or "")
        self._unsubscribe: list[CALLBACK_TYPE] = []
        self._webhook_id: str | None = None
        # The coordinator's structure the rules were last made for.
        self._structure: int | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    async def async_start(self) -> None:
        """Set push up if the user agreed; otherwise remove what an earlier consent made."""
        if not self.consented:
            ir.async_delete_issue(self.hass, DOMAIN, self._issue_id)
            if CONF_WEBHOOK_ID in self.entry.data:
                await self._async_withdraw()
            return
        webhook_id = self.entry.data.get(CONF_WEBHOOK_ID)
        if not isinstance(webhook_id, str) or not webhook_id or not self._key:
            # Stored before the entry's update listener exists: this does not reload it.
            webhook_id = webhook_id or webhook.async_generate_id()
            self._key = self._key or secrets.token_urlsafe(18)
            self.hass.config_entries.async_update_entry(
                self.entry,
                data={**self.entry.data, CONF_WEBHOOK_ID: webhook_id, CONF_PUSH_KEY: self._key},
            )
        self._register(webhook_id)
        self.coordinator.location_listener = self._on_location_events
        self.coordinator.poll_listener = self._on_polled
        self._unsubscribe.append(self.coordinator.async_add_listener(self._on_update))
        self._unsubscribe.append(
            async_track_time_interval(self.hass, self._async_check, SWEEP_INTERVAL)
        )
        await self.async_sync()

    def _register(self, webhook_id: str) -> None:
        self._webhook_id = webhook_id
        webhook.async_register(
            self.hass,
            DOMAIN,
            f"Hubitat {self.entry.title}",
            webhook_id,
            self._async_handle_webhook,
            local_only=True,
            allowed_methods=("POST",),
        )

    async def async_stop(self) -> None:
        """Stop listening (the hub's rules stay for the next start)."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
        self._reader.cancel()
        if self._webhook_id is not None:
            webhook.async_unregister(self.hass, self._webhook_id)
            self._webhook_id = None
        self.coordinator.location_listener = None
        self.coordinator.poll_listener = None

    async def _async_withdraw(self, _now: datetime | None = None) -> None:
        """Push was turned off: delete this entry's rules, then forget the webhook id.

        With the engine off the hub refuses to delete them (and may refuse to disable them):
        they would go on posting to HA at every change. Until they are gone, the webhook stays
        and answers them without reading anything, a repair issue names them, and every check
        tries again.
        """
        try:
            remaining = await async_remove_rules(self.api, self.marker)
        except McpError as err:
            _LOGGER.warning("Could not remove the hub's live-update rules: %s", err)
            remaining = self.leftover or ["?"]
        self.leftover = remaining
        issue_id = f"{ISSUE_LEFTOVER}_{self.entry.entry_id}"
        if remaining:
            if self._webhook_id is None:
                self._register(str(self.entry.data[CONF_WEBHOOK_ID]))
                self._unsubscribe.append(
                    async_track_time_interval(self.hass, self._async_withdraw, SWEEP_INTERVAL)
                )
            ir.async_create_issue(
                self.hass,
                DOMAIN,
                issue_id,
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=ISSUE_LEFTOVER,
                translation_placeholders={"name": self.entry.title, "rules": ", ".join(remaining)},
            )
            return
        ir.async_delete_issue(self.hass, DOMAIN, issue_id)
        if self._webhook_id is not None:
            await self.async_stop()
        data = {
            k: v for k, v in self.entry.data.items() if k not in (CONF_WEBHOOK_ID, CONF_PUSH_KEY)
        }
        self.hass.config_entries.async_update_entry(self.entry, data=data)

    # -- the hub-side rules ------------------------------------------------------------------

    def webhook_url(self) -> str | None:
        """Where the hub's rules post: HA's internal URL (the hub is on the local network)."""
        if self._webhook_id is None:
            return None
        try:
            base = get_url(self.hass, allow_external=False, allow_cloud=False)
        except NoURLAvailableError:
            return None
        return f"{base}{webhook.async_generate_path(self._webhook_id)}"

    async def async_sync(self) -> None:
        """Make the hub's rules match the devices; the mode follows from what worked."""
        async with self._sync_lock:
            reason = await self._async_sync()
        if reason is None:
            self._set_mode(MODE_PUSH, None)
        else:
            self._set_mode(MODE_POLLING, reason)

    async def _async_sync(self) -> str | None:
        """Create, update or delete rules; None when push runs, else why it cannot."""
        url = self.webhook_url()
        if url is None:
            return REASON_NO_URL
        if URL(url).scheme == "https" and not await self._async_probe(url):
            return REASON_CERTIFICATE
        plan = plan_rules(self.coordinator.data.devices.values(), url, self.marker, self._key)
        try:
            hub = self.coordinator.data.hub.raw
            if hub.get("writeEnabled") is False or hub.get("customRuleEngineEnabled") is not True:
                # The user may have just changed it: ask again (the sweep's copy may be old).
                hub = (await self.api.get_info()).raw
            if hub.get("writeEnabled") is False:
                return REASON_NO_WRITE
            existing = {
                str(rule["name"]): rule
                for rule in await self.api.list_custom_rules()
                if is_ours(rule.get("name"), self.marker)
            }
            if hub.get("customRuleEngineEnabled") is not True and _changes(plan, existing):
                # Read-only mode: the hub refuses creating, changing and deleting rules.
                return REASON_ENGINE_OFF
            tripped = self._note_trips(existing)
            self.rules = await self._async_apply(plan, existing, tripped)
        except McpRpcError as err:
            _LOGGER.warning("The hub refused the live-update rules: %s", err.message)
            return REASON_ENGINE_OFF if "Custom Rule Engine" in err.message else REASON_SETUP_FAILED
        except McpError as err:
            _LOGGER.warning("Could not set up the hub's live-update rules: %s", err)
            return REASON_SETUP_FAILED
        self.pushed = {
            device.id: pushed_attributes(device)
            for device in self.coordinator.data.devices.values()
        }
        self._structure = self.coordinator.data.structure
        return REASON_LOOP_GUARD if tripped else None

    async def _async_probe(self, url: str) -> bool:
        """Whether HA's https address passes a certificate check, as the hub's must.

        The hub's http_request (hubitat-mcp-rule.groovy executeAction: httpPost) has no way
        to skip the check: a self-signed certificate, or one for another name than the
        address, fails every call. The probe posts to the webhook itself (answered without
        a read); only a certificate failure counts, other errors are the hub's to find.
        """
        session = async_get_clientsession(self.hass, verify_ssl=True)
        try:
            async with session.post(
                url, json={"probe": True}, timeout=aiohttp.ClientTimeout(total=10)
            ) as response:
                await response.read()
        except (aiohttp.ClientConnectorCertificateError, aiohttp.ClientSSLError) as err:
            _LOGGER.warning("The hub cannot verify Home Assistant's certificate: %s", err)
            return False
        except (aiohttp.ClientError, TimeoutError):
            return True
        return True

    def _note_trips(self, existing: Mapping[str, Mapping[str, Any]]) -> set[str]:
        """Our rules the loop guard disabled and that stay so for now (their names).

        A rule of ours is disabled only by the hub's loop guard (we never disable one): seen
        here even where no location event tells (Hub Security keeps them from the app).
        """
        now = dt_util.utcnow()
        waiting: set[str] = set()
        for name, found in existing.items():
            trip = self._trips.get(name)
            if found.get("enabled") is True:
                if trip is not None and trip.enabled_at and now - trip.enabled_at > LOOP_GUARD_CALM:
                    del self._trips[name]
                continue
            if trip is None or trip.enabled_at is not None:
                self._trip(name)
                trip = self._trips[name]
            if now < trip.retry_at:
                waiting.add(name)
        return waiting

    def _trip(self, name: str) -> None:
        """The loop guard disabled `name`: when to enable it again (backing off)."""
        old = self._trips.get(name)
        streak = old.streak + 1 if old is not None else 1
        delay = min(LOOP_GUARD_RETRY * 2 ** (streak - 1), LOOP_GUARD_RETRY_MAX)
        self._trips[name] = _Trip(dt_util.utcnow() + delay, streak)
        _LOGGER.warning(
            "The hub disabled its rule %r (it ran more often than its loop guard allows); "
            "polling, and enabling it again in %s",
            name,
            delay,
        )

    async def _async_apply(
        self,
        plan: list[PushRule],
        existing: Mapping[str, Mapping[str, Any]],
        tripped: set[str],
    ) -> dict[str, str]:
        rules: dict[str, str] = {}
        for rule in plan:
            found = existing.get(rule.name)
            if found is None:
                rules[rule.name] = await self.api.create_custom_rule(rule.arguments())
                continue
            rule_id = str(found["id"])
            enabled = rule.name not in tripped
            if found.get("description") != rule.description:
                arguments = rule.arguments()
                changes = {k: arguments[k] for k in ("description", "triggers", "actions")}
                await self.api.update_custom_rule(rule_id, {**changes, "enabled": enabled})
            elif found.get("enabled") is not True and enabled:
                await self.api.update_custom_rule(rule_id, {"enabled": True})
            if enabled and (trip := self._trips.get(rule.name)) is not None:
                trip.enabled_at = trip.enabled_at or dt_util.utcnow()
            rules[rule.name] = rule_id
        planned = {rule.name for rule in plan}
        for name, found in existing.items():
            if name not in planned:
                await self.api.delete_custom_rule(str(found["id"]))
        return rules

    # -- calls and reads ---------------------------------------------------------------------

    async def _async_handle_webhook(
        self, hass: HomeAssistant, webhook_id: str, request: web.Request
    ) -> web.Response:
        """A rule fired on the hub: read what changed (soon, once for a burst).

        Only a call with the entry's key counts; anything else (a probe, a forged or stale
        call) is answered alike and costs nothing.
        """
        body = await request.content.read(MAX_BODY)
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        key = data.get("key") if isinstance(data, dict) else None
        if not (isinstance(key, str) and self._key and hmac.compare_digest(key, self._key)):
            if not (isinstance(data, dict) and data.get("probe") is True):
                self.forged += 1
            return web.json_response({"ok": True})
        self.calls += 1
        self.last_call = dt_util.utcnow()
        if not self.consented:
            return web.json_response({"ok": True})  # rules left over; being removed
        if self.reason == REASON_NO_CALLS:
            _LOGGER.info("The hub's live-update calls reach Home Assistant again")
            self._set_mode(MODE_PUSH, None)
        self._reader.poke()
        return web.json_response({"ok": True})

    async def _async_read(self) -> None:
        try:
            await self.coordinator.async_read_changes()
        except McpError as err:
            # The scheduled polls carry on (and report the hub unreachable if it stays so).
            self.read_failures += 1
            _LOGGER.debug("Reading the hub's changes after a call failed: %s", err)

    @property
    def reads(self) -> int:
        return self._reader.reads

    # -- noticing that push broke ------------------------------------------------------------

    @callback
    def _on_location_events(self, events: list[DeviceEvent]) -> None:
        """The hub's loop guard disabled one of our rules (it names the rule)."""
        for event in events:
            if (
                event.name == LOOP_GUARD_EVENT
                and is_ours(event.value, self.marker)
                and event.marker not in self._guards_seen
            ):
                self._guards_seen.add(event.marker)
                trip = self._trips.get(event.value)
                if trip is None or trip.enabled_at is not None:
                    self._trip(event.value)
                self._set_mode(MODE_POLLING, REASON_LOOP_GUARD)

    @callback
    def _on_polled(
        self, before: Mapping[str, HubitatDevice], after: Mapping[str, HubitatDevice]
    ) -> None:
        """A scheduled poll found a change a rule reports, well after it happened: missed."""
        if self.mode != MODE_PUSH or before is after:
            return
        limit = dt_util.utcnow() - MISSED_AFTER
        for device_id, device in after.items():
            old = before.get(device_id)
            reported = self.pushed.get(device_id)
            if old is None or old is device or not reported:
                continue
            changed = {
                name for name in reported if old.attributes.get(name) != device.attributes.get(name)
            }
            when = parse_time(device.last_activity)
            if changed and when is not None and when < limit:
                _LOGGER.warning(
                    "A poll found changes the hub's live-update rules did not announce; "
                    "polling until their calls arrive again"
                )
                self._set_mode(MODE_POLLING, REASON_NO_CALLS)
                return

    @callback
    def _on_update(self) -> None:
        """Devices came, went or changed shape: the rules follow (their device lists)."""
        data = self.coordinator.data
        if data is None or self.mode != MODE_PUSH or data.structure == self._structure:
            return
        self._structure = data.structure
        self.hass.async_create_background_task(self.async_sync(), "mcp_gateway hubitat push rules")

    async def _async_check(self, now: datetime) -> None:
        """Every few minutes: set push up once it can be, and keep its rules in place.

        While calls are missing, only look whether the loop guard disabled a rule (under Hub
        Security no location event says so); the next call ends the rest.
        """
        if self.reason == REASON_NO_CALLS:
            try:
                rules = await self.api.list_custom_rules()
            except McpError:
                return
            ours = {str(r["name"]): r for r in rules if is_ours(r.get("name"), self.marker)}
            if not self._note_trips(ours) and not any(
                r.get("enabled") is not True for r in ours.values()
            ):
                return
        pending = [trip for trip in self._trips.values() if trip.enabled_at is None]
        if self.reason == REASON_LOOP_GUARD and pending and all(now < t.retry_at for t in pending):
            return
        await self.async_sync()

    # -- mode --------------------------------------------------------------------------------

    @property
    def _issue_id(self) -> str:
        return f"{ISSUE_PUSH}_{self.entry.entry_id}"

    def _set_mode(self, mode: str, reason: str | None) -> None:
        changed = (mode, reason) != (self.mode, self.reason)
        self.mode, self.reason = mode, reason
        self.coordinator.update_interval = (
            max(SAFETY_POLL_INTERVAL, self.poll_interval)
            if mode == MODE_PUSH
            else self.poll_interval
        )
        if reason in PROBLEMS:
            ir.async_create_issue(
                self.hass,
                DOMAIN,
                self._issue_id,
                is_fixable=False,
                severity=ir.IssueSeverity.WARNING,
                translation_key=f"{ISSUE_PUSH}_{reason}",
                translation_placeholders={
                    "name": self.entry.title,
                    "url": self._base_url() or "-",
                },
            )
        else:
            ir.async_delete_issue(self.hass, DOMAIN, self._issue_id)
        if changed:
            _LOGGER.info("Hubitat %s: %s (%s)", self.entry.title, mode, reason or "healthy")
            self.coordinator.mark(HUB_DEVICE_KEY)
            self.coordinator.async_update_listeners()

    def _base_url(self) -> str | None:
        """HA's address as the hub calls it, without the webhook's secret path."""
        url = self.webhook_url()
        return None if url is None else str(URL(url).origin())

    def status_spec(self, hub: DeviceSpec) -> EntitySpec:
        """The hub's diagnostic sensor saying which mode runs (and why, as an attribute)."""
        return EntitySpec(
            platform=Platform.SENSOR,
            key="hub_updates",
            device=hub,
            description=UPDATES,
            coordinator=self.coordinator,
            source=lambda: self,
        )

    def diagnostics(self) -> dict[str, Any]:
        """Mode and counters; the webhook's address without its secret id."""
        return {
            "consented": self.consented,
            "mode": self.mode,
            "reason": self.reason,
            "ha_address": self._base_url(),
            "rules": len(self.rules),
            "calls": self.calls,
            "forged_calls": self.forged,
            "reads": self.reads,
            "loop_guard_trips": {name: trip.streak for name, trip in self._trips.items()},
            "leftover_rules": len(self.leftover),
            "read_failures": self.read_failures,
            "last_call": self.last_call.isoformat() if self.last_call else None,
            "poll_interval": self.coordinator.update_interval.total_seconds()
            if self.coordinator.update_interval
            else None,
        }


UPDATES: Final = GatewaySensorDescription[HubitatPush](
    key="updates",
    translation_key="hubitat_updates",
    device_class=SensorDeviceClass.ENUM,
    options=[MODE_PUSH, MODE_POLLING],
    entity_category=EntityCategory.DIAGNOSTIC,
    value_fn=lambda push: push.mode,
    attributes_fn=lambda push: {"reason": push.reason},
)


def _changes(plan: list[PushRule], existing: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether the hub's rules differ from the plan in anything but being enabled."""
    if set(existing) != {rule.name for rule in plan}:
        return True
    return any(existing[rule.name].get("description") != rule.description for rule in plan)


async def async_remove_rules(api: HubitatApi, marker: str) -> list[str]:
    """Delete an entry's rules from the hub; the names of those it kept (engine off)."""
    remaining: list[str] = []
    for rule in await api.list_custom_rules():
        if not is_ours(rule.get("name"), marker):
            continue
        try:
            await api.delete_custom_rule(str(rule["id"]))
        except McpRpcError as err:
            _LOGGER.warning("The hub kept its rule %r: %s", rule.get("name"), err.message)
            remaining.append(str(rule.get("name")))
            if rule.get("enabled") is not False:
                # Read-only mode may still let it be disabled (toolUpdateRule: only `enabled`).
                with contextlib.suppress(McpRpcError):
                    await api.update_custom_rule(str(rule["id"]), {"enabled": False})
    return remaining
