"""Rate limiters: how long a failed key waits before it is retried (client-go's defaults).

A limiter is a synchronous object with three methods (:class:`RateLimiter`). The rate-limiting
queue calls ``when(item)`` on every ``add_rate_limited`` and waits that long; the controller
calls ``forget(item)`` after a success so the item's backoff starts over.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Protocol, TypeVar, final

import cachetools

from ..clock import SYSTEM_CLOCK, Clock

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
]

T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

DEFAULT_MAX_TRACKED = 100_000
"""Per-item limiters remember at most this many items (least recently failed are dropped)."""


class RateLimiter(Protocol[T_contra]):
    """The seam for retry policies; write your own by implementing these three methods.

    All three are synchronous and must be cheap: they run on the event loop, between awaits.
    """

    def when(self, item: T_contra) -> float:
        """Record a failure of ``item`` and return how many seconds to wait before retrying it."""
        ...

    def forget(self, item: T_contra) -> None:
        """Stop tracking ``item`` (it succeeded): its next failure starts from scratch."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """How many failures of ``item`` are currently remembered."""
        ...


def _failure_cache(
    clock: Clock, max_tracked: int, ttl: float
) -> cachetools.TTLCache[Hashable, int]:
    return cachetools.TTLCache(maxsize=max_tracked, ttl=ttl, timer=clock.monotonic)


@final
class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: ``base * 2**failures``, capped at ``max_delay``.

    With the defaults the delays are 5 ms, 10 ms, 20 ms, ... and reach the 1000 s cap on the
    19th consecutive failure, exactly as client-go's ``DefaultControllerRateLimiter``.

    Unlike client-go, where the failure map grows until ``forget`` is called (B16), the failure
    counts live in a :class:`cachetools.TTLCache` on the injected clock: an entry expires
    ``ttl`` seconds after the item's last failure (default: twice ``max_delay``, so an item that
    keeps failing is never reset early) and at most ``max_tracked`` items are remembered (the
    least recently failed are dropped first). A missing ``forget`` therefore cannot leak memory;
    the cost is that a forgotten-by-expiry item restarts at ``base``.

    Args:
        base: the first delay, in seconds.
        max_delay: the cap, in seconds.
        clock: the clock the expiry of failure counts runs on.
        max_tracked: the most items remembered at once.
        ttl: seconds after its last failure that an item's count is dropped.
    """

    def __init__(
        self,
        base: float = 0.005,
        max_delay: float = 1000.0,
        *,
        clock: Clock = SYSTEM_CLOCK,
        max_tracked: int = DEFAULT_MAX_TRACKED,
        ttl: float | None = None,
    ) -> None:
        if base < 0 or max_delay < 0:
            raise ValueError(f"delays must be >= 0 (got base={base}, max_delay={max_delay})")
        self.base = base
        self.max_delay = max_delay
        self._failures = _failure_cache(clock, max_tracked, ttl or max(2 * max_delay, 1.0))

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # 2.0**1024 overflows a float; anything past 2**1000 is far beyond any cap anyway.
        backoff = self.base * math.ldexp(1.0, min(exp, 1000))
        return min(backoff, self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


@final
class ItemFastSlowRateLimiter:
    """``fast_delay`` for the first ``max_fast_attempts`` failures of an item, then ``slow_delay``.

    The count is incremented before the check (client-go): failures 1..max_fast_attempts are
    fast. Failure counts are bounded the same way as :class:`ItemExponentialFailureRateLimiter`.
    """

    def __init__(
        self,
        fast_delay: float,
        slow_delay: float,
        max_fast_attempts: int,
        *,
        clock: Clock = SYSTEM_CLOCK,
        max_tracked: int = DEFAULT_MAX_TRACKED,
        ttl: float | None = None,
    ) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        default_ttl = max(2 * max(fast_delay, slow_delay), 1.0)
        self._failures = _failure_cache(clock, max_tracked, ttl or default_ttl)

    def when(self, item: Hashable) -> float:
        count = self._failures.get(item, 0) + 1
        self._failures[item] = count
        return self.fast_delay if count <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


@final
class BucketRateLimiter:
    """One token bucket shared by all items (golang.org/x/time/rate reservation semantics).

    ``when`` takes a token and returns how long until that token exists; the reservation is
    never given back. Tokens refill at ``qps`` per second up to ``burst``. Defaults: 10 qps,
    burst 100 (client-go).

    Caveats:
        Because every call reserves, a mass failure builds a growing *global* delay: 10,000
        failures at 10 qps push the last retry ~16 minutes out (B15). Wrap it in
        :class:`WithMaxWaitRateLimiter` to cap the wait, or leave it out of the limiter.
    """

    def __init__(self, qps: float = 10.0, burst: int = 100, *, clock: Clock = SYSTEM_CLOCK) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be > 0 (got {qps}); use math.inf for no limit")
        if burst < 1 and not math.isinf(qps):
            raise ValueError(f"burst must be >= 1 (got {burst})")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.monotonic()

    def when(self, item: Hashable) -> float:
        if math.isinf(self.qps):
            return 0.0
        now = self._clock.monotonic()
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


@final
class MaxOfRateLimiter:
    """The longest delay of several limiters; every limiter is consulted on every call.

    ``num_requeues`` is the largest of theirs and ``forget`` forgets on all of them.
    """

    def __init__(self, *limiters: RateLimiter[Hashable]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters: Sequence[RateLimiter[Hashable]] = limiters

    def when(self, item: Hashable) -> float:
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


@final
class WithMaxWaitRateLimiter:
    """Caps another limiter's delay at ``max_wait`` seconds (client-go ``WithMaxWaitRateLimiter``).

    The wrapped limiter still records the failure (a bucket still spends its token).
    """

    def __init__(self, limiter: RateLimiter[Hashable], max_wait: float) -> None:
        self.limiter = limiter
        self.max_wait = max_wait

    def when(self, item: Hashable) -> float:
        return min(self.limiter.when(item), self.max_wait)

    def forget(self, item: Hashable) -> None:
        self.limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return self.limiter.num_requeues(item)


def default_controller_rate_limiter(*, clock: Clock = SYSTEM_CLOCK) -> MaxOfRateLimiter:
    """client-go's ``DefaultControllerRateLimiter``.

    ``max(exponential 5 ms .. 1000 s per item, token bucket 10 qps / burst 100 overall)``.

    Args:
        clock: the clock both limiters read.

    Returns:
        A fresh limiter (never share one between queues: the bucket would be shared too).
    """
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0, clock=clock),
        BucketRateLimiter(10.0, 100, clock=clock),
    )
