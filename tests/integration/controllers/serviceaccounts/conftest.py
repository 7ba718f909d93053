"""The ServiceAccount controllers' tests: a server that leaves the ``default`` ServiceAccount
to the serviceaccount controller, as kube-apiserver does."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kcm.apiserver import ApiServer


@pytest.fixture
async def api_server() -> AsyncIterator[ApiServer]:
    async with ApiServer(default_service_accounts=False) as server:
        yield server
