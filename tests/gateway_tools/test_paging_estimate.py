"""get_state's page-size estimate: close to the real encoding, without encoding string items."""

from __future__ import annotations

import json
from typing import Any

import pytest

from custom_components.mcp_gateway.gateway import tools as gateway_tools


@pytest.mark.parametrize(
    "item",
    [
        {"entity_id": "light.desk", "name": "Desk lamp", "state": "on", "area": "Office"},
        {"entity_id": "sensor.t", "state": "20.5", "unit": "°C"},
        {"entity_id": "light.desk", "attributes": {"brightness": 128, "hs_color": [30, 60]}},
        {"entity_id": "sensor.t", "battery": 87},
    ],
)
def test_estimate_is_close_to_the_encoding(item: dict[str, Any]) -> None:
    actual = len(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
    estimate = gateway_tools._estimated_size(item)
    assert actual <= estimate <= actual + 6 * len(item), (estimate, actual)


def test_string_items_are_not_encoded_to_be_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default fields are all strings: measured without the JSON encoder."""

    def refuse(value: Any) -> str:
        raise AssertionError("encoded to be measured")

    monkeypatch.setattr(gateway_tools, "_compact_json", refuse)
    assert gateway_tools._estimated_size({"entity_id": "light.a", "state": "on"}) > 20
