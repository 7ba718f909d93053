"""DeltaFIFO: the queue between the reflector and the informer's cache (F1-F12).

The reflector writes watch events and relists into it; the shared informer pops one key at a
time with every delta queued for that key (oldest first) and applies them to the indexer and
the handlers. Every method is synchronous; only :meth:`DeltaFIFO.wait` (the consumer) and
:meth:`DeltaFIFO.wait_for_room` (the producer's back-pressure) await.
"""

from __future__ import annotations

import enum
import functools
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, final

import anyio
import anyio.lowlevel

from kcm.models import ObjectKey

from ._keys import KeyFunc, meta_namespace_key
from ._types import KubeObject

__all__ = ["Delta", "DeltaFIFO", "DeltaType", "KnownObjects"]

T = TypeVar("T", bound=KubeObject)
T_co = TypeVar("T_co", covariant=True)


class DeltaType(enum.Enum):
    """Why a delta was queued."""

    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    REPLACED = "Replaced"
    """The object was in a relist (LIST or watch-list) result."""
    SYNC = "Sync"
    """A periodic resync replayed the cached object."""


class Delta(NamedTuple, Generic[T]):
    """One change to one object.

    ``final_state_unknown`` is only ever true on a DELETED delta that a relist inferred (the
    watch missed the deletion); ``object`` is then the last state the informer knew of
    (client-go's ``DeletedFinalStateUnknown``, as a flag rather than a wrapper type).
    """

    type: DeltaType
    object: T
    final_state_unknown: bool = False


class KnownObjects(Protocol[T_co]):
    """What the FIFO needs from the cache to detect deletions and to resync (the indexer)."""

    def get(self, key: ObjectKey) -> T_co | None: ...

    def keys(self) -> list[ObjectKey]: ...


_new_delta: Callable[[tuple[DeltaType, Any, bool]], Delta[Any]] = functools.partial(
    tuple.__new__, Delta
)
"""``Delta(type, object, final_state_unknown)`` from a tuple without the NamedTuple's Python
``__new__`` (the tuple type's own constructor: 0.3 µs less per queued change)."""

_ADDED = DeltaType.ADDED
_UPDATED = DeltaType.UPDATED
_DELETED = DeltaType.DELETED


@final
class DeltaFIFO(Generic[T]):
    """A per-key FIFO of deltas.

    Guarantees:
        * A key is queued at most once: from its first delta after the last pop until the
          next pop; keys pop in the order of their first delta (F2).
        * Deltas of one key are kept oldest first and never merged, except two consecutive
          deletions, which collapse to one, keeping the one that is not a tombstone (F6).
        * :meth:`replace` queues a DELETED tombstone for every object that is queued or
          cached but absent from the new list, so nothing is left behind (F7, B10).
        * :meth:`resync` never replays a cached state over a newer queued one (F8).
        * With a ``high_water_mark``, :meth:`wait_for_room` holds the producer while more
          keys than that are queued; producing never blocks and nothing is dropped.

    Args:
        key_func: maps an object to its key.
        known_objects: the cache (the informer's indexer), used for deletions and resyncs.
        high_water_mark: queued keys above which :meth:`wait_for_room` waits for the consumer
            (None: it only yields). Only for a FIFO that has a consumer running.

    Objects are queued as given: the informer's transform runs earlier, in the reflector.
    """

    def __init__(
        self,
        *,
        key_func: KeyFunc = meta_namespace_key,
        known_objects: KnownObjects[T] | None = None,
        high_water_mark: int | None = None,
    ) -> None:
        self._key_func = key_func
        self._known = known_objects
        self._items: dict[ObjectKey, list[Delta[T]]] = {}
        self._queue: deque[ObjectKey] = deque()
        self._populated = False
        self._initial_population_count = 0
        self._waiter: anyio.Event | None = None
        self._high_water_mark = high_water_mark
        self._room_waiter: anyio.Event | None = None  # only ever set with a high-water mark
        self._room_level = high_water_mark or 0

    def __len__(self) -> int:
        """Number of keys with pending deltas."""
        return len(self._queue)

    def pending(self, key: ObjectKey) -> list[Delta[T]]:
        """The deltas queued for ``key`` (a copy; empty if none)."""
        return list(self._items.get(key, ()))

    def keys(self) -> list[ObjectKey]:
        """Queued keys in pop order."""
        return list(self._queue)

    @property
    def has_synced(self) -> bool:
        """True once the first :meth:`replace` has been fully popped, or any add/update/delete
        came first (F10)."""
        return self._populated and self._initial_population_count == 0

    # -- producers -----------------------------------------------------------------------

    def _queue_action(self, kind: DeltaType, obj: T, key: ObjectKey, tombstone: bool) -> None:
        delta: Delta[T] = _new_delta((kind, obj, tombstone))
        deltas = self._items.get(key)
        if deltas is None:
            self._items[key] = [delta]
            self._queue.append(key)
            waiter = self._waiter
            if waiter is not None:
                self._waiter = None
                waiter.set()
        else:
            deltas.append(delta)
            if kind is _DELETED and len(deltas) > 1 and deltas[-2].type is _DELETED:
                # Keep the deletion that carries the real final state (F6).
                older = deltas[-2]
                deltas.pop()
                if older.final_state_unknown:
                    deltas[-1] = delta

    def add(self, obj: T) -> None:
        """Queue an ADDED delta (a watch ADDED event)."""
        self._populated = True
        self._queue_action(_ADDED, obj, self._key_func(obj), False)

    def update(self, obj: T) -> None:
        """Queue an UPDATED delta (a watch MODIFIED event)."""
        self._populated = True
        self._queue_action(_UPDATED, obj, self._key_func(obj), False)

    def delete(self, obj: T) -> None:
        """Queue a DELETED delta carrying ``obj`` (the last state the watch sent).

        Ignored when the key is neither cached nor queued (F5).
        """
        self._populated = True
        key = self._key_func(obj)
        if key not in self._items:
            known = self._known
            if known is None or known.get(key) is None:
                return
        self._queue_action(_DELETED, obj, key, False)

    def replace(self, objects: Iterable[T]) -> None:
        """Queue the result of a relist: REPLACED for every listed object and a DELETED
        tombstone for every queued or cached key the list no longer has (F7).

        The list's resourceVersion stays with the reflector, which tracks RVs itself.
        """
        key_func = self._key_func
        items = self._items
        queue = self._queue
        listed: set[ObjectKey] = set()
        listed_add = listed.add
        replaced = DeltaType.REPLACED
        for obj in objects:  # _queue_action inlined: a relist may hold 100,000 objects
            key = key_func(obj)
            listed_add(key)
            delta: Delta[T] = _new_delta((replaced, obj, False))
            deltas = items.get(key)
            if deltas is None:
                items[key] = [delta]
                queue.append(key)
            else:
                deltas.append(delta)  # never a deletion: nothing to collapse
        # Every listed key is queued now, so queued keys that were not listed exist only if
        # there are more queued keys than listed ones.
        if len(items) > len(listed):
            for key, deltas in list(items.items()):
                if key not in listed:
                    self._queue_action(_DELETED, deltas[-1].object, key, True)
        known = self._known
        if known is not None:
            known_keys = known.keys()
            for key in [key for key in known_keys if key not in items]:
                last = known.get(key)
                if last is not None:
                    self._queue_action(_DELETED, last, key, True)
        if not self._populated:
            self._populated = True
            self._initial_population_count = len(self._queue)
        if self._waiter is not None:  # an empty first list still makes the FIFO "synced"
            self._waiter.set()
            self._waiter = None

    def bookmark(self) -> None:
        """Note progress without a change (a watch BOOKMARK): wakes the consumer so that
        "has the cache reached RV X" waiters can be answered (the RV is the reflector's)."""
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set()

    def resync(self) -> None:
        """Queue a SYNC delta for every cached object with nothing pending (F8)."""
        known = self._known
        if known is None:
            return
        known_keys = known.keys()
        for key in known_keys:
            if key in self._items:
                continue
            obj = known.get(key)
            if obj is not None:
                self._queue_action(DeltaType.SYNC, obj, key, False)

    # -- consumer ------------------------------------------------------------------------

    def pop(self) -> tuple[ObjectKey, list[Delta[T]], bool] | None:
        """Take the head key with all its deltas, or None when empty.

        Returns:
            ``(key, deltas, is_in_initial_list)``; the last is true while the deltas of the
            first relist are being handed out.
        """
        if not self._queue:
            return None
        key = self._queue.popleft()
        deltas = self._items.pop(key)
        initial = self._initial_population_count > 0
        if initial:
            self._initial_population_count -= 1
        room = self._room_waiter
        if room is not None and len(self._queue) <= self._room_level:
            self._room_waiter = None
            room.set()
        return key, deltas, initial

    async def wait_for_room(self) -> None:
        """The producer's hand-off: yield, and wait while more than ``high_water_mark`` keys
        are queued (until the consumer has popped down to it).

        The reflector calls this before it reads more of a watch, so events are decoded only
        as fast as the informer applies them: each queued change holds a decoded object, and
        a backlog of them fragments the heap for good (docs/benchmarks.md, informer_throughput,
        "memory in flush mode").
        """
        await anyio.lowlevel.checkpoint()
        mark = self._high_water_mark
        while mark is not None and len(self._queue) > mark:
            if self._room_waiter is None:
                self._room_waiter = anyio.Event()
            await self._room_waiter.wait()

    async def wait(self) -> None:
        """Wait until something is queued (returns at once if the queue is not empty)."""
        if self._queue:
            return
        if self._waiter is None:
            self._waiter = anyio.Event()
        await self._waiter.wait()
