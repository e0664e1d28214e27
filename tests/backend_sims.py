"""Each registered backend's simulated counterpart, found by its kind.

A backend's tests declare, in `tests/<kind>/sim.py`, a module-level
`BACKEND = SimulatedBackend(start=…, entry=…, setup=…)`: how to start its simulator with the
defaults of a home that has every backend, an entry for that simulator, and the entry's setup.
Tests that need "every backend running" iterate `simulated_backends()`, which follows the
product's registry, so a new backend is in them without editing them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
import importlib
from types import ModuleType
from typing import Any

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.registry import BACKENDS
from tests.simulation import LoopbackServers


@dataclass(frozen=True, slots=True)
class SimulatedBackend:
    """A backend's simulator and entries, as tests of every backend use them."""

    # The simulator on 127.0.0.1 (closed with the servers), as a home of every backend has it.
    start: Callable[[LoopbackServers], Awaitable[Any]]
    # An entry for a running simulator; keyword options are the backend's own.
    entry: Callable[..., MockConfigEntry]
    # Add and set up an entry, waiting for its platforms; returns its runtime.
    setup: Callable[[HomeAssistant, MockConfigEntry], Awaitable[Any]]


def registered_kinds() -> tuple[str, ...]:
    """The product's backend kinds, in registry order."""
    return tuple(backend.kind for backend in BACKENDS)


def simulated_backend(kind: str) -> SimulatedBackend:
    """The `BACKEND` that `tests/<kind>/sim.py` declares; fails clearly without one."""
    module_name = f"tests.{kind}.sim"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is not None and module_name.startswith(err.name):
            raise LookupError(
                f"backend {kind!r} is registered but has no tests/{kind}/sim.py "
                "(docs/ARCHITECTURE.md, 'Adding a backend')"
            ) from err
        raise
    backend = getattr(module, "BACKEND", None)
    if not isinstance(backend, SimulatedBackend):
        raise LookupError(f"tests/{kind}/sim.py declares no BACKEND = SimulatedBackend(…)")
    return backend


def simulated_backends() -> dict[str, SimulatedBackend]:
    """Every registered kind's simulated backend, in registry order."""
    return {kind: simulated_backend(kind) for kind in registered_kinds()}


def backend_cases(name: str) -> dict[str, ModuleType]:
    """Every registered kind's `tests/<kind>/<name>.py` (facts a shared test collects per
    backend, such as `security_cases`); fails clearly when a kind has none."""
    found: dict[str, ModuleType] = {}
    for kind in registered_kinds():
        module_name = f"tests.{kind}.{name}"
        try:
            found[kind] = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name is not None and module_name.startswith(err.name):
                raise LookupError(
                    f"backend {kind!r} is registered but has no tests/{kind}/{name}.py"
                ) from err
            raise
    return found
