"""kcm's controller manager on an embedded API server: what the differential scenarios are
replayed against.

The server runs in a background thread (its own event loop); ``kcm`` runs as a subprocess with
``--kubeconfig`` pointing at it, as a user would run it against a cluster.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from anyio.from_thread import start_blocking_portal
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kcm.apiserver import ApiServer
from tests.e2e.e2e_harness import kcm_process

from .certificates import SIGNING_CA_CERT, SIGNING_CA_KEY
from .driver import Target

__all__ = ["kcm_on_embedded_server"]


NODE_MONITOR_FLAGS = ("--node-monitor-period=1s", "--node-monitor-grace-period=10s")
"""The node lifecycle periods of both recording (``EXTRA_KCM_FLAGS``) and replay, so a node
that stops renewing its Lease is unreachable within a scenario's minute."""


@contextmanager
def kcm_on_embedded_server(tmp: Path) -> Iterator[Target]:
    """An embedded server with ``kcm --controllers=*`` managing it; yields the target."""
    with start_blocking_portal("asyncio") as portal:
        server = ApiServer()
        with portal.wrap_async_context_manager(server):
            kubeconfig = tmp / "kubeconfig"
            server.write_kubeconfig(kubeconfig)
            port = _free_port()
            key = tmp / "sa.key"  # the token controller starts only with a signing key
            key.write_bytes(_signing_key())
            args = [
                f"--kubeconfig={kubeconfig}",
                "--leader-elect=false",
                f"--secure-port={port}",
                # the settles read /metrics: anonymous, as kube allows a path listed here
                "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
                "--controllers=*",
                # the CA the Go kube-controller-manager is recorded with (README.md)
                f"--cluster-signing-cert-file={SIGNING_CA_CERT}",
                f"--cluster-signing-key-file={SIGNING_CA_KEY}",
                f"--service-account-private-key-file={key}",
                # as the recordings' EXTRA_KCM_FLAGS (README): scenarios/nodelifecycle.py
                *NODE_MONITOR_FLAGS,
            ]
            base = f"https://127.0.0.1:{port}"
            with kcm_process(args, tmp / "kcm.log"):
                # /metrics is served before the controllers start; a scenario run before they
                # have (the first of a worker) would find kcm "idle" and snapshot nothing.
                # /readyz answers 200 once they have started and their caches are synced.
                _wait_until_ok(f"{base}/readyz", tmp / "kcm.log")
                target = Target(server.url, server.token, f"{base}/metrics")
                _wait_until_watching(target, tmp / "kcm.log")
                yield target


def _wait_until_ok(url: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2.0, verify=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(
        f"kcm did not answer {url} with 200 within 60 s; its log:\n{log.read_text()}"
    )


def _wait_until_watching(target: Target, log: Path) -> None:
    """Return once kcm's controllers see new objects: a namespace made now gets its
    ``kube-root-ca.crt``. Caches are synced at ``/readyz``, but the informers' watches open
    one after another for a second or so more; a scenario's first write in that gap reaches
    kcm late, and its first settle would find kcm idle with nothing done yet."""
    with target.client() as client:
        client.post("/api/v1/namespaces", json={"metadata": {"name": "df-warm-up"}})
        path = "/api/v1/namespaces/df-warm-up/configmaps/kube-root-ca.crt"
        deadline = time.monotonic() + 60
        while client.get(path).status_code != 200:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"kcm did not publish {path} within 60 s; its log:\n{log.read_text()}"
                )
            time.sleep(0.1)
        client.delete("/api/v1/namespaces/df-warm-up")


def _signing_key() -> bytes:
    """A fresh P-256 key in PEM, as ``real-kube`` gives the Go manager its ``sa.key``."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
