"""Event handlers and their per-handler buffered delivery (client-go's processorListener).

The informer pushes notifications after the cache is updated; each registered handler has its
own buffer and its own consumer task, so a handler that falls behind delays only itself (I5,
B9), never the reflector or the other handlers. A handler that is keeping up (its task parked,
its buffer empty) is called directly by the informer with a live change: handlers are
synchronous, so this only saves the task switch. The initial list always goes through the
buffer.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, final

import anyio
import anyio.lowlevel

from kcm.models import ObjectKey

__all__ = [
    "HandlerRegistration",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
T_contra = TypeVar("T_contra", contravariant=True)

_ADD, _UPDATE, _DELETE = 0, 1, 2
# A notification: (kind, obj, old_or_None, flag) where flag is is_in_initial_list for adds,
# is_resync for updates and final_state_unknown for deletes.
_Note = tuple[int, Any, Any, bool]

_CHECKPOINT_EVERY = 64
"""A consumer delivers notifications in batches of this many, and yields to the event loop
after a batch once its turn has lasted :data:`TURN_BUDGET`."""

TURN_BUDGET = 0.002
"""Seconds a consumer may keep delivering batches before it yields (it always delivers at
least one batch per turn, so a slow handler is no slower than before). A count alone made a
cheap handler that is behind catch up at only 64 notifications per turn, while the watch
decodes 32 events per turn: with 20,000 initial adds to drain, 10,000 watch updates piled up
behind them, each holding a replaced object (110 MB more at the peak, 23.0 instead of 15.7 KB
per cached pod after, from fragmented pymalloc arenas; docs/benchmarks.md, informer_throughput,
"memory in flush mode")."""


class ResourceEventHandler(Protocol[T_contra]):
    """Receives an informer's notifications. Methods are synchronous and must be quick.

    * ``on_add(obj, is_in_initial_list=...)``: the object appeared (or the handler was added
      after start and this is the replay of the cache, flagged as initial).
    * ``on_update(old, new)``: the object changed; ``old is new`` (or equal resourceVersions)
      for a periodic resync.
    * ``on_delete(obj, final_state_unknown=...)``: the object is gone. ``obj`` is the last state
      the watch sent, or, when ``final_state_unknown`` is true, the last state the cache knew
      of before a relist found the object missing (the deletion itself was not observed).
    """

    def on_add(self, obj: T_contra, *, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: T_contra, new: T_contra) -> None: ...

    def on_delete(self, obj: T_contra, *, final_state_unknown: bool) -> None: ...


@final
class ResourceEventHandlerFuncs(Generic[T]):
    """A :class:`ResourceEventHandler` built from optional plain functions.

    ``on_add`` may take ``(obj)`` only; pass ``add_wants_initial=True`` if it takes
    ``(obj, is_in_initial_list)``. ``on_delete`` may take ``(obj)`` only; pass
    ``delete_wants_flag=True`` if it takes ``(obj, final_state_unknown)``.
    """

    __slots__ = ("_add", "_add_flag", "_delete", "_delete_flag", "_update")

    def __init__(
        self,
        *,
        on_add: Callable[..., object] | None = None,
        on_update: Callable[[T, T], object] | None = None,
        on_delete: Callable[..., object] | None = None,
        add_wants_initial: bool = False,
        delete_wants_flag: bool = False,
    ) -> None:
        self._add = on_add
        self._update = on_update
        self._delete = on_delete
        self._add_flag = add_wants_initial
        self._delete_flag = delete_wants_flag

    def on_add(self, obj: T, *, is_in_initial_list: bool) -> None:
        if self._add is not None:
            if self._add_flag:
                self._add(obj, is_in_initial_list)
            else:
                self._add(obj)

    def on_update(self, old: T, new: T) -> None:
        if self._update is not None:
            self._update(old, new)

    def on_delete(self, obj: T, *, final_state_unknown: bool) -> None:
        if self._delete is not None:
            if self._delete_flag:
                self._delete(obj, final_state_unknown)
            else:
                self._delete(obj)


@final
class HandlerRegistration:
    """The handle :meth:`SharedIndexInformer.add_event_handler` returns.

    Guarantees:
        * :attr:`has_synced` becomes true once the informer has synced **and** this handler
          has processed every initial add it was sent (I9, B12), and never
          turns false again.
    """

    def __init__(self, listener: _Listener, remover: Callable[[HandlerRegistration], None]):
        self._listener = listener
        self._remover = remover

    @property
    def has_synced(self) -> bool:
        return self._listener.synced

    async def wait_synced(self) -> None:
        """Wait until :attr:`has_synced` is true."""
        await self._listener.wait_synced()

    @property
    def pending(self) -> int:
        """Notifications buffered for this handler and not yet delivered."""
        return self._listener.pending

    @property
    def removed(self) -> bool:
        return self._listener.removed

    @property
    def resync_period(self) -> float:
        """The effective resync period of this handler in seconds (0 = never)."""
        return self._listener.resync_period

    def remove(self) -> None:
        """Stop notifications to this handler (idempotent). Buffered ones are dropped."""
        self._remover(self)


class _Listener:
    """One handler, its buffer, its resync schedule and its sync tracking."""

    def __init__(
        self,
        handler: ResourceEventHandler[Any],
        *,
        resync_period: float,
        coalesce: bool,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        self.handler = handler
        self._monotonic = monotonic
        self.resync_period = resync_period
        self.next_resync = 0.0
        self.syncing = False
        self.coalesce = coalesce
        self._fifo: deque[_Note] = deque()
        self._by_key: OrderedDict[ObjectKey, list[_Note]] = OrderedDict()
        self._count = 0
        self._wake: anyio.Event | None = None
        self.pending_initial = 0
        self.informer_synced = False
        self.synced = False
        self._synced_event: anyio.Event | None = None
        self.removed = False
        self.scope: anyio.CancelScope | None = None

    @property
    def pending(self) -> int:
        return self._count

    # -- sync tracking -------------------------------------------------------------------

    def _check_synced(self) -> None:
        if not self.synced and self.informer_synced and self.pending_initial == 0:
            self.synced = True
            if self._synced_event is not None:
                self._synced_event.set()

    def mark_informer_synced(self) -> None:
        self.informer_synced = True
        self._check_synced()

    async def wait_synced(self) -> None:
        if self.synced:
            return
        if self._synced_event is None:
            self._synced_event = anyio.Event()
        await self._synced_event.wait()

    # -- producer side (synchronous, called by the informer) ------------------------------

    def push(self, key: ObjectKey, note: _Note) -> None:
        if self.removed:
            return
        if note[0] == _ADD and note[3]:
            self.pending_initial += 1  # the initial list stays on the task (batched anyway)
        elif self._wake is not None and self._count == 0:
            # The consumer task is parked with nothing buffered: deliver here instead of
            # waking it (a task switch per handler per event was ~5 % of kcm's CPU). Order
            # holds: nothing is ahead of this note, and the task stays parked.
            self._deliver(note)
            return
        if self.coalesce:
            self._push_coalescing(key, note)
        else:
            self._fifo.append(note)
            self._count += 1
        wake = self._wake
        if wake is not None:
            self._wake = None
            wake.set()

    def _push_coalescing(self, key: ObjectKey, note: _Note) -> None:
        notes = self._by_key.get(key)
        if notes is None:
            self._by_key[key] = [note]
            self._count += 1
            return
        last = notes[-1]
        kind, lkind = note[0], last[0]
        if lkind == _ADD and kind == _UPDATE:
            notes[-1] = (_ADD, note[1], None, last[3])
        elif lkind == _ADD and kind == _DELETE:
            notes.pop()
            self._count -= 1
            if last[3]:
                self.pending_initial -= 1
                self._check_synced()
            if not notes:
                del self._by_key[key]
        elif lkind == _UPDATE and kind == _UPDATE:
            notes[-1] = (_UPDATE, note[1], last[2], last[3] and note[3])
        elif lkind == _UPDATE and kind == _DELETE:
            notes[-1] = note
        else:
            notes.append(note)
            self._count += 1

    def _take(self) -> list[_Note] | _Note | None:
        if self.coalesce:
            if not self._by_key:
                return None
            _, notes = self._by_key.popitem(last=False)
            self._count -= len(notes)
            return notes
        if not self._fifo:
            return None
        self._count -= 1
        return self._fifo.popleft()

    # -- consumer task -------------------------------------------------------------------

    def _deliver(self, note: _Note) -> None:
        kind, obj, old, flag = note
        handler = self.handler
        try:
            if kind == _UPDATE:
                handler.on_update(old, obj)
            elif kind == _ADD:
                handler.on_add(obj, is_in_initial_list=flag)
            else:
                handler.on_delete(obj, final_state_unknown=flag)
        except Exception:
            logger.exception("event handler %r failed; the notification is skipped", handler)
        finally:
            if kind == _ADD and flag:
                self.pending_initial -= 1
                if self.pending_initial == 0:
                    self._check_synced()

    async def run(self) -> None:
        with anyio.CancelScope() as scope:
            self.scope = scope
            if self.removed:
                scope.cancel()
            if self.coalesce:
                await self._run_coalescing()
            else:
                await self._run_fifo()

    async def _run_fifo(self) -> None:
        # Drain batches of _CHECKPOINT_EVERY notes straight off the deque (no per-note await)
        # until the turn has lasted TURN_BUDGET. push() never blocks and wakes us with one
        # Event only when we are idle.
        fifo = self._fifo
        popleft = fifo.popleft
        deliver = self._deliver
        monotonic = self._monotonic
        turn_end = monotonic() + TURN_BUDGET
        while True:
            if not fifo:
                self._wake = anyio.Event()
                await self._wake.wait()
                turn_end = monotonic() + TURN_BUDGET
                continue
            for _ in range(min(len(fifo), _CHECKPOINT_EVERY)):
                if not fifo:  # a handler removed itself (stop() cleared the buffer)
                    break
                self._count -= 1
                deliver(popleft())
            if fifo and monotonic() >= turn_end:
                await anyio.lowlevel.checkpoint()
                turn_end = monotonic() + TURN_BUDGET

    async def _run_coalescing(self) -> None:
        monotonic = self._monotonic
        turn_end = monotonic() + TURN_BUDGET
        streak = 0
        while True:
            item = self._take()
            if item is None:
                streak = 0
                self._wake = anyio.Event()
                await self._wake.wait()
                turn_end = monotonic() + TURN_BUDGET
                continue
            assert isinstance(item, list)
            for note in item:
                self._deliver(note)
            streak += 1
            if streak >= _CHECKPOINT_EVERY:
                streak = 0
                if monotonic() >= turn_end:
                    await anyio.lowlevel.checkpoint()
                    turn_end = monotonic() + TURN_BUDGET

    def stop(self) -> None:
        self.removed = True
        self._fifo.clear()
        self._by_key.clear()
        self._count = 0
        if self.scope is not None:
            self.scope.cancel()
