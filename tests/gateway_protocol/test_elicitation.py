"""Questions to the client's person mid-call (MCP elicitation), over the real wire.

The official SDK client's elicitation callback stands in for an AI app on the legacy
transports; the 2026-07-28 multi round-trip form is driven with raw requests, as the SDK 1.x
does not speak it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
import json
from typing import Any
from unittest.mock import patch

from aiohttp.test_utils import TestClient, make_mocked_request
from homeassistant.core import HomeAssistant
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext as SdkContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData
import pytest

from custom_components.mcp_gateway.gateway.http.view import (
    GatewayRuntime,
    McpGatewayView,
    PostStream,
)
from custom_components.mcp_gateway.mcp import elicitation
from custom_components.mcp_gateway.mcp.elicitation import (
    ElicitationUnsupportedError,
    call_fingerprint,
    parse_result,
    supports_elicitation,
)
from custom_components.mcp_gateway.mcp.server import RequestContext

from .conftest import URL, FakeHandler, base_url, make_token, rpc

SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Approve", "default": False}},
    "required": ["approve"],
}
MODERN = "2026-07-28"
ELICITING = {"elicitation": {}}

type Callback = Callable[[SdkContext[ClientSession, Any], ElicitRequestParams], Awaitable[Any]]
type Connect = Callable[[str, str, Callback | None], AbstractAsyncContextManager[ClientSession]]


class AskingHandler(FakeHandler):
    """FakeHandler with `unlock`: asks the person, and acts only on an approval."""

    def __init__(self) -> None:
        super().__init__()
        self.unlocked = 0
        self.answers: list[str] = []
        self.timeout = 5.0
        self.tools.append(
            {
                "name": "unlock",
                "description": "Unlock the front door.",
                "inputSchema": {"type": "object", "properties": {"door": {"type": "string"}}},
            }
        )

    async def call_tool(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        if name != "unlock":
            return await super().call_tool(ctx, name, arguments)
        self.contexts.append(ctx)
        if ctx.elicit is None:
            answer = "unsupported"
        else:
            try:
                result = await ctx.elicit(
                    f"Unlock {arguments.get('door', 'Front Door')}?", SCHEMA, timeout=self.timeout
                )
            except ElicitationUnsupportedError:
                answer = "unsupported"
            else:
                answer = result.action if result.answered else f"{result.action} (no answer)"
                if result.accepted and result.content.get("approve") is True:
                    self.unlocked += 1
                    answer = "unlocked"
        self.answers.append(answer)
        return {"content": [{"type": "text", "text": answer}], "isError": False}


@pytest.fixture
def handler() -> AskingHandler:
    """The shared gateway and client fixtures (conftest.py) serve this handler here."""
    return AskingHandler()


@asynccontextmanager
async def _streamable(
    url: str, token: str, callback: Callback | None
) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        streamablehttp_client(f"{url}/api/mcp_gateway", headers=headers) as (read, write, _),
        ClientSession(read, write, elicitation_callback=callback) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def _sse(url: str, token: str, callback: Callback | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        sse_client(f"{url}/api/mcp_gateway/sse", headers=headers) as (read, write),
        ClientSession(read, write, elicitation_callback=callback) as session,
    ):
        await session.initialize()
        yield session


TRANSPORTS = pytest.mark.parametrize("connect", [_streamable, _sse], ids=["streamable", "sse"])


def _person(action: str, **content: Any) -> tuple[Callback, list[ElicitRequestParams]]:
    """An AI app whose person answers every question with `action` (and `content`)."""
    seen: list[ElicitRequestParams] = []

    async def answer(
        context: SdkContext[ClientSession, Any], params: ElicitRequestParams
    ) -> ElicitResult:
        seen.append(params)
        return ElicitResult(action=action, content=content or None)  # type: ignore[arg-type]

    return answer, seen


@TRANSPORTS
async def test_accept_runs_the_call_once(
    connect: Connect, client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """The SDK's callback sees the question; an approval runs the call, once."""
    callback, seen = _person("accept", approve=True)
    async with connect(base_url(client), hass_access_token, callback) as session:
        result = await session.call_tool("unlock", {"door": "Front Door"})
        assert result.content[0].text == "unlocked"  # type: ignore[union-attr]
        assert handler.unlocked == 1
        assert len(seen) == 1
        assert seen[0].message == "Unlock Front Door?"
        assert seen[0].requestedSchema == SCHEMA
        # Other calls of the same client are unaffected, and the next call asks again.
        echo = await session.call_tool("echo", {"text": "hi"})
        assert echo.structuredContent == {"text": "hi", "user": "Mock User"}
        await session.call_tool("unlock", {})
    assert handler.unlocked == 2
    assert len(seen) == 2
    assert handler.contexts[-1].client_name == "mcp"


@TRANSPORTS
@pytest.mark.parametrize(
    "case",
    [
        ("decline", {}, "decline"),
        ("cancel", {}, "cancel"),
        ("accept", {"approve": False}, "accept"),
    ],
    ids=["decline", "cancel", "unticked"],
)
async def test_decline_or_cancel_changes_nothing(
    connect: Connect,
    client: TestClient,
    hass_access_token: str,
    handler: AskingHandler,
    case: tuple[str, dict[str, Any], str],
) -> None:
    """Declined, dismissed, or accepted without the approval box ticked: nothing runs."""
    action, content, expected = case
    callback, seen = _person(action, **content)
    async with connect(base_url(client), hass_access_token, callback) as session:
        result = await session.call_tool("unlock", {})
    assert result.content[0].text == expected  # type: ignore[union-attr]
    assert handler.unlocked == 0
    assert len(seen) == 1


@TRANSPORTS
async def test_no_answer_in_time_is_declined(
    connect: Connect, client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """A person who never answers: the question times out as declined, nothing runs, and
    an answer arriving after that is ignored."""
    handler.timeout = 0.3
    late = asyncio.Event()

    async def slow(context: SdkContext[ClientSession, Any], params: Any) -> ElicitResult:
        await asyncio.sleep(0.6)
        late.set()
        return ElicitResult(action="accept", content={"approve": True})

    async with connect(base_url(client), hass_access_token, slow) as session:
        result = await session.call_tool("unlock", {})
        assert result.content[0].text == "decline (no answer)"  # type: ignore[union-attr]
        await asyncio.wait_for(late.wait(), 2)
        await asyncio.sleep(0.1)  # the late answer reaches the gateway, which drops it
        await session.send_ping()
    assert handler.unlocked == 0


@TRANSPORTS
async def test_client_without_the_capability_is_never_asked(
    connect: Connect, client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """No elicitation capability: the handler learns it cannot ask (its other channels)."""
    async with connect(base_url(client), hass_access_token, None) as session:
        result = await session.call_tool("unlock", {})
    assert result.content[0].text == "unsupported"  # type: ignore[union-attr]
    assert handler.contexts[-1].elicit is None
    assert handler.unlocked == 0


@TRANSPORTS
async def test_client_error_means_unsupported(
    connect: Connect, client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """A client that declared the capability but answers with an error cannot show it."""

    async def broken(context: SdkContext[ClientSession, Any], params: Any) -> ErrorData:
        return ErrorData(code=-32601, message="no forms here")

    async with connect(base_url(client), hass_access_token, broken) as session:
        result = await session.call_tool("unlock", {})
    assert result.content[0].text == "unsupported"  # type: ignore[union-attr]
    assert handler.unlocked == 0


async def test_concurrent_questions_each_get_their_own_answer(
    client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """Two questions at once on one client: each answer reaches its own call."""

    async def by_door(context: SdkContext[ClientSession, Any], params: Any) -> ElicitResult:
        if "Back" in params.message:
            await asyncio.sleep(0.2)  # answered last, approved
            return ElicitResult(action="accept", content={"approve": True})
        return ElicitResult(action="decline")

    async with _streamable(base_url(client), hass_access_token, by_door) as session:
        back, front = await asyncio.gather(
            session.call_tool("unlock", {"door": "Back Door"}),
            session.call_tool("unlock", {"door": "Front Door"}),
        )
    assert back.content[0].text == "unlocked"  # type: ignore[union-attr]
    assert front.content[0].text == "decline"  # type: ignore[union-attr]
    assert handler.unlocked == 1


# --- the legacy wire by hand: ids, owners, streams -------------------------------------------


async def _initialize(client: TestClient, token: str, capabilities: dict[str, Any]) -> str:
    """Initialize; the session id issued to a client that declared elicitation ("" if none)."""
    body = rpc(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "Claude", "version": "1"},
        },
    )
    response = await client.post(URL, json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status == 200
    return str(response.headers.get("Mcp-Session-Id", ""))


def _headers(
    token: str, accept: str = "application/json, text/event-stream", session: str = ""
) -> dict[str, str]:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": accept,
        "MCP-Protocol-Version": "2025-06-18",
    }
    if session:
        headers["Mcp-Session-Id"] = session
    return headers


async def _first_event(response: Any) -> dict[str, Any]:
    """The first `message` event of an event-stream response."""
    buffer = b""
    while b"\n\n" not in buffer:
        buffer += await response.content.readany()
    block = buffer.split(b"\n\n", 1)[0]
    data = next(line[6:] for line in block.split(b"\n") if line.startswith(b"data: "))
    return json.loads(data)


async def test_only_the_asked_user_can_answer(
    hass: HomeAssistant,
    client: TestClient,
    hass_access_token: str,
    hass_admin_user: Any,
    handler: AskingHandler,
) -> None:
    """An answer from another user (who learned the id) is ignored; the asked one counts.

    The POST's answer turns into an event stream carrying the question, then the result.
    """
    session = await _initialize(client, hass_access_token, ELICITING)
    call = asyncio.ensure_future(
        client.post(
            URL,
            json=rpc("tools/call", {"name": "unlock"}, 7),
            headers=_headers(hass_access_token, session=session),
        )
    )
    response = await call
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    question = await _first_event(response)
    assert question["method"] == "elicitation/create"
    assert isinstance(question["id"], str)
    assert len(question["id"]) > 20  # unguessable: no other client can answer for it
    answer = {
        "jsonrpc": "2.0",
        "id": question["id"],
        "result": {"action": "accept", "content": {"approve": True}},
    }

    other = await hass.auth.async_create_user("Guest", group_ids=["system-admin"])
    other_token = await make_token(hass, other)
    forged = await client.post(URL, json=answer, headers=_headers(other_token))
    assert forged.status == 202
    assert handler.unlocked == 0

    real = await client.post(URL, json=answer, headers=_headers(hass_access_token))
    assert real.status == 202
    final = await _first_event_after(response)
    assert final["id"] == 7
    assert final["result"]["content"][0]["text"] == "unlocked"
    assert handler.unlocked == 1
    # The same answer again (a replay) reaches nothing.
    replay = await client.post(URL, json=answer, headers=_headers(hass_access_token))
    assert replay.status == 202
    assert handler.unlocked == 1


async def _first_event_after(response: Any) -> dict[str, Any]:
    """The next `message` event of a stream whose first one was read."""
    text = (await response.content.read()).decode()
    blocks = [b for b in text.split("\n\n") if "data: " in b]
    return json.loads(blocks[-1].split("data: ", 1)[1])


async def test_json_only_clients_are_never_asked(
    client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """A client that takes only JSON answers gets no stream, so it is not asked."""
    await _initialize(client, hass_access_token, ELICITING)
    response = await client.post(
        URL,
        json=rpc("tools/call", {"name": "unlock"}),
        headers=_headers(hass_access_token, "application/json"),
    )
    assert response.status == 200
    assert (await response.json())["result"]["content"][0]["text"] == "unsupported"


async def test_old_protocol_versions_are_never_asked(
    client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """2025-03-26 has no elicitation, whatever the client declares."""
    await _initialize(client, hass_access_token, ELICITING)
    headers = {**_headers(hass_access_token), "MCP-Protocol-Version": "2025-03-26"}
    response = await client.post(URL, json=rpc("tools/call", {"name": "unlock"}), headers=headers)
    assert (await response.json())["result"]["content"][0]["text"] == "unsupported"


async def test_keepalive_while_waiting(
    gateway: GatewayRuntime, client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """While the person thinks, the stream carries comment lines (proxies keep it open);
    a client that leaves ends the call, unanswered and not run."""
    gateway.stream_keepalive = 0.05
    session = await _initialize(client, hass_access_token, ELICITING)
    response = await client.post(
        URL,
        json=rpc("tools/call", {"name": "unlock"}),
        headers=_headers(hass_access_token, session=session),
    )
    await _first_event(response)
    seen = b""
    while b": keepalive" not in seen:
        seen += await response.content.readany()
    assert len(gateway.server.pending) == 1
    response.close()
    for _ in range(50):
        if not gateway.server.pending:
            break
        await asyncio.sleep(0.02)
    # Home Assistant cancels a request whose client left: the call ends where it waited.
    assert len(gateway.server.pending) == 0
    assert handler.answers == []
    assert handler.unlocked == 0


# --- 2026-07-28: input_required, inputResponses, requestState --------------------------------


def _modern(
    name: str,
    arguments: dict[str, Any],
    request_id: int = 1,
    capabilities: dict[str, Any] | None = None,
    **extra: Any,
) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": ELICITING
        if capabilities is None
        else capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "Modern App", "version": "1"},
    }
    body = rpc(
        "tools/call", {"name": name, "arguments": arguments, "_meta": meta, **extra}, request_id
    )
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
    return body, headers


async def _call(
    client: TestClient, body: Any, headers: dict[str, str], token: str | None = None
) -> tuple[int, Any]:
    if token is not None:
        headers = {**headers, "Authorization": f"Bearer {token}"}
    response = await client.post(URL, json=body, headers=headers)
    return response.status, await response.json()


async def test_modern_accept_runs_once(client: TestClient, handler: AskingHandler) -> None:
    """input_required with the question; the retry with the approval runs it, once; the
    state is then spent."""
    status, first = await _call(client, *_modern("unlock", {"door": "Garage"}))
    assert status == 200
    result = first["result"]
    assert result["resultType"] == "input_required"
    ((key, request),) = result["inputRequests"].items()
    assert request == {
        "method": "elicitation/create",
        "params": {"message": "Unlock Garage?", "requestedSchema": SCHEMA},
    }
    state = result["requestState"]
    assert handler.unlocked == 0
    responses = {key: {"action": "accept", "content": {"approve": True}}}
    status, done = await _call(
        client,
        *_modern("unlock", {"door": "Garage"}, 2, inputResponses=responses, requestState=state),
    )
    assert status == 200
    assert done["result"]["resultType"] == "complete"
    assert done["result"]["content"][0]["text"] == "unlocked"
    assert handler.unlocked == 1
    status, replay = await _call(
        client,
        *_modern("unlock", {"door": "Garage"}, 3, inputResponses=responses, requestState=state),
    )
    assert status == 400
    assert "requestState" in replay["error"]["message"]
    assert handler.unlocked == 1


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ({"action": "decline"}, "decline"),
        ({"action": "cancel"}, "cancel"),
        ({"action": "accept", "content": {"approve": False}}, "accept"),
        ({"action": "yes please"}, "cancel (no answer)"),
        (None, "cancel (no answer)"),
    ],
)
async def test_modern_decline_changes_nothing(
    client: TestClient, handler: AskingHandler, response: Any, expected: str
) -> None:
    """A decline, a dismissal, an unticked box, a malformed or missing answer: nothing runs."""
    _, first = await _call(client, *_modern("unlock", {}))
    key = next(iter(first["result"]["inputRequests"]))
    responses = {} if response is None else {key: response}
    status, done = await _call(
        client,
        *_modern(
            "unlock", {}, 2, inputResponses=responses, requestState=first["result"]["requestState"]
        ),
    )
    assert status == 200
    assert done["result"]["content"][0]["text"] == expected
    assert handler.unlocked == 0


async def test_modern_state_is_bound_to_user_and_arguments(
    hass: HomeAssistant, client: TestClient, handler: AskingHandler
) -> None:
    """A requestState presented with other arguments or by another user finds nothing, and
    leaves the real continuation intact."""
    _, first = await _call(client, *_modern("unlock", {"door": "Front"}))
    key = next(iter(first["result"]["inputRequests"]))
    state = first["result"]["requestState"]
    responses = {key: {"action": "accept", "content": {"approve": True}}}
    status, other_door = await _call(
        client,
        *_modern("unlock", {"door": "Back"}, 2, inputResponses=responses, requestState=state),
    )
    assert status == 400
    assert "requestState" in other_door["error"]["message"]
    guest = await hass.auth.async_create_user("Guest", group_ids=["system-admin"])
    token = await make_token(hass, guest)
    status, other_user = await _call(
        client,
        *_modern("unlock", {"door": "Front"}, 3, inputResponses=responses, requestState=state),
        token=token,
    )
    assert status == 400
    assert "requestState" in other_user["error"]["message"]
    assert handler.unlocked == 0
    status, done = await _call(
        client,
        *_modern("unlock", {"door": "Front"}, 4, inputResponses=responses, requestState=state),
    )
    assert done["result"]["content"][0]["text"] == "unlocked"
    assert handler.unlocked == 1


async def test_modern_no_retry_in_time_is_declined(
    client: TestClient, handler: AskingHandler
) -> None:
    """A client that never comes back in time: the call ends declined; a late retry learns
    that (its answer ignored, nothing run), once, and after the grace finds nothing."""
    handler.timeout = 0.2
    _, first = await _call(client, *_modern("unlock", {}))
    for _ in range(40):
        if handler.answers:
            break
        await asyncio.sleep(0.05)
    assert handler.answers == ["decline (no answer)"]
    key = next(iter(first["result"]["inputRequests"]))
    retry = _modern(
        "unlock",
        {},
        2,
        inputResponses={key: {"action": "accept", "content": {"approve": True}}},
        requestState=first["result"]["requestState"],
    )
    status, late = await _call(client, *retry)
    assert status == 200
    assert late["result"]["content"][0]["text"] == "decline (no answer)"
    status, again = await _call(client, *retry)
    assert status == 400
    assert "requestState" in again["error"]["message"]
    assert handler.unlocked == 0


async def test_modern_state_expires_after_the_grace(
    client: TestClient, handler: AskingHandler
) -> None:
    """Past the question's time limit and the grace, the state is forgotten."""
    handler.timeout = 0.05
    with patch.object(elicitation, "STATE_GRACE", 0.05):
        _, first = await _call(client, *_modern("unlock", {}))
        await asyncio.sleep(0.3)
    key = next(iter(first["result"]["inputRequests"]))
    status, late = await _call(
        client,
        *_modern(
            "unlock",
            {},
            2,
            inputResponses={key: {"action": "accept", "content": {"approve": True}}},
            requestState=first["result"]["requestState"],
        ),
    )
    assert status == 400
    assert "requestState" in late["error"]["message"]
    assert handler.unlocked == 0


async def test_modern_without_the_capability_completes_at_once(
    client: TestClient, handler: AskingHandler
) -> None:
    """No elicitation in the request's capabilities: no question, the handler's fallback."""
    status, done = await _call(client, *_modern("unlock", {}, capabilities={}))
    assert status == 200
    assert done["result"]["resultType"] == "complete"
    assert done["result"]["content"][0]["text"] == "unsupported"


async def test_modern_stop_cancels_suspended_calls(
    hass: HomeAssistant, gateway: GatewayRuntime, client: TestClient, handler: AskingHandler
) -> None:
    """Home Assistant stopping while a call waits for its answer: nothing runs, ever."""
    _, first = await _call(client, *_modern("unlock", {}))
    assert len(gateway.server.continuations) == 1
    gateway.server.close()
    await asyncio.sleep(0)
    assert len(gateway.server.continuations) == 0
    key = next(iter(first["result"]["inputRequests"]))
    status, _ = await _call(
        client,
        *_modern(
            "unlock",
            {},
            2,
            inputResponses={key: {"action": "accept", "content": {"approve": True}}},
            requestState=first["result"]["requestState"],
        ),
    )
    assert status == 400
    assert handler.unlocked == 0


# --- pieces ---------------------------------------------------------------------------------


def test_supports_elicitation() -> None:
    """Form mode needs a version with elicitation and the capability (empty = form)."""
    assert supports_elicitation("2025-06-18", {"elicitation": {}})
    assert supports_elicitation("2025-11-25", {"elicitation": {"form": {}, "url": {}}})
    assert not supports_elicitation("2025-11-25", {"elicitation": {"url": {}}})
    assert not supports_elicitation("2025-03-26", {"elicitation": {}})
    assert not supports_elicitation("2025-06-18", {"elicitation": True})
    assert not supports_elicitation("2025-06-18", None)


def test_parse_result_never_accepts_by_accident() -> None:
    """Only a well-formed accept is an accept."""
    assert parse_result({"action": "accept"}).accepted
    assert parse_result({"action": "accept", "content": {"a": 1}}).content == {"a": 1}
    for bad in (None, [], {"action": "ACCEPT"}, {"action": "accept", "content": "yes"}):
        result = parse_result(bad)
        assert not result.accepted
        assert not result.answered
    assert parse_result({"action": "decline"}).answered


def test_fingerprint_tells_arguments_apart() -> None:
    """The retry must repeat the call exactly."""
    one = call_fingerprint("tools/call", "unlock", {"door": "a"})
    assert one == call_fingerprint("tools/call", "unlock", {"door": "a"})
    assert one != call_fingerprint("tools/call", "unlock", {"door": "b"})
    assert one != call_fingerprint("tools/call", "lock", {"door": "a"})
    both = call_fingerprint("tools/call", "x", {"a": 1, "b": 2})
    assert both == call_fingerprint("tools/call", "x", {"b": 2, "a": 1})
    assert call_fingerprint("tools/call", "x", {"n": 2**80})  # beyond orjson's integers


async def test_closing_the_request_cancels_a_call_that_asks_nothing() -> None:
    """2026-07-28: a client closing its request cancels the call it holds (the transport's
    cancellation signal); a call waiting for an answer is held by no request."""
    continuations = elicitation.Continuations()
    cancelled = asyncio.Event()

    async def slow(elicit: Any) -> dict[str, Any]:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    request = asyncio.ensure_future(continuations.start("ann", "f", slow, can_ask=True))
    await asyncio.sleep(0.01)
    request.cancel()
    await asyncio.wait_for(cancelled.wait(), 1)
    await asyncio.sleep(0)  # the task's end is noted on the next turn of the loop
    assert len(continuations) == 0

    async def asks(elicit: Any) -> dict[str, Any]:
        result = await elicit("Sure?", {"type": "object", "properties": {}}, timeout=5)
        return {"content": [], "action": result.action}

    first = await continuations.start("ann", "g", asks, can_ask=True)
    assert isinstance(first, elicitation.InputRequired)
    assert len(continuations) == 1
    done = await continuations.resume(
        "ann", "g", first.request_state, {"elicitation-1": {"action": "decline"}}
    )
    assert done == {"content": [], "action": "decline"}
    continuations.close()


async def test_a_stream_nobody_reads_times_out_as_declined() -> None:
    """A send that never completes (the client does not read its stream) ends at the limit."""

    class Stuck:
        async def send(self, message: dict[str, Any]) -> bool:
            await asyncio.sleep(10)
            return True

    class Gone:
        async def send(self, message: dict[str, Any]) -> bool:
            return False

    pending = elicitation.PendingRequests()
    schema = {"type": "object", "properties": {}}
    stuck = await elicitation.legacy_elicit(pending, Stuck(), "ann", "Sure?", schema, timeout=0.05)
    assert stuck == elicitation.TIMED_OUT
    gone = await elicitation.legacy_elicit(pending, Gone(), "ann", "Sure?", schema, timeout=1)
    assert gone == elicitation.UNANSWERED
    assert len(pending) == 0


async def test_limits_on_waiting_questions() -> None:
    """Beyond the questions allowed to wait at once, the client counts as unable to ask."""
    schema = {"type": "object", "properties": {}}

    class Fine:
        async def send(self, message: dict[str, Any]) -> bool:
            return True

    with pytest.raises(ElicitationUnsupportedError):
        await elicitation.legacy_elicit(
            elicitation.PendingRequests(max_pending=0), Fine(), "ann", "Sure?", schema
        )
    continuations = elicitation.Continuations(max_pending=0)

    async def asks(elicit: Any) -> dict[str, Any]:
        try:
            await elicit("Sure?", schema)
        except ElicitationUnsupportedError:
            return {"content": [], "unsupported": True}
        return {"content": []}

    assert await continuations.start("ann", "f", asks, can_ask=True) == {
        "content": [],
        "unsupported": True,
    }


async def test_error_answers_and_unseen_failures(caplog: pytest.LogCaptureFixture) -> None:
    """A JSON-RPC error answer is "unsupported"; a suspended call failing after its client
    stopped waiting is logged, not lost."""
    pending = elicitation.PendingRequests()
    sent: list[dict[str, Any]] = []

    class Recorder:
        async def send(self, message: dict[str, Any]) -> bool:
            sent.append(message)
            return True

    asking = asyncio.ensure_future(
        pending.ask(Recorder(), "ann", "elicitation/create", {}, timeout=5)
    )
    await asyncio.sleep(0)
    request_id = sent[0]["id"]
    assert not pending.resolve({"id": request_id, "result": {}}, "bob")  # not the asked user
    assert pending.resolve({"id": request_id, "error": {"code": -1, "message": "no"}}, "ann")
    with pytest.raises(ElicitationUnsupportedError):
        await asking
    assert not pending.resolve({"id": request_id, "result": {}}, "ann")  # answered already

    continuations = elicitation.Continuations()

    async def fails_later(elicit: Any) -> dict[str, Any]:
        await elicit("Sure?", {"type": "object", "properties": {}}, timeout=0.05)
        raise RuntimeError("broke")

    caplog.set_level("DEBUG", logger=elicitation.__name__)
    first = await continuations.start("ann", "f", fails_later, can_ask=True)
    assert isinstance(first, elicitation.InputRequired)
    for _ in range(50):
        if len(continuations) == 0:
            break
        await asyncio.sleep(0.02)
    assert "ended unseen" in caplog.text
    continuations.close()


async def test_post_stream_whose_client_left(hass: HomeAssistant, gateway: GatewayRuntime) -> None:
    """A POST stream that cannot be written reports the client gone, once and for good."""
    stream = PostStream(McpGatewayView(), make_mocked_request("POST", URL), keepalive=15)
    with patch("aiohttp.web.StreamResponse.prepare", side_effect=ConnectionResetError("gone")):
        assert not await stream.send({"jsonrpc": "2.0", "method": "ping"})
    assert stream.broken
    assert not await stream.send({"jsonrpc": "2.0", "method": "ping"})
    stream.stop()


async def test_remembered_capabilities_are_bounded(
    gateway: GatewayRuntime, client: TestClient, hass_access_token: str
) -> None:
    """What clients declared is remembered for a bounded number of token and agent pairs."""
    with patch("custom_components.mcp_gateway.gateway.http.view._MAX_CLIENT_NAMES", 1):
        for agent in ("app-one", "app-two"):
            body = rpc(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": ELICITING,
                    "clientInfo": {"name": agent, "version": "1"},
                },
            )
            headers = {"Authorization": f"Bearer {hass_access_token}", "User-Agent": agent}
            assert (await client.post(URL, json=body, headers=headers)).status == 200
    assert len(gateway._client_capabilities) == 1


async def test_a_question_only_for_the_client_that_declared_it(
    hass: HomeAssistant, client: TestClient, hass_access_token: str, handler: AskingHandler
) -> None:
    """Two clients share a token and User-Agent; only one declared elicitation. The other is
    never asked (nothing is guessed from the pair), nor is the id honoured with another token."""
    assert await _initialize(client, hass_access_token, {}) == ""  # the one that cannot ask
    session = await _initialize(client, hass_access_token, ELICITING)
    assert session
    call = rpc("tools/call", {"name": "unlock"})
    response = await client.post(URL, json=call, headers=_headers(hass_access_token))
    assert response.headers["Content-Type"] == "application/json"
    assert handler.contexts[-1].elicit is None
    other = await hass.auth.async_create_user("Guest", group_ids=["system-admin"])
    other_token = await make_token(hass, other)
    response = await client.post(URL, json=call, headers=_headers(other_token, session=session))
    assert response.headers["Content-Type"] == "application/json"
    assert handler.contexts[-1].elicit is None
    assert handler.unlocked == 0
