"""Every option of a select field in services.yaml reads as words in the UI, not as its value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

INTEGRATION = Path(__file__).parent.parent / "custom_components" / "mcp_gateway"


def _selects() -> list[tuple[str, dict[str, Any]]]:
    services = yaml.safe_load((INTEGRATION / "services.yaml").read_text())
    return [
        (f"{service}.{name}", field["selector"]["select"])
        for service, spec in services.items()
        for name, field in (spec.get("fields") or {}).items()
        if "select" in (field.get("selector") or {})
    ]


def test_every_select_option_is_translated() -> None:
    translated = json.loads((INTEGRATION / "strings.json").read_text())["selector"]
    selects = _selects()
    assert len(selects) >= 10  # YAML anchors reuse some
    for where, select in selects:
        key = select.get("translation_key")
        assert key in translated, where
        assert set(translated[key]["options"]) == {str(o) for o in select["options"]}, where
