"""The delaying queue on a fake clock (Q9-Q11): exact virtual delays, no real sleeps."""

from __future__ import annotations

import anyio
import pytest

from kcm.testing import FakeClock
from kcm.workqueue import DelayingQueue

pytestmark = pytest.mark.anyio


async def test_item_becomes_ready_exactly_after_its_delay() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("a", 5)
        assert q.waiting == 1
        await clock.advance(4.9)
        assert len(q) == 0
        await clock.advance(0.1)
        assert len(q) == 1
        assert q.waiting == 0
        assert await q.get() == "a"


async def test_earliest_ready_first_ties_in_call_order() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("c", 3)
        q.add_after("b", 2)
        q.add_after("a", 1)
        q.add_after("b2", 2)
        await clock.advance(3)
        assert [q.get_nowait() for _ in range(4)] == ["a", "b", "b2", "c"]


async def test_repeated_add_after_keeps_the_earliest_time() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("a", 5)
        q.add_after("a", 2)  # moves it earlier
        q.add_after("a", 10)  # never later
        assert q.waiting == 1
        await clock.advance(1.9)
        assert len(q) == 0
        await clock.advance(0.1)
        assert len(q) == 1
        q.done(q.get_nowait())
        await clock.advance(20)
        assert len(q) == 0  # the superseded 5 s and the ignored 10 s never fire
        assert q.waiting == 0


async def test_non_positive_delay_adds_now() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)  # no waiter needed for immediate adds
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert len(q) == 2
    assert q.waiting == 0


async def test_plain_add_of_a_waiting_item_makes_it_ready_and_the_delay_fires_again() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("a", 5)
        q.add("a")
        assert len(q) == 1
        item = q.get_nowait()
        q.done(item)
        await clock.advance(5)
        assert len(q) == 1  # the heap entry still fires one more add (Q11)


async def test_a_new_earlier_item_wakes_the_waiter() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("late", 10)
        await clock.advance(1)
        q.add_after("soon", 2)
        await clock.advance(2)
        assert q.get_nowait() == "soon"
        assert len(q) == 0
        await clock.advance(7)
        assert q.get_nowait() == "late"


async def test_blocked_worker_receives_delayed_item() -> None:
    clock = FakeClock()
    got: list[str] = []
    async with DelayingQueue[str](clock=clock) as q, anyio.create_task_group() as tg:

        async def worker() -> None:
            got.append(await q.get())

        tg.start_soon(worker)
        q.add_after("a", 30)
        await clock.advance(29.999)
        assert got == []
        await clock.advance(0.001)
        assert got == ["a"]


async def test_no_heartbeat_so_the_clock_goes_idle() -> None:
    clock = FakeClock()
    async with DelayingQueue[str](clock=clock) as q:
        q.add_after("a", 1000)
        elapsed = await clock.run_until_idle()
        assert elapsed == pytest.approx(1000)
        assert len(q) == 1


async def test_items_added_before_run_become_ready_once_it_runs() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)
    q.add_after("a", 1)
    await clock.advance(5)
    assert len(q) == 0
    async with anyio.create_task_group() as tg:
        await tg.start(q.run)
        assert len(q) == 1  # already due when the waiter started
        with pytest.raises(RuntimeError, match="already running"):
            await q.run()
        q.shut_down()  # ends run()


async def test_cancelled_waiter_keeps_pending_items_and_shutdown_drops_them() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)
    async with anyio.create_task_group() as tg:
        await tg.start(q.run)
        q.add_after("a", 5)
        tg.cancel_scope.cancel()
    assert q.waiting == 1
    async with q:
        await clock.advance(5)
        assert len(q) == 1
        q.add_after("b", 5)
    assert q.shutting_down
    assert q.waiting == 0
    q.add_after("c", 1)  # ignored after shutdown
    assert q.waiting == 0
    await clock.advance(10)
    assert len(q) == 1  # "b" is never added while shut down (it is held for a reopen)


async def test_shut_down_with_drain_stops_the_waiter_too() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await tg.start(q.run)
            q.add_after("a", 100)
            await q.shut_down_with_drain()
        # run() returned without the clock moving: the drain woke it.
    assert clock.monotonic() == 1000.0
    assert q.waiting == 0


async def test_real_clock_delay_is_honoured() -> None:
    async with DelayingQueue[str]() as q:  # SYSTEM_CLOCK
        start = anyio.current_time()
        q.add_after("a", 0.02)
        with anyio.fail_after(5):
            assert await q.get() == "a"
        assert anyio.current_time() - start >= 0.019


async def test_reopen_resumes_the_delays_pending_at_shutdown() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)
    start = clock.monotonic()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await tg.start(q.run)
            q.add_after("soon", 5)
            q.add_after("later", 20)
            q.shut_down()  # run() returns
        await clock.advance(10)  # "soon" falls due while shut down: not added
        assert (len(q), q.waiting) == (0, 0)
        q.add_after("ignored", 1)
        q.reopen()
        assert (len(q), q.waiting) == (0, 2)  # nothing moves until the waiter runs again
        async with anyio.create_task_group() as tg:
            await tg.start(q.run)
            assert q.get_nowait() == "soon"  # overdue: added as the waiter starts
            q.add_after("new", 1)  # delays work again
            await clock.advance(1)
            assert q.get_nowait() == "new"
            await clock.advance(8)
            assert len(q) == 0
            await clock.advance(1)
            assert clock.monotonic() == start + 20
            assert q.get_nowait() == "later"  # at its original time
            assert q.waiting == 0
            q.shut_down()
    assert not q.is_dirty("ignored")


async def test_reopen_before_the_waiter_has_stopped_keeps_it_running() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            await tg.start(q.run)
            q.add_after("a", 5)
            q.shut_down()
            q.reopen()  # before run() saw the shutdown
            await clock.advance(5)
            assert q.get_nowait() == "a"
            with pytest.raises(RuntimeError, match="already running"):
                await q.run()
            q.shut_down()


async def test_a_reopened_queue_can_be_entered_again() -> None:
    clock = FakeClock()
    q = DelayingQueue[str](clock=clock)
    async with q:
        q.add_after("a", 5)
    q.reopen()
    async with q:
        await clock.advance(5)
        assert await q.get() == "a"
    assert q.shutting_down
