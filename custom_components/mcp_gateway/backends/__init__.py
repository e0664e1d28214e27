"""The backends: one package each. Only `runtime_class` is needed by the rest of the integration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..const import BACKEND_HOMECAST, BACKEND_HUBITAT, BACKEND_ROBINE_WAKE

if TYPE_CHECKING:
    from .base import BackendRuntime

BACKENDS: tuple[str, ...] = (BACKEND_HUBITAT, BACKEND_HOMECAST, BACKEND_ROBINE_WAKE)


def runtime_class(kind: str) -> type[BackendRuntime]:
    """The runtime class of a backend kind (imported on demand to keep start-up light)."""
    if kind == BACKEND_HUBITAT:
        from .hubitat.runtime import HubitatRuntime

        return HubitatRuntime
    if kind == BACKEND_HOMECAST:
        from .homecast.runtime import HomecastRuntime

        return HomecastRuntime
    if kind == BACKEND_ROBINE_WAKE:
        from .robine_wake.runtime import RobineWakeRuntime

        return RobineWakeRuntime
    raise ValueError(f"unknown backend {kind!r}")
