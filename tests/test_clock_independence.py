"""Tests do not hold a fixed calendar date against the wall clock.

A test that passes an ISO date or date-time literal (or `datetime(2026, …)`) into a call while
Home Assistant or a simulator runs on the real clock passes on the day it is written and fails
weeks later: a history window of last month is empty today. Such a test pins the clock first
(`freezer.move_to`, `freeze_time`, a simulator clock set with `sim_clock`/`clock.set`; in the
test or in a fixture it uses), takes its window relative to now, or says why its date does not
meet the clock with a `# fixed date: <why>` comment inside the test.

The scan is static and cheap; `scripts/test-clock-ahead` runs the time-sensitive tests a year
ahead as the second guard.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
import re

import pytest

TESTS = Path(__file__).parent
# Fixtures that run Home Assistant or a simulator on the wall clock.
LIVE = re.compile(r"^(hass|.*sim.*|aiohttp_client|.*gateway.*|.*entry.*)$")
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
# A date without a time is a moment only where it is passed as one (protocol versions look alike).
DATE_WORDS = re.compile(r"date|start|end|since|until|day|from|before|after|time|when|at$")
PINNING_CALLS = {"move_to", "freeze_time", "sim_clock", "client_on_clock"}
ALLOW = re.compile(r"#\s*fixed date:\s*\S")


@dataclass
class Module:
    """One test module's fixtures, constants and source lines."""

    path: Path
    tree: ast.Module
    lines: list[str]
    fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    constants: set[str] = field(default_factory=set)


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if ast.unparse(target).endswith("fixture"):
            return True
    return False


def _is_moment(node: ast.expr, key: str | None, constants: set[str]) -> bool:
    """Whether `node` is a fixed calendar moment (`key`: the keyword or dict key it is under)."""
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if DATETIME.match(node.value):
            return True
        return bool(DATE.match(node.value) and key and DATE_WORDS.search(key.lower()))
    if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in {"datetime", "date"}:
        first = node.args[0] if node.args else None
        return isinstance(first, ast.Constant) and isinstance(first.value, int)
    return False


def _moments(node: ast.AST, constants: set[str], key: str | None = None) -> list[ast.expr]:
    """The fixed moments anywhere within a call's argument `node`."""
    found: list[ast.expr] = []
    if isinstance(node, ast.expr) and _is_moment(node, key, constants):
        return [node]
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            name = k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else key
            found += _moments(v, constants, name)
        return found
    if isinstance(node, ast.Call):
        for arg in node.args:
            found += _moments(arg, constants, key)
        for keyword in node.keywords:
            found += _moments(keyword.value, constants, keyword.arg or key)
        return found
    for child in ast.iter_child_nodes(node):
        found += _moments(child, constants, key)
    return found


def _pins_clock(node: ast.AST) -> bool:
    """Whether a function (or its decorators) sets the clock to a fixed moment."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Call):
            continue
        name = ast.unparse(sub.func).split(".")
        if name[-1] in PINNING_CALLS:
            return True
        if name[-1] == "set" and len(name) > 1 and "clock" in name[-2]:
            return True
    return False


def _load(path: Path, cache: dict[Path, Module]) -> Module:
    if path not in cache:
        text = path.read_text()
        tree = ast.parse(text)
        module = Module(path, tree, text.splitlines())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_fixture(node):
                module.fixtures[node.name] = node
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name) and _is_moment(node.value, target.id, set()):
                    module.constants.add(target.id)
        cache[path] = module
    return cache[path]


def _visible_fixtures(
    module: Module, root: Path, cache: dict[Path, Module]
) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The fixtures a test module sees: conftest.py files from the root down, then its own."""
    fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    folders = [module.path.parent, *module.path.parent.parents]
    for folder in reversed(folders[: folders.index(root) + 1]):
        conftest = folder / "conftest.py"
        if conftest.exists():
            fixtures |= _load(conftest, cache).fixtures
    return fixtures | module.fixtures


def _closure(
    names: list[str], fixtures: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
) -> tuple[set[str], bool]:
    """Every fixture `names` pull in, and whether one of them pins the clock."""
    seen: set[str] = set()
    pinned = False
    todo = list(names) + [
        name
        for name, node in fixtures.items()
        if any("autouse=True" in ast.unparse(d) for d in node.decorator_list)
    ]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        node = fixtures.get(name)
        if node is not None:
            pinned = pinned or _pins_clock(node)
            todo += [arg.arg for arg in node.args.args]
    return seen, pinned


def _usefixtures(node: ast.AST) -> list[str]:
    names = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and ast.unparse(sub.func).endswith("usefixtures"):
            names += [a.value for a in sub.args if isinstance(a, ast.Constant)]
    return names


def violations(
    path: Path, root: Path = TESTS, cache: dict[Path, Module] | None = None
) -> list[str]:
    """The tests in `path` (below `root`) holding a fixed date against the live clock."""
    cache = {} if cache is None else cache
    module = _load(path, cache)
    fixtures = _visible_fixtures(module, root, cache)
    marks = [n for n in module.tree.body if isinstance(n, ast.Assign)]
    module_fixtures = _usefixtures(ast.Module(body=list(marks), type_ignores=[]))
    module_pins = any(_pins_clock(n) for n in marks)
    found = []
    for test in ast.walk(module.tree):
        if not isinstance(test, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not test.name.startswith("test_"):
            continue
        start = min([test.lineno, *(d.lineno for d in test.decorator_list)])
        source = module.lines[start - 1 : test.end_lineno]
        if any(ALLOW.search(line) for line in source):
            continue
        names = [a.arg for a in (*test.args.args, *test.args.kwonlyargs)]
        names += module_fixtures
        names += [n for d in test.decorator_list for n in _usefixtures(d)]
        closure, pinned = _closure(names, fixtures)
        if pinned or module_pins or _pins_clock(test) or not any(LIVE.match(n) for n in closure):
            continue
        constants = module.constants | {
            t.id
            for sub in ast.walk(test)
            if isinstance(sub, ast.Assign)
            for t in sub.targets
            if isinstance(t, ast.Name) and _is_moment(sub.value, t.id, module.constants)
        }
        lines = sorted(
            {
                moment.lineno
                for sub in ast.walk(test)
                if isinstance(sub, ast.Call)
                for moment in _moments(sub, constants)
                if not _inside_assert(test, moment)
            }
        )
        found += [f"{path.relative_to(root.parent)}::{test.name}:{line}" for line in lines]
    return found


def _inside_assert(test: ast.AST, node: ast.AST) -> bool:
    """Whether `node` sits in an assert (an expected answer, not a moment passed in)."""
    return any(
        isinstance(sub, ast.Assert) and any(n is node for n in ast.walk(sub))
        for sub in ast.walk(test)
    )


def test_no_test_holds_a_fixed_date_against_the_wall_clock() -> None:
    cache: dict[Path, Module] = {}
    found = [v for path in sorted(TESTS.rglob("test_*.py")) for v in violations(path, TESTS, cache)]
    assert not found, "fixed dates against the wall clock (pin the clock, see module doc):\n" + (
        "\n".join(found)
    )


# The history test as it was when it began to fail: a November window, the simulator's
# history a week back from the real now.
NOVEMBER_WINDOW = """
async def test_query_history(hass, sim, entry):
    response = await _act(
        hass,
        entry,
        "query_history",
        home=home.name,
        start="2026-11-01T00:00:00+00:00",
        end="2026-11-30T00:00:00+00:00",
    )
    assert response["series"]
"""


def _scan(tmp_path: Path, source: str, conftest: str = "") -> list[str]:
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "conftest.py").write_text(conftest)
    (folder / "test_sample.py").write_text(source)
    return violations(folder / "test_sample.py", folder)


def test_a_fixed_history_window_on_the_live_clock_is_found(tmp_path: Path) -> None:
    assert _scan(tmp_path, NOVEMBER_WINDOW) == [
        "tests/test_sample.py::test_query_history:8",
        "tests/test_sample.py::test_query_history:9",
    ]


@pytest.mark.parametrize(
    ("source", "conftest"),
    [
        # Pinned in the test.
        (NOVEMBER_WINDOW.replace("entry):", "entry, freezer):\n    freezer.move_to(NOW)"), ""),
        # Pinned by a fixture the test uses, through another fixture.
        (
            NOVEMBER_WINDOW.replace("entry)", "entry, frozen)"),
            "import pytest\n@pytest.fixture\ndef frozen(moved):\n    return moved\n"
            "@pytest.fixture\ndef moved(freezer):\n    freezer.move_to(NOW)\n",
        ),
        # A simulator's clock set.
        (NOVEMBER_WINDOW.replace("entry):", "entry):\n    sim.clock.set(NOW)"), ""),
        # Said to be on purpose.
        (NOVEMBER_WINDOW.replace("entry):", "entry):  # fixed date: parsing only"), ""),
        # Nothing on the live clock.
        (NOVEMBER_WINDOW.replace("hass, sim, entry", "parser"), ""),
        # An expected answer is no window.
        ('def test_x(hass):\n    assert f() == "2026-11-01T00:00:00+00:00"\n', ""),
        # A date-only string not passed as a moment (a protocol version).
        ('def test_x(hass):\n    f(hass, version="2025-06-18")\n', ""),
    ],
)
def test_pinned_relative_or_declared_windows_pass(
    tmp_path: Path, source: str, conftest: str
) -> None:
    assert _scan(tmp_path, source, conftest) == []


@pytest.mark.parametrize(
    "source",
    [
        # A module constant, a local, a datetime call and a date under a date-ish key.
        'START = "2026-11-01T00:00"\ndef test_x(hass):\n    f(start=START)\n',
        'def test_x(sim):\n    start = "2026-11-01 00:00"\n    f({"start": start})\n',
        "def test_x(hass):\n    f(since=datetime(2026, 11, 1))\n",
        'def test_x(hass):\n    f({"date": "2026-11-01"})\n',
    ],
)
def test_fixed_moments_in_every_spelling_are_found(tmp_path: Path, source: str) -> None:
    assert _scan(tmp_path, source)
