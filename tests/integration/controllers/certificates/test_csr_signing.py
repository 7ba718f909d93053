"""The CSR signer against the embedded API server: approved requests are signed by the CA of
their signer, refused ones fail, others are left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.csrsigning import SIGNERS, CAFiles, CSRSigningController
from kcm.informers import SharedInformerFactory
from kcm.models.certificates_v1 import CertificateSigningRequest
from kcm.testing import eventually
from tests.helpers.certificates import SigningCA, make_ca, make_csr
from tests.integration.controllers.certificates.csr_harness import approve, kubelet_csr
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio


def signer_for(ca: SigningCA, directory: Path) -> Any:
    cert, key = ca.write(directory)

    def make(client: ApiClient, factory: SharedInformerFactory) -> CSRSigningController:
        files = CAFiles(cert, key)
        return CSRSigningController(client, factory, signers=dict.fromkeys(SIGNERS, files))

    return make


async def certificate_of(api: Any, name: str) -> bytes | None:
    csr = await api.get(name)
    return csr.status.certificate if csr.status else None


async def test_an_approved_kubelet_request_is_signed_by_the_ca(
    api_server: ApiServer, tmp_path: Path
) -> None:
    ca = make_ca()
    async with running(api_server, signer_for(ca, tmp_path)) as env:
        api: Any = env.client.api(CertificateSigningRequest)
        await api.create(kubelet_csr("node-1-client", expiration_seconds=3600))
        await api.create(kubelet_csr("left-pending"))
        await approve(env.client, "node-1-client")

        async def signed() -> bool:
            return bool(await certificate_of(api, "node-1-client"))

        await eventually(signed)
        pem = await certificate_of(api, "node-1-client")
        assert pem is not None
        assert ca.verifies(pem)
        cert = x509.load_pem_x509_certificate(pem)
        lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
        assert lifetime.total_seconds() == 3600 + 300  # asked-for hour, plus the backdate
        await env.quiesce()
        assert await certificate_of(api, "left-pending") is None
        assert env.tap.count("PUT", "/left-pending/status") == 0


async def test_a_request_the_signer_refuses_fails(api_server: ApiServer, tmp_path: Path) -> None:
    async with running(api_server, signer_for(make_ca(), tmp_path)) as env:
        api: Any = env.client.api(CertificateSigningRequest)
        request = make_csr("system:node:x", ("not-nodes",))
        await api.create(kubelet_csr("impostor", request=request))
        await approve(env.client, "impostor")

        async def failed() -> Any:
            csr = await api.get("impostor")
            return [c for c in (csr.status.conditions or ()) if c.type == "Failed"]

        await eventually(failed)
        [condition] = await failed()
        assert condition.reason == "SignerValidationFailure"
        assert condition.message == "subject organization is not system:nodes"
        assert condition.status == "True"
        await env.quiesce()
        assert await certificate_of(api, "impostor") is None


async def test_denied_requests_and_unknown_signers_are_left_alone(
    api_server: ApiServer, tmp_path: Path
) -> None:
    async with running(api_server, signer_for(make_ca(), tmp_path)) as env:
        api: Any = env.client.api(CertificateSigningRequest)
        await api.create(kubelet_csr("denied"))
        await approve(env.client, "denied", condition="Denied")
        await api.create(kubelet_csr("elsewhere", signer="example.com/other"))
        await approve(env.client, "elsewhere")
        await env.quiesce()
        assert env.tap.count("PUT", "/denied/status") == 0
        assert env.tap.count("PUT", "/elsewhere/status") == 0
