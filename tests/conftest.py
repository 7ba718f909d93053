"""Suite-wide test set-up: every async test runs on asyncio and on trio, and fails if it leaves
tasks running.

The leak guard: on asyncio, a task factory notes the owner of each task created while the test
body runs (in a task of its own): for a task spawned into an anyio task group, the task group's
host task; otherwise the task that created it. A task owned, directly or through its owners, by
the body that is still running when the body returns outlived its scope, and the test fails
naming it (work handed to a longer-lived task group, such as a server fixture's, is not a
leak). On trio there is nothing to check: tasks live in nurseries that cannot close before
their children (kcm spawns no system tasks, which ``tests/test_structured_concurrency.py``
checks).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
from collections.abc import Callable, Coroutine, Generator
from typing import Any

import anyio
import pytest


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


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
            if previous is not None:
                task = previous(loop, coro, **kw)
            else:
                task = asyncio.Task(coro, loop=loop, **kw)
            parent[task] = _owner(loop)
            return task

        body_task: list[asyncio.Task[Any] | None] = []
        result: list[Any] = []

        async def body() -> None:
            body_task.append(asyncio.current_task())
            result.append(await test(**kwargs))

        loop.set_task_factory(factory)  # type: ignore[arg-type]
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
    frame = sys._getframe(2)
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


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, Any, Any]:
    obj = pyfuncitem.obj
    if (
        pyfuncitem.funcargs.get("anyio_backend") == "asyncio"
        and not hasattr(obj, "hypothesis")
        and inspect.iscoroutinefunction(obj)
    ):
        pyfuncitem.obj = guard_leaked_tasks(obj)
        try:
            return (yield)
        finally:
            pyfuncitem.obj = obj
    return (yield)
