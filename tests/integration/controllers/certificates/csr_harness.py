"""Helpers for the certificate controllers' integration tests: CSRs as a kubelet sends them,
and approving one as ``kubectl certificate approve`` does."""

from __future__ import annotations

from typing import Any

from kcm.client import ApiClient
from kcm.models.certificates_v1 import CertificateSigningRequest, CertificateSigningRequestSpec
from kcm.models.meta_v1 import ObjectMeta
from tests.helpers.certificates import make_csr

KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"]


def kubelet_csr(
    name: str,
    node: str = "node-1",
    *,
    signer: str = KUBELET_CLIENT,
    usages: list[str] | None = None,
    request: bytes | None = None,
    expiration_seconds: int | None = None,
) -> CertificateSigningRequest:
    return CertificateSigningRequest(
        metadata=ObjectMeta(name=name),
        spec=CertificateSigningRequestSpec(
            request=request or make_csr(f"system:node:{node}"),
            signer_name=signer,
            usages=usages or CLIENT_USAGES,
            expiration_seconds=expiration_seconds,
        ),
    )


async def approve(client: ApiClient, name: str, *, condition: str = "Approved") -> None:
    """Add an Approved (or Denied) condition through ``/approval``."""
    api: Any = client.api(CertificateSigningRequest)
    csr = await api.get(name)
    conditions = [
        {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
        for c in (csr.status.conditions if csr.status else None) or ()
    ]
    conditions.append(
        {"type": condition, "status": "True", "reason": "KubectlApprove", "message": "by test"}
    )
    await api.patch(
        name,
        {
            "metadata": {"resourceVersion": csr.metadata.resource_version},
            "status": {"conditions": conditions},
        },
        subresource="approval",
    )
