"""The simulators import nothing from the code they test or from the code that runs them.

A simulator that shared code with the integration would agree with it on a mistake, and no
test could see it (simulators/README.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import simulators

ROOT = Path(simulators.__file__).parent
FORBIDDEN = ("custom_components", "tests", "demo", "bench")


def _imported(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_simulators_import_no_project_code() -> None:
    """Every import of every simulator module, those for type checkers too."""
    offending = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted(ROOT.rglob("*.py"))
        for name in _imported(ast.parse(path.read_text(encoding="utf-8")))
        if name.split(".")[0] in FORBIDDEN
    ]
    assert offending == []


def test_the_check_sees_an_import() -> None:
    """The check above would fail on an import of the integration."""
    tree = ast.parse("from custom_components.mcp_gateway import const\nimport tests.conftest\n")
    assert _imported(tree) == ["custom_components.mcp_gateway", "tests.conftest"]
