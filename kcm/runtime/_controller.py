"""The controller: a rate-limited work queue drained by N workers that call a reconciler (C2, C7).

Pipeline stage 7. Event handlers (see :mod:`._handlers`) put keys into :attr:`Controller.queue`;
workers take them, call ``reconciler.reconcile(key)`` and turn the outcome into queue
operations in exactly one place, :meth:`Controller._handle_outcome`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar, final

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.clock import SYSTEM_CLOCK, Clock, move_on_after
from kcm.errors import CacheSyncTimeoutError, Conflict, ShutDown
from kcm.informers import HandlerRegistration, KubeObject, SharedIndexInformer
from kcm.models import ObjectKey
from kcm.workqueue import (
    ItemExponentialFailureRateLimiter,
    PrometheusMetrics,
    RateLimiter,
    RateLimitingQueue,
)

from ._failures import error_line, is_expected_failure
from ._handlers import EventHandler, QueueingHandler
from ._metrics import ControllerMetrics
from ._predicates import Predicate
from ._reconcile_tracing import reconcile_span
from ._reconciler import (
    ReconcileContext,
    Reconciler,
    Result,
    _current,
    is_terminal,
)
from ._shutdown import breakable, graceful_shield

__all__ = ["Controller"]

_STEADY_STATE = 15
"""Between DEBUG and INFO: klog's -v=2 ("Started controller") in ``kcm run``'s logging."""

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
T = TypeVar("T", bound=KubeObject)


_RESULTS = ("success", "error", "requeue", "requeue_after")


class _Pending(NamedTuple):
    registration: HandlerRegistration
    kind: str
    informer: SharedIndexInformer[Any] | None


class _Source:
    """One :meth:`Controller.watch`: kept so a restarted controller can register it again."""

    __slots__ = ("handler", "informer", "kind", "registration")

    def __init__(
        self,
        informer: SharedIndexInformer[Any],
        handler: QueueingHandler[Any],
        kind: str,
        registration: HandlerRegistration,
    ) -> None:
        self.informer = informer
        self.handler = handler
        self.kind = kind
        self.registration = registration


@final
class Controller(Generic[K]):
    """Runs a :class:`Reconciler` for every key put into its queue, with retries and backoff.

    Args:
        name: labels the metrics and names the work queue; unique per metrics registry.
        reconciler: what to call for each key.
        max_concurrent_reconciles: number of worker tasks (default 1, as controller-runtime).
        rate_limiter: retry policy for failed keys. Default: per-key exponential backoff from
            5 ms doubling to 1000 s and **no** global token bucket (C6, B15: controller-runtime
            since v0.23); the per-key failure map is bounded (B16).
        clock: the clock the backoff, ``requeue_after`` and shutdown grace run on.
        metrics: a registry to report controller-runtime's and the work queue's metrics to
            (C26); None reports nothing.
        cache_sync_timeout: how long :meth:`run` waits for :meth:`wait_for` registrations
            to sync before failing with :class:`~kcm.errors.CacheSyncTimeoutError` (C5:
            2 minutes).
        graceful_shutdown_timeout: how long in-flight reconciles may run on after :meth:`run`
            is cancelled before they are cancelled too (None: wait for ever). Under a
            :class:`~kcm.runtime.Manager` the manager's own deadline and leadership loss cut
            this short (the in-flight reconciles are cancelled at once then).
        reconcile_timeout: cancel a reconcile that runs longer than this many seconds and
            treat it as a failure (a ``TimeoutError``, retried with backoff); None (default):
            no limit.

    Guarantees:
        * A key is never reconciled by two workers at once, and a key added while it is being
          reconciled is reconciled once more afterwards (Q4: the queue's stingy contract).
        * Outcomes (C2): an exception requeues with the key's backoff, unless it is a
          :class:`TerminalError` (then only logged and counted); ``Result(requeue_after=d)``
          resets the backoff and requeues after ``d`` seconds; ``Result(requeue=True)``
          requeues with backoff; anything else resets the backoff.
        * An exception never stops a worker; it is logged at ERROR with the controller and
          the key: as one line for expected failures (a :class:`~kcm.errors.ApiError` such as
          a 404 or a 403, a :class:`~kcm.errors.TransportError`, a :class:`TerminalError`, or
          a group of only those), as kube-controller-manager's ``HandleError`` does, and with
          its traceback for anything else (a bug). A :class:`~kcm.errors.Conflict` (B22: a
          409, usually a stale cache read after the reconciler's own write) is logged at INFO;
          it is still retried with backoff and counted as an error.

    Raises:
        ValueError: an empty name, ``max_concurrent_reconciles < 1``, or ``name`` is taken by
            a live controller reporting to the same metrics registry.

    Caveats:
        * Cancelling :meth:`run` stops workers from taking new keys at once; keys still queued,
          keys whose reconcile was cancelled and keys waiting for a backoff or
          ``requeue_after`` wait for the next :meth:`run` (a stopped controller may be run
          again, e.g. after leader re-election); the watches are registered again then, which
          replays every cached object.
    """

    def __init__(
        self,
        name: str,
        reconciler: Reconciler[K],
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter[K] | None = None,
        clock: Clock = SYSTEM_CLOCK,
        metrics: CollectorRegistry | None = None,
        cache_sync_timeout: float = 120.0,
        graceful_shutdown_timeout: float | None = 30.0,
        reconcile_timeout: float | None = None,
    ) -> None:
        if not name:
            raise ValueError("a controller needs a non-empty name")
        if max_concurrent_reconciles < 1:
            raise ValueError(
                f"max_concurrent_reconciles must be >= 1, got {max_concurrent_reconciles}"
            )
        self.name = name
        self.reconciler = reconciler
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self._clock = clock
        self._cache_sync_timeout = cache_sync_timeout
        self._grace = graceful_shutdown_timeout
        self._reconcile_timeout = reconcile_timeout
        limiter: RateLimiter[K] = (
            rate_limiter
            if rate_limiter is not None
            else ItemExponentialFailureRateLimiter(0.005, 1000.0, clock=clock)
        )
        try:
            self.queue: RateLimitingQueue[K] = RateLimitingQueue(
                limiter,
                name=name,
                clock=clock,
                metrics=(
                    PrometheusMetrics.for_registry(metrics).for_controllers()
                    if metrics is not None
                    else None
                ),
            )
        except ValueError as exc:
            raise ValueError(
                f"controller name {name!r} is already used by a live controller reporting to "
                "this metrics registry; controller names must be unique (use .named(...))"
            ) from exc
        self._metrics = (
            ControllerMetrics(metrics, name, max_concurrent_reconciles)
            if metrics is not None
            else None
        )
        self._registrations: list[_Pending] = []
        self._sources: list[_Source] = []
        self._running = False
        self._runs = 0
        self._left_over: set[K] = set()
        self._stopping = False
        self._active = 0
        self._counts = dict.fromkeys(_RESULTS, 0)

    def __repr__(self) -> str:
        return f"<Controller name={self.name!r} workers={self.max_concurrent_reconciles}>"

    # -- introspection -----------------------------------------------------------------------

    @property
    def active_workers(self) -> int:
        """Reconciles running right now (0 to ``max_concurrent_reconciles``). O(1)."""
        return self._active

    @property
    def reconcile_counts(self) -> dict[str, int]:
        """Finished reconciles by outcome since construction, as the
        ``controller_runtime_reconcile_total`` ``result`` label: ``success``, ``error``,
        ``requeue``, ``requeue_after`` (a fresh dict; kept with or without ``metrics``)."""
        return dict(self._counts)

    async def wait_idle(self) -> None:
        """Return once the queue is empty and no reconcile is in flight (every key handed to
        a worker has been reconciled and its outcome applied).

        Event-driven (:meth:`kcm.workqueue.Queue.wait_idle`), so tests need neither real
        sleeps nor polling loops: ``controller.enqueue(key); await controller.wait_idle()``.
        Keys waiting for a backoff or ``requeue_after`` do not count (advance a fake clock to
        make them due, then wait again). Returns at once if idle.

        Caveats:
            * It knows nothing of informer events still on their way: a reconcile's own
              writes come back as watch events (and maybe keys) later. Wait for the caches to
              catch up first when that matters.
            * Waits for ever while keys are queued and the controller is not running; put a
              deadline around it.
        """
        await self.queue.wait_idle()

    # -- wiring ------------------------------------------------------------------------------

    def wait_for(
        self,
        registrations: Iterable[HandlerRegistration],
        *,
        kind: str | None = None,
        informer: SharedIndexInformer[Any] | None = None,
    ) -> None:
        """Make :meth:`run` wait until these informer handler registrations have synced
        before starting workers (C8: every initial add is queued before the first reconcile).

        Args:
            registrations: what to wait for.
            kind: what they watch, for the :class:`~kcm.errors.CacheSyncTimeoutError` message
                (default: ``"informer #<n>"``).
            informer: their informer; its ``last_error`` goes into that message too.
        """
        for registration in registrations:
            label = kind if kind is not None else f"informer #{self._source_count() + 1}"
            self._registrations.append(_Pending(registration, label, informer))

    def watch(
        self: Controller[ObjectKey],
        informer: SharedIndexInformer[T],
        handler: EventHandler[T],
        *,
        predicates: Sequence[Predicate[T]] = (),
        kind: str | None = None,
    ) -> HandlerRegistration:
        """Feed this controller from ``informer``: each event that passes ``predicates`` (ANDed
        in order) puts the keys ``handler`` maps it to into the queue.

        :meth:`run` waits for the registration to sync (every initial add queued) before the
        first reconcile, and removes it when the controller stops. ``kind`` names the watched
        kind in a :class:`~kcm.errors.CacheSyncTimeoutError` (the builder sets it).

        Returns:
            The informer handler registration.

        Raises:
            RuntimeError: the informer has stopped.
        """
        queueing = QueueingHandler(handler, self.queue.add, predicates)
        registration = informer.add_event_handler(queueing)
        label = kind if kind is not None else f"informer #{self._source_count() + 1}"
        self._sources.append(_Source(informer, queueing, label, registration))
        return registration

    def _source_count(self) -> int:
        return len(self._registrations) + len(self._sources)

    def enqueue(self, key: K) -> None:
        """Queue ``key`` for a reconcile (what event handlers do)."""
        self.queue.add(key)

    # -- lifecycle ---------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Wait for the handlers' caches to sync, then reconcile until cancelled.

        ``task_status.started()`` is called once the workers run. On cancellation, workers
        take no new keys; in-flight reconciles may finish within ``graceful_shutdown_timeout``
        (shielded from the cancellation), then they are cancelled; then ``run`` returns. A
        manager's hard stop (its deadline, leadership loss) cancels them at once instead.

        ``run`` may be called again once it has returned (a manager does so when it is
        elected again): the queue reopens (:meth:`~kcm.workqueue.Queue.reopen`), keeping the
        keys still queued, those waiting for a backoff or ``requeue_after`` (due ones are
        reconciled at once) and each key's backoff, and the watches are registered again
        (their initial adds queue every cached object once more).

        Raises:
            RuntimeError: ``run`` is already running.
            CacheSyncTimeoutError: a handler registration did not sync within
                ``cache_sync_timeout`` (also a ``TimeoutError``); it names the kinds.
        """
        if self._running:
            raise RuntimeError(f"controller {self.name!r} is already running")
        self._running = True
        try:
            if self._runs:
                self._restart()
            self._runs += 1
            self._stopping = False
            await self._wait_for_sync()
            workers_scope = anyio.CancelScope(shield=True)
            with breakable(workers_scope):
                async with anyio.create_task_group() as tg:
                    await tg.start(self.queue.run)
                    tg.start_soon(self._run_workers, workers_scope)
                    logger.log(
                        _STEADY_STATE,
                        "starting %d workers for controller %s",
                        self.max_concurrent_reconciles,
                        self.name,
                    )
                    task_status.started()
                    try:
                        await anyio.sleep_forever()
                    finally:
                        self._stopping = True
                        with graceful_shield():
                            await self._drain()
                        self.queue.shut_down()
                        workers_scope.shield = False
                        workers_scope.cancel()
        finally:
            self._stopping = True
            self.queue.shut_down()
            for source in self._sources:
                source.registration.remove()
            self._running = False

    def _restart(self) -> None:
        self.queue.reopen()  # keeps the keys queued and those waiting for a delay
        for key in self._left_over:  # cancelled mid-reconcile last time: not done yet
            self.queue.add(key)
        self._left_over.clear()
        for source in self._sources:
            if source.registration.removed:
                source.registration = source.informer.add_event_handler(source.handler)
        logger.info("controller %s: restarting", self.name)

    async def _wait_for_sync(self) -> None:
        every = self._registrations + [
            _Pending(source.registration, source.kind, source.informer) for source in self._sources
        ]
        pending = [p for p in every if not p.registration.has_synced]
        if not pending:
            return
        async with move_on_after(self._clock, self._cache_sync_timeout) as scope:
            for p in pending:
                await p.registration.wait_synced()
        if scope.cancelled_caught:
            raise self._sync_timeout_error([p for p in pending if not p.registration.has_synced])

    def _sync_timeout_error(self, unsynced: list[_Pending]) -> CacheSyncTimeoutError:
        kinds = tuple(dict.fromkeys(p.kind for p in unsynced))
        errors = {
            p.kind: p.informer.last_error
            for p in unsynced
            if p.informer is not None and p.informer.last_error is not None
        }
        detail = "".join(f"; {kind}: last error: {error}" for kind, error in errors.items())
        return CacheSyncTimeoutError(
            f"controller {self.name!r}: caches of {', '.join(kinds)} did not sync within "
            f"{self._cache_sync_timeout} s{detail}. Check that the client may list and watch "
            "them (RBAC), that the kinds exist (CRDs installed) and that the API server is "
            "reachable; for very large caches raise cache_sync_timeout "
            "(with_options(cache_sync_timeout=...))",
            controller=self.name,
            kinds=kinds,
            timeout=self._cache_sync_timeout,
        )

    async def _drain(self) -> None:
        """Wait (at most the grace) for the reconciles in flight to finish."""
        if self._grace is None:
            await self.queue.shut_down_with_drain()
            return
        async with move_on_after(self._clock, self._grace) as scope:
            await self.queue.shut_down_with_drain()
        if scope.cancelled_caught:
            logger.warning(
                "controller %s: reconciles still running after %s s grace; cancelling them",
                self.name,
                self._grace,
            )

    async def _run_workers(self, scope: anyio.CancelScope) -> None:
        with scope:
            async with anyio.create_task_group() as tg:
                for _ in range(self.max_concurrent_reconciles):
                    tg.start_soon(self._worker)

    async def _worker(self) -> None:
        queue = self.queue
        while not self._stopping:
            try:
                key = await queue.get()
            except ShutDown:
                return
            if self._stopping:  # handed out by a shutting-down queue: keep it for the next run
                self._left_over.add(key)
                queue.done(key)
                return
            try:
                await self._reconcile(key)
            except BaseException:  # cancelled mid-reconcile (errors are handled inside)
                self._left_over.add(key)
                raise
            finally:
                queue.done(key)
            await anyio.lowlevel.checkpoint()  # a reconciler that never awaits cannot starve

    async def _reconcile(self, key: K) -> None:
        metrics = self._metrics
        if metrics is not None:
            metrics.started()
        self._active += 1
        context = ReconcileContext(self.name, key, str(uuid.uuid4()))
        token = _current.set(context)
        start = self._clock.monotonic()
        try:
            with reconcile_span(self.name, key, context.reconcile_id):
                result = await self._call(key)
        except Exception as exc:
            self._handle_outcome(key, context.reconcile_id, None, exc)
        else:
            self._handle_outcome(key, context.reconcile_id, result, None)
        finally:
            self._active -= 1
            _current.reset(token)
            if metrics is not None:
                metrics.finished(self._clock.monotonic() - start)

    async def _call(self, key: K) -> Result:
        timeout = self._reconcile_timeout
        if timeout is None:
            return await self.reconciler.reconcile(key)
        result: Result | None = None
        async with move_on_after(self._clock, timeout) as scope:
            result = await self.reconciler.reconcile(key)
        if scope.cancelled_caught:
            if self._metrics is not None:
                self._metrics.timeout()
            raise TimeoutError(f"reconcile of {key} did not finish within {timeout} s")
        return result  # assigned: the scope was not cancelled

    def _handle_outcome(
        self, key: K, reconcile_id: str, result: Result | None, error: Exception | None
    ) -> None:
        """The one place where a reconcile's outcome becomes queue operations (C2)."""
        if error is None and not isinstance(result, Result):
            error = TypeError(
                f"reconcile() must return a Result, got {type(result).__name__}; "
                "return Result() when done"
            )
        queue = self.queue
        metrics = self._metrics
        if error is not None:
            terminal = is_terminal(error)
            extra = {"controller": self.name, "key": str(key), "reconcile_id": reconcile_id}
            if isinstance(error, Conflict) and not terminal:
                # A stale read after our own write (B22): expected, retried; no traceback.
                logger.info(
                    "controller %s: conflict reconciling %s, retrying: %s",
                    self.name,
                    key,
                    error,
                    extra=extra,
                )
            elif is_expected_failure(error):
                # The API said no or could not be reached (a 404 on a status write of an
                # object just deleted, a 403 from a quota): one line, as kube's HandleError.
                logger.error(
                    "controller %s: reconcile of %s failed%s: %s",
                    self.name,
                    key,
                    " (terminal, not retried)" if terminal else "",
                    error_line(error),
                    extra=extra,
                )
            else:
                logger.error(
                    "controller %s: reconcile of %s failed%s",
                    self.name,
                    key,
                    " (terminal, not retried)" if terminal else "",
                    exc_info=error,
                    extra=extra,
                )
            if terminal:
                queue.forget(key)
            else:
                queue.add_rate_limited(key)
            self._counts["error"] += 1
            if metrics is not None:
                metrics.error(terminal=terminal)
            return
        assert result is not None
        if result.requeue_after:
            queue.forget(key)
            queue.add_after(key, result.requeue_after)
            label = "requeue_after"
        elif result.requeue:
            queue.add_rate_limited(key)
            label = "requeue"
        else:
            queue.forget(key)
            label = "success"
        self._counts[label] += 1
        if metrics is not None:
            metrics.result(label)
