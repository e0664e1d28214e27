"""What every backend gives the rest of the integration (it is `entry.runtime_data`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final, Protocol, Self

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant

from ..mcp.errors import McpError

if TYPE_CHECKING:
    from datetime import datetime

    from ..mcp.client import McpClient, ToolResult
    from .entity import EntitySpec
    from .publisher import EntityPublisher


type McpGatewayConfigEntry = ConfigEntry[BackendRuntime]

# Entities that only report: no call changes them (a lock's battery sensor, a button event).
REPORTING_PLATFORMS: Final = frozenset({Platform.SENSOR, Platform.BINARY_SENSOR, Platform.EVENT})


class ToolTier(StrEnum):
    """How much trust a backend tool needs, from least to most."""

    READ = "read"
    CONTROL = "control"
    ADMIN = "admin"


@dataclass(frozen=True, slots=True)
class ToolClass:
    """A backend tool's place in the permission model."""

    tier: ToolTier
    # Destructive tools also need `confirm: true` from the caller.
    destructive: bool = False


@dataclass(slots=True)
class BackendHealth:
    """What `list_backends` reports for one entry."""

    available: bool
    protocol_version: str | None
    latency_ms: float | None
    details: dict[str, Any] = field(default_factory=dict)


# A device unheard of for this long may show a value that is no longer true, where its backend
# knows no better (most devices report at least daily, e.g. their battery).
SILENT_AFTER = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class Silence:
    """A device that has not checked in for longer than its kind normally goes.

    Its backend holds nothing newer: reading it again gives the same value.
    """

    since: datetime | None  # its last word; None: the backend never heard from it
    usual: timedelta | None = None  # how long its kind normally goes at most


class Confirmation(StrEnum):
    """What the device shows after a write through a backend tool."""

    CONFIRMED = "confirmed"  # it reports what was asked
    NOT_APPLIED = "not_applied"  # it cannot have done it (or reports it did not)
    UNKNOWN = "unknown"  # sent; it has not reported it (yet)


@dataclass(frozen=True, slots=True)
class CallConfirmation:
    """A backend write call checked against what its devices report afterwards.

    `items`: one per target (device, accessory), each with its own `status` and what the
    device reports (`device_reports`); `status` is the worst of them.
    """

    status: Confirmation
    note: str
    items: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class EntityChange:
    """One entity a backend call changes (or stores a change of), in Home Assistant's words.

    `target` is the state the change asks for as HA's entity of that platform names it
    (`unlocked`, `open`, `disarmed`, `armed_away`…); None when the backend cannot tell (the
    gateway then treats the change as the most sensitive its entity can make). `position` is
    a cover's or valve's position asked for, if any; `action` says it for people ("unlock").
    """

    platform: Platform
    key: str
    target: str | None = None
    position: float | None = None
    action: str | None = None


@dataclass(frozen=True, slots=True)
class CallEffect:
    """What a backend call does to the home, as the approval gate weighs it.

    `changes`: the entities it changes now (a device command acts on the entity it changes:
    the lock, not the lock's battery sensor). `stored`: the changes it stores to run later
    without a person (a rule's or scene's or automation's actions). `unread`: it stores or
    runs actions the backend cannot read (an import, a copy of a rule): the gateway asks a
    person whatever they are.
    """

    changes: tuple[EntityChange, ...] = ()
    stored: tuple[EntityChange, ...] = ()
    unread: bool = False


async def async_confirm_by_reading(
    check: Callable[[], list[dict[str, Any]]],
    read: Callable[[], Awaitable[object]],
    *,
    seconds: float,
    every: float,
) -> list[dict[str, Any]]:
    """A backend write's targets checked (`check`: one item with a `status` each), the backend
    read again (`read`) every `every` seconds until none is still unknown, `seconds` have
    passed or a read fails: the last check's items."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        items = check()
        if all(item["status"] != Confirmation.UNKNOWN for item in items):
            return items
        if (remaining := deadline - loop.time()) <= 0:
            return items
        await asyncio.sleep(min(every, remaining))
        try:
            await read()
        except McpError:
            return items


class UnknownListing(Exception):
    """A listing's answer in a shape its backend cannot filter."""


class Shown(Protocol):
    """What a caller may see of a backend's devices and entities (the gateway decides)."""

    def device(self, key: str) -> bool:
        """Whether a device (EntitySpec.device.key) may be shown; an unknown one may not."""

    def entities(self, keys: Iterable[tuple[Platform, str]]) -> bool:
        """Whether the entities (platform, EntitySpec key) standing for one thing (an alarm,
        the HSM panel) may be shown; none known: not."""

    def secrets(self) -> bool:
        """Whether the caller may read the secrets a listing carries (an automation's
        webhook id): administrators only."""


class BackendRuntime(ABC):
    """One configured backend: its client, coordinators, entities and gateway hooks."""

    kind: ClassVar[str]
    platforms: ClassVar[tuple[Platform, ...]]

    def __init__(
        self, hass: HomeAssistant, entry: McpGatewayConfigEntry, client: McpClient
    ) -> None:
        self.hass = hass
        self.entry = entry
        self.client = client
        self.publisher: EntityPublisher  # set by the subclass before platforms load

    @classmethod
    @abstractmethod
    def from_entry(cls, hass: HomeAssistant, entry: McpGatewayConfigEntry) -> Self:
        """Build the runtime (and its MCP client on HA's shared session) from an entry."""

    @classmethod
    async def async_remove_entry(cls, hass: HomeAssistant, entry: McpGatewayConfigEntry) -> None:
        """The entry is being removed: delete what it made on the backend (default: nothing)."""
        return

    @abstractmethod
    async def async_setup(self) -> None:
        """Connect and load the first data; raise ConfigEntryNotReady / ConfigEntryAuthFailed."""

    async def async_shutdown(self) -> None:
        """Release what setup took (the shared HTTP session is HA's and stays open)."""
        await self.client.close()

    # --- gateway hooks -------------------------------------------------------------------

    @abstractmethod
    async def async_list_tools(self) -> list[dict[str, Any]]:
        """The backend's own tools, one level deep (gateways flattened), with schemas."""

    @abstractmethod
    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call one of the backend's tools, adding what the backend needs (keys, revisions)."""

    @abstractmethod
    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        """Classify a tool from `async_list_tools` for the permission policy."""

    def call_class(
        self, tool_class: ToolClass, name: str, arguments: Mapping[str, Any]
    ) -> ToolClass:
        """The class of one call (a tool that does different things by its arguments)."""
        return tool_class

    def entity_keys_in_call(
        self, name: str, arguments: Mapping[str, Any]
    ) -> list[tuple[Platform, str]]:
        """Single entities (platform, EntitySpec key) a call acts on besides whole devices.

        The gateway checks the caller's control permission on each, as for devices.
        """
        return []

    def device_keys_in_call(self, name: str, arguments: Mapping[str, Any]) -> list[str]:
        """The device keys (as used in EntitySpec.device.key) that a tool call addresses.

        The gateway maps them to entities and checks the caller's control permission on each.
        """
        return []

    def call_effect(self, name: str, arguments: Mapping[str, Any]) -> CallEffect | None:
        """What a call changes now and stores for later, entity by entity (approval and
        exposure are decided on them). None (the default): the backend does not say, and the
        gateway takes every controllable entity of every device the call addresses as changed
        to an unknown state (so a call reaching a lock is as sensitive as an unlock)."""
        return None

    def refusal_hint(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """Said instead of the addresses when a call is refused for what it reaches, where
        the call may match devices the caller cannot see (the refusal then names none of
        them, and says how to narrow the call); None: the refusal names what it reaches."""
        return None

    def call_subject(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """What a call acts on in the backend's own words where no entity says it (a rule
        run by id, the alarm a snooze reaches), for the logbook line; None: its entities do."""
        return None

    def lists_devices(self, name: str) -> bool:
        """Whether the tool's answer lists devices (or rooms, alarms) it was not asked for.

        Such an answer is filtered (`filter_listing`) to what the caller may read and what is
        exposed, instead of refusing the whole answer for one device in it.
        """
        return False

    def filter_listing(self, name: str, data: Any, shown: Shown) -> tuple[Any, int]:
        """A listing tool's answer with only what `shown` admits, and how many items it
        withheld. An answer in a shape the backend does not know raises UnknownListing (the
        gateway then withholds it rather than pass it on unfiltered)."""
        raise UnknownListing(name)

    # Whether async_read_back reads anything: set_state then reads back while it waits.
    reads_back: ClassVar[bool] = False

    # Its tools whose answers the core tools already give (device lists and reads, event
    # logs, its own state and history): the guide tells a model they add nothing.
    repeats_core: ClassVar[frozenset[str]] = frozenset()

    def runs_actions(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether the call runs a scene or rule, whose effects the gateway then reports."""
        return False

    def awaits_report(self, platform: Platform, key: str) -> bool:
        """Whether the entity (platform, EntitySpec key) shows a write's expected effect that
        the device has not reported yet (optimistic): set_state then does not call it done."""
        return False

    async def async_read_back(self) -> None:
        """Read the backend now, so writes just sent are confirmed or corrected (nothing for a
        backend whose writes answer with the device's state). Failures are not raised."""
        return

    def last_heard(self, platform: Platform, key: str) -> datetime | None:
        """When the device behind an entity last reported anything (None: unknown)."""
        return None

    def silence(self, platform: Platform, key: str, now: datetime) -> Silence | None:
        """Whether the device behind an entity has been silent for longer than its kind
        normally goes (None: not, or not known). By default: unheard of for SILENT_AFTER."""
        heard = self.last_heard(platform, key)
        if heard is None or now - heard <= SILENT_AFTER:
            return None
        return Silence(heard, SILENT_AFTER)

    def silence_epoch(self) -> object | None:
        """A token that stays the same object for as long as what `silence` reads besides the
        clock (the backend's data) does: readers keep each entity's `silence_until` that
        long. None (the default): not known, `silence` is asked on every read."""
        return None

    def silence_until(
        self, platform: Platform, key: str, now: datetime
    ) -> tuple[Silence | None, datetime | None]:
        """`silence` at `now`, and the moment after which the clock alone may change it
        (None: it cannot) while `silence_epoch` stays the same. By default: only at `now`."""
        return self.silence(platform, key, now), now

    def device_reading(self, platform: Platform, key: str, unit: str) -> str | None:
        """What the device behind an entity reports in its own unit where that is not Home
        Assistant's temperature unit `unit`, in both ("heatingSetpoint 69.8 °F (21.0 °C)");
        None when they agree or the backend converts nothing."""
        return None

    async def async_confirm_call(
        self, name: str, arguments: Mapping[str, Any], result: ToolResult
    ) -> CallConfirmation | None:
        """Check a successful write call of the backend's own tool against what its devices
        report afterwards, as set_state checks its own writes (None: nothing to check, or a
        tool this backend cannot check). A backend's count of what it did is no proof: the
        device's reading is. Failures are not raised (the answer is then UNKNOWN)."""
        return None

    def history_call(self, spec: EntitySpec, start: datetime) -> tuple[str, dict[str, Any]] | None:
        """The backend's own history tool and its arguments for one entity's native object
        from `start` on, or None when the backend keeps none: get_history offers it where
        HA's recorder holds less than was asked."""
        return None

    def history_events(self, result: ToolResult) -> list[tuple[datetime, str]] | None:
        """The answer to `history_call` as (time, value) events, or None when this backend's
        answers are not read (get_history then offers the call instead of merging it).

        Raises ValueError, saying why, when the answer is a failure.
        """
        return None

    @abstractmethod
    def health(self) -> BackendHealth:
        """Current reachability and protocol facts, for `list_backends`."""

    @abstractmethod
    def diagnostics(self) -> dict[str, Any]:
        """What a user can attach to a bug report: no secrets (diagnostics.py redacts again)."""
