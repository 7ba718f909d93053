"""What a status view reads off a Controller without a metrics registry: queue depth, delayed
keys, busy workers and reconcile counts by outcome."""

from __future__ import annotations

import anyio
import pytest

from kcm.models import ObjectKey
from kcm.runtime import Controller, Request, Result, TerminalError
from kcm.testing import FakeClock

pytestmark = pytest.mark.anyio


class Gated:
    """Blocks every reconcile until released; the outcome depends on the key's name."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.entered = 0

    async def reconcile(self, request: Request) -> Result:
        self.entered += 1
        await self.release.wait()
        match request.name:
            case "fail":
                raise RuntimeError("boom")
            case "terminal":
                raise TerminalError(ValueError("bad spec"))
            case "later":
                return Result(requeue_after=60)
            case "again":
                return Result(requeue=True)
        return Result()


async def test_depth_active_workers_and_counts() -> None:
    clock = FakeClock()
    rec = Gated()
    controller: Controller[ObjectKey] = Controller(
        "c", rec, clock=clock, max_concurrent_reconciles=2
    )
    assert controller.active_workers == 0
    assert controller.reconcile_counts == {
        "success": 0,
        "error": 0,
        "requeue": 0,
        "requeue_after": 0,
    }
    for name in ("ok", "fail", "terminal", "later", "again"):
        controller.enqueue(ObjectKey("default", name))
    assert len(controller.queue) == 5  # queue depth, before run() too
    async with anyio.create_task_group() as tg:
        await tg.start(controller.run)
        await clock.advance(0)
        assert rec.entered == 2
        assert controller.active_workers == 2  # both workers busy
        assert len(controller.queue) == 3
        assert len(controller.queue.processing) == 2
        rec.release.set()
        with anyio.fail_after(5):
            while sum(controller.reconcile_counts.values()) < 5:
                await clock.advance(0)
        assert controller.active_workers == 0
        assert controller.reconcile_counts == {
            "success": 1,
            "error": 2,  # "fail" and "terminal"
            "requeue": 1,
            "requeue_after": 1,
        }
        assert controller.queue.waiting >= 1  # "later" waits 60 s (and the backoff ones)
        counts = controller.reconcile_counts
        counts["success"] = 99  # a copy: the controller's own counts are untouched
        assert controller.reconcile_counts["success"] == 1
        tg.cancel_scope.cancel()
