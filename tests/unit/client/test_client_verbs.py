"""Every Api verb: method, URL, query, body and headers (httpx.MockTransport)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import jsonpatch
import msgspec
import pytest

from kcm.client import ApiClient, ClientConfig, PatchType
from kcm.client._api import _changed_parts_patch, _wire
from kcm.client._jsonpatch import json_patch
from kcm.models import (
    Container,
    Deployment,
    DeploymentSpec,
    Node,
    ObjectMeta,
    Pod,
    PodSpec,
    ResourceInfo,
    Unstructured,
    decode,
    encode,
)
from kcm.models.autoscaling_v1 import Scale, ScaleSpec
from kcm.models.meta_v1 import Status

pytestmark = pytest.mark.anyio

MakeClient = Callable[..., ApiClient]


def pod_json(name: str = "web", ns: str = "default", rv: str = "1", **extra: Any) -> dict[str, Any]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": rv},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        **extra,
    }


def a_pod(name: str = "web", ns: str | None = None, rv: str | None = None) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace=ns, resource_version=rv),
        spec=PodSpec(containers=[Container(name="c", image="nginx")]),
    )


def query(request: httpx.Request) -> dict[str, str]:
    return dict(request.url.params)


async def test_get_url_headers_and_decode(make_client: MakeClient, server: Any) -> None:
    server.add(200, pod_json())
    async with make_client(user_agent="ua/1") as client:
        pod = await client.api(Pod, namespace="default").get("web")
    assert isinstance(pod, Pod)
    assert pod.metadata.resource_version == "1"
    req = server.last
    assert req.method == "GET"
    assert str(req.url) == "https://k8s.test:6443/api/v1/namespaces/default/pods/web"
    assert req.headers["user-agent"] == "ua/1"
    assert req.headers["accept"] == "application/json"


async def test_namespace_resolution(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=pod_json())
    async with make_client(namespace="cfg-ns") as client:
        await client.api(Pod).get("a")  # config default
        await client.api(Pod, namespace="h").get("a")  # handle
        await client.api(Pod).create(a_pod(ns="obj"))  # object
        await client.api(Pod, namespace="h").create(a_pod())  # handle for an object without one
        with pytest.raises(ValueError, match="differs"):
            await client.api(Pod, namespace="h").create(a_pod(ns="other"))
        server.default = httpx.Response(200, json={"kind": "Node", "metadata": {"name": "n"}})
        await client.api(Node, namespace="ignored").get("n")  # cluster-scoped
    paths = [r.url.path for r in server.requests]
    assert paths == [
        "/api/v1/namespaces/cfg-ns/pods/a",
        "/api/v1/namespaces/h/pods/a",
        "/api/v1/namespaces/obj/pods",
        "/api/v1/namespaces/h/pods",
        "/api/v1/nodes/n",
    ]


async def test_list_query_and_all_namespaces(make_client: MakeClient, server: Any) -> None:
    server.add(
        200,
        {
            "kind": "PodList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "42", "continue": "tok2"},
            "items": [pod_json("a"), pod_json("b")],
        },
    )

    class Sel:
        def __str__(self) -> str:
            return "app in (web,api)"

    async with make_client() as client:
        page = await client.api(Pod).list(
            label_selector=Sel(),
            field_selector="spec.nodeName=n1",
            limit=2,
            continue_="tok1",
            resource_version="0",
            resource_version_match="NotOlderThan",
            timeout_seconds=30,
        )
    assert [p.metadata.name for p in page.items] == ["a", "b"]
    assert page.metadata.continue_ == "tok2"
    assert page.metadata.resource_version == "42"
    assert server.last.url.path == "/api/v1/pods"  # no namespace on the handle: all namespaces
    assert query(server.last) == {
        "labelSelector": "app in (web,api)",
        "fieldSelector": "spec.nodeName=n1",
        "limit": "2",
        "continue": "tok1",
        "resourceVersion": "0",
        "resourceVersionMatch": "NotOlderThan",
        "timeoutSeconds": "30",
    }


async def test_list_all_follows_continue(make_client: MakeClient, server: Any) -> None:
    server.add(200, {"metadata": {"continue": "c1"}, "items": [pod_json("a")]})
    server.add(200, {"metadata": {"continue": "c2"}, "items": [pod_json("b")]})
    server.add(200, {"metadata": {}, "items": [pod_json("c")]})
    async with make_client() as client:
        names = [
            p.metadata.name
            async for p in client.api(Pod, namespace="x").list_all(
                page_size=1, resource_version="0"
            )
        ]
    assert names == ["a", "b", "c"]
    qs = [query(r) for r in server.requests]
    assert qs[0] == {"limit": "1", "resourceVersion": "0"}
    assert qs[1] == {"limit": "1", "continue": "c1"}  # RV only on the first page
    assert qs[2] == {"limit": "1", "continue": "c2"}


async def test_create_replace_bodies(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=pod_json(rv="2"))
    async with make_client() as client:
        api = client.api(Pod, namespace="default")
        created = await api.create(a_pod(), dry_run=True, field_manager="me")
        await api.replace(a_pod(ns="default", rv="1"))
    assert created.metadata.resource_version == "2"
    post, put = server.requests
    assert post.method == "POST"
    assert post.url.path == "/api/v1/namespaces/default/pods"
    assert query(post) == {"dryRun": "All", "fieldManager": "me"}
    assert post.headers["content-type"] == "application/json"
    assert post.content == encode(a_pod())
    assert put.method == "PUT"
    assert put.url.path == "/api/v1/namespaces/default/pods/web"
    assert json.loads(put.content)["metadata"]["resourceVersion"] == "1"


async def test_update_sends_json_patch_with_rv_test(make_client: MakeClient, server: Any) -> None:
    server.add(200, pod_json(rv="8"))
    old = a_pod(ns="default", rv="7")
    new = msgspec.structs.replace(
        old,
        metadata=msgspec.structs.replace(old.metadata, labels={"a/b": "1"}),
        spec=PodSpec(containers=[Container(name="c", image="nginx:2")]),
    )
    async with make_client() as client:
        result = await client.api(Pod).update(old, new, field_manager="ctl")
    assert result.metadata.resource_version == "8"
    req = server.last
    assert req.method == "PATCH"
    assert req.url.path == "/api/v1/namespaces/default/pods/web"
    assert req.headers["content-type"] == "application/json-patch+json"
    assert query(req) == {"fieldManager": "ctl"}
    assert server.json() == [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "7"},
        {"op": "add", "path": "/metadata/labels", "value": {"a/b": "1"}},
        {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:2"},
    ]


async def test_update_without_changes_sends_nothing(make_client: MakeClient, server: Any) -> None:
    pod = a_pod(ns="default", rv="7")
    async with make_client() as client:
        assert await client.api(Pod).update(pod, pod) is pod
    assert server.requests == []


async def test_update_keeps_fields_the_model_does_not_know(
    make_client: MakeClient, server: Any
) -> None:
    """The server has a field the model drops; after update() the server still has it."""
    stored = pod_json(rv="3", futureTopLevel={"x": 1})
    stored["spec"]["futureSpecField"] = "keep me"
    stored["spec"]["containers"][0]["futureContainerField"] = True

    def handle(request: httpx.Request) -> httpx.Response:
        nonlocal stored
        if request.method == "GET":
            return httpx.Response(200, json=stored)
        assert request.method == "PATCH"
        patched = jsonpatch.apply_patch(stored, json.loads(request.content))
        patched["metadata"]["resourceVersion"] = "4"
        stored = patched
        return httpx.Response(200, json=stored)

    server.default = handle
    async with make_client() as client:
        api = client.api(Pod, namespace="default")
        old = await api.get("web")
        assert "futureSpecField" not in encode(old).decode()  # the model really drops it
        new = msgspec.structs.replace(
            old, spec=msgspec.structs.replace(old.spec, node_name="node-1")
        )
        await api.update(old, new)
    assert stored["spec"]["nodeName"] == "node-1"
    assert stored["spec"]["futureSpecField"] == "keep me"
    assert stored["spec"]["containers"][0]["futureContainerField"] is True
    assert stored["futureTopLevel"] == {"x": 1}


@pytest.mark.parametrize(
    ("patch_type", "content_type"),
    [
        (PatchType.MERGE, "application/merge-patch+json"),
        (PatchType.JSON, "application/json-patch+json"),
        (PatchType.STRATEGIC, "application/strategic-merge-patch+json"),
        (PatchType.APPLY, "application/apply-patch+yaml"),
    ],
)
async def test_patch_types(
    make_client: MakeClient, server: Any, patch_type: PatchType, content_type: str
) -> None:
    server.add(200, pod_json())
    body: Any = [{"op": "add", "path": "/x", "value": 1}] if patch_type is PatchType.JSON else {}
    async with make_client() as client:
        await client.api(Pod, namespace="ns").patch(
            "web", body, patch_type=patch_type, field_manager="fm", force=True, dry_run=True
        )
    req = server.last
    assert req.method == "PATCH"
    assert req.headers["content-type"] == content_type
    assert query(req) == {"dryRun": "All", "fieldManager": "fm", "force": "true"}
    assert json.loads(req.content) == body


async def test_apply_body(make_client: MakeClient, server: Any) -> None:
    server.add(200, pod_json())
    pod = a_pod(ns="ns")
    pod = msgspec.structs.replace(
        pod,
        metadata=msgspec.structs.replace(pod.metadata, managed_fields=[]),
    )
    async with make_client() as client:
        await client.api(Pod).apply(pod, field_manager="ctl", force=True)
    req = server.last
    assert req.url.path == "/api/v1/namespaces/ns/pods/web"
    assert req.headers["content-type"] == "application/apply-patch+yaml"
    assert query(req) == {"fieldManager": "ctl", "force": "true"}
    body = server.json()
    assert body["apiVersion"] == "v1"
    assert body["kind"] == "Pod"
    assert "managedFields" not in body["metadata"]


async def test_delete_options_and_result(make_client: MakeClient, server: Any) -> None:
    server.add(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})
    server.add(200, pod_json(metadata_extra=None))
    async with make_client() as client:
        api = client.api(Pod, namespace="ns")
        gone = await api.delete(
            "web",
            propagation_policy="Foreground",
            preconditions={"uid": "u1", "resourceVersion": "5"},
            grace_period_seconds=0,
            dry_run=True,
        )
        pending = await api.delete("web")
    assert isinstance(gone, Status)
    assert gone.status == "Success"
    assert isinstance(pending, Pod)
    first = server.requests[0]
    assert first.method == "DELETE"
    assert first.url.path == "/api/v1/namespaces/ns/pods/web"
    assert json.loads(first.content) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Foreground",
        "gracePeriodSeconds": 0,
        "dryRun": ["All"],
        "preconditions": {"uid": "u1", "resourceVersion": "5"},
    }
    assert json.loads(server.requests[1].content) == {"kind": "DeleteOptions", "apiVersion": "v1"}


async def test_delete_collection(make_client: MakeClient, server: Any) -> None:
    server.add(200, {"kind": "PodList", "metadata": {}, "items": [pod_json("a")]})
    async with make_client(namespace="dflt") as client:
        result = await client.api(Pod).delete_collection(
            label_selector="app=web", propagation_policy="Background"
        )
    assert not isinstance(result, Status)
    assert [p.metadata.name for p in result.items] == ["a"]
    req = server.last
    assert (req.method, req.url.path) == ("DELETE", "/api/v1/namespaces/dflt/pods")
    assert query(req) == {"labelSelector": "app=web"}
    assert json.loads(req.content)["propagationPolicy"] == "Background"


async def test_status_subresource(make_client: MakeClient, server: Any) -> None:
    server.default = httpx.Response(200, json=pod_json())
    async with make_client() as client:
        api = client.api(Pod, namespace="ns")
        await api.get_status("web")
        await api.replace_status(a_pod(rv="3"))
        await api.patch_status("web", {"status": {"phase": "Running"}})
    assert [(r.method, r.url.path) for r in server.requests] == [
        ("GET", "/api/v1/namespaces/ns/pods/web/status"),
        ("PUT", "/api/v1/namespaces/ns/pods/web/status"),
        ("PATCH", "/api/v1/namespaces/ns/pods/web/status"),
    ]
    assert server.json(2) == {"status": {"phase": "Running"}}
    assert server.requests[2].headers["content-type"] == "application/merge-patch+json"


async def test_scale_subresource(make_client: MakeClient, server: Any) -> None:
    scale_json = {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "d", "namespace": "ns"},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=d"},
    }
    server.default = httpx.Response(200, json=scale_json)
    async with make_client() as client:
        api = client.api(Deployment, namespace="ns")
        scale = await api.get_scale("d")
        await api.replace_scale(
            "d", Scale(metadata=ObjectMeta(name="d"), spec=ScaleSpec(replicas=5))
        )
        await api.patch_scale("d", {"spec": {"replicas": 4}})
    assert scale.spec == ScaleSpec(replicas=3)
    assert scale.status is not None
    assert scale.status.selector == "app=d"
    assert [(r.method, r.url.path) for r in server.requests] == [
        ("GET", "/apis/apps/v1/namespaces/ns/deployments/d/scale"),
        ("PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale"),
        ("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale"),
    ]
    put_body = server.json(1)
    assert (put_body["apiVersion"], put_body["kind"]) == ("autoscaling/v1", "Scale")
    assert put_body["spec"] == {"replicas": 5}
    assert server.json(2) == {"spec": {"replicas": 4}}


async def test_unstructured_with_resource_info(make_client: MakeClient, server: Any) -> None:
    info = ResourceInfo(
        group="example.com", version="v1", kind="Widget", plural="widgets", namespaced=True
    )
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {"size": 3},
    }
    server.default = httpx.Response(200, json=widget)
    async with make_client() as client:
        api = client.api(Unstructured, resource=info, namespace="ns")
        got = await api.get("w")
        await api.create(Unstructured.from_dict(widget))
    assert got["spec"]["size"] == 3
    assert got.metadata.name == "w"
    assert server.requests[0].url.path == "/apis/example.com/v1/namespaces/ns/widgets/w"
    assert server.requests[1].url.path == "/apis/example.com/v1/namespaces/ns/widgets"
    assert server.json(1) == widget


async def test_model_without_resource_info_needs_resource(make_client: MakeClient) -> None:
    async with make_client() as client:
        with pytest.raises(ValueError, match="resource="):
            client.api(Container)
        assert client.api(Deployment).resource.plural == "deployments"
        assert DeploymentSpec is not None


async def test_raw_request(make_client: MakeClient, server: Any) -> None:
    server.add(200, {"major": "1", "minor": "32"})
    async with make_client() as client:
        response = await client.request("GET", "/version", params={"a": "b"})
    assert response.json()["minor"] == "32"
    assert str(server.last.url) == "https://k8s.test:6443/version?a=b"


async def test_client_outside_context_manager_fails_clearly(make_client: MakeClient) -> None:
    client = make_client()
    with pytest.raises(RuntimeError, match="async with"):
        await client.request("GET", "/version")


def _deployment() -> Deployment:
    return decode(
        Deployment,
        b'{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns",'
        b'"resourceVersion":"7","annotations":{"a":"1"},"labels":{"app":"web"}},'
        b'"spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":'
        b'{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}},'
        b'"status":{"replicas":1,"observedGeneration":3,"conditions":[{"type":"Available",'
        b'"status":"False","reason":"MinimumReplicasUnavailable"}]}}',
    )


_OLD = _deployment()


def _changes() -> list[tuple[str, Any]]:
    d = _OLD
    replace = msgspec.structs.replace
    status = replace(d.status, replicas=2, ready_replicas=2, conditions=())
    meta = replace(d.metadata, annotations={"a": "2", "b": "3"})
    spec = replace(d.spec, replicas=3)
    return [
        ("status", replace(d, status=status)),
        ("metadata", replace(d, metadata=meta)),
        ("metadata and spec", replace(d, metadata=meta, spec=spec)),
        ("status removed", replace(d, status=None)),  # a part gone: the whole diff
        ("rebuilt equal", decode(type(d), encode(d))),  # nothing identical, nothing changed
        ("unchanged", d),
    ]


@pytest.mark.parametrize(("what", "new"), _changes(), ids=[w for w, _ in _changes()])
def test_the_patch_of_changed_parts_is_the_whole_diff(what: str, new: Any) -> None:
    old = _OLD
    api = ApiClient(ClientConfig(server="https://k8s.example")).api(type(old), "ns")
    whole = json_patch(_wire(old), _wire(new))
    whole.insert(0, {"op": "replace", "path": "/metadata/resourceVersion", "value": "7"})
    assert api.update_patch(old, new) == whole
    shortcut = _changed_parts_patch(old, new)
    if what in ("status", "metadata", "metadata and spec", "unchanged"):
        assert shortcut == whole[1:]  # computed on the changed parts only
    else:
        assert shortcut is None  # a part came or went, or none is identical: the whole diff
