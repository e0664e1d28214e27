"""The homes a Homecast account sees: accessories, rooms, groups, virtual accessories, writes.

Values are stored in the current vocabulary (the one documented in the reference table) and
rendered in the older raw vocabulary when the simulator is told to behave like an older server,
or in the community server's mix (homecast-web src/server/local-rest.ts: CHAR_TO_SIMPLE has no
rotation_speed or target_position, so those pass through raw).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
import random
import re
from typing import Any
import uuid as uuidlib

CURRENT = "current"
LEGACY = "legacy"
COMMUNITY = "community"
# Names the community server's get_state keeps raw (getSimpleName passes them through). The
# relay names the heater-cooler states by CharacteristicMapper.swift's friendly names
# (target_heater_cooler_state, ...), not by the UUIDs local-rest.ts's UUID_TO_SIMPLE maps to
# hvac_mode / hvac_state, so they arrive raw, as HomeKit's integers.
COMMUNITY_NAMES = {
    "speed": "rotation_speed",
    "target": "target_position",
    "hvac_mode": "target_heater_cooler_state",
    "hvac_state": "current_heater_cooler_state",
}
# Keys the community server never shows: the relay names ProgrammableSwitchEvent by its raw UUID
# (CharacteristicMapper.swift has no name for it) and local-rest.ts getSimpleName drops
# UUID-like names, so a doorbell or button carries no press value there.
COMMUNITY_UNNAMED = frozenset({"programmable_switch_event"})

TYPES = (
    "light",
    "switch",
    "outlet",
    "climate",
    "lock",
    "alarm",
    "motion",
    "contact",
    "temperature",
    "fan",
    "blind",
    "valve",
    "speaker",
    "light_sensor",
    "doorbell",
    "button",
    "other",
)
VIRTUAL_TYPES = ("switch", "mode", "number", "counter", "timer", "text", "date")
VIRTUAL_KEYS = {
    "switch": "on",
    "mode": "virtual_mode",
    "number": "virtual_number",
    "counter": "virtual_count",
    "timer": "virtual_timer",
    "text": "virtual_text",
    "date": "virtual_datetime",
}

HVAC_MODES = {"auto": 0, "heat": 1, "cool": 2}
HVAC_STATES = {"inactive": 0, "idle": 1, "heating": 2, "cooling": 3}
ALARM_TARGETS = {"home": 0, "away": 1, "night": 2, "off": 3}

# Current name -> older raw name, for the keys whose name changed between server versions.
LEGACY_NAMES = {
    "hvac_mode": "target_heater_cooler_state",
    "hvac_state": "current_heater_cooler_state",
    "speed": "rotation_speed",
    "target": "target_position",
}
CURRENT_NAMES = {raw: cur for cur, raw in LEGACY_NAMES.items()}
LEGACY_DROPPED = frozenset({"battery"})  # older servers do not report battery level


class WriteError(Exception):
    """A relay-side failure of one accessory write, with the relay's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def slug(name: str, uuid: str) -> str:
    """Homecast key: trimmed name, whitespace runs to `_`, lowercased, `_` + UUID's last 4 hex.

    homecast-web src/lib/slug.ts uniqueKey: an empty id gives "0000" (a virtual accessory
    without a room is listed in room "Unknown" with no id: `unknown_0000`).
    """
    tail = uuid.replace("-", "")[-4:].lower() if uuid else "0000"
    return re.sub(r"\s+", "_", name.strip()).lower() + "_" + tail


def deslug(key: str) -> str:
    """Best-effort display name from a key when a state file gives no name.

    Simulator-only: a state file without names still needs display names.
    """
    base = key.rsplit("_", 1)[0] if "_" in key else key
    return base.replace("_", " ").title()


def uuid_with_tail(rng: random.Random, tail: str | None = None) -> str:
    """An uppercase HomeKit-style UUID; `tail` forces its last hex digits (file loading).

    Simulator-only: HomeKit identifiers are UUIDs; the tail keeps the last four hex digits
    homecast-web src/lib/slug.ts uniqueKey shows in a loaded key.
    """
    text = str(uuidlib.UUID(int=rng.getrandbits(128), version=4)).upper()
    if tail:
        text = text[: len(text) - len(tail)] + tail.upper()
    return text


@dataclass
class Virtual:
    """The definition of a virtual accessory (its value lives in Accessory.values)."""

    kind: str
    options: list[str] = field(default_factory=list)
    minimum: float | None = None
    maximum: float | None = None
    step: float | None = None
    unit: str | None = None
    duration: float | None = None
    controllable: bool = True
    initial: Any = None

    def describe(self) -> dict[str, Any]:
        """The definition fields as get_state shows them.

        homecast-web src/server/local-hc-automations.ts handleCreateVirtualAccessory stores these
        fields; src/server/local-rest.ts getState shows them.
        """
        out: dict[str, Any] = {"virtual_type": self.kind, "controllable": self.controllable}
        if self.kind == "mode":
            out["options"] = list(self.options)
        for key, value in (
            ("min", self.minimum),
            ("max", self.maximum),
            ("step", self.step),
            ("unit", self.unit),
            ("duration", self.duration),
        ):
            if value is not None:
                out[key] = value
        return out


@dataclass
class Accessory:
    """One HomeKit accessory (or service group, or virtual accessory) as the relay reports it."""

    uuid: str
    name: str
    kind: str
    values: dict[str, Any]
    settable: list[str]
    room_uuid: str
    options: dict[str, list[Any]] = field(default_factory=dict)
    reachable: bool = True
    members: list[Accessory] | None = None  # set for a service group
    virtual: Virtual | None = None
    # Loaded from a state file: the key and `name` exactly as the file has them, and the
    # file's spelling of keys we store under another name (current name -> file name).
    key: str | None = None
    served_name: str | None = None
    wire: dict[str, str] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        """The accessory key.

        homecast-web src/lib/slug.ts uniqueKey of the accessory's name and id.
        """
        return self.key or slug(self.name, self.uuid)


@dataclass
class Room:
    """A HomeKit room."""

    uuid: str
    name: str
    accessories: list[Accessory] = field(default_factory=list)
    key: str | None = None  # as a state file has it

    @property
    def slug(self) -> str:
        """The room key.

        homecast-web src/lib/slug.ts uniqueKey of the room's name and id.
        """
        return self.key or slug(self.name, self.uuid)


@dataclass
class Scene:
    """A HomeKit scene (action set)."""

    uuid: str
    name: str
    actions: list[dict[str, Any]]
    builtin: bool = False
    owner: str | None = None  # name of the HomeKit automation the scene belongs to


@dataclass
class Home:
    """A HomeKit home behind the relay."""

    uuid: str
    name: str
    rooms: list[Room] = field(default_factory=list)
    scenes: list[Scene] = field(default_factory=list)
    automations: list[dict[str, Any]] = field(default_factory=list)  # HomeKit engine
    hc_automations: list[dict[str, Any]] = field(default_factory=list)  # Homecast engine
    view_only: bool = False  # relay's Apple ID lacks edit access: HomeKit automations read-only
    analytics: bool = True
    scene_management: bool = True  # relay app version supports create/update/delete_scene
    relay_online: bool = True  # the relay Mac serving this home is connected
    # Virtual accessories without a room: roomId "" -> `unknown_0000`.
    virtual_room_uuid: str = ""
    key: str | None = None  # as a state file has it

    @property
    def slug(self) -> str:
        """The home key.

        homecast-web src/lib/slug.ts uniqueKey of the home's name and id.
        """
        return self.key or slug(self.name, self.uuid)

    def all_accessories(self) -> list[Accessory]:
        """Every accessory, group and virtual accessory, room by room.

        Simulator model: the accessories src/server/local-rest.ts getState walks.
        """
        return [acc for room in self.rooms for acc in room.accessories]

    def devices(self) -> list[Accessory]:
        """Real accessories (no groups, no virtual ones), including group members once.

        Simulator model: what the history tools (src/server/local-rest.ts handleGetHistory,
        handleQueryHistory) can have recorded.
        """
        return [a for a in self.all_accessories() if a.members is None and a.virtual is None]

    def virtuals(self) -> list[Accessory]:
        """The virtual accessories.

        Simulator model of src/server/local-hc-automations.ts's virtual accessories.
        """
        return [a for a in self.all_accessories() if a.virtual is not None]

    def room_of(self, acc: Accessory) -> Room:
        """The room holding `acc`.

        Simulator model, no upstream function.
        """
        for room in self.rooms:
            if room.uuid == acc.room_uuid:
                return room
        raise KeyError(acc.uuid)

    def find_room(self, ref: str) -> Room | None:
        """A room by key or display name (case-insensitive).

        As src/server/local-rest.ts handleSetState resolves an update's room.
        """
        needle = ref.strip().lower()
        for room in self.rooms:
            if needle in (room.slug, room.name.lower()):
                return room
        return None

    def find(self, ref: str, room: Room | None = None) -> Accessory | None:
        """An accessory by key, display name or UUID, optionally within one room.

        As src/server/local-rest.ts handleSetState and src/server/local-mcp.ts callTool resolve an
        accessory reference.
        """
        needle = ref.strip().lower()
        pool = room.accessories if room is not None else self.all_accessories()
        for acc in pool:
            if needle in (acc.slug, acc.name.lower(), acc.uuid.lower()):
                return acc
        return None

    def find_scene(self, name: str) -> Scene | None:
        """A scene by name (case-insensitive).

        As src/server/local-mcp.ts callTool's run_scene / update_scene / delete_scene cases find a
        scene by name.
        """
        needle = name.strip().lower()
        return next((s for s in self.scenes if s.name.lower() == needle), None)


# ---------------------------------------------------------------------------------------------
# Accessory templates for generated homes

_LIGHT_NAMES = ("Ceiling Light", "Desk Lamp", "Floor Lamp", "Pendant", "Strip", "Spotlights")


def _light_template(variant: int, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    """A dimmable light; every third one has hue/saturation, every third a color temperature."""
    values: dict[str, Any] = {"on": rng.random() < 0.4, "brightness": rng.randrange(10, 101)}
    settable = ["on", "brightness"]
    if variant % 3 == 1:
        values |= {"hue": rng.randrange(0, 361), "saturation": rng.randrange(0, 101)}
        settable += ["hue", "saturation"]
    elif variant % 3 == 2:
        values["color_temp"] = rng.randrange(140, 501)
        settable.append("color_temp")
    return values, settable


def _climate_template(variant: int, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    """A heater-cooler, or (odd variants) a thermostat service."""
    if variant % 2 == 1:
        # A thermostat service: reported with raw HomeKit names beside current_temp.
        return {
            "current_temp": round(rng.uniform(17, 23), 1),
            "target_temp": 21.0,
            "heating_cooling_current": 1,
            "heating_cooling_target": 1,
            "temperature_units": 0,
        }, ["target_temp", "heating_cooling_target", "temperature_units"]
    return {
        "active": True,
        "current_temp": round(rng.uniform(18, 26), 1),
        "hvac_mode": "cool",
        "hvac_state": "cooling",
        "heat_target": 19.0,
        "cool_target": 22.0,
        "relative_humidity": rng.randrange(35, 70),
        "swing_mode": 0,
        "speed": 50,
    }, ["active", "hvac_mode", "heat_target", "cool_target", "swing_mode", "speed"]


def _template(kind: str, variant: int, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    """Initial values and settable keys of one generated accessory of `kind`."""
    if kind == "light":
        return _light_template(variant, rng)
    if kind in ("switch",):
        return {"on": rng.random() < 0.5}, ["on"]
    if kind == "outlet":
        on = rng.random() < 0.5
        return {"on": on, "outlet_in_use": on}, ["on"]
    if kind == "climate":
        return _climate_template(variant, rng)
    if kind == "lock":
        return {"locked": True, "lock_target": True, "battery": rng.randrange(20, 101)}, [
            "lock_target"
        ]
    if kind == "alarm":
        return {"alarm_state": "off", "alarm_target": "off"}, ["alarm_target"]
    if kind == "motion":
        return {"motion": False, "battery": rng.randrange(5, 101), "low_battery": False}, []
    if kind == "contact":
        return {"contact": 0, "battery": rng.randrange(5, 101), "low_battery": False}, []
    if kind == "temperature":
        values = {"current_temp": round(rng.uniform(15, 25), 1)}
        if variant % 2:
            values["relative_humidity"] = rng.randrange(30, 75)
        return values, []
    if kind == "fan":
        return {"active": False, "speed": 50}, ["active", "speed"]
    if kind == "blind":
        pos = rng.choice((0, 50, 100))
        return {"current_position": pos, "target": pos, "position_state": 2}, ["target"]
    if kind == "valve":
        return {"active": False, "in_use": 0, "valve_type": 1}, ["active"]
    if kind == "speaker":
        return {"volume": rng.randrange(0, 101), "mute": False}, ["volume", "mute"]
    if kind == "light_sensor":
        return {"current_ambient_light_level": round(rng.uniform(1, 800), 1)}, []
    if kind == "other":
        # Sensors getDeviceType has no type name for (src/server/local-rest.ts), reporting
        # the raw characteristic names the relay's mapper gives them.
        battery = {"battery": rng.randrange(5, 101), "low_battery": False}
        if variant % 4 == 1:
            return {"leak_detected": 0, **battery}, []
        if variant % 4 == 2:
            return {"smoke_detected": 0, "carbon_monoxide_detected": 0, **battery}, []
        if variant % 4 == 3:
            return {
                "relative_humidity": rng.randrange(30, 75),
                "current_temp": round(rng.uniform(15, 25), 1),
            }, []
        return {"occupancy_detected": 0, **battery}, []
    # doorbell / button: stateless switches have no value until first pressed
    return {}, []


_KIND_NAMES = {
    "switch": ("Wall Switch", "Fountain", "Coffee Machine"),
    "outlet": ("Smart Plug", "Heater Plug", "TV Outlet"),
    "climate": ("Air Conditioner", "Thermostat"),
    "lock": ("Front Door Lock", "Back Door Lock"),
    "alarm": ("Security System",),
    "motion": ("Motion Sensor", "Hall Motion"),
    "contact": ("Window Sensor", "Door Sensor"),
    "temperature": ("Temperature Sensor", "Climate Sensor"),
    "fan": ("Ceiling Fan", "Pedestal Fan"),
    "blind": ("Blinds", "Roller Shade"),
    "valve": ("Irrigation Valve", "Water Valve"),
    "speaker": ("Speaker", "HomePod"),
    "light_sensor": ("Light Sensor",),
    "doorbell": ("Doorbell",),
    "button": ("Scene Button", "Remote"),
    "other": ("Presence Sensor", "Leak Sensor", "Smoke Alarm", "Humidity Sensor"),
}

_HOME_NAMES = ("George Street", "Beach House", "Mountain Cabin", "City Flat", "Farm")
_ROOM_NAMES = (
    "Living Room",
    "Kitchen",
    "Bedroom 1",
    "Bedroom 2",
    "Hallway",
    "Garden",
    "Office",
    "Garage",
    "Bathroom",
)
# The first accessories of every home cover each type once; the rest repeat the common ones.
_KIND_CYCLE = (
    "light",
    "light",
    "light",
    "switch",
    "outlet",
    "climate",
    "climate",
    "lock",
    "alarm",
    "motion",
    "contact",
    "temperature",
    "fan",
    "blind",
    "valve",
    "speaker",
    "light_sensor",
    "doorbell",
    "button",
    "other",
    "other",
    "other",
    "other",
)
_FILL_CYCLE = ("light", "switch", "outlet", "temperature", "motion", "contact", "light", "blind")


def make_accessory(
    rng: random.Random, room: Room, kind: str, name: str, variant: int = 0
) -> Accessory:
    """A new accessory whose key does not collide with another in the same room.

    Keys as homecast-web src/lib/slug.ts uniqueKey makes them.
    """
    values, settable = _template(kind, variant, rng)
    taken = {a.slug for a in room.accessories}
    while True:
        acc = Accessory(
            uuid=uuid_with_tail(rng),
            name=name,
            kind=kind,
            values=values,
            settable=settable,
            room_uuid=room.uuid,
        )
        if acc.slug not in taken:
            break
    if kind == "climate" and "hvac_mode" in values:
        acc.options["hvac_mode"] = list(HVAC_MODES)
    if kind == "alarm":
        acc.options["alarm_target"] = list(ALARM_TARGETS)
    return acc


def generate_homes(
    seed: int, homes: int, accessories_per_home: int, *, analytics: bool = True
) -> list[Home]:
    """Deterministic homes: every type in each home, a service group, scenes, automations.

    Simulator-only fixture data (seeded); the shapes follow src/server/local-rest.ts getState.
    """
    rng = random.Random(seed)
    result: list[Home] = []
    for h in range(homes):
        name = _HOME_NAMES[h % len(_HOME_NAMES)] + (
            f" {h // len(_HOME_NAMES) + 1}" if h >= 5 else ""
        )
        home = Home(uuid=uuid_with_tail(rng), name=name, analytics=analytics and h == 0)
        room_count = min(len(_ROOM_NAMES), max(3, accessories_per_home // 6))
        home.rooms = [Room(uuid=uuid_with_tail(rng), name=n) for n in _ROOM_NAMES[:room_count]]
        for i in range(accessories_per_home):
            kind = _KIND_CYCLE[i] if i < len(_KIND_CYCLE) else _FILL_CYCLE[i % len(_FILL_CYCLE)]
            room = home.rooms[i % room_count]
            names = _LIGHT_NAMES if kind == "light" else _KIND_NAMES[kind]
            acc_name = f"{room.name} {names[i % len(names)]}"
            same = sum(1 for a in room.accessories if a.name.startswith(acc_name))
            if same:
                acc_name += f" {same + 1}"  # the Home app keeps names unique within a room
            room.accessories.append(make_accessory(rng, room, kind, acc_name, variant=i))
        _add_group(rng, home)
        _add_scenes(rng, home)
        _add_automations(rng, home)
        _add_virtuals(rng, home)
        result.append(home)
    return result


def _add_group(rng: random.Random, home: Home) -> None:
    """A service group of two lights; it is listed in the room of its first member."""
    lights = [a for a in home.all_accessories() if a.kind == "light"][:2]
    if len(lights) < 2:
        return
    room = home.room_of(lights[0])
    group = Accessory(
        uuid=uuid_with_tail(rng),
        name=f"{room.name} Lights",
        kind="light",
        values={},
        settable=[],
        room_uuid=room.uuid,
        members=lights,
    )
    room.accessories.append(group)


def _first(home: Home, kind: str) -> Accessory | None:
    return next((a for a in home.devices() if a.kind == kind), None)


def _add_scenes(rng: random.Random, home: Home) -> None:
    light = _first(home, "light")
    lock = _first(home, "lock")
    home.scenes = [
        Scene(uuid_with_tail(rng), "Good Morning", [], builtin=True),
        Scene(uuid_with_tail(rng), "Good Night", [], builtin=True),
    ]
    if light is not None:
        home.scenes[0].actions = [{"accessory": light.slug, "on": True, "brightness": 80}]
        home.scenes[1].actions = [{"accessory": light.slug, "on": False}]
        home.scenes.append(
            Scene(
                uuid_with_tail(rng),
                "Movie Time",
                [{"accessory": light.slug, "on": True, "brightness": 20}],
            )
        )
    if lock is not None:
        home.scenes[1].actions.append({"accessory": lock.slug, "lock_target": True})
        home.scenes.append(
            Scene(
                uuid_with_tail(rng),
                "Porch at sunset",
                [{"accessory": lock.slug, "lock_target": True}],
                owner="Lock up at sunset",
            )
        )


def _add_automations(rng: random.Random, home: Home) -> None:
    light = _first(home, "light")
    lock = _first(home, "lock")
    motion = _first(home, "motion")
    climate = next(
        (a for a in home.devices() if a.kind == "climate" and "hvac_mode" in a.values), None
    )
    if lock is not None:
        home.automations.append(
            {
                "id": uuid_with_tail(rng),
                "name": "Lock up at sunset",
                "enabled": True,
                "editable": True,
                "trigger": {
                    "type": "event",
                    "events": [{"type": "significantTime", "significantEvent": "sunset"}],
                },
                "actions": [{"accessory": lock.slug, "lock_target": True}],
                "last_fired": None,
            }
        )
    if light is not None:
        home.automations.append(
            {
                "id": uuid_with_tail(rng),
                "name": "Welcome home",
                "enabled": True,
                "editable": False,  # presence trigger made in the Home app
                "trigger": {
                    "type": "event",
                    "events": [{"type": "presence", "presenceEvent": "firstArrive"}],
                    "activation_issue": "disabledNoHomeHub",
                },
                "actions": [{"accessory": light.slug, "on": True}],
                "last_fired": "2026-11-01T18:02:11+00:00",
            }
        )
    if motion is not None and light is not None:
        home.hc_automations.append(
            {
                "id": uuid_with_tail(rng).lower(),
                "name": "Hall light on motion",
                "description": "",
                "enabled": True,
                "mode": "restart",
                "triggers": [
                    {
                        "type": "device",
                        "accessory": motion.slug,
                        "characteristic": "motion",
                        "to": True,
                    }
                ],
                "conditions": [{"type": "sun", "after": "sunset", "before": "sunrise"}],
                "actions": [
                    {"type": "device", "accessory": light.slug, "on": True},
                    {"type": "delay", "seconds": 300},
                    {"type": "device", "accessory": light.slug, "on": False},
                ],
                "last_triggered": None,
                "trigger_count": 0,
                "editable_via_mcp": True,
            }
        )
    if climate is not None:
        home.hc_automations.append(
            {
                "id": uuid_with_tail(rng).lower(),
                "name": "Report humidity",
                "description": "Built in the visual editor",
                "enabled": False,
                "mode": "single",
                "triggers": [
                    {
                        "type": "numeric",
                        "accessory": climate.slug,
                        "characteristic": "relative_humidity",
                        "above": 70,
                    }
                ],
                "conditions": [],
                "actions": [
                    {"_unsupported": "code"},
                    {"type": "notify", "message": "Humid in here", "title": "Humidity"},
                ],
                "last_triggered": "2026-10-12T07:45:00+00:00",
                "trigger_count": 3,
                "editable_via_mcp": False,
            }
        )


def _add_virtuals(rng: random.Random, home: Home) -> None:
    add_virtual(rng, home, "House Mode", Virtual("mode", options=["Home", "Away", "Night"]))
    add_virtual(rng, home, "Guest Switch", Virtual("switch"))
    add_virtual(rng, home, "Visit Counter", Virtual("counter", step=1), initial=0)
    add_virtual(
        rng,
        home,
        "Target Humidity",
        Virtual("number", minimum=30, maximum=80, step=1, unit="%"),
        initial=55,
    )
    add_virtual(rng, home, "Away Note", Virtual("text", controllable=False), initial="")
    add_virtual(rng, home, "Dishwasher Timer", Virtual("timer", duration=3600))
    add_virtual(rng, home, "Bin Day", Virtual("date"), initial="2026-12-03T07:00:00+00:00")


def virtual_room(home: Home) -> Room:
    """The pseudo-room that holds virtual accessories (created on first use).

    src/server/local-rest.ts getState lists virtual accessories in a room of their own.
    """
    for room in home.rooms:
        if room.uuid == home.virtual_room_uuid:
            return room
    room = Room(uuid=home.virtual_room_uuid, name="Unknown")
    home.rooms.append(room)
    return room


def add_virtual(
    rng: random.Random, home: Home, name: str, spec: Virtual, initial: Any = None
) -> Accessory:
    """Create a virtual accessory in `home` with its starting value.

    src/server/local-hc-automations.ts handleCreateVirtualAccessory.
    """
    room = virtual_room(home)
    key = VIRTUAL_KEYS[spec.kind]
    if initial is None:
        initial = {
            "switch": False,
            "mode": spec.options[0] if spec.options else "",
            "number": spec.minimum if spec.minimum is not None else 0,
            "counter": 0,
            "timer": "idle",
            "text": "",
            "date": "",
        }[spec.kind]
    spec.initial = initial
    acc = Accessory(
        uuid=uuid_with_tail(rng),
        name=name,
        kind=_virtual_type(spec.kind),
        values={key: initial},
        settable=[key],
        room_uuid=room.uuid,
        virtual=spec,
    )
    if spec.kind == "mode":
        acc.options[key] = list(spec.options)
    room.accessories.append(acc)
    return acc


# ---------------------------------------------------------------------------------------------
# Rendering


def served_key(key: str, vocabulary: str, wire: dict[str, str]) -> str:
    """The name get_state shows a stored key under.

    src/server/local-rest.ts getSimpleName: the simple name of a characteristic.
    """
    if key in wire:
        return wire[key]
    if vocabulary == LEGACY:
        return LEGACY_NAMES.get(key, key)
    if vocabulary == COMMUNITY:
        return COMMUNITY_NAMES.get(key, key)
    return key


def render_values(
    values: dict[str, Any], vocabulary: str, wire: dict[str, str] | None = None
) -> dict[str, Any]:
    """Values in the served vocabulary (a state file's accessory: in the file's own).

    src/server/local-rest.ts simplifyAccessory with formatValue.
    """
    out: dict[str, Any]
    if wire:
        out = {}
        for key, value in values.items():
            name = wire.get(key, key)
            if name == LEGACY_NAMES["hvac_mode"]:
                out[name] = HVAC_MODES.get(value, 0)
            elif name == LEGACY_NAMES["hvac_state"]:
                out[name] = HVAC_STATES.get(value, 0)
            else:
                out[name] = value
        return out
    if vocabulary == COMMUNITY:
        out = {
            COMMUNITY_NAMES.get(k, k): v for k, v in values.items() if k not in COMMUNITY_UNNAMED
        }
        for key, codes in (("hvac_mode", HVAC_MODES), ("hvac_state", HVAC_STATES)):
            if COMMUNITY_NAMES[key] in out:
                out[COMMUNITY_NAMES[key]] = codes.get(out[COMMUNITY_NAMES[key]], 0)
        return out
    if vocabulary != LEGACY:
        return dict(values)
    out = {}
    for key, value in values.items():
        if key in LEGACY_DROPPED:
            continue
        if key == "hvac_mode":
            out[LEGACY_NAMES[key]] = HVAC_MODES.get(value, 0)
        elif key == "hvac_state":
            out[LEGACY_NAMES[key]] = HVAC_STATES.get(value, 0)
        else:
            out[LEGACY_NAMES.get(key, key)] = value
    return out


def _virtual_type(kind: str) -> str:
    """get_state's type of a virtual accessory: getDeviceType (src/server/local-rest.ts) finds
    a "switch" service on a virtual switch; the others' services and categories ("Sensor",
    "Other"; src/relay/virtual-accessories.ts) match nothing, so they are "other"."""
    return "switch" if kind == "switch" else "other"


def render_accessory(
    home: Home, room: Room, acc: Accessory, vocabulary: str, path: str | None = None
) -> dict[str, Any]:
    """One accessory as get_state shows it (src/server/local-rest.ts getState).

    `name` is the slug path "<home>.<room>.<acc>" (a group member's: "<group path>.<member>"),
    never display names. A virtual accessory is an ordinary accessory carrying its value key,
    with no definition fields; `_settable` lists it only when people may change it.
    """
    source = acc.members[0] if acc.members else acc
    out: dict[str, Any] = {"type": source.kind}
    if path is not None:
        out["name"] = f"{path}.{acc.slug}"  # a member, under its group's path
    elif acc.served_name is not None:
        out["name"] = acc.served_name
    else:
        out["name"] = f"{home.slug}.{room.slug}.{acc.slug}"
    # An unreachable accessory is shown like any other: the relay lists HomeKit's cached
    # values (HomeKitBridge.swift listAccessories: char.rawValue), and isReachable, which
    # accessories.list carries, is not passed on by simplifyAccessory (local-rest.ts).
    out |= render_values(source.values, vocabulary, source.wire)
    settable = [
        served_key(k, vocabulary, source.wire)
        for k in source.settable
        if k in source.values and not (acc.virtual is not None and not acc.virtual.controllable)
    ]
    if settable:
        out["_settable"] = settable
    # The community server never sends _options (simplifyAccessory has no such field), and
    # virtual accessories carry no definition in get_state.
    if source.options and acc.virtual is None and vocabulary != COMMUNITY:
        out["_options"] = {
            served_key(k, vocabulary, source.wire): list(v) for k, v in source.options.items()
        }
        if "hvac_mode" in source.options and (vocabulary == LEGACY or "hvac_mode" in source.wire):
            out["_options"]["target_heater_cooler_state"] = [0, 1, 2]
    if acc.members:
        out["group"] = True
        group_path = out["name"]
        out["accessories"] = {
            m.slug: render_accessory(home, home.room_of(m), m, vocabulary, group_path)
            for m in acc.members
        }
    return out


# ---------------------------------------------------------------------------------------------
# Writes


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise WriteError("INVALID_VALUE", f"{key} expects a boolean, got {value!r}")


def _number(key: str, value: Any, low: float, high: float, *, integer: bool) -> float | int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WriteError("INVALID_VALUE", f"{key} expects a number, got {value!r}")
    # The relay clamps to the characteristic's range rather than refusing
    # (CharacteristicMapper.swift convertValue -> clampToRange).
    value = min(max(value, low), high)
    return round(value) if integer else round(float(value), 1)


_INT_RANGES = {
    "brightness": (0, 100),
    "saturation": (0, 100),
    "hue": (0, 360),
    "color_temp": (140, 500),
    "speed": (0, 100),
    "volume": (0, 100),
    "target": (0, 100),
    "swing_mode": (0, 1),
    "heating_cooling_target": (0, 3),
    "temperature_units": (0, 1),
}
# HomeKit's default characteristic ranges; real devices narrow them further.
_FLOAT_RANGES = {"heat_target": (0, 25), "cool_target": (10, 35), "target_temp": (10, 38)}


def normalize_key(key: str, value: Any) -> tuple[str, Any]:
    """Map an older raw write key to the current one (accepted by every server version).

    The relay's write path (src/server/homekit-write.ts executeHomeKitWrite) accepts both names.
    """
    if key == "target_heater_cooler_state":
        inverse = {v: k for k, v in HVAC_MODES.items()}
        if isinstance(value, int) and not isinstance(value, bool) and value in inverse:
            return "hvac_mode", inverse[value]
        raise WriteError("INVALID_VALUE", f"{key} expects 0, 1 or 2, got {value!r}")
    return CURRENT_NAMES.get(key, key), value


def check_value(acc: Accessory, key: str, value: Any) -> Any:
    """Validate one write of `acc`; returns the stored form or raises WriteError.

    The relay's per-characteristic check (HomeKitManager.swift setState), reported by
    src/server/homekit-write.ts executeHomeKitWrite.
    """
    if acc.virtual is not None:
        return _check_virtual(acc, key, value)
    if key == "hvac_mode" and value == "off" and "active" in acc.settable:
        return value  # the relay turns "off" into active=false
    if key not in acc.settable:
        raise WriteError(
            "CHARACTERISTIC_NOT_WRITABLE", f"{key} is not writable on {acc.name} ({acc.kind})"
        )
    if key in ("on", "active", "mute"):
        return _bool(key, value)
    if key == "lock_target":
        return _bool(key, value)
    if key == "alarm_target":
        if isinstance(value, int) and not isinstance(value, bool):
            inverse = {v: k for k, v in ALARM_TARGETS.items()}
            if value in inverse:
                return inverse[value]
        if isinstance(value, str) and value.lower() in ALARM_TARGETS:
            return value.lower()
        raise WriteError(
            "INVALID_VALUE", f"alarm_target must be home/away/night/off, got {value!r}"
        )
    if key == "hvac_mode":
        if isinstance(value, str) and value.lower() in HVAC_MODES:
            return value.lower()
        raise WriteError("INVALID_VALUE", f"hvac_mode must be auto/heat/cool/off, got {value!r}")
    if key in _INT_RANGES:
        low, high = _INT_RANGES[key]
        return _number(key, value, low, high, integer=True)
    if key in _FLOAT_RANGES:
        low, high = _FLOAT_RANGES[key]
        return _number(key, value, low, high, integer=False)
    return value


def _check_virtual(acc: Accessory, key: str, value: Any) -> Any:
    spec = acc.virtual
    assert spec is not None
    expected = VIRTUAL_KEYS[spec.kind]
    if key != expected:
        raise WriteError(
            "CHARACTERISTIC_NOT_WRITABLE", f"{acc.name} is a {spec.kind}; set {expected} instead"
        )
    if not spec.controllable:
        raise WriteError("CHARACTERISTIC_NOT_WRITABLE", f"{acc.name} is not adjustable here")
    if spec.kind == "switch":
        return _bool(key, value)
    if spec.kind == "mode":
        # A mode loaded from a state file has no known options (get_state lists none).
        if spec.options and value not in spec.options:
            raise WriteError("INVALID_VALUE", f"{value!r} is not one of {spec.options}")
        return value
    if spec.kind == "counter":
        if isinstance(value, bool) or not isinstance(value, int):
            raise WriteError("INVALID_VALUE", f"{key} expects an integer, got {value!r}")
        return value
    if spec.kind == "number":
        return _check_virtual_number(spec, key, value)
    if spec.kind == "timer":
        # "active" starts the timer; anything else cancels it.
        return "active" if value == "active" else "idle"
    return _check_virtual_text(spec, key, value)


def _check_virtual_number(spec: Virtual, key: str, value: Any) -> Any:
    """A number within the virtual accessory's bounds (open where it has none)."""
    low = spec.minimum if spec.minimum is not None else float("-inf")
    high = spec.maximum if spec.maximum is not None else float("inf")
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise WriteError("INVALID_VALUE", f"{key}={value!r} is outside {low}-{high}")
    return value


def _check_virtual_text(spec: Virtual, key: str, value: Any) -> Any:
    """A string; a date virtual's non-empty string is ISO 8601."""
    if not isinstance(value, str):
        raise WriteError("INVALID_VALUE", f"{key} expects a string, got {value!r}")
    if spec.kind == "date" and value:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as err:
            raise WriteError("INVALID_VALUE", f"{key} expects ISO 8601, got {value!r}") from err
    return value


def apply_values(acc: Accessory, changes: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Store accepted writes and what follows from them; returns {key: (old, new)} changed.

    HomeKit's own effects of a write (a target moves the current value), as the relay then reports
    them.
    """
    before = dict(acc.values)
    for key, value in changes.items():
        if key == "hvac_mode" and value == "off":
            acc.values["active"] = False
            continue
        acc.values[key] = value
    v = acc.values
    if "lock_target" in changes:
        v["locked"] = v["lock_target"]
    if "alarm_target" in changes:
        v["alarm_state"] = v["alarm_target"]
    if "target" in changes and "current_position" in v:
        v["current_position"] = v["target"]
        v["position_state"] = 2
    if acc.kind == "valve" and "active" in changes:
        v["in_use"] = int(bool(v["active"]))
    if acc.kind == "outlet" and "on" in changes:
        v["outlet_in_use"] = bool(v["on"])
    if "hvac_state" in v:
        v["hvac_state"] = hvac_state(v)
    if "heating_cooling_target" in changes:
        # Thermostat current state: off/heat/cool follow the target; auto settles on heat.
        v["heating_cooling_current"] = {0: 0, 1: 1, 2: 2, 3: 1}[v["heating_cooling_target"]]
    return {k: (before.get(k), v[k]) for k in v if before.get(k) != v[k]}


def hvac_state(values: dict[str, Any]) -> str:
    """What a heater-cooler is doing given its mode, targets and the room temperature.

    Simulator physics, no upstream function: HomeKit reports the heater-cooler's current state.
    """
    if not values.get("active"):
        return "inactive"
    temp = values.get("current_temp", 20.0)
    mode = values.get("hvac_mode", "auto")
    if mode in ("heat", "auto") and temp < values.get("heat_target", 19.0) - 0.5:
        return "heating"
    if mode in ("cool", "auto") and temp > values.get("cool_target", 24.0) + 0.5:
        return "cooling"
    return "idle"


def format_value(value: Any) -> str:
    """A value as set_state's change lines show it.

    The `key=value` text of src/server/local-rest.ts handleSetState's change lines.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
