"""The integration's packages import downward only (docs/ARCHITECTURE.md, the layout).

Every import counts, those for type checkers too: a package that needs another's types
depends on it as much as one that calls it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from custom_components import mcp_gateway

ROOT = Path(mcp_gateway.__file__).parent
PACKAGE = "custom_components.mcp_gateway"

# Lower rank imports higher rank; a backend's own package sits above the framework it uses.
RANKS = {
    "": 0.0,
    "gateway": 1.0,
    "gateway.http": 1.1,
    "gateway.tools": 1.2,
    "gateway.calls": 1.25,
    "gateway.approval": 1.3,
    "gateway.finding": 1.4,
    "gateway.catalog": 1.5,
    "gateway.catalog.schemas": 1.6,
    "backends.<kind>": 2.0,
    # The kinds' package itself: a docstring, importing nothing.
    "backends": 2.1,
    "permissions": 3.0,
    "platforms": 4.0,
    "framework": 5.0,
    "core": 6.0,
    "mcp": 7.0,
}


def _package(module: str) -> str:
    """The layer a module (dotted, below the integration) belongs to."""
    parts = module.split(".")[:-1]
    if len(parts) == 2 and parts[0] == "backends":
        return "backends.<kind>"
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    modules = {}
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT).with_suffix("")
        name = ".".join(relative.parts)
        if path.name == "__init__.py":
            name = ".".join((*relative.parts[:-1], "__init__"))
        modules[name] = path
    return modules


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The integration's modules that `name` imports."""
    here = name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = here[: len(here) - node.level + 1] + ([node.module] if node.module else [])
        elif node.module and node.module.startswith(PACKAGE):
            base = node.module.removeprefix(PACKAGE).lstrip(".").split(".")
        else:
            continue
        for alias in node.names:
            for candidate in (
                ".".join([*base, alias.name]),
                ".".join([*base, alias.name, "__init__"]),
                ".".join(base),
                ".".join([*base, "__init__"]),
            ):
                if candidate.strip(".") in known:
                    found.add(candidate.strip("."))
                    break
    return found


def _edges() -> set[tuple[str, str, str]]:
    modules = _modules()
    edges = set()
    for name, path in modules.items():
        for target in _imports(name, path, set(modules)):
            source_package, target_package = _package(name), _package(target)
            if source_package != target_package and not (
                source_package == target_package == "backends.<kind>"
            ):
                edges.add((source_package, target_package, f"{name} → {target}"))
    return edges


def test_every_package_has_a_layer() -> None:
    """A new package is placed in the order before anything may import it."""
    assert {_package(name) for name in _modules()} <= set(RANKS)


def test_imports_go_down_the_layers() -> None:
    """No import from a lower layer to a higher one (which would make a two-way pair)."""
    upward = sorted(why for source, target, why in _edges() if RANKS[source] >= RANKS[target])
    assert upward == []


def test_backends_do_not_import_each_other() -> None:
    """A backend's package reaches others only through the framework."""
    modules = _modules()
    crossing = sorted(
        f"{name} → {target}"
        for name, path in modules.items()
        if _package(name) == "backends.<kind>"
        for target in _imports(name, path, set(modules))
        if _package(target) == "backends.<kind>" and target.split(".")[1] != name.split(".")[1]
    )
    assert crossing == []


def test_the_check_sees_an_upward_import() -> None:
    """The parser finds relative imports at any depth, so the checks above can fail."""
    modules = _modules()
    view = _imports("gateway.http.view", modules["gateway.http.view"], set(modules))
    assert "core.const" in view
    assert "gateway.approval.phones" in view
    assert RANKS[_package("gateway.http.view")] < RANKS[_package("core.const")]
