"""Keep Python's cyclic GC from rescanning a LIST while it is being decoded.

Decoding a large LIST allocates millions of GC-tracked containers (lists, dicts) that all
survive. CPython runs a full collection whenever the objects that reached the oldest
generation grow by a quarter, so a 100,000-pod list triggers about a dozen full collections,
each rescanning everything decoded so far (seconds of CPU, measured in
docs/benchmarks.md#informer_throughput).

While at least one list is in progress, :func:`list_page_decoded` calls :func:`gc.freeze`
after the pages that complete each :data:`MIN_FREEZE_OBJECTS` decoded objects (small lists
never freeze and cost nothing): the decoded objects move to the permanent generation, which no
collection scans, and the collector stays enabled for everything else (cycles created
between two pages are still collected as usual). When the last list in progress ends,
:func:`gc.unfreeze` moves them all into the oldest generation and one full collection runs
at once: it examines the list once (instead of a dozen times) and, more importantly, resets
the collector's own bookkeeping (the size of the oldest generation), which otherwise would
trigger that same full collection at a random moment soon after, e.g. in the middle of
handling watch events (measured: 2 s at 100,000 pods). No user-visible GC setting changes:
``gc.isenabled()`` and ``gc.get_threshold()`` are never touched, and
``gc.get_freeze_count()`` is back to 0 after.

Caveats:
    * It only acts when nothing else uses :func:`gc.freeze` (the freeze count is 0 when the
      first list starts) and the collector is enabled; otherwise it does nothing, so an
      application that froze its heap (e.g. before forking workers) is never unfrozen.
    * Cyclic garbage created by other code during a list is collected at the next full
      collection after the list instead of earlier.
    * Process-wide bookkeeping, guarded by a lock: lists may run on several event loops or
      threads at once; the heap is unfrozen when the last one ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["MIN_FREEZE_OBJECTS", "gc_paused_for_list", "list_page_decoded"]

MIN_FREEZE_OBJECTS = 2000
"""Freeze only once this many objects were decoded since the last freeze: small lists (and
most relists) never freeze, so they never pay the closing full collection either."""

_lock = threading.Lock()
_active = 0
_owned = False
_froze = False
_pending = 0


@contextmanager
def gc_paused_for_list(enabled: bool = True) -> Iterator[None]:
    """Mark a LIST in progress for the duration of the ``with`` block (no-op if not enabled)."""
    global _active, _owned, _froze, _pending
    if not enabled:
        yield
        return
    with _lock:
        if _active == 0:
            _owned = gc.isenabled() and gc.get_freeze_count() == 0
            _froze = False
            _pending = 0
        _active += 1
    try:
        yield
    finally:
        unfrozen = False
        with _lock:
            _active -= 1
            if _active == 0 and _owned:
                _owned = False
                if _froze:
                    gc.unfreeze()
                    unfrozen = True
        if unfrozen:
            gc.collect()  # outside the lock: finalizers may run


def list_page_decoded(objects: int) -> None:
    """Called after each decoded page (or batch of initial events) of a list in progress,
    with the number of objects it held."""
    global _froze, _pending
    if _owned:
        with _lock:
            if _owned and _active > 0:
                _pending += objects
                if _pending >= MIN_FREEZE_OBJECTS:
                    gc.freeze()
                    _froze = True
                    _pending = 0
