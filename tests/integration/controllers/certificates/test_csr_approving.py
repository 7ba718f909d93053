"""The approver, the signer and the cleaner against the embedded API server: a kubelet-style
request walks from creation through auto-approval to a certificate that verifies against the
CA; requests whose requester lacks the permission stay pending."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.csrapproving import CSRApprovingController
from kcm.controllers.csrcleaner import CSRCleanerController
from kcm.controllers.csrsigning import SIGNERS, CAFiles, CSRSigningController
from kcm.informers import SharedInformerFactory
from kcm.models.certificates_v1 import CertificateSigningRequest
from kcm.testing import FakeClock, eventually
from tests.helpers.certificates import make_ca, make_csr
from tests.integration.controllers.certificates.csr_harness import CLIENT_USAGES, KUBELET_CLIENT
from tests.integration.controllers.serviceaccounts.sa_harness import running

pytestmark = pytest.mark.anyio

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
RBAC = "rbac.authorization.k8s.io"
TOKEN = "admin-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
SELF_NODE_CLIENT = "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"


def approver(client: ApiClient, factory: SharedInformerFactory) -> CSRApprovingController:
    return CSRApprovingController(client, factory)


async def create_as_node(server: ApiServer, name: str, node: str) -> None:
    """POST a kubelet client CSR as the node itself (``system:node:<node>``, ``system:nodes``)."""
    body = {
        "metadata": {"name": name},
        "spec": {
            "request": base64.b64encode(make_csr(f"system:node:{node}")).decode(),
            "signerName": KUBELET_CLIENT,
            "usages": CLIENT_USAGES,
        },
    }
    headers = {"Impersonate-User": f"system:node:{node}", "Impersonate-Group": "system:nodes"}
    async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
        response = await http.post(CSRS, json=body, headers=headers)
        assert response.status_code == 201, response.text


async def let_nodes_renew(server: ApiServer) -> None:
    """What kubeadm binds for nodes: ``system:node-bootstrapper`` (create CSRs; kube's Node
    authorizer allows it, the embedded server has none) and
    ``kubeadm:node-autoapprove-certificate-rotation`` (the approver's ``selfnodeclient``)."""
    async with httpx.AsyncClient(base_url=server.url, timeout=10, headers=AUTH) as http:
        for role in ("system:node-bootstrapper", SELF_NODE_CLIENT):
            binding = {
                "metadata": {"name": f"nodes-{role.rsplit(':', 1)[-1]}"},
                "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": RBAC, "kind": "Group", "name": "system:nodes"}],
            }
            response = await http.post(f"/apis/{RBAC}/v1/clusterrolebindings", json=binding)
            assert response.status_code == 201, response.text


async def test_a_kubelet_request_walks_to_a_certificate_that_verifies(tmp_path: Path) -> None:
    ca = make_ca()
    cert_file, key_file = ca.write(tmp_path)

    def signer(client: ApiClient, factory: SharedInformerFactory) -> CSRSigningController:
        files = CAFiles(cert_file, key_file)
        return CSRSigningController(client, factory, signers=dict.fromkeys(SIGNERS, files))

    # with a token the server has kube-apiserver's bootstrap RBAC policy (the node client roles)
    async with ApiServer(token=TOKEN) as server, running(server, approver, signer) as env:
        await let_nodes_renew(server)
        await create_as_node(server, "node-1-renewal", "node-1")
        api: Any = env.client.api(CertificateSigningRequest)

        async def issued() -> bool:
            csr = await api.get("node-1-renewal")
            return bool(csr.status and csr.status.certificate)

        await eventually(issued)
        csr = await api.get("node-1-renewal")
        assert csr.spec.username == "system:node:node-1"
        [approved] = csr.status.conditions
        assert (approved.type, approved.status, approved.reason) == (
            "Approved",
            "True",
            "AutoApproved",
        )
        assert approved.message == (
            "Auto approving self kubelet client certificate after SubjectAccessReview."
        )
        assert ca.verifies(csr.status.certificate)


async def test_without_the_permission_a_request_stays_pending(api_server: ApiServer) -> None:
    async with running(api_server, approver) as env:
        await create_as_node(api_server, "unbound", "node-2")
        api: Any = env.client.api(CertificateSigningRequest)
        await env.quiesce()
        csr = await api.get("unbound")
        assert not (csr.status and csr.status.conditions)
        assert env.tap.count("PATCH", "/unbound/approval") == 0
        assert env.tap.count("POST", "/subjectaccessreviews") >= 2  # selfnodeclient, nodeclient


async def test_the_cleaner_deletes_requests_past_their_deadlines(api_server: ApiServer) -> None:
    later = FakeClock(wall_start=datetime.now(UTC) + timedelta(hours=25))

    def cleaner(client: ApiClient, factory: SharedInformerFactory) -> CSRCleanerController:
        return CSRCleanerController(client, factory, clock=later)

    async with running(api_server, cleaner) as env:
        api: Any = env.client.api(CertificateSigningRequest)
        await create_as_node(api_server, "pending", "node-3")
        [built] = env.built
        await eventually(lambda: built.informer.lister().get_or_none(None, "pending") is not None)
        assert built.passes == 1  # the first pass ran at start, before the request existed
        await later.advance(3600)  # the next pass, a day and an hour after the request

        async def deleted() -> bool:
            return not [c for c in (await api.list()).items if c.metadata.name == "pending"]

        await eventually(deleted)
        assert built.passes == 2
