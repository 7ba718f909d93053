"""Garbage collector edge cases: CRD owners found by rediscovery, namespace rules."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.garbagecollector import GarbageCollectorController
from kcm.informers import SharedInformerFactory
from kcm.models import Unstructured, from_dict
from kcm.models.apiextensions_v1 import CustomResourceDefinition
from kcm.models.core_v1 import ConfigMap, Namespace
from kcm.models.meta_v1 import ObjectMeta
from kcm.models.rbac_v1 import ClusterRole
from kcm.testing import FakeRecorder, crd_manifest, eventually
from tests.integration.controllers.gc.gc_harness import gone, owner_ref, running

pytestmark = pytest.mark.anyio


def make_gc(recorder: FakeRecorder) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> GarbageCollectorController:
        # a long period: rediscovery in these tests can only come from the CRD trigger
        return GarbageCollectorController(
            client, factory, recorder=recorder, workers=4, resync_period=3600
        )

    return build


async def test_crd_created_later_is_monitored_and_its_instances_cascade(
    api_server: ApiServer,
) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, [gc]):
        assert "widgets" not in [r.plural for r in gc.monitored]
        crd = crd_manifest(group="example.com", kind="Widget")
        await client.api(CustomResourceDefinition).create(from_dict(CustomResourceDefinition, crd))

        async def monitored() -> bool:
            return "widgets" in [r.plural for r in gc.monitored]

        await eventually(monitored)
        info = await client.discover("example.com/v1", "Widget")
        widgets = client.api(Unstructured, resource=info, namespace="default")
        widget = await widgets.create(
            Unstructured.from_dict(
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Widget",
                    "metadata": {"name": "w"},
                    "spec": {"size": 1},
                }
            )
        )
        cms = client.api(ConfigMap, "default")
        for i in range(2):
            await cms.create(
                ConfigMap(metadata=ObjectMeta(name=f"w-{i}", owner_references=[owner_ref(widget)]))
            )
        # a ConfigMap owning a custom resource: the other direction
        holder = await cms.create(ConfigMap(metadata=ObjectMeta(name="holder")))
        await widgets.create(
            Unstructured.from_dict(
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Widget",
                    "metadata": {
                        "name": "owned",
                        "ownerReferences": [
                            {
                                "apiVersion": "v1",
                                "kind": "ConfigMap",
                                "name": "holder",
                                "uid": holder.metadata.uid,
                            }
                        ],
                    },
                }
            )
        )
        await widgets.delete("w")
        await cms.delete("holder")

        async def cascaded() -> bool:
            return (
                await gone(cms, "w-0") and await gone(cms, "w-1") and await gone(widgets, "owned")
            )

        await eventually(cascaded)


async def test_a_deleted_crd_stops_its_monitor(api_server: ApiServer) -> None:
    async with running(api_server, make_gc(FakeRecorder())) as (client, [gc]):
        crds = client.api(CustomResourceDefinition)
        crd = crd_manifest(group="example.com", kind="Gadget")
        await crds.create(from_dict(CustomResourceDefinition, crd))

        async def monitored() -> bool:
            return "gadgets" in [r.plural for r in gc.monitored]

        await eventually(monitored)
        passes = gc.discoveries
        await crds.delete("gadgets.example.com")

        async def unmonitored() -> bool:
            return gc.discoveries > passes and not await monitored()

        await eventually(unmonitored)


async def test_owner_in_another_namespace_counts_as_absent(api_server: ApiServer) -> None:
    recorder = FakeRecorder()
    async with running(api_server, make_gc(recorder)) as (client, _):
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="team-a")))
        owner = await client.api(ConfigMap, "team-a").create(
            ConfigMap(metadata=ObjectMeta(name="owner"))
        )
        cms = client.api(ConfigMap, "default")
        await cms.create(
            ConfigMap(metadata=ObjectMeta(name="misplaced", owner_references=[owner_ref(owner)]))
        )

        async def collected() -> bool:
            return await gone(cms, "misplaced")

        await eventually(collected)
        assert await client.api(ConfigMap, "team-a").get("owner")
        assert any(e.startswith("Warning OwnerRefInvalidNamespace") for e in recorder.events)
        assert any(o.metadata.name == "misplaced" for o in recorder.objects)


async def test_cluster_scoped_dependent_of_namespaced_owner_is_kept(
    api_server: ApiServer,
) -> None:
    recorder = FakeRecorder()
    async with running(api_server, make_gc(recorder)) as (client, _):
        cms = client.api(ConfigMap, "default")
        owner = await cms.create(ConfigMap(metadata=ObjectMeta(name="owner")))
        roles = client.api(ClusterRole)
        await roles.create(
            ClusterRole(metadata=ObjectMeta(name="role", owner_references=[owner_ref(owner)]))
        )
        await cms.delete("owner")

        async def warned_after_delete() -> bool:
            return any("cluster-scoped object cannot have" in e for e in recorder.events)

        await eventually(warned_after_delete)
        assert (await roles.get("role")).metadata.owner_references
