"""The basic queue's client-go guarantees (Q1-Q7): dedup, stingy, fair, shutdown, drain."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

import anyio
import pytest
from prometheus_client import CollectorRegistry

from kcm.errors import ShutDown
from kcm.testing import FakeClock
from kcm.workqueue import DelayingQueue, Queue

pytestmark = pytest.mark.anyio


async def _then_set(wait: Callable[[], Awaitable[object]], event: anyio.Event) -> None:
    """Await ``wait()``, then set ``event``: lets a test see whether a wait has returned."""
    await wait()
    event.set()


async def test_adds_before_get_are_merged_into_one() -> None:
    q = Queue[str]()
    for _ in range(3):
        q.add("a")
    assert len(q) == 1
    assert await q.get() == "a"
    with pytest.raises(anyio.WouldBlock):
        q.get_nowait()


async def test_fifo_order_of_first_add() -> None:
    q = Queue[str]()
    for key in ["a", "b", "c", "a", "b"]:
        q.add(key)
    assert [await q.get() for _ in range(3)] == ["a", "b", "c"]
    assert len(q) == 0


async def test_add_while_processing_is_held_until_done_then_handed_out_once() -> None:
    q = Queue[str]()
    q.add("a")
    assert await q.get() == "a"
    q.add("a")
    q.add("a")
    assert len(q) == 0  # not queued while in flight
    assert q.is_dirty("a")
    assert q.processing == {"a"}
    q.done("a")
    assert len(q) == 1
    assert await q.get() == "a"
    q.done("a")
    assert len(q) == 0
    assert not q.is_dirty("a")
    assert q.processing == frozenset()


async def test_an_item_is_never_handed_to_two_workers() -> None:
    q = Queue[str]()
    got: list[tuple[int, str]] = []

    async def worker(n: int) -> None:
        got.append((n, await q.get()))

    async with anyio.create_task_group() as tg:
        tg.start_soon(worker, 1)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(worker, 2)
        await anyio.wait_all_tasks_blocked()
        q.add("a")
        await anyio.wait_all_tasks_blocked()
        assert len(got) == 1
        first = got[0][0]
        q.add("a")  # dirty while the first worker holds it: the other must keep waiting
        await anyio.wait_all_tasks_blocked()
        assert len(got) == 1
        q.done("a")
        await anyio.wait_all_tasks_blocked()
        assert got == [(first, "a"), (3 - first, "a")]


async def test_waiting_workers_each_get_one_item_in_fifo_order() -> None:
    q = Queue[int]()
    got: list[tuple[int, int]] = []

    async def worker(n: int) -> None:
        got.append((n, await q.get()))

    async with anyio.create_task_group() as tg:
        for n in range(3):
            tg.start_soon(worker, n)
        await anyio.wait_all_tasks_blocked()
        for item in (10, 11, 12):
            q.add(item)
    assert [item for _, item in got] == [10, 11, 12]
    assert sorted(n for n, _ in got) == [0, 1, 2]


async def test_shutdown_hands_out_backlog_then_raises() -> None:
    q = Queue[str](name="q")
    q.add("a")
    q.add("b")
    q.shut_down()
    q.add("c")  # ignored
    assert q.shutting_down
    assert await q.get() == "a"
    assert q.get_nowait() == "b"
    with pytest.raises(ShutDown, match="q is shut down"):
        await q.get()
    with pytest.raises(ShutDown):
        q.get_nowait()


async def test_shutdown_wakes_every_waiting_worker() -> None:
    q = Queue[str]()
    results: list[str] = []

    async def worker() -> None:
        try:
            await q.get()
        except ShutDown:
            results.append("shutdown")

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(worker)
        await anyio.wait_all_tasks_blocked()
        q.shut_down()
    assert results == ["shutdown"] * 3


async def test_item_dirtied_in_flight_is_still_handed_out_after_shutdown() -> None:
    q = Queue[str]()
    q.add("a")
    item = await q.get()
    q.add("a")
    q.shut_down()
    q.done(item)
    assert await q.get() == "a"  # no work lost silently
    q.done("a")
    with pytest.raises(ShutDown):
        await q.get()


async def test_shut_down_with_drain_waits_for_in_flight_items() -> None:
    q = Queue[str]()
    q.add("a")
    q.add("b")
    a = await q.get()
    b = await q.get()
    drained = anyio.Event()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_then_set, q.shut_down_with_drain, drained)
            await anyio.wait_all_tasks_blocked()
            assert q.shutting_down
            q.done(a)
            await anyio.wait_all_tasks_blocked()
            assert not drained.is_set()
            q.done(b)
    assert drained.is_set()


async def test_drain_ends_when_the_last_key_in_flight_is_done_though_it_was_added_again() -> None:
    """The drain waits for keys in flight only: a key added again while in flight goes back to
    the queue at its done() and the drain ends there (it used to wait for ever)."""
    q = Queue[str]()
    q.add("a")
    a = await q.get()
    q.add("a")  # dirty while in flight, before the shutdown
    drained = anyio.Event()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_then_set, q.shut_down_with_drain, drained)
            await anyio.wait_all_tasks_blocked()
            assert not drained.is_set()
            q.done(a)
            await anyio.wait_all_tasks_blocked()
            assert drained.is_set()
            tg.cancel_scope.cancel()
    assert len(q) == 1  # the backlog is still handed out
    assert await q.get() == "a"


async def test_shut_down_ends_a_drain_wait() -> None:
    q = Queue[str]()
    q.add("a")
    await q.get()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(q.shut_down_with_drain)
            await anyio.wait_all_tasks_blocked()
            q.shut_down()
    assert q.processing == {"a"}


async def test_drain_with_nothing_in_flight_returns_at_once() -> None:
    q = Queue[str]()
    with anyio.fail_after(5):
        await q.shut_down_with_drain()
    assert q.shutting_down


async def test_get_item_calls_done_on_error_and_on_cancellation() -> None:
    q = Queue[str]()
    q.add("a")

    async def failing_worker() -> None:
        async with q.get_item() as item:
            assert q.processing == {item}
            q.add("a")
            raise RuntimeError("reconcile failed")

    with pytest.raises(RuntimeError, match="reconcile failed"):
        await failing_worker()
    assert q.processing == frozenset()
    assert len(q) == 1  # re-queued by done()

    with anyio.CancelScope() as scope:
        async with q.get_item() as item:
            assert item == "a"
            scope.cancel()
            await anyio.sleep_forever()
    assert scope.cancelled_caught
    assert q.processing == frozenset()


async def test_cancelling_a_woken_waiter_loses_no_item() -> None:
    q = Queue[str]()
    got: list[str] = []
    scope = anyio.CancelScope()

    async def first() -> None:
        with scope:
            got.append(await q.get())

    async def second() -> None:
        with contextlib.suppress(ShutDown):
            got.append(await q.get())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            await anyio.wait_all_tasks_blocked()
            tg.start_soon(second)
            await anyio.wait_all_tasks_blocked()
            q.add("x")  # wakes `first` ...
            scope.cancel()  # ... which may be cancelled before it runs
            await anyio.wait_all_tasks_blocked()
            q.shut_down()
    # Whichever backend race won, exactly one worker holds x.
    assert got == ["x"]
    assert q.processing == {"x"}


async def test_cancelled_waiter_is_removed() -> None:
    q = Queue[str]()
    with anyio.move_on_after(0):
        await q.get()
    q.add("a")
    assert q.get_nowait() == "a"
    assert not q._getters


async def test_done_of_unknown_item_is_ignored() -> None:
    q = Queue[str]()
    q.done("nope")
    assert len(q) == 0
    assert q.processing == frozenset()
    q.add("a")
    q.done("a")  # queued, not in flight: a stray done must not queue it twice
    assert len(q) == 1
    q.done(q.get_nowait())
    q.done("a")  # a second done is harmless too
    assert len(q) == 0


async def test_context_manager_shuts_down_on_exit() -> None:
    async with Queue[str]() as q:
        q.add("a")
    assert q.shutting_down
    assert "shutting_down=True" in repr(q)


async def test_metrics_need_a_name() -> None:
    with pytest.raises(ValueError, match="name"):
        Queue[str](metrics=CollectorRegistry())


async def test_reopen_accepts_keys_again_and_keeps_the_backlog_and_keys_in_flight() -> None:
    registry = CollectorRegistry()
    q = Queue[str](name="q", metrics=registry)
    for key in ("a", "b", "c"):
        q.add(key)
    a = await q.get()
    q.add("a")  # dirty in flight
    q.shut_down()
    q.add("lost")  # ignored while shut down
    q.reopen()
    assert not q.shutting_down
    q.add("d")
    assert q.processing == {"a"}
    assert [q.get_nowait() for _ in range(3)] == ["b", "c", "d"]  # FIFO kept across reopen
    q.done(a)  # in flight across the reopen: re-queued as it was added meanwhile
    assert q.get_nowait() == "a"
    assert not q.is_dirty("lost")
    for key in ("a", "b", "c", "d"):
        q.done(key)
    assert registry.get_sample_value("workqueue_adds_total", {"name": "q"}) == 5
    assert registry.get_sample_value("workqueue_depth", {"name": "q"}) == 0
    with pytest.raises(anyio.WouldBlock):  # not ShutDown any more
        q.get_nowait()


async def test_a_worker_waits_again_after_reopen() -> None:
    q = Queue[str]()
    q.shut_down()
    with pytest.raises(ShutDown):
        await q.get()
    q.reopen()
    got: list[str] = []

    async def worker() -> None:
        async with q.get_item() as key:
            got.append(key)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker)
            await anyio.wait_all_tasks_blocked()
            assert got == []  # waiting, not told ShutDown
            q.add("a")
    assert got == ["a"]
    assert q.processing == frozenset()


async def test_reopen_ends_a_drain_wait_and_is_a_no_op_on_an_open_queue() -> None:
    q = Queue[str]()
    q.reopen()  # not shut down: nothing happens
    assert not q.shutting_down
    q.add("a")
    a = await q.get()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(q.shut_down_with_drain)
            await anyio.wait_all_tasks_blocked()
            q.reopen()
    assert not q.shutting_down
    assert q.processing == {a}
    q.done(a)


async def test_wait_idle_returns_once_nothing_is_queued_or_in_flight() -> None:
    q = Queue[str]()
    await q.wait_idle()  # idle at once
    q.add("a")
    q.add("b")
    idle = anyio.Event()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_then_set, q.wait_idle, idle)
            a = await q.get()
            q.done(a)  # "b" is still queued
            await anyio.wait_all_tasks_blocked()
            assert not idle.is_set()
            b = await q.get()
            q.add("b")  # dirty in flight: back in the queue at done()
            q.done(b)
            await anyio.wait_all_tasks_blocked()
            assert not idle.is_set()
            q.done(await q.get())
            await anyio.wait_all_tasks_blocked()
            assert idle.is_set()


async def test_wait_idle_waits_again_for_a_key_added_before_it_woke() -> None:
    q = Queue[str]()
    q.add("a")
    returned = anyio.Event()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(_then_set, q.wait_idle, returned)
            await anyio.wait_all_tasks_blocked()
            q.done(await q.get())  # wakes the waiter...
            q.add("b")  # ...but the queue is busy again before it runs
            await anyio.wait_all_tasks_blocked()
            assert not returned.is_set()
            q.done(await q.get())
    assert returned.is_set()


async def test_a_cancelled_wait_idle_leaves_nothing_behind() -> None:
    q = Queue[str]()
    q.add("a")
    async with anyio.create_task_group() as tg:
        tg.start_soon(q.wait_idle)
        await anyio.wait_all_tasks_blocked()
        tg.cancel_scope.cancel()
    assert not q._idlers  # the cancelled waiter took its event back
    q.done(await q.get())
    with anyio.fail_after(5):
        await q.wait_idle()


async def test_keys_waiting_for_a_delay_do_not_count_as_work() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("a", 5)
        with anyio.fail_after(5):
            await q.wait_idle()
        await clock.advance(5)
        assert len(q) == 1  # due now: busy
        q.done(await q.get())
        with anyio.fail_after(5):
            await q.wait_idle()
