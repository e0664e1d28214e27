"""What a scene or rule run changed, as far as Home Assistant saw it.

A scene or rule reports nothing of what it did. The gateway watches the state changes of the
entities the caller may read from just before the run until SETTLE_SECONDS after it (reading
back a backend that can be read back), and lists them; an empty list says plainly that it
cannot tell. Anything else that changed in that window is listed too, and said to be.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.const import ATTR_FRIENDLY_NAME
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, State, callback
from homeassistant.helpers.event import async_track_state_change_event

from ...core.localtime import local_state
from ...framework.base import BackendRuntime
from ...mcp.types import CallToolResult
from ...permissions.visibility import readable_entities
from ..finding.selection import every_entity
from .levels import LEVEL_NAMES, entity_levels, level_units

# How long after a run its effects are watched for: devices on a hub report within a second
# or two; a backend polled less often may report later (the answer then says so).
SETTLE_SECONDS: Final = 2.0
# An answer lists at most this many changed entities, then how many more.
MAX_LISTED: Final = 30


class ChangeWatch:
    """State changes of the caller's readable entities while it is open."""

    def __init__(self, hass: HomeAssistant, user: User, *, exclude: Iterable[str] = ()) -> None:
        self._hass = hass
        skip = set(exclude)
        watched = [
            ref.entity_id
            for ref in readable_entities(hass, user, every_entity(hass))
            if ref.entity_id not in skip
        ]
        self._changed: dict[str, State] = {}
        self._unsub = (
            async_track_state_change_event(hass, watched, self._on_change) if watched else None
        )

    @callback
    def _on_change(self, event: Event[EventStateChangedData]) -> None:
        new, old = event.data["new_state"], event.data["old_state"]
        if new is None:
            return
        if old is not None and old.state == new.state and entity_levels(old) == entity_levels(new):
            return  # an attribute of no interest (a timestamp, a signal strength)
        self._changed[new.entity_id] = new

    def stop(self) -> None:
        """Stop watching (idempotent)."""
        if self._unsub is not None:
            self._unsub()
            self._unsub = None

    async def async_settle(self, runtimes: Iterable[BackendRuntime] = ()) -> dict[str, Any]:
        """Wait out the window, then what changed in it: `changed` and a `changed_note`."""
        readers = [runtime for runtime in runtimes if runtime.reads_back]
        loop = self._hass.loop
        deadline = loop.time() + SETTLE_SECONDS
        try:
            while (remaining := deadline - loop.time()) > 0:
                async with asyncio.timeout(remaining):
                    if readers:
                        await asyncio.gather(*(runtime.async_read_back() for runtime in readers))
                    else:
                        await asyncio.sleep(remaining)
        except TimeoutError:
            pass
        finally:
            self.stop()
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """What changed so far, sorted by entity id."""
        states = [self._changed[entity_id] for entity_id in sorted(self._changed)]
        changed = [_item(state) for state in states[:MAX_LISTED]]
        if not changed:
            note = (
                f"No entity changed in Home Assistant within {SETTLE_SECONDS:g} s after the "
                "run: the gateway cannot tell what it did (it may have changed nothing, or its "
                "devices report later). Check with get_state."
            )
        else:
            note = (
                f"Entities whose state changed in Home Assistant within {SETTLE_SECONDS:g} s "
                "after the run (anything else that changed then is listed too; devices that "
                "report later are not)."
            )
            if len(states) > MAX_LISTED:
                note += f" {len(states) - MAX_LISTED} more changed."
        summary: dict[str, Any] = {"changed": changed, "changed_note": note}
        shown = sorted({key for item in changed for key in item if key in LEVEL_NAMES})
        if units := level_units(shown, self._hass.config.units.temperature_unit):
            summary["units"] = units
        return summary


def _item(state: State) -> dict[str, Any]:
    item: dict[str, Any] = {"entity_id": state.entity_id}
    if (name := state.attributes.get(ATTR_FRIENDLY_NAME)) is not None:
        item["name"] = str(name)
    item["state"] = local_state(state)
    item.update(entity_levels(state))
    return item


def with_changes(result: CallToolResult, changes: Mapping[str, Any]) -> CallToolResult:
    """A backend tool's result with what the run changed, in its text and structured content
    (the backend's own answer stays as it was)."""
    if result.get("isError"):
        return result
    annotated = result.copy()
    lines = [changes["changed_note"]]
    lines += [
        f"{item['entity_id']}: {item['state']}"
        + "".join(f", {key} {value}" for key, value in item.items() if key not in _SHOWN)
        for item in changes["changed"]
    ]
    if units := changes.get("units"):
        lines.append("Units: " + ", ".join(f"{name} {unit}" for name, unit in units.items()))
    annotated["content"] = [*result.get("content", ()), {"type": "text", "text": "\n".join(lines)}]
    if isinstance(structured := result.get("structuredContent"), dict):
        annotated["structuredContent"] = {**structured, "gateway_changes": dict(changes)}
    return annotated


_SHOWN: Final = frozenset({"entity_id", "name", "state"})
