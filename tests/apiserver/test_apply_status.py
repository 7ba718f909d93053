"""Server-side apply to ``/status``: only status changes, and the applier's managedFields entry
names the subresource (and survives the status subresource's PrepareForUpdate)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.testing import crd_manifest

pytestmark = pytest.mark.anyio

APPLY = {"content-type": "application/apply-patch+yaml"}


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


async def test_apply_to_status_of_a_custom_resource(http: httpx.AsyncClient) -> None:
    crd = crd_manifest(group="example.com", kind="Widget", status=True)
    await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    url = "/apis/example.com/v1/namespaces/default/widgets/w"
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    r = await http.patch(
        url, json={**widget, "spec": {"a": 1}}, params={"fieldManager": "m"}, headers=APPLY
    )
    assert r.status_code == 201
    r = await http.patch(
        f"{url}/status",
        json={**widget, "spec": {"a": 2}, "status": {"ready": True}},
        params={"fieldManager": "s"},
        headers=APPLY,
    )
    assert r.status_code == 200
    got = r.json()
    assert got["spec"] == {"a": 1}
    assert got["status"] == {"ready": True}
    entries = {e["manager"]: e for e in got["metadata"]["managedFields"]}
    assert entries["s"]["subresource"] == "status"
    assert entries["s"]["fieldsV1"] == {"f:status": {".": {}, "f:ready": {}}}
    assert entries["m"]["fieldsV1"] == {"f:spec": {".": {}, "f:a": {}}}
