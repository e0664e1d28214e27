"""A backend's answer is read with a cap: a 50 MiB answer (a spoofed or faulty server on a
plain-HTTP LAN) is refused unread, with a clear error, and leaves no memory behind.

Each backend's simulator streams the answer without a length, so only reading it in pieces
can refuse it; the gateway path, an integration action and an entity action are attacked.
"""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

from homeassistant.exceptions import HomeAssistantError
import pytest

from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.core.settings import (
    CONF_EXPOSED_ONLY,
    CONF_MAX_ANSWER_MIB,
    CONF_RATE_LIMIT,
    DEFAULT_SETTINGS,
    MAX_RATE_LIMIT,
)
from custom_components.mcp_gateway.mcp.client import DEFAULT_MAX_RESPONSE_BYTES

from .conftest import HOMECAST_GATEWAY, HUBITAT, ROBINE, SecurityHome, error_code

MIB = 1024 * 1024
ATTACK = 50 * MIB
# What each backend's gateway tool is asked: one read every reading user may make.
READS: dict[str, dict[str, Any]] = {
    HUBITAT: {"tool": "hub_get_info", "args": {}},
    HOMECAST_GATEWAY: {"tool": "get_state", "args": {}},
    ROBINE: {"tool": "get_state", "args": {}},
}


def _faults(home: SecurityHome, gateway: str) -> Any:
    sims = home.sims
    return {
        HUBITAT: sims.hubitat.faults,
        HOMECAST_GATEWAY: sims.homecast.faults,
        ROBINE: sims.robine_wake.faults,
    }[gateway]


def _runtime(home: SecurityHome, gateway: str) -> Any:
    entry = {
        HUBITAT: home.hubitat_entry,
        HOMECAST_GATEWAY: home.homecast_entry,
        ROBINE: home.robine_entry,
    }[gateway]
    return entry.runtime_data


def test_the_default_cap_fits_real_answers() -> None:
    """4 MiB: far above the Hubitat app's own 128 KiB cap on its answers, far below HA's
    memory budget; the client and the settings agree."""
    assert DEFAULT_SETTINGS.max_backend_answer_bytes == DEFAULT_MAX_RESPONSE_BYTES == 4 * MIB


@pytest.mark.parametrize("gateway", sorted(READS))
async def test_a_50_mib_answer_is_refused_unread(home: SecurityHome, gateway: str) -> None:
    """The issue: a 50 MiB answer was read whole, and HA's memory grew by 200 MiB for good."""
    client = _runtime(home, gateway).client
    assert client.max_response_bytes == 4 * MIB  # the settings' default reaches every client
    # The catalog first (the Hubitat app lists its sub-tools through a tools/call too).
    assert error_code(await home.call("admin", gateway, READS[gateway])) is None
    _faults(home, gateway).huge_answer = ATTACK
    received = client.stats.bytes_received
    gc.collect()
    tracemalloc.start()
    try:
        result = await home.call("admin", gateway, READS[gateway])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error_code(result) == "answer_too_large", result
    assert "4 MiB" in result["content"][0]["text"]
    # Read no further than the cap (and the chunk that crossed it); held no more than that.
    assert client.stats.bytes_received - received <= 5 * MIB
    assert peak < 16 * MIB, peak
    # The backend answers normally again once it behaves.
    _faults(home, gateway).huge_answer = 0
    assert error_code(await home.call("admin", gateway, READS[gateway])) is None


async def test_the_cap_is_a_gateway_setting(home: SecurityHome) -> None:
    """Lowered in the gateway settings, the cap applies at once, without a reload."""
    home.hass.config_entries.async_update_entry(
        home.settings_entry(),
        options={CONF_RATE_LIMIT: MAX_RATE_LIMIT, CONF_EXPOSED_ONLY: False, CONF_MAX_ANSWER_MIB: 1},
    )
    client = home.hubitat_entry.runtime_data.client
    assert client.max_response_bytes == MIB
    assert error_code(await home.call("admin", HUBITAT, READS[HUBITAT])) is None
    home.sims.hubitat.faults.huge_answer = 2 * MIB
    result = await home.call("admin", HUBITAT, READS[HUBITAT])
    assert error_code(result) == "answer_too_large"
    assert "1 MiB" in result["content"][0]["text"]


async def test_an_action_reports_the_cap_translated(home: SecurityHome) -> None:
    """An integration action whose backend answers too much says so in the user's words."""
    home.sims.robine_wake.faults.huge_answer = ATTACK
    with pytest.raises(HomeAssistantError) as caught:
        await home.hass.services.async_call(
            DOMAIN,
            "preview_alarm",
            {"config_entry_id": home.robine_entry.entry_id, "label": "Big", "time": "07:00"},
            blocking=True,
            return_response=True,
        )
    assert caught.value.translation_key == "answer_too_large"
    assert "4 MiB" in str(caught.value)
    assert "ran" in str(caught.value)
