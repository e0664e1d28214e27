"""A second set of plain requests, worded apart from test_search_requests.py's: top-1 measured.

The first set shaped the ranking; this one checks that it holds for requests nobody tuned it
on. Each row names the tools a careful assistant would call (a core tool beside a backend's
where Home Assistant's entity for the same thing lets it do the task too). The test asserts
the share of rows whose best hit is right, and prints the figure and every miss.
"""

from __future__ import annotations

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from tests.all_backends import setup_entries, start_simulators
from tests.simulation import LoopbackServers

from .conftest import ClientFactory
from .test_search_requests import _ref, _search

REQUESTS: list[tuple[str, tuple[str, ...]]] = [
    # The alarm clock.
    ("shut the alarm up", ("robine_wake/dismiss_session", "core/set_state")),
    ("I need another five minutes in bed", ("robine_wake/snooze_session", "core/set_state")),
    ("show me all my wake-up times", ("robine_wake/list_alarms",)),
    ("set an alarm for half past seven on Saturday", ("robine_wake/create_alarm",)),
    ("remove the 6:45 alarm", ("robine_wake/delete_alarm",)),
    ("change my Sunday alarm to 9", ("robine_wake/update_alarm",)),
    ("what ringtones does the clock have", ("robine_wake/list_sounds",)),
    ("play the alarm now as a test", ("robine_wake/trigger_alarm",)),
    ("when will my next alarm ring", ("robine_wake/list_alarms", "core/get_state")),
    # The Hubitat hub.
    ("put the house in away mode", ("hubitat/hub_manage_mode", "core/set_state")),
    ("is the home security on", ("hubitat/hub_get_hsm_status", "core/get_state")),
    ("turn the security system off", ("hubitat/hub_set_hsm", "core/set_state")),
    ("make a backup of the hub now", ("hubitat/hub_create_backup",)),
    ("show the hub's saved backups", ("hubitat/hub_list_backups",)),
    ("what automation rules does the hub run", ("hubitat/hub_list_rules",)),
    ("fire the Morning rule", ("hubitat/hub_call_rule", "core/set_state")),
    (
        "how much memory is the hub using",
        ("hubitat/hub_get_metrics", "hubitat/hub_get_memory_history"),
    ),
    ("show me the hub's error log", ("hubitat/hub_get_logs",)),
    ("reboot the Hubitat", ("hubitat/hub_reboot",)),
    ("show the hub's rooms", ("hubitat/hub_list_rooms",)),
    ("set the hub variable AwayMode to true", ("hubitat/hub_set_variable",)),
    (
        "what changed on the back door sensor today",
        ("hubitat/hub_list_device_events", "core/get_history"),
    ),
    # The HomeKit homes.
    ("start the Good Morning scene at George Street", ("homecast/run_scene", "core/set_state")),
    ("save the current lights as a scene named Reading", ("homecast/create_scene",)),
    ("remove the Porch at sunset scene", ("homecast/delete_scene",)),
    ("list the HomeKit automations at Rob's Flat", ("homecast/get_automations",)),
    (
        "add a HomeKit automation that turns the porch light on at sunset",
        ("homecast/create_automation", "homecast/create_hc_automation"),
    ),
    # Any home, through Home Assistant.
    ("are any windows open", ("core/get_state",)),
    ("switch off every light in the bedroom", ("core/set_state",)),
    ("what's the temperature in the living room", ("core/get_state",)),
    ("turn the heating up to 22 degrees", ("core/set_state",)),
    (
        "was the garage door opened today",
        ("core/get_history", "hubitat/hub_list_device_events"),
    ),
    ("is every integration working", ("core/list_backends",)),
    ("open the kitchen blinds halfway", ("core/set_state",)),
]
# Rows whose best hit is right, out of len(REQUESTS).
TOP1: int = 31


@pytest.fixture
async def client(
    hass: HomeAssistant,
    hass_client: ClientFactory,
    loopback_servers: LoopbackServers,
    socket_enabled: None,
) -> TestClient:
    """HA with one Hubitat, one Homecast and one Robine Wake entry, each on its simulator."""
    assert await async_setup_component(hass, "http", {})
    await setup_entries(hass, await start_simulators(loopback_servers))
    return await hass_client()


async def test_everyday_requests_top1(client: TestClient) -> None:
    """At least TOP1 of the requests find their tool first."""
    misses: list[str] = []
    for number, (query, wanted) in enumerate(REQUESTS, start=1):
        hits = [_ref(hit) for hit in await _search(client, query, number)]
        if not hits or hits[0] not in wanted:
            misses.append(f"{query!r}: want {wanted}, got {hits[:3]}")
    found = len(REQUESTS) - len(misses)
    print(f"search top-1: {found}/{len(REQUESTS)}")
    print("\n".join(misses))
    assert found >= TOP1, "\n".join(misses)
