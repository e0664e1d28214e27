"""A backend's answer is read with a cap: a 50 MiB answer (a spoofed or faulty server on a
plain-HTTP LAN) is refused unread, with a clear error, and leaves no memory behind.

Each backend's simulator streams the answer without a length, so only reading it in pieces
can refuse it; the gateway path, an integration action and an entity action are attacked.
"""

from __future__ import annotations

import gc
import tracemalloc

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
from tests.backend_sims import backend_cases, registered_kinds

from .conftest import SecurityHome, error_code

MIB = 1024 * 1024
ATTACK = 50 * MIB
# Each backend's own facts (tests/<kind>/security_cases.py): `READ`, what its gateway tool is
# asked (one read every reading user may make), and `ACTION_READ`, an action that reads it.
CASES = backend_cases("security_cases")


def test_the_default_cap_fits_real_answers() -> None:
    """4 MiB: far above the Hubitat app's own 128 KiB cap on its answers, far below HA's
    memory budget; the client and the settings agree."""
    assert DEFAULT_SETTINGS.max_backend_answer_bytes == DEFAULT_MAX_RESPONSE_BYTES == 4 * MIB


@pytest.mark.parametrize("backend", registered_kinds())
async def test_a_50_mib_answer_is_refused_unread(home: SecurityHome, backend: str) -> None:
    """The issue: a 50 MiB answer was read whole, and HA's memory grew by 200 MiB for good."""
    gateway, read, faults = home.gateways[backend], CASES[backend].READ, home.sims[backend].faults
    client = home.entries[backend].runtime_data.client
    assert client.max_response_bytes == 4 * MIB  # the settings' default reaches every client
    # The catalog first (the Hubitat app lists its sub-tools through a tools/call too).
    assert error_code(await home.call("admin", gateway, read)) is None
    faults.huge_answer = ATTACK
    received = client.stats.bytes_received
    gc.collect()
    tracemalloc.start()
    try:
        result = await home.call("admin", gateway, read)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error_code(result) == "answer_too_large", result
    assert "4 MiB" in result["content"][0]["text"]
    # Read no further than the cap (and the chunk that crossed it); held no more than that.
    assert client.stats.bytes_received - received <= 5 * MIB
    assert peak < 16 * MIB, peak
    # The backend answers normally again once it behaves.
    faults.huge_answer = 0
    assert error_code(await home.call("admin", gateway, read)) is None


async def test_the_cap_is_a_gateway_setting(home: SecurityHome) -> None:
    """Lowered in the gateway settings, the cap applies at once, without a reload."""
    home.hass.config_entries.async_update_entry(
        home.settings_entry(),
        options={CONF_RATE_LIMIT: MAX_RATE_LIMIT, CONF_EXPOSED_ONLY: False, CONF_MAX_ANSWER_MIB: 1},
    )
    backend = registered_kinds()[0]
    gateway, read = home.gateways[backend], CASES[backend].READ
    client = home.entries[backend].runtime_data.client
    assert client.max_response_bytes == MIB
    assert error_code(await home.call("admin", gateway, read)) is None
    home.sims[backend].faults.huge_answer = 2 * MIB
    result = await home.call("admin", gateway, read)
    assert error_code(result) == "answer_too_large"
    assert "1 MiB" in result["content"][0]["text"]


@pytest.mark.parametrize(
    "backend", [kind for kind, cases in CASES.items() if cases.ACTION_READ is not None]
)
async def test_an_action_reports_the_cap_translated(home: SecurityHome, backend: str) -> None:
    """An integration action whose backend answers too much says so in the user's words."""
    action, data = CASES[backend].ACTION_READ
    home.sims[backend].faults.huge_answer = ATTACK
    with pytest.raises(HomeAssistantError) as caught:
        await home.hass.services.async_call(
            DOMAIN,
            action,
            {"config_entry_id": home.entries[backend].entry_id, **data},
            blocking=True,
            return_response=True,
        )
    assert caught.value.translation_key == "answer_too_large"
    assert "4 MiB" in str(caught.value)
    assert "ran" in str(caught.value)
