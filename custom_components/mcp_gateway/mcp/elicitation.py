"""Asking the client's person a question in the middle of a request (MCP elicitation).

A tool handler awaits `ctx.elicit(message, schema, timeout=…)`; how the question travels
depends on the era, and the handler never sees the difference:
- legacy (2025-06-18 and later): a JSON-RPC request `elicitation/create` goes to the client
  over a stream the transport gives (`Outbound`), and the client POSTs its response, which
  `PendingRequests` hands back to the waiting handler;
- modern (2026-07-28, stateless): the call answers `resultType: "input_required"` with the
  question in `inputRequests` and an opaque `requestState`; the handler stays suspended here
  (`Continuations`) until the client calls again with `inputResponses` and that state.

An answer that never comes, a malformed one, an unknown state or a client gone all end as
"cancel" or "decline": never as "accept". Nothing here imports Home Assistant.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
import hashlib
import json
import logging
import secrets
from typing import Any, Final, Literal, Protocol

from .types import (
    CallToolResult,
    ElicitAction,
    ElicitInputRequest,
    ElicitRequest,
    ElicitRequestedSchema,
    ElicitRequestParams,
    InputRequiredResult,
    ServerRequest,
)

_LOGGER = logging.getLogger(__name__)

ELICIT_METHOD: Final[Literal["elicitation/create"]] = "elicitation/create"
# Elicitation appeared in 2025-06-18; older legacy versions have no such request.
ELICITATION_VERSIONS: Final = frozenset({"2025-06-18", "2025-11-25", "2026-07-28"})
DEFAULT_TIMEOUT: Final = 60.0
# Questions waiting for an answer at once, over all clients: each holds a handler suspended.
MAX_PENDING: Final = 64
# Questions one owner (user) may hold at once: no one user fills the slots. When every slot is
# taken, the owner holding the most gives up its oldest question to an owner holding fewer
# (it ends unanswered), so the owner of the home is asked whatever other users hold.
MAX_PENDING_PER_OWNER: Final = 8
# Seconds a modern question's requestState stays valid after its time limit.
STATE_GRACE: Final = 30.0
# The requestState of a modern continuation, and the JSON-RPC id of a legacy question: both
# unguessable, so an answer can come only from the client that was asked.
_TOKEN_BYTES: Final = 24


@dataclass(frozen=True, slots=True)
class ElicitationResult:
    """The person's answer: accept (with the form's content), decline or cancel.

    `answered` is False when no answer came at all (time limit, client gone, error, malformed
    reply); such a result is always "cancel" or "decline".
    """

    action: ElicitAction
    content: Mapping[str, Any] = field(default_factory=dict)
    answered: bool = True

    @property
    def accepted(self) -> bool:
        """Whether the person accepted."""
        return self.action == "accept"


class Elicit(Protocol):
    """`ctx.elicit`: ask the client's person; the answer, never an exception for none."""

    def __call__(
        self,
        message: str,
        requested_schema: ElicitRequestedSchema,
        *,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Awaitable[ElicitationResult]:
        """Ask; ElicitationUnsupportedError when the client turns out unable to show it."""


UNANSWERED: Final = ElicitationResult("cancel", answered=False)
TIMED_OUT: Final = ElicitationResult("decline", answered=False)


class ElicitationUnsupportedError(Exception):
    """The client cannot show the question after all (it answered with an error)."""


def supports_elicitation(version: str, capabilities: Any) -> bool:
    """Whether a client of this version with these capabilities may be asked (form mode)."""
    if version not in ELICITATION_VERSIONS or not isinstance(capabilities, Mapping):
        return False
    elicitation = capabilities.get("elicitation")
    if not isinstance(elicitation, Mapping):
        return False
    # An empty object means form mode only; with modes listed, form must be one of them.
    return not elicitation or "form" in elicitation


def elicit_params(message: str, requested_schema: ElicitRequestedSchema) -> ElicitRequestParams:
    """The params of an `elicitation/create` request in form mode (the mode left out: it is
    the default, and 2025-06-18 clients know no other)."""
    return {"message": message, "requestedSchema": requested_schema.copy()}


def parse_result(value: Any) -> ElicitationResult:
    """An ElicitResult from the wire; anything malformed is "cancel" (nothing accepted)."""
    if not isinstance(value, Mapping):
        return UNANSWERED
    action = value.get("action")
    if action == "accept":
        content = value.get("content")
        if content is None:
            content = {}
        if not isinstance(content, Mapping):
            return UNANSWERED
        return ElicitationResult("accept", content)
    if action in ("decline", "cancel"):
        return ElicitationResult(action)
    return UNANSWERED


def _token(prefix: str) -> str:
    return f"{prefix}-{secrets.token_urlsafe(_TOKEN_BYTES)}"


# --- legacy: a server request over a stream, its response POSTed back -----------------------


class Outbound(Protocol):
    """A transport's way to send a JSON-RPC message to the client during a request."""

    async def send(self, message: ServerRequest) -> bool:
        """Send it; False when the client can no longer be reached."""


@dataclass(slots=True)
class _Waiter:
    owner: Any
    future: asyncio.Future[Any]


def _same(owner: Any, other: Any) -> bool:
    return owner is other or owner == other


def _oldest_of_busiest(owners: list[tuple[str, Any]], owner: Any) -> str | None:
    """The key of the oldest entry of the owner holding the most, when that owner holds more
    than `owner` (entries in age order, as (key, owner)); else None."""
    counts: list[tuple[Any, int, str]] = []  # owner, how many, its oldest key
    for key, held_by in owners:
        for index, (known, count, oldest) in enumerate(counts):
            if _same(known, held_by):
                counts[index] = (known, count + 1, oldest)
                break
        else:
            counts.append((held_by, 1, key))
    mine = sum(count for known, count, _ in counts if _same(known, owner))
    busiest = max(counts, key=lambda item: item[1], default=None)
    if busiest is None or busiest[1] <= mine:
        return None
    return busiest[2]


class PendingRequests:
    """Server-to-client requests waiting for their response, by JSON-RPC id.

    A response counts only from the user the request went to; anyone else's is ignored (as
    is a response to an id never sent or already answered), so an answer cannot be forged
    or replayed by another client of the same server. Slots are shared fairly between owners
    (MAX_PENDING_PER_OWNER).
    """

    def __init__(
        self, max_pending: int = MAX_PENDING, max_per_owner: int = MAX_PENDING_PER_OWNER
    ) -> None:
        self.max_pending = max_pending
        self.max_per_owner = max_per_owner
        self._waiters: dict[str, _Waiter] = {}

    def __len__(self) -> int:
        return len(self._waiters)

    async def ask(
        self,
        outbound: Outbound,
        owner: Any,
        method: Literal["elicitation/create"],
        params: ElicitRequestParams,
        timeout: float,  # noqa: ASYNC109 - the question's own time limit
    ) -> Any:
        """Send a request and await its result; TimeoutError, or ElicitationUnsupportedError
        when the client answered with an error, or ConnectionError when it went away."""
        if not self._make_room(owner):
            raise ElicitationUnsupportedError("too many questions waiting")
        request_id = _token("elicit")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiters[request_id] = _Waiter(owner, future)
        try:
            message: ElicitRequest = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": method,
                "params": params,
            }
            # Sending counts against the limit too: a client that does not read its stream
            # can hold the send (a full session queue) as long as the answer.
            async with asyncio.timeout(timeout):
                if not await outbound.send(message):
                    raise ConnectionError("the client's stream is closed")
                return await future
        finally:
            self._waiters.pop(request_id, None)

    def _make_room(self, owner: Any) -> bool:
        """Whether `owner` may ask one more question, making room if every slot is taken."""
        held = sum(1 for waiter in self._waiters.values() if _same(waiter.owner, owner))
        if held >= self.max_per_owner:
            return False
        if len(self._waiters) < self.max_pending:
            return True
        victim = _oldest_of_busiest([(k, w.owner) for k, w in self._waiters.items()], owner)
        if victim is None:
            return False
        waiter = self._waiters.pop(victim)
        if not waiter.future.done():
            # Given up unanswered: the asking handler goes on as if nobody answered.
            waiter.future.set_exception(ConnectionError("the question gave up its slot"))
        _LOGGER.debug("A question gave up its slot to another user's")
        return True

    def resolve(self, message: Mapping[str, Any], owner: Any) -> bool:
        """Deliver a client's response; False when it answers nothing we wait for."""
        request_id = message.get("id")
        waiter = self._waiters.get(request_id) if isinstance(request_id, str) else None
        if waiter is None:
            return False
        if waiter.owner != owner:
            _LOGGER.warning("Ignored a response to another user's question")
            return False
        del self._waiters[request_id]  # type: ignore[arg-type]
        if waiter.future.done():
            return False
        if "error" in message:
            error = message.get("error")
            text = error.get("message") if isinstance(error, Mapping) else None
            waiter.future.set_exception(ElicitationUnsupportedError(str(text)))
        else:
            waiter.future.set_result(message.get("result"))
        return True


async def legacy_elicit(
    pending: PendingRequests,
    outbound: Outbound,
    owner: Any,
    message: str,
    requested_schema: ElicitRequestedSchema,
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - the question's own time limit
) -> ElicitationResult:
    """Ask over a legacy stream; the answer, or a declined/cancelled stand-in for none."""
    params = elicit_params(message, requested_schema)
    try:
        result = await pending.ask(outbound, owner, ELICIT_METHOD, params, timeout)
    except TimeoutError:
        return TIMED_OUT
    except (ConnectionError, OSError):
        return UNANSWERED
    return parse_result(result)


# --- modern: input_required, the handler suspended until the client calls again -------------


@dataclass(frozen=True, slots=True)
class InputRequired:
    """What a modern call answers while its handler waits: the questions and the state."""

    input_requests: dict[str, ElicitInputRequest]
    request_state: str

    def result(self) -> InputRequiredResult:
        """The `input_required` result."""
        return {
            "resultType": "input_required",
            "inputRequests": self.input_requests,
            "requestState": self.request_state,
        }


@dataclass(eq=False)
class _Continuation:
    """One suspended call: its owner, what it was called with, and the question it asks."""

    owner: Any
    fingerprint: str
    task: asyncio.Task[CallToolResult] | None = None
    # The next thing the client is told: a question, or (the task being done) nothing.
    asked: asyncio.Future[InputRequired] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    key: str | None = None
    answer: asyncio.Future[ElicitationResult] | None = None
    # Whether a request of the client waits for the call's outcome right now.
    waited: bool = True


def call_fingerprint(method: str, name: str, arguments: Mapping[str, Any]) -> str:
    """What a retry must repeat exactly: the method, the target and the arguments."""
    # Keys sorted: a client may rebuild the same arguments in another order.
    text = json.dumps([method, name, arguments], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


class UnknownRequestStateError(Exception):
    """A retry's requestState names no suspended call of this caller and arguments."""


class Continuations:
    """Calls suspended on a question, by requestState (2026-07-28 multi round-trip requests).

    The state is a random token, valid once: the retry that carries it takes the suspended
    call over, and any further question gets a new one. A call whose question is not answered
    within its time limit goes on as declined and finishes unseen; a retry after that, after
    a restart, by another user or with other arguments finds nothing.
    """

    def __init__(
        self, max_pending: int = MAX_PENDING, max_per_owner: int = MAX_PENDING_PER_OWNER
    ) -> None:
        self.max_pending = max_pending
        self.max_per_owner = max_per_owner
        self._by_state: dict[str, _Continuation] = {}
        self._expiry: dict[str, asyncio.TimerHandle] = {}
        self._running: set[_Continuation] = set()

    def __len__(self) -> int:
        return len(self._running)

    async def start(
        self,
        owner: Any,
        fingerprint: str,
        run: Callable[[Elicit | None], Awaitable[CallToolResult]],
        can_ask: bool,
    ) -> CallToolResult | InputRequired:
        """Run a call; its result, or the question it asks first."""
        if not can_ask:
            # Nothing to suspend on: the call runs in the request, cancelled with it.
            return await run(None)
        cont = _Continuation(owner, fingerprint)

        async def elicit(
            message: str,
            requested_schema: ElicitRequestedSchema,
            *,
            timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109 - the question's own limit
        ) -> ElicitationResult:
            return await self._ask(cont, message, requested_schema, timeout)

        cont.task = asyncio.create_task(_run(run, elicit))
        self._running.add(cont)
        cont.task.add_done_callback(lambda task: self._finished(cont, task))
        return await self._next(cont)

    def _finished(self, cont: _Continuation, task: asyncio.Task[CallToolResult]) -> None:
        self._running.discard(cont)
        # Nobody may be waiting any more (the client never came back): retrieve the outcome,
        # so a failure is logged once here rather than as a lost exception.
        if not task.cancelled() and (err := task.exception()) is not None and not cont.waited:
            _LOGGER.debug("A suspended call ended unseen: %r", err)

    async def resume(
        self, owner: Any, fingerprint: str, request_state: str, responses: Any
    ) -> CallToolResult | InputRequired:
        """Continue the call suspended under `request_state` with the client's answers."""
        cont = self._by_state.get(request_state)
        if cont is None or cont.owner != owner or cont.fingerprint != fingerprint:
            if cont is not None:
                _LOGGER.warning("Ignored a requestState presented by another caller or call")
            raise UnknownRequestStateError(request_state)
        del self._by_state[request_state]
        if (handle := self._expiry.pop(request_state, None)) is not None:
            handle.cancel()
        answer = cont.answer
        cont.waited = True
        response = responses.get(cont.key) if isinstance(responses, Mapping) else None
        cont.asked = asyncio.get_running_loop().create_future()
        if answer is not None and not answer.done():
            answer.set_result(parse_result(response))
        return await self._next(cont)

    async def _ask(
        self,
        cont: _Continuation,
        message: str,
        requested_schema: ElicitRequestedSchema,
        timeout: float,  # noqa: ASYNC109 - the question's own time limit
    ) -> ElicitationResult:
        if cont.asked.done() or not self._make_room(cont.owner):
            raise ElicitationUnsupportedError("too many questions waiting")
        state = _token("mrtr")
        key = f"elicitation-{len(self._by_state) + 1}"
        loop = asyncio.get_running_loop()
        cont.key = key
        cont.waited = False
        cont.answer = loop.create_future()
        # The state outlives the question a little: a retry that comes after the call went
        # on without its answer (time limit, decided elsewhere) learns how the call ended.
        self._by_state[state] = cont
        self._expiry[state] = loop.call_later(timeout + STATE_GRACE, self._forget, state)
        request: ElicitInputRequest = {
            "method": ELICIT_METHOD,
            "params": elicit_params(message, requested_schema),
        }
        cont.asked.set_result(InputRequired({key: request}, state))
        try:
            async with asyncio.timeout(timeout):
                return await cont.answer
        except TimeoutError:
            return TIMED_OUT
        finally:
            cont.answer = None

    def _forget(self, state: str) -> None:
        self._by_state.pop(state, None)
        self._expiry.pop(state, None)

    def _make_room(self, owner: Any) -> bool:
        """Whether `owner` may ask one more question, making room if its own or every slot
        is taken. A state whose question has ended (kept only to tell a late retry how the
        call ended) goes first; an open question given up ends unanswered."""
        mine = [state for state, cont in self._by_state.items() if _same(cont.owner, owner)]
        if len(mine) >= self.max_per_owner:
            ended = [state for state in mine if not self._open(state)]
            if not ended:
                return False
            self._give_up(ended[0])
        if len(self._by_state) < self.max_pending:
            return True
        ended = [state for state in self._by_state if not self._open(state)]
        if ended:
            self._give_up(ended[0])
            return True
        victim = _oldest_of_busiest([(k, c.owner) for k, c in self._by_state.items()], owner)
        if victim is None:
            return False
        self._give_up(victim)
        _LOGGER.debug("A question gave up its slot to another user's")
        return True

    def _open(self, state: str) -> bool:
        answer = self._by_state[state].answer
        return answer is not None and not answer.done()

    def _give_up(self, state: str) -> None:
        cont = self._by_state.pop(state)
        if (handle := self._expiry.pop(state, None)) is not None:
            handle.cancel()
        if cont.answer is not None and not cont.answer.done():
            cont.answer.set_result(UNANSWERED)

    @staticmethod
    async def _next(cont: _Continuation) -> CallToolResult | InputRequired:
        """Wait for the call to ask a question or to finish, whichever comes first.

        The client closing its request while the call runs cancels the call (the transport's
        cancellation signal); once the call waits for an answer, no request holds it.
        """
        task = cont.task
        assert task is not None
        asked = cont.asked
        waiting: set[asyncio.Future[Any]] = {task, asked}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if not asked.done():
                task.cancel()
            raise
        if asked.done():
            return asked.result()
        if task.cancelled():
            raise UnknownRequestStateError("the call was cancelled")
        return task.result()

    def close(self) -> None:
        """Cancel every suspended call (the server stops): none of them runs on."""
        self._by_state.clear()
        for handle in self._expiry.values():
            handle.cancel()
        self._expiry.clear()
        for cont in list(self._running):
            if cont.task is not None:
                cont.task.cancel()
        self._running.clear()


async def _run(
    run: Callable[[Elicit | None], Awaitable[CallToolResult]], elicit: Elicit | None
) -> CallToolResult:
    return await run(elicit)
