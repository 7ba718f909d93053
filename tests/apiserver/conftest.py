"""Shared servers for the API server tests.

``shared_server`` runs one ApiServer per module on its own event loop in a background thread,
so tests on both anyio backends (and blocking clients such as kubectl and the official
``kubernetes`` client) can use it without paying a start-up per test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from kcm.apiserver import ApiServer
from kcm.testing.pytest_plugin import api_server as api_server


class SharedServer:
    """An ApiServer served from a background thread; ``call`` runs code on its loop."""

    def __init__(self, server: ApiServer, portal: BlockingPortal, kubeconfig: Path) -> None:
        self.server = server
        self.portal = portal
        self.kubeconfig = kubeconfig

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def shared_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SharedServer]:
    """The module's server; a module may set ``SERVER_CLOCK`` to run it on that clock."""
    with start_blocking_portal("asyncio") as portal:
        server = ApiServer(clock=getattr(request.module, "SERVER_CLOCK", None))
        cm = portal.wrap_async_context_manager(server)
        with cm:
            path = tmp_path_factory.mktemp("kubeconfig") / "config"
            server.write_kubeconfig(path)
            yield SharedServer(server, portal, path)
