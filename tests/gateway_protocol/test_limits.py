"""The per-user token bucket, driven by a fake clock."""

from __future__ import annotations

import pytest

from custom_components.mcp_gateway.permissions import limits
from custom_components.mcp_gateway.permissions.limits import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_steady_rate() -> None:
    """A burst up to the bucket size passes, then requests wait for the steady refill."""
    clock = Clock()
    limiter = RateLimiter(6, clock=clock)  # one every 10 s, bursts of 6
    assert [limiter.acquire("a") for _ in range(6)] == [None] * 6
    assert limiter.acquire("a") == 10
    clock.now = 4.0
    assert limiter.acquire("a") == 6
    clock.now = 10.0
    assert limiter.acquire("a") is None
    assert limiter.acquire("a") == 10
    # Other keys are independent.
    assert limiter.acquire("b") is None
    # A long pause refills to the burst size, not beyond.
    clock.now = 10_000.0
    assert [limiter.acquire("a") for _ in range(7)] == [None] * 6 + [10]


def test_a_clock_going_backwards_grants_nothing_extra() -> None:
    """A clock that goes backwards refills nothing."""
    clock = Clock()
    limiter = RateLimiter(1, clock=clock)
    clock.now = 100.0
    assert limiter.acquire("a") is None
    clock.now = 50.0
    assert limiter.acquire("a") == 60


def test_retry_after_is_a_whole_second_at_least() -> None:
    """Retry-After is at least one whole second."""
    clock = Clock()
    limiter = RateLimiter(6000, clock=clock)  # 100 per second
    for _ in range(6000):
        limiter.acquire("a")
    assert limiter.acquire("a") == 1


def test_memory_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limiter forgets buckets that have refilled, so its memory stays bounded."""
    monkeypatch.setattr(limits, "_PRUNE_ABOVE", 10)
    clock = Clock()
    limiter = RateLimiter(60, clock=clock)
    for user in range(10):
        limiter.acquire(f"u{user}")
    assert len(limiter) == 10
    clock.now = 0.5  # not refilled yet: nobody can be forgotten
    limiter.acquire("new-1")
    assert len(limiter) == 11
    clock.now = 120.0  # everyone refilled: their buckets are dropped
    limiter.acquire("new-2")
    assert len(limiter) == 1


def test_rejects_a_useless_limit() -> None:
    """A limit below one request is refused."""
    with pytest.raises(ValueError, match="at least 1"):
        RateLimiter(0)
