"""Fixtures shared by every test."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from pathlib import Path
from typing import Any
from unittest.mock import PropertyMock, patch

from aiohttp.test_utils import TestClient
from homeassistant.const import MAJOR_VERSION
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.syrupy import HomeAssistantSnapshotExtension
from syrupy.assertion import SnapshotAssertion

# Import our package before the plugin's testing_config/custom_components shadows the namespace.
import custom_components.mcp_gateway  # noqa: F401
from custom_components.mcp_gateway.gateway.approval import gate
from custom_components.mcp_gateway.gateway.approval.manager import ApprovalManager
from custom_components.mcp_gateway.gateway.approval.rules import ApprovalReason
from tests.hubitat.sim import Sim, start
from tests.simulation import LoopbackServers


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load integrations from custom_components/ in every test."""


@pytest.fixture(autouse=True)
def preapproved(request: pytest.FixtureRequest) -> Generator[list[ApprovalReason]]:
    """The approval gate is real in every test. A test of what a sensitive call does, not of
    who approves it, says so with `@pytest.mark.preapproved("why")`: every call the gate
    finds sensitive is then approved by a person at once. The gate still weighs each call;
    the fixture's value lists what it asked a person."""
    marker = request.node.get_closest_marker("preapproved")
    if marker is None:
        yield []
        return
    reason = marker.args[0] if marker.args else None
    if not isinstance(reason, str) or not reason.strip():
        pytest.fail('preapproved needs its reason: @pytest.mark.preapproved("why")')
    asked: list[ApprovalReason] = []

    async def approve(
        _manager: ApprovalManager, _ctx: Any, _user: Any, *, reason: ApprovalReason, **_: Any
    ) -> gate.Passed:
        asked.append(reason)
        return gate.Passed()

    with patch.object(gate, "async_hold", approve):
        yield asked


@pytest.fixture
async def loopback_servers() -> AsyncGenerator[LoopbackServers]:
    """Start simulators on 127.0.0.1 during a test; they are closed after it."""
    servers = LoopbackServers()
    yield servers
    await servers.close()


@pytest.fixture
async def sim(loopback_servers: LoopbackServers, socket_enabled: None) -> Sim:
    """A simulated Hubitat hub on 127.0.0.1 whose commands take effect at once, with a lock
    to approve: the home of the gateway's approval and wire tests (a backend's own suite
    starts its own simulator under this name)."""
    return await start(loopback_servers)


@pytest.fixture
def entity_registry_enabled_by_default() -> Generator[None]:
    """Create every entity enabled, also those disabled by default (as HA core's fixture)."""
    with patch(
        "homeassistant.helpers.entity.Entity.entity_registry_enabled_default",
        return_value=True,
        new_callable=PropertyMock,
    ):
        yield


# HA's own snapshot output differs between our targets (2026.x puts the area into new entity
# ids and stores aliases as a list), so the current target keeps its snapshots beside the
# minimum target's snapshots/, in snapshots-ha-2026/ (a sibling: syrupy reads subfolders as
# its own, and would call the other target's files unused).
HA_SNAPSHOT_DIR = "snapshots-ha-2026" if MAJOR_VERSION >= 2026 else None


class _CurrentTargetSnapshots(HomeAssistantSnapshotExtension):
    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(Path(test_location.filepath).parent / str(HA_SNAPSHOT_DIR))


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """HA's snapshot extension (ids and times stripped), with the current target's files there."""
    if HA_SNAPSHOT_DIR is None:
        return snapshot.use_extension(HomeAssistantSnapshotExtension)
    return snapshot.use_extension(_CurrentTargetSnapshots)


@pytest.fixture
async def home_client(
    hass: HomeAssistant,
    hass_client: Callable[..., Awaitable[TestClient]],
    loopback_servers: LoopbackServers,
    socket_enabled: None,
) -> TestClient:
    """HA with an entry of every registered backend, each on its simulator: an admin's client."""
    from tests.all_backends import http_home  # only the tests that ask start every backend

    return await http_home(hass, hass_client, loopback_servers)
