"""Homecast's row of the registry: its OAuth flow and its community server's menu step."""

from __future__ import annotations

from custom_components.mcp_gateway.backends.homecast.const import KIND
from custom_components.mcp_gateway.config_flow import McpGatewayConfigFlow
from custom_components.mcp_gateway.registry import backend


def test_its_oauth_hooks_win_over_the_oauth2_base() -> None:
    """The Homecast mixin's OAuth hooks win over the OAuth2 base's, not the root's user step."""
    homecast = backend(KIND).flow_mixin
    assert McpGatewayConfigFlow.async_oauth_create_entry is homecast.async_oauth_create_entry
    assert McpGatewayConfigFlow.async_step_user is not homecast.async_step_user


def test_the_community_server_is_a_menu_step_of_its_own() -> None:
    """The community server is a first step of Homecast's own in the "add a backend" menu."""
    assert "homecast_community" in backend(KIND).menu_steps
