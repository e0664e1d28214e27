"""The response size guard measures results without encoding them twice."""

from __future__ import annotations

import json
from typing import Any

import pytest

from custom_components.mcp_gateway.mcp import server as server_module


def _encoded(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    "result",
    [
        {"content": [{"type": "text", "text": json.dumps({"a": "b" * 5000})}], "isError": False},
        {"content": [{"type": "text", "text": 'quotes " and \\ and\nlines ' * 300}]},
        {"content": [{"type": "text", "text": "grüß 🌡️ " * 700}], "isError": False},
        {
            "content": [
                {"type": "text", "text": "two"},
                {"type": "image", "data": "iVBOR" * 900, "mimeType": "image/png"},
            ],
            "structuredContent": {"x": list(range(900))},
            "isError": False,
        },
    ],
)
def test_size_estimate_is_close_to_the_encoding(result: dict[str, Any]) -> None:
    """Within a few dozen bytes of the real encoding, never far below it."""
    actual = len(_encoded(result))
    estimate = server_module._result_size(result, _encoded)
    assert actual - 8 <= estimate <= actual + 200, (estimate, actual)


def test_text_results_are_not_encoded_to_be_measured() -> None:
    """A text-only result is measured from its text: the encoder sees the string alone,
    never the result or its parts."""
    seen: list[Any] = []

    def strings_only(value: Any) -> bytes:
        if not isinstance(value, str):
            raise AssertionError("encoded to be measured")
        seen.append(value)
        return _encoded(value)

    text = 'a "quoted" line\n' * 1_000
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    assert server_module._result_size(result, strings_only) >= len(_encoded(text))
    assert seen == [text]


@pytest.mark.parametrize(
    ("text", "limit"),
    [
        ("x" * 9_000, 60_000),  # 6 bytes a character at most: surely within
        ('"' * 9_000, 17_000),  # 18,000 bytes escaped, though only 9,000 characters
        ("\n" * 9_000, 17_000),
        ("🌡" * 4_000, 15_000),  # 16,000 bytes in UTF-8
    ],
)
def test_the_quick_bound_never_passes_what_the_measure_refuses(text: str, limit: int) -> None:
    """A result is passed unmeasured only when even its worst encoding fits."""
    result = {"content": [{"type": "text", "text": text}], "isError": False}
    fits = server_module._result_size(result, _encoded) <= limit
    if server_module._surely_within(result, limit):
        assert fits
        assert len(_encoded(result)) <= limit
    else:
        assert not fits
