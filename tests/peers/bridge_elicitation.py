"""An AI app on stdio behind mcp-remote (Claude Desktop's bridge) answers the approval question.

usage: python -m tests.peers.bridge_elicitation MCP_PEERS URL TOKEN ENTITY ANSWER
The official Python SDK (1.x, this repository's test environment) starts `mcp-peers mcp-remote`
as a stdio server, declares elicitation, and calls set_state to unlock ENTITY; ANSWER is
`approve` or `decline`. Prints one JSON object: the questions the callback saw and the result.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import ElicitResult


async def main(peers: str, url: str, token: str, entity: str, answer: str) -> dict[str, Any]:
    asked: list[str] = []

    async def person(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        if answer == "approve":
            return ElicitResult(action="accept", content={"approve": True})
        return ElicitResult(action="decline")

    # The bridge runs with our whole environment: the SDK's default (a few variables) leaves
    # out what npx needs to start it.
    server = StdioServerParameters(
        command=peers,
        args=["mcp-remote", url, "--token", token, "--", "--transport", "http-only"],
        env=dict(os.environ),
    )
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, elicitation_callback=person) as session,
    ):
        init = await session.initialize()
        result = await session.call_tool(
            "set_state", {"updates": [{"entity_id": entity, "state": "unlocked"}]}
        )
    return {
        "protocol_version": init.protocolVersion,
        "asked": asked,
        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:6]))))
