"""server_preferred_resources: client-go's ServerPreferredResources over a scripted server."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from kcm.client import ApiClient, ClientConfig, DiscoveryResult, server_preferred_resources
from kcm.errors import DecodeError, NotFound

pytestmark = pytest.mark.anyio


def _resource(name: str, kind: str, *, namespaced: bool = True, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "namespaced": namespaced,
        "verbs": ["create", "delete", "get", "list", "watch"],
        **extra,
    }


def _list(group_version: str, *resources: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "APIResourceList", "groupVersion": group_version, "resources": resources}


def _group(name: str, preferred: str, *versions: str) -> dict[str, Any]:
    return {
        "name": name,
        "versions": [{"groupVersion": f"{name}/{v}", "version": v} for v in versions],
        "preferredVersion": {"groupVersion": f"{name}/{preferred}", "version": preferred},
    }


DOCS: dict[str, Any] = {
    "/api": {"kind": "APIVersions", "versions": ["v1"]},
    "/apis": {
        "kind": "APIGroupList",
        "groups": [
            # the server lists v1beta1 first, but v1 is preferred
            _group("example.com", "v1", "v1beta1", "v1"),
            _group("apps", "v1", "v1"),
        ],
    },
    "/api/v1": _list(
        "v1",
        _resource("pods", "Pod", shortNames=["po"]),
        _resource("pods/status", "Pod"),
        _resource("pods/log", "Pod"),
        _resource("nodes", "Node", namespaced=False),
    ),
    "/apis/example.com/v1": _list("example.com/v1", _resource("widgets", "Widget")),
    "/apis/example.com/v1beta1": _list(
        "example.com/v1beta1",
        _resource("widgets", "Widget"),  # served by v1 too: v1 wins
        _resource("gadgets", "Gadget", namespaced=False),  # only here: still found
    ),
    "/apis/apps/v1": _list("apps/v1", _resource("deployments", "Deployment")),
}


def _client(docs: dict[str, Any], requests: list[str]) -> ApiClient:
    def handle(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        doc = docs.get(request.url.path)
        if isinstance(doc, httpx.Response):
            return doc
        if doc is None:
            return httpx.Response(
                404,
                json={
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "reason": "NotFound",
                    "code": 404,
                    "message": "the server could not find the requested resource",
                },
            )
        return httpx.Response(200, json=doc)

    config = ClientConfig(server="https://k8s.test:6443", qps=-1)
    return ApiClient(config, transport=httpx.MockTransport(handle))


async def test_one_version_per_group_resource_preferred_first() -> None:
    requests: list[str] = []
    async with _client(DOCS, requests) as client:
        found = await server_preferred_resources(client)
    assert isinstance(found, DiscoveryResult)
    assert found.failed == {}
    got = [(r.api_version, r.plural) for r in found.resources]
    assert got == [
        ("v1", "pods"),
        ("v1", "nodes"),
        ("example.com/v1", "widgets"),
        ("example.com/v1beta1", "gadgets"),
        ("apps/v1", "deployments"),
    ]
    pods, nodes = found.resources[0], found.resources[1]
    assert (pods.kind, pods.namespaced, pods.short_names) == ("Pod", True, ("po",))
    assert pods.subresources == frozenset({"status", "log"})
    assert "delete" in pods.verbs
    assert (nodes.namespaced, nodes.list_kind) == (False, "NodeList")
    # every group version read once, nothing else
    assert sorted(requests) == sorted(DOCS)


async def test_a_failing_group_version_is_reported_and_the_rest_returned() -> None:
    docs = dict(DOCS)
    docs["/apis/example.com/v1"] = httpx.Response(
        403, json={"kind": "Status", "code": 403, "reason": "Forbidden", "message": "rbac"}
    )
    del docs["/apis/apps/v1"]  # 404: an aggregated API that went away
    docs["/apis/example.com/v1beta1"] = httpx.Response(200, content=b"not json")
    async with _client(docs, []) as client:
        found = await server_preferred_resources(client)
    assert set(found.failed) == {"example.com/v1", "example.com/v1beta1", "apps/v1"}
    assert all(found.failed.values())
    assert [r.plural for r in found.resources] == ["pods", "nodes"]
    assert "failed=" in repr(found)


async def test_a_failing_root_document_raises() -> None:
    docs = dict(DOCS)
    del docs["/apis"]
    async with _client(docs, []) as client:
        with pytest.raises(NotFound):
            await server_preferred_resources(client)
    docs["/apis"] = httpx.Response(200, content=b"[1, 2]")
    async with _client(docs, []) as client:
        with pytest.raises(DecodeError):
            await server_preferred_resources(client)


async def test_a_fresh_pass_each_call_sees_new_resources() -> None:
    docs = dict(DOCS)
    requests: list[str] = []
    async with _client(docs, requests) as client:
        before = await server_preferred_resources(client)
        docs["/apis/apps/v1"] = _list(
            "apps/v1", _resource("deployments", "Deployment"), _resource("statefulsets", "Kind")
        )
        after = await server_preferred_resources(client)
    assert "statefulsets" not in {r.plural for r in before.resources}
    assert "statefulsets" in {r.plural for r in after.resources}
    assert len(requests) == 2 * len(DOCS)
