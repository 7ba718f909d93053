"""Hypothesis state machine: the workqueue against a reference model of client-go's semantics.

Several worker tasks (puppets: each ``get``/``done`` is a rule) share one DelayingQueue on a
FakeClock. The event loop (asyncio or trio) runs in a BlockingPortal thread; after every rule
the test waits until all tasks are blocked, then compares the real queue with the model:

* stingy: no key is held by two workers; the held keys are exactly ``processing``;
* dedup + FIFO: the queued keys equal the model's queue, in order; ``dirty`` matches;
* re-add while processing: a key dirtied in flight is queued again by ``done``, once;
* delays: keys become ready at the earliest requested time, on the fake clock;
* shutdown: the backlog is still handed out, then every waiting worker gets ShutDown;
* no work lost: at teardown every dirty key has been handed out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import anyio
import anyio.abc
import anyio.from_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kcm.errors import ShutDown
from kcm.testing import FakeClock
from kcm.workqueue import DelayingQueue, Queue

WORKERS = 3
KEYS = st.sampled_from(["a", "b", "c", "d"])
DELAYS = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.5])
STEPS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 5.0])


class Model:
    """client-go's Typed queue + delaying queue, written as plainly as possible."""

    def __init__(self, now: float) -> None:
        self.now = now
        self.queue: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.waiting: dict[str, tuple[float, int]] = {}
        self.seq = 0
        self.shutting_down = False
        self.blocked_workers = 0  # workers inside get() with nothing to take
        self.handed_out: list[str] = []
        self.shutdowns = 0

    def add(self, key: str) -> None:
        if self.shutting_down or key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.queue.append(key)

    def serve(self) -> None:
        while self.blocked_workers and self.queue:
            key = self.queue.pop(0)
            self.dirty.discard(key)
            self.processing.add(key)
            self.blocked_workers -= 1
            self.handed_out.append(key)
        if self.shutting_down and not self.queue:
            self.shutdowns += self.blocked_workers
            self.blocked_workers = 0

    def done(self, key: str) -> None:
        self.processing.discard(key)
        if key in self.dirty:
            self.queue.append(key)

    def add_after(self, key: str, delay: float) -> None:
        if self.shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        ready = self.now + delay
        if key in self.waiting and self.waiting[key][0] <= ready:
            return
        self.seq += 1
        self.waiting[key] = (ready, self.seq)

    def advance(self, dt: float) -> None:
        self.now += dt
        due = sorted((t, key) for key, t in self.waiting.items() if t[0] <= self.now)
        for _, key in due:
            del self.waiting[key]
            self.add(key)

    def shut_down(self) -> None:
        self.shutting_down = True
        self.waiting.clear()


class WorkqueueMachine(RuleBasedStateMachine):
    backend = "asyncio"

    def __init__(self) -> None:
        super().__init__()
        self.stack = contextlib.ExitStack()
        self.portal = self.stack.enter_context(
            anyio.from_thread.start_blocking_portal(self.backend)
        )
        self.clock = FakeClock()
        self.queue = DelayingQueue[str](clock=self.clock)
        try:
            self.tg: anyio.abc.TaskGroup = self.stack.enter_context(
                self.portal.wrap_async_context_manager(self.portal.call(anyio.create_task_group))
            )
            self.stack.enter_context(self.portal.wrap_async_context_manager(self.queue))
        except BaseException:
            self.stack.close()
            raise
        self.model = Model(self.clock.monotonic())
        # Per worker: "idle", "waiting", "holding" or "shutdown"; and the key it holds.
        self.status = ["idle"] * WORKERS
        self.held: list[str | None] = [None] * WORKERS
        self.handed_out: list[str] = []

    # -- plumbing ----------------------------------------------------------------------------

    def settle(self) -> None:
        self.portal.call(anyio.wait_all_tasks_blocked)
        self.model.serve()

    async def _worker_get(self, w: int) -> None:
        try:
            key = await self.queue.get()
        except ShutDown:
            self.status[w] = "shutdown"
        else:
            self.held[w] = key
            self.status[w] = "holding"
            self.handed_out.append(key)

    def _spawn_get(self, w: int) -> None:
        self.tg.start_soon(self._worker_get, w)

    # -- rules -------------------------------------------------------------------------------

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.portal.call(self.queue.add, key)
        self.model.add(key)
        self.settle()

    @rule(key=KEYS, delay=DELAYS)
    def add_after(self, key: str, delay: float) -> None:
        self.portal.call(self.queue.add_after, key, delay)
        self.model.add_after(key, delay)
        self.settle()

    @rule(dt=STEPS)
    def advance(self, dt: float) -> None:
        self.portal.call(self.clock.advance, dt)
        self.model.advance(dt)
        self.settle()

    @rule(w=st.integers(0, WORKERS - 1))
    def get(self, w: int) -> None:
        if self.status[w] in ("waiting", "holding"):
            return
        if self.status[w] == "shutdown":
            self.model.shutdowns -= 1
        self.status[w] = "waiting"
        self.model.blocked_workers += 1
        self.portal.call(self._spawn_get, w)
        self.settle()

    @rule(w=st.integers(0, WORKERS - 1))
    def done(self, w: int) -> None:
        key = self.held[w]
        if key is None:
            return
        self.held[w] = None
        self.status[w] = "idle"
        self.portal.call(self.queue.done, key)
        self.model.done(key)
        self.settle()

    @precondition(lambda self: not self.model.shutting_down)
    @rule()
    def shut_down(self) -> None:
        self.portal.call(self.queue.shut_down)
        self.model.shut_down()
        self.settle()

    # -- invariants --------------------------------------------------------------------------

    @invariant()
    def matches_model(self) -> None:
        held = [k for k in self.held if k is not None]
        assert len(held) == len(set(held)), f"a key is held by two workers: {held}"
        assert set(held) == self.queue.processing == self.model.processing
        assert list(self.queue._queue) == self.model.queue
        assert self.queue._dirty == self.model.dirty
        assert self.queue.waiting == len(self.model.waiting)
        assert self.handed_out == self.model.handed_out
        assert self.status.count("waiting") == self.model.blocked_workers
        assert self.status.count("shutdown") == self.model.shutdowns
        if self.model.blocked_workers:
            assert len(self.queue) == 0  # nobody waits while work is queued

    def teardown(self) -> None:
        try:
            self.portal.call(self.queue.shut_down)
            self.model.shut_down()
            self.settle()
            # Finish everything in flight; waiting workers take what that re-queues.
            for _ in range(100):
                holding = [w for w in range(WORKERS) if self.held[w] is not None]
                if not holding:
                    break
                for w in holding:
                    self.done(w)
            for key in self._drain():
                self.portal.call(self.queue.done, key)
            assert not self.queue._dirty, "work was lost at shutdown"
            assert len(self.queue) == 0
            assert not self.queue.processing
            assert "waiting" not in self.status
        finally:
            self.stack.close()

    def _drain(self) -> Iterator[str]:
        while True:
            try:
                yield self.portal.call(self.queue.get_nowait)
            except ShutDown:
                return


def test_workqueue_state_machine(anyio_backend: str) -> None:
    class Machine(WorkqueueMachine):
        backend = anyio_backend

    case = Machine.TestCase
    case.settings = settings(
        max_examples=40,
        stateful_step_count=30,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    case().runTest()


@pytest.mark.anyio
@settings(max_examples=40, deadline=None, database=None)
@given(
    batches=st.lists(st.lists(st.integers(0, 15), max_size=12), max_size=25),
    workers=st.integers(1, 8),
    work=st.lists(st.integers(0, 3), min_size=1, max_size=8),
)
async def test_free_running_workers(
    batches: list[list[int]], workers: int, work: list[int]
) -> None:
    """Workers run freely (no puppets): never two on one key, and every add is processed."""
    q = Queue[int]()
    active: set[int] = set()
    clock = iter(range(1_000_000))
    last_add: dict[int, int] = {}
    last_start: dict[int, int] = {}

    async def worker(n: int) -> None:
        step = n
        while True:
            try:
                async with q.get_item() as key:
                    assert key not in active, f"key {key} handed to two workers"
                    active.add(key)
                    last_start[key] = next(clock)
                    for _ in range(work[step % len(work)]):
                        await anyio.lowlevel.checkpoint()
                    step += 1
                    active.discard(key)
            except ShutDown:
                return

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            for n in range(workers):
                tg.start_soon(worker, n)
            for batch in batches:
                for key in batch:
                    q.add(key)
                    last_add[key] = next(clock)
                await anyio.lowlevel.checkpoint()
            q.shut_down()
    lost = {k for k, added in last_add.items() if last_start.get(k, -1) < added}
    assert not lost, f"added but never processed afterwards: {lost}"
    assert not q.processing
    assert len(q) == 0
