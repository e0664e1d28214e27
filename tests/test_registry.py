"""The backend registry: every row reaches setup, the flow, the options and the actions."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from homeassistant.core import HomeAssistant
import pytest

from custom_components.mcp_gateway import services
from custom_components.mcp_gateway.backends import BACKENDS as KINDS
from custom_components.mcp_gateway.config_flow import McpGatewayConfigFlow
from custom_components.mcp_gateway.core.const import DOMAIN
from custom_components.mcp_gateway.registry import BACKENDS, backend, runtime_class

ROOT = Path(services.__file__).parent
STRINGS = json.loads((ROOT / "strings.json").read_text())


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


async def test_menu_comes_from_the_registry(hass: HomeAssistant) -> None:
    """The "add a backend" menu is each row's kind and own steps, then the gateway settings."""
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": "user"})
    steps = [step for row in BACKENDS for step in (row.kind, *row.menu_steps)]
    assert result["menu_options"] == [*steps, "gateway"]
    assert "homecast_community" in backend("homecast").menu_steps
    texts = STRINGS["config"]["step"]["user"]["menu_options"]
    for step in result["menu_options"]:
        assert step in texts
        assert callable(getattr(McpGatewayConfigFlow, f"async_step_{step}"))


# Modules outside a backend's own package that may import from it: the registry (the one
# table), the flow class (its mixins as static bases) and HA's application_credentials
# platform (Homecast's OAuth fallback, a module HA looks up by name).
_WIRING = {"registry.py", "config_flow.py", "application_credentials.py"}


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
    # The flow class takes only the mixins; the menu and the options come from the rows.
    assert all(
        names == [row.flow_mixin.__name__]
        for kind, names in outside["config_flow.py"]
        for row in BACKENDS
        if row.kind == kind
    ), outside["config_flow.py"]
