"""``/openapi/v2``: the generated definitions (self-consistent, as kubectl's parser requires),
served as JSON or gnostic protobuf as kube-openapi's handler serves them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from importlib import resources
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._protobuf import _fields

pytestmark = pytest.mark.anyio

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
DOCUMENT = json.loads(
    resources.files("kcm.apiserver._openapi").joinpath("v2.json").read_text(encoding="utf-8")
)


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=30) as client:
        yield client


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            yield schema["$ref"]
        for value in schema.values():
            yield from _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs(value)


def test_every_reference_resolves_and_kinds_carry_their_gvk() -> None:
    definitions = DOCUMENT["definitions"]
    dangling = {
        r for r in _refs(definitions) if r.removeprefix("#/definitions/") not in definitions
    }
    assert not dangling
    deployment = definitions["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    containers = definitions["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert containers["x-kubernetes-patch-strategy"] == "merge"
    # 1.24's required fields (Go: no omitempty, no +optional), not the newer package's
    assert definitions["io.k8s.api.apps.v1.DeploymentSpec"]["required"] == ["selector", "template"]
    assert "required" not in deployment
    limits = definitions["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {
        "$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"
    }


async def test_json_and_protobuf_as_accept_asks(http: httpx.AsyncClient) -> None:
    default = await http.get("/openapi/v2")
    assert default.headers["content-type"] == "text/plain; charset=utf-8"  # Go sniffs it so
    assert default.json()["definitions"].keys() == DOCUMENT["definitions"].keys()
    assert "Accept" in default.headers.get_list("vary")  # and Accept-Encoding: it came gzipped

    proto = await http.get("/openapi/v2", headers={"Accept": f"{PROTOBUF}, application/json"})
    assert proto.headers["content-type"] == "application/octet-stream"
    fields = {number: value for number, _wire, value in _fields(proto.content)}
    assert fields[1] == b"2.0"
    names = set()
    for number, _wire, named in _fields(fields[9]):
        assert number == 1
        names.add(bytes(dict((n, v) for n, _w, v in _fields(named))[1]).decode())
    assert names == DOCUMENT["definitions"].keys()

    preferred = await http.get(
        "/openapi/v2", headers={"Accept": f"application/json;q=0.5, {PROTOBUF}"}
    )
    assert preferred.headers["content-type"] == "application/octet-stream"
    assert (await http.get("/openapi/v2", headers={"Accept": "text/html"})).status_code == 406
    cached = await http.get("/openapi/v2", headers={"If-None-Match": default.headers["etag"]})
    assert cached.status_code == 304


async def test_there_is_no_openapi_v3(http: httpx.AsyncClient) -> None:
    """As in Kubernetes 1.24: kubectl then validates against v2 itself."""
    response = await http.get("/openapi/v3")
    assert (response.status_code, response.text) == (404, "404 page not found\n")
