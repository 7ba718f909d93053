"""Custom resources of a CRD whose versions have different schemas (conversion None): what a
read in each version shows, as kube-apiserver: the storage version's schema prunes and
defaults, then the served version's prunes (without its defaults)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.testing import crd_manifest

pytestmark = pytest.mark.anyio


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


def _schema(**props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props}},
    }


async def test_reads_go_through_the_storage_version(http: httpx.AsyncClient) -> None:
    crd = crd_manifest(group="example.com", kind="Widget")
    v1 = crd["spec"]["versions"][0]
    v1["schema"]["openAPIV3Schema"] = _schema(a={"type": "integer", "default": 3})
    v2 = {
        **v1,
        "name": "v2",
        "storage": False,
        "schema": {"openAPIV3Schema": _schema(b={"type": "integer", "default": 7})},
    }
    crd["spec"]["versions"].append(v2)
    await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    base = "/apis/example.com/{}/namespaces/default/widgets"
    body = {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}}
    created = await http.post(base.format("v2"), json={**body, "spec": {"a": 1, "b": 2}})
    assert created.status_code == 201
    assert created.json()["spec"] == {}  # b is not stored (v1 has no b), a was pruned by v2
    got = (await http.get(base.format("v1") + "/w")).json()
    assert (got["apiVersion"], got["spec"]) == ("example.com/v1", {"a": 3})
    got = (await http.get(base.format("v2") + "/w")).json()
    assert (got["apiVersion"], got["spec"]) == ("example.com/v2", {})
