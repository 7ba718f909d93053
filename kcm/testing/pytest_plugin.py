"""pytest plugin registered through the ``pytest11`` entry point: kcm's fixtures.

Fixtures are lazy: nothing starts unless a test asks for it.

* ``fake_clock``: a :class:`kcm.testing.FakeClock`.
* ``api_server``: a fresh in-memory :class:`kcm.apiserver.ApiServer` per test, on the test's
  anyio backend (mark the test ``@pytest.mark.anyio``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from ._clock import FakeClock

if TYPE_CHECKING:  # imported by the fixture: pytest loads this plugin on a base install too
    from kcm.apiserver import ApiServer

__all__ = ["api_server", "fake_clock"]


@pytest.fixture
def fake_clock() -> FakeClock:
    """A :class:`kcm.testing.FakeClock` at virtual time 1000 s."""
    return FakeClock()


@pytest.fixture
async def api_server() -> AsyncIterator[ApiServer]:
    """A fresh in-memory :class:`kcm.apiserver.ApiServer` on 127.0.0.1, per test.

    Runs on the test's anyio backend (asyncio or trio); starting one takes a few milliseconds.
    Use :func:`kcm.testing.client_config_for` for kcm's client and ``api_server.faults`` to
    inject failures. Needs ``kcm[server]``.
    """
    from kcm.apiserver import ApiServer

    async with ApiServer() as server:
        yield server
