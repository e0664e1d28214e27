"""The GitHub workflows run what the ecosystem runs on every push and pull request: HACS's
validation (category integration), hassfest, and the project's own checks on both HA targets.
Their syntax is actionlint's to check (scripts/lint-workflows, in .ci/run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = REPO / ".github" / "workflows"


def _load(name: str) -> dict[Any, Any]:
    workflow: dict[Any, Any] = yaml.safe_load((WORKFLOWS / name).read_text())
    return workflow


def _steps(workflow: dict[Any, Any]) -> list[dict[str, Any]]:
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def test_every_workflow_runs_on_push_and_pull_request() -> None:
    names = sorted(path.name for path in WORKFLOWS.glob("*.yml"))
    assert names == ["tests.yml", "validate.yml"]
    for name in names:
        triggers = _load(name)[True]  # YAML 1.1 reads the key `on` as true
        assert {"push", "pull_request"} <= set(triggers), name
        for step in _steps(_load(name)):
            if "uses" in step:
                assert "@" in step["uses"], step  # every action at a named version


def test_hacs_and_hassfest_validate() -> None:
    steps = _steps(_load("validate.yml"))
    hacs = [s for s in steps if s.get("uses", "").startswith("hacs/action@")]
    assert [s["with"]["category"] for s in hacs] == ["integration"]
    assert any(s.get("uses", "").startswith("home-assistant/actions/hassfest@") for s in steps)


def test_the_projects_checks_run_on_both_targets() -> None:
    jobs = _load("tests.yml")["jobs"]
    runs = {
        name: [step.get("run", "") for step in job["steps"]]
        + [str(step.get("with", {}).get("python-version", "")) for step in job["steps"]]
        for name, job in jobs.items()
    }
    assert any(r.startswith("scripts/test -") or r == "scripts/test" for r in runs["minimum"])
    assert "scripts/test-clock-ahead" in runs["minimum"]
    assert "3.13" in runs["minimum"]
    assert any(r.startswith("scripts/test --ha current") for r in runs["current"])
    assert "3.14" in runs["current"]


def test_ci_lints_the_workflows() -> None:
    assert "scripts/lint-workflows" in (REPO / ".ci" / "run").read_text()
