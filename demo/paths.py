"""Where a demo keeps its state: `.demo` for the minimum Home Assistant target, another folder
(`MCP_GATEWAY_DEMO_DIR`, `.demo-current` from `scripts/demo --ha current`) for a newer release,
whose storage migrations the older one cannot read."""

from __future__ import annotations

import os
from pathlib import Path

from .ha import REPO

DEMO_DIR = REPO / os.environ.get("MCP_GATEWAY_DEMO_DIR", ".demo")


def shown(path: Path) -> str:
    """A demo path as the user should type it: relative to the repository."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
