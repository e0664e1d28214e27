"""Fixtures shared by every test."""

from __future__ import annotations

import pytest

# Import our package before the plugin's testing_config/custom_components shadows the namespace.
import custom_components.mcp_gateway  # noqa: F401


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load integrations from custom_components/ in every test."""
