"""Per-user rate limits: a token bucket per user, refilled continuously, and the one budget
every door charges (the gateway's views, HA's LLM API, the integration's actions)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import math
import time
from typing import TYPE_CHECKING, Final

from homeassistant.util.hass_dict import HassKey

from ..core.const import DOMAIN
from ..core.settings import gateway_settings

if TYPE_CHECKING:
    from homeassistant.auth.models import User
    from homeassistant.core import HomeAssistant

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


class UserRates:
    """The request budget of each user, shared by every door so that none multiplies it."""

    __slots__ = ("_limiter", "clock")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock  # replaced in tests to drive the rate limit
        self._limiter: RateLimiter | None = None

    def retry_after(self, user_id: str, per_minute: int, cost: int = 1) -> int | None:
        """Charge `cost` requests to the user; seconds to wait when over the limit, else None."""
        if self._limiter is None or self._limiter.per_minute != per_minute:
            # Read at each call: a clock replaced later (tests) still drives the limiter.
            self._limiter = RateLimiter(per_minute, clock=lambda: self.clock())  # noqa: PLW0108
        return self._limiter.acquire(user_id, cost)


DATA_USER_RATES: HassKey[UserRates] = HassKey(f"{DOMAIN}_user_rates")


def charge_user(hass: HomeAssistant, user: User, cost: int = 1) -> int | None:
    """Charge the user's rate limit from a door that is no gateway view (HA's LLM API, the
    integration's actions): seconds to wait when over it, else None (also before the gateway
    is set up)."""
    if (rates := hass.data.get(DATA_USER_RATES)) is None:
        return None
    return rates.retry_after(user.id, gateway_settings(hass).rate_limit_per_minute, cost)
