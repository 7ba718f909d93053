"""Content negotiation (``as=PartialObjectMetadata[List]``, ``as=Table``, the 406s) and gzip
response compression, as kube-apiserver 1.24 (the conformance suite compares the wire forms;
these pin the logic and the kinds it does not record)."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._compression import THRESHOLD, accepts_gzip, gzip_body
from kcm.apiserver._negotiation import Conversion, go_type, negotiate
from kcm.apiserver._registry import Registry
from kcm.apiserver._status import StatusError
from kcm.testing import crd_manifest

ONE = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
CMS = "/api/v1/namespaces/default/configmaps"


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("", None),
        ("application/json", None),
        ("*/*", None),
        ("application/vnd.kubernetes.protobuf, */*", None),
        (LIST, Conversion("PartialObjectMetadataList", "v1")),
        (LIST.replace("v=v1", "v=v1beta1"), Conversion("PartialObjectMetadataList", "v1beta1")),
        (f"{ONE}, application/json", Conversion("PartialObjectMetadata", "v1")),
        ("application/json;as=Table;v=v1;g=meta.k8s.io", Conversion("Table", "v1")),
        # the client-go metadata client's header: protobuf first, then JSON, then plain
        (
            f"{ONE.replace('json', 'vnd.kubernetes.protobuf')},{ONE},application/json",
            Conversion("PartialObjectMetadata", "v1"),
        ),
        # Table is JSON and YAML only; an unknown conversion falls back to the next range
        ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io, application/json", None),
        ("application/json;as=Foo;g=meta.k8s.io;v=v1, application/json", None),
        # quality orders the ranges
        (f"application/json;q=0.5, {LIST}", Conversion("PartialObjectMetadataList", "v1")),
        ("application/json;stream=watch", None),
    ],
)
def test_negotiate(accept: str, expected: Conversion | None) -> None:
    assert negotiate(accept) == expected


@pytest.mark.parametrize(
    "accept",
    [
        "text/html",
        "application/json;as=Foo;g=meta.k8s.io;v=v1",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v2",
        "application/json;as=PartialObjectMetadataList;g=apps;v=v1",
        "application/json;v=v1",
        "application/yaml;stream=watch",
        "application/json;q=0",
    ],
)
def test_not_acceptable(accept: str) -> None:
    with pytest.raises(StatusError) as caught:
        negotiate(accept)
    assert caught.value.code == 406
    assert caught.value.to_status()["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf"
    )


def test_go_type_names() -> None:
    registry = Registry()
    deployments = registry.lookup("apps", "v1", "deployments")
    events = registry.lookup("events.k8s.io", "v1", "events")
    bindings = registry.lookup("rbac.authorization.k8s.io", "v1", "rolebindings")
    assert deployments is not None
    assert events is not None
    assert bindings is not None
    assert go_type(deployments, as_list=True) == "*apps.DeploymentList"
    assert go_type(events, as_list=False) == "*core.Event"
    assert go_type(bindings, as_list=False) == "*rbac.RoleBinding"


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip", True),
        ("gzip, deflate", True),
        ("br,gzip", True),
        ("gzip;q=0.5", False),
        ("", False),
        ("identity", False),
    ],
)
def test_accepts_gzip(header: str, expected: bool) -> None:
    assert accepts_gzip(header) is expected


def test_gzip_body_round_trips() -> None:
    body = b'{"items":[' + b'{"a":1},' * 1000 + b"{}]}"
    packed = gzip_body(body)
    assert packed[:2] == b"\x1f\x8b"
    assert gzip.decompress(packed) == body


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


@pytest.mark.anyio
async def test_custom_resources_as_metadata(http: httpx.AsyncClient) -> None:
    """A custom resource's metadata list (the CRD's kind never appears), and the 406 names
    the unstructured type."""
    crd = crd_manifest(group="example.com", kind="Gadget")
    assert (
        await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    ).status_code == 201
    path = "/apis/example.com/v1/namespaces/default/gadgets"
    body = {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": "g"},
        "spec": {"x": 1},
    }
    assert (await http.post(path, json=body)).status_code == 201
    listed = (await http.get(path, headers={"Accept": LIST})).json()
    assert listed["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["g"]
    assert set(listed["items"][0]) == {"kind", "apiVersion", "metadata"}
    refused = await http.get(path, headers={"Accept": ONE})
    assert refused.status_code == 406
    assert refused.json()["message"].endswith("(*unstructured.UnstructuredList)")


@pytest.mark.anyio
async def test_big_responses_are_gzipped(http: httpx.AsyncClient) -> None:
    """Over the threshold and asked for: gzipped; the same body not asked for, or a watch of
    it, is not."""
    big = {"metadata": {"name": "big"}, "data": {"k": "x" * THRESHOLD}}
    assert (await http.post(CMS, json=big)).status_code == 201
    asked = await http.get(f"{CMS}/big", headers={"Accept-Encoding": "gzip"})
    assert asked.headers["content-encoding"] == "gzip"
    assert asked.headers["vary"] == "Accept-Encoding"
    assert int(asked.headers["content-length"]) < 10_000 < THRESHOLD
    assert asked.json()["data"]["k"] == "x" * THRESHOLD
    plain = await http.get(f"{CMS}/big", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    query = {"watch": "1", "resourceVersion": "0"}
    async with http.stream("GET", CMS, params=query, headers={"Accept-Encoding": "gzip"}) as watch:
        assert watch.status_code == 200
        assert "content-encoding" not in watch.headers  # the body is never read: no event waits
