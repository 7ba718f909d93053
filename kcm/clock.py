"""Injected time: every delay, timeout, backoff, resync and lease in kcm reads a :class:`Clock`.

Production code uses :data:`SYSTEM_CLOCK`; tests pass :class:`kcm.testing.FakeClock`, which only
moves when the test advances it, so "wait 1000 s of backoff" takes no real time.

Two notions of time, as in Go: :meth:`Clock.monotonic` for measuring durations and deadlines
(never jumps), :meth:`Clock.now` for timestamps written into objects (UTC wall time).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

import anyio

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock", "move_on_after", "move_on_at"]


@runtime_checkable
class Clock(Protocol):
    """A source of time that can also wait."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards (for durations and deadlines)."""
        ...

    def now(self) -> datetime:
        """The current wall-clock time, timezone-aware UTC (for timestamps in objects)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` on this clock (returns at once for ``seconds <= 0``)."""
        ...

    async def sleep_until(self, deadline: float) -> None:
        """Wait until :meth:`monotonic` reaches ``deadline``."""
        ...


class SystemClock:
    """The real clock: ``time.monotonic``, UTC ``datetime.now`` and anyio sleeps."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(max(0.0, seconds))

    async def sleep_until(self, deadline: float) -> None:
        await anyio.sleep(max(0.0, deadline - time.monotonic()))


SYSTEM_CLOCK: Clock = SystemClock()
"""The process-wide real clock; the default wherever a ``clock`` argument is accepted."""


@asynccontextmanager
async def move_on_at(clock: Clock, deadline: float) -> AsyncIterator[anyio.CancelScope]:
    """Like :func:`anyio.move_on_after`, but the deadline is on ``clock``.

    With the system clock this is exactly anyio's cancel scope deadline. With any other clock
    (a fake one in tests) a watcher task sleeps on that clock and cancels the scope, so the
    timeout fires when the test advances time. Check ``scope.cancelled_caught`` afterwards.
    """
    if isinstance(clock, SystemClock):
        with anyio.CancelScope(deadline=anyio.current_time() + (deadline - clock.monotonic())) as s:
            yield s
        return
    scope = anyio.CancelScope()

    async def _watch() -> None:
        await clock.sleep_until(deadline)
        scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(_watch)
        try:
            with scope:
                yield scope
        finally:
            # Outside ``scope``: were the task group cancelled while ``scope`` is still open, the
            # cancellation would belong to the outer scope and ``cancelled_caught`` stay False.
            tg.cancel_scope.cancel()


def move_on_after(clock: Clock, seconds: float) -> AbstractAsyncContextManager[anyio.CancelScope]:
    """:func:`move_on_at` with a deadline ``seconds`` from now on ``clock``."""
    return move_on_at(clock, clock.monotonic() + seconds)
