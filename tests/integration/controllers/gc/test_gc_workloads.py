"""Cascading deletion of a Deployment -> ReplicaSet -> Pods chain; the collector next to a
workload controller on one informer factory."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.garbagecollector import GarbageCollectorController
from kcm.controllers.replicaset import ReplicaSetController
from kcm.informers import SharedInformerFactory
from kcm.models import PartialObjectMetadata
from kcm.models.apps_v1 import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import Container, Pod, PodSpec, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.testing import FakeRecorder, client_config_for, eventually
from tests.integration.controllers.gc.gc_harness import owner_ref, running

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


class _CountingTransport(httpx.AsyncBaseTransport):
    """Counts list and watch requests per collection path."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.lists: Counter[str] = Counter()
        self.watches: Counter[str] = Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            target = self.watches if request.url.params.get("watch") else self.lists
            target[request.url.path] += 1
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_monitors_share_the_factory_caches_with_other_controllers(
    api_server: ApiServer,
) -> None:
    """Run next to the ReplicaSet controller, the collector's pod and ReplicaSet monitors are
    the factory's typed informers (one list and one watch of pods, not two); other built-in
    kinds get the factory's metadata informers; the cascade still works through them."""
    tap = _CountingTransport()
    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config, transport=tap) as client, anyio.create_task_group() as tg:
        factory = SharedInformerFactory(client)
        rs_controller = ReplicaSetController(client, factory, recorder=FakeRecorder())
        gc = build_gc(client, factory)
        await tg.start(factory.run)
        await tg.start(rs_controller.run)
        await tg.start(gc.run)
        keys = factory.informers()
        by_resource = Counter(k.resource for k in keys)
        assert by_resource["v1/pods"] == by_resource["apps/v1/replicasets"] == 1
        models = {k.resource: k.model for k in keys}
        assert models["v1/pods"] is Pod
        assert models["apps/v1/replicasets"] is ReplicaSet
        assert models["v1/configmaps"] is PartialObjectMetadata  # the collector's, shared
        assert tap.lists["/api/v1/pods"] == tap.watches["/api/v1/pods"] == 1
        assert tap.lists["/apis/apps/v1/replicasets"] == 1

        rs = await client.api(ReplicaSet, "default").create(
            ReplicaSet(
                metadata=ObjectMeta(name="web", labels=LABELS),
                spec=ReplicaSetSpec(
                    replicas=3, selector=LabelSelector(match_labels=LABELS), template=TEMPLATE
                ),
            )
        )
        pods = client.api(Pod, "default")

        async def created() -> bool:
            return len((await pods.list()).items) == 3

        await eventually(created)
        await client.api(ReplicaSet, "default").delete("web", propagation_policy="Background")

        async def cascaded() -> bool:
            return not (await pods.list()).items

        await eventually(cascaded)
        assert rs.metadata.uid not in {
            r.uid for p in (await pods.list()).items for r in p.metadata.owner_references or ()
        }
        assert tap.lists["/api/v1/pods"] == 1  # no second cache was built meanwhile
        tg.cancel_scope.cancel()
