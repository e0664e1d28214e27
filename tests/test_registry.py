"""The backend registry: every row reaches setup, the flow, the options and the actions."""

from __future__ import annotations

import ast
import importlib
import json
from pathlib import Path

from homeassistant.config_entries import HANDLERS
from homeassistant.const import CONF_SCAN_INTERVAL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway import config_flow, services
from custom_components.mcp_gateway.config_flow import McpGatewayConfigFlow, McpGatewayOptionsFlow
from custom_components.mcp_gateway.core.const import CONF_BACKEND, CONF_GATEWAY_EXPOSED, DOMAIN
from custom_components.mcp_gateway.core.settings import KIND_GATEWAY
from custom_components.mcp_gateway.framework.kinds import (
    is_backend_entry,
    register_kinds,
    registered_kinds,
)
from custom_components.mcp_gateway.registry import BACKENDS, backend, runtime_class

ROOT = Path(services.__file__).parent
STRINGS = json.loads((ROOT / "strings.json").read_text())
# Every package below backends/ is a backend (the framework's modules are files).
KINDS = {path.parent.name for path in (ROOT / "backends").glob("*/__init__.py")}


def test_every_row_is_wired() -> None:
    """Each backend package has a row, whose kind is its own const.KIND and its runtime's."""
    assert {row.kind for row in BACKENDS} == KINDS
    assert len(BACKENDS) == len(KINDS)
    for row in BACKENDS:
        const = importlib.import_module(f"custom_components.mcp_gateway.backends.{row.kind}.const")
        assert row.kind == const.KIND
        assert row.runtime.kind == row.kind
        assert runtime_class(row.kind) is row.runtime
        assert backend(row.kind) is row


def test_the_flow_class_has_every_rows_mixin() -> None:
    """The class HA runs for the domain takes each row's mixin as a base, after its own steps."""
    assert HANDLERS[DOMAIN] is McpGatewayConfigFlow
    assert McpGatewayConfigFlow.__name__ == "McpGatewayConfigFlow"
    assert McpGatewayConfigFlow.__module__ == config_flow.__name__
    for row in BACKENDS:
        assert issubclass(McpGatewayConfigFlow, row.flow_mixin)
        assert callable(getattr(McpGatewayConfigFlow, f"async_step_{row.kind}_reauth"))
        assert callable(getattr(McpGatewayConfigFlow, f"async_step_{row.kind}_reconfigure"))


def test_options_steps_come_from_the_registry() -> None:
    """Each row's kind is an options step with its own texts; no other name is a step."""
    flow = McpGatewayOptionsFlow()
    for row in BACKENDS:
        assert callable(getattr(flow, f"async_step_{row.kind}"))
        assert "scan_interval" in STRINGS["options"]["step"][row.kind]["data"]
    assert not hasattr(flow, "async_step_zigbee")
    assert not hasattr(flow, BACKENDS[0].kind)


@pytest.mark.parametrize("kind", sorted(KINDS))
async def test_each_kind_submits_its_own_options_form(hass: HomeAssistant, kind: str) -> None:
    """The form HA shows as step `kind` is stored through that step (an entry not loaded)."""
    entry = MockConfigEntry(domain=DOMAIN, data={CONF_BACKEND: kind})
    entry.add_to_hass(hass)
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == kind
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {CONF_GATEWAY_EXPOSED: False}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options[CONF_GATEWAY_EXPOSED] is False
    assert CONF_SCAN_INTERVAL in entry.options  # its own fields, at their defaults


def test_backend_entries_are_the_registered_kinds(hass: HomeAssistant) -> None:
    """The gateway tells backend entries by the registry's kinds: not its settings entry, nor
    an entry of a kind no row registers (made by another version, say)."""
    assert registered_kinds() == KINDS

    def entry(kind: str) -> MockConfigEntry:
        return MockConfigEntry(domain=DOMAIN, data={CONF_BACKEND: kind})

    assert all(is_backend_entry(entry(kind)) for kind in KINDS)
    assert not is_backend_entry(entry(KIND_GATEWAY))
    assert not is_backend_entry(entry("zigbee"))
    assert not is_backend_entry(MockConfigEntry(domain=DOMAIN, data={}))
    with pytest.raises(ValueError, match="the gateway's own entry"):
        register_kinds([*KINDS, KIND_GATEWAY])
    assert registered_kinds() == KINDS


def test_unknown_kind_is_refused() -> None:
    """A kind no row names is an error, not a silent default."""
    with pytest.raises(ValueError, match="unknown backend 'zigbee'"):
        backend("zigbee")


def test_actions_come_from_the_registry() -> None:
    """services.py registers exactly the registry's actions (no list of its own)."""
    assert services.BACKENDS is BACKENDS
    names = [action.name for row in BACKENDS for action in row.actions]
    assert len(names) == len(set(names)) > 0


async def test_menu_comes_from_the_registry(hass: HomeAssistant) -> None:
    """The "add a backend" menu is each row's kind and own steps, then the gateway settings."""
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": "user"})
    steps = [step for row in BACKENDS for step in (row.kind, *row.menu_steps)]
    assert result["menu_options"] == [*steps, "gateway"]
    texts = STRINGS["config"]["step"]["user"]["menu_options"]
    for step in result["menu_options"]:
        assert step in texts
        assert callable(getattr(McpGatewayConfigFlow, f"async_step_{step}"))


# Modules outside a backend's own package that may import from it: the registry (the one
# table) and HA's application_credentials platform (a backend's OAuth fallback, a module HA
# looks up by name).
_WIRING = {"registry.py", "application_credentials.py"}


def _backend_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(backend package, names) of each `from …backends.<kind>… import names` in `path`."""
    package = path.relative_to(ROOT).parts
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        # Resolve the relative import against the module's package.
        base = list(package[:-1])[: len(package) - node.level] if node.level else []
        parts = [*base, *node.module.split(".")]
        if node.level == 0:
            parts = parts[2:] if parts[:2] == ["custom_components", "mcp_gateway"] else []
        if len(parts) >= 2 and parts[0] == "backends" and parts[1] in KINDS:
            found.append((parts[1], [alias.name for alias in node.names]))
    return found


def test_only_the_wiring_modules_name_a_backend() -> None:
    """Anything else reads the registry, so a new backend edits no other module."""
    outside = {
        str(path.relative_to(ROOT)): imports
        for path in ROOT.rglob("*.py")
        if not (path.parent.name in KINDS and path.parent.parent.name == "backends")
        and (imports := _backend_imports(path))
    }
    assert set(outside) <= _WIRING, outside
    # The flow class, too, takes its mixins, menu and options from the rows.
    assert "config_flow.py" not in outside
