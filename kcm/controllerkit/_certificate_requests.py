"""CertificateSigningRequests as the certificate controllers read them (kube's
``pkg/apis/certificates/helpers.go`` and ``certificate_controller_utils.go``): the built-in
signer names, the PEM request, the approval conditions, the kubelet request shapes the
signer and the approver both check, and the retry policy of their shared queue logic
(``certificate_controller.go``)."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from kcm._extras import require
from kcm.clock import Clock
from kcm.models import ObjectKey
from kcm.models.certificates_v1 import CertificateSigningRequest
from kcm.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
)

if TYPE_CHECKING:
    from cryptography import x509

__all__ = [
    "KUBELET_CLIENT_USAGES",
    "KUBELET_SERVING",
    "KUBELET_SERVING_USAGES",
    "KUBE_APISERVER_CLIENT",
    "KUBE_APISERVER_CLIENT_KUBELET",
    "LEGACY_UNKNOWN",
    "certificate_rate_limiter",
    "has_true_condition",
    "is_approved",
    "is_denied",
    "kubelet_client_refusal",
    "kubelet_serving_refusal",
    "parse_certificate_request",
]

KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
"""The signer of client certificates for the API server."""
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
"""The signer of kubelets' client certificates."""
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
"""The signer of kubelets' serving certificates."""
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"
"""The v1beta1 catch-all signer."""

KUBELET_SERVING_USAGES = frozenset({"digital signature", "key encipherment", "server auth"})
"""The usages a kubelet serving certificate request must have, exactly."""
KUBELET_CLIENT_USAGES = frozenset({"client auth", "digital signature", "key encipherment"})
"""The usages a kubelet client certificate request must have, exactly."""
_NODE_PREFIX = "system:node:"


def certificate_rate_limiter(clock: Clock) -> RateLimiter[ObjectKey]:
    """kube's certificate controllers' queue (the approver's and the signer's): 200 ms ..
    1000 s per item, 10 qps burst 100 overall (a fresh limiter per queue)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.2, 1000.0, clock=clock),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def _x509() -> ModuleType:
    """cryptography's X.509, imported on first use (the base install has no cryptography)."""
    return require("cryptography.x509", extra="controllers", feature="reading certificate requests")


def _names(request: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        names: x509.SubjectAlternativeName = request.extensions.get_extension_for_class(
            _x509().SubjectAlternativeName
        ).value
        return names
    except _x509().ExtensionNotFound:
        return None


def _of(names: x509.SubjectAlternativeName | None, kind: type[x509.GeneralName]) -> list[object]:
    return list(names.get_values_for_type(kind)) if names is not None else []  # type: ignore[arg-type]


def _common_name(request: x509.CertificateSigningRequest) -> str:
    found = request.subject.get_attributes_for_oid(_x509().oid.NameOID.COMMON_NAME)
    return str(found[0].value) if found else ""


def _organizations(request: x509.CertificateSigningRequest) -> list[str]:
    return [
        str(a.value)
        for a in request.subject.get_attributes_for_oid(_x509().oid.NameOID.ORGANIZATION_NAME)
    ]


def _usage_list(usages: frozenset[str]) -> str:
    return "[" + " ".join(sorted(usages)) + "]"


def kubelet_serving_refusal(
    request: x509.CertificateSigningRequest, usages: Sequence[str]
) -> str | None:
    """Why ``request`` is no kubelet serving certificate request (kube's
    ``ValidateKubeletServingCSR``), or None."""
    if _organizations(request) != ["system:nodes"]:
        return "subject organization is not system:nodes"
    names = _names(request)
    if not _of(names, _x509().DNSName) and not _of(names, _x509().IPAddress):
        return "DNS or IP subjectAltName is required"
    if _of(names, _x509().RFC822Name):
        return "Email subjectAltNames are not allowed"
    if _of(names, _x509().UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    if frozenset(usages) != KUBELET_SERVING_USAGES:
        return f"usages did not match {_usage_list(KUBELET_SERVING_USAGES)}"
    if not _common_name(request).startswith(_NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    return None


def kubelet_client_refusal(
    request: x509.CertificateSigningRequest, usages: Sequence[str]
) -> str | None:
    """Why ``request`` is no kubelet client certificate request (kube's
    ``ValidateKubeletClientCSR``), or None."""
    if _organizations(request) != ["system:nodes"]:
        return "subject organization is not system:nodes"
    names = _names(request)
    if _of(names, _x509().DNSName):
        return "DNS subjectAltNames are not allowed"
    if _of(names, _x509().RFC822Name):
        return "Email subjectAltNames are not allowed"
    if _of(names, _x509().IPAddress):
        return "IP subjectAltNames are not allowed"
    if _of(names, _x509().UniformResourceIdentifier):
        return "URI subjectAltNames are not allowed"
    if not _common_name(request).startswith(_NODE_PREFIX):
        return "subject common name does not begin with system:node:"
    if frozenset(usages) != KUBELET_CLIENT_USAGES:
        return f"usages did not match {_usage_list(KUBELET_CLIENT_USAGES)}"
    return None


def parse_certificate_request(pem: bytes | None) -> x509.CertificateSigningRequest:
    """The PKCS#10 request in ``spec.request`` (the first PEM block).

    Raises:
        ValueError: no ``CERTIFICATE REQUEST`` PEM block, or one that does not parse.
    """
    text = pem or b""
    begin = text.find(b"-----BEGIN ")
    if begin < 0 or not text[begin:].startswith(b"-----BEGIN CERTIFICATE REQUEST-----"):
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    request: x509.CertificateSigningRequest = _x509().load_pem_x509_csr(text[begin:])
    return request


def _conditions(csr: CertificateSigningRequest) -> Sequence[object]:
    return (csr.status.conditions if csr.status else None) or ()


def is_approved(csr: CertificateSigningRequest) -> bool:
    """Approved and not Denied (kube's ``IsCertificateRequestApproved``)."""
    types = {getattr(c, "type", None) for c in _conditions(csr)}
    return "Approved" in types and "Denied" not in types


def is_denied(csr: CertificateSigningRequest) -> bool:
    """Has a Denied condition."""
    return any(getattr(c, "type", None) == "Denied" for c in _conditions(csr))


def has_true_condition(csr: CertificateSigningRequest, kind: str) -> bool:
    """A condition of ``kind`` whose status is True or empty (kube's ``HasTrueCondition``)."""
    return any(
        c.type == kind and (not c.status or c.status == "True")
        for c in (csr.status.conditions if csr.status else None) or ()
    )
