"""ToolResult parses its text only when asked: passed-on results are never parsed."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.mcp_gateway.mcp import client as client_module
from custom_components.mcp_gateway.mcp.client import ToolResult


def test_data_is_parsed_on_first_use_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a result costs no JSON parse; reading data parses once and keeps it."""
    parsed: list[str] = []
    real = client_module.json.loads

    def counting(text: str, **kwargs: Any) -> Any:
        parsed.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(client_module.json, "loads", counting)
    result = ToolResult(content=[{"type": "text", "text": '{"a": 1}'}])
    assert parsed == []
    assert result.text == '{"a": 1}'
    assert result.data == {"a": 1}
    assert result.data == {"a": 1}
    assert parsed == ['{"a": 1}']
    # Equal results compare equal whether or not one was read.
    assert result == ToolResult(content=[{"type": "text", "text": '{"a": 1}'}])
    assert ToolResult(content=[], structured={"b": 2}).data == {"b": 2}
    assert ToolResult(content=[{"type": "text", "text": "plain"}]).data == "plain"
