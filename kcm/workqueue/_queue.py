"""The fair, stingy work queue: controllers turn events into keys and process each key alone.

This is client-go's ``workqueue.Typed[T]`` on anyio. Informer handlers call :meth:`Queue.add`
(synchronous, cheap); worker tasks call :meth:`Queue.get` and, when finished, :meth:`Queue.done`.
The bookkeeping is three plain containers (a FIFO deque, a ``dirty`` set and a ``processing``
set) changed only in synchronous methods, so every operation is atomic on the event loop; only
waiting for an item (or for the drain) awaits.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from types import TracebackType
from typing import Generic, Self, TypeVar

import anyio
from prometheus_client import CollectorRegistry

from ..clock import SYSTEM_CLOCK, Clock
from ..errors import ShutDown
from ._metrics import MetricsProvider, PrometheusMetrics, QueueMetrics

__all__ = ["Queue"]

T = TypeVar("T", bound=Hashable)


class Queue(Generic[T]):
    """A deduplicating FIFO of keys where a key is never processed by two workers at once.

    Every :meth:`get` must be paired with exactly one :meth:`done`; :meth:`get_item` does the
    pairing for you::

        while True:
            try:
                async with queue.get_item() as key:
                    await reconcile(key)
            except ShutDown:
                break

    Guarantees (Q1-Q7):
        * Deduplicated: a key added any number of times before a worker takes it is handed out
          once.
        * Stingy: a key is never handed to two workers at once. A key added while it is being
          processed is held back and handed out again, once, after :meth:`done`.
        * Fair: otherwise keys are handed out in the order they were first added (FIFO).
        * Shutdown loses nothing silently: after :meth:`shut_down`, :meth:`add` is ignored but
          :meth:`get` keeps handing out the backlog; only when it is empty does :meth:`get`
          raise :class:`~kcm.errors.ShutDown`. :meth:`shut_down_with_drain` also waits for the
          keys in flight.
        * A shut-down queue can be used again: :meth:`reopen` accepts keys again and keeps
          the backlog (a kcm addition; client-go queues are single-use).

    Args:
        name: the queue's name; required for metrics (the ``name`` label).
        clock: measures the metrics' durations (and drives delays in subclasses).
        metrics: a :class:`MetricsProvider` (such as :class:`PrometheusMetrics`), or a
            ``prometheus_client.CollectorRegistry`` to report client-go's metrics into, or None
            (default) for no metrics at no cost.

    Raises:
        ValueError: ``metrics`` was given without a ``name``.
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: Clock = SYSTEM_CLOCK,
        metrics: MetricsProvider | CollectorRegistry | None = None,
    ) -> None:
        self.name = name
        self._clock = clock
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._getters: deque[anyio.Event] = deque()
        self._drainers: list[anyio.Event] = []
        self._idlers: list[anyio.Event] = []
        self._shutting_down = False
        self._drain = False
        self._metrics: QueueMetrics | None = None
        if metrics is not None:
            if name is None:
                raise ValueError("a workqueue needs a name= to report metrics")
            if isinstance(metrics, CollectorRegistry):
                metrics = PrometheusMetrics.for_registry(metrics)
            self._metrics = metrics.queue_metrics(name, clock)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} name={self.name!r} len={len(self._queue)} "
            f"processing={len(self._processing)} shutting_down={self._shutting_down}>"
        )

    # -- producers ---------------------------------------------------------------------------

    def add(self, item: T) -> None:
        """Mark ``item`` as needing processing.

        A no-op if the queue is shutting down or ``item`` is already waiting to be handed out.
        If ``item`` is being processed it is handed out again after its :meth:`done`.
        """
        if self._shutting_down or item in self._dirty:
            return
        if self._metrics is not None:
            self._metrics.add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        if self._getters:
            self._getters.popleft().set()

    # -- consumers ---------------------------------------------------------------------------

    async def get(self) -> T:
        """Take the next key, waiting while the queue is empty.

        Returns without yielding to the event loop when a key is ready (as
        :meth:`asyncio.Queue.get` does). Cancellation never loses a key: a cancelled ``get``
        has taken nothing, and a wake-up it received is passed on to the next waiter.

        Returns:
            The key; the caller owns it until it calls :meth:`done` with it.

        Raises:
            ShutDown: the queue is shut down and its backlog is empty. Not retryable.
        """
        while True:
            if self._queue:
                return self._take()
            if self._shutting_down:
                raise self._shut_down_error()
            event = anyio.Event()
            self._getters.append(event)
            woken = False
            try:
                await event.wait()
                woken = True
            finally:
                if not woken:
                    if not event.is_set():
                        self._getters.remove(event)
                    elif self._queue and self._getters:
                        # We were picked to take an item but got cancelled: pass it on.
                        self._getters.popleft().set()

    def get_nowait(self) -> T:
        """Take the next key if one is ready.

        Raises:
            anyio.WouldBlock: nothing is ready (and the queue is not shut down).
            ShutDown: the queue is shut down and its backlog is empty.
        """
        if self._queue:
            return self._take()
        if self._shutting_down:
            raise self._shut_down_error()
        raise anyio.WouldBlock

    def _shut_down_error(self) -> ShutDown:
        return ShutDown(f"work queue {self.name or '(unnamed)'} is shut down and empty")

    def _take(self) -> T:
        item = self._queue.popleft()
        self._processing.add(item)
        self._dirty.discard(item)
        if self._metrics is not None:
            self._metrics.get(item)
        return item

    def get_item(self) -> _ItemContext[T]:
        """``async with queue.get_item() as key:`` gets a key and always calls :meth:`done`.

        :meth:`done` runs when the block exits for any reason, cancellation included.

        Raises:
            ShutDown: (on entering) as :meth:`get`.
        """
        return _ItemContext(self)

    def done(self, item: T) -> None:
        """Mark ``item`` as finished; if it was added meanwhile, queue it again now.

        Calling it for a key that is not being processed does nothing (client-go would queue
        a dirty key a second time).
        """
        if item not in self._processing:
            return
        if self._metrics is not None:
            self._metrics.done(item)
        self._processing.remove(item)
        if item in self._dirty:
            self._queue.append(item)
            if self._getters:
                self._getters.popleft().set()
        if not self._processing:
            if self._drainers:  # also when ``item`` went back in the queue
                self._wake_drainers()
            if self._idlers and not self._queue:
                idlers, self._idlers = self._idlers, []
                for event in idlers:
                    event.set()

    # -- shutdown ----------------------------------------------------------------------------

    def shut_down(self) -> None:
        """Stop accepting adds; workers get the backlog, then :class:`~kcm.errors.ShutDown`.

        Also ends any :meth:`shut_down_with_drain` wait at once. Idempotent.
        """
        self._shutting_down = True
        self._drain = False
        self._wake_getters()
        self._wake_drainers()
        self._on_shut_down()

    async def shut_down_with_drain(self) -> None:
        """:meth:`shut_down`, then wait until no key is being processed.

        Like client-go it waits for keys in flight only; queued keys are drained by workers
        that keep calling :meth:`get`. Calling :meth:`shut_down` meanwhile ends the wait.

        Caveats:
            Blocks forever if a worker never calls :meth:`done`; put a deadline around it
            (``kcm.clock.move_on_after``).
        """
        self._drain = True
        self._shutting_down = True
        self._wake_getters()
        self._on_shut_down()
        while self._drain and self._processing:
            event = anyio.Event()
            self._drainers.append(event)
            await event.wait()

    def reopen(self) -> None:
        """Undo :meth:`shut_down`: accept keys again, for consumers that start over (a
        controller run again after it was stopped, e.g. on leader re-election).

        Nothing is lost or repeated: keys still queued stay queued, in order, and are handed
        out to the next :meth:`get`; keys in flight stay in flight (their :meth:`done` works
        as usual, re-queueing them if they were added meanwhile). :meth:`get` no longer raises
        :class:`~kcm.errors.ShutDown`; a :meth:`shut_down_with_drain` still waiting returns.
        The metrics go on in the same series. A no-op unless the queue is shutting down.

        Subclasses keep their own state too: a :class:`DelayingQueue` resumes the delays
        still pending (start its waiter again if it has returned), a
        :class:`RateLimitingQueue` keeps each key's backoff.
        """
        if not self._shutting_down:
            return
        self._shutting_down = False
        self._drain = False
        self._wake_drainers()
        self._on_reopen()

    @property
    def shutting_down(self) -> bool:
        """True once :meth:`shut_down` (or the drain variant) was called, until :meth:`reopen`."""
        return self._shutting_down

    def _on_shut_down(self) -> None:
        """Hook for subclasses: the queue has just started shutting down."""

    def _on_reopen(self) -> None:
        """Hook for subclasses: the queue has just been reopened."""

    def _wake_getters(self) -> None:
        while self._getters:
            self._getters.popleft().set()

    def _wake_drainers(self) -> None:
        drainers, self._drainers = self._drainers, []
        for event in drainers:
            event.set()

    # -- inspection --------------------------------------------------------------------------

    async def wait_idle(self) -> None:
        """Return once no key is queued and none is in flight (:meth:`done` was called for
        every key handed out): the workers have caught up with everything added so far.

        Event-driven, no polling: the last :meth:`done` wakes it. Keys waiting for a delay
        (:meth:`DelayingQueue.add_after`) do not count; once their time comes they are queued
        and the queue is busy again. Returns at once, without yielding, if the queue is idle;
        otherwise it is idle at the moment this returns (a key added between the wake-up and
        the return makes it wait again). Cancelling it is safe.

        Caveats:
            Waits for ever if nobody takes the queued keys (no worker, or stopped ones); put a
            deadline around it in tests (``anyio.fail_after``).
        """
        while self._queue or self._processing:
            event = anyio.Event()
            self._idlers.append(event)
            try:
                await event.wait()
            finally:
                if not event.is_set():
                    self._idlers.remove(event)

    def __len__(self) -> int:
        """Keys waiting to be handed out (not those in flight, nor those dirtied in flight)."""
        return len(self._queue)

    @property
    def processing(self) -> frozenset[T]:
        """The keys handed out and not yet :meth:`done` (a snapshot)."""
        return frozenset(self._processing)

    def is_dirty(self, item: T) -> bool:
        """True if ``item`` is waiting to be handed out (or re-queued after its ``done``)."""
        return item in self._dirty

    # -- lifetime ----------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self.shut_down()
        return None


class _ItemContext(Generic[T]):
    """The async context manager behind :meth:`Queue.get_item`."""

    __slots__ = ("_item", "_queue")

    def __init__(self, queue: Queue[T]) -> None:
        self._queue = queue

    async def __aenter__(self) -> T:
        queue = self._queue
        # The fast path of get(), inlined: one coroutine less per key.
        self._item = item = queue._take() if queue._queue else await queue.get()
        return item

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._queue.done(self._item)
