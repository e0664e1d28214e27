"""The WebSockets of both Homecast editions: live characteristic changes.

The cloud (`GET /ws?token=…&device_id=…&client_type=…`, as homecast-web
`src/server/websocket.ts` `establishConnection` and pyhomecast `websocket.py` `_build_ws_url`
open it): says `connected`, then — to a connection that does not carry the pod affinity it would
assign — `redirect {target, reason: "home_affinity"}` about 10 ms later and closes it
(websocket.ts handleMessage / redirectTo, affinity-target.ts: the target is a ws(s) URL on the
same host, and the client opens it with its own query parameters set on it; the cloud server is
not public, so how the affinity is carried is the simulator's: an `affinity` query parameter);
then `config`; answers `subscribe` requests with the scopes it granted and their expiry — home
ids compared as given, case and all (homecast-hass subscribes with `_homes`' HomeKit UUIDs,
upper case: "cloud server matches on these") — and sends each home's broadcasts only to clients
subscribed to it (websocket.ts: "relay only sends events if there are subscribers"), until the
subscription's TTL runs out unless renewed; pings every `ping_interval` seconds and answers a
client `ping` with `pong`. A credential it refuses is closed with code 4001 (websocket.ts
onclose). The cloud server is not public: Homecast's own HA integration connects with its OAuth
access token, so that is what this socket takes; whether it takes an `hc_` API token cannot be
shown from source, so it does not unless `api_tokens=True` (never kinder than upstream).

The community server (the Mac app's `LocalHTTPServer.swift`): a listener of its own whose port
`GET /health` advertises as `wsPort` (0 until it listens). On connect it sends
`{"type":"broadcast","action":"config",…}` (`handleNewWSConnection`); requests are handled as
homecast-web `src/server/local-server.ts` `handleRequest` does: `ping` → `pong`, `authenticate`
verifies the app's own JWT (`verifyClientToken` / local-auth.ts `verifyToken`; an `hc_` token
is no JWT: `AUTH_FAILED`), `subscribe`/`unsubscribe`/`subscriptions.list`/`ping` need no
authentication, any other action does while the app requires it (`AUTH_REQUIRED`). Broadcasts go
to every connected client, authenticated, subscribed or not (`broadcastToWSClients`).

Broadcasts (`src/server/local-broadcast.ts`): `characteristic_update {accessoryId, homeId,
characteristicType, value}` named by the relay (`CharacteristicMapper.swift`) with raw HomeKit
values — on the community socket the relay's own writes carry `homeId: null`
(broadcastRelayWrite's `homeId ?? null`) — and `reachability_update {accessoryId, isReachable}`
with no home. HomeKit reports only the relay's observed characteristics (`HomeKitManager.swift`
keyCharacteristicTypes): a lock's target state changed in the Home app is never broadcast (the
current state is); the relay's own writes are (broadcastRelayWrite). No press of a stateless
programmable switch is ever broadcast: the relay enables notifications only on its
`keyCharacteristicTypes` (`HomeKitManager.swift` `observeAccessory`), which do not include
ProgrammableSwitchEvent, and would name it by its raw UUID if it did."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
import json
import time
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from simulators.base import on_shutdown, on_startup

from .model import ALARM_TARGETS, HVAC_MODES, HVAC_STATES, Accessory, Home
from .state import HomecastSim


def _number(value: Any) -> Any:
    """A number as the web app's JSON.stringify writes it: 120.0 is `120`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return int(value) if float(value).is_integer() else float(value)


# Our (current) value key -> the relay's characteristic name (CharacteristicMapper.swift
# canonical names) and how HomeKit holds the value.
_ALARM_STATES = {**ALARM_TARGETS, "triggered": 4}
_RELAY: dict[str, tuple[str, Any]] = {
    "on": ("power_state", bool),
    "brightness": ("brightness", _number),
    "hue": ("hue", _number),
    "saturation": ("saturation", _number),
    "color_temp": ("color_temperature", _number),
    "active": ("active", lambda v: 1 if v else 0),
    "current_temp": ("current_temperature", _number),
    "heat_target": ("heating_threshold", _number),
    "cool_target": ("cooling_threshold", _number),
    "target_temp": ("target_temperature", _number),
    "hvac_mode": ("target_heater_cooler_state", lambda v: HVAC_MODES.get(v, v)),
    "hvac_state": ("current_heater_cooler_state", lambda v: HVAC_STATES.get(v, v)),
    "locked": ("lock_current_state", lambda v: 1 if v else 0),
    "lock_target": ("lock_target_state", lambda v: 1 if v else 0),
    "alarm_state": ("security_system_current_state", lambda v: _ALARM_STATES.get(v, v)),
    "alarm_target": ("security_system_target_state", lambda v: ALARM_TARGETS.get(v, v)),
    "motion": ("motion_detected", bool),
    "contact": ("contact_state", _number),
    "battery": ("battery_level", _number),
    "low_battery": ("status_low_battery", lambda v: 1 if v else 0),
    "speed": ("rotation_speed", _number),
    "target": ("target_position", _number),
}
# Never broadcast: the relay does not observe it (see the module docstring).
_UNOBSERVED = frozenset({"programmable_switch_event"})
# Broadcast only when the relay wrote it (HomeKitManager.swift keyCharacteristicTypes lacks it).
_WRITES_ONLY = frozenset({"lock_target"})
# The pod affinity the cloud assigns (the simulator's spelling, see the module docstring).
AFFINITY = "sim-pod-1"

# Seconds a closing socket waits for the peer's close frame (NWConnection.cancel waits none).
_CLOSE_WAIT = 0.5

CONFIG_MESSAGE = {
    "type": "broadcast",
    "action": "config",
    "payload": {
        "webClientCount": 0,
        "webhookCount": 0,
        "subscriptionCount": 0,
        "accessoryLimit": None,
    },
}


def relay_message(
    home: Home, acc: Accessory, key: str, value: Any, *, written: bool = False
) -> dict[str, Any] | None:
    """The characteristic_update the relay broadcasts for one changed value (None: none).

    src/server/local-broadcast.ts (HomeKit's report, or broadcastRelayWrite when `written`),
    named by the relay's CharacteristicMapper.swift.
    """
    if key in _UNOBSERVED or (key in _WRITES_ONLY and not written):
        return None
    name, convert = _RELAY.get(key, (key, None))
    raw = convert(value) if convert is not None and value is not None else value
    return {
        "type": "characteristic_update",
        # HMAccessory.uniqueIdentifier.uuidString: upper case.
        "accessoryId": acc.uuid.upper(),
        "homeId": home.uuid.upper(),
        "characteristicType": name,
        "value": raw,
    }


@dataclass
class Client:
    """One connected socket."""

    ws: web.WebSocketResponse
    # Cloud: home UUID (as subscribed) -> subscription expiry (SimClock seconds).
    subscriptions: dict[str, float] = field(default_factory=dict)
    authenticated: bool = False
    visible: set[str] | None = None  # cloud: the home UUIDs the credential sees
    received: list[dict[str, Any]] = field(default_factory=list)


class PushHub:
    """The simulated sockets of one simulator; broadcasts every change the account records."""

    def __init__(self, sim: HomecastSim, *, community: bool, api_tokens: bool = False) -> None:
        self.sim = sim
        self.community = community
        self.api_tokens = api_tokens
        self.clients: list[Client] = []
        self.refused = 0
        self.connections = 0
        self.ping_interval = 30.0
        # The community app's own JWTs (issued by its login / OAuth, which we do not model).
        self.jwts: set[str] = set()
        # Whether the community app requires authentication (its auth-enabled setting).
        self.auth_enabled = False
        self.sent = 0
        # Cloud: redirect connections without the pod affinity (switched off only to isolate).
        self.redirects = not community
        self.redirected = 0
        sim.listeners.append(self._on_change)

    # -- the outside world ------------------------------------------------------------------

    def _on_change(self, home: Home, acc: Accessory, changes: dict[str, Any]) -> None:
        if not acc.reachable:
            return  # HomeKit reports nothing from an accessory it cannot reach
        written = self.sim.relay_writing
        for key, value in changes.items():
            message = relay_message(home, acc, key, value, written=written)
            if message is not None:
                if self.community and written:
                    message["homeId"] = None  # broadcastRelayWrite: `homeId ?? null`
                self.broadcast(home, message)

    def reachability(self, home: Home, acc: Accessory, reachable: bool) -> None:
        """An accessory's reachability changes (local-broadcast.ts: reachability_update)."""
        self.broadcast(
            home,
            {
                "type": "reachability_update",
                "accessoryId": acc.uuid.upper(),
                "isReachable": reachable,
            },
        )

    def broadcast(self, home: Home, message: dict[str, Any]) -> None:
        """Send to every client that gets this home's broadcasts.

        Cloud: to the clients subscribed to the home (homecast-web src/server/websocket.ts);
        community: to every connected client (the Mac app's LocalHTTPServer.swift, not in
        homecast-web).
        """
        now = self.sim.clock.now().timestamp()
        text = json.dumps(message)
        for client in list(self.clients):
            if not self.community:
                expiry = client.subscriptions.get(home.uuid)
                if expiry is None or expiry < now:
                    continue
            if client.ws.closed:
                continue
            self.sent += 1
            task = asyncio.get_running_loop().create_task(client.ws.send_str(text))
            task.add_done_callback(_ignore_errors)

    async def drop_all(self) -> None:
        """Every socket closes (a restart of the server, a network blip).

        Test hook, no upstream function: every socket closes as on a server restart.
        """
        for client in list(self.clients):
            await client.ws.close(code=WSCloseCode.GOING_AWAY)

    # -- cloud: GET /ws ---------------------------------------------------------------------

    async def cloud_socket(self, request: web.Request) -> web.StreamResponse:
        """GET /ws of the cloud, as homecast-web src/server/websocket.ts establishConnection opens
        it: `connected`, then `config`, then requests until it closes.
        """
        ws = web.WebSocketResponse(autoping=True, timeout=_CLOSE_WAIT)
        await ws.prepare(request)
        token = request.query.get("token", "")
        grant = self.sim.grant_for(token) if token else None
        if grant is None or (grant.client_id is None and not self.api_tokens):
            self.refused += 1
            await ws.close(code=4001, message=b"Authentication failed")
            return ws
        client = Client(ws, visible={h.uuid for h in self.sim.homes if grant.right(h)})
        self.clients.append(client)
        self.connections += 1
        pinger = asyncio.get_running_loop().create_task(self._ping(ws))
        try:
            await ws.send_json(
                {"type": "connected", "serverInstanceId": "sim", "pubsubEnabled": False}
            )
            if self.redirects and request.query.get("affinity") != AFFINITY:
                # The pod handoff: the same host, the affinity it assigns; then it closes.
                self.redirected += 1
                target = request.url.with_scheme("ws" if request.secure is False else "wss")
                target = target.with_query({"affinity": AFFINITY})
                await ws.send_json(
                    {"type": "redirect", "target": str(target), "reason": "home_affinity"}
                )
                await ws.close()
                return ws
            await ws.send_json({"type": "config", "payload": {"webClientsListening": True}})
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                await self._cloud_message(client, msg.data)
        finally:
            pinger.cancel()
            self.clients.remove(client)
        return ws

    async def _ping(self, ws: web.WebSocketResponse) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            while not ws.closed:
                await asyncio.sleep(self.ping_interval)
                await ws.send_json({"type": "ping"})

    async def _cloud_message(self, client: Client, text: str) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        client.received.append(msg)
        if msg.get("type") == "ping":
            await client.ws.send_json({"type": "pong"})
            return
        if msg.get("type") != "request":
            return
        action = msg.get("action")
        payload: dict[str, Any] = msg["payload"] if isinstance(msg.get("payload"), dict) else {}
        result = self._cloud_result(client, action, payload)
        if result is None:
            await client.ws.send_json(
                {
                    "id": msg.get("id"),
                    "type": "response",
                    "action": action,
                    "error": {"code": "UNKNOWN_ACTION", "message": f"Unknown action: {action}"},
                }
            )
            return
        await client.ws.send_json(
            {"id": msg.get("id"), "type": "response", "action": action, "payload": result}
        )

    def _cloud_result(
        self, client: Client, action: Any, payload: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The cloud's answer to subscribe / unsubscribe / subscriptions.list; None for any
        other action (UNKNOWN_ACTION)."""
        if action == "subscribe":
            return {"subscriptions": self._cloud_subscribe(client, payload)}
        if action == "unsubscribe":
            for scope in payload.get("scopes") or []:
                if isinstance(scope, dict):
                    client.subscriptions.pop(str(scope.get("id", "")), None)
            return {"success": True}
        if action == "subscriptions.list":
            return {
                "subscriptions": [
                    {"type": "home", "id": h, "expiresAt": int(t * 1000)}
                    for h, t in client.subscriptions.items()
                ]
            }
        return None

    def _cloud_subscribe(self, client: Client, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """Subscribe to the home scopes the client may see, for a TTL of at most 300 s.

        Ids compared as given (HomeKit's upper-case UUIDs); the answer lists only the scopes
        granted."""
        ttl = payload.get("ttl", 300)
        ttl = ttl if isinstance(ttl, int | float) and 0 < ttl <= 300 else 300
        now = self.sim.clock.now().timestamp()
        granted = []
        for scope in payload.get("scopes") or []:
            home_id = str(scope.get("id", "")) if isinstance(scope, dict) else ""
            if scope.get("type") == "home" and home_id in (client.visible or set()):
                client.subscriptions[home_id] = now + ttl
                granted.append(
                    {"type": "home", "id": scope["id"], "expiresAt": int((now + ttl) * 1000)}
                )
        return granted

    # -- community: its own listener --------------------------------------------------------

    async def community_socket(self, request: web.Request) -> web.StreamResponse:
        # NWProtocolWebSocket.Options autoReplyPing = true.
        """The community server's own WebSocket listener: the config broadcast on connect (the Mac
        app's LocalHTTPServer.swift, not in homecast-web), then each message as homecast-web
        src/server/local-server.ts handleRequest.
        """
        ws = web.WebSocketResponse(autoping=True, timeout=_CLOSE_WAIT)
        await ws.prepare(request)
        client = Client(ws)
        self.clients.append(client)
        self.connections += 1
        try:
            await ws.send_str(json.dumps(CONFIG_MESSAGE))
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                await self._community_message(client, msg.data)
        finally:
            self.clients.remove(client)
        return ws

    async def _community_message(self, client: Client, text: str) -> None:
        """local-server.ts handleRequest (the relay is set up)."""
        try:
            msg = json.loads(text)
        except ValueError:
            return  # HomecastApp.swift __localserver_request: a parse error is only logged
        if not isinstance(msg, dict):
            return
        client.received.append(msg)
        if msg.get("type") == "subscribe" and msg.get("shareHash"):
            await client.ws.send_json({"type": "subscribed", "shareHash": msg["shareHash"]})
            return
        if msg.get("type") == "ping":
            await client.ws.send_json({"type": "pong"})
            return
        if msg.get("type") != "request":
            return  # "Unexpected message type" (console.warn), no answer
        action = msg.get("action")
        payload: dict[str, Any] = msg["payload"] if isinstance(msg.get("payload"), dict) else {}
        if action == "authenticate":
            await self._community_authenticate(client, msg, payload)
            return
        open_actions = ("subscribe", "unsubscribe", "subscriptions.list", "ping")
        if self.auth_enabled and action not in open_actions and not client.authenticated:
            await self._respond(
                client, msg, error={"code": "AUTH_REQUIRED", "message": "Authentication required"}
            )
            return
        result = _community_result(action, payload)
        if result is None:
            # communityRequest (HomeKit actions): not modelled on this socket.
            await self._respond(
                client,
                msg,
                error={"code": "INTERNAL_ERROR", "message": f"Unsupported action: {action}"},
            )
            return
        await self._respond(client, msg, payload=result)

    async def _community_authenticate(
        self, client: Client, msg: dict[str, Any], payload: dict[str, Any]
    ) -> None:
        """handleRequest's `authenticate`: the app's own JWT (verifyClientToken), else
        AUTH_FAILED."""
        token = payload.get("token")
        jwt = str(token or "")
        jwt = jwt[7:] if jwt.lower().startswith("bearer ") else jwt
        if jwt and jwt != "community" and jwt in self.jwts and jwt.count(".") == 2:
            client.authenticated = True
            answer: dict[str, Any] = {"success": True, "name": "Homecast user"}
            await self._respond(client, msg, payload=answer)
        else:
            await self._respond(
                client, msg, error={"code": "AUTH_FAILED", "message": "Invalid token"}
            )

    @staticmethod
    async def _respond(
        client: Client,
        msg: dict[str, Any],
        *,
        payload: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        answer: dict[str, Any] = {
            "id": msg.get("id"),
            "type": "response",
            "action": msg.get("action"),
        }
        if error is not None:
            answer["error"] = error
        else:
            answer["payload"] = payload or {}
        await client.ws.send_json(answer)


def _community_result(action: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
    """handleRequest's answers to the actions that need no HomeKit; None for any other."""
    if action == "subscribe":
        expires = int(time.time() * 1000) + 300000
        scopes = payload.get("scopes") or []
        return {
            "subscriptions": [
                {"type": s.get("type"), "id": s.get("id"), "expiresAt": expires}
                for s in scopes
                if isinstance(s, dict)
            ]
        }
    if action == "unsubscribe":
        return {"success": True}
    if action == "subscriptions.list":
        return {"subscriptions": []}
    if action == "ping":
        return {"pong": True, "timestamp": int(time.time() * 1000)}
    return None


def _ignore_errors(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # a socket closing under a send: nothing to report


PUSH = web.AppKey("homecast_push", PushHub)
_COMMUNITY_RUNNER = web.AppKey("homecast_push_runner", web.AppRunner)
_COMMUNITY_PORT = web.AppKey("homecast_push_port", list[int])


def install(
    app: web.Application, sim: HomecastSim, *, community: bool, api_tokens: bool
) -> PushHub:
    """Serve the edition's socket next to `app` (the cloud: /ws; community: its own port).

    Cloud: src/server/websocket.ts; community: src/server/local-server.ts initLocalServer's own
    listener.
    """
    hub = PushHub(sim, community=community, api_tokens=api_tokens)
    app[PUSH] = hub
    if not community:
        app.router.add_get("/ws", hub.cloud_socket)
        on_shutdown(app, _close_clients)
        return hub
    app[_COMMUNITY_PORT] = [0]
    on_startup(app, _start_community_listener)
    on_shutdown(app, _stop_community_listener)
    return hub


def community_ws_port(app: web.Application) -> int:
    """The port /health advertises: 0 while (or where) no socket listens.

    The `wsPort` of the community server's GET /health, as homecast-web src/lib/relay-probe.ts reads
    it.
    """
    ports = app.get(_COMMUNITY_PORT)
    return ports[0] if ports else 0


async def _start_community_listener(app: web.Application) -> None:
    ws_app = web.Application()
    ws_app.router.add_get("/", app[PUSH].community_socket)
    # Runs once the listener stopped accepting: close what is open so shutdown does not wait.
    on_shutdown(ws_app, lambda _app: app[PUSH].drop_all())
    runner = web.AppRunner(ws_app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    app[_COMMUNITY_RUNNER] = runner
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    app[_COMMUNITY_PORT][0] = sockets[0].getsockname()[1] if sockets else 0


async def _close_clients(app: web.Application) -> None:
    await app[PUSH].drop_all()


async def _stop_community_listener(app: web.Application) -> None:
    runner = app.get(_COMMUNITY_RUNNER)
    if runner is not None:
        await runner.cleanup()
    app[_COMMUNITY_PORT][0] = 0
