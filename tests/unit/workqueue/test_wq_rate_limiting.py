"""The rate-limiting queue: add_rate_limited / forget / num_requeues on a fake clock."""

from __future__ import annotations

import pytest

from kcm.testing import FakeClock
from kcm.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue

pytestmark = pytest.mark.anyio


async def test_failures_back_off_exponentially_and_forget_resets() -> None:
    clock = FakeClock()
    limiter = ItemExponentialFailureRateLimiter(1.0, 100.0, clock=clock)
    async with RateLimitingQueue[str](limiter, clock=clock) as q:
        for expected in (1.0, 2.0, 4.0):
            q.add_rate_limited("a")
            await clock.advance(expected - 0.001)
            assert len(q) == 0
            await clock.advance(0.001)
            assert len(q) == 1
            q.done(q.get_nowait())
        assert q.num_requeues("a") == 3
        q.add("a")
        q.forget("a")
        assert q.num_requeues("a") == 0
        assert len(q) == 1  # forget does not remove it from the queue
        q.done(q.get_nowait())
        q.add_rate_limited("a")
        await clock.advance(1.0)
        assert len(q) == 1  # back to the base delay


async def test_default_limiter_uses_the_queue_clock() -> None:
    clock = FakeClock()
    async with RateLimitingQueue[str](clock=clock) as q:
        q.add_rate_limited("a")
        await clock.advance(0.004)
        assert len(q) == 0
        await clock.advance(0.001)
        assert len(q) == 1
        assert q.num_requeues("a") == 1


async def test_reopen_keeps_the_backoff_and_the_retries_waiting() -> None:
    clock = FakeClock()
    limiter = ItemExponentialFailureRateLimiter(1.0, 100.0, clock=clock)
    q = RateLimitingQueue[str](limiter, clock=clock)
    async with q:
        q.add_rate_limited("a")  # due in 1 s
        q.add_rate_limited("a")  # 2 s: the earlier time stays
    assert q.shutting_down
    assert q.waiting == 0
    q.reopen()
    assert q.num_requeues("a") == 2
    assert q.waiting == 1
    async with q:
        await clock.advance(1.0)
        assert q.get_nowait() == "a"
        q.done("a")
        q.add_rate_limited("a")  # the third failure: 4 s, not back to 1 s
        await clock.advance(3.999)
        assert len(q) == 0
        await clock.advance(0.001)
        assert len(q) == 1
