"""The demo's home for everyday requests, and an assistant that knows only what it is told.

The home is the one the demo serves: a hub of 40 devices with its custom rule engine, the
two-home Homecast capture (Rob's Flat and George Street, identical twins in both), and a
bedside clock, each on its simulator, with Home Assistant's recorder running. The assistant
speaks JSON-RPC over the gateway's HTTP endpoint; it reads tools/list and the answers, and
never matches values by hand to tell entities apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant

from simulators import DATA_DIR
from tests.homecast import sim as homecast
from tests.hubitat import sim as hubitat
from tests.robine_wake import sim as robine_wake
from tests.simulation import LoopbackServers

URL = "/api/mcp_gateway"
HEADERS = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}
REAL_HOMES = DATA_DIR / "homecast_real.json"
ROBS_FLAT = "Rob's Flat"
GEORGE_STREET = "George Street"
# Each request is done within this many tool calls.
MAX_CALLS = 2


@dataclass(frozen=True, slots=True)
class Simulators:
    """The demo's three running simulators (this home is the demo's, on purpose)."""

    hubitat: hubitat.Sim
    homecast: homecast.Sim
    robine_wake: robine_wake.Sim


async def start_demo_simulators(servers: LoopbackServers) -> Simulators:
    """The three simulators as the demo starts them: devices act after a short delay (a
    hub's HSM passes through its exit delay), as real ones do."""
    return Simulators(
        hubitat=await hubitat.start(
            servers,
            devices=40,
            seed=7,
            custom_rule_engine=True,
            hub_name="Home Hub",
            command_delay=0.1,
        ),
        homecast=await homecast.start(
            servers, state_file=REAL_HOMES, community=True, write_delay=0.1
        ),
        robine_wake=await robine_wake.start(
            servers, device_id=robine_wake.DEVICE_ID, device_name="Bedroom Robine Wake"
        ),
    )


@dataclass
class Assistant:
    """A model given only the gateway's URL and a token: tools/list, then tool calls."""

    client: TestClient
    tools: list[dict[str, Any]] = field(default_factory=list, repr=False)
    calls: int = 0
    said: list[Any] = field(default_factory=list, repr=False)
    _next_id: int = 0

    async def _rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        response = await self.client.post(
            URL,
            json={"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params},
            headers=HEADERS,
        )
        body = json.loads(await response.read())
        assert "error" not in body, body
        result: dict[str, Any] = body["result"]
        return result

    async def start(self) -> Assistant:
        self.tools = (await self._rpc("tools/list", {}))["tools"]
        return self

    async def call(self, name: str, args: dict[str, Any]) -> tuple[Any, bool]:
        """One tool call: (its data, is_error). Everything it said is kept for the checks."""
        self.calls += 1
        result = await self._rpc("tools/call", {"name": name, "arguments": args})
        data = result.get("structuredContent")
        if data is None:
            text = result["content"][0]["text"]
            try:
                data = json.loads(text)
            except ValueError:
                data = text
        self.said.append(data)
        return data, bool(result.get("isError"))

    def schema(self, tool: str) -> dict[str, Any]:
        return next(t["inputSchema"] for t in self.tools if t["name"] == tool)

    def accepts(self, tool: str, prop: str) -> bool:
        return prop in self.schema(tool).get("properties", {})

    def gateway(self, kind: str) -> str:
        """A backend's gateway tool, found by the backend its description names."""
        return next(
            t["name"] for t in self.tools if f"the {kind} backend" in t.get("description", "")
        )


@dataclass
class Home:
    """The demo's home: its simulators and an assistant connected to the gateway."""

    hass: HomeAssistant
    sims: Simulators
    assistant: Assistant


def entities(data: Any) -> list[dict[str, Any]]:
    """get_state's entities, each with the home and backend a page says once for all."""
    if not isinstance(data, dict):
        return []
    shared = {key: data[key] for key in ("home", "backend") if key in data}
    return [{**shared, **entity} for entity in data.get("entities", [])]


def at_home(found: list[dict[str, Any]], home: str) -> list[dict[str, Any]]:
    """The entities an answer places in `home`; twins are told apart by this alone."""
    return [e for e in found if str(e.get("home", "")).casefold() == home.casefold()]


def results(data: Any) -> list[dict[str, Any]]:
    """set_state's per-update results, from a success or an error's details."""
    if not isinstance(data, dict):
        return []
    details = data.get("error", {}).get("details", data) if "error" in data else data
    return list(details.get("results", [])) if isinstance(details, dict) else []
