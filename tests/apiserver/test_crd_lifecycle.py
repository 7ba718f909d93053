"""What apiextensions-apiserver's CRD controllers do (run inline here): accepting names,
establishing, name conflicts and their release, and the deletion lifecycle."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from kcm.apiserver import ApiServer
from kcm.testing import crd_manifest

pytestmark = pytest.mark.anyio

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


def _conditions(crd: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in crd["status"]["conditions"] or ()}


async def test_a_kind_conflict_is_released_when_the_other_crd_goes(
    http: httpx.AsyncClient,
) -> None:
    first = crd_manifest(group="example.com", kind="Widget")
    second = crd_manifest(group="example.com", kind="Widget", plural="gadgets")
    second["spec"]["names"].update(singular="gadget", listKind="GadgetList")
    assert (await http.post(CRDS, json=first)).status_code == 201
    assert (await http.post(CRDS, json=second)).status_code == 201
    got = (await http.get(f"{CRDS}/gadgets.example.com")).json()
    assert _conditions(got) == {
        "NamesAccepted": ("False", "KindConflict"),
        "Established": ("False", "NotAccepted"),
    }
    assert got["status"]["acceptedNames"] == {
        "plural": "gadgets",
        "singular": "gadget",
        "kind": "",
        "listKind": "GadgetList",
    }
    gadgets = "/apis/example.com/v1/namespaces/default/gadgets"
    assert (await http.get(gadgets)).status_code == 404  # not served

    await http.delete(f"{CRDS}/widgets.example.com")
    assert (await http.get(f"{CRDS}/widgets.example.com")).status_code == 404
    got = (await http.get(f"{CRDS}/gadgets.example.com")).json()
    assert _conditions(got) == {
        "NamesAccepted": ("True", "NoConflicts"),
        "Established": ("True", "InitialNamesAccepted"),
    }
    assert (await http.get(gadgets)).status_code == 200


async def test_deletion_waits_for_the_objects_finalizers(http: httpx.AsyncClient) -> None:
    crd = crd_manifest(group="example.com", kind="Widget")
    assert (await http.post(CRDS, json=crd)).status_code == 201
    widgets = "/apis/example.com/v1/namespaces/default/widgets"
    held = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
    }
    free = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "free"}}
    assert (await http.post(widgets, json=held)).status_code == 201
    assert (await http.post(widgets, json=free)).status_code == 201

    deleted = (await http.delete(f"{CRDS}/widgets.example.com")).json()
    assert deleted["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    got = (await http.get(f"{CRDS}/widgets.example.com")).json()
    assert _conditions(got)["Terminating"] == ("True", "InstanceDeletionInProgress")
    assert (await http.get(f"{widgets}/free")).status_code == 404
    assert (await http.get(f"{widgets}/held")).json()["metadata"]["deletionTimestamp"]
    refused = await http.post(widgets, json={**free, "metadata": {"name": "new"}})
    assert refused.status_code == 405
    assert refused.json()["message"] == (
        "create not allowed while custom resource definition is terminating"
    )

    patch = {"metadata": {"finalizers": None}}
    headers = {"content-type": "application/merge-patch+json"}
    assert (await http.patch(f"{widgets}/held", json=patch, headers=headers)).status_code == 200
    assert (await http.get(f"{CRDS}/widgets.example.com")).status_code == 404
    assert (await http.get(widgets)).status_code == 404
