"""Client-side request rate limit: a token bucket, as client-go's ``flowcontrol`` limiter.

The bookkeeping is synchronous (:meth:`TokenBucket.reserve`); only the wait is async, on an
injected :class:`kcm.clock.Clock`, so tests drive it with a fake clock.
"""

from __future__ import annotations

from kcm.clock import SYSTEM_CLOCK, Clock

__all__ = ["TokenBucket"]


class TokenBucket:
    """``qps`` tokens per second, at most ``burst`` saved up; ``qps <= 0`` disables it.

    Each request takes one token. When none is left the request reserves the next one and
    waits for it, so waiters are served in arrival order at exactly ``qps`` (Go's
    ``rate.Limiter.Wait``).

    Caveats:
        A waiter that is cancelled still consumes its reservation (as in Go), so a storm of
        cancelled requests slows the next ones down by at most their count / qps.
    """

    def __init__(self, qps: float, burst: int, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.qps = qps
        self.burst = max(1, burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._last = clock.monotonic()

    @property
    def enabled(self) -> bool:
        return self.qps > 0

    def reserve(self) -> float:
        """Take one token now; return how many seconds the caller must wait before using it."""
        if self.qps <= 0:
            return 0.0
        now = self._clock.monotonic()
        elapsed = max(0.0, now - self._last)
        self._last = now
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    async def acquire(self) -> None:
        """Wait for one token."""
        delay = self.reserve()
        if delay > 0:
            await self._clock.sleep(delay)
