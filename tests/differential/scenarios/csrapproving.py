"""CSR approving: a kubelet client request whose requester may create node client
certificates (the harness's administrator may) is auto-approved, then signed."""

from __future__ import annotations

from ..scenario import Create, Scenario, Settle
from . import _requests
from .csrsigning import KINDS, KUBELET_CLIENT, KUBELET_CLIENT_USAGES, csr

SCENARIOS = [
    Scenario(
        "csrapproving/kubelet-client-request-is-approved-and-signed",
        (
            Create(
                csr("df-node-client", _requests.NODE_CLIENT, KUBELET_CLIENT, KUBELET_CLIENT_USAGES)
            ),
            Settle(),
        ),
        kinds=KINDS,
        doc="Not the node itself (nodeclient, not selfnodeclient): approved after the "
        "SubjectAccessReview, then issued for system:node:csr-node-1.",
    ),
]
