"""Fixtures shared by every test."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from unittest.mock import PropertyMock, patch

import pytest

# Import our package before the plugin's testing_config/custom_components shadows the namespace.
import custom_components.mcp_gateway  # noqa: F401
from tests.simulation import LoopbackServers


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load integrations from custom_components/ in every test."""


@pytest.fixture
async def loopback_servers() -> AsyncGenerator[LoopbackServers]:
    """Start simulators on 127.0.0.1 during a test; they are closed after it."""
    servers = LoopbackServers()
    yield servers
    await servers.close()


@pytest.fixture
def entity_registry_enabled_by_default() -> Generator[None]:
    """Create every entity enabled, also those disabled by default (as HA core's fixture)."""
    with patch(
        "homeassistant.helpers.entity.Entity.entity_registry_enabled_default",
        return_value=True,
        new_callable=PropertyMock,
    ):
        yield
