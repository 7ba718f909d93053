"""Which kubelet client certificate requests the approver may approve, and the permission a
requester needs for each (kube's ``recognizers`` in ``sarapprove.go``): a node renewing its
own certificate (``selfnodeclient``), then any node client certificate (``nodeclient``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cryptography import x509
from cryptography.x509.oid import NameOID

from kcm.controllerkit import KUBE_APISERVER_CLIENT_KUBELET, kubelet_client_refusal
from kcm.models.certificates_v1 import CertificateSigningRequest

__all__ = ["RECOGNIZERS", "Recognizer", "is_node_client", "is_self_node_client"]


def is_node_client(csr: CertificateSigningRequest, request: x509.CertificateSigningRequest) -> bool:
    """A kubelet client certificate request (kube's ``isNodeClientCert``)."""
    spec = csr.spec
    if spec is None or spec.signer_name != KUBE_APISERVER_CLIENT_KUBELET:
        return False
    return kubelet_client_refusal(request, list(spec.usages or ())) is None


def is_self_node_client(
    csr: CertificateSigningRequest, request: x509.CertificateSigningRequest
) -> bool:
    """A node client certificate request made by that node itself: the requester is the
    certificate's common name (kube's ``isSelfNodeClientCert``)."""
    names = request.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    common_name = str(names[0].value) if names else ""
    if csr.spec is None or (csr.spec.username or "") != common_name:
        return False
    return is_node_client(csr, request)


@dataclass(frozen=True)
class Recognizer:
    """A kind of request, the ``certificatesigningrequests/<subresource>`` create permission
    that approves it, and the Approved condition's message."""

    recognize: Callable[[CertificateSigningRequest, x509.CertificateSigningRequest], bool]
    subresource: str
    message: str


RECOGNIZERS = (
    Recognizer(
        is_self_node_client,
        "selfnodeclient",
        "Auto approving self kubelet client certificate after SubjectAccessReview.",
    ),
    Recognizer(
        is_node_client,
        "nodeclient",
        "Auto approving kubelet client certificate after SubjectAccessReview.",
    ),
)
"""Tried in this order; the first whose permission the requester has approves."""
