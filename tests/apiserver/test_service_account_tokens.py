"""``serviceaccounts/NAME/token``: a TokenRequest answered with a JWT the server signs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import jwt
import pytest

from kcm.apiserver import ApiServer

pytestmark = pytest.mark.anyio

NS = "/api/v1/namespaces/default"
TOKEN = f"{NS}/serviceaccounts/robot/token"


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        await client.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "robot"}})
        yield client


def request(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}


async def test_the_token_is_signed_and_names_the_service_account(
    http: httpx.AsyncClient, api_server: ApiServer
) -> None:
    account = (await http.get(f"{NS}/serviceaccounts/robot")).json()
    r = await http.post(TOKEN, json=request(audiences=["api"], expirationSeconds=600))
    assert r.status_code == 201
    body = r.json()
    assert body["spec"] == {"audiences": ["api"], "expirationSeconds": 600, "boundObjectRef": None}
    assert body["metadata"]["creationTimestamp"] is None
    assert body["metadata"]["managedFields"][0]["subresource"] == "token"
    token = body["status"]["token"]
    key = api_server.rest.ctx.tokens.key.public_key()
    claims = jwt.decode(token, key, algorithms=["ES256"], audience="api")
    assert claims["sub"] == "system:serviceaccount:default:robot"
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert claims["kubernetes.io"] == {
        "namespace": "default",
        "serviceaccount": {"name": "robot", "uid": account["metadata"]["uid"]},
    }
    assert claims["exp"] - claims["iat"] == 600
    assert jwt.get_unverified_header(token)["kid"]


async def test_defaults_and_validation(http: httpx.AsyncClient) -> None:
    spec = (await http.post(TOKEN, json=request())).json()["spec"]
    assert spec["audiences"] == ["https://kubernetes.default.svc.cluster.local"]
    assert spec["expirationSeconds"] == 3600
    r = await http.post(TOKEN, json=request(expirationSeconds=60))
    assert r.status_code == 422
    assert r.json()["message"] == (
        'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid '
        "value: 60: may not specify a duration less than 10 minutes"
    )
    missing = await http.post(f"{NS}/serviceaccounts/nope/token", json=request())
    assert missing.json()["message"] == 'serviceaccounts "nope" not found'
    assert (await http.get(TOKEN)).status_code == 405


async def test_a_token_bound_to_a_pod(http: httpx.AsyncClient, api_server: ApiServer) -> None:
    containers = [{"name": "c", "image": "busybox"}]
    pod = {
        "metadata": {"name": "p"},
        "spec": {"serviceAccountName": "robot", "containers": containers},
    }
    uid = (await http.post(f"{NS}/pods", json=pod)).json()["metadata"]["uid"]
    ref = {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid}
    # what the kubelet asks for: kube extends it to a year, warning after the hour asked for
    body = (await http.post(TOKEN, json=request(boundObjectRef=ref, expirationSeconds=3607))).json()
    key = api_server.rest.ctx.tokens.key.public_key()
    claims = jwt.decode(
        body["status"]["token"],
        key,
        algorithms=["ES256"],
        audience="https://kubernetes.default.svc.cluster.local",
    )
    assert claims["kubernetes.io"]["pod"] == {"name": "p", "uid": uid}
    assert claims["exp"] - claims["iat"] == 365 * 24 * 3600
    assert claims["kubernetes.io"]["warnafter"] - claims["iat"] == 3607
    stale = {**ref, "uid": "00000000-0000-0000-0000-000000000000"}
    r = await http.post(TOKEN, json=request(boundObjectRef=stale))
    assert r.status_code == 409
    await http.post(f"{NS}/serviceaccounts", json={"metadata": {"name": "other"}})
    other = await http.post(f"{NS}/serviceaccounts/other/token", json=request(boundObjectRef=ref))
    assert other.status_code == 400
    assert "pod running with different serviceaccount name" in other.json()["message"]
    node = {"apiVersion": "v1", "kind": "Node", "name": "n"}
    r = await http.post(TOKEN, json=request(boundObjectRef=node))
    assert r.json()["message"] == "cannot bind token to object of type /v1, Kind=Node"
