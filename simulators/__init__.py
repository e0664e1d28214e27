"""Faithful simulators of the three MCP backends (aiohttp apps, also runnable standalone).

They import nothing from custom_components/, so a bug shared by both sides of the wire cannot hide.
"""

from pathlib import Path

# Recorded backend answers the simulators replay (real shapes, anonymised).
DATA_DIR = Path(__file__).parent / "data"
