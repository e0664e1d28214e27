"""docs/ARCHITECTURE.md against the code: the modules, hooks and paths it names exist, and it
names every one of them (a reader adds a backend from that page alone)."""

from __future__ import annotations

import inspect
from pathlib import Path
import re

from custom_components import mcp_gateway
from custom_components.mcp_gateway.framework.base import BackendRuntime

ROOT = Path(mcp_gateway.__file__).parent
REPO = ROOT.parent.parent
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text()


def _tree(doc: str) -> set[str]:
    """The files the layout block lists, as paths under the integration (`gateway/http/view.py`).

    Entries are indented two spaces per folder level; a deeper line that is no entry of the
    folder above it is a description's continuation.
    """
    block = doc.split("```", 2)[1]
    listed: set[str] = set()
    folders: list[str] = []
    for line in block.splitlines():
        match = re.match(r"^( +)([\w./<>-]+)", line)
        if match is None or len(match[1]) % 2 or len(match[1]) // 2 > len(folders) + 1:
            continue
        depth = len(match[1]) // 2
        if depth > len(folders) + 1 or (depth > 1 and len(folders) < depth - 1):
            continue
        del folders[depth - 1 :]
        name = match[2]
        if name.endswith("/"):
            folders.append(name)
        else:
            listed.add("".join(folders) + name)
    return listed


def _modules(folder: str) -> set[str]:
    return {str(path.relative_to(ROOT)) for path in (ROOT / folder).glob("*.py")}


def _platform_modules() -> set[str]:
    """The generic platform modules, described by `<platform>.py` and the descriptions table."""
    return {path.name for path in ROOT.glob("*.py") if "\nPARALLEL_UPDATES" in path.read_text()}


def test_the_layout_lists_every_module() -> None:
    """Every module has its line, but those described as a group: each backend's own package
    (`<kind>/`), `platforms/` and the root's `<platform>.py` (the descriptions table), and the
    subpackages' `__init__.py` (a docstring each)."""
    described_as_group = {path.parent for path in ROOT.glob("backends/*/__init__.py")}
    described_as_group.add(ROOT / "platforms")
    with_setup = {ROOT, ROOT / "gateway"}  # their __init__.py does work
    expected = {
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if path.parent not in described_as_group
        and (path.name != "__init__.py" or path.parent in with_setup)
    } - _platform_modules()
    assert expected - _tree(DOC) == set()


def test_the_layout_names_only_what_exists() -> None:
    """No line for a module that was renamed or split."""
    listed = {name for name in _tree(DOC) if name.endswith(".py") and "<" not in name}
    assert {name for name in listed if not (ROOT / name).is_file()} == set()


def test_the_parser_reads_the_layout() -> None:
    """The check above sees folders, their files, and skips descriptions."""
    assert _tree(
        "```\nx/\n  a.py        does a\n                     still a.py\n"
        "  gateway/    the gateway\n    b.py      does b\n    http/     doors\n"
        "      v.py      a view\n                     still v.py\n  c.py\n```"
    ) == {"a.py", "gateway/b.py", "gateway/http/v.py", "c.py"}


def test_every_backend_hook_is_documented() -> None:
    """Each public method and attribute of BackendRuntime is named in the Backends section."""
    section = DOC.split("## Backends (`framework/base.py`)", 1)[1].split("\n## ", 1)[0]
    hooks = {
        name
        for name, _ in inspect.getmembers(BackendRuntime)
        if not name.startswith("_") and name not in {"kind", "platforms"}
    }
    attributes = set(inspect.get_annotations(BackendRuntime)) | {"hass", "entry", "client"}
    assert hooks > {"async_call_tool", "lists_devices", "filter_listing"}
    missing = {name for name in hooks | attributes if f"`{name}" not in section}
    assert missing == set()


def test_named_paths_exist() -> None:
    """Every file path the page names in backticks is in the repository (examples aside)."""
    paths = set(re.findall(r"`([\w./-]+/[\w.-]+\.(?:py|json|yaml|md))`", DOC))
    assert "framework/base.py" in paths
    missing = {
        path
        for path in paths
        if "acme" not in path
        and not any((base / path).exists() for base in (ROOT, REPO, ROOT / "backends"))
    }
    assert missing == set()
