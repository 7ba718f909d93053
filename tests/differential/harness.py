"""kcm's controller manager on an embedded API server: what the differential scenarios are
replayed against.

The server runs in a background thread (its own event loop); ``kcm`` runs as a subprocess with
``--kubeconfig`` pointing at it, as a user would run it against a cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from anyio.from_thread import start_blocking_portal

from kcm.apiserver import ApiServer
from tests.e2e.e2e_harness import kcm_process

from .driver import Target

__all__ = ["kcm_on_embedded_server"]


@contextmanager
def kcm_on_embedded_server(tmp: Path) -> Iterator[Target]:
    """An embedded server with ``kcm --controllers=*`` managing it; yields the target."""
    with start_blocking_portal("asyncio") as portal:
        server = ApiServer()
        with portal.wrap_async_context_manager(server):
            kubeconfig = tmp / "kubeconfig"
            server.write_kubeconfig(kubeconfig)
            args = [
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                "--secure-port=0",
                "--controllers=*",
            ]
            with kcm_process(args, tmp / "kcm.log"):
                yield Target(server.url, server.token)
