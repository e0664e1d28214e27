"""Homecast live updates: the socket's error paths, against a scripted server, and the messages
and values the simulator never sends.

A scripted server answers each step of one connection as a test tells it (refusals, odd
answers, silence: scripted.py); the pushes are applied to a real entry's data set up from the
simulator.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from aiohttp import web
from homeassistant.const import EVENT_HOMEASSISTANT_STOP
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast import push as push_module
from custom_components.mcp_gateway.backends.homecast.coordinator import ValueChange
from custom_components.mcp_gateway.backends.homecast.push import (
    HomecastPush,
    PushRefused,
    PushUnavailable,
)
from custom_components.mcp_gateway.backends.homecast.vocabulary import (
    device_key,
    is_press,
    simplify,
)

from .conftest import Sim, device_of
from .scripted import (
    Script,
    ScriptedServer,
    answer,
    broadcast,
    coordinator_of,
    our_accessory,
    push_to,
)


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A silent server is given up on after a fraction of a second, not ten."""
    monkeypatch.setattr(push_module, "CONNECT_TIMEOUT", 0.3)


# -- values as get_state shows them ----------------------------------------------------------


@pytest.mark.parametrize(
    ("char_type", "value", "expected"),
    [
        ("power_state", 1, ("on", True)),
        ("brightness", 41.6, ("brightness", 42)),
        ("current_temperature", 21.449, ("current_temp", 21.4)),
        ("heating_threshold", "19.26", ("heat_target", 19.3)),
        ("lock_current_state", 1, ("locked", True)),
        ("lock_current_state", 0, ("locked", False)),
        ("security_system_current_state", 4, ("alarm_state", "triggered")),
        ("security_system_current_state", 9, ("alarm_state", "unknown_9")),
        ("security_system_current_state", "x", ("alarm_state", "unknown_x")),
        ("security_system_target_state", 1, ("alarm_target", "away")),
        ("000000B1-0000-1000-8000-0026BB765291", 2, ("hvac_state", "heating")),
        ("000000b2-0000-1000-8000-0026bb765291", 0, ("hvac_mode", "auto")),
        ("mute", 0, ("mute", False)),
        ("contact_state", 1, ("contact", 1)),
        # A name the relay has no mapping for passes under its own name, or get_state's alias.
        ("custom_level", 55, ("custom_level", 55)),
        ("rotation_speed", 55, ("speed", 55)),
    ],
)
def test_values_read_as_get_state_reads_them(char_type: str, value: Any, expected: Any) -> None:
    """Raw HomeKit values become the keys and values a poll would have read."""
    assert simplify(char_type, value) == expected


@pytest.mark.parametrize(
    ("char_type", "value"),
    [
        ("name", "Lamp"),  # descriptive characteristics get_state never shows
        ("firmware_revision", "1.0"),
        ("0000ABCD-0000-1000-8000-0026BB765291", 1),  # an unnamed raw UUID
        ("brightness", None),
        ("brightness", "bright"),  # not a number: nothing rather than a wrong value
        ("current_temperature", [21]),
    ],
)
def test_values_get_state_never_shows_are_dropped(char_type: str, value: Any) -> None:
    """Nothing is applied for what a poll would not show either."""
    assert simplify(char_type, value) is None


def test_press_names() -> None:
    """A press arrives under the relay's name or HomeKit's raw UUID, in either case."""
    assert is_press("programmable_switch_event")
    assert is_press("00000073-0000-1000-8000-0026BB765291")
    assert not is_press("on")


# -- one connection against a scripted server ------------------------------------------------


@pytest.mark.parametrize(("status", "error"), [(401, PushRefused), (403, PushRefused)])
async def test_handshake_refusal(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    status: int,
    error: type[Exception],
) -> None:
    """An HTTP refusal of the upgrade is a refused credential, never naming the URL."""
    scripted.handshake_status = status
    push = push_to(hass, polled, scripted.origin)
    with pytest.raises(error) as raised:
        await push._session()
    assert str(raised.value) == f"handshake HTTP {status}"
    assert "secret_token" not in str(raised.value)


async def test_handshake_failure(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """Any other HTTP answer to the upgrade: the socket is unavailable."""
    scripted.handshake_status = 503
    with pytest.raises(PushUnavailable, match="handshake HTTP 503"):
        await push_to(hass, polled, scripted.origin)._session()


@pytest.mark.parametrize(
    "case",
    [
        ({"code": "AUTH_FAILED"}, PushRefused, "AUTH_FAILED"),
        ({"code": "UNAUTHORIZED"}, PushRefused, "UNAUTHORIZED"),
        ({"code": "RATE_LIMITED"}, PushUnavailable, "subscribe refused: RATE_LIMITED"),
        ({"message": "no code"}, PushUnavailable, "subscribe refused: error"),
        ("broken", PushUnavailable, "subscribe refused: error"),
    ],
)
async def test_subscribe_refused(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    case: tuple[Any, type[Exception], str],
) -> None:
    """A subscription answered with an error: refused credential or unusable server."""
    error, raised, text = case

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json(answer(subscribe, error=error))

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    with pytest.raises(raised) as caught:
        await push._session()
    assert str(caught.value) == text
    assert push.status.mode == "polling"
    assert push._ws is None


async def test_subscribe_unanswered(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """A server that never answers the subscription is given up on; messages before the
    answer are still handled (a ping gets its pong)."""

    async def script(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        await ws.send_json({"type": "ping"})
        await ws.send_str("[1, 2]")  # JSON, but no message

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    with pytest.raises(PushUnavailable, match="no answer to subscribe"):
        await push._session()
    assert {"type": "pong"} in scripted.received
    assert push.changes.counters.messages == 1  # the ping; the list is no message


async def _subscribed(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    then: Script,
) -> tuple[HomecastPush, BaseException]:
    """Run one session that subscribes, then plays `then`; what it ended with."""

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        # The server grants every scope asked for (its answer lists them).
        granted = subscribe["payload"]["scopes"]
        await ws.send_json(answer(subscribe, payload={"subscriptions": granted}))
        await then(ws, subscribe)

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    with pytest.raises((PushRefused, PushUnavailable)) as caught:
        await push._session()
    return push, caught.value


async def test_server_asks_to_reconnect(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """The cloud's graceful reconnect ends the session, after a working subscription;
    text that is not JSON is counted and skipped, binary frames are skipped."""

    async def then(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        await ws.send_str("not json")
        await ws.send_bytes(b"\x00")
        await ws.send_json({"no": "type"})
        await ws.send_json({"type": "reconnect"})

    polls = coordinator_of(polled).polls
    push, error = await _subscribed(hass, polled, scripted, then)
    assert isinstance(error, PushUnavailable)
    assert str(error) == "the server asked to reconnect"
    assert push.status.connections == 1
    assert push.status.mode == "push"  # _run, not the session, falls back
    assert push.changes.counters.ignored == 1
    assert push.changes.counters.messages == 1
    assert coordinator_of(polled).polls == polls + 1  # the read after subscribing


async def test_auth_required_is_a_refusal(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """A server that later asks for authentication refuses the credential."""

    async def then(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        await ws.send_json({"type": "auth_required"})

    _push, error = await _subscribed(hass, polled, scripted, then)
    assert isinstance(error, PushRefused)


@pytest.mark.parametrize(("code", "raised"), [(4001, PushRefused), (1001, PushUnavailable)])
async def test_closed_by_server(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    code: int,
    raised: type[Exception],
) -> None:
    """The cloud's 4001 close is a refusal; any other close, an outage."""

    async def then(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        await ws.close(code=code)

    _push, error = await _subscribed(hass, polled, scripted, then)
    assert isinstance(error, raised)
    assert str(error) == ("closed 4001" if code == 4001 else f"closed {code}")


async def test_invalidated_subscription_is_renewed(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """The server drops the subscription: the same homes are subscribed again."""

    async def then(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        await ws.send_json({"type": "subscription_invalidated"})
        renewed = await scripted.next(ws)
        assert renewed["action"] == "subscribe"
        await ws.send_json({"type": "reconnect"})

    push, _error = await _subscribed(hass, polled, scripted, then)
    first, renewed = (m for m in scripted.received if m.get("action") == "subscribe")
    assert renewed["payload"] == first["payload"]
    assert first["id"] != renewed["id"]
    assert push.status.subscribed == sorted(h.upper() for h in coordinator_of(polled).homes or ())


async def test_silent_socket_is_given_up_and_renewed_meanwhile(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Pings and renewals go out on time; a socket that answers nothing is taken for dead."""
    monkeypatch.setattr(push_module, "PING_INTERVAL", 0.05)
    monkeypatch.setattr(push_module, "RENEW_INTERVAL", 0.08)
    monkeypatch.setattr(push_module, "SILENCE_LIMIT", 0.3)

    async def then(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        while True:
            await scripted.next(ws)  # read, never answer

    _push, error = await _subscribed(hass, polled, scripted, then)
    assert isinstance(error, PushUnavailable)
    assert str(error) == "the socket went silent"
    assert {"type": "ping"} in scripted.received
    assert sum(m.get("action") == "subscribe" for m in scripted.received) >= 2


async def test_stop_closes_a_live_socket(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """Home Assistant stopping closes the socket and ends the task."""
    subscribed = asyncio.Event()

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        granted = subscribe["payload"]["scopes"]
        await ws.send_json(answer(subscribe, payload={"subscriptions": granted}))
        subscribed.set()

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    push.async_start()
    await asyncio.wait_for(subscribed.wait(), 5)
    for _ in range(500):
        if push.status.mode == "push":
            break
        await asyncio.sleep(0.01)
    assert push.status.mode == "push"
    ws = push._ws
    assert ws is not None
    task = push._task
    hass.bus.async_fire(EVENT_HOMEASSISTANT_STOP)
    await hass.async_block_till_done()
    assert ws.closed
    assert task is not None
    assert task.cancelled() or task.done()
    assert push._task is None


# -- the community app's port ------------------------------------------------------------------


@pytest.mark.parametrize(
    "health",
    [
        web.Response(status=500),
        web.Response(text="not json"),
        web.json_response(["a list"]),
        web.json_response({"status": "ok"}),
    ],
)
async def test_community_port_falls_back(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer, health: web.Response
) -> None:
    """No usable wsPort in /health: the app's default, its HTTP port plus one."""
    scripted.health = health
    push = push_to(hass, polled, scripted.origin, community=True)
    url = await push._socket_url(push_module.async_get_clientsession(hass))
    http_port = push._mcp_url.port
    assert http_port is not None
    assert url.port == http_port + 1
    assert url.scheme == "ws"


@pytest.mark.parametrize("port", [0, "5657", True, 70000])
async def test_community_without_socket(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer, port: Any
) -> None:
    """A wsPort that is no port (0: the app's socket is not listening yet): no socket."""
    scripted.health = web.json_response({"wsPort": port})
    push = push_to(hass, polled, scripted.origin, community=True)
    with pytest.raises(PushUnavailable, match="advertises no WebSocket"):
        await push._session()


# -- messages applied to the entry's data -----------------------------------------------------


def _group(sim: Sim) -> Any:
    return next(a for a in sim.state.homes[0].all_accessories() if a.members)


async def test_messages_that_name_nothing_we_follow(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """Unknown homes and accessories, missing ids and unshown values change nothing."""
    push = push_to(hass, polled, "http://127.0.0.1:1")
    light = device_of(sim, "light")
    before = dict(our_accessory(polled, sim, light).values)
    for message in (
        broadcast(sim, light, homeId="00000000-0000-0000-0000-000000000000"),
        {**broadcast(sim, light, characteristicType="on", value=1), "accessoryId": None},
        {**broadcast(sim, light, characteristicType="on", value=1), "accessoryId": "FFFF"},
        broadcast(sim, light, value=1),  # no characteristic
        broadcast(sim, light, characteristicType="name", value="Renamed"),
    ):
        push.changes.apply_characteristic(message)
    push.changes.apply_group({"type": "service_group_update", "groupId": "nope", "value": 1})
    assert push.changes.counters.ignored == 6
    assert push.changes.counters.applied == 0
    assert our_accessory(polled, sim, light).values == before


async def test_a_relay_write_without_home(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """A relay write names no home: the accessory is found in the followed homes."""
    push = push_to(hass, polled, "http://127.0.0.1:1")
    light = device_of(sim, "light", brightness=None)
    message = broadcast(sim, light, characteristicType="brightness", value=12)
    del message["homeId"]
    push.changes.apply_characteristic(message)
    assert our_accessory(polled, sim, light).values["brightness"] == 12
    assert push.changes.counters.applied == 1


async def test_an_ambiguous_tail_asks_for_a_read(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """Two accessories sharing the id's tail: nothing is guessed, a read is asked for."""
    push = push_to(hass, polled, "http://127.0.0.1:1")
    light = device_of(sim, "light")
    ours = our_accessory(polled, sim, light)
    data = coordinator_of(polled).data
    assert data is not None
    home = data.homes[sim.state.homes[0].uuid.lower()]
    twin = replace(ours, uid="ab" + ours.uid, key=f"other_{ours.uid}", values={})
    home.accessories[twin.uid] = twin
    push.changes.apply_characteristic(
        {**broadcast(sim, light, characteristicType="on", value=1), "homeId": None}
    )
    assert push.changes.counters.ignored == 1
    assert push.changes.counters.resyncs == 1
    assert twin.values == {}
    del home.accessories[twin.uid]
    await hass.async_block_till_done()


async def test_member_change_updates_its_group(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """A member's change shows on its group: on when any member is, a level as set."""
    push = push_to(hass, polled, "http://127.0.0.1:1")
    group = _group(sim)
    first, second = group.members[:2]
    ours_group = our_accessory(polled, sim, group)
    for member in (first, second):
        push.changes.apply_characteristic(broadcast(sim, member, characteristicType="on", value=0))
    assert ours_group.values["on"] is False
    push.changes.apply_characteristic(broadcast(sim, second, characteristicType="on", value=1))
    assert ours_group.values["on"] is True
    push.changes.apply_characteristic(
        broadcast(sim, first, characteristicType="brightness", value=33)
    )
    assert ours_group.values["brightness"] == 33
    assert our_accessory(polled, sim, first).values["brightness"] == 33


async def test_group_written_as_a_whole(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """A service group update sets the group and each member; a repeat is a duplicate."""
    push = push_to(hass, polled, "http://127.0.0.1:1")
    group = _group(sim)
    message = {
        "type": "service_group_update",
        "groupId": group.uuid.upper(),
        "homeId": sim.state.homes[0].uuid.upper(),
        "characteristicType": "brightness",
        "value": 61,
    }
    push.changes.apply_group(message)
    assert our_accessory(polled, sim, group).values["brightness"] == 61
    for member in group.members:
        assert our_accessory(polled, sim, member).values["brightness"] == 61
    assert push.changes.counters.applied == 1
    push.changes.apply_group(message)
    assert push.changes.counters.duplicates == 1
    push.changes.apply_group({**message, "characteristicType": "serial_number"})
    assert push.changes.counters.ignored == 1


async def test_handled_messages(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim, scripted: ScriptedServer
) -> None:
    """Group updates and relay status messages arriving on a live socket."""
    group = _group(sim)

    async def then(ws: web.WebSocketResponse, _subscribe: dict[str, Any]) -> None:
        await ws.send_json(
            {
                "type": "service_group_update",
                "groupId": group.uuid.upper(),
                "homeId": sim.state.homes[0].uuid.upper(),
                "characteristicType": "brightness",
                "value": 17,
            }
        )
        await ws.send_json({"type": "relay_status_update", "connected": True})
        await ws.send_json({"type": "reconnect"})

    push, _error = await _subscribed(hass, polled, scripted, then)
    assert push.changes.counters.applied == 1  # the group (the relay's read may follow it)
    assert push.changes.counters.messages == 3
    assert push.changes.counters.resyncs == 2  # after subscribing, and for the relay's status


async def test_a_poll_keeps_only_newer_pushes(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """A push older than the poll is not laid over what the poll read."""
    push = push_to(hass, polled, "http://127.0.0.1:1")
    coordinator = coordinator_of(polled)
    light = device_of(sim, "light", brightness=None)
    early = coordinator.poll_started()
    push.changes.apply_characteristic(
        broadcast(sim, light, characteristicType="brightness", value=5)
    )
    late = coordinator.poll_started()  # a second poll starts after that push
    state = await coordinator.api.async_get_state(coordinator.homes)
    read = state.homes[sim.state.homes[0].uuid.lower()]
    uid = light.slug.rsplit("_", 1)[-1]
    read.accessories[uid].values["brightness"] = 80
    coordinator.poll_finished(late, state)
    assert read.accessories[uid].values["brightness"] == 80  # the push predates this poll
    coordinator.poll_finished(early, None)
    assert coordinator._pushed == {}


async def test_the_coordinator_writes_and_tells_each_changed_device_once(
    hass: HomeAssistant, polled: MockConfigEntry, sim: Sim
) -> None:
    """Changes handed over together: one notification naming the devices that changed; a
    key the accessory never had is not kept; the same changes again tell no one."""
    coordinator = coordinator_of(polled)
    light = device_of(sim, "light", on=None, brightness=None)
    ours = our_accessory(polled, sim, light)
    home = sim.state.homes[0].uuid.lower()
    told: list[frozenset[str] | None] = []
    stop = coordinator.async_add_listener(lambda: told.append(coordinator.changed_devices()))
    changes = [
        ValueChange(home, ours.uid, "on", not ours.values["on"]),
        ValueChange(home, ours.uid, "brightness", ours.values["brightness"] % 100 + 1),
        ValueChange(home, ours.uid, "never_read", 1),
        ValueChange(home, "0000", "on", True),  # no such accessory
    ]
    key = device_key(home, ours.uid)
    assert coordinator.apply_changes(changes) == {key}
    assert told == [frozenset({key})]
    assert ours.values["on"] is changes[0].value
    assert ours.values["brightness"] == changes[1].value
    assert "never_read" not in ours.values
    assert coordinator.apply_changes(changes) == frozenset()
    assert len(told) == 1
    stop()
