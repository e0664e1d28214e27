"""Live updates over Homecast's WebSocket, against the simulator's sockets of both editions."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
import time
from typing import Any

from aiohttp import ClientSession
from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er, issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast import push as push_module
from custom_components.mcp_gateway.backends.homecast.const import CONF_SERVER, SERVER_COMMUNITY
from custom_components.mcp_gateway.backends.homecast.coordinator import HomecastCoordinator
from custom_components.mcp_gateway.backends.homecast.push import HomecastPush
from custom_components.mcp_gateway.core.const import DOMAIN
from simulators.homecast import PUSH, PushHub

from .conftest import (
    TOKEN,
    Sim,
    SimFactory,
    device_of,
    entity_id,
    fired_events,
    setup_entry,
    token_entry,
)

OAUTH_TOKEN = "oauth_access_token_1"


@pytest.fixture(autouse=True)
def _fast_reconnect(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reconnect after 20 ms instead of a second, so a test sees several attempts."""
    monkeypatch.setattr(push_module, "RECONNECT_FIRST", 0.02)
    monkeypatch.setattr(push_module, "RECONNECT_MAX", 0.05)


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    """The default simulator, with its live-update socket."""
    return await sim_factory(push=True)


def _hub(sim: Sim) -> PushHub:
    return sim.app[PUSH]


def _coordinator(entry: MockConfigEntry) -> HomecastCoordinator:
    coordinator = entry.runtime_data.coordinator
    assert isinstance(coordinator, HomecastCoordinator)
    return coordinator


def _push(entry: MockConfigEntry) -> HomecastPush:
    push = entry.runtime_data.push
    assert push is not None
    return push


async def _until(hass: HomeAssistant, check: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)
        await hass.async_block_till_done()


async def _pushing(hass: HomeAssistant, entry: MockConfigEntry) -> HomecastPush:
    """Set `entry` up and wait until its socket is subscribed to every followed home."""
    await setup_entry(hass, entry)
    push = _push(entry)
    await _until(hass, lambda: push.status.mode == "push")
    return push


def _oauth_entry(sim: Sim) -> MockConfigEntry:
    """A cloud entry holding an OAuth access token (what homecast-hass connects with)."""
    sim.state.add_token(OAUTH_TOKEN, client_id="ha-client")
    return token_entry(sim, access_token=OAUTH_TOKEN)


def _states(hass: HomeAssistant, entity: str) -> list[str]:
    seen: list[str] = []

    @callback
    def _record(event: Event) -> None:
        if event.data["entity_id"] == entity and event.data["new_state"] is not None:
            seen.append(event.data["new_state"].state)

    hass.bus.async_listen(EVENT_STATE_CHANGED, _record)
    return seen


def _light(sim: Sim) -> Any:
    return device_of(sim, "light")


def _toggle(sim: Sim, acc: Any) -> bool:
    new = not acc.values["on"]
    sim.state.external_change(sim.state.homes[0].slug, acc.slug, on=new)
    return new


async def test_cloud_oauth_subscribes_and_applies_each_change(
    hass: HomeAssistant, sim: Sim
) -> None:
    """OAuth credential: subscribed to the followed homes, a change lands without a poll."""
    entry = _oauth_entry(sim)
    await _pushing(hass, entry)
    hub = _hub(sim)
    (client,) = hub.clients
    # HomeKit's spelling (upper case), as `_homes` gives it and the cloud compares it.
    assert set(client.subscriptions) == {home.upper() for home in sim.home_uuids()}
    subscribe = next(m for m in client.received if m.get("action") == "subscribe")
    assert subscribe["type"] == "request"
    assert subscribe["payload"]["ttl"] == 300
    assert {s["type"] for s in subscribe["payload"]["scopes"]} == {"home"}
    # The safety poll while the socket runs; the entry's own interval otherwise.
    assert _coordinator(entry).update_interval == timedelta(seconds=300)

    # Set-up's read, then the one that follows each subscription.
    await _until(hass, lambda: _coordinator(entry).polls >= 2)
    light = _light(sim)
    light_id = entity_id(hass, entry, sim, light, "light")
    seen = _states(hass, light_id)
    polled = sim.stats.tools["get_state"]
    new = _toggle(sim, light)
    await _until(hass, lambda: bool(seen))
    assert seen == ["on" if new else "off"]
    assert sim.stats.tools["get_state"] == polled  # applied from the message, no read


async def test_unfollowed_home_is_not_subscribed(hass: HomeAssistant, sim: Sim) -> None:
    """Only the homes the entry follows are subscribed; the other home's changes never arrive."""
    sim.state.add_token(OAUTH_TOKEN, client_id="ha-client")
    first = sim.home_uuids()[0]
    entry = token_entry(sim, homes=[first], access_token=OAUTH_TOKEN)
    await _pushing(hass, entry)
    (client,) = _hub(sim).clients
    assert set(client.subscriptions) == {first.upper()}
    sent = _hub(sim).sent
    other = device_of(sim, "light", home=1)
    sim.state.external_change(sim.state.homes[1].slug, other.slug, on=not other.values["on"])
    await asyncio.sleep(0.05)
    assert _hub(sim).sent == sent


async def test_refused_credential_falls_back_to_polling(hass: HomeAssistant, sim: Sim) -> None:
    """The cloud socket refuses an hc_ token (4001): polling at the entry's interval, a notice."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    push = _push(entry)
    await _until(hass, lambda: push.status.reason == "refused" and push._task is not None)
    await _until(hass, lambda: push._task is not None and push._task.done())
    assert _hub(sim).refused == 2  # once, then once more with the token read again
    assert push.status.mode == "polling"
    assert _coordinator(entry).update_interval == timedelta(seconds=30)
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"homecast_push_refused_{entry.entry_id}")
    assert issue is not None
    assert issue.translation_key == "homecast_push_refused"


async def test_accepted_api_token_clears_the_notice(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """A server that takes the hc_ token gives push; no notice is left behind."""
    sim = await sim_factory(push=True, push_api_tokens=True)
    entry = token_entry(sim)
    await _pushing(hass, entry)
    assert (
        ir.async_get(hass).async_get_issue(DOMAIN, f"homecast_push_refused_{entry.entry_id}")
        is None
    )


async def test_no_socket_keeps_polling(hass: HomeAssistant, sim_factory: SimFactory) -> None:
    """A server without the socket: polling at the entry's own interval, and retries."""
    sim = await sim_factory(push=False)
    entry = _oauth_entry(sim)
    await setup_entry(hass, entry)
    push = _push(entry)
    await _until(hass, lambda: push.status.reason == "unavailable")
    assert push.status.mode == "polling"
    assert _coordinator(entry).update_interval == timedelta(seconds=30)
    assert push._task is not None
    assert not push._task.done()  # still trying


async def test_socket_unreachable_for_long_says_so(
    hass: HomeAssistant, sim_factory: SimFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A community app whose socket does not listen: after many attempts a notice says so,
    and polling goes on."""
    monkeypatch.setattr(push_module, "UNAVAILABLE_NOTICE_AFTER", 3)
    sim = await sim_factory(community=True, push=False)
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    issues = ir.async_get(hass)
    issue_id = f"homecast_push_unavailable_{entry.entry_id}"
    await _until(hass, lambda: issues.async_get_issue(DOMAIN, issue_id) is not None)
    push = _push(entry)
    assert push.status.reason == "unavailable"
    assert _coordinator(entry).update_interval == timedelta(seconds=30)


async def test_drop_and_reconnect_resyncs_without_loss_or_duplicate(
    hass: HomeAssistant, sim: Sim
) -> None:
    """A change made while the socket is down arrives once, by the read on reconnection."""
    entry = _oauth_entry(sim)
    push = await _pushing(hass, entry)
    light = _light(sim)
    light_id = entity_id(hass, entry, sim, light, "light")
    seen = _states(hass, light_id)
    hub = _hub(sim)
    resyncs = push.changes.counters.resyncs

    await hub.drop_all()
    await _until(hass, lambda: push.status.connections == 1 and not hub.clients)
    new = _toggle(sim, light)  # nobody listens: no broadcast reaches us
    await _until(hass, lambda: push.status.connections == 2 and push.status.mode == "push")
    await _until(hass, lambda: bool(seen))
    await asyncio.sleep(0.05)
    await hass.async_block_till_done()
    assert seen == ["on" if new else "off"]
    assert push.changes.counters.resyncs > resyncs
    assert _coordinator(entry).update_interval == timedelta(seconds=300)

    # And the socket works again afterwards.
    newer = _toggle(sim, light)
    await _until(hass, lambda: len(seen) == 2)
    assert seen[-1] == ("on" if newer else "off")


async def test_duplicate_and_out_of_order_updates(hass: HomeAssistant, sim: Sim) -> None:
    """A repeated message changes nothing; a poll that read before a push does not undo it."""
    entry = _oauth_entry(sim)
    push = await _pushing(hass, entry)
    light = device_of(sim, "light", on=True, brightness=None)
    light_id = entity_id(hass, entry, sim, light, "light")
    seen = _states(hass, light_id)
    home = sim.state.homes[0]
    message = {
        "type": "characteristic_update",
        "accessoryId": light.uuid.upper(),
        "homeId": home.uuid.upper(),
        "characteristicType": "brightness",
        "value": 7,
    }
    push.changes.apply_characteristic(message)
    push.changes.apply_characteristic(message)
    await hass.async_block_till_done()
    assert len(seen) == 1
    assert push.changes.counters.duplicates == 1

    # A poll starts, a push lands while it runs, then the poll returns what it read before.
    coordinator = _coordinator(entry)
    started = coordinator.poll_started()
    stale = await coordinator.api.async_get_state(coordinator.homes)
    push.changes.apply_characteristic({**message, "value": 42})
    coordinator.poll_finished(started, stale)
    acc = stale.homes[home.uuid.lower()].accessories[light.slug.rsplit("_", 1)[-1]]
    assert acc.values["brightness"] == 42


async def test_three_presses_fire_three_events(hass: HomeAssistant, sim: Sim) -> None:
    """Each press message is one event, even the same press three times in a row.

    No Homecast edition broadcasts presses today (the relay does not observe the
    characteristic, see vocabulary.py), so the simulator sends none: these are the messages the
    relay would send, under either name it could use.
    """
    entry = _oauth_entry(sim)
    push = await _pushing(hass, entry)
    button = device_of(sim, "button")
    button_id = entity_id(hass, entry, sim, button, "button")
    fired = fired_events(hass, button_id)
    base = {
        "type": "characteristic_update",
        "accessoryId": button.uuid.upper(),
        "homeId": sim.state.homes[0].uuid.upper(),
    }
    names = ("programmable_switch_event", "00000073-0000-1000-8000-0026BB765291")
    for name in (*names, names[0]):
        push.changes.apply_characteristic({**base, "characteristicType": name, "value": 0})
        await hass.async_block_till_done()
    assert fired == ["single_press", "single_press", "single_press"]


async def test_pings_both_ways(
    hass: HomeAssistant, sim: Sim, monkeypatch: pytest.MonkeyPatch
) -> None:
    """We ping the server; we answer the server's ping with a pong."""
    monkeypatch.setattr(push_module, "PING_INTERVAL", 0.05)
    hub = _hub(sim)
    hub.ping_interval = 0.05
    entry = _oauth_entry(sim)
    await _pushing(hass, entry)
    (client,) = hub.clients
    await _until(hass, lambda: {"type": "ping"} in client.received)
    await _until(hass, lambda: {"type": "pong"} in client.received)


async def test_community_pushes_without_authentication(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The Mac app broadcasts to every client: push works with the hc_ token unused."""
    sim = await sim_factory(community=True, push=True)
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await _pushing(hass, entry)
    hub = _hub(sim)
    (client,) = hub.clients
    assert not client.authenticated
    assert not any(m.get("action") == "authenticate" for m in client.received)
    light = _light(sim)
    light_id = entity_id(hass, entry, sim, light, "light")
    seen = _states(hass, light_id)
    new = _toggle(sim, light)
    await _until(hass, lambda: bool(seen))
    assert seen == ["on" if new else "off"]


async def test_community_authenticate_refuses_an_api_token(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The app's authenticate takes its own JWTs only: an hc_ token is AUTH_FAILED."""
    sim = await sim_factory(community=True, push=True)
    async with ClientSession() as http:
        async with http.get(f"{sim.origin}/health") as resp:
            health = await resp.json()
        async with http.ws_connect(f"ws://127.0.0.1:{health['wsPort']}/") as ws:
            config = await ws.receive_json()
            assert config["action"] == "config"
            await ws.send_json(
                {
                    "id": "1",
                    "type": "request",
                    "action": "authenticate",
                    "payload": {"token": "hc_test_token"},
                }
            )
            answer = await ws.receive_json()
            assert answer["error"]["code"] == "AUTH_FAILED"
            await ws.send_json({"id": "2", "type": "request", "action": "homes.list"})
            answer = await ws.receive_json()
            assert answer["error"]["code"] == "AUTH_REQUIRED"
            await ws.send_json(
                {"id": "3", "type": "request", "action": "subscribe", "payload": {"scopes": []}}
            )
            answer = await ws.receive_json()
            assert answer["payload"] == {"subscriptions": []}
            await ws.send_json({"type": "ping"})
            assert await ws.receive_json() == {"type": "pong"}


async def test_community_entries_have_no_press_entities(
    hass: HomeAssistant, sim_factory: SimFactory
) -> None:
    """The community server never reports a press: no doorbell or button event entity there."""
    sim = await sim_factory(community=True, push=True)
    button = device_of(sim, "button")
    sim.state.press(sim.state.homes[0].slug, button.slug, 0)
    raw = await _community_state(sim)
    assert "programmable_switch_event" not in str(raw)
    entry = token_entry(sim, **{CONF_SERVER: SERVER_COMMUNITY})
    await setup_entry(hass, entry)
    registry = er.async_get(hass)
    events = er.async_entries_for_config_entry(registry, entry.entry_id)
    assert not [e for e in events if e.domain == "event"]
    assert [e for e in events if e.domain == "light"]


async def _community_state(sim: Sim) -> Any:
    async with (
        ClientSession() as http,
        http.post(
            sim.url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "get_state", "arguments": {}},
            },
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as resp,
    ):
        return await resp.json()


async def test_presses_and_unreachable_accessories_are_never_broadcast(
    hass: HomeAssistant, sim: Sim
) -> None:
    """The simulator sends no press (the relay never observes one) and nothing from an
    accessory HomeKit cannot reach; a reachability change makes the entry read the state."""
    entry = _oauth_entry(sim)
    await _pushing(hass, entry)
    await _until(hass, lambda: _coordinator(entry).polls >= 2)
    hub = _hub(sim)
    home = sim.state.homes[0]
    sent = hub.sent
    sim.state.press(home.slug, device_of(sim, "button").slug, 0)
    light = _light(sim)
    sim.state.set_reachable(home.slug, light.slug, False)
    _toggle(sim, light)
    await asyncio.sleep(0.05)
    assert hub.sent == sent

    polls = _coordinator(entry).polls
    hub.reachability(home, light, False)
    await _until(hass, lambda: _coordinator(entry).polls > polls)
