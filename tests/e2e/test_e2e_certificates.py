"""``kcm`` in embedded mode with a cluster signing CA, driven with kubectl as an administrator
does: a CSR for a user is created with ``kubectl create``, approved with ``kubectl certificate
approve``, issued by csrsigning (``kubectl get csr`` says ``Approved,Issued``) with a
certificate that verifies against the CA; ``kubectl certificate deny`` leaves one unsigned."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.e2e.e2e_harness import embedded_kcm, needs_kubectl, wait_for
from tests.helpers.certificates import make_ca, make_csr

pytestmark = needs_kubectl


def csr_manifest(name: str, user: str) -> str:
    request = base64.b64encode(make_csr(user, ("developers",))).decode()
    return json.dumps(
        {
            "apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest",
            "metadata": {"name": name},
            "spec": {
                "request": request,
                "signerName": "kubernetes.io/kube-apiserver-client",
                "expirationSeconds": 86400,
                "usages": ["client auth"],
            },
        }
    )


def test_kubectl_certificate_approve_gets_a_certificate_from_the_ca(tmp_path: Path) -> None:
    ca = make_ca()
    cert, key = ca.write(tmp_path)
    with embedded_kcm(
        tmp_path, f"--cluster-signing-cert-file={cert}", f"--cluster-signing-key-file={key}"
    ) as (_, kubectl):
        kubectl.run("create", "-f", "-", input=csr_manifest("alice", "alice"))
        kubectl.run("create", "-f", "-", input=csr_manifest("mallory", "mallory"))
        kubectl.run("certificate", "approve", "alice")
        kubectl.run("certificate", "deny", "mallory")

        def issued() -> str | None:
            found = kubectl.json("get", "csr", "alice").get("status", {}).get("certificate")
            return str(found) if found else None

        pem = base64.b64decode(wait_for("alice's certificate", issued))
        assert ca.verifies(pem)
        table = kubectl.run("get", "csr", "alice", "mallory", "--no-headers")
        rows = {line.split()[0]: line.split()[-1] for line in table.splitlines()}
        assert rows == {"alice": "Approved,Issued", "mallory": "Denied"}
        assert "certificate" not in kubectl.json("get", "csr", "mallory").get("status", {})
