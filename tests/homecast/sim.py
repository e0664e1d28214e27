"""The Homecast simulator, started on 127.0.0.1, and entries for its account.

Plain helpers (no fixtures), so that tests beyond this folder start the same account without
importing this folder's conftest.
"""

from __future__ import annotations

from typing import Any

from homeassistant.const import CONF_URL, EVENT_STATE_CHANGED
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast.const import (
    AUTH_TOKEN,
    CONF_ACCESS_TOKEN,
    CONF_AUTH_TYPE,
    CONF_HOMES,
    KIND as HOMECAST_KIND,
)
from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from simulators.homecast import HOMECAST, HomecastSim, create_app
from tests.backend_sims import SimulatedBackend
from tests.simulation import (
    LoopbackServers,
    SimServer,
    registry_entity_id,
    setup_entry as setup_entry,
)

TOKEN = "hc_test_token"


class Sim(SimServer):
    """A running simulator: its URL, account state, fault switches and counters."""

    @property
    def origin(self) -> str:
        return str(self.server.make_url("/"))[:-1]

    @property
    def state(self) -> HomecastSim:
        return self.app[HOMECAST]

    def home_uuids(self) -> list[str]:
        return [home.uuid.lower() for home in self.state.homes]


async def start(servers: LoopbackServers, **options: Any) -> Sim:
    """A simulator with options; by default two homes of 24 accessories, current vocabulary,
    SSE sessions, writes taking effect at once, and no live-update socket (`push=True` serves
    it: the entries then follow it, as they would the real server's)."""
    options.setdefault("write_delay", 0)
    options.setdefault("push", False)
    return Sim(await servers.start(create_app(**options)))


def homecast_token_entry(
    url: str,
    token: str,
    homes: list[str],
    /,
    *,
    unique_id: str | None = None,
    entry_id: str | None = None,
    **data: Any,
) -> MockConfigEntry:
    """A token entry for a (simulated) Homecast account; its unique id is its first home.

    `data` adds or overrides entry data: a test may replace the URL or the token itself.
    """
    return MockConfigEntry(
        domain=DOMAIN,
        entry_id=entry_id,
        title="Homecast",
        unique_id=unique_id or min(homes),
        data={
            CONF_BACKEND: HOMECAST_KIND,
            CONF_URL: url,
            CONF_AUTH_TYPE: AUTH_TOKEN,
            CONF_ACCESS_TOKEN: token,
            CONF_HOMES: homes,
            **data,
        },
    )


def token_entry(
    sim: Sim, *, homes: list[str] | None = None, entry_id: str | None = None, **data: Any
) -> MockConfigEntry:
    """A token entry for the simulator's account."""
    uuids = sim.home_uuids()
    return homecast_token_entry(
        sim.url,
        TOKEN,
        homes if homes is not None else uuids,
        unique_id=min(uuids),
        entry_id=entry_id,
        **data,
    )


def home_tail(sim: Sim, home: int = 0) -> str:
    """The short id our keys use for a simulator home."""
    return sim.state.homes[home].uuid.replace("-", "")[-4:].lower()


def device_of(sim: Sim, kind: str, home: int = 0, nth: int = 0, **values: Any) -> Any:
    """The nth simulator accessory of `kind` (matching `values`) in a home."""
    found = [
        acc
        for acc in sim.state.homes[home].all_accessories()
        if acc.kind == kind
        and acc.members is None
        and all(k in acc.values for k in values)
        and all(values[k] is None or acc.values[k] == values[k] for k in values)
    ]
    return found[nth]


def entity_id(
    hass: HomeAssistant, entry: MockConfigEntry, sim: Sim, acc: Any, suffix: str, *, home: int = 0
) -> str:
    """The entity id of one of an accessory's entities (found by unique id)."""
    key = f"{home_tail(sim, home)}_{acc.slug.rsplit('_', 1)[-1]}_{suffix}"
    registry = er.async_get(hass)
    for platform in (
        "light",
        "switch",
        "climate",
        "lock",
        "alarm_control_panel",
        "cover",
        "fan",
        "valve",
        "number",
        "select",
        "sensor",
        "binary_sensor",
        "button",
        "text",
        "datetime",
        "event",
        "scene",
    ):
        found = registry.async_get_entity_id(platform, DOMAIN, f"{entry.unique_id}_{key}")
        if found is not None:
            return found
    raise AssertionError(f"no entity with key {key}")


def home_entity_id(hass: HomeAssistant, entry: MockConfigEntry, platform: str, key: str) -> str:
    """The entity id of a home-level entity (scene, automation) by its key."""
    return registry_entity_id(hass, platform, f"{entry.unique_id}_{key}")


BACKEND = SimulatedBackend(start=start, entry=token_entry, setup=setup_entry)


def fired_events(hass: HomeAssistant, event_entity: str) -> list[str]:
    """The event types an event entity fires from now on, in order (a list that grows)."""
    fired: list[str] = []

    @callback
    def _record(event: Event[Any]) -> None:
        if event.data["entity_id"] == event_entity and event.data["new_state"] is not None:
            fired.append(event.data["new_state"].attributes["event_type"])

    hass.bus.async_listen(EVENT_STATE_CHANGED, _record)
    return fired
