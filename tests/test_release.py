"""scripts/release: one command bumps the manifest, dates CHANGELOG.md's "Unreleased" section
and prints the tag to push; CHANGELOG.md itself stays in step with the manifest."""

from __future__ import annotations

from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
import json
from pathlib import Path
import re
import shutil
import subprocess
import sys
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "release"
MANIFEST = REPO / "custom_components" / "mcp_gateway" / "manifest.json"
SECTION = re.compile(r"^## (\d+\.\d+\.\d+) - (\d{4}-\d{2}-\d{2})$", re.M)


def _script() -> ModuleType:
    loader = SourceFileLoader("release", str(SCRIPT))
    spec = spec_from_loader("release", loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


def _checkout(tmp_path: Path, changelog: str) -> Path:
    """A copy of the files the script touches, with the script beside them."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(SCRIPT, tmp_path / "scripts" / "release")
    manifest = tmp_path / "custom_components" / "mcp_gateway" / "manifest.json"
    manifest.parent.mkdir(parents=True)
    shutil.copy(MANIFEST, manifest)
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    return tmp_path


def _release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, root / "scripts" / "release", *args],
        check=False,
        capture_output=True,
        text=True,
    )


def test_a_release_in_one_command(tmp_path: Path) -> None:
    # The real changelog, with something unreleased in it whatever was released last.
    head, rest = (REPO / "CHANGELOG.md").read_text().split("## Unreleased\n", 1)
    text = f"{head}## Unreleased\n\n### Fixed\n\n- A change a user notices.\n{rest}"
    root = _checkout(tmp_path, text)
    before = json.loads(MANIFEST.read_text())
    done = _release(root, "1.0.0", "--date", "2026-12-08")
    assert done.returncode == 0, done.stderr
    manifest = json.loads(
        (root / "custom_components" / "mcp_gateway" / "manifest.json").read_text()
    )
    assert manifest == {**before, "version": "1.0.0"}
    changelog = (root / "CHANGELOG.md").read_text()
    assert changelog.index("## Unreleased\n") < changelog.index("## 1.0.0 - 2026-12-08\n")
    # What was unreleased is now the release's, word for word.
    unreleased = text.split("## Unreleased\n", 1)[1]
    assert changelog.split("## 1.0.0 - 2026-12-08\n", 1)[1] == unreleased
    assert "git tag -a v1.0.0" in done.stdout
    assert "git push origin HEAD v1.0.0" in done.stdout


@pytest.mark.parametrize(
    ("args", "changelog", "says"),
    [
        (["0.0.9"], "## Unreleased\n\n- x\n", "not newer"),
        (["1.0"], "## Unreleased\n\n- x\n", "not X.Y.Z"),
        (["1.0.0"], "# Changelog\n", 'no "## Unreleased"'),
        (["1.0.0"], "## Unreleased\n\n## 0.9.0 - 2026-01-01\n- x\n", "says nothing"),
        (["1.0.0"], "## Unreleased\n\n- y\n\n## 1.0.0 - 2026-01-01\n- x\n", "already has"),
    ],
)
def test_what_stops_a_release_changes_nothing(
    tmp_path: Path, args: list[str], changelog: str, says: str
) -> None:
    root = _checkout(tmp_path, changelog)
    done = _release(root, *args)
    assert done.returncode != 0
    assert says in done.stderr
    assert (root / "CHANGELOG.md").read_text() == changelog
    assert (root / "custom_components" / "mcp_gateway" / "manifest.json").read_text() == (
        MANIFEST.read_text()
    )


def test_moving_keeps_older_releases_below() -> None:
    text = "# Changelog\n\n## Unreleased\n\n- new\n\n## 1.0.0 - 2026-01-01\n\n- old\n"
    moved = _script().move_unreleased(text, "1.1.0", "2026-02-01")
    assert moved == (
        "# Changelog\n\n## Unreleased\n\n## 1.1.0 - 2026-02-01\n\n- new\n\n"
        "## 1.0.0 - 2026-01-01\n\n- old\n"
    )


def test_the_changelog_is_in_step_with_the_manifest() -> None:
    """An "Unreleased" section first, releases newest first, the newest the manifest's."""
    changelog = (REPO / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (.+)$", changelog, re.M)
    assert headings[0] == "Unreleased"
    released = [tuple(map(int, v.split("."))) for v, _ in SECTION.findall(changelog)]
    assert released == sorted(released, reverse=True)
    assert len(headings) == 1 + len(released)
    version = tuple(map(int, json.loads(MANIFEST.read_text())["version"].split(".")))
    assert all(v <= version for v in released)
    if released:
        assert released[0] == version
