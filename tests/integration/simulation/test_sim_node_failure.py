"""A simulated node fails and comes back, with the node lifecycle and ReplicaSet controllers
and the simulated scheduler and kubelet, all on one FakeClock with shortened periods."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from kcm.apiserver import ApiServer
from kcm.client import ApiClient
from kcm.controllers.nodelifecycle import NodeLifecycleController
from kcm.controllers.replicaset import ReplicaSetController
from kcm.informers import SharedInformerFactory
from kcm.models import (
    Container,
    LabelSelector,
    Node,
    ObjectMeta,
    Pod,
    PodSpec,
    PodTemplateSpec,
    ReplicaSet,
    ReplicaSetSpec,
    Toleration,
)
from kcm.simulation import FAILURE_ANNOTATION, SimulatedCluster, SimulationConfig
from kcm.testing import FakeClock, FakeRecorder, client_config_for, eventually

pytestmark = pytest.mark.anyio

TOLERATE_2S = [
    Toleration(
        key=f"node.kubernetes.io/{key}",
        operator="Exists",
        effect="NoExecute",
        toleration_seconds=2,
    )
    for key in ("not-ready", "unreachable")
]


def _replica_set() -> ReplicaSet:
    labels = {"app": "web"}
    return ReplicaSet(
        metadata=ObjectMeta(name="web", namespace="default"),
        spec=ReplicaSetSpec(
            replicas=2,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(
                    tolerations=TOLERATE_2S, containers=[Container(name="c", image="nginx")]
                ),
            ),
        ),
    )


def _placement(pods: list[Pod]) -> dict[str, str]:
    return {
        p.metadata.name or "": (p.spec.node_name if p.spec else None) or ""
        for p in pods
        if p.metadata.deletion_timestamp is None
    }


def _running(pod: Pod) -> bool:
    return (pod.status.phase if pod.status else None) == "Running"


async def test_a_failed_node_is_tainted_its_pods_evicted_and_rescheduled() -> None:
    clock = FakeClock()
    recorder = FakeRecorder()
    config = SimulationConfig(
        nodes=2, heartbeat_period=1.0, pod_start_delay=0.5, pod_ready_delay=0.5
    )
    async with (
        ApiServer(clock=clock) as server,
        ApiClient(msgspec.structs.replace(client_config_for(server), qps=-1)) as client,
        anyio.create_task_group() as tg,
    ):
        factory = SharedInformerFactory(client, clock=clock)
        cluster = SimulatedCluster(client, factory, config=config, clock=clock)
        lifecycle = NodeLifecycleController(
            client,
            factory,
            recorder=recorder,
            clock=clock,
            node_monitor_period=1.0,
            node_monitor_grace_period=4.0,
            node_startup_grace_period=6.0,
        )
        replicas = ReplicaSetController(client, factory, recorder=FakeRecorder(), clock=clock)
        tg.start_soon(factory.run)
        await tg.start(cluster.run)
        await tg.start(lifecycle.run)
        await tg.start(replicas.run)
        pods = client.api(Pod, "default")
        nodes = client.api(Node)
        await client.api(ReplicaSet, "default").create(_replica_set())

        async def listed() -> list[Pod]:
            return (await pods.list()).items

        async def spread_and_running() -> bool:
            items = await listed()
            placed = _placement(items)
            return len(set(placed.values())) == 2 and all(_running(p) for p in items)

        async def step(seconds: int = 1) -> None:
            for _ in range(seconds):
                await clock.advance(1.0)
                await _pass_done(lifecycle, clock.monotonic())

        for _ in range(3):
            await step()
        await eventually(spread_and_running)
        victim = {v: k for k, v in _placement(await listed()).items()}["kcm-node-1"]

        await cluster.nodes.fail("kcm-node-1")
        assert FAILURE_ANNOTATION in ((await nodes.get("kcm-node-1")).metadata.annotations or {})
        await step(6)

        async def unknown() -> bool:
            node = await nodes.get("kcm-node-1")
            ready = [c for c in (node.status.conditions if node.status else None) or ()]
            return any(c.type == "Ready" and c.status == "Unknown" for c in ready)

        await eventually(unknown)
        assert cluster.nodes.failed == ["kcm-node-1"]
        await step(4)  # NoExecute taint one pass later, eviction 2 s after it

        async def evicted_and_replaced() -> bool:
            items = await listed()
            old = [p for p in items if p.metadata.name == victim]
            placed = _placement(items)
            return (
                bool(old)
                and old[0].metadata.deletion_timestamp is not None  # its kubelet is silent
                and sorted(placed.values()) == ["kcm-node-2", "kcm-node-2"]
            )

        await eventually(evicted_and_replaced)
        assert f"Normal TaintManagerEviction Marking for deletion Pod default/{victim}" in (
            recorder.events
        )
        await step(2)
        await eventually(lambda: _all_running_on(listed, "kcm-node-2", victim))

        await cluster.nodes.recover("kcm-node-1")
        await step(3)

        async def healed() -> bool:
            node = await nodes.get("kcm-node-1")
            ready = [c for c in (node.status.conditions if node.status else None) or ()]
            back = any(c.type == "Ready" and c.status == "True" for c in ready)
            names = {p.metadata.name for p in await listed()}
            return back and not (node.spec and node.spec.taints) and victim not in names

        await eventually(healed)
        tg.cancel_scope.cancel()


async def _pass_done(lifecycle: NodeLifecycleController, due: float) -> None:
    await eventually(lambda: lifecycle.last_pass_at >= due)


async def _all_running_on(listed: object, node: str, victim: str) -> bool:
    items = [p for p in await listed() if p.metadata.name != victim]  # type: ignore[operator]
    return len(items) == 2 and all(
        _running(p) and p.spec is not None and p.spec.node_name == node for p in items
    )
