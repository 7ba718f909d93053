"""SharedIndexInformer end to end on a scripted ListerWatcher and a fake clock (I1-I16)."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from kcm.errors import ResourceExpired, WatchDecodeError
from kcm.informers import (
    Backoff,
    SharedIndexInformer,
    strip_managed_fields,
    wait_for_cache_sync,
)
from kcm.informers._handlers import _ADD, _DELETE, _UPDATE, _Listener
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ManagedFieldsEntry, ObjectMeta
from kcm.testing import FakeClock
from tests.unit.informers.inf_fakes import (
    ListStep,
    Recorder,
    ScriptedListerWatcher,
    WatchStep,
    bookmark,
    cm,
    ev,
    names,
)

pytestmark = pytest.mark.anyio


class World:
    def __init__(self, *steps: ListStep | WatchStep, **kwargs: Any) -> None:
        self.clock = FakeClock()
        self.lw = ScriptedListerWatcher(self.clock, steps)
        self.errors: list[Exception] = []
        self.informer: SharedIndexInformer[ConfigMap] = SharedIndexInformer(
            self.lw,
            clock=self.clock,
            rng=random.Random(3),
            backoff=Backoff(jitter=0, clock=self.clock),
            watch_error_handler=self.errors.append,
            resource="configmaps",
            **kwargs,
        )

    async def play(
        self,
        then: Callable[[], Awaitable[None]] | None = None,
        *,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                await tg.start(self.informer.run)
                if on_started is not None:
                    on_started()
                while True:
                    await anyio.wait_all_tasks_blocked()
                    if self.lw.done:
                        break
                    deadline = self.clock.next_deadline()
                    assert deadline is not None, f"stuck; remaining: {list(self.lw.steps)}"
                    await self.clock.advance(deadline - self.clock.monotonic())
                await anyio.wait_all_tasks_blocked()
                if then is not None:
                    await then()
                    await anyio.wait_all_tasks_blocked()
                tg.cancel_scope.cancel()
        assert self.lw.failures == []


async def test_handlers_see_list_then_watch_events_after_the_cache() -> None:
    looked = anyio.Event()  # no watch event lands before on_started has looked at the cache
    w = World(
        ListStep([cm("a", 1), cm("b", 2)], rv="10"),
        WatchStep(
            [
                looked,
                ev("ADDED", cm("c", 11)),
                ev("MODIFIED", cm("a", 12)),
                ev("DELETED", cm("b", 13)),
            ],
            hold=True,
        ),
    )
    rec = Recorder()
    lister = w.informer.lister()
    cache_had_it: list[bool] = []

    def on_add(obj: ConfigMap) -> None:
        cache_had_it.append(lister.get_or_none("default", obj.metadata.name or "") is not None)

    w.informer.add_event_handler(rec)
    w.informer.add_event_handler(on_add=on_add)
    started_with: list[str] = []

    def on_started() -> None:
        started_with.extend(names(lister.list()))
        looked.set()

    await w.play(on_started=on_started)
    assert sorted(started_with) == ["a", "b"]  # tg.start returns once the list is cached
    assert sorted(rec.events[:2]) == [("add", "a", "1", True), ("add", "b", "2", True)]
    assert rec.events[2:] == [
        ("add", "c", "11", False),
        ("update", "a", "1", "12"),
        ("delete", "b", "13", False),
    ]
    assert cache_had_it == [True, True, True]  # notified after the cache update (I2)
    assert names(lister.list()) == ["a", "c"]
    assert w.informer.has_synced
    assert w.informer.last_sync_resource_version == "13"


async def test_relist_emits_tombstones_and_real_updates_only() -> None:
    w = World(
        ListStep([cm("a", 1), cm("b", 2), cm("d", 3)], rv="10"),
        WatchStep([ev("MODIFIED", cm("d", 11)), ResourceExpired("too old resource version")]),
        # While away: b deleted, c created, d deleted and re-created (new UID); a unchanged.
        ListStep([cm("a", 1), cm("c", 20), cm("d", 21, uid="uid-d2")], rv="30"),
        WatchStep(hold=True, expect={"resource_version": "30"}),
    )
    rec = Recorder()
    uids: list[tuple[str | None, str | None]] = []
    w.informer.add_event_handler(rec)
    w.informer.add_event_handler(
        on_update=lambda o, n: uids.append((o.metadata.uid, n.metadata.uid))
    )
    await w.play()
    after_relist = rec.events[4:]
    assert sorted(after_relist) == [
        ("add", "c", "20", False),
        ("delete", "b", "2", True),  # final state unknown: the last state the cache had
        ("update", "d", "11", "21"),  # identity is the key; the UID changed (I4)
    ]
    assert uids[-1] == ("uid-d", "uid-d2")
    assert names(w.informer.lister().list()) == ["a", "c", "d"]
    assert w.errors == []


async def test_late_handler_gets_cache_replayed_then_changes_and_syncs() -> None:
    w = World(
        ListStep([cm("a", 1), cm("b", 2)], rv="10"),
        WatchStep([ev("ADDED", cm("c", 11))], hold=True),
    )
    early = Recorder()
    w.informer.add_event_handler(early)
    late = Recorder()
    regs = []

    async def add_late() -> None:
        reg = w.informer.add_event_handler(late)
        regs.append(reg)
        with anyio.fail_after(1):
            await wait_for_cache_sync(w.informer, reg)
        assert reg.has_synced

    await w.play(then=add_late)
    assert sorted(late.events) == [
        ("add", "a", "1", True),
        ("add", "b", "2", True),
        ("add", "c", "11", True),
    ]
    assert regs[0].pending == 0


async def test_per_handler_has_synced_waits_for_its_initial_adds() -> None:
    w = World(ListStep([cm("a"), cm("b")], rv="1"), WatchStep(hold=True))
    during: list[tuple[bool, bool]] = []
    regs = []

    def on_add(obj: ConfigMap) -> None:
        during.append((w.informer.has_synced, regs[0].has_synced))

    regs.append(w.informer.add_event_handler(on_add=on_add))
    await w.play()
    # The informer was synced while the handler still had initial adds to process (B12).
    assert during == [(True, False), (True, False)]
    assert regs[0].has_synced


async def test_failing_handler_skips_only_its_notification() -> None:
    w = World(
        ListStep([cm("a"), cm("b")], rv="1"),
        WatchStep([ev("ADDED", cm("c", 2))], hold=True),
    )
    bad = Recorder(fail_on="a")
    good = Recorder()
    w.informer.add_event_handler(bad)
    w.informer.add_event_handler(good)
    await w.play()
    assert [e[1] for e in bad.events] == ["b", "c"]
    assert sorted(e[1] for e in good.events) == ["a", "b", "c"]


async def test_removed_handler_gets_nothing_more() -> None:
    w = World(ListStep([cm("a")], rv="1"), WatchStep([ev("ADDED", cm("b", 2))], hold=True))
    rec = Recorder()
    reg = w.informer.add_event_handler(rec)
    w.informer.remove_event_handler(reg)
    reg.remove()  # idempotent
    assert reg.removed
    await w.play()
    assert rec.events == []


async def test_per_handler_resync_periods() -> None:
    w = World(ListStep([cm("a", 1), cm("b", 2)], rv="1"), WatchStep(hold=True))
    fast, never = Recorder(), Recorder()
    w.informer.add_event_handler(fast, resync_period=10)
    w.informer.add_event_handler(never)
    assert w.informer.resync_check_period == 10
    counts: list[int] = []

    async def tick() -> None:
        for _ in range(2):
            await w.clock.advance(10)
            counts.append(sum(1 for e in fast.events if e[0] == "update"))

    await w.play(then=tick)
    assert counts == [2, 4]
    assert ("update", "a", "1", "1") in fast.events  # resync: old and new are the same
    assert [e[0] for e in never.events] == ["add", "add"]


def test_resync_period_rules() -> None:
    inf: SharedIndexInformer[ConfigMap] = SharedIndexInformer(
        ScriptedListerWatcher(FakeClock()), resync_period=60
    )
    assert inf.add_event_handler(Recorder()).resync_period == 60
    assert inf.add_event_handler(Recorder(), resync_period=0.1).resync_period == 1.0
    assert inf.resync_check_period == 1.0
    assert inf.add_event_handler(Recorder(), resync_period=0).resync_period == 0
    with pytest.raises(ValueError, match=">= 0"):
        inf.add_event_handler(Recorder(), resync_period=-1)


async def test_transform_strips_managed_fields_before_caching() -> None:
    fat = ConfigMap(
        metadata=ObjectMeta(
            name="a",
            namespace="default",
            resource_version="1",
            managed_fields=[ManagedFieldsEntry(manager="kubectl")],
        )
    )
    w = World(ListStep([fat], rv="1"), WatchStep(hold=True), transform=strip_managed_fields)
    await w.play()
    cached = w.informer.lister().get("default", "a")
    assert cached.metadata.managed_fields is None
    assert cached.metadata.name == "a"
    assert strip_managed_fields(cached) is cached  # nothing to strip: no copy


async def test_malformed_line_goes_to_the_error_handler_and_nothing_is_lost() -> None:
    w = World(
        ListStep([cm("a", 1)], rv="1"),
        WatchStep([ev("ADDED", cm("b", 2)), WatchDecodeError("not JSON: '{oops'")]),
        ListStep([cm("a", 1), cm("b", 2), cm("c", 3)], rv="3", expect={"resource_version": "2"}),
        WatchStep(hold=True),
    )
    rec = Recorder()
    w.informer.add_event_handler(rec)
    await w.play()
    assert [type(e) for e in w.errors] == [WatchDecodeError]
    assert names(w.informer.lister().list()) == ["a", "b", "c"]
    assert [e[:2] for e in rec.events] == [("add", "a"), ("add", "b"), ("add", "c")]


async def test_lifecycle_errors() -> None:
    w = World(ListStep([], rv="1"), WatchStep(hold=True))
    await w.play()
    with pytest.raises(RuntimeError, match="already started"):
        await w.informer.run()
    with pytest.raises(RuntimeError, match="stopped"):
        w.informer.add_event_handler(Recorder())
    with pytest.raises(RuntimeError, match="already started"):
        w.informer.set_transform(None)
    with pytest.raises(RuntimeError, match="already started"):
        w.informer.set_watch_error_handler(print)


async def test_indexers_on_the_informer() -> None:
    w = World(
        ListStep([cm("a", labels={"app": "x"}), cm("b", labels={"app": "y"})], rv="1"),
        WatchStep([ev("MODIFIED", cm("b", 2, labels={"app": "x"}))], hold=True),
        indexers={"app": lambda o: [(o.metadata.labels or {}).get("app", "")]},
    )

    async def more() -> None:
        w.informer.add_indexers({"name": lambda o: [o.metadata.name or ""]})

    await w.play(then=more)
    assert names(w.informer.indexer.by_index("app", "x")) == ["a", "b"]
    assert w.informer.indexer.index_keys("name", "a") == [ObjectKey("default", "a")]
    with pytest.raises(RuntimeError, match="stopped"):
        w.informer.add_indexers({"other": lambda o: []})


def note_names(listener: _Listener) -> list[tuple[Any, ...]]:
    out = []
    while (item := listener._take()) is not None:
        for kind, obj, old, _flag in item if isinstance(item, list) else [item]:
            out.append((kind, obj.metadata.resource_version, old and old.metadata.resource_version))
    return out


def test_coalescing_buffer_merges_per_key() -> None:
    listener = _Listener(Recorder(), resync_period=0, coalesce=True)
    a, b, c, d = (ObjectKey("default", n) for n in "abcd")
    listener.push(a, (_ADD, cm("a", 1), None, True))
    listener.push(a, (_UPDATE, cm("a", 2), cm("a", 1), False))  # add+update -> add(2)
    listener.push(b, (_UPDATE, cm("b", 2), cm("b", 1), False))
    listener.push(b, (_UPDATE, cm("b", 3), cm("b", 2), False))  # -> update(1 -> 3)
    listener.push(c, (_ADD, cm("c", 1), None, True))
    listener.push(c, (_DELETE, cm("c", 1), None, False))  # -> nothing
    listener.push(d, (_UPDATE, cm("d", 2), cm("d", 1), False))
    listener.push(d, (_DELETE, cm("d", 2), None, False))  # -> delete
    listener.push(d, (_ADD, cm("d", 5), None, False))  # re-created: kept after the delete
    assert listener.pending == 4
    assert listener.pending_initial == 1  # the dropped initial add of c no longer counts
    assert note_names(listener) == [
        (_ADD, "2", None),
        (_UPDATE, "3", "1"),
        (_DELETE, "2", None),
        (_ADD, "5", None),
    ]


async def test_coalescing_handler_end_to_end() -> None:
    w = World(
        ListStep([cm("a", 1)], rv="1"),
        WatchStep([ev("MODIFIED", cm("a", 2)), ev("MODIFIED", cm("a", 3))], hold=True),
    )
    rec = Recorder()
    w.informer.add_event_handler(rec, coalesce=True)
    await w.play()
    # However the notifications were merged, the handler ends at the latest state.
    assert rec.events[0][:2] == ("add", "a")
    last = rec.events[-1]
    assert last[-1] == "3" or last[2] == "3"


async def test_wait_for_resource_version_reads_your_writes() -> None:
    w = World(
        ListStep([cm("a", 5)], rv="10"),
        WatchStep([ev("ADDED", cm("b", 12)), bookmark(20)], hold=True),
    )
    reached: list[str] = []

    async def waits() -> None:
        with anyio.fail_after(1):
            await w.informer.wait_for_resource_version("12")
        reached.append("12")
        assert w.informer.lister().get("default", "b").metadata.resource_version == "12"
        with anyio.fail_after(1):
            await w.informer.wait_for_resource_version("20")  # a bookmark got there
        reached.append("20")
        with anyio.move_on_after(0.05):
            await w.informer.wait_for_resource_version("21")
            reached.append("21")
        with pytest.raises(ValueError, match="invalid literal"):
            await w.informer.wait_for_resource_version("abc")

    await w.play(then=waits)
    assert reached == ["12", "20"]


async def test_resource_version_waiters_wake_on_later_events_and_bookmarks() -> None:
    w = World(
        ListStep([cm("a", 5)], rv="10"),
        WatchStep([1000.0, ev("ADDED", cm("b", 15)), 1000.0, bookmark(30)], hold=True),
    )
    woke: list[tuple[str, float]] = []

    async def waiter(rv: str) -> None:
        await w.informer.wait_for_resource_version(rv)
        woke.append((rv, w.clock.monotonic()))

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter, "15")
            tg.start_soon(waiter, "25")
            await w.clock.advance(999)
            assert woke == []
            await w.clock.advance(1)
            assert woke == [("15", 2000.0)]
            await w.clock.advance(1000)
        assert woke == [("15", 2000.0), ("25", 3000.0)]

    await w.play(then=scenario)
