"""Which backend kinds exist: the registry tells this module as it is imported.

The registry imports every backend, so the modules it sits above (the gateway among them)
cannot ask it which kinds exist. It tells this module instead (`register_kinds`) as it is
imported, which is before anything runs: the integration's own `__init__` imports it, and
Python runs that before any module of the package. `is_backend_entry` then tells a backend's
entries from the gateway's settings entry, and from entries of a kind no row registers.
"""

from __future__ import annotations

from collections.abc import Iterable

from homeassistant.config_entries import ConfigEntry

from ..core.const import CONF_BACKEND
from ..core.settings import KIND_GATEWAY

# Filled once, by registry.py; a set (not a rebound name) so readers need no `global`.
_KINDS: set[str] = set()


def register_kinds(kinds: Iterable[str]) -> None:
    """Record the registry's kinds (registry.py calls this with its rows' kinds)."""
    kinds = set(kinds)
    if KIND_GATEWAY in kinds:
        raise ValueError(f"{KIND_GATEWAY!r} is the gateway's own entry, not a backend")
    _KINDS.clear()
    _KINDS.update(kinds)


def registered_kinds() -> frozenset[str]:
    """The kinds registry.py registered."""
    return frozenset(_KINDS)


def is_backend_entry(entry: ConfigEntry) -> bool:
    """Whether an entry is a backend's: a registered kind (never the gateway's settings)."""
    kind = entry.data.get(CONF_BACKEND)
    return kind != KIND_GATEWAY and kind in _KINDS
