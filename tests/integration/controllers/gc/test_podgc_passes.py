"""PodGC against the embedded API server, on a FakeClock."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.podgc import OUT_OF_SERVICE_TAINT, PodGCController
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import (
    Container,
    Node,
    NodeCondition,
    NodeSpec,
    NodeStatus,
    Pod,
    PodSpec,
    Taint,
)
from kcm.models.meta_v1 import ObjectMeta
from kcm.testing import FakeClock, FakeRecorder, eventually
from tests.integration.controllers.gc.gc_harness import running

pytestmark = pytest.mark.anyio


def make_podgc(clock: FakeClock, **kwargs: Any) -> Any:
    def build(client: ApiClient, factory: SharedInformerFactory) -> PodGCController:
        return PodGCController(client, factory, recorder=FakeRecorder(), clock=clock, **kwargs)

    return build


def pod(name: str, node: str | None = None, finalizers: list[str] | None = None) -> Pod:
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", finalizers=finalizers),
        spec=PodSpec(node_name=node, containers=[Container(name="c", image="busybox")]),
    )


async def names(client: ApiClient) -> set[str]:
    return {p.metadata.name or "" for p in (await client.api(Pod, "default").list()).items}


async def cached(gc: PodGCController, n: int) -> None:
    async def ok() -> bool:
        return len(gc.pod_informer.lister().list()) == n

    await eventually(ok)


async def next_pass(clock: FakeClock, gc: PodGCController, seconds: float = 20.0) -> None:
    before = gc.passes
    await clock.advance(seconds)

    async def done() -> bool:
        return gc.passes > before

    await eventually(done)


async def test_terminated_pods_above_the_threshold_go_oldest_first() -> None:
    server_clock = FakeClock()
    clock = FakeClock()
    async with (
        ApiServer(clock=server_clock) as server,
        running(server, make_podgc(clock, terminated_pod_threshold=2)) as (client, [gc]),
    ):
        api = client.api(Pod, "default")
        # names sort against age, so the order must come from creationTimestamp
        for i, name in enumerate(["d-oldest", "c-older", "b-newer", "a-newest"]):
            await api.create(pod(name))
            await api.patch_status(name, {"status": {"phase": "Succeeded"}})
            await server_clock.advance(10 + i)
        for name in ("r-1", "r-2", "r-3"):
            await api.create(pod(name))
            await api.patch_status(name, {"status": {"phase": "Running"}})
        await cached(gc, 7)
        await eventually(lambda: _phases_cached(gc, 4))
        await next_pass(clock, gc)

        async def trimmed() -> bool:
            return await names(client) == {"b-newer", "a-newest", "r-1", "r-2", "r-3"}

        await eventually(trimmed)


async def _phases_cached(gc: PodGCController, succeeded: int) -> bool:
    pods = gc.pod_informer.lister().list()
    return sum(1 for p in pods if p.status and p.status.phase == "Succeeded") == succeeded


async def test_running_pods_above_the_threshold_are_kept(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with running(api_server, make_podgc(clock, terminated_pod_threshold=1)) as (
        client,
        [gc],
    ):
        api = client.api(Pod, "default")
        for name in ("r-1", "r-2", "r-3"):
            await api.create(pod(name))
        await cached(gc, 3)
        await next_pass(clock, gc)
        await next_pass(clock, gc)
        assert await names(client) == {"r-1", "r-2", "r-3"}


async def test_pods_on_a_missing_node_go_after_the_quarantine(api_server: ApiServer) -> None:
    clock = FakeClock()
    async with running(api_server, make_podgc(clock)) as (client, [gc]):
        await client.api(Node).create(Node(metadata=ObjectMeta(name="n1")))
        api = client.api(Pod, "default")
        await api.create(pod("on-ghost", "ghost"))
        await api.create(pod("on-n1", "n1"))
        await cached(gc, 2)
        marked: list[Pod] = []
        rv = (await api.list()).metadata.resource_version

        async def watch() -> None:
            async with api.watch(resource_version=rv) as events:
                async for event in events:
                    if event.object.metadata.name == "on-ghost" and event.type == "MODIFIED":
                        marked.append(event.object)

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            await next_pass(clock, gc)  # t=20: ghost quarantined until t=60
            await next_pass(clock, gc)  # t=40
            assert await names(client) == {"on-ghost", "on-n1"}
            await next_pass(clock, gc)  # t=60: live check says NotFound

            async def collected() -> bool:
                return await names(client) == {"on-n1"}

            await eventually(collected)
            tg.cancel_scope.cancel()
        failed = [p for p in marked if p.status and p.status.phase == "Failed"]
        assert failed
        conditions = {c.type: c for c in failed[-1].status.conditions or ()}  # type: ignore[union-attr]
        assert conditions["DisruptionTarget"].reason == "DeletionByPodGC"
        assert conditions["DisruptionTarget"].status == "True"


async def test_pods_of_a_deleted_node_are_removed_after_the_quarantine(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    async with running(api_server, make_podgc(clock, quarantine=40.0)) as (client, [gc]):
        nodes = client.api(Node)
        await nodes.create(Node(metadata=ObjectMeta(name="n2")))
        api = client.api(Pod, "default")
        await api.create(pod("a", "n2"))
        await api.create(pod("b", "n2"))
        await cached(gc, 2)
        await next_pass(clock, gc)
        assert await names(client) == {"a", "b"}
        await nodes.delete("n2")

        async def node_uncached() -> bool:
            return not gc.node_informer.lister().list()

        await eventually(node_uncached)
        await next_pass(clock, gc)  # quarantined
        await next_pass(clock, gc)
        assert await names(client) == {"a", "b"}
        await next_pass(clock, gc)

        async def collected() -> bool:
            return await names(client) == set()

        await eventually(collected)


async def test_terminating_pods_unscheduled_or_on_out_of_service_nodes_are_forced(
    api_server: ApiServer,
) -> None:
    clock = FakeClock()
    async with running(api_server, make_podgc(clock)) as (client, [gc]):
        await client.api(Node).create(
            Node(
                metadata=ObjectMeta(name="down"),
                spec=NodeSpec(taints=[Taint(key=OUT_OF_SERVICE_TAINT, effect="NoExecute")]),
                status=NodeStatus(conditions=[NodeCondition(type="Ready", status="False")]),
            )
        )
        await client.api(Node).create(Node(metadata=ObjectMeta(name="up")))
        api = client.api(Pod, "default")
        await api.create(pod("unscheduled", finalizers=["example.com/hold"]))
        await api.create(pod("on-down", "down"))
        await api.create(pod("on-up", "up"))
        for name in ("unscheduled", "on-down", "on-up"):
            await api.delete(name)  # scheduled pods: graceful, they stay terminating
        await cached(gc, 3)

        async def all_terminating() -> bool:
            pods = gc.pod_informer.lister().list()
            return all(p.metadata.deletion_timestamp for p in pods)

        await eventually(all_terminating)
        await next_pass(clock, gc)

        async def forced() -> bool:
            return await names(client) == {"unscheduled", "on-up"}

        await eventually(forced)
        held = await api.get("unscheduled")  # kept by its finalizer, but marked Failed
        assert held.status
        assert held.status.phase == "Failed"
        with pytest.raises(NotFound):
            await api.get("on-down")
