"""A handler that keeps up gets live changes straight from the informer (no task switch); one
that is behind keeps its buffer and its order; handlers may add and remove handlers while
being called."""

from __future__ import annotations

import anyio
import pytest

from kcm.informers._handlers import _ADD, _UPDATE, ResourceEventHandlerFuncs, _Listener
from kcm.models import ObjectKey
from kcm.models.core_v1 import ConfigMap
from tests.unit.informers.inf_fakes import ListStep, WatchStep, cm, ev
from tests.unit.informers.test_inf_shared_informer import World

pytestmark = pytest.mark.anyio

KEY = ObjectKey("default", "a")


def _listener(seen: list[str]) -> _Listener:
    handler = ResourceEventHandlerFuncs[ConfigMap](
        on_add=lambda obj: seen.append(f"add {obj.metadata.resource_version}"),
        on_update=lambda old, new: seen.append(f"update {new.metadata.resource_version}"),
    )
    return _Listener(handler, resync_period=0, coalesce=False)


async def test_a_parked_listener_with_nothing_buffered_is_called_at_once() -> None:
    seen: list[str] = []
    listener = _listener(seen)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.run)
        await anyio.wait_all_tasks_blocked()  # parked on its wake event
        listener.push(KEY, (_UPDATE, cm("a", "2"), cm("a", "1"), False))
        assert seen == ["update 2"]  # before any task ran
        assert listener.pending == 0
        tg.cancel_scope.cancel()


async def test_initial_adds_and_a_listener_that_is_behind_go_through_the_buffer() -> None:
    seen: list[str] = []
    listener = _listener(seen)
    async with anyio.create_task_group() as tg:
        tg.start_soon(listener.run)
        await anyio.wait_all_tasks_blocked()
        listener.push(KEY, (_ADD, cm("a", "1"), None, True))  # the initial list
        listener.push(KEY, (_UPDATE, cm("a", "2"), cm("a", "1"), False))  # behind it
        assert seen == []
        assert listener.pending == 2
        await anyio.wait_all_tasks_blocked()
        assert seen == ["add 1", "update 2"]
        tg.cancel_scope.cancel()


async def test_handlers_may_remove_themselves_and_add_others_while_called() -> None:
    # the change comes a (virtual) second after the sync: both handlers are parked by then
    w = World(
        ListStep([cm("a")], rv="1"), WatchStep([1.0, ev("MODIFIED", cm("a", "2"))], hold=True)
    )
    calls: list[str] = []
    regs = []

    def first(old: ConfigMap, new: ConfigMap) -> None:
        calls.append("first")
        regs[0].remove()
        regs.append(w.informer.add_event_handler(on_update=lambda o, n: calls.append("added")))

    regs.append(w.informer.add_event_handler(on_update=first))
    regs.append(w.informer.add_event_handler(on_update=lambda o, n: calls.append("second")))
    await w.play(then=lambda: w.clock.advance(1.0))
    assert calls == ["first", "second"]  # the removal did not skip the next handler
    assert regs[0].removed
    assert [r.removed for r in regs[1:]] == [False, False]
