"""Plain requests against every backend's catalog: search_tools puts the right tool first.

The requests are worded as a person says them, not as tools are named; each names the tool a
careful assistant would call. The ranking must get there from general signals (what the
request means to do, the tools' own annotations and tiers, everyday synonyms), so the table
doubles as a measure: every row is one chance to be wrong.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp.test_utils import TestClient

from tests.backend_sims import backend_cases, registered_kinds

from .conftest import URL

CASES = backend_cases("search_requests")

# Request → the tools that do it, as "<backend kind>/<tool>" ("core/<tool>" for the gateway's
# own). A second tool is accepted only where Home Assistant's entity for the same thing (the
# hub's mode select, its HSM panel, a rule's switch or button, the clock's snooze and dismiss
# buttons, a sensor's recorded history)
# lets a core tool do it as well.
REQUESTS: list[tuple[str, tuple[str, ...]]] = [
    # Each backend's own (tests/<kind>/search_requests.py).
    *(row for cases in CASES.values() for row in cases.REQUESTS),
    # Any home, through Home Assistant.
    ("is the front door locked?", ("core/get_state",)),
    ("lock the back door", ("core/set_state",)),
    ("dim the kitchen lights to 30 percent", ("core/set_state",)),
    ("has there been motion in the hallway in the last hour", ("core/get_history",)),
    ("which devices are offline", ("core/get_state",)),
    ("which smart home systems are connected", ("core/list_backends",)),
    ("create an automation", ("core/automations",)),
    ("make an automation", ("core/automations",)),
    ("why didn't my automation run", ("core/automations",)),
    ("delete the automation", ("core/automations",)),
]


# A second set, worded apart from REQUESTS and never used to tune the ranking: it checks that
# the ranking holds for requests nobody shaped it on, as a share of rows (printed with every
# miss) rather than all of them.
EVERYDAY: list[tuple[str, tuple[str, ...]]] = [
    # Each backend's own (tests/<kind>/search_requests.py).
    *(row for cases in CASES.values() for row in cases.EVERYDAY),
    # Any home, through Home Assistant.
    ("are any windows open", ("core/get_state",)),
    ("switch off every light in the bedroom", ("core/set_state",)),
    ("what's the temperature in the living room", ("core/get_state",)),
    ("turn the heating up to 22 degrees", ("core/set_state",)),
    ("is every integration working", ("core/list_backends",)),
    ("open the kitchen blinds halfway", ("core/set_state",)),
]
# Rows of EVERYDAY whose best hit is right.
EVERYDAY_TOP1: int = 31


async def _search(home_client: TestClient, query: str, request_id: int) -> list[dict[str, Any]]:
    response = await home_client.post(
        URL,
        json={
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "search_tools", "arguments": {"query": query, "limit": 5}},
        },
        headers={"Accept": "application/json", "MCP-Protocol-Version": "2025-11-25"},
    )
    result = json.loads(await response.read())["result"]
    data = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    hits: list[dict[str, Any]] = data["results"]
    return hits


def _ref(hit: dict[str, Any]) -> str:
    gateway = hit.get("gateway")
    if gateway is None:
        return f"core/{hit['tool']}"
    # The longest kind first: no kind's gateway is taken for another's it begins with.
    kind = next(
        k for k in sorted(registered_kinds(), key=len, reverse=True) if gateway.startswith(k)
    )
    return f"{kind}/{hit['tool']}"


async def _misses(
    home_client: TestClient, requests: list[tuple[str, tuple[str, ...]]]
) -> list[str]:
    """The requests whose best hit is not a tool that does them, each with its top three."""
    misses: list[str] = []
    for number, (query, wanted) in enumerate(requests, start=1):
        hits = [_ref(hit) for hit in await _search(home_client, query, number)]
        if not hits or hits[0] not in wanted:
            misses.append(f"{query!r}: want {wanted}, got {hits[:3]}")
    print(f"search top-1: {len(requests) - len(misses)}/{len(requests)}")
    print("\n".join(misses))
    return misses


async def test_plain_requests_find_their_tool(home_client: TestClient) -> None:
    """Every request's best hit is the tool it needs."""
    misses = await _misses(home_client, REQUESTS)
    assert not misses, "\n".join(misses)


async def test_everyday_requests_top1(home_client: TestClient) -> None:
    """At least EVERYDAY_TOP1 of the second set find their tool first."""
    misses = await _misses(home_client, EVERYDAY)
    assert len(EVERYDAY) - len(misses) >= EVERYDAY_TOP1, "\n".join(misses)
