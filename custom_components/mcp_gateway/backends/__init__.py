"""The backends: one package each, listed in registry.py (imported by whoever needs the table).

`BACKENDS` names the kinds for modules that only tell backend entries from the gateway's own
entry; it stays import-light (the registry imports every backend) and a test keeps it equal to
the registry's kinds.
"""

from __future__ import annotations

from ..core.const import BACKEND_HOMECAST, BACKEND_HUBITAT, BACKEND_ROBINE_WAKE

BACKENDS: tuple[str, ...] = (BACKEND_HUBITAT, BACKEND_HOMECAST, BACKEND_ROBINE_WAKE)
