"""The watch loop hands events to the informer in small batches, so replaced objects are freed
(and their memory reused) soon after the next ones are decoded, not hundreds of events later;
after a large list too, whose deltas and handler notifications are still being worked off
when the watch starts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from kcm.informers import SharedIndexInformer
from kcm.informers._reflector import _HANDOFF_EVERY
from kcm.informers._shared_informer import _FIFO_HIGH_WATER_MARK
from kcm.models import ObjectList, WatchEvent
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ListMeta
from kcm.testing import FakeClock
from tests.unit.informers.inf_fakes import bookmark, cm

pytestmark = pytest.mark.anyio

EVENTS = 512
KEYS = 50


class EagerWatch:
    """A ListerWatcher whose watch yields every event without ever awaiting (a fast server
    whose whole stream is already buffered)."""

    def __init__(self, listed: int = KEYS, queued: Callable[[], int] = lambda: 0) -> None:
        self.produced = 0
        self.listed = listed
        self.queued = queued
        self.queued_when_read: list[int] = []

    async def list(self, **kwargs: Any) -> ObjectList[ConfigMap]:
        return ObjectList(
            metadata=ListMeta(resource_version="1"),
            items=[cm(f"o{i}", 1) for i in range(self.listed)],
        )

    @asynccontextmanager
    async def watch(self, **kwargs: Any) -> AsyncIterator[AsyncIterator[WatchEvent[ConfigMap]]]:
        async def stream() -> AsyncIterator[WatchEvent[ConfigMap]]:
            if kwargs.get("resource_version") != "1":
                await anyio.sleep_forever()
            for rv in range(2, EVENTS + 2):
                self.queued_when_read.append(self.queued())
                self.produced += 1
                yield WatchEvent(type="MODIFIED", object=cm(f"o{rv % KEYS}", rv))
            await anyio.sleep_forever()

        yield stream()


async def run_until(informer: SharedIndexInformer[ConfigMap], done: anyio.Event) -> None:
    """Run ``informer`` until ``done`` is set (10 s at most: a hang fails the test)."""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(informer.run)
            await done.wait()
            tg.cancel_scope.cancel()


async def test_handlers_keep_up_with_a_stream_that_never_waits() -> None:
    lw = EagerWatch()
    informer = SharedIndexInformer(lw)
    lags: list[int] = []
    done = anyio.Event()

    def on_update(old: ConfigMap, new: ConfigMap) -> None:
        lags.append(lw.produced - len(lags) - 1)  # events decoded but not yet handled
        if len(lags) == EVENTS:
            done.set()

    informer.add_event_handler(on_update=on_update)
    await run_until(informer, done)
    assert len(lags) == EVENTS
    # The handler runs a batch or two behind the stream (trio schedules in rounds), never the
    # whole stream behind, as a loop that yields only when the connection has no data would.
    assert max(lags) <= 3 * _HANDOFF_EVERY < EVENTS // 4


async def test_after_a_large_list_the_watch_waits_for_the_informer_and_its_handler() -> None:
    # The informer's FIFO holds the list's 2,000 deltas and the handler 2,000 initial adds
    # when the watch starts: the reflector reads no event until the FIFO is worked off, and
    # the handler (cheap; time stands still on the fake clock) drains its adds in one turn
    # instead of 64 per turn, so updates (each holding a replaced object) never pile up
    # behind them.
    informer: SharedIndexInformer[ConfigMap]
    lw = EagerWatch(listed=2000, queued=lambda: len(informer._fifo))
    informer = SharedIndexInformer(lw, clock=FakeClock())
    lags: list[int] = []
    done = anyio.Event()

    def on_update(old: ConfigMap, new: ConfigMap) -> None:
        lags.append(lw.produced - len(lags) - 1)
        if len(lags) == EVENTS:
            done.set()

    informer.add_event_handler(on_add=lambda obj: None, on_update=on_update)
    await run_until(informer, done)
    assert len(lags) == EVENTS
    assert lw.queued_when_read[0] <= _FIFO_HIGH_WATER_MARK
    assert max(lw.queued_when_read) <= _FIFO_HIGH_WATER_MARK + _HANDOFF_EVERY
    assert max(lags) <= 3 * _HANDOFF_EVERY


class EagerWatchList:
    """A server that supports watch-list: initial ADDED events, the end bookmark, then a
    stream of MODIFIED events, all without ever awaiting."""

    def __init__(self, listed: int, queued: Callable[[], int]) -> None:
        self.listed = listed
        self.queued = queued
        self.queued_when_read: list[int] = []

    async def list(self, **kwargs: Any) -> ObjectList[ConfigMap]:
        raise AssertionError("the watch-list sync should not fall back to LIST")

    @asynccontextmanager
    async def watch(self, **kwargs: Any) -> AsyncIterator[AsyncIterator[WatchEvent[ConfigMap]]]:
        async def stream() -> AsyncIterator[WatchEvent[ConfigMap]]:
            if not kwargs.get("send_initial_events"):
                await anyio.sleep_forever()
            for i in range(self.listed):
                yield WatchEvent(type="ADDED", object=cm(f"o{i}", 1))
            yield bookmark(1, end=True)
            for rv in range(2, EVENTS + 2):
                self.queued_when_read.append(self.queued())
                yield WatchEvent(type="MODIFIED", object=cm(f"o{rv % KEYS}", rv))
            await anyio.sleep_forever()

        yield stream()


async def test_after_a_watch_list_sync_the_stream_waits_for_the_informer() -> None:
    informer: SharedIndexInformer[ConfigMap]
    lw = EagerWatchList(listed=2000, queued=lambda: len(informer._fifo))
    informer = SharedIndexInformer(lw, watch_list=True, clock=FakeClock())
    updates = 0
    done = anyio.Event()

    def on_update(old: ConfigMap, new: ConfigMap) -> None:
        nonlocal updates
        updates += 1
        if updates == EVENTS:
            done.set()

    informer.add_event_handler(on_update=on_update)
    await run_until(informer, done)
    assert lw.queued_when_read[0] <= _FIFO_HIGH_WATER_MARK
    assert max(lw.queued_when_read) <= _FIFO_HIGH_WATER_MARK + _HANDOFF_EVERY
