"""The demo's home in one Home Assistant with its recorder, and an assistant connected to it.

Every test here ends with the assistant's count of tool calls checked against MAX_CALLS.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable

from aiohttp.test_utils import TestClient
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.components.recorder import Recorder
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
)

from tests.homecast import sim as homecast
from tests.hubitat import sim as hubitat
from tests.robine_wake import sim as robine_wake
from tests.simulation import LoopbackServers, setup_entry

from .assistant import MAX_CALLS, Assistant, Home, start_demo_simulators


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(
    recorder_mock: Recorder, enable_custom_integrations: None
) -> None:
    """The recorder must start before hass: request it ahead of the shared autouse fixture."""


@pytest.fixture
async def home(
    recorder_mock: Recorder,
    hass: HomeAssistant,
    hass_client: Callable[[], Awaitable[TestClient]],
    loopback_servers: LoopbackServers,
    socket_enabled: None,
) -> AsyncGenerator[Home]:
    """The demo's three backends in one HA (recorder running), and a connected assistant."""
    assert await async_setup_component(hass, "http", {})
    sims = await start_demo_simulators(loopback_servers)
    loaded = [
        hubitat.make_entry(sims.hubitat),
        homecast.token_entry(sims.homecast),
        robine_wake.make_entry(sims.robine_wake),
    ]
    for entry in loaded:
        await setup_entry(hass, entry)
    await hass.async_block_till_done()
    # As the demo's user: every device exposed to assistants (HA's defaults leave locks,
    # selects and alarm panels out, and the gateway honours exposure as Assist does).
    if "homeassistant" in hass.config.components:
        registry = er.async_get(hass)
        for entry in loaded:
            for entity in er.async_entries_for_config_entry(registry, entry.entry_id):
                async_expose_entity(hass, "conversation", entity.entity_id, True)
    # The recorder writes in batches (every few seconds in a real HA): ask once it has.
    await async_wait_recording_done(hass)
    assistant = await Assistant(await hass_client()).start()
    yield Home(hass, sims, assistant)
    assert assistant.calls <= MAX_CALLS, assistant.said
    # Unload while the simulators still answer, so sessions close cleanly.
    for entry in loaded:
        await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
