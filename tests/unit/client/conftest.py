"""Fixtures for the client unit tests: kubeconfig writers and a self-signed certificate pair."""

from __future__ import annotations

import base64
import datetime
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from kcm.client import ApiClient, ClientConfig


def make_cert_pair(common_name: str = "kcm-test") -> tuple[bytes, bytes]:
    """A self-signed certificate and its key, PEM-encoded."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return (
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


@pytest.fixture(scope="session")
def cert_pair() -> tuple[bytes, bytes]:
    return make_cert_pair()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig_doc(
    *,
    clusters: dict[str, dict[str, Any]] | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, dict[str, Any]] | None = None,
    current: str | None = None,
) -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": "v1", "kind": "Config"}
    if clusters is not None:
        doc["clusters"] = [{"name": n, "cluster": c} for n, c in clusters.items()]
    if users is not None:
        doc["users"] = [{"name": n, "user": u} for n, u in users.items()]
    if contexts is not None:
        doc["contexts"] = [{"name": n, "context": c} for n, c in contexts.items()]
    if current is not None:
        doc["current-context"] = current
    return doc


@pytest.fixture
def write_kubeconfig(tmp_path: Path) -> Callable[..., Path]:
    counter = iter(range(1000))

    def write(name: str | None = None, **kw: Any) -> Path:
        path = tmp_path / (name or f"config-{next(counter)}")
        path.write_text(yaml.safe_dump(kubeconfig_doc(**kw)))
        return path

    return write


class Recorder:
    """A scripted API server for httpx.MockTransport: records requests, answers from a queue."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.responses: list[httpx.Response | Exception | Callable[[httpx.Request], Any]] = []
        self.default: httpx.Response | None = None

    def add(self, status: int = 200, body: Any = None, **kw: Any) -> None:
        if body is not None and not isinstance(body, bytes | str):
            kw["json"] = body
        elif body is not None:
            kw["content"] = body
        self.responses.append(httpx.Response(status, **kw))

    def status(self, code: int, reason: str, message: str = "", **kw: Any) -> None:
        self.add(
            code,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": code,
                "reason": reason,
                "message": message or reason,
                **kw.pop("extra", {}),
            },
            **kw,
        )

    def __call__(self, request: httpx.Request) -> httpx.Response:
        # a snapshot: the client may send the same Request object again with new headers
        self.requests.append(
            httpx.Request(
                request.method, request.url, headers=request.headers.copy(), content=request.content
            )
        )
        if self.responses:
            item = self.responses.pop(0)
        elif self.default is not None:
            item = self.default
        else:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        if isinstance(item, Exception):
            raise item
        if callable(item) and not isinstance(item, httpx.Response):
            result = item(request)
            assert isinstance(result, httpx.Response)
            return result
        return item

    @property
    def last(self) -> httpx.Request:
        return self.requests[-1]

    def json(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


@pytest.fixture
def server() -> Recorder:
    return Recorder()


@pytest.fixture
def make_client(server: Recorder) -> Callable[..., ApiClient]:
    """``make_client(clock=..., **config_fields)``: an ApiClient over ``server`` (not entered)."""

    def make(*, clock: Any = None, **fields: Any) -> ApiClient:
        fields.setdefault("server", "https://k8s.test:6443")
        fields.setdefault("qps", -1)
        kw: dict[str, Any] = {"transport": httpx.MockTransport(server)}
        if clock is not None:
            kw["clock"] = clock
        return ApiClient(ClientConfig(**fields), **kw)

    return make
