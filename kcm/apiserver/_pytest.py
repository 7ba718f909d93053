"""The ``api_server`` pytest fixture (wired into ``kcm.testing.pytest_plugin``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from ._server import ApiServer

__all__ = ["api_server"]


@pytest.fixture
async def api_server() -> AsyncIterator[ApiServer]:
    """A fresh in-memory :class:`kcm.apiserver.ApiServer` on 127.0.0.1, per test.

    Runs on the test's anyio backend (asyncio or trio); starting one takes a few milliseconds.
    Use ``api_server.client_config()`` for kcm's client and ``api_server.faults`` to inject
    failures.
    """
    async with ApiServer() as server:
        yield server
