"""What each built-in signer accepts (kube's ``getCSRVerificationFuncForSignerName``): a
request it refuses gets a Failed condition with the reason returned here."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cryptography import x509

from kcm.controllerkit import (
    KUBE_APISERVER_CLIENT,
    KUBE_APISERVER_CLIENT_KUBELET,
    KUBELET_SERVING,
    LEGACY_UNKNOWN,
    kubelet_client_refusal,
    kubelet_serving_refusal,
)

__all__ = ["SIGNERS", "refusal"]

SIGNERS = (KUBELET_SERVING, KUBE_APISERVER_CLIENT_KUBELET, KUBE_APISERVER_CLIENT, LEGACY_UNKNOWN)
"""The built-in signers, in the order kube-controller-manager starts them."""


def _apiserver_client_refusal(
    request: x509.CertificateSigningRequest, usages: Sequence[str]
) -> str | None:
    has_client_auth = False
    for usage in usages:
        if usage == "client auth":
            has_client_auth = True
        elif usage not in ("digital signature", "key encipherment"):
            return f"invalid usage for client certificate: {usage}"
    if not has_client_auth:
        return "missing required usage for client certificate: client auth"
    return None


def _anything(request: x509.CertificateSigningRequest, usages: Sequence[str]) -> str | None:
    return None


_RULES: dict[str, Callable[[x509.CertificateSigningRequest, Sequence[str]], str | None]] = {
    KUBELET_SERVING: kubelet_serving_refusal,
    KUBE_APISERVER_CLIENT_KUBELET: kubelet_client_refusal,
    KUBE_APISERVER_CLIENT: _apiserver_client_refusal,
    LEGACY_UNKNOWN: _anything,
}


def refusal(
    signer_name: str, request: x509.CertificateSigningRequest, usages: Sequence[str]
) -> str | None:
    """Why the built-in ``signer_name`` refuses ``request`` with ``usages``, or None.

    Raises:
        KeyError: ``signer_name`` is not a built-in signer.
    """
    return _RULES[signer_name](request, usages)
