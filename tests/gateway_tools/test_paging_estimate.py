"""get_state's page-size estimate: close to the real encoding, without encoding string items."""

from __future__ import annotations

import json
from typing import Any

import pytest

from custom_components.mcp_gateway.gateway.tools import get_state

from .conftest import Ctx


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
    estimate = get_state._estimated_size(item)
    assert actual <= estimate <= actual + 6 * len(item), (estimate, actual)


def test_string_items_are_not_encoded_to_be_measured(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default fields are all strings: measured without the JSON encoder."""

    def refuse(value: Any) -> str:
        raise AssertionError("encoded to be measured")

    monkeypatch.setattr(get_state, "_compact_json", refuse)
    assert get_state._estimated_size({"entity_id": "light.a", "state": "on"}) > 20


async def test_pages_measure_a_sample(
    hass: Any, fake_entry: Any, hass_admin_user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One item in SIZE_SAMPLE is measured; the page still holds every entity."""
    calls: list[str] = []
    real = get_state._estimated_size

    def counting(item: dict[str, Any]) -> int:
        calls.append(item["entity_id"])
        return real(item)

    monkeypatch.setattr(get_state, "_estimated_size", counting)
    result = await get_state.async_get_state(hass, Ctx(user=hass_admin_user), {})
    assert result["count"] == 3
    assert calls == ["light.desk_lamp"]
