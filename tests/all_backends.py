"""One Home Assistant with every registered backend, each on its simulator.

The security matrix and the gateway's end-to-end tests start the same home: each backend as
its `tests/<kind>/sim.py` declares it (`BACKEND`), in the registry's order, so a new backend is
part of it without editing this file.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
import json
from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests.backend_sims import simulated_backends
from tests.simulation import LoopbackServers

# The running simulators by backend kind (each kind's own `Sim`).
Simulators = dict[str, Any]
# The backends' config entries by kind, set up.
Entries = dict[str, MockConfigEntry]


async def start_simulators(servers: LoopbackServers) -> Simulators:
    """Every registered backend's simulator on 127.0.0.1 (closed with `servers`)."""
    return {kind: await backend.start(servers) for kind, backend in simulated_backends().items()}


async def setup_entries(
    hass: HomeAssistant,
    sims: Simulators,
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Entries:
    """An entry per simulator, set up in registry order; `options[kind]` are a kind's own
    entry options."""
    backends = simulated_backends()
    entries = {
        kind: backend.entry(sims[kind], **(options or {}).get(kind, {}))
        for kind, backend in backends.items()
    }
    for kind, entry in entries.items():
        await backends[kind].setup(hass, entry)
    return entries


async def http_home(
    hass: HomeAssistant,
    hass_client: Callable[..., Awaitable[TestClient]],
    servers: LoopbackServers,
) -> TestClient:
    """HA's http with an entry of every registered backend on its simulator; an admin client."""
    assert await async_setup_component(hass, "http", {})
    await setup_entries(hass, await start_simulators(servers))
    return await hass_client()


GATEWAY_URL = "/api/mcp_gateway"
JSON_HEADERS = {"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"}


async def gateway_result(
    client: TestClient, method: str, params: Mapping[str, Any] | None = None, request_id: int = 1
) -> Any:
    """The `result` of one JSON-RPC request to the gateway's endpoint, answered as JSON."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    response = await client.post(GATEWAY_URL, json=message, headers=JSON_HEADERS)
    return json.loads(await response.read())["result"]
