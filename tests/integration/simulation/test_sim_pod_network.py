"""The simulated kubelet's pod IPs (from the node's podCIDR) and readiness (the simulated
outcome of readiness probes, the ``kcm.dev/simulate-ready`` annotation)."""

from __future__ import annotations

import ipaddress

import pytest

from kcm.apiserver import ApiServer
from kcm.models import Container, Node, ObjectMeta, Pod, PodSpec, Probe
from kcm.models.core_v1 import ExecAction
from kcm.simulation import READY_ANNOTATION
from kcm.testing import eventually
from tests.integration.simulation.sim_harness import Sim, condition, phase, pod, running_sim

pytestmark = pytest.mark.anyio


async def running_pods(sim: Sim, n: int) -> list[Pod]:
    async def started() -> bool:
        items = (await sim.pods.list()).items
        return len(items) == n and all(phase(p) == "Running" for p in items)

    await eventually(started)
    return (await sim.pods.list()).items


async def test_nodes_have_pod_cidrs_and_pods_get_ips_from_theirs(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=2, pod_start_delay=0, pod_ready_delay=0) as sim:
        nodes = {n.metadata.name: n for n in (await sim.client.api(Node).list()).items}
        assert nodes["kcm-node-1"].spec is not None
        assert nodes["kcm-node-1"].spec.pod_cidr == "10.244.1.0/24"
        assert nodes["kcm-node-2"].spec is not None
        assert list(nodes["kcm-node-2"].spec.pod_cidrs or ()) == ["10.244.2.0/24"]
        for i in range(6):
            await sim.pods.create(pod(f"p{i}"))
        pods = await running_pods(sim, 6)
        ips = []
        for p in pods:
            assert p.spec is not None
            assert p.status is not None
            node = nodes[p.spec.node_name]
            assert node.spec is not None
            cidr = ipaddress.ip_network(node.spec.pod_cidr or "")
            assert ipaddress.ip_address(p.status.pod_ip or "") in cidr
            assert [x.ip for x in p.status.pod_ips or ()] == [p.status.pod_ip]
            assert p.status.pod_ip != str(cidr.network_address + 1)  # .1: the gateway
            ips.append(p.status.pod_ip)
        assert len(set(ips)) == 6


async def test_host_network_pods_get_the_node_ip(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=1, pod_start_delay=0) as sim:
        await sim.pods.create(pod("host", host_network=True))
        (p,) = await running_pods(sim, 1)
        assert p.status is not None
        assert p.status.pod_ip == p.status.host_ip


async def test_readiness_follows_the_simulated_probe_outcome(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=1, pod_start_delay=0, pod_ready_delay=1) as sim:
        await sim.pods.create(pod("web", annotations={READY_ANNOTATION: "false"}))
        await running_pods(sim, 1)
        await sim.clock.advance(60)
        await sim.quiesce()
        p = await sim.pods.get("web")
        assert condition(p, "Ready") == "False"  # the probe fails: running, never Ready
        ready = next(
            c for c in (p.status.conditions if p.status else None) or () if c.type == "Ready"
        )
        assert (ready.reason, ready.message) == (
            "ContainersNotReady",
            "containers with unready status: [main]",
        )
        await sim.pods.patch("web", {"metadata": {"annotations": {READY_ANNOTATION: None}}})

        async def is_ready() -> bool:
            return condition(await sim.pods.get("web"), "Ready") == "True"

        await eventually(is_ready)  # it has been running long enough: Ready at once
        await sim.pods.patch("web", {"metadata": {"annotations": {READY_ANNOTATION: "false"}}})

        async def not_ready() -> bool:
            p = await sim.pods.get("web")
            statuses = (p.status.container_statuses if p.status else None) or ()
            return condition(p, "Ready") == "False" and not any(s.ready for s in statuses)

        await eventually(not_ready)
        assert condition(await sim.pods.get("web"), "ContainersReady") == "False"
        assert phase(await sim.pods.get("web")) == "Running"


async def test_readiness_probe_initial_delay_adds_to_the_ready_delay(
    api_server: ApiServer,
) -> None:
    async with running_sim(api_server, nodes=1, pod_start_delay=0, pod_ready_delay=1) as sim:
        probe = Probe(exec_=ExecAction(command=["true"]), initial_delay_seconds=10)
        slow = Pod(
            metadata=ObjectMeta(name="slow"),
            spec=PodSpec(containers=[Container(name="main", image="x", readiness_probe=probe)]),
        )
        await sim.pods.create(slow)
        await running_pods(sim, 1)
        await sim.clock.advance(10.9)
        await sim.quiesce()
        assert condition(await sim.pods.get("slow"), "Ready") == "False"
        await sim.clock.advance(0.1)

        async def is_ready() -> bool:
            return condition(await sim.pods.get("slow"), "Ready") == "True"

        await eventually(is_ready)
