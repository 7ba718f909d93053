"""The rate-limiting queue: failed keys come back after a delay chosen by a :class:`RateLimiter`."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from prometheus_client import CollectorRegistry

from ..clock import SYSTEM_CLOCK, Clock
from ._delaying import DelayingQueue
from ._metrics import MetricsProvider
from ._rate_limiters import RateLimiter, default_controller_rate_limiter

__all__ = ["RateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    """A :class:`DelayingQueue` with per-key retry backoff (Q12).

    A controller worker calls :meth:`add_rate_limited` when reconciling a key failed and
    :meth:`forget` when it succeeded. Run it like a :class:`DelayingQueue`
    (``async with`` or ``tg.start(queue.run)``).

    Args:
        rate_limiter: the retry policy; default
            :func:`default_controller_rate_limiter` on ``clock`` (a fresh one per queue).
        name: the queue's name; required for metrics.
        clock: the clock delays and the default limiter run on.
        metrics: as for :class:`Queue`.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str | None = None,
        clock: Clock = SYSTEM_CLOCK,
        metrics: MetricsProvider | CollectorRegistry | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics=metrics)
        self.rate_limiter: RateLimiter[T] = (
            rate_limiter
            if rate_limiter is not None
            else default_controller_rate_limiter(clock=clock)
        )

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the limiter gives it (and count one more failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Reset ``item``'s backoff. It does **not** remove ``item`` from the queue."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many failures of ``item`` the limiter remembers."""
        return self.rate_limiter.num_requeues(item)
