"""A backend that overrides none of the optional gateway hooks is treated as a plain one.

Every hook of BackendRuntime beyond the abstract ones has a default a new backend inherits:
the gateway must then see no extra addresses, no subject, no listing to filter, no pending
report, no read-back and no history of its own, never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Self
from unittest.mock import AsyncMock, MagicMock

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
import pytest

from custom_components.mcp_gateway.framework.base import (
    BackendHealth,
    BackendRuntime,
    ToolClass,
    ToolTier,
    UnknownListing,
)
from custom_components.mcp_gateway.mcp.client import ToolResult


class PlainRuntime(BackendRuntime):
    """Only what a backend must provide."""

    kind = "plain"
    platforms = (Platform.SWITCH,)

    @classmethod
    def from_entry(cls, hass: HomeAssistant, entry: Any) -> Self:
        return cls(hass, entry, MagicMock(close=AsyncMock()))

    async def async_setup(self) -> None:
        return None

    async def async_list_tools(self) -> list[dict[str, Any]]:
        return []

    async def async_call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        return ToolResult(content=[])

    def tool_class(self, tool: Mapping[str, Any]) -> ToolClass:
        return ToolClass(ToolTier.READ)

    def health(self) -> BackendHealth:
        return BackendHealth(available=True, protocol_version=None, latency_ms=None)

    def diagnostics(self) -> dict[str, Any]:
        return {}


async def test_plain_backend_gets_the_plain_defaults(hass: HomeAssistant) -> None:
    runtime = PlainRuntime.from_entry(hass, MagicMock())
    args = {"deviceId": "1"}
    control = ToolClass(ToolTier.CONTROL)
    # Its tools' class holds for every call, and a call addresses nothing beyond its tool.
    assert runtime.call_class(control, "any", args) is control
    assert runtime.entity_keys_in_call("any", args) == []
    assert runtime.device_keys_in_call("any", args) == []
    assert runtime.refusal_hint("any", args) is None
    assert runtime.call_subject("any", args) is None
    # No listing is filtered: an answer it would have to filter is withheld instead.
    assert runtime.lists_devices("any") is False
    with pytest.raises(UnknownListing):
        runtime.filter_listing("any", {"devices": []}, MagicMock())
    # Writes answer with the device's state: nothing pending, nothing to read back.
    assert runtime.reads_back is False
    assert runtime.runs_actions("any", args) is False
    assert runtime.awaits_report(Platform.SWITCH, "key") is False
    assert await runtime.async_read_back() is None
    assert runtime.last_heard(Platform.SWITCH, "key") is None
    # No history of its own to offer or merge.
    assert runtime.history_call(MagicMock(), datetime(2026, 1, 1)) is None
    assert runtime.history_events(ToolResult(content=[])) is None
    # Removing its entry deletes nothing on the backend; shutting down closes its client.
    assert await PlainRuntime.async_remove_entry(hass, MagicMock()) is None
    await runtime.async_shutdown()
    runtime.client.close.assert_awaited_once()
