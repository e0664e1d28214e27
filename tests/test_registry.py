"""The backend registry: every row reaches setup, the flow, the options and the actions."""

from __future__ import annotations

import pytest

from custom_components.mcp_gateway import services
from custom_components.mcp_gateway.backends import BACKENDS as KINDS
from custom_components.mcp_gateway.backends.registry import BACKENDS, backend, runtime_class
from custom_components.mcp_gateway.config_flow import McpGatewayConfigFlow


def test_every_row_is_wired() -> None:
    """Kinds match, each runtime says its kind, each flow mixin is a base of the flow class."""
    assert tuple(row.kind for row in BACKENDS) == KINDS
    for row in BACKENDS:
        assert row.runtime.kind == row.kind
        assert runtime_class(row.kind) is row.runtime
        assert issubclass(McpGatewayConfigFlow, row.flow_mixin)
        assert backend(row.kind) is row


def test_unknown_kind_is_refused() -> None:
    """A kind no row names is an error, not a silent default."""
    with pytest.raises(ValueError, match="unknown backend 'zigbee'"):
        backend("zigbee")


def test_actions_come_from_the_registry() -> None:
    """services.py registers exactly the registry's actions (no list of its own)."""
    assert services.BACKENDS is BACKENDS
    names = [action.name for row in BACKENDS for action in row.actions]
    assert len(names) == len(set(names)) > 0
