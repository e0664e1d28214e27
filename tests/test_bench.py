"""The benchmarks stay runnable: each module imports, and each that can run in seconds runs at
a tiny size and prints its result lines (the figures are not judged here, only produced).

Not run here: `bench.gateway` and `bench.ai_tasks` (they install core `mcp_server`'s own pins
into a venv of their own first), `bench.attack` (a real Home Assistant with the frontend, a
minute's pause between attacks) and `bench.freshness` (its figures are the real poll intervals
and alarms due at a full minute). `bench.floor` runs inside `bench.scale`'s section 3 only.
"""

from __future__ import annotations

import importlib
from pathlib import Path
import re
import subprocess
import sys

import pytest

REPO = Path(__file__).resolve().parent.parent
MODULES = sorted(
    f"bench.{path.stem}" if path.suffix == ".py" else f"bench.{path.name}"
    for path in (REPO / "bench").iterdir()
    if (path.suffix == ".py" and path.stem != "__init__") or (path / "__init__.py").exists()
)

# (arguments, lines the output must hold): the sizes are the smallest that still measure
# every case (the Homecast home needs 10 lights for its coalescing case).
RUNS = {
    "mcp_client": (["20"], [r"ratio \(ours / bare\)\s+\d+\.\d+"]),
    "homecast": (
        ["--homes", "1", "--per-home", "60", "--polls", "2"],
        [r"setup: \d+ ms to \d+ entities", r"10 simultaneous HA actions -> \d+ set_state"],
    ),
    "robine_wake": (
        ["1", "--interval", "1", "--scheduled", "0"],
        [r"requests/min: \d+\.\d", r"rung on demand: n 1, p50 \d+"],
    ),
    "hubitat": (
        ["--cycles", "2", "--repeats", "1", "--sizes", "10", "40"],
        [r"bytes per cycle .* \d+\.\d\d$", r"20 lights .* ratio \d+\.\d\d", r"40 devices: "],
    ),
    "gateway_steps": (
        ["--calls", "20", "--warmup", "5", "--devices", "20"],
        [r"speaks 2026-07-28", r"gateway .* bare relay .*: \d+\.\d\dx", r"MCP server layer +\d"],
    ),
    "gateway_steps --legacy-hub": (
        ["--calls", "20", "--warmup", "5", "--devices", "20", "--legacy-hub"],
        [r"speaks 2025-06-18", r"gateway .* bare relay .*: \d+\.\d\dx"],
    ),
    "scale": (
        ["--sections", "2"],
        [r"\| tools/list, .* \| [\d,]+ → [\d,]+ bytes; \d+ backend tools reachable, 0 not"],
    ),
}


def test_every_benchmark_is_listed() -> None:
    """A new benchmark is either run here or named in the module's docstring as not run."""
    assert MODULES, "no benchmarks found"
    not_run = {"gateway", "ai_tasks", "attack", "freshness", "floor", "relay", "llm_door"}
    ran = {name.split()[0] for name in RUNS}
    assert {name.removeprefix("bench.") for name in MODULES} == ran | not_run


@pytest.mark.parametrize("module", MODULES)
def test_imports(module: str) -> None:
    assert importlib.import_module(module).__doc__


@pytest.mark.parametrize("case", sorted(RUNS))
def test_runs_tiny(case: str) -> None:
    arguments, wanted = RUNS[case]
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{case.split()[0]}", *arguments],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for pattern in wanted:
        assert re.search(pattern, done.stdout, re.MULTILINE), (pattern, done.stdout)
