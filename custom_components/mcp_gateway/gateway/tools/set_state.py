"""set_state: updates applied through Home Assistant's services, as the caller, truthfully.

Each update becomes service calls (service_calls.py) run under the caller's context, so HA's
own entity permissions apply; its result says what really happened: done once the state shows
it, in progress, sent but not confirmed, of unknown outcome (sent, then the backend's answer was
lost: it may have run), or failed, and the write goes into the logbook.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_FRIENDLY_NAME, STATE_UNAVAILABLE
from homeassistant.core import (
    Context,
    Event,
    EventStateChangedData,
    HomeAssistant,
    State,
    callback,
)
from homeassistant.exceptions import HomeAssistantError, Unauthorized
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.event import async_track_state_change_event
import voluptuous as vol

from ...core.const import DOMAIN
from ...core.localtime import local_state
from ...core.settings import gateway_settings
from ...core.words import words
from ...permissions.policy import async_record_write
from ...permissions.visibility import can_control_entity, readable_entities
from ..approval.rules import Change, sensitive_change
from ..approval.texts import describe_update
from ..catalog.store import PreparedCall, ToolFailure
from ..finding import homes, matching
from ..finding.query import EntityQuery, given
from ..finding.selection import (
    EntityRef,
    backend_key,
    candidate_entities,
    every_entity,
    select_entities,
)
from ..finding.unexposed import entity_unexposed, no_match_hint
from .changes import ChangeWatch
from .levels import LEVEL_NAMES, entity_levels, level_units
from .service_calls import UPDATE_PROPERTIES, BadUpdate, ServiceCall, service_calls

if TYPE_CHECKING:
    from ...mcp.server import RequestContext

# Every service call reaches a backend through an entity; this bounds a stuck one.
SERVICE_TIMEOUT: Final = 30.0
MAX_SET_UPDATES: Final = 50

# Outcomes of one update, as set_state reports them.
DONE: Final = "done"
IN_PROGRESS: Final = "in_progress"  # the device reports it is getting there (opening, locking)
NOT_CONFIRMED: Final = "sent_not_confirmed"  # HA accepted it; the state has not followed
FAILED: Final = "failed"
# Sent to the backend, whose answer was lost (connection dropped, time ran out): it may have run.
UNKNOWN: Final = "outcome_unknown"
# How long a sent update may take to show in the state before it is "not confirmed".
CONFIRM_SECONDS: Final = 3.0

type Expectation = Callable[[State], str | None]


SET_STATE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "updates": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_SET_UPDATES,
            "items": {
                "type": "object",
                "properties": {
                    **UPDATE_PROPERTIES,
                    "name": {
                        "type": "string",
                        "description": 'Or its name ("desk lamp"), of one entity.',
                    },
                    "home": {"type": "string", "description": "This update's home."},
                },
                "required": [],
                "additionalProperties": False,
            },
        },
        "home": {"type": "string", "description": "Home of the updates' entities."},
    },
    "required": ["updates"],
    "additionalProperties": False,
}


async def async_set_state(
    hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
) -> dict[str, Any]:
    """Apply updates through HA services, each as the caller; each reports what really happened.

    An unavailable entity is not sent anything (HA's services would skip it silently and
    report success); a sent update is "done" only once the state shows it.
    """
    user: User = ctx.user
    # Updates prepare_set_state resolved come back as they were (an id resolves to itself);
    # one it could not resolve carries its error.
    updates = [
        update if "error" in update else _resolve(hass, user, update, args.get("home"))
        for update in args["updates"]
    ]
    wanted = [update["entity_id"] for update in updates if "error" not in update]
    known = {
        ref.entity_id: ref
        for ref in readable_entities(hass, user, candidate_entities(hass, _ids_query(wanted)))
    }
    context = Context(user_id=user.id)
    updated = frozenset(wanted)
    results = await asyncio.gather(
        *(
            _apply_update(hass, ctx, known, update, context, updated=updated)
            if "error" not in update
            else asyncio.sleep(0, _unresolved(update))
            for update in updates
        )
    )
    if homes.several_homes(hass):
        _add_homes(hass, results, known)
    counts = dict.fromkeys((DONE, IN_PROGRESS, NOT_CONFIRMED, UNKNOWN, FAILED), 0)
    for result in results:
        counts[result["status"]] += 1
    summary = _summary(results, counts)
    if units := level_units(_levels_shown(results), hass.config.units.temperature_unit):
        summary["units"] = units
    _fail_if_none_applied(results, counts, summary)
    return summary


def prepare_set_state(hass: HomeAssistant, user: User, args: dict[str, Any]) -> PreparedCall:
    """The updates with their entities resolved (by id, or by name and home), and those
    that need a person: set_state then runs exactly these entities.

    Only updates set_state would attempt for this user are weighed: one whose entity the
    user may not read or control, or that is no valid update of its entity, fails without
    asking anyone.
    """
    updates = [_resolve(hass, user, update, args.get("home")) for update in args["updates"]]
    wanted = [update["entity_id"] for update in updates if "error" not in update]
    known = {
        ref.entity_id: ref
        for ref in readable_entities(hass, user, candidate_entities(hass, _ids_query(wanted)))
    }
    settings = gateway_settings(hass)
    sensitive = [
        update
        for update in updates
        if "error" not in update
        and (ref := known.get(update["entity_id"])) is not None
        and can_control_entity(user, ref.entity_id)
        and _takes(ref.domain, update)
        and sensitive_change(hass, settings, _change(update))
    ]
    prepared = {**args, "updates": updates}
    if not sensitive:
        return PreparedCall(prepared)
    # The person approves the whole call: every update it would send is said, not only the
    # sensitive ones.
    sent = [update for update in updates if "error" not in update and update["entity_id"] in known]
    return PreparedCall(
        prepared,
        "; ".join(describe_update(hass, update) for update in sent),
        tuple(dict.fromkeys(update["entity_id"] for update in sensitive)),
    )


def _ids_query(entity_ids: Sequence[str]) -> EntityQuery:
    """The entities of these ids (none given: every entity, as an empty filter means)."""
    return EntityQuery(entity_ids=tuple(entity_ids) or None)


def _change(update: Mapping[str, Any]) -> Change:
    """One update as the approval rule weighs it: the state and position it asks for."""
    state = update.get("state")
    position = update.get("position")
    return Change(
        update["entity_id"],
        state if isinstance(state, str) else None,
        float(position)
        if isinstance(position, int | float) and not isinstance(position, bool)
        else None,
    )


def _add_homes(
    hass: HomeAssistant, results: Sequence[dict[str, Any]], known: Mapping[str, EntityRef]
) -> None:
    """Each result's home, where there are several."""
    for result in results:
        if (ref := known.get(result.get("entity_id", ""))) is not None:
            result["home"] = ref.home(hass)


def _summary(results: list[dict[str, Any]], counts: Mapping[str, int]) -> dict[str, Any]:
    """How many updates were done, failed, not confirmed and may have run; then each one."""
    summary: dict[str, Any] = {
        "updated": counts[DONE],
        "failed": counts[FAILED],
    }
    if pending := counts[IN_PROGRESS] + counts[NOT_CONFIRMED]:
        summary["not_confirmed"] = pending
    if counts[UNKNOWN]:
        summary["may_have_run"] = counts[UNKNOWN]
    summary["results"] = results
    return summary


def _levels_shown(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The levels the results report (their units are said once)."""
    shown = {
        key
        for result in results
        for item in (result, *result.get("changed", ()))
        for key in item
        if key in LEVEL_NAMES
    }
    return sorted(shown)


def _fail_if_none_applied(
    results: Sequence[Mapping[str, Any]], counts: Mapping[str, int], summary: dict[str, Any]
) -> None:
    """A call that applied nothing is an error, with the summary: failed, or of unknown outcome."""
    if counts[FAILED] == len(results):
        first = next(result["error"] for result in results)
        raise ToolFailure(
            f"No update was applied: {first}" if len(results) == 1 else "No update was applied.",
            code="failed",
            **summary,
        )
    if counts[FAILED] + counts[UNKNOWN] == len(results):
        # Never "not applied": a retry of what did run would repeat it.
        first = next(result["error"] for result in results if result["status"] == UNKNOWN)
        raise ToolFailure(
            f"No update is known to have been applied, but {counts[UNKNOWN]} may have run: "
            f"{first}. Read the state with get_state before trying again.",
            code=UNKNOWN,
            **summary,
        )


async def _apply_update(
    hass: HomeAssistant,
    ctx: RequestContext,
    known: Mapping[str, EntityRef],
    update: Mapping[str, Any],
    context: Context,
    *,
    updated: frozenset[str],
) -> dict[str, Any]:
    entity_id: str = update["entity_id"]
    ref = known.get(entity_id)
    if ref is None:
        # Unknown, not ours, unexposed and unreadable look the same: nothing is revealed.
        return _failed(entity_id, _no_such_entity(hass, ctx.user, entity_id))
    try:
        calls = service_calls(ref.domain, update)
    except BadUpdate as err:
        return _failed(entity_id, f"{entity_id}: {err}")
    before = hass.states.get(entity_id)
    if before is None or before.state == STATE_UNAVAILABLE:
        return _failed(
            entity_id,
            f"{_name(before, entity_id)} is unavailable (its device is offline or "
            "unreachable); nothing was sent.",
        )
    expect = expectation(ref.domain, update, before)
    changed = asyncio.Event()

    # A callback, so HA runs it in the loop: a plain lambda would run in an executor thread,
    # where setting the event is not thread-safe and the waiter may never wake.
    @callback
    def _changed(_event: Event[EventStateChangedData]) -> None:
        changed.set()

    unsub = async_track_state_change_event(hass, entity_id, _changed)
    # A scene or rule says nothing of what it did: what changed meanwhile is the answer. The
    # other entities of this call change because they were asked to, so they are left out.
    watch = ChangeWatch(hass, ctx.user, exclude=updated) if _runs_actions(hass, ref) else None
    changes: dict[str, Any] = {}
    try:
        done, error, status = await _run_calls(hass, entity_id, calls, context)
        reported = True
        if error is None:
            device = _Device(hass, ref)
            status, reported = await _await_state(hass, entity_id, expect, changed, device)
            if watch is not None:
                changes = await watch.async_settle(
                    [device.found[0]] if device.found is not None else []
                )
                changes.pop("units", None)  # said once for the whole answer
    finally:
        unsub()
        if watch is not None:
            watch.stop()
    async_record_write(
        hass,
        user=ctx.user,
        client_name=ctx.client_name,
        tool="set_state",
        summary=f"set_state {_name(before, entity_id)}: {_describe(update)}"
        + {DONE: "", FAILED: "", UNKNOWN: " (sent, outcome unknown)"}.get(
            status, " (sent, not confirmed)"
        ),
        success=error is None,
        backend=ref.backend.gateway_name,
        entity_id=entity_id,
        context=context,
    )
    if error is not None:
        return {
            **_failed(entity_id, error),
            "status": status,
            "done": ", ".join(done) if done else "nothing",
        }
    state = hass.states.get(entity_id)
    result: dict[str, Any] = {
        "entity_id": entity_id,
        "ok": status == DONE,
        "status": status,
        "state": local_state(state) if state is not None else None,
    }
    if state is not None:
        # What the device reports now (brightness, position, setpoint…): no read-back needed.
        result.update(entity_levels(state))
        # Where the device speaks another unit than HA (a hub in °F): its own words, in both.
        if (found := backend_key(hass, ref)) is not None and (
            reading := found[0].device_reading(
                found[1], found[2], hass.config.units.temperature_unit
            )
        ):
            result["device_reported"] = reading
    result.update(changes)
    if not reported:
        # Home Assistant shows what was sent; the device has not said so yet.
        result["note"] = (
            f"Sent, not confirmed: {_name(state, entity_id)} has not reported it yet "
            f"(within {CONFIRM_SECONDS:g} s); Home Assistant shows the expected "
            f"{result['state']} meanwhile. Check again with get_state."
        )
    elif status == NOT_CONFIRMED:
        result["note"] = (
            f"Sent, not confirmed: {_name(state, entity_id)} did not show the change within "
            f"{CONFIRM_SECONDS:g} s; check again with get_state."
        )
    elif status == IN_PROGRESS:
        result["note"] = f"Sent; {_name(state, entity_id)} is still {result['state']}."
    return result


def _resolve(
    hass: HomeAssistant, user: User, update: Mapping[str, Any], home: Any
) -> dict[str, Any]:
    """The update with its entity id, found by name (and home) when it gives none; or with
    an `error` saying why nothing is sent (no such entity, or which entities and homes a name
    matches when it matches several)."""
    resolved = {key: value for key, value in update.items() if key != "home"}
    home = given(update, "home") or given({"home": home}, "home")
    name = given(update, "name")
    entity_id = given(update, "entity_id")
    try:
        in_homes = homes.wanted_homes(hass, home) if home is not None else None
    except ToolFailure as err:
        return {**resolved, "error": err.message}
    if entity_id is not None:
        resolved.pop("name", None)  # the id says which entity
        ref = _readable(hass, user, entity_id) if in_homes is not None else None
        if ref is not None and in_homes is not None and (at := ref.home(hass)) not in in_homes:
            return {**resolved, "error": f"{entity_id} is at {at}, not at {home}."}
        return resolved
    if name is None:
        return {**resolved, "error": "Give entity_id or name."}
    found = _by_name(hass, user, name, update, in_homes)
    where = f" at {home}" if home is not None else ""
    if not found:
        hint = no_match_hint(hass, user, EntityQuery(name=name, home=home))
        return {**resolved, "error": f"Nothing named '{name}'{where}. {hint}"}
    if len(found) > 1:
        listed = ", ".join(f"{ref.entity_id} ({ref.home(hass)})" for ref in found[:10])
        in_which = sorted({ref.home(hass) for ref in found}, key=str.casefold)
        advice = (
            f"give home ({', '.join(in_which)}) or entity_id"
            if len(in_which) > 1
            else "give entity_id"
        )
        return {
            **resolved,
            "error": f"'{name}'{where} matches {len(found)} entities: {listed}; {advice}. "
            "Nothing was sent.",
        }
    resolved.pop("name")
    return {**resolved, "entity_id": found[0].entity_id}


def _unresolved(update: Mapping[str, Any]) -> dict[str, Any]:
    """The result of an update no entity was found for: named as the caller named it."""
    if entity_id := given(update, "entity_id"):
        return _failed(entity_id, update["error"])
    return {"name": update.get("name"), "ok": False, "status": FAILED, "error": update["error"]}


def _readable(hass: HomeAssistant, user: User, entity_id: str) -> EntityRef | None:
    refs = readable_entities(
        hass, user, candidate_entities(hass, EntityQuery(entity_ids=(entity_id,)))
    )
    return refs[0] if refs else None


def _by_name(
    hass: HomeAssistant,
    user: User,
    name: str,
    update: Mapping[str, Any],
    in_homes: set[str] | None,
) -> list[EntityRef]:
    """The entities a name means that could take the update: whole names first (a name the
    home's name only precedes counts as whole), then those every word of it starts."""
    refs = readable_entities(
        hass, user, select_entities(hass, every_entity(hass), EntityQuery(name=name)).refs
    )
    if in_homes is not None:
        refs = [ref for ref in refs if ref.home(hass) in in_homes]
    fields = {key: value for key, value in update.items() if key not in ("name", "home")}
    refs = [ref for ref in refs if _takes(ref.domain, fields)]
    wanted = words(name)

    def whole(ref: EntityRef) -> bool:
        have = words(_name(hass.states.get(ref.entity_id), ref.entity_id))
        home_words = words(ref.home(hass))
        return have == wanted or have == home_words + wanted

    return [ref for ref in refs if whole(ref)] or refs


def _takes(domain: str, fields: Mapping[str, Any]) -> bool:
    try:
        service_calls(domain, fields)
    except BadUpdate:
        return False
    return True


def _no_such_entity(hass: HomeAssistant, user: User, entity_id: str) -> str:
    """No entity of ours by that id that the caller may use: said plainly (unlike an entity
    that exists but is offline), with the closest ids the caller may read; one the caller may
    read that is hidden from assistants is named as such, with the setting."""
    if hidden := entity_unexposed(hass, user, entity_id):
        return f"{hidden} Nothing was sent."
    message = (
        f"No entity {entity_id} exists among the ones you may control; nothing was sent. "
        'Find the entity id with get_state (e.g. name="kitchen lamp").'
    )
    readable = {
        ref.entity_id: ref.entity_id for ref in readable_entities(hass, user, every_entity(hass))
    }
    object_id = entity_id.partition(".")[2] or entity_id
    if close := matching.closest_names(object_id, readable):
        message += f" Closest: {', '.join(close)}."
    return message


def _runs_actions(hass: HomeAssistant, ref: EntityRef) -> bool:
    """A scene, or a button that runs a rule (its translation key says so)."""
    if ref.domain == "scene":
        return True
    if ref.domain != "button":
        return False
    entry = er.async_get(hass).async_get(ref.entity_id)
    return entry is not None and entry.translation_key == "run_rule"


def _failed(entity_id: str, error: str) -> dict[str, Any]:
    return {"entity_id": entity_id, "ok": False, "status": FAILED, "error": error}


def _name(state: State | None, entity_id: str) -> str:
    if state is None:
        return entity_id
    return str(state.attributes.get(ATTR_FRIENDLY_NAME) or entity_id)


async def _run_calls(
    hass: HomeAssistant, entity_id: str, calls: Sequence[ServiceCall], context: Context
) -> tuple[list[str], str | None, str]:
    """The service calls in order until one fails: (what ran, the error or None, FAILED or
    UNKNOWN for a call that may have run before its answer was lost)."""
    done: list[str] = []
    for domain, service, data in calls:
        try:
            async with asyncio.timeout(SERVICE_TIMEOUT):
                await hass.services.async_call(
                    domain,
                    service,
                    {"entity_id": entity_id, **data},
                    blocking=True,
                    context=context,
                )
        except Unauthorized:
            error = f"Permission denied: this Home Assistant user may not control {entity_id}"
            return done, error, FAILED
        except TimeoutError:
            error = f"{entity_id}: {domain}.{service} timed out; it may have run"
            return done, error, UNKNOWN
        except HomeAssistantError as err:
            if err.translation_domain == DOMAIN and err.translation_key == UNKNOWN:
                return done, f"{entity_id}: {domain}.{service}: {err}", UNKNOWN
            return done, f"{entity_id}: {domain}.{service} failed: {err}", FAILED
        except vol.Invalid as err:
            return done, f"{entity_id}: {domain}.{service} failed: {err}", FAILED
        done.append(f"{domain}.{service}")
    return done, None, DONE


class _Device:
    """What the entity's backend can tell beyond the state: whether the state shows a write
    the device has not reported yet, and a read back that confirms or corrects it."""

    def __init__(self, hass: HomeAssistant, ref: EntityRef) -> None:
        self.found = backend_key(hass, ref)

    def awaiting(self) -> bool:
        if self.found is None:
            return False
        runtime, platform, key = self.found
        return runtime.awaits_report(platform, key)

    @property
    def reads_back(self) -> bool:
        return self.found is not None and self.found[0].reads_back

    async def read_back(self) -> None:
        if self.found is not None:
            await self.found[0].async_read_back()


async def _await_state(
    hass: HomeAssistant,
    entity_id: str,
    expect: Expectation,
    changed: asyncio.Event,
    device: _Device,
) -> tuple[str, bool]:
    """Wait (briefly) until the device reports the update: (done, in progress or not
    confirmed; whether the state shown is one the device has reported).

    A state the backend shows before the device reported it (optimistic) is no proof: a
    backend that can read back is asked to, until the device reports what was asked.
    """
    loop = hass.loop
    deadline = loop.time() + CONFIRM_SECONDS

    def outcome() -> tuple[str | None, bool]:
        state = hass.states.get(entity_id)
        return (expect(state) if state is not None else None), not device.awaiting()

    while True:
        shown, reported = outcome()
        if shown == DONE and reported:
            return DONE, True
        remaining = deadline - loop.time()
        if remaining <= 0:
            break
        changed.clear()
        try:
            async with asyncio.timeout(remaining):
                if device.reads_back:
                    await device.read_back()
                else:
                    await changed.wait()
        except TimeoutError:
            break
    shown, reported = outcome()
    if shown == DONE and reported:
        return DONE, True
    return (IN_PROGRESS if shown == IN_PROGRESS else NOT_CONFIRMED), reported


_TRANSITIONS: Final = {
    "open": ("opening",),
    "closed": ("closing",),
    "locked": ("locking",),
    "unlocked": ("unlocking",),
}


def expectation(domain: str, update: Mapping[str, Any], before: State) -> Expectation:
    """How to tell, from the entity's state, that the update took effect.

    Returns DONE when it shows, IN_PROGRESS for the way there (opening, arming), else None.
    """
    signs = _Signs()
    for add in _DOMAIN_SIGNS.get(domain, ()):
        add(domain, update, signs)
    if not signs.checks:
        # Nothing to compare (a button press, a scene, a datetime): any new state shows it ran.
        return lambda s: DONE if s.last_updated != before.last_updated else None
    return signs.outcome


@dataclass(slots=True)
class _Signs:
    """What shows an update took effect (every check true), and which states show it is on
    the way there."""

    checks: list[Callable[[State], bool]] = field(default_factory=list)
    transitional: tuple[str, ...] = ()

    def outcome(self, state: State) -> str | None:
        if all(test(state) for test in self.checks):
            return DONE
        return IN_PROGRESS if state.state in self.transitional else None


def _power_signs(domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    """On or off as asked; a light given only a level turns on."""
    wanted = update.get("state")
    if wanted in ("on", "off"):
        signs.checks.append(lambda s: s.state == wanted)
    elif domain == "light" and wanted is None:
        signs.checks.append(lambda s: s.state == "on")


def _brightness_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    if update.get("state") != "off" and (level := update.get("brightness_pct")):
        # Shown as HA shows it: 0-255, a step of 0.4 %.
        signs.checks.append(lambda s: _close(entity_levels(s).get("brightness_pct"), level))


def _fan_speed_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    if (percentage := update.get("percentage")) is not None:
        signs.checks.append(lambda s: _near_step(s, percentage))


def _target_signs(domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    """A cover, valve or lock ends in the state asked, by way of its transitions."""
    wanted = update.get("state")
    if not isinstance(wanted, str) or wanted == "stop":
        return
    # A lock told to open ends open or, once the latch falls back, unlocked.
    targets = ("open", "unlocked") if (domain, wanted) == ("lock", "open") else (wanted,)
    signs.checks.append(lambda s: s.state in targets)
    signs.transitional = _TRANSITIONS.get(wanted, ()) + (("unlocking",) if domain == "lock" else ())


def _alarm_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    if isinstance(wanted := update.get("state"), str):
        signs.checks.append(lambda s: s.state == wanted)
        signs.transitional = ("arming", "pending")


def _climate_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    wanted = update.get("state")
    mode = update.get("hvac_mode") or (wanted if wanted not in (None, "on") else None)
    if mode is not None:
        signs.checks.append(lambda s: s.state == mode)
    if (temperature := update.get("temperature")) is not None:
        signs.checks.append(lambda s: _close(s.attributes.get("temperature"), temperature))


def _text_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    if (value := update.get("value", update.get("state"))) is not None:
        signs.checks.append(lambda s: s.state == str(value))


def _time_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    # HA shows a time as HH:MM:SS; the update may leave the seconds out.
    if isinstance(value := update.get("value", update.get("state")), str):
        wanted = value if value.count(":") == 2 else f"{value}:00"
        signs.checks.append(lambda s: s.state == wanted)


def _number_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    if (value := update.get("value", update.get("state"))) is not None:
        signs.checks.append(lambda s: _close(s.state, value))


def _position_signs(_domain: str, update: Mapping[str, Any], signs: _Signs) -> None:
    if "position" in update:
        position = update["position"]
        signs.checks.append(lambda s: _close(s.attributes.get("current_position"), position))
        signs.transitional = ("opening", "closing")


type _SignsOf = Callable[[str, Mapping[str, Any], _Signs], None]

# What shows each domain's update took effect, in the order each may set the transitions.
_DOMAIN_SIGNS: Final[Mapping[str, tuple[_SignsOf, ...]]] = {
    "light": (_power_signs, _brightness_signs),
    "switch": (_power_signs,),
    "fan": (_power_signs, _fan_speed_signs),
    "cover": (_target_signs, _position_signs),
    "valve": (_target_signs, _position_signs),
    "lock": (_target_signs,),
    "alarm_control_panel": (_alarm_signs,),
    "climate": (_climate_signs,),
    "select": (_text_signs,),
    "text": (_text_signs,),
    "number": (_number_signs,),
    "time": (_time_signs,),
}


def _near_step(state: State, percentage: float) -> bool:
    """A fan's speed within half a step of the asked one (3 speeds: 50 % shows as 67 %)."""
    if percentage == 0:
        return state.state == "off"
    step: Any = state.attributes.get("percentage_step") or 1
    shown: Any = state.attributes.get("percentage")
    try:
        return abs(float(shown) - percentage) <= float(step) / 2 + 0.5
    except (TypeError, ValueError):
        return False


def _close(value: Any, wanted: Any) -> bool:
    try:
        return abs(float(value) - float(wanted)) < 0.51
    except (TypeError, ValueError):
        return False


def _describe(update: Mapping[str, Any]) -> str:
    return ", ".join(
        f"{key}={value}" for key, value in update.items() if key not in ("entity_id", "code")
    )
