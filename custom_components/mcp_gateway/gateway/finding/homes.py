"""Which home each entity is in: a Homecast home, a Hubitat hub's location, or Home
Assistant's own home (its configured location name) for everything else.

Two homes of one account often hold the same accessories ("Kitchen Desk Lamp" in each, in the
same room): the home is what tells them apart, so results name it whenever more than one home
exists, and the HA-level tools filter by it, matched the way people say it (matching.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from homeassistant.core import HomeAssistant

from ..catalog.store import ExposedBackend, GatewayCatalog, ToolFailure
from . import matching


def ha_home(hass: HomeAssistant) -> str:
    """Home Assistant's own home: its location name."""
    return hass.config.location_name or "Home"


def home_of(hass: HomeAssistant, backend: ExposedBackend, device_id: str | None) -> str:
    """The home an entity is in (its device's, as its backend names it), else HA's own."""
    runtime = backend.runtime
    if runtime is None or device_id is None:
        return ha_home(hass)
    return runtime.publisher.home_of(device_id) or ha_home(hass)


def known_homes(hass: HomeAssistant, backends: Iterable[ExposedBackend] | None = None) -> list[str]:
    """Every home the exposed backends' devices are in, sorted."""
    if backends is None:
        backends = GatewayCatalog.get(hass).exposed_backends()
    found: set[str] = set()
    for backend in backends:
        if (runtime := backend.runtime) is None:
            continue
        found.update(home or ha_home(hass) for home in runtime.publisher.homes())
    return sorted(found, key=str.casefold)


def several_homes(hass: HomeAssistant) -> bool:
    """Whether results must say which home each entity is in."""
    return len(known_homes(hass)) > 1


def matching_homes(hass: HomeAssistant, query: str) -> list[str]:
    """The homes a name means, whole names first ("Rob's Flat", "rob's_flat", "robs flat"),
    else those every word of it starts; empty when none."""
    candidates = [matching.Named(home, home, ()) for home in known_homes(hass)]
    return [found.name for found in matching.best(candidates, query)]


def wanted_homes(hass: HomeAssistant, query: str) -> set[str]:
    """The homes a `home` filter means; an error listing the homes when it means none."""
    if found := matching_homes(hass, query):
        return set(found)
    known = ", ".join(known_homes(hass)) or "none"
    raise ToolFailure(f"Unknown home '{query}'. Homes: {known}.", code="not_found")
