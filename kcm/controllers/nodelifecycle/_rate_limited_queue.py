"""The per-zone queue of nodes waiting for a NoExecute taint, drained at a limited rate.

kube-controller-manager's ``RateLimitedTimedQueue``: a node is queued once (adding it again
while it is queued, or after it was processed and before it is removed, does nothing), and
each pass takes nodes in the order they were queued while a token bucket (burst 1) has
tokens. Time is the injected clock's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kcm.clock import Clock

__all__ = ["RateLimitedTimedQueue", "TokenBucket"]


class TokenBucket:
    """``qps`` tokens a second up to ``burst``, starting full; ``qps <= 0`` never gives one."""

    def __init__(self, qps: float, clock: Clock, *, burst: int = 1) -> None:
        self.qps = qps
        self._clock = clock
        self._burst = burst
        self._tokens = float(burst)
        self._last = clock.monotonic()

    def __repr__(self) -> str:
        return f"<TokenBucket qps={self.qps} tokens={self._tokens:.2f}>"

    def seconds_to_token(self) -> float:
        """Seconds until a token is available (0: now; ``inf`` if the rate is 0)."""
        if self.qps <= 0:
            return float("inf")
        now = self._clock.monotonic()
        tokens = min(float(self._burst), self._tokens + (now - self._last) * self.qps)
        return max(0.0, (1.0 - tokens) / self.qps)

    def try_accept(self) -> bool:
        """Take a token if there is one."""
        if self.qps <= 0:
            return False
        now = self._clock.monotonic()
        self._tokens = min(float(self._burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


@dataclass
class _Item:
    value: str
    uid: str
    process_at: float
    seq: int


class RateLimitedTimedQueue:
    """Unique node names to process, in queueing order, at most ``qps`` a second.

    Args:
        qps: the starting rate (nodes a second).
        clock: the clock the rate and retry delays run on.
    """

    def __init__(self, qps: float, clock: Clock) -> None:
        self._clock = clock
        self.limiter = TokenBucket(qps, clock)
        self._queue: dict[str, _Item] = {}
        self._set: set[str] = set()
        self._seq = 0

    def __repr__(self) -> str:
        return f"<RateLimitedTimedQueue qps={self.limiter.qps} queued={len(self._queue)}>"

    def __len__(self) -> int:
        return len(self._queue)

    def __contains__(self, value: object) -> bool:
        return value in self._queue

    def add(self, value: str, uid: str) -> bool:
        """Queue ``value`` unless it is queued or was processed and not removed since."""
        if value in self._set:
            return False
        self._set.add(value)
        self._seq += 1
        self._queue[value] = _Item(value, uid, self._clock.monotonic(), self._seq)
        return True

    def remove(self, value: str) -> bool:
        """Forget ``value`` entirely, so it can be queued again. True if it was known."""
        self._queue.pop(value, None)
        if value in self._set:
            self._set.discard(value)
            return True
        return False

    def swap_limiter(self, qps: float) -> None:
        """Use a new rate (a fresh, full bucket) unless it is the current one."""
        if self.limiter.qps != qps:
            self.limiter = TokenBucket(qps, self._clock)

    async def try_process(self, fn: Callable[[str, str], Awaitable[tuple[bool, float]]]) -> None:
        """Process queued values whose time has come, oldest first, one token each.

        ``await fn(value, uid)`` returns ``(done, retry_after)``: done values leave the queue (but
        stay known until :meth:`remove`); others are retried ``retry_after`` seconds later.
        """
        while self._queue:
            item = min(self._queue.values(), key=lambda i: (i.process_at, i.seq))
            if not self.limiter.try_accept():
                return
            now = self._clock.monotonic()
            if now < item.process_at:
                return
            done, retry_after = await fn(item.value, item.uid)
            if item.value not in self._queue:  # fn removed it
                continue
            if done:
                del self._queue[item.value]
            else:
                self._seq += 1
                item.process_at = now + retry_after + 1e-9
                item.seq = self._seq
