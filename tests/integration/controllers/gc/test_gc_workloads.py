"""Cascading deletion of a Deployment -> ReplicaSet -> Pods chain (no workload controllers)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from gc_harness import eventually, owner_ref, running

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.garbagecollector import GarbageCollectorController
from kcm.informers import SharedInformerFactory
from kcm.models.apps_v1 import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.testing import FakeRecorder

pytestmark = pytest.mark.anyio

LABELS = {"app": "web"}
TEMPLATE = PodTemplateSpec(
    metadata=ObjectMeta(labels=LABELS),
    spec=PodSpec(containers=[Container(name="c", image="busybox")]),
)


def build_gc(client: ApiClient, factory: SharedInformerFactory) -> GarbageCollectorController:
    return GarbageCollectorController(client, factory, recorder=FakeRecorder(), workers=4)


async def make_chain(client: ApiClient, pods: int) -> None:
    deployment = await client.api(Deployment, "default").create(
        Deployment(
            metadata=ObjectMeta(name="web"),
            spec=DeploymentSpec(
                replicas=pods, selector=LabelSelector(match_labels=LABELS), template=TEMPLATE
            ),
        )
    )
    rs = await client.api(ReplicaSet, "default").create(
        ReplicaSet(
            metadata=ObjectMeta(
                name="web-1",
                labels=LABELS,
                owner_references=[owner_ref(deployment, block=True, controller=True)],
            ),
            spec=ReplicaSetSpec(
                replicas=pods, selector=LabelSelector(match_labels=LABELS), template=TEMPLATE
            ),
        )
    )
    for i in range(pods):
        await client.api(Pod, "default").create(
            Pod(
                metadata=ObjectMeta(
                    name=f"web-1-{i}",
                    labels=LABELS,
                    owner_references=[owner_ref(rs, block=True, controller=True)],
                ),
                spec=TEMPLATE.spec,
            )
        )


async def record_deletions(client: ApiClient, order: list[str], done: anyio.Event) -> None:
    async def watch(api: Any, kind: str) -> None:
        rv = (await api.list()).metadata.resource_version
        async with api.watch(resource_version=rv) as events:
            async for event in events:
                if event.type == "DELETED":
                    order.append(kind)
                    if kind == "Deployment":
                        done.set()

    async with anyio.create_task_group() as tg:
        for model in (Deployment, ReplicaSet, Pod):
            tg.start_soon(watch, client.api(model, "default"), model.__name__)


async def test_foreground_deployment_deletion_removes_pods_then_replicaset_then_deployment(
    api_server: ApiServer,
) -> None:
    async with running(api_server, build_gc) as (client, _):
        await make_chain(client, 3)
        order: list[str] = []
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            watches = api_server.store.watch_count
            tg.start_soon(record_deletions, client, order, done)
            with anyio.fail_after(5):
                await api_server.wait_for_watches(watches + 3)
            await client.api(Deployment, "default").delete("web", propagation_policy="Foreground")
            with anyio.fail_after(10):
                await done.wait()
            tg.cancel_scope.cancel()
        assert order == ["Pod", "Pod", "Pod", "ReplicaSet", "Deployment"]


async def test_background_deployment_deletion_cascades_to_every_pod(api_server: ApiServer) -> None:
    async with running(api_server, build_gc) as (client, _):
        await make_chain(client, 5)
        await client.api(Deployment, "default").delete("web")

        async def all_gone() -> bool:
            rs = (await client.api(ReplicaSet, "default").list()).items
            pods = (await client.api(Pod, "default").list()).items
            return not rs and not pods

        await eventually(all_gone)
