"""A fake :class:`kcm.clock.Clock` whose time moves only when a test says so."""

from __future__ import annotations

import heapq
import itertools
import sys
from datetime import UTC, datetime, timedelta

import anyio

__all__ = ["FakeClock"]

_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
_FAST_SETTLE_ROUNDS = 10_000


async def _settle() -> None:
    """Return once every other task is blocked, as :func:`anyio.wait_all_tasks_blocked`.

    On asyncio, anyio's version sleeps 0.1 s of *real* time whenever some task is still
    runnable, which made every fake-clock step cost real time. Here runnable tasks are given the
    loop with zero-length yields instead; a task that spins without ever blocking falls back to
    anyio's version after a bounded number of rounds. Trio's own implementation is already exact.
    """
    asyncio = sys.modules.get("asyncio")
    try:
        this = asyncio.current_task() if asyncio is not None else None
    except RuntimeError:  # no running asyncio loop: we are on trio
        this = None
    if asyncio is None or this is None:
        await anyio.wait_all_tasks_blocked()
        return
    loop = asyncio.get_running_loop()
    for _ in range(_FAST_SETTLE_ROUNDS):
        await anyio.lowlevel.checkpoint()
        # Callbacks already scheduled (an Event being set, anyio delivering a cancellation) may
        # unblock tasks that look blocked now: settled means no ready callback and no runnable task.
        if getattr(loop, "_ready", None):
            continue
        for task in asyncio.all_tasks():
            if task is this:
                continue
            waiter = getattr(task, "_fut_waiter", None)
            if waiter is None or waiter.done():
                break
        else:
            return
    await anyio.wait_all_tasks_blocked()


class FakeClock:
    """Virtual time for tests: sleepers wake only when :meth:`advance` moves time past them.

    ``await clock.advance(dt)`` moves time forward in steps, waking every sleeper whose deadline
    has passed (in deadline order) and letting the woken tasks run until everything is blocked
    again, so a test can assert the effect of exactly ``dt`` seconds::

        q.add_after("a", 5)
        await clock.advance(4.9)
        assert len(q) == 0
        await clock.advance(0.1)
        assert len(q) == 1

    Works on asyncio and trio. Wall time (:meth:`now`) starts at 2026-01-01T00:00:00Z and
    moves with monotonic time; :meth:`set_wall_offset` models clock skew between processes.
    """

    def __init__(self, start: float = 1000.0, *, wall_start: datetime = _EPOCH) -> None:
        self._now = start
        self._start = start
        self._wall_start = wall_start
        self._wall_offset = 0.0
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._seq = itertools.count()

    def monotonic(self) -> float:
        return self._now

    def now(self) -> datetime:
        return self._wall_start + timedelta(seconds=self._now - self._start + self._wall_offset)

    def set_wall_offset(self, seconds: float) -> None:
        """Skew this clock's wall time (not its monotonic time) by ``seconds``."""
        self._wall_offset = seconds

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(self._now + seconds)

    async def sleep_until(self, deadline: float) -> None:
        if deadline <= self._now:
            await anyio.lowlevel.checkpoint()
            return
        event = anyio.Event()
        heapq.heappush(self._sleepers, (deadline, next(self._seq), event))
        await event.wait()

    @property
    def pending_sleepers(self) -> int:
        """How many tasks are waiting on this clock (cancelled waiters included until due)."""
        return len(self._sleepers)

    def next_deadline(self) -> float | None:
        """The earliest deadline any sleeper waits for, or None."""
        return self._sleepers[0][0] if self._sleepers else None

    async def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, waking sleepers in order and letting them run."""
        if seconds < 0:
            raise ValueError("time cannot go backwards")
        target = self._now + seconds
        await _settle()
        while self._sleepers and self._sleepers[0][0] <= target:
            deadline = self._sleepers[0][0]
            self._now = max(self._now, deadline)
            while self._sleepers and self._sleepers[0][0] <= self._now:
                heapq.heappop(self._sleepers)[2].set()
            await _settle()
        self._now = target
        await _settle()

    async def run_until_idle(self, *, limit: float = 1e9) -> float:
        """Advance to each next deadline until no sleeper is left (or ``limit`` seconds passed).

        Returns the virtual seconds that elapsed. Useful for "run this backoff to the end".
        """
        begin = self._now
        await _settle()
        while self._sleepers and self._sleepers[0][0] - begin <= limit:
            await self.advance(max(0.0, self._sleepers[0][0] - self._now))
        return self._now - begin
