"""The namespace controller against the embedded API server."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.namespace import CONDITION_TYPES, NamespaceController
from kcm.informers import SharedInformerFactory
from kcm.models import Unstructured, from_dict
from kcm.models.apiextensions_v1 import CustomResourceDefinition
from kcm.models.core_v1 import ConfigMap, Container, Namespace, NamespaceSpec, Pod, PodSpec
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, crd_manifest, eventually
from tests.integration.controllers.gc.gc_harness import gone, running

pytestmark = pytest.mark.anyio

SUCCESS = {
    "NamespaceDeletionDiscoveryFailure": "ResourcesDiscovered",
    "NamespaceDeletionGroupVersionParsingFailure": "ParsedGroupVersions",
    "NamespaceDeletionContentFailure": "ContentDeleted",
    "NamespaceContentRemaining": "ContentRemoved",
    "NamespaceFinalizersRemaining": "ContentHasNoFinalizers",
}


def make_ns(clock: Any = None) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> NamespaceController:
        kwargs: dict[str, Any] = {"clock": clock} if clock is not None else {}
        return NamespaceController(
            client, factory, recorder=FakeRecorder(), workers=2, deletion_grace=0.01, **kwargs
        )

    return build


async def ns_gone(client: ApiClient, name: str) -> bool:
    return await gone(client.api(Namespace), name)


def conditions(ns: Namespace) -> dict[str, tuple[str, str, str]]:
    return {
        c.type or "": (c.status or "", c.reason or "", c.message or "")
        for c in (ns.status.conditions if ns.status else None) or ()
    }


async def test_namespace_with_configmaps_pods_and_a_custom_resource_is_emptied_and_removed(
    api_server: ApiServer,
) -> None:
    async with running(api_server, make_ns()) as (client, _):
        await client.api(CustomResourceDefinition).create(
            from_dict(CustomResourceDefinition, crd_manifest(group="example.com", kind="Widget"))
        )
        info = await client.discover("example.com/v1", "Widget")
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="t")))
        cms = client.api(ConfigMap, "t")
        for i in range(2):
            await cms.create(ConfigMap(metadata=ObjectMeta(name=f"cm-{i}")))
        pods = client.api(Pod, "t")
        await pods.create(
            Pod(
                metadata=ObjectMeta(name="p"),
                spec=PodSpec(containers=[Container(name="c", image="busybox")]),
            )
        )
        widgets = client.api(Unstructured, resource=info, namespace="t")
        await widgets.create(
            Unstructured.from_dict(
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
            )
        )
        seen: list[dict[str, tuple[str, str, str]]] = []
        phases: list[str | None] = []
        rv = (await client.api(Namespace).get("t")).metadata.resource_version

        async def watch() -> None:
            async with client.api(Namespace).watch(
                resource_version=rv, field_selector="metadata.name=t"
            ) as events:
                async for event in events:
                    phases.append(event.object.status.phase if event.object.status else None)
                    seen.append(conditions(event.object))
                    if event.type == "DELETED":
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await client.api(Namespace).delete("t")

            async def deleted() -> bool:
                return await ns_gone(client, "t")

            await eventually(deleted)
        assert (await cms.list()).items == []
        assert (await pods.list()).items == []
        assert (await widgets.list()).items == []
        assert "Terminating" in phases
        final = [c for c in seen if c][-1]
        assert set(final) == set(CONDITION_TYPES)
        assert {t: v[:2] for t, v in final.items()} == {t: ("False", r) for t, r in SUCCESS.items()}


async def test_content_finalizers_hold_the_namespace_until_removed(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with running(api_server, make_ns(clock)) as (client, _):
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="t")))
        cms = client.api(ConfigMap, "t")
        await cms.create(ConfigMap(metadata=ObjectMeta(name="kept", finalizers=["example.com/x"])))
        await cms.create(ConfigMap(metadata=ObjectMeta(name="plain")))
        await client.api(Namespace).delete("t")
        await clock.advance(0.01)

        async def reported() -> bool:
            c = conditions(await client.api(Namespace).get("t"))
            return c.get("NamespaceFinalizersRemaining", ("",))[0] == "True"

        await eventually(reported)
        c = conditions(await client.api(Namespace).get("t"))
        assert c["NamespaceContentRemaining"] == (
            "True",
            "SomeResourcesRemain",
            "Some resources are remaining: configmaps. has 1 resource instances",
        )
        assert c["NamespaceFinalizersRemaining"] == (
            "True",
            "SomeFinalizersRemain",
            "Some content in the namespace has finalizers remaining: "
            "example.com/x in 1 resource instances",
        )
        assert c["NamespaceDeletionContentFailure"][0] == "False"
        assert [cm.metadata.name for cm in (await cms.list()).items] == ["kept"]
        await cms.patch("kept", {"metadata": {"finalizers": None}})
        assert not await ns_gone(client, "t")
        await clock.advance(15 / 2 + 1)  # the finalizer estimate's requeue

        async def deleted() -> bool:
            return await ns_gone(client, "t")

        await eventually(deleted)


async def test_terminating_pods_are_waited_for_with_their_grace_period(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    async with running(api_server, make_ns(clock)) as (client, _):
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="t")))
        pods = client.api(Pod, "t")
        await pods.create(
            Pod(
                metadata=ObjectMeta(name="bound"),
                spec=PodSpec(
                    node_name="n1",
                    termination_grace_period_seconds=30,
                    containers=[Container(name="c", image="busybox")],
                ),
            )
        )
        await client.api(Namespace).delete("t")
        await clock.advance(0.01)

        async def reported() -> bool:
            c = conditions(await client.api(Namespace).get("t"))
            return c.get("NamespaceContentRemaining", ("",))[0] == "True"

        await eventually(reported)
        c = conditions(await client.api(Namespace).get("t"))
        assert c["NamespaceContentRemaining"][2] == (
            "Some resources are remaining: pods. has 1 resource instances"
        )
        assert c["NamespaceFinalizersRemaining"][0] == "False"
        assert c["NamespaceDeletionContentFailure"][0] == "False"  # graceful, not an error
        assert (await pods.get("bound")).metadata.deletion_timestamp is not None
        await pods.delete("bound", grace_period_seconds=0)  # the kubelet's part
        await clock.advance(30 / 2 + 1)  # the pods' estimate

        async def deleted() -> bool:
            return await ns_gone(client, "t")

        await eventually(deleted)


async def test_only_the_kubernetes_finalizer_is_removed(api_server: ApiServer) -> None:
    async with running(api_server, make_ns()) as (client, _):
        await client.api(Namespace).create(
            Namespace(
                metadata=ObjectMeta(name="t"),
                spec=NamespaceSpec(finalizers=["kubernetes", "example.com/y"]),
            )
        )
        await client.api(ConfigMap, "t").create(ConfigMap(metadata=ObjectMeta(name="c")))
        await client.api(Namespace).delete("t")

        async def finalized() -> bool:
            ns = await client.api(Namespace).get("t")
            return (ns.spec.finalizers if ns.spec else None) == ("example.com/y",)

        await eventually(finalized)
        ns = await client.api(Namespace).get("t")
        assert ns.status
        assert ns.status.phase == "Terminating"
        assert (await client.api(ConfigMap, "t").list()).items == []


async def test_a_namespace_that_is_not_deleting_is_never_written(api_server: ApiServer) -> None:
    async with running(api_server, make_ns()) as (client, [controller]):
        created = await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="calm")))
        await client.api(ConfigMap, "calm").create(ConfigMap(metadata=ObjectMeta(name="c")))
        result = await controller.sync("calm")
        assert result.requeue_after is None
        assert not result.requeue
        assert await controller.sync("no-such-namespace") == result
        after = await client.api(Namespace).get("calm")
        assert after.metadata.resource_version == created.metadata.resource_version
        assert len((await client.api(ConfigMap, "calm").list()).items) == 1


async def test_deletion_waits_for_the_grace_delay(api_server: ApiServer) -> None:
    clock = FakeClock()

    def build(client: ApiClient, factory: SharedInformerFactory) -> NamespaceController:
        return NamespaceController(client, factory, recorder=FakeRecorder(), clock=clock)

    async with running(api_server, build) as (client, [controller]):
        queue = controller.controller.queue
        await client.api(Namespace).create(Namespace(metadata=ObjectMeta(name="t")))
        await client.api(Namespace).delete("t")

        async def delayed() -> bool:  # the informer saw the deletion at t=0
            return queue.waiting == 1

        await eventually(delayed)
        await clock.advance(4.9)
        assert (queue.waiting, len(queue)) == (1, 0)  # still held back: not synced yet
        ns = await client.api(Namespace).get("t")
        assert not conditions(ns)
        await clock.advance(0.1)

        async def deleted() -> bool:
            return await ns_gone(client, "t")

        await eventually(deleted)
