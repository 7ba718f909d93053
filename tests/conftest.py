"""Suite-wide test set-up: every async test runs on asyncio and on trio, and fails if it leaves
tasks running (:mod:`tests.helpers.task_guard`).

kcm spawns no unstructured tasks either (``tests/test_structured_concurrency.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Generator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.task_guard import guard_leaked_tasks

# Property tests check behaviour, never speed: no per-example deadline and no "too slow"
# health check, which fail a correct test when the machine is busy (the suite runs 4 workers
# on 2 cores).
settings.register_profile("kcm", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kcm")


@pytest.fixture(
    params=[
        pytest.param("asyncio", id="asyncio"),
        pytest.param("trio", id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


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
