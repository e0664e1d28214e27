"""docs/ARCHITECTURE.md's walk-through of a new backend, against the repository.

"Adding a backend" lists every file a made-up fourth backend, "acme", touches. The list stays
short. The product depends on a backend only through the registry (what it imports), and the
gateway and framework spell none of a backend's tool or argument names (what its code says);
outside the product, each file that names a kind is one of its own places, one of the list's
shared files, or a file that names backends on purpose (below): so the list is the whole
footprint of a backend, and a new one edits no shared test.
"""

from __future__ import annotations

import ast
from pathlib import Path
import re
import shutil
import subprocess
from typing import Any

from homeassistant.core import HomeAssistant

from custom_components.mcp_gateway.gateway.tools.ha_tools import HA_TOOLS
from tests.all_backends import setup_entries, start_simulators
from tests.backend_sims import registered_kinds, simulated_backend
from tests.simulation import LoopbackServers

REPO = Path(__file__).parent.parent
DOC = (REPO / "docs" / "ARCHITECTURE.md").read_text()
MAX_FILES = 15

# Files that name backends on purpose: what users and developers read about each backend,
# and the demo and bench, which show and measure the three together.
ON_PURPOSE = (
    "README.md",
    "info.md",
    "CHANGELOG.md",
    # info.md's facts held to the README's, the backends' names among them.
    "tests/test_info.py",
    "docs/*.md",
    "demo/*",
    "scripts/demo",
    "bench/*",
    # The run of the tests of history, times and clocks under a clock a year ahead, by file.
    "scripts/test-clock-ahead",
    # The simulators' guide, and the recorded two-home capture the Homecast simulator serves.
    "simulators/README.md",
    "simulators/data/*",
    # Homecast's alone: HA's application-credentials platform must sit at the root.
    "custom_components/mcp_gateway/application_credentials.py",
    # This check's own lists.
    "tests/test_new_backend.py",
)

# Shared tests that are not yet where they belong: each names a backend it should not. The list
# only shrinks; an entry that no longer names any backend fails below, so it is removed when
# fixed. (The product's own code is held by what it imports and spells, not by its prose: see
# the checks at the end.)
NOT_YET_MOVED = (
    # Tests of the gateway that use one backend's simulator, kind or tool names as their
    # example (the fake backend of tests/gateway_tools/ must be a registered kind).
    "tests/framework/test_coordinator.py",
    "tests/framework/test_entity_limit.py",
    # The approval tests' shared hub (gateway_protocol/, gateway_tools/, security/).
    "tests/conftest.py",
    "tests/gateway_protocol/test_approval.py",
    "tests/gateway_protocol/test_approval_in_client.py",
    "tests/gateway_protocol/test_e2e_hubitat.py",
    "tests/gateway_protocol/test_settings.py",
    "tests/gateway_tools/conftest.py",
    "tests/gateway_tools/test_fuzz_tools.py",
    "tests/gateway_tools/test_automations.py",
    "tests/gateway_tools/test_handler.py",
    "tests/gateway_tools/test_llm_api.py",
    "tests/gateway_tools/test_permission_matrix.py",
    "tests/gateway_tools/test_recorder.py",
    "tests/gateway_tools/test_schema_once.py",
    "tests/gateway_tools/test_sdk_end_to_end.py",
    "tests/gateway_tools/test_search.py",
    "tests/gateway_tools/test_tools.py",
    "tests/gateway_tools/test_truthful.py",
    "tests/gateway_tools/test_wording.py",
    "tests/mcp_client/test_negotiation.py",
    "tests/mcp_client/test_transport.py",
    "tests/peers/gateway_peers.py",
    # Tests of the gateway that go through each backend's own tools by hand (their tier
    # tables belong in tests/<kind>/, as the security matrix's do).
    "tests/gateway_tools/test_real_backends.py",
)


# Suites that model a particular home on purpose, with each backend's part in it: the demo's
# house (everyday/, the demo's and the bench's tests), one clock shared by three backends
# (one_home/), and the security suite's scenarios that single out one backend (its matrix and
# answer caps collect each kind's own rows from tests/<kind>/security_cases.py). A new backend
# need not edit them; it is in the security home, the matrix and the end-to-end tests anyway.
PARTICULAR_HOMES = (
    "tests/everyday/*",
    "tests/one_home/*",
    "tests/security/*",
    "tests/test_bench.py",
    "tests/test_demo.py",
    "tests/test_demo_home.py",
)


def _listed(label: str) -> list[str]:
    """The paths of a fenced block labelled `label` in the doc."""
    match = re.search(rf"```{re.escape(label)}\n(.*?)```", DOC, re.S)
    assert match is not None, f"docs/ARCHITECTURE.md has no ```{label} block"
    return [line.strip() for line in match[1].splitlines() if line.strip()]


def _tracked_naming(word: str) -> set[str]:
    """The tracked files whose text names `word` (any case)."""
    if shutil.which("git") and (REPO / ".git").exists():
        found = subprocess.run(
            ["git", "grep", "-Iil", "--fixed-strings", word],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert found.returncode in (0, 1), found.stderr
        return set(found.stdout.splitlines())
    # Without git: every file but hidden ones (.git, .venv, caches) and build output.
    skip = {"__pycache__", "node_modules", "htmlcov", "build", "dist"}
    naming: set[str] = set()
    for path in REPO.rglob("*"):
        parts = path.relative_to(REPO).parts
        if not path.is_file() or skip & set(parts) or any(p.startswith(".") for p in parts):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        if word.casefold() in text.casefold():
            naming.add(str(path.relative_to(REPO)))
    return naming


def _own(kind: str, path: str) -> bool:
    """One of a backend's own places."""
    return (
        path.startswith(
            (
                f"custom_components/mcp_gateway/backends/{kind}/",
                f"tests/{kind}/",
                f"simulators/{kind}",
                f"tests/simulators_conformance/test_{kind}",
            )
        )
        or path == "docs/ARCHITECTURE.md"
    )


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(Path(path).match(p) if "*" in p else path == p for p in patterns) or any(
        p.endswith("/*") and path.startswith(p[:-1]) for p in patterns
    )


def test_a_new_backend_touches_at_most_15_files() -> None:
    """The walk-through's list is short, names only acme's places and existing shared files."""
    files = _listed("new-backend-files")
    assert len(files) <= MAX_FILES, files
    assert len(set(files)) == len(files), files
    for path in [*files, *_listed("new-backend-files-if-needed")]:
        if "acme" not in path:
            assert (REPO / path).is_file(), f"{path}: listed but not in the repository"


def test_every_registered_kind_has_a_simulated_backend() -> None:
    """The shared tests find each registered kind's simulator and entries (tests/<kind>/sim.py)."""
    for kind in registered_kinds():
        backend = simulated_backend(kind)
        for part in (backend.start, backend.entry, backend.setup):
            assert callable(part), kind


def test_only_the_listed_files_name_a_backend() -> None:
    """Outside the product, each registered kind is named only in its own places, the list's
    shared files and the files allowed above (the product's modules are checked by their
    imports and code below, so a comment naming a backend as an example is no dependency)."""
    listed = [*_listed("new-backend-files"), *_listed("new-backend-files-if-needed")]
    strays: dict[str, list[str]] = {}
    for kind in registered_kinds():
        shared = {path.replace("acme", kind) for path in listed}
        # The kind as code and prose spell it: robine_wake, "Robine Wake", RobineWake.
        words = {kind, kind.replace("_", " "), kind.replace("_", "")}
        naming = set().union(*(_tracked_naming(word) for word in words))
        strays[kind] = sorted(
            path
            for path in naming
            if not path.startswith("custom_components/")
            and not _own(kind, path)
            and path not in shared
            and not _matches(path, ON_PURPOSE)
            and not _matches(path, PARTICULAR_HOMES)
            and not _matches(path, NOT_YET_MOVED)
        )
    assert strays == {kind: [] for kind in registered_kinds()}


def test_the_not_yet_moved_list_only_shrinks() -> None:
    """Every entry of NOT_YET_MOVED and PARTICULAR_HOMES still names a backend (a fixed file
    leaves the list)."""
    naming: set[str] = set()
    for kind in registered_kinds():
        for word in {kind, kind.replace("_", " "), kind.replace("_", "")}:
            naming |= _tracked_naming(word)
    for pattern in (*NOT_YET_MOVED, *PARTICULAR_HOMES):
        assert any(_matches(path, (pattern,)) for path in naming), pattern


# Product modules outside a backend's package that depend on a backend: the composition
# (registry.py) and HA's application-credentials platform, which must sit at the root and is
# Homecast's alone.
COMPOSITION = frozenset({"registry", "application_credentials"})


def _product_imports() -> dict[str, set[str]]:
    """Each product module (dotted, below the integration) and the product modules it imports."""
    from tests import test_layers  # the layer test's import parser, one reading of imports

    modules = test_layers._modules()
    return {name: test_layers._imports(name, path, set(modules)) for name, path in modules.items()}


def _backend_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "backends" else None


def test_only_the_composition_depends_on_a_backend() -> None:
    """No product module but the registry (and Homecast's root-level credentials platform)
    imports a backend's package: the gateway, framework, permissions and platforms work on
    whatever kinds the registry holds."""
    dependants = {
        name.removesuffix(".__init__")
        for name, imported in _product_imports().items()
        if _backend_of(name) is None and any(_backend_of(target) for target in imported)
    }
    assert dependants == COMPOSITION


def test_the_dependency_check_sees_a_backend_import() -> None:
    """The parser behind the check above finds the registry's imports of each kind."""
    registry = _product_imports()["registry"]
    assert {_backend_of(target) for target in registry} >= set(registered_kinds())


def _vocabulary(tools: list[dict[str, Any]]) -> set[str]:
    """A backend's tool names and the argument names of their schemas, at any depth, that are
    its own spelling (`deviceId`, `filter_by_home`): a plain word such as "mode" or "enabled"
    is everyone's."""
    words: set[str] = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            properties = schema.get("properties")
            if isinstance(properties, dict):
                words.update(properties)
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for value in schema:
                walk(value)

    for tool in tools:
        walk(tool.get("inputSchema"))
    spelled = {word for word in words if re.search(r"[A-Z_]", word)}
    return spelled | {str(tool["name"]) for tool in tools}


def _spelled_in_code(folder: Path) -> dict[str, set[str]]:
    """Every string constant (docstrings aside) and identifier in a folder's modules."""
    found: dict[str, set[str]] = {}
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) not in docstrings:
                    # The text itself, and each word in it: a sentence for the model that
                    # names a backend's tool names it as much as a constant does.
                    for word in {node.value, *re.findall(r"[A-Za-z_][A-Za-z0-9_]*", node.value)}:
                        found.setdefault(word, set()).add(str(path.relative_to(REPO)))
            elif isinstance(node, ast.Name):
                found.setdefault(node.id, set()).add(str(path.relative_to(REPO)))
            elif isinstance(node, ast.Attribute):
                found.setdefault(node.attr, set()).add(str(path.relative_to(REPO)))
    return found


async def test_shared_code_names_no_backend_tool_or_argument(
    hass: HomeAssistant, loopback_servers: LoopbackServers, socket_enabled: None
) -> None:
    """What a backend's tools are called and take is the backend's business: the gateway and
    the framework name none of it (what a call changes, and whether it is sensitive, come from
    the backend's runtime). The gateway's own tools' words are its own, even where a backend
    uses the same word (Homecast has a `get_state` too)."""
    entries = await setup_entries(hass, await start_simulators(loopback_servers))
    backend_words: dict[str, set[str]] = {}
    for kind, entry in entries.items():
        tools = await entry.runtime_data.async_list_tools()
        assert tools, kind
        backend_words[kind] = _vocabulary(tools)
        # What the guide names for the backend (its tools that repeat the core answers)
        # comes from the backend, and is its real tools.
        names = {tool["name"] for tool in tools}
        assert entry.runtime_data.repeats_core <= names, kind
    own = _vocabulary([{"name": tool.name, "inputSchema": tool.input_schema} for tool in HA_TOOLS])
    # Home Assistant's own words that a backend happens to spell the same way.
    own |= {"color_temp"}  # a light's attribute in mireds (releases before 2026.1)
    shared = REPO / "custom_components" / "mcp_gateway"
    strays = {}
    for folder in ("gateway", "framework", "permissions", "core", "mcp"):
        spelled = _spelled_in_code(shared / folder)
        for kind, words in backend_words.items():
            for word in sorted(words - own):
                if word in spelled:
                    strays[f"{kind}:{word}"] = sorted(spelled[word])
    assert strays == {}
    # The scan and the vocabulary meet where they should: each backend spells its own words.
    for kind, words in backend_words.items():
        assert words & set(_spelled_in_code(shared / "backends" / kind)), kind
