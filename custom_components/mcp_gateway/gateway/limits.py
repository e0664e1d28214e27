"""Per-user rate limit for the gateway: a token bucket per user, refilled continuously."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math
import time
from typing import Final

# Above this many tracked users, buckets that have refilled completely are forgotten.
_PRUNE_ABOVE: Final = 1024


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """Allows `per_minute` requests per key and minute, with bursts up to `per_minute`."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError("per_minute must be at least 1")
        self.per_minute = per_minute
        self._rate = per_minute / 60.0  # tokens per second
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def acquire(self, key: str, cost: int = 1) -> int | None:
        """Take `cost` requests for `key` at once: None when allowed, else seconds to wait.

        A cost above the budget can never pass; it waits a full minute (the client must send
        less at once).
        """
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= _PRUNE_ABOVE:
                self._prune(now)
            bucket = self._buckets[key] = _Bucket(float(self.per_minute), now)
        else:
            elapsed = max(0.0, now - bucket.updated)
            bucket.tokens = min(float(self.per_minute), bucket.tokens + elapsed * self._rate)
            bucket.updated = now
        if bucket.tokens >= cost:
            bucket.tokens -= cost
            return None
        if cost > self.per_minute:
            return 60
        # Whole seconds, at least one: Retry-After carries an integer.
        return max(1, math.ceil((cost - bucket.tokens) / self._rate))

    def _prune(self, now: float) -> None:
        full = [
            key
            for key, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.updated) * self._rate >= self.per_minute
        ]
        for key in full:
            del self._buckets[key]

    def __len__(self) -> int:
        """How many keys are tracked (memory stays bounded by pruning)."""
        return len(self._buckets)
