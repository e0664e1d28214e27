"""Diagnostics as the UI downloads them, and the search for secrets in them.

Plain helpers for the shared diagnostics tests and each backend's own (`tests/<kind>/`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from tests.simulation import setup_entry


def assert_no_secret(diagnostics: dict[str, Any], *secrets: str) -> str:
    """The JSON dump holds none of the secrets, raw or URL-encoded; returns the dump."""
    dump = json.dumps(diagnostics)
    for secret in secrets:
        for form in {
            secret,
            quote(secret),
            quote(secret, safe=""),
            quote(secret).replace(" ", "+"),
        }:
            assert form not in dump, f"a secret leaked: {form!r}"
    return dump


def assert_sections(diagnostics: dict[str, Any]) -> None:
    assert set(diagnostics) >= {"entry", "health", "backend"}
    assert diagnostics["health"]["available"] is True
    assert diagnostics["health"]["protocol_version"]
    assert diagnostics["backend"]


async def entry_diagnostics(
    hass: HomeAssistant, hass_client: ClientSessionGenerator, entry: MockConfigEntry
) -> dict[str, Any]:
    """Load the entry and download its diagnostics as the UI does; the common sections hold."""
    # The diagnostics views must exist before a test client freezes HA's router.
    assert await async_setup_component(hass, "diagnostics", {})
    await setup_entry(hass, entry)
    assert entry.state is ConfigEntryState.LOADED
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    assert_sections(diagnostics)
    return diagnostics
