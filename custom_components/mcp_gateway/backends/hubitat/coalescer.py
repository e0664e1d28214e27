"""Coalesces concurrent device commands into batched writes, at most 2 in flight.

Home Assistant turns "turn on the kitchen" into one service call per light, all in the same
event-loop tick. The hub runs at most two writes at once and takes up to 20 commands per call,
so commands issued together are collected for a few milliseconds and sent as one batch; while
both write slots are busy, new commands wait and leave together as the next batch. Each caller
gets its own command's outcome: a failed entry raises for that caller only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
import logging

from ...mcp.errors import McpRpcError, McpToolError
from .api import BUSY_STATUS, Command, CommandOutcome, HubitatKeyRefusedError
from .const import COALESCE_WINDOW, MAX_BATCH, MAX_WRITES_IN_FLIGHT

_LOGGER = logging.getLogger(__name__)

type Sender = Callable[[Sequence[Command]], Awaitable[list[CommandOutcome]]]

INVALID_PARAMS = -32602
# The hub's answer when its two write slots are taken (by us or another MCP client).
BUSY_ERROR = BUSY_STATUS
BUSY_RETRIES = 2
BUSY_DELAY = 0.25  # seconds, times the attempt number


@dataclass(slots=True)
class _Pending:
    command: Command
    future: asyncio.Future[None]
    on_success: Callable[[], None] | None = None


@dataclass(slots=True)
class CoalescerStats:
    """Counters for diagnostics and benchmarks."""

    commands: int = 0
    calls: int = 0
    max_batch: int = 0
    max_in_flight: int = 0


class WriteCoalescer:
    """Queue of device commands drained as batches by at most `max_in_flight` writers."""

    def __init__(
        self,
        send: Sender,
        *,
        max_batch: int = MAX_BATCH,
        max_in_flight: int = MAX_WRITES_IN_FLIGHT,
        window: float = COALESCE_WINDOW,
        busy_retries: int = BUSY_RETRIES,
        busy_delay: float = BUSY_DELAY,
    ) -> None:
        self._send = send
        self._busy_retries = busy_retries
        self._busy_delay = busy_delay
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        self._window = window
        self._pending: list[_Pending] = []
        self._in_flight = 0
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self.stats = CoalescerStats()

    @property
    def in_flight(self) -> int:
        """Write calls currently on the wire."""
        return self._in_flight

    async def submit(self, command: Command, on_success: Callable[[], None] | None = None) -> None:
        """Send a command with whatever else is issued now; raise if the hub refused it.

        `on_success` runs as soon as the batch's answer is in, before any caller resumes, so
        a whole batch's optimistic effects are in place when the first caller refreshes the UI.
        """
        if self._closed:
            raise RuntimeError("the write queue is closed")
        loop = asyncio.get_running_loop()
        pending = _Pending(command, loop.create_future(), on_success)
        self._pending.append(pending)
        self.stats.commands += 1
        if self._timer is None and self._in_flight < self._max_in_flight:
            self._timer = loop.call_later(self._window, self._drain)
        await pending.future

    def _drain(self) -> None:
        """Start batches while there is work and a free write slot."""
        self._timer = None
        while self._pending and self._in_flight < self._max_in_flight and not self._closed:
            batch, self._pending = (
                self._pending[: self._max_batch],
                self._pending[self._max_batch :],
            )
            self._in_flight += 1
            self.stats.calls += 1
            self.stats.max_batch = max(self.stats.max_batch, len(batch))
            self.stats.max_in_flight = max(self.stats.max_in_flight, self._in_flight)
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[_Pending]) -> None:
        try:
            await self._deliver(batch)
        except asyncio.CancelledError:
            _fail(batch, RuntimeError("the write queue closed"))
            raise
        finally:
            self._in_flight -= 1
            # Whatever queued up meanwhile has waited long enough: send it now.
            if self._pending and self._timer is None:
                self._drain()

    async def _deliver(self, batch: list[_Pending]) -> None:
        commands = [item.command for item in batch]
        try:
            outcomes = await self._send(commands)
            for attempt in range(1, self._busy_retries + 1):
                if not _all_busy(outcomes):
                    break
                # Another client holds the hub's write slots; the hub refused before running
                # anything, so sending again is safe.
                _LOGGER.debug("Hub busy with other writes; retry %d of the batch", attempt)
                await asyncio.sleep(self._busy_delay * attempt)
                outcomes = await self._send(commands)
        except HubitatKeyRefusedError as err:
            _fail(batch, err)
            return
        except McpRpcError as err:
            if err.code == INVALID_PARAMS and len(batch) > 1:
                # The hub validates a batch as a whole: one bad entry (an unknown command,
                # a device gone) refuses all. Retry one by one so each caller gets its own answer.
                _LOGGER.debug("Batch of %d refused (%s); sending one by one", len(batch), err)
                await self._deliver_singly(batch)
                return
            _fail(batch, err)
            return
        except Exception as err:  # every caller must hear of any failure
            _fail(batch, err)
            return
        for item, outcome in zip(batch, outcomes, strict=False):
            if item.future.done():
                continue
            if outcome.success:
                if item.on_success is not None:
                    item.on_success()
                item.future.set_result(None)
            elif outcome.busy is not None:
                item.future.set_exception(outcome.busy)
            else:
                item.future.set_exception(
                    McpToolError(f"{item.command.command}: {outcome.error or 'failed'}")
                )
        _fail(batch, McpToolError("the hub did not report this command"))

    async def _deliver_singly(self, batch: list[_Pending]) -> None:
        for item in batch:
            await self._deliver([item])

    async def async_close(self) -> None:
        """Stop: pending commands fail, batches on the wire are cancelled."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        _fail(self._pending, RuntimeError("the write queue closed"))
        self._pending = []
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def _all_busy(outcomes: Sequence[CommandOutcome]) -> bool:
    """Whether the hub refused the whole call for its write cap (nothing ran)."""
    return bool(outcomes) and all(
        not outcome.success and BUSY_ERROR in (outcome.error or "") for outcome in outcomes
    )


def _fail(batch: Sequence[_Pending], err: BaseException) -> None:
    """Fail every caller of a batch that has no answer yet."""
    for item in batch:
        if not item.future.done():
            item.future.set_exception(err)
