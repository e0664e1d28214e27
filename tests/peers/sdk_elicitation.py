"""The official Python SDK 2.x as an AI app whose person answers the gateway's approval question.

usage: <SDK 2.x python> sdk_elicitation.py URL TOKEN MODE ENTITY ANSWER
MODE is the SDK's (`legacy`: initialize and elicitation/create on the POST's stream; `auto`:
2026-07-28 with input_required); ANSWER is `approve` (accept, Approve ticked) or `decline`.
Calls set_state to unlock ENTITY and prints one JSON object: the protocol version, the
questions the callback saw and the call's result. Runs in the peers' own environment, not ours:
it imports nothing from this repository.
"""

import asyncio
import json
import sys
from typing import Any


async def main(url: str, token: str, mode: str, entity: str, answer: str) -> dict:
    import httpx2
    from mcp import Client, types
    from mcp.client.streamable_http import streamable_http_client

    asked: list[str] = []

    async def person(context: Any, params: Any) -> Any:
        asked.append(params.message)
        if answer == "approve":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(
        url, http_client=httpx2.AsyncClient(headers=headers, timeout=90)
    )
    async with Client(transport, mode=mode, elicitation_callback=person) as client:
        result = await client.call_tool(
            "set_state", {"updates": [{"entity_id": entity, "state": "unlocked"}]}
        )
        dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {"protocol_version": client.protocol_version, "asked": asked, "result": dumped}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(*sys.argv[1:6]))))
