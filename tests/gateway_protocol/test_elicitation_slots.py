"""Questions waiting for an answer share a bounded number of slots, fairly between users: one
user holding questions open (a client that never answers) cannot keep another user's client,
the owner's included, from being asked. Both eras: legacy (a request over a stream) and
2026-07-28 (input_required, the call suspended)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from custom_components.mcp_gateway.mcp import elicitation
from custom_components.mcp_gateway.mcp.elicitation import (
    MAX_PENDING,
    Continuations,
    ElicitationUnsupportedError,
    InputRequired,
    PendingRequests,
    legacy_elicit,
)

SCHEMA: Any = {"type": "object", "properties": {"approve": {"type": "boolean"}}}


class Silent:
    """A client that takes every question and never answers."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> bool:
        self.sent.append(message)
        return True


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_one_user_cannot_hold_every_legacy_slot() -> None:
    """One user opening as many questions as there are slots gets its share; the owner's
    client is still asked, and its answer counts."""
    pending = PendingRequests()
    client = Silent()
    hog = [
        asyncio.create_task(legacy_elicit(pending, client, "intruder", "Q", SCHEMA, timeout=60))
        for _ in range(MAX_PENDING)
    ]
    await _settle()
    owner = asyncio.create_task(legacy_elicit(pending, client, "owner", "Q", SCHEMA, timeout=60))
    await _settle()
    asked = client.sent[-1]
    answer = {"id": asked["id"], "result": {"action": "accept", "content": {"approve": True}}}
    assert pending.resolve(answer, "owner")
    assert (await owner).accepted
    refused = [task for task in hog if task.done() and isinstance(task.exception(), Exception)]
    assert all(isinstance(task.exception(), ElicitationUnsupportedError) for task in refused)
    assert len(refused) == MAX_PENDING - elicitation.MAX_PENDING_PER_OWNER
    assert len(pending) == elicitation.MAX_PENDING_PER_OWNER
    for task in hog:
        task.cancel()
    await asyncio.gather(*hog, return_exceptions=True)


async def test_every_legacy_slot_taken_the_busiest_gives_one_up() -> None:
    """Many users fill every slot: a user holding fewer still gets asked (the one holding
    the most gives up its oldest question, which ends unanswered); a user holding as many
    as the busiest does not push another out."""
    pending = PendingRequests()
    client = Silent()
    per_owner = elicitation.MAX_PENDING_PER_OWNER
    users = [f"user{n}" for n in range(MAX_PENDING // per_owner)]
    tasks = {
        user: [
            asyncio.create_task(legacy_elicit(pending, client, user, "Q", SCHEMA, timeout=60))
            for _ in range(per_owner)
        ]
        for user in users
    }
    await _settle()
    assert len(pending) == MAX_PENDING
    owner = asyncio.create_task(legacy_elicit(pending, client, "owner", "Q", SCHEMA, timeout=60))
    await _settle()
    assert not owner.done()
    assert len(pending) == MAX_PENDING
    given_up = [t for ts in tasks.values() for t in ts if t.done()]
    assert len(given_up) == 1
    assert await given_up[0] == elicitation.UNANSWERED  # never "accept"
    # A full user asking again is refused rather than pushing another user out.
    with_all = asyncio.create_task(
        legacy_elicit(pending, client, users[-1], "Q", SCHEMA, timeout=60)
    )
    await _settle()
    assert isinstance(with_all.exception(), ElicitationUnsupportedError)
    for task in [owner, *(t for ts in tasks.values() for t in ts)]:
        task.cancel()
    await asyncio.gather(owner, *(t for ts in tasks.values() for t in ts), return_exceptions=True)


async def _asks(elicit: Any) -> dict[str, Any]:
    try:
        result = await elicit("Sure?", SCHEMA, timeout=60)
    except ElicitationUnsupportedError:
        return {"content": [], "asked": False}
    return {"content": [], "asked": True, "action": result.action}


async def test_one_user_cannot_hold_every_modern_slot() -> None:
    """2026-07-28: a user suspending calls on unanswered questions gets its share; the owner's
    call still gets its question, and its answer completes it."""
    continuations = Continuations()
    hog = [
        await continuations.start("intruder", f"f{n}", _asks, can_ask=True)
        for n in range(MAX_PENDING)
    ]
    owner = await continuations.start("owner", "mine", _asks, can_ask=True)
    assert isinstance(owner, InputRequired)
    ((key, _request),) = owner.input_requests.items()
    done = await continuations.resume(
        "owner", "mine", owner.request_state, {key: {"action": "accept", "content": {}}}
    )
    assert done == {"content": [], "asked": True, "action": "accept"}
    asked = [outcome for outcome in hog if isinstance(outcome, InputRequired)]
    assert len(asked) == elicitation.MAX_PENDING_PER_OWNER
    assert [o for o in hog if not isinstance(o, InputRequired)] == [
        {"content": [], "asked": False}
    ] * (MAX_PENDING - elicitation.MAX_PENDING_PER_OWNER)
    continuations.close()


async def test_every_modern_slot_taken_the_busiest_gives_one_up() -> None:
    continuations = Continuations()
    per_owner = elicitation.MAX_PENDING_PER_OWNER
    states: dict[str, list[InputRequired]] = {}
    for n in range(MAX_PENDING // per_owner):
        user = f"user{n}"
        for m in range(per_owner):
            outcome = await continuations.start(user, f"{user}-{m}", _asks, can_ask=True)
            assert isinstance(outcome, InputRequired)
            states.setdefault(user, []).append(outcome)
    owner = await continuations.start("owner", "mine", _asks, can_ask=True)
    assert isinstance(owner, InputRequired)
    # The first user's oldest question gave its slot up: its state answers nothing more.
    oldest = states["user0"][0]
    with pytest.raises(elicitation.UnknownRequestStateError):
        await continuations.resume("user0", "user0-0", oldest.request_state, {})
    continuations.close()
