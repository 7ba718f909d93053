"""The simulated scheduler honours placement, and nodes change at run time: required node
affinity, taints (NoSchedule and NoExecute), cordons (except for pods that tolerate them),
hostname anti-affinity; labelling, tainting and cordoning a node re-evaluates pending pods; a
Node created with the simulated label is run; a DaemonSet gets one running pod per node."""

from __future__ import annotations

import anyio
import pytest

from kcm.apiserver import ApiServer
from kcm.controllers.daemonset import DaemonSetController
from kcm.models import Node, ObjectMeta, Pod, Toleration
from kcm.models.apps_v1 import DaemonSet, DaemonSetSpec
from kcm.models.core_v1 import (
    Affinity,
    Container,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PodAntiAffinity,
    PodSpec,
    PodTemplateSpec,
)
from kcm.models.meta_v1 import LabelSelector
from kcm.simulation import SIMULATED_LABEL
from kcm.testing import FakeRecorder, eventually
from tests.integration.simulation.sim_harness import Sim, condition, phase, pod, running_sim

pytestmark = pytest.mark.anyio


def zone_affinity(*zones: str) -> Affinity:
    return Affinity(
        node_affinity=NodeAffinity(
            required_during_scheduling_ignored_during_execution=NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(
                        match_expressions=[
                            NodeSelectorRequirement(key="zone", operator="In", values=list(zones))
                        ]
                    )
                ]
            )
        )
    )


async def node_of(sim: Sim, name: str) -> str | None:
    p = await sim.pods.get(name)
    return p.spec.node_name if p.spec else None


async def scheduled_message(sim: Sim, name: str) -> str | None:
    p = await sim.pods.get(name)
    for c in (p.status.conditions if p.status else None) or ():
        if c.type == "PodScheduled":
            return c.message
    return None


async def test_node_affinity_waits_for_a_label(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=2) as sim:
        await sim.pods.create(pod("zoned", affinity=zone_affinity("a")))

        async def unschedulable() -> bool:
            return condition(await sim.pods.get("zoned"), "PodScheduled") == "False"

        await eventually(unschedulable)
        assert await scheduled_message(sim, "zoned") == (
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
        )
        # kubectl label node kcm-node-2 zone=a: the node update wakes the pending pod.
        await sim.client.api(Node).patch("kcm-node-2", {"metadata": {"labels": {"zone": "a"}}})

        async def bound() -> bool:
            return await node_of(sim, "zoned") == "kcm-node-2"

        await eventually(bound)


async def test_taints_and_cordons(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=3) as sim:
        nodes = sim.client.api(Node)
        await nodes.patch(
            "kcm-node-1", {"spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}
        )
        await nodes.patch(
            "kcm-node-2", {"spec": {"taints": [{"key": "drain", "effect": "NoExecute"}]}}
        )
        await nodes.patch("kcm-node-3", {"spec": {"unschedulable": True}})
        await sim.quiesce()
        await sim.pods.create(pod("plain"))
        unschedulable = Toleration(
            key="node.kubernetes.io/unschedulable", operator="Exists", effect="NoSchedule"
        )
        await sim.pods.create(pod("tolerant", tolerations=[unschedulable]))
        await sim.pods.create(pod("gpu", tolerations=[Toleration(key="gpu", operator="Exists")]))

        async def settled() -> bool:
            return (
                condition(await sim.pods.get("plain"), "PodScheduled") == "False"
                and await node_of(sim, "tolerant") == "kcm-node-3"
                and await node_of(sim, "gpu") == "kcm-node-1"
            )

        await eventually(settled)
        assert await scheduled_message(sim, "plain") == (
            "0/3 nodes are available: 1 node(s) had untolerated taint {drain: }, "
            "1 node(s) had untolerated taint {gpu: }, 1 node(s) were unschedulable."
        )
        # kubectl uncordon kcm-node-3: the plain pod goes there.
        await nodes.patch("kcm-node-3", {"spec": {"unschedulable": None}})

        async def plain_bound() -> bool:
            return await node_of(sim, "plain") == "kcm-node-3"

        await eventually(plain_bound)


async def test_hostname_anti_affinity_spreads_one_per_node(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=2) as sim:
        apart = Affinity(
            pod_anti_affinity=PodAntiAffinity(
                required_during_scheduling_ignored_during_execution=[
                    PodAffinityTerm(
                        label_selector=LabelSelector(match_labels={"app": "db"}),
                        topology_key="kubernetes.io/hostname",
                    )
                ]
            )
        )
        for name in ("db-0", "db-1", "db-2"):
            p = pod(name, affinity=apart)
            p = Pod(metadata=ObjectMeta(name=name, labels={"app": "db"}), spec=p.spec)
            await sim.pods.create(p)

        async def two_bound() -> bool:
            placed = [await node_of(sim, n) for n in ("db-0", "db-1", "db-2")]
            return len({n for n in placed if n}) == 2 and placed.count(None) == 1

        await eventually(two_bound)
        [waiting] = [n for n in ("db-0", "db-1", "db-2") if await node_of(sim, n) is None]

        async def refused() -> bool:
            return await scheduled_message(sim, waiting) == (
                "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules."
            )

        await eventually(refused)


async def test_a_node_created_at_run_time_is_run(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=1) as sim:
        nodes = sim.client.api(Node)
        # kubectl create: a Node named like the simulated ones, with their label.
        await nodes.create(
            Node(metadata=ObjectMeta(name="kcm-node-2", labels={SIMULATED_LABEL: "true"}))
        )
        await sim.clock.advance(10)  # the next heartbeat picks it up

        async def ready() -> bool:
            node = await nodes.get("kcm-node-2")
            conditions = (node.status.conditions if node.status else None) or ()
            return any(c.type == "Ready" and c.status == "True" for c in conditions)

        await eventually(ready)
        node = await nodes.get("kcm-node-2")
        assert node.status is not None
        assert (node.status.allocatable or {}).get("pods") == "110"
        assert (node.metadata.labels or {})["kubernetes.io/hostname"] == "kcm-node-2"
        await sim.pods.create(pod("there", node_selector={"kubernetes.io/hostname": "kcm-node-2"}))

        async def running() -> bool:
            await sim.clock.advance(1)
            return phase(await sim.pods.get("there")) == "Running"

        await eventually(running)
        # Deleted again: it stays deleted, as the configured ones do.
        await nodes.delete("kcm-node-2")
        await sim.clock.advance(10)
        await sim.clock.advance(10)
        assert [n.metadata.name for n in (await nodes.list()).items] == ["kcm-node-1"]


async def test_a_daemon_set_runs_one_ready_pod_per_simulated_node(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=3, pod_start_delay=0, pod_ready_delay=0) as sim:
        await sim.client.api(Node).patch(
            "kcm-node-3", {"spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]}}
        )
        controller = DaemonSetController(
            sim.client, sim.factory, recorder=FakeRecorder(), clock=sim.clock
        )
        async with anyio.create_task_group() as tg:
            await tg.start(controller.run)
            labels = {"app": "agent"}
            await sim.client.api(DaemonSet, "default").create(
                DaemonSet(
                    metadata=ObjectMeta(name="agent"),
                    spec=DaemonSetSpec(
                        selector=LabelSelector(match_labels=labels),
                        template=PodTemplateSpec(
                            metadata=ObjectMeta(labels=labels),
                            spec=PodSpec(containers=[Container(name="a", image="agent")]),
                        ),
                    ),
                )
            )

            async def ready() -> bool:
                await sim.clock.advance(0.5)
                ds = await sim.client.api(DaemonSet, "default").get("agent")
                return bool(ds.status and ds.status.number_ready == 2)

            await eventually(ready)
            pods = (await sim.pods.list(label_selector="app=agent")).items
            assert sorted(p.spec.node_name or "" for p in pods if p.spec) == [
                "kcm-node-1",
                "kcm-node-2",
            ]
            # Cordoning a node keeps its daemon pod; the tainted node never gets one.
            await sim.client.api(Node).patch("kcm-node-1", {"spec": {"unschedulable": True}})
            await sim.clock.advance(5)
            await sim.quiesce()
            pods = (await sim.pods.list(label_selector="app=agent")).items
            assert len([p for p in pods if p.metadata.deletion_timestamp is None]) == 2
            tg.cancel_scope.cancel()
