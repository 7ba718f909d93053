"""Helpers for the ServiceAccount, token and root CA publisher integration tests.

:func:`running` starts controllers on one client, behind a :class:`Tap` that logs every write
(method and path), and a running informer factory; :meth:`Env.quiesce` waits until they have
acted on everything so far (before a negative check).
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import msgspec
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.informers import SharedInformerFactory
from kcm.runtime import Controller
from kcm.testing import client_config_for
from tests.helpers.controller_quiesce import quiesce

CA = b"-----BEGIN CERTIFICATE-----\nnot parsed by the controllers\n-----END CERTIFICATE-----\n"


def certificate_pem() -> bytes:
    """A self-signed CA certificate (PEM) for ``--root-ca-file``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM)


@dataclass
class Tap(httpx.AsyncBaseTransport):
    """Logs every request other than GETs (the writes) as ``(method, path)``."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    writes: list[tuple[str, str]] = field(default_factory=list)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "GET":
            self.writes.append((request.method, request.url.path))
        return await self.inner.handle_async_request(request)

    def count(self, method: str, path_suffix: str) -> int:
        return sum(1 for m, p in self.writes if m == method and p.endswith(path_suffix))

    async def aclose(self) -> None:
        await self.inner.aclose()


@dataclass
class Env:
    client: ApiClient
    factory: SharedInformerFactory
    built: list[Any]
    tap: Tap

    def controllers(self) -> list[Controller[Any]]:
        found: list[Controller[Any]] = []
        for runnable in self.built:
            found.extend(getattr(runnable, "controllers", None) or [runnable.controller])
        return found

    async def quiesce(self) -> None:
        await quiesce(self.controllers(), self.factory, self.client)


Maker = Callable[[ApiClient, SharedInformerFactory], Any]


@asynccontextmanager
async def running(server: ApiServer, *makers: Maker) -> AsyncIterator[Env]:
    """Each ``make(client, factory)`` running on a tapped client until the block ends."""
    tap = Tap()
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    async with ApiClient(config, transport=tap) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        built = [make(client, factory) for make in makers]
        with anyio.fail_after(10):
            await tg.start(factory.run)
            for runnable in built:
                await tg.start(runnable.run)
        yield Env(client, factory, built, tap)
        tg.cancel_scope.cancel()
