"""The gateway's answers as MCP tool results: its own data once as compact JSON, an error the
AI can read, and a backend's answer passed through with its data carried once."""

from __future__ import annotations

from collections.abc import Sequence
import json
from typing import Any

from ...mcp import codec
from ...mcp.types import CallToolResult, ContentBlock
from ..catalog.store import ToolFailure


def tool_result(
    data: dict[str, Any], *, is_error: bool = False, structured: bool = False
) -> CallToolResult:
    """A CallToolResult carrying its data once: compact JSON as text.

    Every client at every protocol version reads text content, and it is what models are
    shown; `structuredContent` (since 2025-06-18) is required only of a tool that declares an
    `outputSchema`, which then SHOULD repeat it as text. The gateway's tools declare none, so
    the text is their one encoding; `structured=True` is for a tool that does.
    """
    result: CallToolResult = {
        "content": [{"type": "text", "text": _compact(data)}],
        "isError": is_error,
    }
    if structured:
        result["structuredContent"] = data
    return result


def _compact(data: Any) -> str:
    # orjson where it gives json's answer (mcp/codec.py): a whole-home get_state is ~80 KB.
    return codec.dumps(data).decode()


def error_result(message: str, code: str = "failed", **details: Any) -> CallToolResult:
    """An `isError` result the AI can read."""
    return tool_result(ToolFailure(message, code=code, **details).as_structured(), is_error=True)


def passthrough(content: Sequence[ContentBlock], structured: Any, is_error: bool) -> CallToolResult:
    """The backend's result, its data carried once.

    Text content is what every client reads, so it always goes through; the backend's
    `structuredContent` goes too only when it says more than the text (a backend's error
    codes ride there beside a plain message), never as a second copy of the same JSON.
    A result with structuredContent but no content gets it as compact text instead.
    """
    parts = list(content)
    result: CallToolResult = {"content": parts, "isError": is_error}
    if structured is None:
        return result
    texts = [part.get("text") for part in parts if part.get("type") == "text"]
    if not parts:
        parts.append({"type": "text", "text": _compact(structured)})
    elif not (len(texts) == 1 and _same_json(texts[0], structured)):
        result["structuredContent"] = structured
    return result


def _same_json(text: Any, structured: Any) -> bool:
    if not isinstance(text, str) or not text.lstrip().startswith(("{", "[")):
        return False
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False
