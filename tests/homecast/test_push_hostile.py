"""Homecast live updates against the servers as upstream runs them and against a hostile socket:
scopes granted or not, the cloud's redirect, frames that cannot be read or applied, unknown
characteristics, a server that answers and closes, a socket that goes silent; and the simulator
doing what upstream does (null homes, an unbroadcast lock target)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
import json
from typing import Any

from aiohttp import web
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.backends.homecast import push as push_module
from custom_components.mcp_gateway.backends.homecast.push import (
    HomecastPush,
)
from custom_components.mcp_gateway.core.const import DOMAIN
from simulators.homecast import PUSH, PushHub

from .conftest import Sim, SimFactory, device_of, setup_entry, token_entry
from .scripted import ScriptedServer, answer, broadcast, coordinator_of, our_accessory, push_to

OAUTH_TOKEN = "oauth_access_token_1"


@pytest.fixture
async def sim(sim_factory: SimFactory) -> Sim:
    return await sim_factory(push=True)


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(push_module, "CONNECT_TIMEOUT", 0.3)
    monkeypatch.setattr(push_module, "RECONNECT_FIRST", 0.02)
    monkeypatch.setattr(push_module, "RECONNECT_MAX", 0.16)


async def _until(check: Any, rounds: int = 500) -> None:
    for _ in range(rounds):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


def _grant(subscribe: dict[str, Any]) -> dict[str, Any]:
    return answer(subscribe, payload={"subscriptions": subscribe["payload"]["scopes"]})


async def _run(push: HomecastPush) -> None:
    push.async_start()


async def _stop(push: HomecastPush) -> None:
    await push.async_stop()


# -- what the server grants -----------------------------------------------------------------


async def test_nothing_granted_keeps_polling(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """A subscribe answered without error but with no scope granted (ids the scripted does not
    match): nothing will be pushed, so the polled polls at its own interval and says why."""

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json(answer(subscribe, payload={"subscriptions": []}))

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    await _run(push)
    await _until(lambda: push.status.connections >= 1)
    await hass.async_block_till_done()
    assert (push.status.mode, push.status.reason) == ("polling", "not_granted")
    assert push.status.subscribed == []
    assert push.status.as_dict()["homes_not_granted"] == len(coordinator_of(polled).homes or ())
    assert coordinator_of(polled).update_interval == timedelta(seconds=30)
    # The ids went as HomeKit spells them (upper case).
    subscribe = next(m for m in scripted.received if m.get("action") == "subscribe")
    ids = [scope["id"] for scope in subscribe["payload"]["scopes"]]
    assert ids
    assert all(i == i.upper() for i in ids)
    await _stop(push)


async def test_cloud_redirect_is_followed(hass: HomeAssistant, sim: Sim) -> None:
    """The cloud moves a fresh connection to its pod right after `connected`: followed at once
    (same host), subscribed there, pushes arrive."""
    sim.state.add_token(OAUTH_TOKEN, client_id="ha-client")
    entry = token_entry(sim, access_token=OAUTH_TOKEN)
    await setup_entry(hass, entry)
    push = entry.runtime_data.push
    assert push is not None
    hub: PushHub = sim.app[PUSH]
    await _until(lambda: push.status.mode == "push")
    assert hub.redirected == 1
    assert push.status.redirects == 1
    assert hub.connections == 2


async def test_redirect_elsewhere_is_ignored(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer
) -> None:
    """A redirect to another host would carry the credential there: ignored."""

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json({"type": "redirect", "target": "wss://evil.example/ws"})
        await ws.send_json(_grant(subscribe))

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    await _run(push)
    await _until(lambda: push.status.mode == "push")
    assert push.status.redirects == 0
    assert push.address.redirect is None
    await _stop(push)


# -- a hostile socket -----------------------------------------------------------------------


async def test_no_frame_ends_the_task(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer, sim: Sim
) -> None:
    """Frames that overflow, nest too deep, or are not what they claim are skipped; the task
    lives on and the next good update is applied."""
    light = device_of(sim, "light")
    good = broadcast(sim, light, characteristicType="brightness", value=37)

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json(_grant(subscribe))
        bad = broadcast(sim, light, characteristicType="brightness")
        await ws.send_str(json.dumps(bad)[:-1] + ', "value": 1e400}')
        await ws.send_str(json.dumps({**bad, "value": float("nan")}))
        await ws.send_str('{"type": "characteristic_update", "value": ' + "[" * 50000)
        await ws.send_str("[" * 30000 + "]" * 30000)
        await ws.send_str(json.dumps({**bad, "accessoryId": ["x"], "homeId": {"a": 1}}))
        await ws.send_str(json.dumps({"type": ["ping"]}))
        await ws.send_str(json.dumps({"type": "characteristic_update", "characteristicType": 5}))
        await ws.send_str(json.dumps({"type": "redirect", "target": 7}))
        await ws.send_bytes(b"\xff" * 10)
        await ws.send_json(good)

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    await _run(push)
    await _until(lambda: our_accessory(polled, sim, light).values.get("brightness") == 37)
    assert push._task is not None
    assert not push._task.done()
    assert push.status.mode == "push"
    assert push.changes.counters.ignored >= 3
    await _stop(push)


async def test_unknown_characteristics_are_not_kept(
    hass: HomeAssistant, polled: MockConfigEntry, scripted: ScriptedServer, sim: Sim
) -> None:
    """Characteristics the accessory's read never showed, and values no read could show, are
    not kept; a frame past the cap ends the connection unread (the task reconnects)."""
    light = device_of(sim, "light")
    ours = our_accessory(polled, sim, light)
    before = dict(ours.values)

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json(_grant(subscribe))
        for n in range(200):
            await ws.send_json(
                broadcast(sim, light, characteristicType=f"junk_{n}", value="x" * 50_000)
            )
        await ws.send_json(broadcast(sim, light, characteristicType="brightness", value="y" * 300))
        await ws.send_str(
            json.dumps(broadcast(sim, light, characteristicType="z", value="x" * (1 << 20)))
        )

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    await _run(push)
    await _until(lambda: push.status.last_error == "socket error")
    assert ours.values == before
    await _stop(push)


async def test_answer_then_close_backs_off(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scripted that acknowledges `subscribe` and closes: each attempt waits longer (up to the
    cap), never back to the first delay, and a repair issue says so after ten."""
    waits: list[float] = []

    async def pause(delay: float) -> None:
        waits.append(delay)
        await asyncio.sleep(0)

    monkeypatch.setattr(push_module, "_pause", pause)

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json(_grant(subscribe))
        await ws.close()

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    await _run(push)
    await _until(lambda: len(waits) >= 11, rounds=2000)
    await _stop(push)
    assert waits[:6] == [0.02, 0.04, 0.08, 0.16, 0.16, 0.16]
    issue = ir.async_get(hass).async_get_issue(
        DOMAIN, f"homecast_push_unavailable_{polled.entry_id}"
    )
    assert issue is not None


async def test_silent_socket_falls_back_to_polling(
    hass: HomeAssistant,
    polled: MockConfigEntry,
    scripted: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A socket that stops answering (not even pongs) is noticed within a minute: polling at
    the polled's own interval, the reason in diagnostics."""
    assert push_module.SILENCE_LIMIT + push_module.PING_INTERVAL <= 60
    monkeypatch.setattr(push_module, "PING_INTERVAL", 0.05)
    monkeypatch.setattr(push_module, "SILENCE_LIMIT", 0.2)

    async def script(ws: web.WebSocketResponse, subscribe: dict[str, Any]) -> None:
        await ws.send_json(_grant(subscribe))
        await asyncio.sleep(3600)

    scripted.script = script
    push = push_to(hass, polled, scripted.origin)
    await _run(push)
    await _until(lambda: push.status.reason == "silent")
    assert push.status.mode == "polling"
    assert coordinator_of(polled).update_interval == timedelta(seconds=30)
    assert push.status.as_dict()["reason"] == "silent"
    await _stop(push)


# -- the simulator follows upstream ---------------------------------------------------------


async def test_simulator_broadcasts_as_upstream(sim_factory: SimFactory) -> None:
    """Community: the relay's own writes carry `homeId: null`; a lock target changed in the
    Home app is never broadcast (its current state is); reachability carries no home.
    Cloud: scopes granted only as HomeKit spells the ids."""
    sim = await sim_factory(push=True, community=True)
    hub: PushHub = sim.app[PUSH]
    sent: list[dict[str, Any]] = []
    hub.broadcast = lambda _home, message: sent.append(message)  # type: ignore[method-assign]
    home = sim.state.homes[0]
    lock = device_of(sim, "lock")
    sim.state.external_change(home.slug, lock.slug, lock_target=not lock.values["lock_target"])
    assert "lock_current_state" in [m["characteristicType"] for m in sent]
    assert "lock_target_state" not in [m["characteristicType"] for m in sent]
    assert all(m["homeId"] == home.uuid.upper() for m in sent)
    sent.clear()
    light = device_of(sim, "light")
    sim.state.write(home, light, {"on": not light.values["on"]})
    sim.state.flush()
    assert sent
    assert all(m["homeId"] is None for m in sent)
    hub.reachability(home, light, False)
    assert "homeId" not in sent[-1]

    cloud = await sim_factory(push=True)
    cloud_hub: PushHub = cloud.app[PUSH]
    from simulators.homecast.push import Client

    client = Client(ws=None, visible={h.uuid for h in cloud.state.homes})  # type: ignore[arg-type]
    uuid = cloud.state.homes[0].uuid
    assert (
        cloud_hub._cloud_subscribe(client, {"scopes": [{"type": "home", "id": uuid.lower()}]}) == []
    )
    granted = cloud_hub._cloud_subscribe(client, {"scopes": [{"type": "home", "id": uuid}]})
    assert [g["id"] for g in granted] == [uuid]


async def test_history_by_full_uuid(hass: HomeAssistant, sim: Sim) -> None:
    """get_history finds an accessory by its full UUID upstream: the gateway sees that call
    reach that accessory (not an unknown address only administrators may use)."""
    entry = token_entry(sim)
    await setup_entry(hass, entry)
    light = device_of(sim, "light")
    keys = entry.runtime_data.device_keys_in_call("get_history", {"accessory": light.uuid.upper()})
    assert keys
    assert all(not key.startswith("accessory ") for key in keys)
    assert any(key.endswith(light.uuid[-4:].lower()) for key in keys)
