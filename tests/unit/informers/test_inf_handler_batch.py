"""The per-handler consumer drains its buffer in batches without losing order or safety."""

from __future__ import annotations

import anyio
import pytest

from kcm.informers import ResourceEventHandlerFuncs
from kcm.informers._handlers import _ADD, _CHECKPOINT_EVERY, _UPDATE, TURN_BUDGET, _Listener
from kcm.models import ObjectKey

pytestmark = pytest.mark.anyio

KEY = ObjectKey("default", "a")


async def _drain(listener: _Listener, n: int, seen: list[int]) -> int:
    """Run the listener until it delivered ``n`` notes; returns how many turns another task
    got meanwhile."""
    ticks = 0

    async def other() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.run)
            tg.start_soon(other)
            while len(seen) < n:
                await anyio.lowlevel.checkpoint()
            tg.cancel_scope.cancel()
    return ticks


async def test_a_slow_handler_yields_after_every_batch_and_keeps_the_order() -> None:
    now = 0.0
    seen: list[int] = []

    def on_update(old: int, new: int) -> None:
        nonlocal now
        now += TURN_BUDGET / 10  # each call takes a tenth of the turn budget
        seen.append(new)

    listener = _Listener(
        ResourceEventHandlerFuncs(on_update=on_update),
        resync_period=0,
        coalesce=False,
        monotonic=lambda: now,
    )
    n = _CHECKPOINT_EVERY * 5 + 3
    for i in range(n):
        listener.push(KEY, (_UPDATE, i, i, False))
    ticks = await _drain(listener, n, seen)
    assert seen == list(range(n))
    assert listener.pending == 0
    assert ticks >= 5  # the consumer yielded between batches


@pytest.mark.parametrize("coalesce", [False, True])
async def test_a_cheap_handler_that_is_behind_catches_up_within_its_turn_budget(
    coalesce: bool,
) -> None:
    # Time stands still while the handler runs: the budget never runs out, so the whole
    # backlog is delivered in one turn instead of one batch per turn (the watch would
    # otherwise pile up updates behind it, each holding a replaced object).
    seen: list[int] = []
    listener = _Listener(
        ResourceEventHandlerFuncs(on_add=seen.append),
        resync_period=0,
        coalesce=coalesce,
        monotonic=lambda: 0.0,
    )
    n = _CHECKPOINT_EVERY * 20
    for i in range(n):
        listener.push(ObjectKey("default", str(i)), (_ADD, i, None, True))
    ticks = await _drain(listener, n, seen)
    assert seen == list(range(n))
    assert ticks <= 2


async def test_a_handler_that_removes_itself_mid_batch_gets_nothing_more() -> None:
    seen: list[int] = []
    listener: _Listener

    def on_add(obj: int) -> None:
        seen.append(obj)
        listener.stop()

    listener = _Listener(ResourceEventHandlerFuncs(on_add=on_add), resync_period=0, coalesce=False)
    for i in range(10):
        listener.push(KEY, (_ADD, i, None, False))
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(listener.run)
            await anyio.wait_all_tasks_blocked()
            tg.cancel_scope.cancel()
    assert seen == [0]
    assert listener.pending == 0
