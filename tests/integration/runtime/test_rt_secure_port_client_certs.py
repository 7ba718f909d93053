"""The secure port with client certificates and a front proxy, over real TLS: the cases the
Go kube-controller-manager answered (golden recorded with curl from it, four flag sets) are
answered the same by kcm's server, on a free port with test CAs made here (with the
delegation kubeconfigs, a fake client answers the reviews as the recording cluster did).

One recorded difference is kept on purpose: a certificate no configured CA issued is 401 in
Go (its TLS layer takes any certificate and leaves verification to the authenticators);
Python's ``ssl`` can only verify during the handshake, so kcm's connection fails instead.
"""

from __future__ import annotations

import json
import re
import ssl
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from prometheus_client import CollectorRegistry

from kcm.models import (
    SubjectAccessReview,
    SubjectAccessReviewStatus,
    TokenReview,
    TokenReviewStatus,
    UserInfo,
)
from kcm.runtime import (
    ClientCertAuthenticator,
    DelegatedAuth,
    FrontProxyAuthenticator,
    ask_for_client_certificates,
    self_signed_context,
)
from kcm.runtime._health_server import HealthServer, HealthzApp
from kcm.testing import FakeClock
from tests.helpers.client_certificates import ClientCA

pytestmark = pytest.mark.anyio

GOLDEN = (
    Path(__file__).parents[2]
    / "golden"
    / "kube-controller-manager"
    / "secure-port-client-certificates.txt"
)

CLIENT_CA = ClientCA.create("client-ca")
PROXY_CA = ClientCA.create("front-proxy-ca")
OTHER_CA = ClientCA.create("other-ca")
CERTS = {
    "alice": CLIENT_CA.client("alice", "system:masters"),
    "bob": CLIENT_CA.client("bob", "devs", "qa"),
    "nocn": CLIENT_CA.client("", "system:masters"),
    "eve": OTHER_CA.client("eve", "system:masters"),
    "proxy": PROXY_CA.client("front-proxy-client"),
    "proxy-other": PROXY_CA.client("someone-else"),
}
MASTERS = {"x-remote-user": "carol", "x-remote-group": "system:masters"}
REQUESTS: dict[str, tuple[str | None, dict[str, str]]] = {
    "anonymous": (None, {}),
    "bearer-token": (None, {"authorization": "Bearer sometoken"}),
    "cert-system-masters": ("alice", {}),
    "cert-other-group": ("bob", {}),
    "cert-without-cn": ("nocn", {}),
    "cert-from-unknown-ca": ("eve", {}),
    "proxy-masters-headers": ("proxy", MASTERS),
    "proxy-other-group-headers": ("proxy", {"x-remote-user": "carol", "x-remote-group": "devs"}),
    "proxy-without-user-header": ("proxy", {"x-remote-group": "system:masters"}),
    "proxy-not-allowed-name": ("proxy-other", MASTERS),
    "headers-without-proxy-cert": (None, MASTERS),
    "client-cert-with-headers": ("bob", MASTERS),
    "bearer-admin-token": (None, {"authorization": "Bearer admintoken"}),
    "bearer-bad-token": (None, {"authorization": "Bearer sometoken"}),
    "cert-other-group-bad-token": ("bob", {"authorization": "Bearer sometoken"}),
    "cert-without-cn-admin-token": ("nocn", {"authorization": "Bearer admintoken"}),
    "proxy-without-user-admin-token": ("proxy", {"authorization": "Bearer admintoken"}),
    "proxy-other-group-admin-token": (
        "proxy",
        {"x-remote-user": "carol", "x-remote-group": "devs", "authorization": "Bearer admintoken"},
    ),
}
"""What each recorded case sent (the curl calls of the recording)."""


def golden() -> dict[str, list[tuple[str, str, str]]]:
    """Flag set to its (case, path, answer) lines."""
    sections: dict[str, list[tuple[str, str, str]]] = {}
    current: list[tuple[str, str, str]] = []
    for line in GOLDEN.read_text().splitlines():
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
        elif line and not line.startswith("#"):
            case, path, answer = re.fullmatch(r"(\S+) (\S+): (.*)", line).groups()  # type: ignore[union-attr]
            current.append((case, path, answer))
    return sections


class ClusterReviews:
    """The recording cluster's answers: ``admintoken`` is a ``system:masters`` token, RBAC
    grants nobody else ``get /metrics``."""

    def api(self, model: type[Any]) -> ClusterReviews:
        return self

    async def create(self, obj: Any) -> Any:
        if isinstance(obj, TokenReview):
            admin = UserInfo(username="admin", groups=["system:masters", "system:authenticated"])
            known = obj.spec.token == "admintoken"
            status = TokenReviewStatus(authenticated=known, user=admin if known else None)
            return TokenReview(spec=obj.spec, status=status)
        return SubjectAccessReview(spec=obj.spec, status=SubjectAccessReviewStatus(allowed=False))


@pytest.fixture(scope="module")
def cert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("client-certs")
    CLIENT_CA.write(directory, "client-ca")
    PROXY_CA.write(directory, "front-proxy-ca")
    for name, issued in CERTS.items():
        issued.write(directory, name)
    return directory


def client_context(cert_dir: Path, name: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if name is not None:
        context.load_cert_chain(cert_dir / f"{name}.crt", cert_dir / f"{name}.key")
    return context


async def answer(port: int, cert_dir: Path, case: str, path: str) -> str:
    """The recording's line format: ``<status> <message>``, or the connection error."""
    name, headers = REQUESTS[case]
    async with httpx.AsyncClient(verify=client_context(cert_dir, name)) as http:
        try:
            response = await http.get(f"https://127.0.0.1:{port}{path}", headers=headers)
        except httpx.TransportError:
            return "connection error"
    if response.status_code == 200:
        return "200 <metrics>" if path == "/metrics" else f"200 {response.text}"
    return f"{response.status_code} {json.loads(response.text)['message']}"


@pytest.mark.parametrize("flags", list(golden()))
async def test_answers_as_the_go_manager(flags: str, cert_dir: Path) -> None:
    ca_files: list[str] = []
    client_certs = front_proxy = None
    if "--client-ca-file" in flags:
        client_certs = ClientCertAuthenticator([CLIENT_CA.certificate])
        ca_files.append(str(cert_dir / "client-ca.crt"))
    if "--requestheader-client-ca-file" in flags:
        allowed = re.findall(r"--requestheader-allowed-names=(\S+)", flags)
        front_proxy = FrontProxyAuthenticator(
            [PROXY_CA.certificate], allowed_names=allowed[0].split(",") if allowed else ()
        )
        ca_files.append(str(cert_dir / "front-proxy-ca.crt"))
    context = self_signed_context("127.0.0.1")
    ask_for_client_certificates(context, ca_files)
    reviews = ClusterReviews() if "--authentication-kubeconfig" in flags else None
    auth = DelegatedAuth(
        reviews,  # type: ignore[arg-type]
        reviews,  # type: ignore[arg-type]
        client_certs=client_certs,
        front_proxy=front_proxy,
        clock=FakeClock(),
    )
    app = HealthzApp({"healthz": {}}, CollectorRegistry(), auth=auth)
    server = HealthServer("127.0.0.1:0", app, ssl_context=context, graceful_timeout=0.1)
    mismatches = []
    async with anyio.create_task_group() as tg:
        await tg.start(server.run)
        assert server.port is not None
        for case, path, expected in golden()[flags]:
            got = await answer(server.port, cert_dir, case, path)
            if got == "connection error" and handshake_fails_in_kcm(REQUESTS[case][0], flags):
                continue
            if got != expected:
                mismatches.append(f"{case} {path}: kube {expected!r}, kcm {got!r}")
        tg.cancel_scope.cancel()
    assert not mismatches, "\n".join(mismatches)


def handshake_fails_in_kcm(cert: str | None, flags: str) -> bool:
    """A certificate no configured CA issued (Go: 401 from the authenticators)."""
    if cert == "eve":
        return True
    proxy_ca = "--requestheader-client-ca-file" in flags
    return cert is not None and cert.startswith("proxy") and not proxy_ca
