"""``kcm bench``'s measurement of kcm's own SharedIndexInformer.

The watch rate is the informer's, not the server's write rate: the informer lists (timed),
then its watch waits behind a gate while the load generator makes its updates, and opens from
the list's resourceVersion once they are all written, so the server replays them as fast as it
can send them. A server that keeps fewer events than that (kube-apiserver's watch cache)
answers 410; the informer then relists and the run reports that the replay was lost.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from kcm.client import Api
from kcm.informers import SharedIndexInformer

__all__ = ["InformerRun", "measure_informer", "settled_rss"]

_PAGE = os.sysconf("SC_PAGE_SIZE")
STALL_SECONDS = 30.0
"""A watch that delivers nothing new for this long has lost the replay (410 and a relist)."""


def settled_rss() -> int:
    """Resident memory after a full collection and returning freed heap pages to the OS."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


@dataclass
class InformerRun:
    """What one informer run measured (rates per wall-clock second, CPU of this process)."""

    objects: int
    events: int
    list_seconds: float
    list_cpu_seconds: float
    watch_seconds: float
    watch_cpu_seconds: float
    bytes_per_object: float
    list_resource_version: str


class _GatedWatch:
    """An Api whose ``watch`` opens only once ``gate`` is set (``list`` passes through)."""

    def __init__(self, api: Api[Any], gate: anyio.Event) -> None:
        self._api = api
        self._gate = gate

    async def list(self, **kwargs: Any) -> Any:
        return await self._api.list(**kwargs)

    @contextlib.asynccontextmanager
    async def watch(self, **kwargs: Any) -> AsyncIterator[Any]:
        await self._gate.wait()
        async with self._api.watch(**kwargs) as stream:
            yield stream


async def measure_informer(
    api: Api[Any],
    *,
    updates: int,
    make_updates: Callable[[], Awaitable[None]],
    on_listed: Callable[[int], None],
    on_event: Callable[[int], None],
) -> InformerRun:
    """List-sync an informer on ``api``, run ``make_updates``, then watch ``updates`` events.

    ``on_listed(n)`` is called once the cache holds ``n`` objects; ``on_event(k)`` about ten
    times a second with the events seen so far (for a progress bar).

    Raises:
        TimeoutError: the watch stalled before ``updates`` events (the replay was lost).
    """
    gate = anyio.Event()
    informer: SharedIndexInformer[Any] = SharedIndexInformer(_GatedWatch(api, gate))
    seen = 0
    done = anyio.Event()

    def on_update(old: Any, new: Any) -> None:
        nonlocal seen
        seen += 1
        if seen >= updates:
            done.set()

    informer.add_event_handler(on_add=lambda obj: None, on_update=on_update)
    base = settled_rss()
    async with anyio.create_task_group() as tg:
        t0, c0 = time.perf_counter(), time.process_time()
        await tg.start(informer.run)
        t1, c1 = time.perf_counter(), time.process_time()
        objects = len(informer.indexer.keys())
        list_rv = informer.last_sync_resource_version
        on_listed(objects)
        # RSS is a page count: when freed pages outweigh a small cache it shrinks; say 0.
        per_object = max(0.0, (settled_rss() - base) / max(objects, 1))
        await make_updates()
        t2, c2 = time.perf_counter(), time.process_time()
        gate.set()
        if updates:
            last, last_change = -1, time.perf_counter()
            while not done.is_set():
                with anyio.move_on_after(0.1):
                    await done.wait()
                if seen != last:
                    last, last_change = seen, time.perf_counter()
                    on_event(seen)
                elif time.perf_counter() - last_change > STALL_SECONDS:
                    raise TimeoutError(
                        f"the watch delivered {seen} of {updates} events and then nothing for "
                        f"{STALL_SECONDS:g}s: the server probably no longer had the events from "
                        f"resourceVersion {list_rv} (410); try fewer --updates"
                    )
        t3, c3 = time.perf_counter(), time.process_time()
        on_event(seen)
        tg.cancel_scope.cancel()
    return InformerRun(
        objects=objects,
        events=seen,
        list_seconds=t1 - t0,
        list_cpu_seconds=c1 - c0,
        watch_seconds=t3 - t2,
        watch_cpu_seconds=c3 - c2,
        bytes_per_object=per_object,
        list_resource_version=list_rv,
    )
