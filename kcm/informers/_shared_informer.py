"""SharedIndexInformer: reflector → DeltaFIFO → indexer → per-handler buffers.

One informer keeps one cache of one kind (optionally one namespace and selectors) and fans
its changes out to any number of handlers. Listers read the cache.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, final, overload

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.abc import TaskStatus

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.models import ObjectKey

from ._backoff import Backoff
from ._delta_fifo import Delta, DeltaFIFO, DeltaType
from ._handlers import (
    _ADD,
    _DELETE,
    _UPDATE,
    HandlerRegistration,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    _Listener,
    _Note,
)
from ._indexer import Indexer, IndexFunc
from ._keys import KeyFunc, meta_namespace_key
from ._listers import Lister
from ._reflector import Reflector, default_watch_error_handler
from ._transforms import Transform
from ._types import KubeObject, ListerWatcher

__all__ = ["MINIMUM_RESYNC_PERIOD", "SharedIndexInformer", "wait_for_cache_sync"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=KubeObject)

MINIMUM_RESYNC_PERIOD = 1.0
"""Handler resync periods below this are raised to it (I6)."""

_DELETED = DeltaType.DELETED
_SYNC = DeltaType.SYNC
_YIELD_EVERY = 256
_FIFO_HIGH_WATER_MARK = 32
"""The reflector reads more of a watch only once the FIFO holds at most this many keys (one
hand-off batch): events are decoded as fast as they are applied, never thousands ahead (e.g.
while a 20,000-object relist is still being applied), each holding a decoded object."""


@final
class SharedIndexInformer(Generic[T]):
    """A cache of one kind kept in step with the server, shared by many handlers.

    Args:
        lister_watcher: the API (``client.api(Pod)``, a filtered view, or a fake in tests).
        resync_period: default handler resync period in seconds (0 = never).
        indexers: extra named indices (the ``"namespace"`` index always exists).
        transform: applied once to each object before it is cached (e.g.
            :func:`strip_managed_fields`). Must be cheap and idempotent. LIST results are
            transformed page by page as they arrive.
        label_selector, field_selector: restrict what is listed and watched.
        resource: resource name used in the lister's NotFound errors (``"pods"``).
        watch_error_handler: sees every error that interrupted listing or watching
            (visibility only: the informer always retries).
        watch_list: try the streaming watch-list for relists (see :class:`Reflector`).
        pause_gc_during_list: keep Python's cyclic GC from rescanning a large LIST while it
            is decoded (temporary :func:`gc.freeze` every ~2,000 objects, undone when it ends; no
            GC setting is left changed and it stands aside if the application uses
            ``gc.freeze`` itself). Several times faster initial syncs of large caches; see
            ``docs/informers.md``. Default on.
        page_size, min_watch_timeout, max_internal_error_retry_duration, backoff: reflector
            tuning (client-go defaults).
        key_func: store key (default ``ObjectKey(namespace, name)``).
        clock, rng: injectable time and randomness.

    Guarantees:
        * Handlers are notified **after** the cache and its indices are updated, in the order
          the changes were applied, each handler from its own buffer and task: a slow or
          failing handler delays only itself, never the reflector or other handlers.
        * Per handler and per object: the first event is an add, no update or delete comes
          before it, nothing comes after a delete until the object is re-added, and a delete
          carries the final state from the watch or, with ``final_state_unknown=True``, the
          last state this handler saw (a relist found the object gone).
        * Identity is namespace/name (I4): a delete and re-create missed while
          disconnected arrives as one update whose old and new UIDs differ.
        * Cached objects are the decoded frozen instances, never copies.
        * :attr:`has_synced` becomes true once the first list reached the cache and the
          handler buffers, and stays true (it is not a freshness signal; see
          :attr:`last_sync_resource_version` and :attr:`watch_connected`).

    Caveats:
        * Handler exceptions are logged and the notification skipped.
        * An updated object whose resourceVersion did not change (a relist that found
          nothing new, or a periodic resync) is delivered only to handlers due for resync.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        *,
        resync_period: float = 0.0,
        indexers: Mapping[str, IndexFunc[T]] | None = None,
        transform: Transform[T] | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource: str = "object",
        watch_error_handler: Callable[[Exception], None] | None = None,
        watch_list: bool = False,
        watch_list_timeout: float = 30.0,
        pause_gc_during_list: bool = True,
        page_size: int | None = None,
        min_watch_timeout: float = 300.0,
        max_internal_error_retry_duration: float = 0.0,
        backoff: Backoff | None = None,
        key_func: KeyFunc = meta_namespace_key,
        clock: Clock = SYSTEM_CLOCK,
        rng: random.Random | None = None,
    ) -> None:
        self._clock = clock
        self._resource = resource
        self._key_func = key_func
        self._indexer: Indexer[T] = Indexer(key_func=key_func, indexers=indexers)
        # The reflector applies the transform (page by page for lists).
        self._fifo: DeltaFIFO[T] = DeltaFIFO(
            key_func=key_func,
            known_objects=self._indexer,
            high_water_mark=_FIFO_HIGH_WATER_MARK,
        )
        self._default_resync = _clamp_resync(resync_period)
        self._resync_check_period = self._default_resync
        self._reflector: Reflector[T] = Reflector(
            lister_watcher,
            self._fifo,
            label_selector=label_selector,
            field_selector=field_selector,
            resync_period=self._resync_check_period,
            should_resync=self._should_resync,
            page_size=page_size,
            watch_list=watch_list,
            watch_list_timeout=watch_list_timeout,
            min_watch_timeout=min_watch_timeout,
            max_internal_error_retry_duration=max_internal_error_retry_duration,
            watch_error_handler=watch_error_handler or default_watch_error_handler,
            transform=transform,
            pause_gc_during_list=pause_gc_during_list,
            backoff=backoff,
            key_func=key_func,
            clock=clock,
            rng=rng,
        )
        self._listeners: list[_Listener] = []
        self._syncing: list[_Listener] = []
        self._tg: anyio.abc.TaskGroup | None = None
        self._started = False
        self._stopped = False
        self._synced = False
        self._synced_event: anyio.Event | None = None
        self._rv_waiters: list[tuple[int, anyio.Event]] = []

    # -- configuration (before start) ------------------------------------------------------

    def set_transform(self, transform: Transform[T] | None) -> None:
        """Set the transform applied to each object before it is cached.

        Raises:
            RuntimeError: the informer has already started.
        """
        if self._started:
            raise RuntimeError("informer has already started: set the transform before run()")
        self._reflector.transform = transform

    def set_watch_error_handler(self, handler: Callable[[Exception], None]) -> None:
        """Set the function that sees list/watch errors (last call wins).

        Raises:
            RuntimeError: the informer has already started.
        """
        if self._started:
            raise RuntimeError("informer has already started: set the handler before run()")
        self._reflector.watch_error_handler = handler

    def add_indexers(self, indexers: Mapping[str, IndexFunc[T]]) -> None:
        """Add named indices; existing objects are indexed at once.

        Raises:
            ValueError: a name is already registered.
            RuntimeError: the informer has stopped.
        """
        if self._stopped:
            raise RuntimeError("informer has stopped")
        self._indexer.add_indexers(indexers)

    # -- reads ---------------------------------------------------------------------------

    @property
    def indexer(self) -> Indexer[T]:
        """The cache (read it; do not write to it)."""
        return self._indexer

    def lister(self) -> Lister[T]:
        """A typed read-only view of the cache."""
        return Lister(self._indexer, resource=self._resource)

    @property
    def reflector(self) -> Reflector[T]:
        return self._reflector

    @property
    def has_synced(self) -> bool:
        """True once the first list has been applied to the cache and queued to handlers."""
        return self._synced

    async def wait_for_sync(self) -> None:
        """Wait until :attr:`has_synced` (no polling)."""
        if self._synced:
            return
        if self._synced_event is None:
            self._synced_event = anyio.Event()
        await self._synced_event.wait()

    @property
    def last_sync_resource_version(self) -> str:
        """The RV of the last list or watch event applied ("" before the first sync)."""
        return self._reflector.last_sync_resource_version

    async def wait_for_resource_version(self, resource_version: str) -> None:
        """Wait until the cache has applied everything up to ``resource_version`` (a write's
        RV, a list's RV), so a read after your own write sees it (D7, B22).

        ResourceVersions are formally opaque; this compares them as integers, which holds for
        kube-apiserver (etcd revisions) and the embedded server. Put a deadline around it.

        Raises:
            ValueError: ``resource_version`` is not an integer.
        """
        target = int(resource_version)
        while not self._reached(target):
            event = anyio.Event()
            self._rv_waiters.append((target, event))
            await event.wait()

    def _reached(self, target: int) -> bool:
        if len(self._fifo):
            return False
        current = self._reflector.last_sync_resource_version
        return current.isdigit() and int(current) >= target

    def _wake_rv_waiters(self) -> None:
        waiters, self._rv_waiters = self._rv_waiters, []
        for target, event in waiters:
            if self._reached(target):
                event.set()
            else:
                self._rv_waiters.append((target, event))

    @property
    def watch_connected(self) -> bool:
        """True while a watch stream is open (D6: a freshness signal)."""
        return self._reflector.watch_connected

    @property
    def last_error(self) -> Exception | None:
        """The last list/watch error, until the next successful list or watch request.

        An informer that never syncs (403, unknown kind) shows why here right away.
        """
        return self._reflector.last_error

    @property
    def is_started(self) -> bool:
        return self._started

    @property
    def is_stopped(self) -> bool:
        return self._stopped

    @property
    def resync_check_period(self) -> float:
        return self._resync_check_period

    # -- handlers ------------------------------------------------------------------------

    @overload
    def add_event_handler(
        self,
        handler: ResourceEventHandler[T],
        *,
        resync_period: float | None = None,
        coalesce: bool = False,
    ) -> HandlerRegistration: ...

    @overload
    def add_event_handler(
        self,
        handler: None = None,
        *,
        on_add: Callable[[T], object] | None = None,
        on_update: Callable[[T, T], object] | None = None,
        on_delete: Callable[[T], object] | None = None,
        resync_period: float | None = None,
        coalesce: bool = False,
    ) -> HandlerRegistration: ...

    def add_event_handler(
        self,
        handler: ResourceEventHandler[T] | None = None,
        *,
        on_add: Callable[[T], object] | None = None,
        on_update: Callable[[T, T], object] | None = None,
        on_delete: Callable[[T], object] | None = None,
        resync_period: float | None = None,
        coalesce: bool = False,
    ) -> HandlerRegistration:
        """Register a handler (an object with ``on_add/on_update/on_delete`` or plain
        functions). A handler added after start first gets every cached object as an
        initial add, then every later change (I7).

        Args:
            handler: a :class:`ResourceEventHandler`; or pass ``on_add(obj)``,
                ``on_update(old, new)``, ``on_delete(obj)`` functions instead.
            resync_period: replay the cache to this handler as updates this often (seconds;
                None = the informer's default; 0 = never; at least 1 s).
            coalesce: bound the buffer by key instead of growing it: pending notifications
                for one object merge (add+update → add, update+update → update, add+delete →
                nothing, update+delete → delete). Order between objects then follows each
                object's first pending change. Use it for level-based consumers.

        Returns:
            The registration: ``has_synced``, ``wait_synced()``, ``remove()``.

        Raises:
            RuntimeError: the informer has stopped.
        """
        if self._stopped:
            raise RuntimeError("informer has stopped: handlers can no longer be added")
        if handler is None:
            handler = ResourceEventHandlerFuncs(
                on_add=on_add, on_update=on_update, on_delete=on_delete
            )
        period = self._resolve_resync(resync_period)
        listener = _Listener(
            handler, resync_period=period, coalesce=coalesce, monotonic=self._clock.monotonic
        )
        listener.next_resync = self._clock.monotonic() + period
        # copy-on-write: a handler called from _handle_deltas may add or remove handlers
        self._listeners = [*self._listeners, listener]
        registration = HandlerRegistration(listener, self.remove_event_handler)
        if self._started:
            push = listener.push
            for key, obj in self._indexer.items():
                push(key, (_ADD, obj, None, True))
            if self._synced:
                listener.mark_informer_synced()
            if self._tg is not None:
                self._tg.start_soon(listener.run)
        return registration

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        """Stop notifications to a handler (idempotent); buffered ones are dropped."""
        listener = registration._listener
        self._listeners = [other for other in self._listeners if other is not listener]
        self._syncing = [other for other in self._syncing if other is not listener]
        listener.stop()

    def _resolve_resync(self, requested: float | None) -> float:
        period = self._default_resync if requested is None else _clamp_resync(requested)
        if not self._started:
            check = self._resync_check_period
            if period > 0 and (check == 0 or period < check):
                self._resync_check_period = period
                self._reflector.resync_period = period
            return period
        if period == 0:
            return 0.0
        if self._resync_check_period == 0:
            logger.warning("resync_period %s ignored: the informer started without resync", period)
            return 0.0
        return max(period, self._resync_check_period)

    def _should_resync(self) -> bool:
        now = self._clock.monotonic()
        syncing = [
            listener
            for listener in self._listeners
            if listener.resync_period > 0 and listener.next_resync <= now
        ]
        for listener in syncing:
            listener.next_resync = now + listener.resync_period
        self._syncing = syncing
        return bool(syncing)

    # -- processing ----------------------------------------------------------------------

    def _handle_deltas(self, key: ObjectKey, deltas: list[Delta[T]], initial: bool) -> None:
        indexer = self._indexer
        listeners = self._listeners
        for delta in deltas:
            kind = delta.type
            if kind is _DELETED:
                old = indexer.delete(key)
                if old is None:
                    continue  # never cached (or already gone): nothing to tell
                final_unknown = delta.final_state_unknown
                note: _Note = (_DELETE, old if final_unknown else delta.object, None, final_unknown)
                for listener in listeners:
                    listener.push(key, note)
                continue
            obj = delta.object
            old = indexer.upsert(key, obj)
            if old is None:
                note = (_ADD, obj, None, initial)
                for listener in listeners:
                    listener.push(key, note)
            elif kind is _SYNC or old.metadata.resource_version == obj.metadata.resource_version:
                note = (_UPDATE, obj, old, True)
                for listener in self._syncing:
                    listener.push(key, note)
            else:
                note = (_UPDATE, obj, old, False)
                for listener in listeners:
                    listener.push(key, note)

    def _mark_synced(self) -> None:
        self._synced = True
        for listener in self._listeners:
            listener.mark_informer_synced()
        if self._synced_event is not None:
            self._synced_event.set()

    async def _process_loop(self) -> None:
        fifo = self._fifo
        handle = self._handle_deltas
        while True:
            if not self._synced and fifo.has_synced:
                self._mark_synced()  # e.g. an empty first list: nothing to pop
            if self._rv_waiters:
                self._wake_rv_waiters()
            await fifo.wait()
            done = 0
            while (item := fifo.pop()) is not None:
                try:
                    handle(*item)
                except Exception:
                    logger.exception("applying deltas for %s failed", item[0])
                if not self._synced and fifo.has_synced:
                    self._mark_synced()
                done += 1
                if done >= _YIELD_EVERY:
                    done = 0
                    await anyio.lowlevel.checkpoint()

    # -- lifecycle -----------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled. ``task_status.started()`` is called once the first list has
        reached the cache and the handler buffers, so ``await tg.start(informer.run)`` waits
        for the cache to sync.

        Raises:
            RuntimeError: the informer was already started (informers cannot be restarted).
        """
        if self._started:
            raise RuntimeError("informer already started; informers cannot be run twice")
        self._started = True
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                for listener in self._listeners:
                    tg.start_soon(listener.run)
                tg.start_soon(self._process_loop)
                await tg.start(self._reflector.run)
                await self.wait_for_sync()
                task_status.started()
        finally:
            self._stopped = True
            self._tg = None


def _clamp_resync(period: float) -> float:
    if period < 0:
        raise ValueError(f"resync_period must be >= 0, got {period}")
    if period == 0:
        return 0.0
    return max(period, MINIMUM_RESYNC_PERIOD)


async def wait_for_cache_sync(*waitables: SharedIndexInformer[Any] | HandlerRegistration) -> None:
    """Wait until every informer (or handler registration) has synced (no polling).

    Put a deadline around it: ``with anyio.move_on_after(30): ...`` (or
    :func:`kcm.clock.move_on_after` with an injected clock), then check ``has_synced``.
    """
    for waitable in waitables:
        if isinstance(waitable, HandlerRegistration):
            await waitable.wait_synced()
        else:
            await waitable.wait_for_sync()
