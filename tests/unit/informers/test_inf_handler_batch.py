"""The per-handler consumer drains its buffer in batches without losing order or safety."""

from __future__ import annotations

import anyio
import pytest

from kcm.informers import ResourceEventHandlerFuncs
from kcm.informers._handlers import _ADD, _CHECKPOINT_EVERY, _UPDATE, _Listener
from kcm.models import ObjectKey

pytestmark = pytest.mark.anyio

KEY = ObjectKey("default", "a")


async def test_many_notes_arrive_in_order_and_other_tasks_still_run() -> None:
    seen: list[int] = []
    listener = _Listener(
        ResourceEventHandlerFuncs(on_update=lambda old, new: seen.append(new)),
        resync_period=0,
        coalesce=False,
    )
    n = _CHECKPOINT_EVERY * 5 + 3
    for i in range(n):
        listener.push(KEY, (_UPDATE, i, i, False))
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
    assert seen == list(range(n))
    assert listener.pending == 0
    assert ticks >= 5  # the consumer yielded between batches


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
