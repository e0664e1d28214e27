"""Each backend's options form has its own texts: its poll help names no other backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.const import CONF_SCAN_INTERVAL
from homeassistant.helpers.selector import NumberSelector
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.registry import BACKENDS

STRINGS = json.loads(
    (
        Path(__file__).parent.parent / "custom_components" / "mcp_gateway" / "strings.json"
    ).read_text()
)
# Each registered backend's name as users read it: the first word of its menu entry.
NAMES = {
    backend.kind: STRINGS["config"]["step"]["user"]["menu_options"][backend.kind].split()[0]
    for backend in BACKENDS
}


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_poll_interval_help_speaks_of_its_own_backend(kind: str) -> None:
    step = STRINGS["options"]["step"][kind]
    help_text = step["data_description"]["scan_interval"]
    assert "default" in help_text
    assert not [name for other, name in NAMES.items() if other != kind and name in help_text]
    assert set(step["data"]) == set(step["data_description"])


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda backend: backend.kind)
def test_poll_interval_field_shows_its_unit(backend: Any) -> None:
    """The field says "s" beside the number, on every backend's form (one had none)."""
    entry = MockConfigEntry(domain=DOMAIN, data={CONF_BACKEND: backend.kind}, options={})
    fields = {str(key): value for key, value in backend.options_schema(entry).items()}
    field = fields[CONF_SCAN_INTERVAL]
    assert isinstance(field, NumberSelector)
    assert field.config["unit_of_measurement"] == "s"
