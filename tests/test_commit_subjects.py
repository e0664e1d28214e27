"""Commit subjects fit git's one-line views: at most 72 characters, the why in the body.

Older history is as it was written; the rule holds from the day it was adopted. A checkout
without git history (an unpacked archive) has nothing to check.
"""

from __future__ import annotations

from pathlib import Path
import shutil
import subprocess

REPO = Path(__file__).resolve().parent.parent
ADOPTED = "2026-12-02T19:00:00Z"
LIMIT = 72


def _subjects() -> list[str]:
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        return []
    log = subprocess.run(
        [git, "log", f"--since={ADOPTED}", "--format=%h %s"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return log.stdout.splitlines()


def test_commit_subjects_fit_on_a_line() -> None:
    """Every subject since the rule was adopted is at most 72 characters."""
    too_long = [line for line in _subjects() if len(line.split(" ", 1)[1]) > LIMIT]
    assert too_long == []


def test_the_check_reads_the_history() -> None:
    """In a git checkout the check sees the commits it judges (so it can fail)."""
    if (REPO / ".git").exists() and shutil.which("git"):
        assert _subjects(), "no commit since the rule was adopted: the check reads nothing"
