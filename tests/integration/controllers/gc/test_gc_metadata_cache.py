"""The garbage collector's monitors are metadata-only over the wire, as kube-controller-manager's
graph builder (metadata informers): the server sends PartialObjectMetadata, the cache holds it."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.garbagecollector import GarbageCollectorController
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, PartialObjectMetadata
from kcm.models.core_v1 import ConfigMap
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeRecorder, eventually
from tests.integration.controllers.gc.gc_harness import owner_ref, running

pytestmark = pytest.mark.anyio


def make_gc(client: ApiClient, factory: SharedInformerFactory) -> GarbageCollectorController:
    return GarbageCollectorController(client, factory, recorder=FakeRecorder(), workers=1)


async def test_the_collectors_cache_holds_partial_object_metadata(api_server: ApiServer) -> None:
    async with running(api_server, make_gc) as (client, [collector]):
        cms = client.api(ConfigMap, "default")
        owner = await cms.create(ConfigMap(metadata=ObjectMeta(name="owner")))
        await cms.create(
            ConfigMap(
                metadata=ObjectMeta(name="dependent", owner_references=[owner_ref(owner)]),
                data={"big": "x" * 1000},
            )
        )
        informers = collector._factory.informers()  # the factory the collector was given
        [shared] = [i for k, i in informers.items() if k.resource == "v1/configmaps"]
        key = ObjectKey("default", "dependent")

        async def cached() -> bool:
            return shared.indexer.get(key) is not None

        await eventually(cached)
        obj = shared.indexer.get(key)
        assert type(obj) is PartialObjectMetadata
        # the server converted it: what a metadata list/watch sends, not a ConfigMap skimmed
        assert (obj.api_version, obj.kind) == ("meta.k8s.io/v1", "PartialObjectMetadata")
        assert list(obj.metadata.owner_references or ()) == [owner_ref(owner)]
        assert obj.metadata.managed_fields is None  # stripped, as before
