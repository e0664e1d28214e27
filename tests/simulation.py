"""Scaffolding shared by the tests that stand in for backends: simulators and in-memory fakes.

The backend suites, `one_home`, the diagnostics tests and the simulators' own tests all start
simulators on 127.0.0.1, make config entries for them and move clocks; doing it here keeps
the three backends' fixtures alike and a change to one of these steps in one place. Tests of
the gateway's own logic use an in-memory backend built on `InMemoryRuntime` instead.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
import json
import logging
from typing import Any
from unittest.mock import patch

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.entity import EntityDescription
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
    snapshot_platform,
)
from syrupy.assertion import SnapshotAssertion

from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.core.settings import KIND_GATEWAY
from custom_components.mcp_gateway.framework.base import (
    BackendHealth,
    BackendRuntime,
    ToolClass,
    ToolTier,
)
from custom_components.mcp_gateway.framework.entity import DeviceSpec, EntitySpec
from custom_components.mcp_gateway.framework.publisher import EntityPublisher
from custom_components.mcp_gateway.mcp.client import ToolResult
from custom_components.mcp_gateway.mcp.errors import McpToolError
from simulators.base import FAULTS, STATS, Faults, SimClock, Stats

# ---------------------------------------------------------------- simulators on loopback


class LoopbackServers:
    """Simulator servers a test starts on 127.0.0.1; the `loopback_servers` fixture closes them."""

    def __init__(self) -> None:
        self.started: list[TestServer] = []

    async def start(self, app: web.Application) -> TestServer:
        """Serve `app` on a free loopback port (the HA test plugin refuses any other host)."""
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        self.started.append(server)
        return server

    async def close(self) -> None:
        for server in self.started:
            await server.close()


class SimServer:
    """A running simulator: its MCP URL, app, fault switches and counters."""

    def __init__(self, server: TestServer, path: str = "/mcp") -> None:
        self.server = server
        self.app: web.Application = server.app  # type: ignore[assignment]
        self._path = path

    @property
    def url(self) -> str:
        return str(self.server.make_url(self._path))

    @property
    def faults(self) -> Faults:
        return self.app[FAULTS]

    @property
    def stats(self) -> Stats:
        return self.app[STATS]


def sim_clock(now: datetime) -> SimClock:
    """A simulator clock frozen at `now`; tests move it explicitly."""
    clock = SimClock()
    clock.set(now)
    return clock


type ClientFactory = Callable[..., Awaitable[TestClient]]


async def client_on_clock(
    aiohttp_client: ClientFactory,
    create_app: Callable[..., web.Application],
    now: datetime,
    **options: Any,
) -> tuple[TestClient, SimClock]:
    """A simulator app, on a clock frozen at `now`, behind an aiohttp test client."""
    clock = sim_clock(now)
    return await aiohttp_client(create_app(clock=clock, **options)), clock


async def advance_clocks(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, clock: SimClock, seconds: float
) -> None:
    """Let `seconds` pass for the simulators and HA alike; the polls that fall due run."""
    clock.advance(seconds)
    freezer.tick(timedelta(seconds=seconds))
    async_fire_time_changed(hass)
    # Polls run as background tasks of the entries; automations as ordinary tasks.
    await hass.async_block_till_done(wait_background_tasks=True)


# ---------------------------------------------------------------- config entries


def gateway_entry(options: Mapping[str, Any] | None = None) -> MockConfigEntry:
    """The gateway's own settings entry (one per Home Assistant), with these options."""
    return MockConfigEntry(
        domain=DOMAIN,
        title="MCP gateway",
        unique_id="gateway",
        data={CONF_BACKEND: KIND_GATEWAY},
        options=dict(options or {}),
    )


async def setup_entry(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Add and set up an entry, waiting for its platforms (setup may fail: tests check)."""
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def snapshot_one_platform(
    hass: HomeAssistant,
    entity_registry: er.EntityRegistry,
    snapshot: SnapshotAssertion,
    entry: MockConfigEntry,
    *,
    runtime_class: type[BackendRuntime],
    platform: Platform,
) -> None:
    """Set the entry up with only `platform`, then snapshot its entities and states.

    The HA extension (the `snapshot` fixture's, per HA target: tests/conftest.py) strips ids
    and times that change from run to run.
    """
    with patch.object(runtime_class, "platforms", (platform,)):
        await setup_entry(hass, entry)
    await snapshot_platform(
        hass,
        entity_registry,
        snapshot,
        entry.entry_id,
    )


def registry_entity_id(hass: HomeAssistant, platform: str, unique_id: str) -> str:
    """The entity id a user would see, found by the entity's unique id."""
    found = er.async_get(hass).async_get_entity_id(platform, DOMAIN, unique_id)
    assert found is not None, f"no {platform} entity with unique id {unique_id}"
    return found


# ---------------------------------------------------------------- raw MCP for the simulator tests


class RawMcp:
    """Raw JSON-RPC over HTTP against one simulator, so its tests depend on no client code.

    Subclasses say how a request is posted (path, headers, credentials) and, where the reply
    may be an SSE stream, how it is read.
    """

    def __init__(self, client: TestClient, clock: SimClock) -> None:
        self.client = client
        self.clock = clock
        self._id = 0

    @staticmethod
    def encode(body: Any) -> Any:
        """A body as sent: bytes and text as they are (to send malformed JSON), else JSON."""
        return body if isinstance(body, bytes | str) else json.dumps(body)

    async def post(self, body: Any, **kwargs: Any) -> aiohttp.ClientResponse:
        raise NotImplementedError

    async def read(self, response: aiohttp.ClientResponse) -> dict[str, Any]:
        """The JSON-RPC message of a reply."""
        return await response.json()

    async def rpc(
        self, method: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> tuple[int, dict[str, Any]]:
        """One request with a fresh id; the HTTP status and the JSON-RPC reply."""
        self._id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        response = await self.post(message, **kwargs)
        return response.status, await self.read(response)

    async def call_raw(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tools/call answered with HTTP 200; the whole JSON-RPC reply (result or error)."""
        status, body = await self.rpc("tools/call", {"name": name, "arguments": arguments or {}})
        assert status == 200, body
        return body

    async def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """A tools/call that must succeed at the JSON-RPC level; the tool result."""
        body = await self.call_raw(name, arguments)
        assert "result" in body, body
        return body["result"]


# ---------------------------------------------------------------- in-memory backends


class FakeClient:
    """What BackendRuntime.async_shutdown and the gateway's call bound need of a client."""

    timeout = 10.0
    closed = False

    async def close(self) -> None:
        self.closed = True


class InMemoryRuntime(BackendRuntime):
    """A backend whose devices live in memory, polled and published through the real platforms.

    Subclasses return their native objects by id from `_poll` and the entities they want from
    `_specs` (built with `item_spec`). The gateway hooks answer as a healthy backend without
    tools; a test of the gateway overrides them.
    """

    poll_interval = timedelta(seconds=30)

    async def _poll(self) -> dict[str, Any]:
        raise NotImplementedError

    def _specs(self) -> list[EntitySpec]:
        raise NotImplementedError

    async def async_setup(self) -> None:
        self.coordinator = DataUpdateCoordinator(
            self.hass,
            logging.getLogger(type(self).__module__),
            config_entry=self.entry,
            name="fake",
            update_method=self._poll,
            update_interval=self.poll_interval,
        )
        self.publisher = EntityPublisher(self.hass, self, self._specs)
        await self.coordinator.async_config_entry_first_refresh()
        # As the real backends: each poll's objects come and go as entities.
        self.coordinator.async_add_listener(self.publisher.async_refresh)

    def item_spec(
        self,
        platform: Platform,
        description: EntityDescription,
        device: DeviceSpec,
        item_id: str,
        name: str | None = None,
    ) -> EntitySpec:
        """The entity of `description` for the polled object `item_id` (gone when it is)."""

        def source() -> Any:
            return self.coordinator.data.get(item_id)

        return EntitySpec(
            platform=platform,
            key=f"{item_id}_{description.key}",
            device=device,
            description=description,
            coordinator=self.coordinator,
            source=source,
            name=name,
        )

    async def async_list_tools(self) -> list[dict[str, Any]]:
        return []

    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        raise McpToolError(f"no tool {name}")

    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        return ToolClass(ToolTier.ADMIN)

    def health(self) -> BackendHealth:
        return BackendHealth(available=True, protocol_version=None, latency_ms=None)

    def diagnostics(self) -> dict[str, Any]:
        return {}


async def setup_in_memory(
    hass: HomeAssistant,
    runtime_class: type[InMemoryRuntime],
    entry: MockConfigEntry | None = None,
    *,
    unique_id: str = "in-memory",
) -> MockConfigEntry:
    """Set an entry up (added first if it is not; by default one of the runtime's kind) with
    `runtime_class` as its backend, whatever the entry's kind says."""
    if entry is None:
        entry = MockConfigEntry(
            domain=DOMAIN, data={CONF_BACKEND: runtime_class.kind}, unique_id=unique_id
        )
    if hass.config_entries.async_get_entry(entry.entry_id) is None:
        entry.add_to_hass(hass)
    with patch("custom_components.mcp_gateway.runtime_class", return_value=runtime_class):
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    return entry
