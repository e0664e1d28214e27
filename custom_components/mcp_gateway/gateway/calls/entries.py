"""Which exposed backend entry a gateway tool call reaches: by the entry's own tool name, or
by its kind's with `entry` naming it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from homeassistant.core import HomeAssistant

from ...core.const import CONF_BACKEND
from ..catalog.store import ExposedBackend, backend_entries, gateway_tool_names


def entry_of(
    hass: HomeAssistant,
    backends: Sequence[ExposedBackend],
    name: str,
    arguments: Mapping[str, Any],
) -> tuple[ExposedBackend | None, str | None]:
    """The one exposed entry a gateway call reaches, else why not (None: no such tool).

    An entry's own name reaches that entry; a kind's name (listed when the kind has several
    exposed entries, and kept callable for clients with an older list) takes `entry`,
    resolved exactly as its listing names them. An `entry` naming another, unknown or
    withdrawn entry is refused, never replaced by a guess; without one, a kind's name
    reaches its entry only when the kind has no other entry at all.
    """
    entry = arguments.get("entry")
    own = next((b for b in backends if b.gateway_name == name), None)
    members = [b for b in backends if b.kind == name] or ([own] if own else [])
    if not members:
        return None, None
    if entry is None:
        if own is not None and len(members) == 1:
            return own, None
        if own is None and len(members) == 1 and len(_kind_entries(hass, name)) == 1:
            return members[0], None
    else:
        entry_id = _named_entry(_kind_entries(hass, members[0].kind), entry)
        found = next((b for b in members if b.entry.entry_id == entry_id), None)
        if found is not None:
            return found, None
    known = ", ".join(b.gateway_name for b in members)
    if entry is None:
        return None, f'Give "entry", one of: {known}.'
    return None, f"{name} has no entry {entry!r} you can reach; its entries: {known}."


def _kind_entries(hass: HomeAssistant, kind: str) -> dict[str, tuple[str, str]]:
    """Every entry of a backend kind, exposed or withdrawn, loaded or not: its id →
    (gateway name, title)."""
    entries = backend_entries(hass)
    names = gateway_tool_names(entries)
    return {
        entry.entry_id: (names[entry.entry_id], entry.title or "")
        for entry in entries
        if entry.data.get(CONF_BACKEND) == kind
    }


def _named_entry(entries: Mapping[str, tuple[str, str]], entry: Any) -> str | None:
    """The id of the entry `entry` names: by gateway name or entry id, else by a title no
    other entry of the kind shares (None: it names none, or more than one)."""
    if not isinstance(entry, str):
        return None
    wanted = entry.strip().casefold()
    for entry_id, (gateway_name, _) in entries.items():
        if wanted in (gateway_name.casefold(), entry_id.casefold()):
            return entry_id
    titled = [entry_id for entry_id, (_, title) in entries.items() if title.casefold() == wanted]
    return titled[0] if len(titled) == 1 else None
