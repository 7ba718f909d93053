"""CSR signing: approved requests of the built-in signers are issued by the signing CA both
controller managers run with (``data/signing-ca.*``); refused ones fail; denied ones stay."""

from __future__ import annotations

import base64
from typing import Any

from ..scenario import Create, Patch, Scenario, Settle
from . import _requests

KINDS = ("certificatesigningrequests",)


def csr(name: str, request: str, signer: str, usages: list[str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "certificates.k8s.io/v1",
        "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(request.encode()).decode(),
            "signerName": signer,
            "usages": usages,
            **spec,
        },
    }


def decide(name: str, kind: str = "Approved") -> Patch:
    """What ``kubectl certificate approve`` (or ``deny``) writes, through ``/approval``."""
    condition = {"type": kind, "status": "True", "reason": "ByScenario", "message": "by test"}
    return Patch(
        "certificatesigningrequests",
        name,
        {"status": {"conditions": [condition]}},
        subresource="approval",
    )


CLIENT = "kubernetes.io/kube-apiserver-client"
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
KUBELET_CLIENT_USAGES = ["digital signature", "key encipherment", "client auth"]

SCENARIOS = [
    Scenario(
        "csrsigning/approved-client-certificate-is-issued",
        (
            Create(
                csr(
                    "df-alice",
                    _requests.ALICE,
                    CLIENT,
                    ["client auth", "digital signature"],
                    expirationSeconds=3600,
                )
            ),
            Settle(),
            decide("df-alice"),
            Settle(),
        ),
        kinds=KINDS,
        doc="An hour asked for: the certificate lasts an hour plus the five minutes backdated.",
    ),
    Scenario(
        "csrsigning/kubelet-serving-certificate-lasts-the-signing-duration",
        (
            Create(
                csr(
                    "df-serving",
                    _requests.SERVING,
                    KUBELET_SERVING,
                    ["digital signature", "key encipherment", "server auth"],
                )
            ),
            Settle(),
            decide("df-serving"),
            Settle(),
        ),
        kinds=KINDS,
    ),
    Scenario(
        "csrsigning/refused-request-fails",
        (
            Create(
                csr("df-not-a-node", _requests.NOT_A_NODE, KUBELET_CLIENT, KUBELET_CLIENT_USAGES)
            ),
            Settle(),
            decide("df-not-a-node"),
            Settle(),
        ),
        kinds=KINDS,
        doc="Organization not system:nodes: the approver ignores it, the signer refuses it.",
    ),
    Scenario(
        "csrsigning/denied-request-is-not-signed",
        (
            Create(csr("df-denied", _requests.ALICE, CLIENT, ["client auth"])),
            decide("df-denied", "Denied"),
            Settle(),
        ),
        kinds=KINDS,
    ),
]
