"""The clock's gateway tool over the gateway's HTTP endpoint, in a home of every backend."""

from __future__ import annotations

import json

from aiohttp.test_utils import TestClient

from tests.all_backends import gateway_result


async def test_arguments_as_object_or_json_text(home_client: TestClient) -> None:
    """A backend tool's arguments work as the object itself or as its JSON text, alike."""
    tools = (await gateway_result(home_client, "tools/list", {}, 1))["tools"]
    gateways = [
        tool for tool in tools if "args" in tool.get("inputSchema", {}).get("properties", {})
    ]
    clock = next(tool["name"] for tool in gateways if tool["name"].startswith("robine"))
    answers = []
    preview = {"label": "Rob's nap", "time": "14:30"}
    for number, args in enumerate((preview, json.dumps(preview)), start=2):
        call = {"tool": "preview_alarm", "args": args}
        result = await gateway_result(
            home_client, "tools/call", {"name": clock, "arguments": call}, number
        )
        assert result["isError"] is False, result
        answers.append(result["content"])
    assert answers[0] == answers[1]
