"""The delaying queue: ``add_after(key, delay)`` through a heap on an injected clock."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from types import TracebackType
from typing import Self, TypeVar

import anyio
import anyio.abc
from prometheus_client import CollectorRegistry

from ..clock import SYSTEM_CLOCK, Clock
from ._metrics import DelayMetrics, MetricsProvider
from ._queue import Queue

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(Queue[T]):
    """A :class:`Queue` whose keys can also be added after a delay (Q9-Q11).

    One waiter task moves keys whose time has come into the queue. Run it either by entering
    the queue as a context manager (it owns a task group; leaving shuts the queue down)::

        async with DelayingQueue[str](clock=clock) as queue:
            queue.add_after("default/web", 5.0)
            key = await queue.get()

    or by starting :meth:`run` in your own task group: ``await tg.start(queue.run)``.

    Guarantees:
        * The earliest ready key is added first; ties keep the order of ``add_after`` calls.
        * A key waiting for several delays is added once, at the earliest time: a later
          ``add_after`` can move its time earlier, never later.
        * A waiting key is not dirty: a plain :meth:`add` makes it ready now and the pending
          delay still fires an add later (merged if the key is still queued).
        * Delays are measured on ``clock``; with :class:`kcm.testing.FakeClock` they elapse
          exactly when the test advances time, and nothing else sleeps on the clock.
        * :meth:`shut_down` stops every pending delay (client-go drops them; :attr:`waiting`
          drops to 0) but holds them for :meth:`reopen`, which resumes them at their original
          times: once the waiter runs, a key whose time passed meanwhile is added at once.

    Caveats:
        Keys can be added before the waiter runs; they become ready once it does.
        :meth:`add_after` is ignored while the queue is shut down. :meth:`run` returns on
        shutdown; after :meth:`reopen`, start it again (or enter the queue again).
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock = SYSTEM_CLOCK,
        metrics: MetricsProvider | CollectorRegistry | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics=metrics)
        self._heap: list[tuple[float, int, T]] = []
        self._waiting: dict[T, tuple[float, int]] = {}
        self._held: list[tuple[float, int, T]] = []  # delays stopped by a shutdown
        self._seq = itertools.count()
        self._timer: anyio.CancelScope | None = None
        self._running = False
        self._task_group: anyio.abc.TaskGroup | None = None
        self._delay_metrics = self._metrics if isinstance(self._metrics, DelayMetrics) else None

    def _report_delays(self) -> None:
        if self._delay_metrics is not None:
            heap, waiting = self._heap, self._waiting
            while heap and waiting.get(heap[0][2]) != heap[0][:2]:
                heapq.heappop(heap)  # superseded by an earlier time: drop it now
            self._delay_metrics.delays(len(waiting), heap[0][0] if heap else None)

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds have passed on the clock.

        A no-op while shutting down; ``delay <= 0`` adds now. Counts one retry in the metrics.
        """
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retry()
        if delay <= 0:
            self.add(item)
            return
        ready_at = self._clock.monotonic() + delay
        current = self._waiting.get(item)
        if current is not None and current[0] <= ready_at:
            return
        entry = (ready_at, next(self._seq))
        self._waiting[item] = entry
        heapq.heappush(self._heap, (*entry, item))
        self._report_delays()
        if self._timer is not None and self._heap[0][1] == entry[1]:
            self._timer.cancel()  # the waiter sleeps for a later key: make it look again

    @property
    def waiting(self) -> int:
        """How many keys are waiting for their delay to pass (0 while shut down: the delays
        are held until :meth:`reopen`)."""
        return len(self._waiting)

    def _promote_ready(self) -> None:
        now = self._clock.monotonic()
        heap = self._heap
        while heap and heap[0][0] <= now:
            ready_at, seq, item = heapq.heappop(heap)
            if self._waiting.get(item) == (ready_at, seq):  # else superseded by an earlier time
                del self._waiting[item]
                self.add(item)
        self._report_delays()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Move keys into the queue as their delays pass, until the queue shuts down.

        The delays still pending then are held for :meth:`reopen`; ``run`` may be started
        again once the queue is reopened.

        Raises:
            RuntimeError: the waiter is already running.
        """
        if self._running:
            raise RuntimeError(f"{self!r}: run() is already running")
        self._running = True
        try:
            task_status.started()
            while not self._shutting_down:
                self._promote_ready()
                with anyio.CancelScope() as self._timer:
                    if self._heap:
                        await self._clock.sleep_until(self._heap[0][0])
                    else:
                        await anyio.sleep_forever()
                self._timer = None
        finally:
            self._running = False
            self._timer = None

    def _on_shut_down(self) -> None:
        # Stop the delays now (deterministically, whether or not the waiter runs), keeping
        # each key's current entry for reopen().
        self._held.extend(entry for entry in self._heap if self._waiting.get(entry[2]) == entry[:2])
        self._heap.clear()
        self._waiting.clear()
        self._report_delays()
        if self._timer is not None:
            self._timer.cancel()

    def _on_reopen(self) -> None:
        held, self._held = self._held, []
        for ready_at, seq, item in held:
            current = self._waiting.get(item)
            if current is None or ready_at < current[0]:
                self._waiting[item] = (ready_at, seq)
                heapq.heappush(self._heap, (ready_at, seq, item))
        self._report_delays()
        if self._timer is not None:
            self._timer.cancel()  # a waiter still running looks at the heap again

    async def __aenter__(self) -> Self:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        try:
            await task_group.start(self.run)
        except BaseException as exc:
            await task_group.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        self._task_group = task_group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self.shut_down()
        task_group, self._task_group = self._task_group, None
        if task_group is None:
            return None
        return await task_group.__aexit__(exc_type, exc, tb)
