"""Tables of custom resources: apiextensions-apiserver's table convertor over the CRD
version's printer columns (client-go JSON paths, filters included)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.apiserver._jsonpath import find
from kcm.testing import crd_manifest

pytestmark = pytest.mark.anyio

TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


def test_json_paths() -> None:
    obj = {
        "status": {"conditions": [{"type": "A", "n": 1}, {"type": "Ready", "n": 2}]},
        "spec": {"l": [1, 2]},
    }
    assert find(obj, '.status.conditions[?(@.type=="Ready")].n') == [2]
    assert find(obj, ".status.conditions[?(@.n>1)].type") == ["Ready"]
    assert find(obj, ".status.conditions[?(@.missing)].type") == []
    assert find(obj, "{.spec.l[*]}") == [1, 2]
    assert find(obj, ".spec.l[-1]") == [2]
    assert find(obj, ".spec.nope.x") == []


async def test_printer_columns(http: httpx.AsyncClient) -> None:
    crd = crd_manifest(group="example.com", kind="Widget")
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Ready", "type": "string", "jsonPath": '.status.conds[?(@.type=="Ready")].s'},
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
    ]
    await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": {"size": "big"},  # not an integer: an empty cell
        "status": {"conds": [{"type": "Ready", "s": "True"}]},
    }
    await http.post(widgets, json=widget)
    table = (await http.get(widgets, headers=TABLE)).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Ready", "Size"]
    assert table["columnDefinitions"][2]["description"] == (
        "Custom resource definition column (in JSONPath format): .spec.size"
    )
    assert table["rows"][0]["cells"] == ["w", "True", None]
