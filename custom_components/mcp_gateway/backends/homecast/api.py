"""Typed API over Homecast's MCP tools.

Nothing outside this package knows Homecast's wire format: get_state's nested home → room →
accessory object (in either value vocabulary) becomes `HomecastState`, and writes go through
`HomecastApi.async_set`, which coalesces simultaneous updates into one `set_state` call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
import logging
import re
from typing import Any, Final

from ...mcp.client import McpClient
from ...mcp.errors import McpError, McpProtocolError, McpToolError
from .vocabulary import (
    device_key,
    normalize,
    normalize_keys,
    normalize_options,
    slug_tail,
    uuid_tail,
)

_LOGGER = logging.getLogger(__name__)

# Keys of an accessory object that are metadata, not values.
_META_KEYS: Final = frozenset(
    {
        "type",
        "name",
        "group",
        "accessories",
        "virtual",
        "id",
        "virtual_type",
        "options",
        "min",
        "max",
        "step",
        "unit",
        "duration",
        "controllable",
    }
)
# The room of an accessory without one: uniqueKey("Unknown", "") (src/lib/slug.ts), where
# virtual accessories created without a room are listed.
NO_ROOM: Final = "unknown_0000"
# How long a write may take. The relay waits up to 10 s for each accessory (HomeKitManager.swift
# writeTimeoutSeconds) and the cloud up to 30 s for the relay: only a longer wait hears which
# accessories answered when one of a batch does not.
WRITE_TIMEOUT: Final = 35.0


class HomecastReplyError(McpProtocolError):
    """A tool answered, but not in the shape Homecast documents."""


class HomecastWriteError(McpToolError):
    """set_state reported a failure for the accessory (per-home error from the relay)."""


class HomecastArgumentError(HomecastWriteError):
    """The server's input schema declares no such argument: nothing was sent."""


def camel_case(name: str) -> str:
    """`heat_target` → `heatTarget`: how a GraphQL-backed server names an argument."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def schema_properties(schema: Any) -> Mapping[str, Any] | None:
    """The properties an object schema declares; None when it declares none (nothing known)."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    return properties if isinstance(properties, Mapping) else None


def spell(properties: Mapping[str, Any] | None, key: str) -> str | None:
    """Our argument `key` as the server's schema spells it; None when it declares no such key.

    The community server's schemas are snake_case (homecast-web src/server/local-mcp.ts); the
    cloud's MCP surface keeps GraphQL's camelCase names (graphql-mcp, graphql_mcp/server.py).
    A schema without properties tells nothing, and the key goes as we know it.
    """
    if properties is None or key in properties:
        return key
    camel = camel_case(key)
    return camel if camel in properties else None


def slugify_name(name: str) -> str:
    """A key part for names that carry no UUID (scenes): lowercase, non-alphanumerics to `_`."""
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_") or "scene"


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A press noticed between two polls: `marker` is unique per press."""

    marker: str
    value: int


# The characteristic each kind of virtual accessory carries (homecast-web
# src/automation/types/automation.ts VIRTUAL_CHARACTERISTIC). A virtual switch carries
# power_state, which get_state simplifies to `on`: it is an ordinary switch to us.
VIRTUAL_KEYS: Final = {
    "virtual_mode": "mode",
    "virtual_count": "counter",
    "virtual_number": "number",
    "virtual_timer": "timer",
    "virtual_text": "text",
    "virtual_datetime": "date",
}


@dataclass(frozen=True, slots=True)
class VirtualInfo:
    """What get_state tells of a virtual accessory: its kind and whether people may set it.

    get_state carries no definition (options, limits): src/relay/virtual-accessories.ts
    publishes only the value characteristic, writable unless "Adjustable here" is off.
    """

    kind: str  # mode, number, counter, timer, text, date
    key: str  # the value key (virtual_mode, …)
    controllable: bool


@dataclass(slots=True)
class Accessory:
    """One accessory (or service group, or virtual accessory) of a home."""

    home_key: str
    room_key: str
    key: str  # slug; changes with the name
    uid: str  # stable within the home: the slug's UUID tail (see HomecastHome.index)
    type: str
    name: str  # display name (last part of "<home>.<room>.<accessory>")
    room_name: str
    values: dict[str, Any]
    settable: frozenset[str]
    options: dict[str, list[Any]]
    # Our key -> the server's spelling, for keys read under an alias (writes use the server's).
    wire: dict[str, str] = field(default_factory=dict)
    legacy: bool = False  # the server used the older raw vocabulary for it
    group: bool = False
    members: tuple[str, ...] = ()
    virtual: VirtualInfo | None = None
    events: tuple[ButtonPress, ...] = ()

    def get(self, key: str, default: Any = None) -> Any:
        """A value in the current vocabulary."""
        return self.values.get(key, default)

    def has(self, key: str) -> bool:
        """Whether the accessory reports `key`."""
        return key in self.values

    @property
    def reachable(self) -> bool:
        """Whether there is anything to show: an accessory HomeKit never read has no values.

        get_state drops null values (homecast-web src/server/local-rest.ts simplifyAccessory /
        formatValue). An accessory that stopped answering is not recognisable: the relay lists
        HomeKit's cached values for it and get_state carries no reachability.
        """
        return bool(self.values) or self.type in ("doorbell", "button") or self.group


@dataclass(slots=True)
class Home:
    """A home of the account and everything in it."""

    key: str  # slug
    uuid: str
    name: str
    accessories: dict[str, Accessory] = field(default_factory=dict)  # by uid
    scenes: list[str] = field(default_factory=list)
    automations: list[dict[str, Any]] = field(default_factory=list)  # HomeKit engine
    hc_automations: list[dict[str, Any]] = field(default_factory=list)  # Homecast engine
    view_only: bool = False
    # A followed home the credential no longer sees (kept so its entities stay, unavailable).
    missing: bool = False

    @property
    def tail(self) -> str:
        """The home's stable short id."""
        return uuid_tail(self.uuid)

    def find(self, ref: str) -> Accessory | None:
        """An accessory by slug, display name, uid or virtual id (case-insensitive)."""
        needle = ref.strip().lower()
        for acc in self.accessories.values():
            if needle in (acc.key, acc.name.lower(), acc.uid):
                return acc
        return None


def accessory_device_key(home: Home, acc: Accessory) -> str:
    """The device key of an accessory of `home` (vocabulary.device_key)."""
    return device_key(home.uuid, acc.uid)


@dataclass(slots=True)
class HomecastState:
    """One poll: the homes (by UUID) the entry follows."""

    homes: dict[str, Home]
    fetched_at: str | None = None
    message: str | None = None
    # Every home of the account (UUIDs, from `_homes`), followed or not; None: unknown.
    account_homes: frozenset[str] | None = None

    def home(self, ref: str) -> Home | None:
        """A home by UUID, slug or display name (case-insensitive)."""
        needle = ref.strip().lower()
        for home in self.homes.values():
            if needle in (home.uuid.lower(), home.key, home.name.lower()):
                return home
        return None


@dataclass(frozen=True, slots=True)
class SceneRenamed:
    """A scene renamed through us (update_scene with new_name), as the call named it."""

    home: str  # slug, display name or UUID
    old_name: str
    new_name: str


@dataclass(frozen=True, slots=True)
class SetStateResult:
    """What set_state reported."""

    updated: int
    failed: int
    changes: tuple[str, ...]
    errors: tuple[str, ...]
    message: str | None


# ---------------------------------------------------------------------------------------------
# Parsing


def parse_homes_index(data: Any) -> dict[str, str]:
    """`_homes` of a get_state answer: home slug → UUID. Raises if it is missing."""
    if not isinstance(data, Mapping) or not isinstance(data.get("_homes"), Mapping):
        raise HomecastReplyError("get_state answer has no _homes object")
    return {str(k): str(v) for k, v in data["_homes"].items()}


def _display_parts(full: Any, home_key: str, room_key: str, key: str) -> tuple[str, str, str]:
    """(home, room, accessory) names for an accessory whose `name` is `full`.

    The real get_state names every accessory by its slug path, "<home>.<room>.<acc>" (a group
    member: "<home>.<room>.<group>.<member>"; src/server/local-rest.ts getState), so readable
    names come from the slugs as pyhomecast's `_key_to_name` derives them. A server that puts
    display names there ("Home.Room.Accessory") is taken at its word.
    """
    slugged = (_deslug(home_key), _deslug(room_key), _deslug(key))
    if not isinstance(full, str) or not full:
        return slugged
    # Slugs keep punctuation, dots too, so the slug form is recognised whole, never split.
    if full.startswith(f"{home_key}.{room_key}.") and full.endswith(key):
        return slugged
    parts = full.split(".")
    if len(parts) >= 3:
        # Dots inside an accessory's own name stay with it.
        return parts[0], parts[1], ".".join(parts[2:])
    return slugged[0], slugged[1], full


_SLUG_TAIL = re.compile(r"_[0-9a-f]{4}$")


def deslug(key: str) -> str:
    """A readable name from a slug key (`bedroom_1_air_conditioner_7f60` → "Bedroom 1 Air …").

    As pyhomecast's `_key_to_name`: drop the 4-hex id suffix, `_` to spaces, capitalise each
    word (only its first letter, so "rob's" stays "Rob's", not str.title's "Rob'S").
    """
    words = _SLUG_TAIL.sub("", key).replace("_", " ").split()
    return " ".join(word[:1].upper() + word[1:] for word in words) or key


_deslug = deslug


def _virtual_info(values: Mapping[str, Any], settable: frozenset[str]) -> VirtualInfo | None:
    """A virtual accessory is recognised by its value key; `_settable` says if people may set it."""
    for key, kind in VIRTUAL_KEYS.items():
        if key in values:
            return VirtualInfo(kind=kind, key=key, controllable=key in settable)
    return None


def _parse_accessory(
    home_key: str, room_key: str, key: str, props: Mapping[str, Any]
) -> tuple[Accessory, dict[str, Mapping[str, Any]]]:
    """One accessory, and the nested members of a service group (slug → props)."""
    raw = {k: v for k, v in props.items() if not k.startswith("_") and k not in _META_KEYS}
    values, legacy, wire = normalize(raw)
    settable = normalize_keys(props.get("_settable"))
    _, room_name, name = _display_parts(props.get("name"), home_key, room_key, key)
    members = props.get("accessories") if props.get("group") else None
    acc = Accessory(
        home_key=home_key,
        room_key=room_key,
        key=key,
        uid=slug_tail(key),
        type=str(props.get("type", "other")),
        name=name,
        room_name=room_name,
        values=values,
        settable=settable,
        options=normalize_options(props.get("_options")),
        wire=wire,
        legacy=legacy,
        group=bool(props.get("group")),
        members=tuple(members) if isinstance(members, Mapping) else (),
        virtual=_virtual_info(values, settable),
    )
    return acc, dict(members) if isinstance(members, Mapping) else {}


def parse_home(home_key: str, uuid: str, body: Any) -> Home:
    """One home of a get_state answer."""
    if not isinstance(body, Mapping):
        raise HomecastReplyError(f"get_state: home {home_key} is not an object")
    home = Home(key=home_key, uuid=uuid, name=_deslug(home_key))
    found: list[Accessory] = []
    nested: list[Accessory] = []
    for room_key, accessories in body.items():
        if room_key.startswith("_") or not isinstance(accessories, Mapping):
            continue
        for key, props in accessories.items():
            if not isinstance(props, Mapping):
                continue
            acc, members = _parse_accessory(home_key, room_key, key, props)
            found.append(acc)
            home.name = _display_parts(props.get("name"), home_key, room_key, key)[0]
            for member_key, member_props in members.items():
                if isinstance(member_props, Mapping):
                    nested.append(_parse_accessory(home_key, room_key, member_key, member_props)[0])
    keys = {acc.key for acc in found}
    # Group members usually also appear in their own room; only add those that do not.
    found.extend(acc for acc in nested if acc.key not in keys)
    home.accessories = _index(found)
    scenes = body.get("_scenes")
    if isinstance(scenes, list):
        home.scenes = [str(s) for s in scenes if isinstance(s, str | int)]
    return home


def _index(accessories: list[Accessory]) -> dict[str, Accessory]:
    """Accessories by uid. Two keys sharing a 4-hex tail get the room's tail as a prefix.

    A collision is rare (1 in 65 536 per pair) but must not merge two devices; the longer id
    is stable for as long as both stay in their rooms.
    """
    by_tail: dict[str, list[Accessory]] = {}
    for acc in accessories:
        by_tail.setdefault(acc.uid, []).append(acc)
    out: dict[str, Accessory] = {}
    for tail, group in by_tail.items():
        if len(group) == 1:
            out[tail] = group[0]
            continue
        for acc in group:
            uid = f"{slug_tail(acc.room_key)}{tail}"
            while uid in out:
                uid = f"{uid}x"
            acc.uid = uid
            out[uid] = acc
    return out


def parse_state(data: Any, wanted: set[str] | None = None) -> HomecastState:
    """A get_state answer; `wanted` limits it to these home UUIDs (None: every home)."""
    index = parse_homes_index(data)
    homes: dict[str, Home] = {}
    for home_key, uuid in index.items():
        if wanted is not None and uuid.lower() not in wanted:
            continue
        if home_key not in data:
            continue
        homes[uuid.lower()] = parse_home(home_key, uuid.lower(), data[home_key])
    meta = data.get("_meta") if isinstance(data.get("_meta"), Mapping) else {}
    return HomecastState(
        homes=homes,
        fetched_at=str(meta["fetched_at"]) if meta.get("fetched_at") else None,
        message=str(meta["message"]) if meta.get("message") else None,
        account_homes=frozenset(uuid.lower() for uuid in index.values()),
    )


def parse_set_result(data: Any) -> SetStateResult:
    """set_state's result object."""
    if not isinstance(data, Mapping):
        raise HomecastReplyError(f"set_state answered {type(data).__name__}, not an object")

    def _int(name: str) -> int:
        value = data.get(name, 0)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    def _strings(name: str) -> tuple[str, ...]:
        value = data.get(name)
        return tuple(str(v) for v in value) if isinstance(value, list) else ()

    return SetStateResult(
        updated=_int("updated"),
        failed=_int("failed"),
        changes=_strings("changes"),
        errors=_strings("errors"),
        message=str(data["message"]) if data.get("message") is not None else None,
    )


def parse_automations(data: Any) -> dict[str, list[dict[str, Any]]]:
    """get_automations / get_hc_automations: home slug → list of automations."""
    if not isinstance(data, Mapping):
        if isinstance(data, str):
            # Accounts without any automation (or Analytics-style notices) answer in prose.
            return {}
        raise HomecastReplyError("automation list is not an object")
    return {
        str(home): [a for a in items if isinstance(a, dict) and "id" in a]
        for home, items in data.items()
        if not str(home).startswith("_") and isinstance(items, list)
    }


def view_only_homes(data: Any) -> set[str]:
    """`_meta.view_only_homes` of get_automations."""
    if isinstance(data, Mapping) and isinstance(data.get("_meta"), Mapping):
        homes = data["_meta"].get("view_only_homes")
        if isinstance(homes, list):
            return {str(h) for h in homes}
    return set()


# ---------------------------------------------------------------------------------------------
# Writes: coalescing set_state


@dataclass(frozen=True, slots=True)
class AccessoryUpdate:
    """One accessory's changes, addressed by the slugs set_state takes."""

    home: str
    room: str
    accessory: str
    props: Mapping[str, Any]

    def wire(self) -> dict[str, Any]:
        """The update object set_state takes."""
        return {"home": self.home, "room": self.room, "accessory": self.accessory, **self.props}


@dataclass(slots=True)
class _Pending:
    update: AccessoryUpdate
    future: asyncio.Future[SetStateResult]


class SetStateBatcher:
    """Coalesces updates submitted in the same loop iteration into one set_state call.

    Updates that arrive while a call is in flight go into the next call. Updates of the same
    accessory merge (the later value of a key wins). Each caller gets its own outcome: a
    per-home error in the result fails only the updates it names.
    """

    def __init__(self, send: Callable[[list[dict[str, Any]]], Awaitable[Any]]) -> None:
        self._send = send
        self._pending: list[_Pending] = []
        self._task: asyncio.Task[None] | None = None
        self.calls = 0  # set_state calls made (for benchmarks and diagnostics)

    async def submit(self, update: AccessoryUpdate) -> SetStateResult:
        """Queue one update and wait for the call that carries it."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[SetStateResult] = loop.create_future()
        self._pending.append(_Pending(update, future))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._run(), name="homecast set_state batch")
        return await future

    async def _run(self) -> None:
        # Let every action started in this loop iteration queue its update first.
        await asyncio.sleep(0)
        while self._pending:
            batch, self._pending = self._pending, []
            await self._flush(batch)

    async def _flush(self, batch: list[_Pending]) -> None:
        merged: dict[tuple[str, str, str], dict[str, Any]] = {}
        for item in batch:
            slot = (item.update.home, item.update.room, item.update.accessory)
            merged.setdefault(slot, {}).update(item.update.props)
        updates = [
            AccessoryUpdate(home, room, acc, props).wire()
            for (home, room, acc), props in merged.items()
        ]
        self.calls += 1
        try:
            result = parse_set_result(await self._send(updates))
        except (McpError, asyncio.CancelledError) as err:
            for item in batch:
                if not item.future.done():
                    if isinstance(err, asyncio.CancelledError):
                        item.future.cancel()
                    else:
                        item.future.set_exception(err)
            if isinstance(err, asyncio.CancelledError):
                raise
            return
        for item in batch:
            if item.future.done():
                continue
            error = _error_for(item.update, result, len(merged))
            if error is None:
                item.future.set_result(result)
            else:
                item.future.set_exception(HomecastWriteError(error, result))

    async def async_shutdown(self) -> None:
        """Cancel a batch in flight (callers see CancelledError)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()


def _error_for(update: AccessoryUpdate, result: SetStateResult, batch_size: int) -> str | None:
    """The failure message that concerns `update`, or None when it went through.

    Failures are reported per home ("<home>: <messages>"); an update listed in `changes`
    succeeded even when another accessory of its home failed.
    """
    if result.failed <= 0 and not result.errors:
        return None
    acc = update.accessory.lower()
    if any(f"/{acc}:" in line.lower() for line in result.changes):
        return None
    home = update.home.lower()
    home_words = {home, home.rsplit("_", 1)[0].replace("_", " ")}
    mine = [line for line in result.errors if line.split(":", 1)[0].strip().lower() in home_words]
    if mine:
        return "; ".join(mine)
    if result.updated == 0:
        # Nothing went through and no home was named: every caller hears the reason.
        reason = "; ".join(result.errors) or result.message
        return reason or f"set_state failed for {batch_size} update(s)"
    return None


# ---------------------------------------------------------------------------------------------
# The API


class HomecastApi:
    """Homecast's tools, typed. `before_call` runs before each call (OAuth token refresh)."""

    def __init__(
        self,
        client: McpClient,
        before_call: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.client = client
        self._before_call = before_call
        self.batcher = SetStateBatcher(self._send_set_state)
        # Each tool's input schema, from the server's tools/list (None: not read yet).
        self._schemas: dict[str, Any] | None = None
        self._schemas_read: asyncio.Task[None] | None = None
        # Options of virtual modes, as seen: get_state lists none (see remember_modes).
        self.modes_seen: dict[tuple[str, str], list[str]] = {}
        # Scene renames made through us, oldest first, until a poll has followed them.
        self.scene_renames: list[SceneRenamed] = []

    async def _call(self, name: str, args: Mapping[str, Any], kind: str = "read") -> Any:
        if self._before_call is not None:
            await self._before_call()
        timeout = WRITE_TIMEOUT if kind == "write" else None
        return await self.client.call(name, args, kind=kind, timeout=timeout)

    def learn_tools(self, tools: list[dict[str, Any]]) -> None:
        """The input schemas of the server's tools (from a tools/list read elsewhere)."""
        self._schemas = {
            str(tool["name"]): tool.get("inputSchema")
            for tool in tools
            if isinstance(tool, Mapping) and "name" in tool
        }

    async def _schema(self, tool: str) -> Any:
        """`tool`'s input schema as the server declares it (its tools/list is read once)."""
        if self._schemas is None:
            # One read for every caller waiting: they resume together, so simultaneous writes
            # still reach the batcher in the same loop iteration.
            if self._schemas_read is None or self._schemas_read.done():
                self._schemas_read = asyncio.get_running_loop().create_task(
                    self._read_schemas(), name="homecast tools/list"
                )
            await asyncio.shield(self._schemas_read)
        assert self._schemas is not None
        return self._schemas.get(tool)

    async def _read_schemas(self) -> None:
        if self._before_call is not None:
            await self._before_call()
        self.learn_tools(await self.client.list_tools())

    async def _args(self, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """`args` spelled as the server's schema for `tool` declares them.

        A key the schema does not declare is never sent: the server would drop it without a
        word (or refuse the call), so the caller hears it instead.
        """
        if not args:
            return {}
        properties = schema_properties(await self._schema(tool))
        out: dict[str, Any] = {}
        for key, value in args.items():
            spelled = spell(properties, key)
            if spelled is None:
                raise HomecastArgumentError(f"this Homecast server's {tool} takes no {key}")
            out[spelled] = value
        return out

    async def _update_properties(self) -> tuple[str, Mapping[str, Any] | None]:
        """set_state's `updates` argument as the server spells it, and what an update declares."""
        properties = schema_properties(await self._schema("set_state"))
        key = spell(properties, "updates") or "updates"
        items = properties.get(key) if properties is not None else None
        return key, schema_properties(items.get("items") if isinstance(items, Mapping) else None)

    async def async_get_state_raw(self, home: str | None = None) -> Any:
        """get_state as the server answered it (optionally for one home key)."""
        args = await self._args("get_state", {"filter_by_home": home}) if home else {}
        return await self._call("get_state", args)

    async def async_get_state(self, wanted: set[str] | None = None) -> HomecastState:
        """The homes in `wanted` (UUIDs; None: all), from one unfiltered call.

        One call for every home costs fewer round trips than one filtered call per home, and
        `_homes` (the UUIDs our keys come from) is only complete in the unfiltered answer.
        """
        state = parse_state(await self.async_get_state_raw(), wanted)
        self.remember_modes(state)
        return state

    def remember_modes(self, state: HomecastState) -> None:
        """Give each virtual mode the options seen so far, unless the server listed them.

        A mode's options live only in its definition (src/relay/virtual-accessories.ts puts
        them on the accessory record, which get_state does not pass on), so the choices a
        select can offer are the values the mode has been seen in, plus any set through us.
        """
        for home_uuid, home in state.homes.items():
            for acc in home.accessories.values():
                if acc.virtual is None or acc.virtual.kind != "mode":
                    continue
                seen = self.modes_seen.setdefault((home_uuid, acc.uid), [])
                current = acc.get("virtual_mode")
                if isinstance(current, str) and current not in seen:
                    seen.append(current)
                listed = acc.options.get("virtual_mode")
                if not listed:
                    acc.options["virtual_mode"] = list(seen)

    async def async_get_automations(self) -> tuple[dict[str, list[dict[str, Any]]], set[str]]:
        """HomeKit automations by home key, and the view-only home keys."""
        data = await self._call("get_automations", {})
        return parse_automations(data), view_only_homes(data)

    async def async_get_hc_automations(self) -> dict[str, list[dict[str, Any]]]:
        """Homecast automations by home key."""
        return parse_automations(await self._call("get_hc_automations", {}))

    async def _send_set_state(self, updates: list[dict[str, Any]]) -> Any:
        key, _ = await self._update_properties()
        return await self._call("set_state", {key: updates}, kind="write")

    async def async_set(self, acc: Accessory, props: Mapping[str, Any]) -> SetStateResult:
        """Write properties of one accessory (coalesced with simultaneous writes).

        Each property goes under the name the server's set_state schema declares for it; one
        it does not declare fails this write before anything is sent.
        """
        _, declared = await self._update_properties()
        wire: dict[str, Any] = {}
        for key, value in props.items():
            ours = acc.wire.get(key, key)
            spelled = spell(declared, ours)
            if spelled is None:
                if ours == "target_temp":
                    # Neither edition writes HomeKit's TargetTemperature: the community server's
                    # handleSetState (src/server/local-rest.ts) keeps only its settableProps, the
                    # thresholds among them, and no set_state schema declares it.
                    raise HomecastArgumentError(
                        f"Homecast cannot set the target temperature of {acc.name}: its "
                        "set_state carries only heating and cooling thresholds (heat_target, "
                        "cool_target), "
                        + (
                            "set as a range in heat_cool mode"
                            if acc.has("heat_target") or acc.has("cool_target")
                            else "which this thermostat does not have"
                        )
                    )
                raise HomecastArgumentError(f"this Homecast server's set_state takes no {ours}")
            wire[spelled] = value
        return await self.batcher.submit(AccessoryUpdate(acc.home_key, acc.room_key, acc.key, wire))

    async def async_run_scene(self, home: str, name: str) -> Any:
        """Run a scene by name."""
        args = await self._args("run_scene", {"home": home, "name": name})
        return await self._call("run_scene", args, kind="write")

    async def async_update_automation(self, home: str, automation_id: str, enabled: bool) -> Any:
        """Enable or disable a HomeKit automation."""
        args = {"home": home, "id": automation_id, "enabled": enabled}
        return await self._call(
            "update_automation", await self._args("update_automation", args), "write"
        )

    async def async_update_hc_automation(self, home: str, automation_id: str, enabled: bool) -> Any:
        """Enable or disable a Homecast automation."""
        args = {"home": home, "id": automation_id, "enabled": enabled}
        return await self._call(
            "update_hc_automation", await self._args("update_hc_automation", args), "write"
        )

    async def async_tool(self, name: str, args: Mapping[str, Any], kind: str = "write") -> Any:
        """Any other tool (actions with response data); raises McpToolError on isError."""
        data = await self._call(name, await self._args(name, args), kind)
        self.note_success(name, args)
        return data

    def note_success(self, name: str, args: Mapping[str, Any]) -> None:
        """Remember what a successful call changed that a poll cannot tell (a scene's rename)."""
        if name != "update_scene":
            return
        home, old, new = args.get("home"), args.get("name"), args.get("new_name")
        if isinstance(home, str) and isinstance(old, str) and isinstance(new, str) and new.strip():
            self.scene_renames.append(SceneRenamed(home, old, new))

    def take_scene_renames(self) -> list[SceneRenamed]:
        """The scene renames made through us since the last time they were taken."""
        taken, self.scene_renames = self.scene_renames, []
        return taken
