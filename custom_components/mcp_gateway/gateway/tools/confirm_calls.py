"""Backend write calls checked as set_state checks its own writes.

A backend's answer to a write (`updated: 1`) may count what it forwarded, not what
the device did. The backend reads its devices back (`BackendRuntime.async_confirm_call`) and the
answer gains `gateway_confirmation`: `confirmed`, `not_applied` (with what the device reports)
or `unknown`. An answer none of whose targets applied anything is an error.
"""

from __future__ import annotations

import json
from typing import Any

from ...framework.base import BackendRuntime, CallConfirmation, Confirmation
from ...mcp.client import ToolResult
from ...mcp.types import CallToolResult


async def async_confirmed(
    runtime: BackendRuntime, name: str, arguments: dict[str, Any], result: CallToolResult
) -> CallToolResult:
    """The backend's successful write answer with its devices' confirmation, if it has one."""
    if result.get("isError"):
        return result
    answer = ToolResult(list(result.get("content", [])), result.get("structuredContent"))
    confirmation = await runtime.async_confirm_call(name, arguments, answer)
    return result if confirmation is None else with_confirmation(result, confirmation)


def with_confirmation(result: CallToolResult, confirmation: CallConfirmation) -> CallToolResult:
    """The answer as it was, plus the confirmation in its text (and structured content)."""
    shown = {
        "status": str(confirmation.status),
        "note": confirmation.note,
        "items": [
            {
                key: str(value) if isinstance(value, Confirmation) else value
                for key, value in item.items()
            }
            for item in confirmation.items
        ],
    }
    annotated = result.copy()
    text = json.dumps({"gateway_confirmation": shown}, separators=(",", ":"), default=str)
    annotated["content"] = [*result.get("content", ()), {"type": "text", "text": text}]
    if isinstance(structured := result.get("structuredContent"), dict):
        annotated["structuredContent"] = {**structured, "gateway_confirmation": shown}
    items = confirmation.items
    if items and all(item.get("status") == Confirmation.NOT_APPLIED for item in items):
        annotated["isError"] = True  # nothing the call asked for happened
    return annotated
