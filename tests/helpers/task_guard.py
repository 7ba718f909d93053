"""The leaked-task guard ``tests/conftest.py`` wraps every asyncio test in.

On asyncio, a task factory notes the owner of each task created while the test body runs (in
a task of its own): for a task spawned into an anyio task group, the task group's host task;
otherwise the task that created it. A task owned, directly or through its owners, by the body
that is still running when the body returns outlived its scope, and the test fails naming it
(work handed to a longer-lived task group, such as a server fixture's, is not a leak). On trio
there is nothing to check: tasks live in nurseries that cannot close before their children.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import Any

import anyio

__all__ = ["guard_leaked_tasks"]


def guard_leaked_tasks(
    test: Callable[..., Coroutine[Any, Any, Any]],
) -> Callable[..., Coroutine[Any, Any, Any]]:
    """Wrap an asyncio test so it fails if its body returns while a task it started (directly
    or through its descendants) is still running."""

    @functools.wraps(test)
    async def guarded(**kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        parent: dict[asyncio.Task[Any], asyncio.Task[Any] | None] = {}
        previous = loop.get_task_factory()

        def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> asyncio.Task[Any]:
            made = previous(loop, coro, **kw) if previous is not None else None
            task = made if isinstance(made, asyncio.Task) else asyncio.Task(coro, loop=loop, **kw)
            parent[task] = _owner(loop)
            return task

        body_task: list[asyncio.Task[Any] | None] = []
        result: list[Any] = []

        async def body() -> None:
            body_task.append(asyncio.current_task())
            result.append(await test(**kwargs))

        loop.set_task_factory(factory)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(body)
        finally:
            loop.set_task_factory(previous)

        def descends(task: asyncio.Task[Any] | None) -> bool:
            while task is not None:
                if task is body_task[0]:
                    return True
                task = parent.get(task)
            return False

        leaked = sorted(repr(t.get_coro()) for t in parent if not t.done() and descends(t))
        assert not leaked, f"the test left {len(leaked)} task(s) running: {leaked}"
        return result[0]

    return guarded


def _owner(loop: asyncio.AbstractEventLoop) -> asyncio.Task[Any] | None:
    """The task a task being created belongs to: the host of the anyio task group spawning
    it, else the creating task."""
    frame: FrameType | None = sys._getframe(2)
    for _ in range(6):
        if frame is None:
            break
        if frame.f_code.co_name == "_spawn" and "anyio" in frame.f_code.co_filename:
            host = getattr(
                getattr(frame.f_locals.get("self"), "cancel_scope", None), "_host_task", None
            )
            if isinstance(host, asyncio.Task):
                return host
            break
        frame = frame.f_back
    return asyncio.current_task(loop)
