"""kcm starts tasks only inside anyio task groups (structured concurrency): never through
asyncio's or trio's unstructured spawning, and never by importing asyncio at all. Together
with the leak guard in ``tests/conftest.py`` this is what makes a leaked task a test failure
on both backends."""

from __future__ import annotations

import ast
from pathlib import Path

import anyio
import pytest

from tests.helpers.task_guard import guard_leaked_tasks

ROOT = Path(__file__).resolve().parents[1] / "kcm"
MODULES = sorted(ROOT.rglob("*.py"))
FORBIDDEN_CALLS = {
    "create_task",  # asyncio.create_task / loop.create_task
    "ensure_future",
    "run_coroutine_threadsafe",
    "spawn_system_task",  # trio's tasks that outlive every nursery
}


def _problems(source: str) -> list[str]:
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            if any((name or "").split(".")[0] == "asyncio" for name in names):
                problems.append(f"line {node.lineno}: imports asyncio (use anyio)")
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_CALLS:
            problems.append(f"line {node.lineno}: .{node.attr} spawns an unstructured task")
    return problems


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_module_spawns_tasks_only_in_task_groups(path: Path) -> None:
    problems = _problems(path.read_text())
    assert not problems, f"{path.relative_to(ROOT)}:\n" + "\n".join(problems)


def test_the_check_sees_unstructured_spawning() -> None:
    source = (
        "import asyncio\n"
        "async def f(loop, t):\n"
        "    loop.create_task(t)\n"
        "    trio.lowlevel.spawn_system_task(t)\n"
    )
    assert len(_problems(source)) == 3


def test_the_leak_guard_fails_a_test_that_leaves_a_task_running() -> None:
    import asyncio

    async def leaky() -> None:
        asyncio.get_running_loop().create_task(asyncio.sleep(10))

    async def tidy() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(anyio.sleep, 0)

    async def both() -> None:
        await guard_leaked_tasks(tidy)()
        with pytest.raises(
            AssertionError, match=r"left 1 task\(s\) running: \['<coroutine object sleep"
        ):
            await guard_leaked_tasks(leaky)()

    anyio.run(both, backend="asyncio")
