"""The backend registry: one row per backend kind.

Entry setup (which runtime), the config flow (its menu and steps), the options flow (each
backend's form) and the actions (what async_setup registers) all read this table, and the
gateway learns from it which entries are backends' (`backends.register_kinds`). A kind is
declared once, as `KIND` in its package's const.py, and registered only here;
docs/ARCHITECTURE.md ("Adding a backend") says what a new row needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.config_entries import ConfigEntry

from .backends.homecast import const as homecast
from .backends.homecast.config_flow import (
    COMMUNITY_STEP as HOMECAST_COMMUNITY_STEP,
    HomecastFlowMixin,
    homecast_options_schema,
)
from .backends.homecast.runtime import HomecastRuntime
from .backends.homecast.services import ACTIONS as HOMECAST_ACTIONS
from .backends.hubitat import const as hubitat
from .backends.hubitat.config_flow import HubitatFlowMixin, hubitat_options_schema
from .backends.hubitat.runtime import HubitatRuntime
from .backends.robine_wake import const as robine_wake
from .backends.robine_wake.config_flow import RobineWakeFlowMixin, robine_wake_options_schema
from .backends.robine_wake.runtime import RobineWakeRuntime
from .backends.robine_wake.services import ACTIONS as ROBINE_WAKE_ACTIONS
from .framework.base import BackendRuntime
from .framework.flow import BackendFlowMixin
from .framework.kinds import register_kinds
from .permissions.actions import BackendAction


@dataclass(frozen=True, slots=True)
class Backend:
    """What the rest of the integration needs of one backend kind."""

    # entry.data[CONF_BACKEND]; also the config flow's menu step and the options flow's step.
    kind: str
    runtime: type[BackendRuntime]
    # A base of McpGatewayConfigFlow, which config_flow.py builds from these rows.
    flow_mixin: type[BackendFlowMixin]
    # The backend's own options fields; the options flow adds CONF_GATEWAY_EXPOSED and shows
    # them as step `kind` (strings.json options.step.<kind>).
    options_schema: Callable[[ConfigEntry], dict[Any, Any]]
    actions: tuple[BackendAction, ...] = ()
    # Further first steps of its own in the "add a backend" menu, shown after `kind`.
    menu_steps: tuple[str, ...] = ()


BACKENDS: Final[tuple[Backend, ...]] = (
    Backend(hubitat.KIND, HubitatRuntime, HubitatFlowMixin, hubitat_options_schema),
    Backend(
        homecast.KIND,
        HomecastRuntime,
        HomecastFlowMixin,
        homecast_options_schema,
        HOMECAST_ACTIONS,
        menu_steps=(HOMECAST_COMMUNITY_STEP,),
    ),
    Backend(
        robine_wake.KIND,
        RobineWakeRuntime,
        RobineWakeFlowMixin,
        robine_wake_options_schema,
        ROBINE_WAKE_ACTIONS,
    ),
)
_BY_KIND: Final = {backend.kind: backend for backend in BACKENDS}
# The layers below the registry tell backend entries by these kinds (they cannot import it).
register_kinds(_BY_KIND)


def backend(kind: str) -> Backend:
    """The registry row of a backend kind."""
    try:
        return _BY_KIND[kind]
    except KeyError:
        raise ValueError(f"unknown backend {kind!r}") from None


def runtime_class(kind: str) -> type[BackendRuntime]:
    """The runtime class of a backend kind."""
    return backend(kind).runtime
