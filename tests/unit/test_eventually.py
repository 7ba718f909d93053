"""``kcm.testing.eventually``: polls plain and async checks until true, with a deadline."""

from __future__ import annotations

import anyio
import pytest

from kcm.testing import eventually

pytestmark = pytest.mark.anyio


async def test_returns_once_a_plain_check_holds() -> None:
    calls: list[int] = []

    def check() -> bool:
        calls.append(1)
        return len(calls) == 3

    with anyio.fail_after(5):
        await eventually(check, interval=0)
    assert len(calls) == 3


async def test_awaits_an_async_check() -> None:
    calls: list[int] = []

    async def check() -> int:
        calls.append(1)
        return len(calls) // 2  # falsy, then truthy

    with anyio.fail_after(5):
        await eventually(check, interval=0)
    assert len(calls) == 2


async def test_times_out_when_the_check_never_holds() -> None:
    with pytest.raises(TimeoutError):
        await eventually(lambda: False, within=0.05, interval=0.01)
