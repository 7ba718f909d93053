"""How the namespace controller empties a namespace: one ``deletecollection`` per resource that
discovery says supports it, a list and one delete per item only for the others (kube's
``NamespacedResourcesDeleter``: ``deleteCollection``, then ``deleteEachItem``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import httpx
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.namespace import NamespaceController
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import ConfigMap, Namespace, Secret
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeRecorder, client_config_for, eventually
from tests.integration.controllers.gc.gc_harness import gone

pytestmark = pytest.mark.anyio


@dataclass
class DeleteTap(httpx.AsyncBaseTransport):
    """Logs DELETE paths; can drop a verb from ``/api/v1`` discovery or answer collection
    deletes of a resource with 405."""

    inner: httpx.AsyncBaseTransport = field(default_factory=httpx.AsyncHTTPTransport)
    deletes: list[str] = field(default_factory=list)
    no_deletecollection: set[str] = field(default_factory=set)
    """Resources whose discovery entry loses ``deletecollection``."""
    refuse_collection: set[str] = field(default_factory=set)
    """Resources whose collection DELETE is answered 405 MethodNotAllowed."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if request.method == "DELETE":
            self.deletes.append(path)
            if path.rsplit("/", 1)[-1] in self.refuse_collection:
                return httpx.Response(
                    405,
                    json={
                        "kind": "Status",
                        "apiVersion": "v1",
                        "status": "Failure",
                        "reason": "MethodNotAllowed",
                        "code": 405,
                    },
                )
        response = await self.inner.handle_async_request(request)
        if request.method == "GET" and path == "/api/v1" and self.no_deletecollection:
            doc = json.loads(await response.aread())
            for resource in doc.get("resources", []):
                if resource.get("name") in self.no_deletecollection:
                    resource["verbs"] = [v for v in resource["verbs"] if v != "deletecollection"]
            return httpx.Response(response.status_code, json=doc)
        return response

    def of(self, resource: str) -> list[str]:
        """The DELETE paths under ``/namespaces/t/<resource>``."""
        prefix = f"/api/v1/namespaces/t/{resource}"
        return [p for p in self.deletes if p == prefix or p.startswith(prefix + "/")]

    async def aclose(self) -> None:
        await self.inner.aclose()


@asynccontextmanager
async def namespace_controller(server: ApiServer, tap: DeleteTap) -> AsyncIterator[ApiClient]:
    config = msgspec.structs.replace(client_config_for(server), qps=-1)
    async with ApiClient(config, transport=tap) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        controller = NamespaceController(
            client, factory, recorder=FakeRecorder(), workers=2, deletion_grace=0.01
        )
        await tg.start(factory.run)
        await tg.start(controller.run)
        yield client
        tg.cancel_scope.cancel()


async def fill_and_delete(client: ApiClient) -> None:
    await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="t")))
    for i in range(4):
        await client.api(ConfigMap, "t").create(ConfigMap(metadata=ObjectMeta(name=f"c{i}")))
        await client.api(Secret, "t").create(Secret(metadata=ObjectMeta(name=f"s{i}")))
    await client.api(Namespace).delete("t")

    async def deleted() -> bool:
        return await gone(client.api(Namespace), "t")

    await eventually(deleted)


async def test_one_collection_delete_per_resource(api_server: ApiServer) -> None:
    tap = DeleteTap()
    async with namespace_controller(api_server, tap) as client:
        await fill_and_delete(client)
    assert tap.of("configmaps") == ["/api/v1/namespaces/t/configmaps"]
    assert tap.of("secrets") == ["/api/v1/namespaces/t/secrets"]


async def test_without_the_verb_or_when_refused_each_item_is_deleted(
    api_server: ApiServer,
) -> None:
    tap = DeleteTap(no_deletecollection={"configmaps"}, refuse_collection={"secrets"})
    async with namespace_controller(api_server, tap) as client:
        await fill_and_delete(client)
    assert sorted(tap.of("configmaps")) == [
        f"/api/v1/namespaces/t/configmaps/c{i}" for i in range(4)
    ]
    assert tap.of("secrets")[0] == "/api/v1/namespaces/t/secrets"  # tried, 405
    assert sorted(tap.of("secrets")[1:]) == [f"/api/v1/namespaces/t/secrets/s{i}" for i in range(4)]
