"""Everyday assistant tasks: round trips and bytes, MCP Gateway vs Home Assistant core's mcp_server.

usage: .venv/bin/python -m bench.ai_tasks [--keep] [--strict]

Starts the demo home (the three simulators, as scripts/demo does) and one real Home Assistant
with the three backends added through their config flows and core's `mcp_server` (Assist API,
its tools + GetLiveContext). Then a scripted assistant does each task as a model would: it
knows only what `tools/list` and the tools' answers say (tool names, descriptions, entity ids it
read), never ids written into this script. Per task it reports round trips after `tools/list`
and the bytes it sent and received (JSON-RPC bodies), for our gateway and, where core's tools
can do the task, for core's server on the same Home Assistant. Each of our answers is checked
against Home Assistant's REST API: an answer that claims what did not happen is "MISLEADING".

The tasks include two Homecast homes with identical twins (a request names the home, and the
assistant may tell twins apart only by what the answers say of each), history asked for further
back than Home Assistant has recorded (the answer must say from when it knows), and requests that
span backends.

Targets: every task within 2 round trips after tools/list; at most 2 KB received per task on
average; the first six tasks receive at most half the bytes of the reference measurement in
REFERENCE_KB (2.2 + 9.7 + 21.3 + 0.9 + 56.6 + 10.2 KB); twins resolved by home; history
coverage stated; no misleading answer. Needs Home Assistant's frontend in the bench venv (the core
mcp_server venv of bench/gateway.py; it is installed there on first use).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
import contextlib
from dataclasses import dataclass, field
import json
import os
import subprocess
import sys
from typing import Any

import aiohttp
from yarl import URL

from bench.gateway import add_core_mcp_server, core_tool_name, core_venv_python
from custom_components.mcp_gateway.mcp.client import BearerAuth, McpClient
from custom_components.mcp_gateway.mcp.sse import SseDecoder
from demo.__main__ import DEMO_YAML, add_backends
from demo.ha import HomeAssistantProcess
from demo.home import demo_home

# Reference bytes received per task (Claude Desktop via mcp-remote, same demo home).
REFERENCE_KB: Mapping[str, float] = {
    "living-room lights on": 2.2,
    "bedroom temperature": 9.7,
    "alarm 6:45 on weekdays": 21.3,
    "run the Good Night scene": 0.9,
    "which devices are offline?": 56.6,
    "front door, last hour": 10.2,
}
MAX_TRIPS = 2
FRONTEND = "home-assistant-frontend==20250411.0"


class Client:
    """What a scripted assistant needs: tools, calls, and the traffic they cost."""

    tools: list[dict[str, Any]]
    trips: int = 0

    async def call(self, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
        """(the result's data, is_error); one round trip."""
        raise NotImplementedError

    def traffic(self) -> tuple[int, int]:
        """(bytes sent, bytes received) so far."""
        raise NotImplementedError


class GatewayClient(Client):
    """Our gateway over Streamable HTTP, through the integration's own MCP client."""

    def __init__(self, session: aiohttp.ClientSession, url: str, token: str) -> None:
        self.mcp = McpClient(session, url, auth=BearerAuth(token), timeout=60.0)

    async def start(self) -> None:
        await self.mcp.connect()
        self.tools = await self.mcp.list_tools()

    async def call(self, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
        self.trips += 1
        result = await self.mcp.call_tool(name, args, timeout=60.0)
        return (result.structured if result.structured is not None else result.data), (
            result.is_error
        )

    def traffic(self) -> tuple[int, int]:
        return self.mcp.stats.bytes_sent, self.mcp.stats.bytes_received


class CoreClient(Client):
    """Core's mcp_server over its SSE transport (the one 2025.4 has), counting the bytes itself."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, token: str) -> None:
        self.session, self.base_url = session, base_url
        self.headers = {"Authorization": f"Bearer {token}"}
        self.sent = self.received = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._endpoint: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._next_id = 0
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        response = await self.session.get(
            f"{self.base_url}/mcp_server/sse", headers=self.headers, timeout=None
        )
        response.raise_for_status()
        self._reader = asyncio.create_task(self._read(response))
        self.endpoint = await asyncio.wait_for(self._endpoint, 30)
        await self.request(
            "initialize",
            {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools = (await self.request("tools/list", {}))["tools"]

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        decoder = SseDecoder()
        async for chunk in response.content.iter_any():
            self.received += len(chunk)
            for event in decoder.feed(chunk):
                if event.event == "endpoint" and not self._endpoint.done():
                    self._endpoint.set_result(str(URL(self.base_url).join(URL(event.data))))
                elif event.event == "message":
                    message = json.loads(event.data)
                    if (future := self._pending.pop(message.get("id"), None)) is not None:
                        future.set_result(message)

    async def _post(self, body: dict[str, Any]) -> None:
        payload = json.dumps(body).encode()
        self.sent += len(payload)
        async with self.session.post(
            self.endpoint,
            data=payload,
            headers={**self.headers, "Content-Type": "application/json"},
        ) as response:
            response.raise_for_status()

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        await self._post(
            {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        )
        message = await asyncio.wait_for(future, 60)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result

    async def call(self, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
        self.trips += 1
        result = await self.request("tools/call", {"name": name, "arguments": args})
        text = "\n".join(part.get("text", "") for part in result.get("content", []))
        with contextlib.suppress(ValueError):
            return json.loads(text), bool(result.get("isError"))
        return text, bool(result.get("isError"))

    def traffic(self) -> tuple[int, int]:
        return self.sent, self.received


@dataclass
class Outcome:
    """One task done by one client."""

    answer: str
    trips: int = 0
    sent: int = 0
    received: int = 0
    truthful: bool | None = None  # None: not checked (core's answers are shown as they are)
    # False: the assistant could not do the task and said so (honest, but a miss).
    done: bool = True
    # The entities a write's results name, in order.
    entities: list[str] = field(default_factory=list)


@dataclass
class World:
    """Ground truth for the checks: Home Assistant's REST and websocket APIs."""

    ha: HomeAssistantProcess
    # The event loop's time when Home Assistant (and so its recorder) started.
    started: float = 0.0

    async def states(self) -> dict[str, dict[str, Any]]:
        return {s["entity_id"]: s for s in await self.ha.api("GET", "/api/states")}

    async def exposed(self) -> set[str]:
        found = await self.ha.websocket_command({"type": "homeassistant/expose_entity/list"})
        return {
            entity_id
            for entity_id, assistants in found["exposed_entities"].items()
            if assistants.get("conversation")
        }

    async def homes(self) -> dict[str, str]:
        """Each entity's home as Home Assistant's device registry has it: a Homecast
        accessory's device hangs under its home's device; anything else is in no home here."""
        devices = await self.ha.websocket_command({"type": "config/device_registry/list"})
        by_id = {device["id"]: device for device in devices}
        registry = await self.ha.websocket_command({"type": "config/entity_registry/list"})
        homes: dict[str, str] = {}
        for entity in registry:
            device = by_id.get(entity.get("device_id") or "")
            parent = by_id.get((device or {}).get("via_device_id") or "")
            if parent is not None and parent.get("model") == "HomeKit home":
                homes[entity["entity_id"]] = str(parent.get("name_by_user") or parent["name"])
        return homes

    async def service(self, domain: str, service: str, entity_ids: list[str]) -> None:
        """Set the scene for a task, as the household would (not through the gateway)."""
        await self.ha.api(
            "POST", f"/api/services/{domain}/{service}", json={"entity_id": entity_ids}
        )

    async def named(self, words: str, domain: str) -> list[str]:
        """Entities of a domain whose name has all the words."""
        wanted = set(words.lower().split())
        return [
            entity_id
            for entity_id, state in (await self.states()).items()
            if entity_id.startswith(f"{domain}.")
            and wanted <= set(str(state["attributes"].get("friendly_name", "")).lower().split())
        ]


type Script = Callable[[Client, World], Awaitable[Outcome]]


@dataclass
class Task:
    """An everyday request, as our gateway's assistant and (maybe) core's would do it."""

    name: str
    ours: Script
    core: Script | None = None


def _entities(data: Any) -> list[dict[str, Any]]:
    """get_state's entities, each with the home and backend a page says once for all."""
    if not isinstance(data, dict):
        return []
    shared = {key: data[key] for key in ("home", "backend") if key in data}
    return [{**shared, **entity} for entity in data.get("entities", [])]


def _why(data: Any) -> str:
    """What an empty or failed answer said (the error, the hint)."""
    if not isinstance(data, dict):
        return str(data)[:120]
    if "error" in data:
        return str(data["error"].get("message", data["error"]))[:120]
    return str(data.get("hint") or data.get("note") or "")[:120]


def _gateway_of(client: Client, kind: str) -> str:
    """A backend's gateway tool, found by the backend named in its description."""
    for tool in client.tools:
        if f"the {kind} backend" in tool.get("description", ""):
            return str(tool["name"])
    raise LookupError(kind)


async def _set_and_check(
    client: Client,
    world: World,
    updates: list[dict[str, Any]],
    ok_state: Callable[[Any], bool],
    why: str = "",
) -> Outcome:
    """set_state, then: everything it calls done is so in HA, every failure has a reason."""
    if not updates:
        return Outcome(f"nothing matched: {why}", truthful=False, done=False)
    data, is_error = await client.call("set_state", {"updates": updates})
    details = data.get("error", {}).get("details", data) if is_error else data
    results = details.get("results", [])
    states = await world.states()
    truthful = bool(results)
    parts = []
    for item in results:
        state = states.get(item.get("entity_id", ""), {})
        status = item.get("status")
        if status == "done":
            truthful &= ok_state(state)
        elif status == "failed":
            truthful &= bool(item.get("error"))
        parts.append(f"{item.get('entity_id', item.get('name'))}:{status}")
    entities = [str(item["entity_id"]) for item in results if item.get("entity_id")]
    # Every update failing, with reasons, is an honest answer but not the task done.
    done = any(item.get("status") != "failed" for item in results)
    return Outcome(", ".join(parts), truthful=truthful, done=done, entities=entities)


def _accepts(client: Client, tool: str, prop: str) -> bool:
    """Whether a tool's published schema takes an argument (the assistant reads tools/list)."""
    for item in client.tools:
        if item["name"] == tool:
            return prop in item.get("inputSchema", {}).get("properties", {})
    return False


def _in_home(client: Client, tool: str, home: str) -> dict[str, Any]:
    """The home filter, where the tool offers one."""
    return {"home": home} if _accepts(client, tool, "home") else {}


def _one_per_home(found: list[dict[str, Any]], home: str) -> tuple[dict[str, Any] | None, str]:
    """The entity at `home` among twins, as an assistant tells them apart: by what the answer
    says of each (its home), never by matching values. (entity, why not)."""
    if len(found) == 1:
        return found[0], ""
    here = [e for e in found if str(e.get("home", "")).casefold() == home.casefold()]
    if len(here) == 1:
        return here[0], ""
    if not found:
        return None, "nothing matched"
    return None, f"{len(found)} alike, nothing in the answer says which is at {home}"


def _coverage(data: Any) -> str:
    """What a history answer says of how far back Home Assistant's data reaches ("" if
    nothing): a field or note about its coverage."""
    if not isinstance(data, dict):
        return ""
    for key in ("coverage", "recorded_from", "covered_from", "data_from", "holds_from"):
        if data.get(key):
            return f"{key}: {json.dumps(data[key])[:160]}"
    for key in ("note", "notes", "hint"):
        text = json.dumps(data.get(key) or "")
        if any(word in text.lower() for word in ("recorder", "only from", "since", "holds")):
            return f"{key}: {text[:160]}"
    return ""


async def _uptime_hours(world: World) -> float:
    """How long Home Assistant's recorder has been recording (it started with the bench)."""
    return (asyncio.get_running_loop().time() - world.started) / 3600


# --- our gateway's scripts ---------------------------------------------------------------------


async def lights_on(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"area": "living room", "domain": ["light"]})
    updates = [{"entity_id": e["entity_id"], "state": "on"} for e in _entities(data)]
    return await _set_and_check(
        client, world, updates, lambda s: s.get("state") == "on", _why(data)
    )


async def bedroom_temperature(client: Client, world: World) -> Outcome:
    data, _ = await client.call(
        "get_state",
        {
            "area": "bedroom",
            "name": "temperature",
            "fields": ["name", "state", "unit", "current_temperature"],
        },
    )
    states = await world.states()
    found = _entities(data)
    truthful = bool(found) and all(
        states.get(e["entity_id"], {}).get("state") == e.get("state") for e in found
    )
    answer = "; ".join(
        f"{e.get('name')}: {e.get('current_temperature', e.get('state'))} {e.get('unit', '')}"
        for e in found
    )
    if not found and os.environ.get("AI_TASKS_DEBUG"):
        everything, _ = await client.call("get_state", {"area": "bedroom"})
        print("DEBUG bedroom:", json.dumps(everything)[:3000])
    return Outcome(answer or f"none: {_why(data)}", truthful=truthful)


async def alarm_weekdays(client: Client, world: World) -> Outcome:
    found, _ = await client.call("search_tools", {"query": "set an alarm for 6:45 on weekdays"})
    best = found["results"][0]
    args = {"label": "Weekdays", "time": "06:45", "days": ["mon", "tue", "wed", "thu", "fri"]}
    data, is_error = await client.call(
        best["call"]["name"], {"tool": best["tool"], "args": json.dumps(args)}
    )
    text = json.dumps(data)
    truthful = not is_error and best["tool"] == "create_alarm" and "06:45" in text
    said = text[:80] if is_error else "created"
    return Outcome(f"{best['tool']} → {said}", truthful=truthful)


async def good_night(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"domain": ["scene"], "name": "good night"})
    updates = [{"entity_id": e["entity_id"], "state": "on"} for e in _entities(data)[:1]]
    return await _set_and_check(
        client, world, updates, lambda s: s.get("state") != "unavailable", _why(data)
    )


async def offline(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"available": False, "fields": ["name"]})
    reported = {e["entity_id"] for e in _entities(data)}
    states, exposed = await world.states(), await world.exposed()
    ours = await _our_entities(world)
    expected = {
        entity_id
        for entity_id in ours & exposed
        if states.get(entity_id, {}).get("state") == "unavailable"
    }
    return Outcome(f"{len(reported)} offline", truthful=reported == expected)


async def front_door_history(client: Client, world: World) -> Outcome:
    data, is_error = await client.call("get_history", {"name": "front door", "hours": 1})
    entities = data.get("entities", {}) if not is_error else {}
    states = await world.states()
    named = {
        entity_id
        for entity_id, state in states.items()
        if {"front", "door"}
        <= set(str(state["attributes"].get("friendly_name", "")).lower().split())
    }
    if not entities:
        # "There is no front door" is a true answer when Home Assistant has none.
        return Outcome(f"none: {_why(data)}", truthful=not named and bool(_why(data)))
    truthful = set(entities) <= named
    coverage = _coverage(data)
    if await _uptime_hours(world) < 1:
        truthful &= bool(coverage)
    changes = sum(item["count"] for item in entities.values())
    return Outcome(
        f"{len(entities)} entities, {changes} states; coverage: {coverage or 'NOT STATED'}",
        truthful=truthful,
    )


async def doors_locked(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"domain": ["lock"]})
    states = await world.states()
    found = _entities(data)
    truthful = bool(found) and all(states[e["entity_id"]]["state"] == e.get("state") for e in found)
    answer = "; ".join(f"{e.get('name')}: {e.get('state')}" for e in found)
    return Outcome(answer or f"none: {_why(data)}", truthful=truthful)


async def lock_doors(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"domain": ["lock"]})
    updates = [{"entity_id": e["entity_id"], "state": "locked"} for e in _entities(data)]
    return await _set_and_check(
        client, world, updates, lambda s: s.get("state") in ("locked", "locking"), _why(data)
    )


async def thermostat(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"domain": ["climate"]})
    updates = [{"entity_id": e["entity_id"], "temperature": 21} for e in _entities(data)[:1]]
    return await _set_and_check(
        client,
        world,
        updates,
        lambda s: s.get("attributes", {}).get("temperature") == 21,
        _why(data),
    )


async def kitchen_off(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"area": "kitchen", "domain": ["light", "switch"]})
    updates = [{"entity_id": e["entity_id"], "state": "off"} for e in _entities(data)]
    return await _set_and_check(
        client, world, updates, lambda s: s.get("state") == "off", _why(data)
    )


async def list_alarms(client: Client, world: World) -> Outcome:
    data, is_error = await client.call(_gateway_of(client, "robine wake"), {"tool": "list_alarms"})
    alarms = data.get("alarms", []) if isinstance(data, dict) else []
    return Outcome(f"{len(alarms)} alarms", truthful=not is_error)


async def hub_mode_away(client: Client, world: World) -> Outcome:
    data, _ = await client.call("get_state", {"name": "hub mode", "domain": ["select"]})
    updates = [{"entity_id": e["entity_id"], "value": "Away"} for e in _entities(data)[:1]]
    return await _set_and_check(
        client, world, updates, lambda s: s.get("state") == "Away", _why(data)
    )


async def backends_health(client: Client, world: World) -> Outcome:
    data, is_error = await client.call("list_backends", {})
    backends = data.get("backends", []) if isinstance(data, dict) else []
    down = [b["title"] for b in backends if not b.get("available")]
    return Outcome(
        f"{len(backends)} backends, down: {', '.join(down) or 'none'}",
        truthful=not is_error and len(backends) == 3,
    )


ROBS_FLAT = "Rob's Flat"
GEORGE_STREET = "George Street"


async def _one_named(
    client: Client, name: str, domain: str, home: str
) -> tuple[dict[str, Any] | None, str]:
    """How an update names the one entity meant: by name and home where set_state takes them
    (no call), else by the entity id get_state finds. (the update's target, why not)."""
    if {"name", "home"} <= set(_update_fields(client)):
        return {"name": name, "home": home}, ""
    data, _ = await client.call(
        "get_state", {"name": name, "domain": [domain], **_in_home(client, "get_state", home)}
    )
    found, why = _one_per_home(_entities(data), home)
    if found is None:
        return None, why or _why(data)
    return {"entity_id": found["entity_id"]}, ""


async def lamp_off_at_robs(client: Client, world: World) -> Outcome:
    """ "Turn off the kitchen desk lamp at Rob's Flat" — one of two identical twins."""
    twins = await world.named("kitchen desk lamp", "light")
    await world.service("light", "turn_on", twins)
    target, why = await _one_named(client, "kitchen desk lamp", "light", ROBS_FLAT)
    if target is None:
        return Outcome(f"not done: {why}", truthful=False, done=False)
    outcome = await _set_and_check(
        client, world, [{**target, "state": "off"}], lambda s: s.get("state") == "off"
    )
    homes, states = await world.homes(), await world.states()
    lamp = outcome.entities[0] if len(outcome.entities) == 1 else ""
    others = [twin for twin in twins if twin != lamp]
    outcome.truthful = bool(outcome.truthful) and (
        homes.get(lamp) == ROBS_FLAT and all(states[twin]["state"] == "on" for twin in others)
    )
    return outcome


async def alarm_armed_at_george(client: Client, world: World) -> Outcome:
    """ "Is the security system at George Street armed?" — twins again."""
    data, _ = await client.call(
        "get_state",
        {
            "name": "security system",
            "domain": ["alarm_control_panel"],
            **_in_home(client, "get_state", GEORGE_STREET),
        },
    )
    panel, why = _one_per_home(_entities(data), GEORGE_STREET)
    if panel is None:
        return Outcome(f"cannot say: {why or _why(data)}", truthful=False, done=False)
    homes, states = await world.homes(), await world.states()
    truthful = homes.get(panel["entity_id"]) == GEORGE_STREET and states[panel["entity_id"]][
        "state"
    ] == panel.get("state")
    return Outcome(
        f"{panel.get('name')} at {GEORGE_STREET}: {panel.get('state')}", truthful=truthful
    )


async def dim_lamp_at_robs(client: Client, world: World) -> Outcome:
    """ "Dim the kitchen desk lamp at Rob's Flat to 30 %": percent in, percent out."""
    target, why = await _one_named(client, "kitchen desk lamp", "light", ROBS_FLAT)
    if target is None:
        return Outcome(f"not done: {why}", truthful=False, done=False)
    # The brightness key set_state's schema offers (its description says percent).
    key = "brightness_pct" if "brightness_pct" in _update_fields(client) else "brightness"
    result, is_error = await client.call("set_state", {"updates": [{**target, key: 30}]})
    details = result.get("error", {}).get("details", result) if is_error else result
    items = details.get("results", []) if isinstance(details, dict) else []
    lamp = str(items[0].get("entity_id", "")) if len(items) == 1 else ""
    state = (await world.states()).get(lamp, {})
    level = state.get("attributes", {}).get("brightness")
    # The device's own level (0-255) must be 30 % of it; a level the result reports is read in
    # the unit it was written in.
    truthful = (
        (await world.homes()).get(lamp) == ROBS_FLAT
        and level is not None
        and abs(level - 255 * 0.3) <= 3
    )
    said = []
    for item in items:
        if item.get("status") != "done":
            truthful &= item.get("status") != "failed" or bool(item.get("error"))
        reported = _reported(item, key)
        if reported is not None:
            truthful &= abs(float(reported) - 30) <= 1
            said.append(f"reports {key} {reported}")
        said.append(str(item.get("status")))
    return Outcome(f"{lamp}: {', '.join(said)} (device {level}/255)", truthful=truthful)


def _update_fields(client: Client) -> dict[str, Any]:
    """What one of set_state's updates may say, as its published schema has it."""
    for item in client.tools:
        if item["name"] == "set_state":
            updates = item.get("inputSchema", {}).get("properties", {}).get("updates", {})
            return dict(updates.get("items", {}).get("properties", {}))
    return {}


def _reported(item: dict[str, Any], key: str) -> Any:
    """A level a write result reports the device has now (set_state puts it beside status)."""
    return item.get(key)


async def motion_at_robs_3h(client: Client, world: World) -> Outcome:
    """ "Has there been motion in the kitchen at Rob's Flat in the last 3 hours?" — more than
    Home Assistant has recorded: the answer must say from when it knows."""
    data, is_error = await client.call(
        "get_history",
        {
            "name": "motion",
            "area": "kitchen",
            "hours": 3,
            **_in_home(client, "get_history", ROBS_FLAT),
        },
    )
    if is_error:
        return Outcome(f"error: {_why(data)}", truthful=False)
    entities = data.get("entities", {})
    homes = await world.homes()
    coverage = _coverage(data)
    truthful = bool(entities) and all(homes.get(e) == ROBS_FLAT for e in entities)
    if await _uptime_hours(world) < 3:
        truthful &= bool(coverage)
    changes = sum(item.get("count", 0) for item in entities.values())
    return Outcome(
        f"{len(entities)} entities, {changes} states; coverage: {coverage or 'NOT STATED'}",
        truthful=truthful,
    )


async def back_door_at_george_2h(client: Client, world: World) -> Outcome:
    """ "Has the back door at George Street been unlocked in the last two hours?" — again
    more than Home Assistant has recorded, and one of twins."""
    data, is_error = await client.call(
        "get_history",
        {
            "name": "back door",
            "domain": ["lock"],
            "hours": 2,
            **_in_home(client, "get_history", GEORGE_STREET),
        },
    )
    if is_error:
        return Outcome(f"error: {_why(data)}", truthful=False)
    entities = data.get("entities", {})
    homes = await world.homes()
    coverage = _coverage(data)
    truthful = len(entities) == 1 and all(homes.get(e) == GEORGE_STREET for e in entities)
    if await _uptime_hours(world) < 2:
        truthful &= bool(coverage)
    states = [point[1] for item in entities.values() for point in item.get("points", [])]
    return Outcome(
        f"{len(entities)} entities, states {sorted(set(states))}; "
        f"coverage: {coverage or 'NOT STATED'}",
        truthful=truthful,
    )


async def lights_on_anywhere(client: Client, world: World) -> Outcome:
    """ "Which lights are on anywhere?" — every backend, twins told apart."""
    fields = ["name", "state"] + (["home"] if _accepts(client, "get_state", "home") else [])
    data, _ = await client.call("get_state", {"domain": ["light"], "fields": fields})
    found = [e for e in _entities(data) if e.get("state") == "on"]
    states, exposed, ours = await world.states(), await world.exposed(), await _our_entities(world)
    expected = {
        entity_id
        for entity_id in ours & exposed
        if entity_id.startswith("light.") and states[entity_id]["state"] == "on"
    }
    labels = [(e.get("name"), e.get("home")) for e in found]
    told_apart = len(set(labels)) == len(labels)
    truthful = {e["entity_id"] for e in found} == expected and told_apart
    return Outcome(
        f"{len(found)} on" + ("" if told_apart else " (twins not told apart)"), truthful=truthful
    )


async def alarms_and_front_door(client: Client, world: World) -> Outcome:
    """ "What alarms are set on the clock, and is the front door locked?" — two backends."""
    alarms, is_error = await client.call(
        _gateway_of(client, "robine wake"), {"tool": "list_alarms"}
    )
    data, _ = await client.call("get_state", {"name": "front door", "domain": ["lock"]})
    found = _entities(data)
    states = await world.states()
    truthful = not is_error and all(
        states[e["entity_id"]]["state"] == e.get("state") for e in found
    )
    if not found:
        # "There is no front door lock" is true only when Home Assistant has none.
        truthful &= not await world.named("front door", "lock")
    count = len(alarms.get("alarms", [])) if isinstance(alarms, dict) else 0
    doors = "; ".join(f"{e.get('name')}: {e.get('state')}" for e in found) or "no front door lock"
    return Outcome(f"{count} alarms; {doors}", truthful=truthful)


async def _our_entities(world: World) -> set[str]:
    registry = await world.ha.websocket_command({"type": "config/entity_registry/list"})
    return {e["entity_id"] for e in registry if e["platform"] == "mcp_gateway"}


# --- core mcp_server's scripts (its intents and GetLiveContext) --------------------------------


def _intent(name: str, args: dict[str, Any]) -> Script:
    async def run(client: Client, world: World) -> Outcome:
        if (tool := core_tool_name((t["name"] for t in client.tools), name)) is None:
            return Outcome("n/a (no such tool)")
        data, is_error = await client.call(tool, args)
        return Outcome("error" if is_error else str(data)[:60])

    return run


async def live_context(client: Client, world: World) -> Outcome:
    if (tool := core_tool_name((t["name"] for t in client.tools), "GetLiveContext")) is None:
        return Outcome("n/a (no such tool)")
    data, is_error = await client.call(tool, {})
    return Outcome("error" if is_error else f"context of {len(str(data))} chars")


TASKS: tuple[Task, ...] = (
    Task(
        "living-room lights on",
        lights_on,
        _intent("HassTurnOn", {"area": "Living Room", "domain": ["light"]}),
    ),
    Task("bedroom temperature", bedroom_temperature, live_context),
    Task("alarm 6:45 on weekdays", alarm_weekdays),
    Task("run the Good Night scene", good_night, _intent("HassTurnOn", {"name": "Good Night"})),
    Task("which devices are offline?", offline, live_context),
    Task("front door, last hour", front_door_history),
    Task("are the doors locked?", doors_locked, live_context),
    Task("lock every door", lock_doors, _intent("HassTurnOn", {"domain": ["lock"]})),
    Task(
        "thermostat to 21 °C",
        thermostat,
        _intent("HassClimateSetTemperature", {"temperature": 21}),
    ),
    Task(
        "kitchen lights and switches off",
        kitchen_off,
        _intent("HassTurnOff", {"area": "Kitchen", "domain": ["light", "switch"]}),
    ),
    Task("which alarms are set?", list_alarms),
    Task("hub mode to Away", hub_mode_away),
    Task("are all backends up?", backends_health),
    # Two Homecast homes with identical twins: the home decides.
    Task(
        "kitchen desk lamp off at Rob's Flat",
        lamp_off_at_robs,
        _intent("HassTurnOff", {"name": "Kitchen Desk Lamp"}),
    ),
    Task("George Street's security system armed?", alarm_armed_at_george, live_context),
    Task(
        "Rob's Flat desk lamp to 30 %",
        dim_lamp_at_robs,
        _intent("HassLightSet", {"name": "Kitchen Desk Lamp", "brightness": 30}),
    ),
    # More history asked for than Home Assistant has recorded.
    Task("motion at Rob's Flat kitchen, 3 h", motion_at_robs_3h),
    Task("George Street back door, 2 h", back_door_at_george_2h),
    # Several backends in one request.
    Task("which lights are on anywhere?", lights_on_anywhere, live_context),
    Task("clock alarms + front door locked?", alarms_and_front_door, live_context),
)
# What each Done-when target is checked on.
TWIN_TASKS = (
    "kitchen desk lamp off at Rob's Flat",
    "George Street's security system armed?",
    "Rob's Flat desk lamp to 30 %",
    "which lights are on anywhere?",
    "George Street back door, 2 h",
)
COVERAGE_TASKS = ("motion at Rob's Flat kitchen, 3 h", "George Street back door, 2 h")
MAX_AVERAGE_KB = 2.0


async def measure(client: Client, script: Script, world: World) -> Outcome:
    trips = client.trips
    sent, received = client.traffic()
    try:
        outcome = await script(client, world)
    except Exception as err:  # a broken step is a result to report, not a crash
        outcome = Outcome(f"failed: {type(err).__name__}: {err}"[:80], truthful=False)
    now_sent, now_received = client.traffic()
    outcome.trips = client.trips - trips
    outcome.sent, outcome.received = now_sent - sent, now_received - received
    return outcome


def ensure_frontend(python: str) -> None:
    """HA's onboarding needs the frontend: install it into the bench venv once."""
    probe = subprocess.run([python, "-c", "import hass_frontend"], check=False)
    if probe.returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", FRONTEND], check=True)


async def run(args: argparse.Namespace) -> int:
    python = core_venv_python()
    ensure_frontend(python)
    async with demo_home(activity_every=3600) as home:
        started = asyncio.get_running_loop().time()
        ha = HomeAssistantProcess(
            name="MCP Gateway AI tasks",
            extra_yaml=f"conversation:\n{DEMO_YAML}",
            command=(python, "-P", "-m", "homeassistant"),
            keep=args.keep,
        )
        async with ha:
            await add_backends(ha, home)
            ours_ids = await _settle(ha)
            # As a user who wants their assistants to reach these devices: expose them to
            # Assist (core's tools and, by default, the gateway reach only exposed entities).
            await ha.websocket_command(
                {
                    "type": "homeassistant/expose_entity",
                    "assistants": ["conversation"],
                    "entity_ids": sorted(ours_ids),
                    "should_expose": True,
                }
            )
            await add_core_mcp_server(ha)
            world = World(ha, started)
            async with aiohttp.ClientSession() as session:
                ours = GatewayClient(session, f"{ha.base_url}/api/mcp_gateway", ha.token)
                await ours.start()
                core = CoreClient(session, ha.base_url, ha.token)
                await core.start()
                setup = (ours.traffic(), core.traffic())
                rows = []
                for task in TASKS:
                    mine = await measure(ours, task.ours, world)
                    theirs = await measure(core, task.core, world) if task.core else None
                    rows.append((task, mine, theirs))
                await core.close()
                await ours.mcp.close()
            if args.inspector:
                await inspect_schemas(args.inspector, f"{ha.base_url}/api/mcp_gateway", ha.token)
    return report(rows, setup, strict=args.strict)


async def inspect_schemas(peers: str, url: str, token: str) -> None:
    """The MCP Inspector's schema portability check (--strict) over our tools/list."""
    process = await asyncio.create_subprocess_exec(
        peers,
        "inspector",
        url,
        "--token",
        token,
        "--",
        "--method",
        "tools/list",
        "--strict",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await process.communicate()
    # The report ends with "N errors, M warnings across K tools."; no findings, no report.
    summary = [line for line in stderr.decode().splitlines() if " across " in line]
    found = summary[-1] if summary else "no schema findings"
    print(f"MCP Inspector --strict (exit {process.returncode}): {found}")


async def _settle(ha: HomeAssistantProcess) -> set[str]:
    """Wait until every backend's entities are in the state machine; returns them."""
    for _ in range(600):
        registry = await ha.websocket_command({"type": "config/entity_registry/list"})
        ours = {
            e["entity_id"]
            for e in registry
            if e["platform"] == "mcp_gateway" and e.get("disabled_by") is None
        }
        states = {s["entity_id"] for s in await ha.api("GET", "/api/states")}
        entries = await ha.api("GET", "/api/config/config_entries/entry")
        loaded = [e for e in entries if e["domain"] == "mcp_gateway" and e["state"] == "loaded"]
        if len(loaded) >= 3 and ours and ours <= states:
            return ours
        await asyncio.sleep(0.2)  # the first polls of three backends land
    raise RuntimeError("the backends did not come up")


def report(
    rows: list[tuple[Task, Outcome, Outcome | None]],
    setup: tuple[tuple[int, int], tuple[int, int]],
    *,
    strict: bool,
) -> int:
    """Print the table and the figures; 1 when a target is missed and `strict`."""
    _print_setup(setup)
    missed = _print_tasks(rows)
    missed += _print_reference(rows)
    missed += _print_averages(rows)
    _print_twins_and_coverage(rows)
    print("all targets met" if not missed else f"targets missed: {'; '.join(missed)}")
    return 1 if missed and strict else 0


def _print_setup(setup: tuple[tuple[int, int], tuple[int, int]]) -> None:
    (our_sent, our_received), (core_sent, core_received) = setup
    print(
        f"initialize + tools/list: gateway {our_sent / 1024:.1f} KB sent, "
        f"{our_received / 1024:.1f} KB received; core {core_sent / 1024:.1f} KB sent, "
        f"{core_received / 1024:.1f} KB received"
    )


def _print_tasks(rows: list[tuple[Task, Outcome, Outcome | None]]) -> list[str]:
    """One line per task (and its answer); what missed a target."""
    header = f"{'task':<34} {'trips':>5} {'sent':>7} {'recv':>8}  {'check':<10} | core"
    print(header)
    print("-" * len(header))
    missed: list[str] = []
    for task, mine, theirs in rows:
        check = (
            {True: "ok", False: "MISLEADING", None: "-"}[mine.truthful] if mine.done else "NOT DONE"
        )
        core = (
            f"{theirs.trips} trips {theirs.sent / 1024:6.1f} KB sent {theirs.received / 1024:7.1f}"
            f" KB recv  {theirs.answer[:40]}"
            if theirs
            else "n/a (core's tools cannot do this)"
        )
        print(
            f"{task.name:<34} {mine.trips:>5} {mine.sent / 1024:6.1f}K {mine.received / 1024:7.1f}K"
            f"  {check:<10} | {core}"
        )
        print(f"{'':<34} answer: {mine.answer[:100]}")
        if mine.trips > MAX_TRIPS:
            missed.append(f"{task.name}: {mine.trips} round trips")
        if mine.truthful is not True:
            missed.append(f"{task.name}: {'answer not confirmed' if mine.done else 'not done'}")
    return missed


def _print_reference(rows: list[tuple[Task, Outcome, Outcome | None]]) -> list[str]:
    """The six reference tasks' bytes against the reference measurement."""
    before = sum(REFERENCE_KB[task.name] for task, _, _ in rows if task.name in REFERENCE_KB)
    after = sum(mine.received / 1024 for task, mine, _ in rows if task.name in REFERENCE_KB)
    print(
        f"the six reference tasks: {after:.1f} KB received, {before:.1f} KB in the reference "
        f"(ratio {after / before:.2f}, target ≤ 0.50)"
    )
    return ["the six tasks' bytes"] if after > before / 2 else []


def _print_averages(rows: list[tuple[Task, Outcome, Outcome | None]]) -> list[str]:
    """Bytes and calls per task, ours and, where it can do the task, core's."""
    average = sum(mine.received for _, mine, _ in rows) / len(rows) / 1024
    compared = [(mine, theirs) for _, mine, theirs in rows if theirs is not None]
    print(
        f"per task on average: {average:.2f} KB received (target ≤ {MAX_AVERAGE_KB:.0f} KB), "
        f"{sum(m.trips for _, m, _ in rows) / len(rows):.2f} calls; where core can do the task "
        f"too ({len(compared)}): ours {_mean(m.received / 1024 for m, _ in compared):.2f} KB / "
        f"{_mean(m.trips for m, _ in compared):.2f} calls, core "
        f"{_mean(t.received / 1024 for _, t in compared):.2f} KB / "
        f"{_mean(t.trips for _, t in compared):.2f} calls"
    )
    return [f"{average:.2f} KB received per task on average"] if average > MAX_AVERAGE_KB else []


def _print_twins_and_coverage(rows: list[tuple[Task, Outcome, Outcome | None]]) -> None:
    outcomes = {task.name: mine for task, mine, _ in rows}
    twins = [name for name in TWIN_TASKS if outcomes[name].truthful is not True]
    coverage = [name for name in COVERAGE_TASKS if outcomes[name].truthful is not True]
    print(
        f"twins resolved by home: {'yes' if not twins else 'NO (' + ', '.join(twins) + ')'}; "
        f"history coverage stated: {'yes' if not coverage else 'NO (' + ', '.join(coverage) + ')'}"
    )


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep HA's config dir")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--inspector",
        metavar="MCP_PEERS",
        help="path of the mcp-peers tool: also run the MCP Inspector's --strict schema check",
    )
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
