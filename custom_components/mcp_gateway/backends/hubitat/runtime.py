"""The Hubitat backend's runtime: client, coordinator, write coalescer, entities, gateway hooks."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
import logging
import re
from typing import Any, ClassVar, Final, Self

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.helpers.selector import SelectOptionDict

from ...core.const import DOMAIN
from ...core.localtime import local_iso, localize_result
from ...core.settings import backend_answer_cap
from ...framework.base import (
    BackendHealth,
    BackendRuntime,
    CallConfirmation,
    CallEffect,
    McpGatewayConfigEntry,
    Shown,
    Silence,
    ToolClass,
)
from ...framework.entity import EntitySpec
from ...framework.publisher import EntityPublisher
from ...mcp.client import McpClient, QueryTokenAuth, ToolResult
from ...mcp.errors import McpError, McpProtocolError, McpRpcError
from . import const
from .api import (
    Command,
    HubitatApi,
    HubitatBusyError,
    HubitatKeyRefusedError,
    is_key_refusal,
    parse_event,
    parse_time,
)
from .coalescer import WriteCoalescer
from .confirm import async_confirm_commands, device_reading
from .const import (
    CONF_AS_LIGHT,
    CONF_AS_SWITCH,
    CONF_SCAN_INTERVAL,
    CONF_SEND_KEY,
    CONF_TOKEN,
    CONF_URL,
    CONF_WEBHOOK_ID,
    DEFAULT_SCAN_INTERVAL,
    EVENTS_LIMIT,
    ISSUE_KEY_REFUSED,
    KIND,
    MAX_WRITES_IN_FLIGHT,
    PLATFORMS,
    rule_device_key,
)
from .coordinator import HubitatCoordinator, HubitatData
from .effects import call_effect, controllable
from .entities import (
    EVENTS_TOOL,
    LOCATION_ATTRIBUTES,
    derive_specs,
    history_attribute,
    hub_device,
    is_light_capable,
    is_plain_switch,
)
from .push import HubitatPush, async_remove_rules
from .tools import (
    LISTINGS,
    call_class,
    canonical_id,
    classify,
    device_keys,
    entity_keys,
    filter_listing,
    is_write,
    resolve_device,
    rule_keys,
)

_LOGGER = logging.getLogger(__name__)

# The least time between two reads back after writes (each is one request to the hub).
READ_BACK_GAP: Final = 0.5
# The device key of "every device" before the first poll told us which there are.


class HubitatRuntime(BackendRuntime):
    """One Hubitat hub."""

    kind: ClassVar[str] = KIND
    platforms: ClassVar[tuple[Platform, ...]] = PLATFORMS
    reads_back: ClassVar[bool] = True
    repeats_core: ClassVar[frozenset[str]] = frozenset(
        {"hub_list_devices", "hub_get_device", "hub_list_device_events"}
    )

    def __init__(
        self, hass: HomeAssistant, entry: McpGatewayConfigEntry, client: McpClient
    ) -> None:
        super().__init__(hass, entry, client)
        options = entry.options
        self.api = HubitatApi(client, send_key=bool(options.get(CONF_SEND_KEY, True)))
        self.api.on_key_gate = self._key_gate
        interval = int(options.get(CONF_SCAN_INTERVAL, DEFAULT_SCAN_INTERVAL))
        self.coordinator = HubitatCoordinator(hass, entry, self.api, timedelta(seconds=interval))
        self.coalescer = WriteCoalescer(self.api.send_commands)
        self.as_switch = {str(v) for v in options.get(CONF_AS_SWITCH, [])}
        self.as_light = {str(v) for v in options.get(CONF_AS_LIGHT, [])}
        self.push = HubitatPush(hass, entry, self.coordinator, self.api)
        self.publisher = EntityPublisher(hass, self, self._derive)
        self._published_structure: int | None = None
        self._catalog: list[dict[str, Any]] | None = None
        self._catalog_gateways: tuple[str, ...] | None = None
        # The catalog by name: every call looks its tool up.
        self._tools: dict[str, dict[str, Any]] = {}
        self._route: dict[str, str] = {}  # sub-tool -> the gateway that reaches it
        # One read back at a time, shared by every write waiting for it, and not more often
        # than READ_BACK_GAP: twenty lights set at once cost a read, not twenty.
        self._read_back: asyncio.Task[None] | None = None
        self._read_back_at = 0.0

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: McpGatewayConfigEntry) -> Self:
        """A runtime with its client on HA's shared session (the hub caps writes at 2)."""
        client = McpClient(
            async_get_clientsession(hass),
            entry.data[CONF_URL],
            auth=QueryTokenAuth(entry.data[CONF_TOKEN]),
            timeout=const.REQUEST_TIMEOUT,
            limits={"write": MAX_WRITES_IN_FLIGHT},
            max_response_bytes=backend_answer_cap(hass),
        )
        return cls(hass, entry, client)

    async def async_setup(self) -> None:
        """Full inventory first; then follow the coordinator's updates."""
        await self.coordinator.async_config_entry_first_refresh()
        self.entry.async_on_unload(self.coordinator.async_add_listener(self._on_update))
        await self.push.async_start()

    @classmethod
    async def async_remove_entry(cls, hass: HomeAssistant, entry: McpGatewayConfigEntry) -> None:
        """Delete the entry's live-update rules from the hub (if push was ever set up)."""
        if CONF_WEBHOOK_ID not in entry.data:
            return
        runtime = cls.from_entry(hass, entry)
        try:
            remaining = await async_remove_rules(runtime.api, runtime.push.marker)
        except McpError as err:
            _LOGGER.warning(
                "Could not remove the live-update rules from the hub %s: %s", entry.title, err
            )
        else:
            if remaining:
                _LOGGER.warning(
                    "The hub %s kept its rules %s (its custom rule engine is off); delete them "
                    "in the MCP Rule Server app",
                    entry.title,
                    ", ".join(remaining),
                )
        finally:
            await runtime.client.close()

    async def async_shutdown(self) -> None:
        """Stop push, the write queue and end the client."""
        await self.push.async_stop()
        await self.coalescer.async_close()
        await super().async_shutdown()

    # -- entities ----------------------------------------------------------------------------

    def _derive(self) -> Iterable[EntitySpec]:
        self._published_structure = (
            self.coordinator.data.structure if self.coordinator.data else None
        )
        specs = derive_specs(
            self.coordinator, self.entry.data[CONF_URL], self.as_switch, self.as_light
        )
        if not self.push.consented:
            return specs
        hub = hub_device(self.coordinator.data.hub, self.entry.data[CONF_URL])
        return [*specs, self.push.status_spec(hub)]

    @callback
    def _on_update(self) -> None:
        """Re-derive entities only when devices or rules came, went or changed shape."""
        data: HubitatData | None = self.coordinator.data
        if data is not None and data.structure != self._published_structure:
            self.publisher.async_refresh()

    def override_choices(self) -> tuple[list[SelectOptionDict], list[SelectOptionDict]]:
        """Devices that are lights by default, and devices that are plain switches."""
        lights: list[SelectOptionDict] = []
        switches: list[SelectOptionDict] = []
        devices = self.coordinator.data.devices.values()
        for device in sorted(devices, key=lambda d: d.display_name):
            choice = SelectOptionDict(value=device.id, label=f"{device.display_name} ({device.id})")
            if is_light_capable(device):
                lights.append(choice)
            elif is_plain_switch(device):
                switches.append(choice)
        return lights, switches

    # -- writes used by entities -------------------------------------------------------------

    async def async_command(
        self, device_id: str, command: str, parameters: list[str], expect: Mapping[str, Any]
    ) -> None:
        """A device command through the coalescer, then its expected effect on our copy."""
        # What the command is sent against: a read that changes it before the answer comes
        # brought the device's own report, newer than the expectation.
        sent = self.coordinator.attributes(device_id, expect)
        with _busy_as_readable():
            await self.coalescer.submit(
                Command(device_id, command, tuple(parameters)),
                lambda: self.coordinator.apply(device_id, sent, **expect),
            )

    async def async_set_mode(self, mode: str) -> None:
        """Activate a location mode."""
        if mode not in self.coordinator.data.modes.names:
            raise ValueError(f"unknown mode {mode!r}")
        with _busy_as_readable():
            await self.api.set_mode(mode)
        self.coordinator.apply_mode(mode)

    async def async_set_hsm(self, command: str, expected_status: str) -> None:
        """Arm or disarm HSM; the hub applies it asynchronously, the next poll confirms."""
        with _busy_as_readable():
            await self.api.set_hsm(command)
        self.coordinator.apply_hsm(expected_status)

    async def async_set_rule_paused(self, rule_id: str, paused: bool) -> None:
        """Pause or resume a rule."""
        with _busy_as_readable():
            await self.api.set_rule_paused(rule_id, paused)
        self.coordinator.set_rule_paused(rule_id, paused)

    async def async_run_rule(self, rule_id: str) -> None:
        """Run a rule's actions."""
        with _busy_as_readable():
            await self.api.run_rule(rule_id)

    # -- the key gate ------------------------------------------------------------------------

    @callback
    def _key_gate(self, refusal: HubitatKeyRefusedError | None) -> None:
        """Raise a repair issue while the hub refuses our writes for the key; clear it after."""
        issue_id = f"{ISSUE_KEY_REFUSED}_{self.entry.entry_id}"
        if refusal is None:
            ir.async_delete_issue(self.hass, DOMAIN, issue_id)
            return
        _LOGGER.warning("The hub refused a write because of its best-practice key gate")
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key=ISSUE_KEY_REFUSED,
            translation_placeholders={
                "name": self.entry.title,
                "sending": "on" if self.api.send_key else "off",
            },
        )

    # -- gateway hooks -----------------------------------------------------------------------

    def device_reading(self, platform: Platform, key: str, unit: str) -> str | None:
        """A thermostat's or temperature sensor's values as the hub reports them, where its
        scale is not Home Assistant's (a hub in °F, HA in °C): in both units."""
        spec = self.publisher.spec(platform, key)
        data = self.coordinator.data
        device = None if spec is None else data.devices.get(spec.device.key)
        if device is None or platform not in (Platform.CLIMATE, Platform.SENSOR):
            return None
        return device_reading(
            device, unit, only="temperature" if platform is Platform.SENSOR else None
        )

    async def async_confirm_call(
        self, name: str, arguments: Mapping[str, Any], result: ToolResult
    ) -> CallConfirmation | None:
        """Device commands read back (confirm.py): the hub's success means only "sent"."""
        if name != "hub_call_device_command":
            return None
        return await async_confirm_commands(self.coordinator, arguments)

    def runs_actions(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """hub_call_rule that runs a rule (its default "rule", or "actions")."""
        return name == "hub_call_rule" and arguments.get("action") in (None, "rule", "actions")

    def awaits_report(self, platform: Platform, key: str) -> bool:
        """A device (or HSM, the mode) showing a command's expected effect, not yet read."""
        spec = self.publisher.spec(platform, key)
        return spec is not None and self.coordinator.awaits_report(spec.device.key, key)

    async def async_read_back(self) -> None:
        """What changed, read now: confirms or corrects the commands just sent."""
        if self._read_back is None or self._read_back.done():
            self._read_back = self.entry.async_create_background_task(
                self.hass, self._async_read_back(), "hubitat read back"
            )
        await asyncio.shield(self._read_back)

    async def _async_read_back(self) -> None:
        loop = self.hass.loop
        if (wait := self._read_back_at + READ_BACK_GAP - loop.time()) > 0:
            await asyncio.sleep(wait)
        self._read_back_at = loop.time()
        try:
            await self.coordinator.async_read_changes()
        except (McpError, HomeAssistantError) as err:
            # The scheduled polls go on; the write stays unconfirmed meanwhile.
            _LOGGER.debug("Reading back after a write failed: %s", err)

    def last_heard(self, platform: Platform, key: str) -> datetime | None:
        """When the hub last heard from the entity's device (its lastActivity)."""
        spec = self.publisher.spec(platform, key)
        return None if spec is None else self.coordinator.last_heard(spec.device.key)

    def silence(self, platform: Platform, key: str, now: datetime) -> Silence | None:
        """The entity's device silent for longer than its kind goes, or never heard from."""
        spec = self.publisher.spec(platform, key)
        return None if spec is None else self.coordinator.silence(spec.device.key, now)

    def silence_epoch(self) -> object | None:
        """The coordinator's snapshot token: silences hold while it is the same."""
        return self.coordinator.silence_epoch()

    def silence_until(
        self, platform: Platform, key: str, now: datetime
    ) -> tuple[Silence | None, datetime | None]:
        """`silence`, and when the clock alone may change it (None: not)."""
        spec = self.publisher.spec(platform, key)
        if spec is None:
            return None, now  # an entity the publisher does not know (yet): ask again
        return self.coordinator.silence_until(spec.device.key, now)

    async def async_list_tools(self) -> list[dict[str, Any]]:
        """All tools one level deep: core tools plus every gateway's sub-tools (cached)."""
        listed = await self.client.list_tools()
        gateways = tuple(sorted(str(t["name"]) for t in listed if _is_gateway(t)))
        if self._catalog is not None and gateways == self._catalog_gateways:
            return self._catalog
        catalog: dict[str, dict[str, Any]] = {}
        route: dict[str, str] = {}
        for tool in listed:
            if not _is_gateway(tool):
                catalog[str(tool["name"])] = dict(tool)
        for gateway in gateways:
            result = await self.client.call_tool(gateway, {}, kind="read")
            data = result.data
            if (
                result.is_error
                or not isinstance(data, dict)
                or not isinstance(data.get("tools"), list)
            ):
                raise McpProtocolError(f"{gateway}: no catalog")
            read_only = gateway.startswith("hub_read_")
            for sub in data["tools"]:
                if not isinstance(sub, dict) or not isinstance(sub.get("name"), str):
                    continue
                name = sub["name"]
                # Prefer a read-only gateway for reads: it works even with writes switched off.
                if name not in route or read_only:
                    route[name] = gateway
                if name not in catalog:
                    entry = dict(sub)
                    entry.setdefault("annotations", {"readOnlyHint": not is_write(entry)})
                    catalog[name] = entry
        self._catalog = [_for_ai(tool) for tool in catalog.values()]
        self._tools = dict(zip(catalog, self._catalog, strict=True))
        self._catalog_gateways = gateways
        self._route = route
        return self._catalog

    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call a tool by its flat name; sub-tools go through their gateway, writes get the key."""
        if self._catalog is None:
            await self.async_list_tools()
        tool = self._tools.get(name) or {"name": name}
        write = is_write(tool)
        args = self.api.with_key(arguments) if write else dict(arguments)
        gateway = self._route.get(name)
        call_name, call_args = (
            (name, args) if gateway is None else (gateway, {"tool": name, "args": args})
        )
        try:
            result = await self.client.call_tool(
                call_name, call_args, kind="write" if write else "read"
            )
        except McpRpcError as err:
            if write and is_key_refusal(err):
                self._key_gate(HubitatKeyRefusedError(err.code, err.message, err.data))
            raise
        if write:
            self._key_gate(None)
        # The hub writes its own zone (event dates as -0600): one clock for the model.
        return localize_result(result)

    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        """Read / control / admin from the classification table."""
        return classify(tool)

    def call_class(
        self, tool_class: ToolClass, name: str, arguments: Mapping[str, Any]
    ) -> ToolClass:
        """hub_manage_mode: activate is control, create/rename/delete admin (and confirmed)."""
        return call_class(tool_class, name, arguments)

    def entity_keys_in_call(
        self, name: str, arguments: Mapping[str, Any]
    ) -> list[tuple[Platform, str]]:
        """hub_set_hsm acts on the HSM panel, mode activation on the mode select."""
        return entity_keys(name, arguments)

    def call_effect(self, name: str, arguments: Mapping[str, Any]) -> CallEffect | None:
        """Device commands act on each device's controllable entity (the lock, not its
        battery), HSM commands on the panel; custom rules store their device actions."""
        data: HubitatData | None = self.coordinator.data
        publisher = self.publisher

        def entities(key: str) -> list[tuple[Platform, str]]:
            return [
                (spec.platform, spec.key)
                for spec in publisher.device_specs(key)
                if controllable(spec.platform)
            ]

        return call_effect(name, arguments, data.devices if data is not None else {}, entities)

    def lists_devices(self, name: str) -> bool:
        """Device lists, rooms and device health answer with devices: filtered per caller."""
        return name in LISTINGS

    def filter_listing(self, name: str, data: Any, shown: Shown) -> tuple[Any, int]:
        """The answer's devices (records, ids, context lines), HSM status and mode as shown."""
        return filter_listing(data, shown)

    def device_keys_in_call(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        """The devices a call addresses (deviceId, deviceIds, commands[].deviceId, a rule
        read's ruleId), resolved as the app resolves them: every device an address may reach
        (resolve_device)."""
        data: HubitatData | None = self.coordinator.data
        known = data.devices if data is not None else {}
        keys: list[str] = []
        for address in device_keys(arguments):
            keys.extend(key for key in resolve_device(known, address) if key not in keys)
        rules = data.rules if data is not None else {}
        for address in rule_keys(name, arguments):
            keys.extend(rule_device_key(key) for key in resolve_device(rules, address))
        return keys

    def call_subject(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """A call naming rules (hub_call_rule, pausing, a rule read): "rule <its name>"."""
        given = arguments.get("ruleId")
        if given in (None, "", []) or "rule" not in name:
            return None
        data: HubitatData | None = self.coordinator.data
        rules = data.rules if data is not None else {}
        names: list[str] = []
        for rule_id in given if isinstance(given, list) else [given]:
            key = canonical_id(rule_id) or str(rule_id)
            found = next((rules[k] for k in resolve_device(rules, key) if k in rules), None)
            names.append(found.name if found is not None else key)
        return f"rule{'s' if len(names) > 1 else ''} {', '.join(names)}"

    def history_call(self, spec: EntitySpec, start: datetime) -> tuple[str, dict[str, Any]] | None:
        """hub_list_device_events from `start` (the app's `since`: ISO with offset, events
        strictly after it): the device's events of the entity's attribute, or the location's
        mode and HSM events. At the app's largest `limit`: a device's history counts every
        attribute's events against it before keeping the attribute's (mcp-devices-lib.groovy
        toolGetDeviceHistory: eventsSince max, then the filter), so the default 100 may hold
        none of a chatty multi-sensor's motion."""
        args: dict[str, Any] = {"since": local_iso(start), "limit": EVENTS_LIMIT}
        if spec.key in LOCATION_ATTRIBUTES:
            return EVENTS_TOOL, {**args, "attribute": LOCATION_ATTRIBUTES[spec.key]}
        data: HubitatData | None = self.coordinator.data
        if data is None or spec.device.key not in data.devices:
            return None  # the hub itself, a rule: no event history of their own
        args["deviceId"] = spec.device.key
        if (attribute := history_attribute(spec.platform, spec.description.key)) is not None:
            args["attribute"] = attribute
        return EVENTS_TOOL, args

    def history_events(self, result: ToolResult) -> list[tuple[datetime, str]] | None:
        """hub_list_device_events' events; {success: false, error} (toolGetDeviceHistory when
        the hub cannot read a device's or the location's events) is a failure."""
        data = result.data if isinstance(result.data, dict) else {}
        if data.get("success") is False:
            raise ValueError(str(data.get("error") or "the hub could not read the events"))
        items = data.get("events")
        if not isinstance(items, list):
            items = None
        events: list[tuple[datetime, str]] = []
        for item in items or ():
            event = parse_event(item)
            when = parse_time(event.date) if event is not None else None
            if event is not None and when is not None:
                events.append((when, event.value))
        if items is None:
            raise ValueError("the hub's answer holds no events")
        return events

    def health(self) -> BackendHealth:
        """Reachability and what the hub told us."""
        coordinator = self.coordinator
        data: HubitatData | None = coordinator.data
        hub = data.hub if data is not None else None
        return BackendHealth(
            available=coordinator.last_update_success,
            protocol_version=self.client.protocol_version,
            latency_ms=coordinator.latency_ms,
            details={
                "devices": len(data.devices) if data is not None else 0,
                "rules": len(data.rules) if data is not None else 0,
                "hub_firmware": hub.firmware if hub else None,
                "server_version": hub.app_version if hub else None,
                "writes_in_flight": self.coalescer.in_flight,
                "updates": self.push.mode,
                "updates_reason": self.push.reason,
            },
        )

    def diagnostics(self) -> dict[str, Any]:
        """Hub facts (no location), device shapes, traffic and write-queue counters."""
        coordinator = self.coordinator
        data = coordinator.data
        stats = self.client.stats
        return {
            "hub": _without_personal(data.hub.raw),
            "server_info": self.client.server_info,
            "flat_tools": self.api.flat,
            "send_key": self.api.send_key,
            "devices": [
                {
                    "id": device.id,
                    "capabilities": sorted(device.capabilities),
                    "attributes": sorted(device.attributes),
                    "commands": sorted(device.commands),
                    "disabled": device.disabled,
                }
                for device in data.devices.values()
            ],
            "rules": len(data.rules),
            "modes": list(data.modes.names),
            "hsm_supported": data.hsm_supported,
            # The reads whose last attempt failed (their entities are unavailable).
            "failed_reads": sorted(data.failed),
            "events_failed": sorted(d.id for d in data.devices.values() if d.events_failed),
            "changed_since": coordinator.changed_since,
            "push": self.push.diagnostics(),
            "full_inventories": coordinator.full_inventories,
            "client": {
                "requests": stats.requests,
                "bytes_sent": stats.bytes_sent,
                "bytes_received": stats.bytes_received,
            },
            "writes": {
                "commands": self.coalescer.stats.commands,
                "calls": self.coalescer.stats.calls,
                "max_batch": self.coalescer.stats.max_batch,
                "max_in_flight": self.coalescer.stats.max_in_flight,
            },
        }


@contextmanager
def _busy_as_readable() -> Iterator[None]:
    """The hub's write-cap refusal as a translated message instead of its JSON."""
    try:
        yield
    except HubitatBusyError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="hubitat_busy",
            translation_placeholders={
                "limit": str(err.limit if err.limit is not None else MAX_WRITES_IN_FLIGHT),
                "active": str(err.active if err.active is not None else "?"),
            },
        ) from err


# What identifies a home or its network; diagnostics leave it out.
_PERSONAL = frozenset(
    {
        *("location", "macAddress", "localIP", "ip", "zipCode", "latitude", "longitude"),
        *("appId", "timeZone", "hubData"),
    }
)


def _without_personal(data: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the hub's facts without location and network identity, at any depth."""
    return {
        key: _without_personal(value) if isinstance(value, Mapping) else value
        for key, value in data.items()
        if key not in _PERSONAL
    }


def _is_gateway(tool: Mapping[str, Any]) -> bool:
    """Gateways take {tool, args}; core tools take their own arguments."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return (
        isinstance(properties, Mapping)
        and "tool" in properties
        and "args" in properties
        and str(tool.get("name", "")).startswith(("hub_read_", "hub_manage_"))
    )


# What asks an AI for the write key; the runtime sends it itself (api.with_key).
_KEY_WORDS = r"bestPracticeKey|acknowledg(?:e)?ment key|write key"
_KEY_TEXT = re.compile(_KEY_WORDS, re.IGNORECASE)
_KEY_ASIDE = re.compile(rf"\s*\([^()]*(?:{_KEY_WORDS})[^()]*\)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NUMBERING = re.compile(r"\s*\d+[.)]")

# Values the hub's own schema lists without saying what they do, explained as the app's
# tool guide and descriptions do (libraries/mcp-native-rules-lib.groovy and the guide's
# builtin_app_tools section; libraries/mcp-devices-lib.groovy hub_list_devices).
ENUM_MEANINGS: Final[Mapping[tuple[str, str], Mapping[str, str]]] = {
    ("hub_call_rule", "action"): {
        "rule": "run the whole rule: triggers, conditions and actions (default)",
        "actions": "run its actions only, skipping its conditions",
        "stop": "stop its running actions",
        "start": "restart a stopped rule (re-initialises it and resets its private boolean)",
    },
    ("hub_list_devices", "format"): {
        "summary": "standard fields and current states (default)",
        "detailed": "capabilities, attributes and commands",
        "ids": "a flat array of device ids only",
        "context": "a plain-text snapshot of the house: mode and one line per device",
    },
}


def _for_ai(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool as an AI should see it.

    Nothing asks for the write key (the runtime adds it to every write), and enum values
    the hub lists without a meaning are explained.
    """
    name = str(tool.get("name", ""))
    out = dict(tool)
    if isinstance(description := tool.get("description"), str):
        out["description"] = _without_key_text(description)
    schema = tool.get("inputSchema")
    if isinstance(schema, dict) and isinstance(props := schema.get("properties"), dict):
        properties: dict[str, Any] = {}
        for key, prop in props.items():
            if key == "bestPracticeKey":
                continue
            properties[key] = _property_for_ai(name, key, prop)
        published = {**schema, "properties": properties}
        if isinstance(required := schema.get("required"), list):
            published["required"] = [k for k in required if k != "bestPracticeKey"]
        out["inputSchema"] = published
    return out


def _property_for_ai(tool: str, key: str, prop: Any) -> Any:
    if not isinstance(prop, dict):
        return prop
    shown = _explained(tool, key, prop)
    if isinstance(text := shown.get("description"), str):
        shown = {**shown, "description": _without_key_text(text)}
    return shown


def _without_key_text(text: str) -> str:
    """The text without the sentences (or asides) that ask for the write key."""
    if not _KEY_TEXT.search(text):
        return text
    text = _KEY_ASIDE.sub("", text)
    lines: list[str] = []
    for line in text.split("\n"):
        if not _KEY_TEXT.search(line):
            lines.append(line)
            continue
        kept = [part for part in _SENTENCE.split(line) if not _KEY_TEXT.search(part)]
        if any(not _NUMBERING.fullmatch(part) for part in kept):
            lines.append(" ".join(kept))
    return "\n".join(lines).strip()


def _explained(tool: str, key: str, prop: dict[str, Any]) -> dict[str, Any]:
    """The property with its enum values' meanings, where the hub gives none."""
    meanings = ENUM_MEANINGS.get((tool, key))
    enum = prop.get("enum")
    if meanings is None or not isinstance(enum, list):
        return prop
    described = [f"{value} = {meanings[value]}" for value in enum if value in meanings]
    if not described:
        return prop
    text = str(prop.get("description") or "").rstrip()
    return {**prop, "description": f"{text} Values: {'; '.join(described)}.".strip()}
