"""Empty ObjectMeta maps and lists are not stored, as Go's ``omitempty`` drops them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from kcm.apiserver import ApiServer

pytestmark = pytest.mark.anyio

CM = "/api/v1/namespaces/default/configmaps"


@pytest.fixture
async def http(api_server: ApiServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=api_server.url, timeout=10) as client:
        yield client


async def test_empty_labels_annotations_finalizers_are_dropped(http: httpx.AsyncClient) -> None:
    meta = {"name": "c", "labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []}
    created = (await http.post(CM, json={"metadata": meta})).json()
    assert not {"labels", "annotations", "finalizers", "ownerReferences"} & set(created["metadata"])
    await http.patch(
        f"{CM}/c",
        json={"metadata": {"labels": {"a": "1"}, "annotations": {"n": "x"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    patched = await http.patch(
        f"{CM}/c",
        json={"metadata": {"labels": {"a": None}, "annotations": {"n": None}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert "labels" not in patched.json()["metadata"]
    assert "annotations" not in patched.json()["metadata"]
