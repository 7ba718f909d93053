"""CertificateSigningRequests on the embedded server, as kube-apiserver's registry treats
them: the creator is recorded, the request is validated and never changes, ``/approval``
writes only Approved/Denied, ``/status`` only the certificate and other conditions."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from tests.helpers.certificates import make_ca, make_csr

pytestmark = pytest.mark.anyio

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet"
USAGES = ["digital signature", "key encipherment", "client auth"]


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


def csr(name: str, **spec: Any) -> dict[str, Any]:
    body = {
        "request": base64.b64encode(make_csr()).decode(),
        "signerName": KUBELET_CLIENT,
        "usages": USAGES,
        **spec,
    }
    return {"metadata": {"name": name}, "spec": body}


async def create(http: httpx.AsyncClient, body: dict[str, Any], **headers: str) -> Any:
    response = await http.post(CSRS, json=body, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


async def test_a_create_records_the_requester_and_drops_any_status(
    http: httpx.AsyncClient,
) -> None:
    body = csr("mine", username="someone-else", groups=["system:masters"])
    body["status"] = {"certificate": base64.b64encode(b"x").decode()}
    created = await create(
        http, body, **{"Impersonate-User": "system:node:n1", "Impersonate-Group": "system:nodes"}
    )
    assert created["spec"]["username"] == "system:node:n1"
    assert created["spec"]["groups"] == ["system:nodes", "system:authenticated"]
    assert "status" not in created or not created["status"].get("certificate")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"request": base64.b64encode(b"junk").decode()}, "PEM block type must be CERTIFICATE"),
        ({"usages": []}, "spec.usages: Required value: usages must be provided"),
        ({"usages": ["flying"]}, 'spec.usages[0]: Unsupported value: "flying"'),
        ({"usages": ["client auth", "client auth"]}, "spec.usages[1]: Duplicate value"),
        ({"signerName": ""}, "spec.signerName: Required value"),
        ({"signerName": "nodomain"}, "must be a fully qualified domain and path"),
        ({"signerName": "kubernetes.io/legacy-unknown"}, "the legacy signerName is not allowed"),
        ({"expirationSeconds": 599}, "may not specify a duration less than 600 seconds"),
    ],
)
async def test_bad_requests_are_refused(
    http: httpx.AsyncClient, spec: dict[str, Any], message: str
) -> None:
    response = await http.post(CSRS, json=csr("bad", **spec))
    assert response.status_code == 422, response.text
    assert message in response.json()["message"]


async def test_approval_writes_only_conditions_and_status_only_the_certificate(
    http: httpx.AsyncClient,
) -> None:
    created = await create(http, csr("walk"))
    spec = created["spec"]
    approve = {
        **created,
        "spec": {**spec, "usages": ["client auth"]},  # ignored: the spec never changes
        "status": {
            "conditions": [{"type": "Approved", "status": "True", "reason": "ByTest"}],
            "certificate": base64.b64encode(b"ignored").decode(),
        },
    }
    response = await http.put(f"{CSRS}/walk/approval", json=approve)
    assert response.status_code == 200, response.text
    approved = response.json()
    assert approved["spec"] == spec
    assert "certificate" not in approved["status"]
    [condition] = approved["status"]["conditions"]
    assert condition["lastUpdateTime"]
    assert condition["lastTransitionTime"]

    # the main resource and /status may not touch Approved
    denied = {**approved, "status": {"conditions": [{"type": "Denied", "status": "True"}]}}
    response = await http.put(f"{CSRS}/walk/status", json=denied)
    assert response.status_code == 422
    assert 'updates may not add a condition of type \\"Denied\\"' in response.text or (
        'may not add a condition of type "Denied"' in response.json()["message"]
    )

    ca = make_ca()
    cert = base64.b64encode(ca.cert_pem).decode()
    issued = {**approved, "status": {**approved["status"], "certificate": cert}}
    response = await http.put(f"{CSRS}/walk/status", json=issued)
    assert response.status_code == 200, response.text
    assert response.json()["status"]["certificate"] == cert
    assert response.json()["status"]["conditions"] == approved["status"]["conditions"]

    again = {**response.json()}
    again["status"] = {
        **again["status"],
        "certificate": base64.b64encode(make_ca().cert_pem).decode(),
    }
    response = await http.put(f"{CSRS}/walk/status", json=again)
    assert response.status_code == 422
    assert "may not modify existing certificate content" in response.json()["message"]


async def test_approved_and_denied_are_exclusive(http: httpx.AsyncClient) -> None:
    created = await create(http, csr("both"))
    both = [
        {"type": "Approved", "status": "True"},
        {"type": "Denied", "status": "True"},
    ]
    response = await http.put(
        f"{CSRS}/both/approval", json={**created, "status": {"conditions": both}}
    )
    assert response.status_code == 422
    assert "Approved and Denied conditions are mutually exclusive" in response.json()["message"]
