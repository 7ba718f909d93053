"""The simulated cluster against the embedded API server: nodes, scheduler, kubelet."""

from __future__ import annotations

import pytest

from kcm.apiserver import ApiServer
from kcm.errors import NotFound
from kcm.models import Lease, Node, ObjectKey, Pod
from kcm.simulation import DURATION_ANNOTATION, EXIT_CODE_ANNOTATION, SIMULATED_LABEL
from kcm.testing import eventually
from tests.integration.simulation.sim_harness import condition, phase, pod, running_sim

pytestmark = pytest.mark.anyio


async def test_nodes_register_ready_with_capacity_and_renew_their_leases(
    api_server: ApiServer,
) -> None:
    async with running_sim(api_server, nodes=2, node_cpu="8", node_pods=30) as sim:
        nodes = (await sim.client.api(Node).list()).items
        assert sorted(n.metadata.name or "" for n in nodes) == ["kcm-node-1", "kcm-node-2"]
        for node in nodes:
            assert node.status is not None
            assert node.status.capacity == {
                "cpu": "8",
                "memory": "16Gi",
                "pods": "30",
                "ephemeral-storage": "100Gi",
            }
            ready = [c for c in node.status.conditions or [] if c.type == "Ready"]
            assert ready
            assert ready[0].status == "True"
            assert (node.metadata.labels or {})[SIMULATED_LABEL] == "true"
        leases = sim.client.api(Lease, namespace="kube-node-lease")
        lease = await leases.get("kcm-node-1")
        assert lease.spec is not None
        assert lease.spec.holder_identity == "kcm-node-1"
        assert lease.spec.lease_duration_seconds == 40
        owner = (lease.metadata.owner_references or [])[0]
        assert (owner.kind, owner.name) == ("Node", "kcm-node-1")
        first = lease.spec.renew_time
        await sim.clock.advance(10)

        async def renewed() -> bool:
            spec = (await leases.get("kcm-node-1")).spec
            return spec is not None and spec.renew_time != first

        await eventually(renewed)
        spec = (await leases.get("kcm-node-1")).spec
        assert spec is not None
        assert spec.renew_time is not None
        assert first is not None
        assert (spec.renew_time - first).total_seconds() == pytest.approx(10, abs=0.01)


async def test_a_pod_is_bound_then_running_then_ready_on_the_fake_clock(
    api_server: ApiServer,
) -> None:
    async with running_sim(api_server, pod_start_delay=2, pod_ready_delay=3) as sim:
        await sim.pods.create(pod("web"))

        async def bound() -> bool:
            p = await sim.pods.get("web")
            return bool(p.spec and p.spec.node_name)

        await eventually(bound)
        p = await sim.pods.get("web")
        assert p.spec is not None
        assert (p.spec.node_name or "").startswith("kcm-node-")
        assert condition(p, "PodScheduled") == "True"
        kubelet, key = sim.cluster.kubelet, ObjectKey("default", "web")

        async def timing() -> bool:  # the kubelet has seen the bound pod (no time passed yet)
            return kubelet.stage_since(key) is not None

        await eventually(timing)
        assert kubelet.stage_since(key) == ("pending", sim.clock.monotonic())
        await sim.clock.advance(1.9)
        await sim.quiesce()
        assert phase(await sim.pods.get("web")) == "Pending"  # not yet: 2 s start delay
        await sim.clock.advance(0.1)

        async def running() -> bool:
            return phase(await sim.pods.get("web")) == "Running"

        await eventually(running)
        p = await sim.pods.get("web")
        assert p.status is not None
        assert (p.status.pod_ip or "").startswith("10.244.")
        assert condition(p, "Ready") == "False"
        statuses = p.status.container_statuses or []
        assert [s.name for s in statuses] == ["main"]
        assert statuses[0].state is not None
        assert statuses[0].state.running is not None
        await sim.clock.advance(3)

        async def ready() -> bool:
            return condition(await sim.pods.get("web"), "Ready") == "True"

        await eventually(ready)
        p = await sim.pods.get("web")
        assert condition(p, "ContainersReady") == "True"
        assert p.status is not None
        assert all(s.ready for s in p.status.container_statuses or [])
        await sim.clock.advance(3600)  # restartPolicy Always: runs until deleted
        await sim.quiesce()
        assert phase(await sim.pods.get("web")) == "Running"


async def test_run_to_completion_pods_succeed_or_fail_as_annotated(
    api_server: ApiServer,
) -> None:
    async with running_sim(api_server, pod_start_delay=0, pod_ready_delay=0, job_duration=5) as sim:
        await sim.pods.create(pod("ok", restart_policy="Never"))
        await sim.pods.create(
            pod(
                "bad",
                restart_policy="Never",
                annotations={DURATION_ANNOTATION: "20s", EXIT_CODE_ANNOTATION: "3"},
            )
        )

        async def both_running() -> bool:
            phases = [phase(await sim.pods.get(n)) for n in ("ok", "bad")]
            return phases == ["Running", "Running"]

        await eventually(both_running)
        await sim.clock.advance(5)

        async def ok_done() -> bool:
            return phase(await sim.pods.get("ok")) == "Succeeded"

        await eventually(ok_done)
        ok = await sim.pods.get("ok")
        assert condition(ok, "Ready") == "False"
        terminated = (ok.status.container_statuses or [])[0].state if ok.status else None
        assert terminated is not None
        assert terminated.terminated is not None
        assert (terminated.terminated.exit_code, terminated.terminated.reason) == (0, "Completed")
        assert phase(await sim.pods.get("bad")) == "Running"  # runs 20 s
        await sim.clock.advance(15)

        async def bad_done() -> bool:
            return phase(await sim.pods.get("bad")) == "Failed"

        await eventually(bad_done)
        bad = await sim.pods.get("bad")
        state = (bad.status.container_statuses or [])[0].state if bad.status else None
        assert state is not None
        assert state.terminated is not None
        assert state.terminated.exit_code == 3


async def test_on_failure_pods_restart_in_place(api_server: ApiServer) -> None:
    async with running_sim(api_server, pod_start_delay=0, pod_ready_delay=0, job_duration=4) as sim:
        await sim.pods.create(
            pod("flaky", restart_policy="OnFailure", annotations={EXIT_CODE_ANNOTATION: "1"})
        )

        async def running() -> bool:
            return phase(await sim.pods.get("flaky")) == "Running"

        await eventually(running)

        async def restarts(n: int) -> bool:
            p = await sim.pods.get("flaky")
            statuses = (p.status.container_statuses if p.status else None) or []
            return bool(statuses) and statuses[0].restart_count == n

        await sim.clock.advance(4)
        await eventually(lambda: restarts(1))
        await sim.clock.advance(4)
        await eventually(lambda: restarts(2))
        assert phase(await sim.pods.get("flaky")) == "Running"


async def test_deleting_a_running_pod_removes_it(api_server: ApiServer) -> None:
    async with running_sim(api_server, pod_start_delay=0, pod_ready_delay=0) as sim:
        await sim.pods.create(pod("web"))

        async def running() -> bool:
            return phase(await sim.pods.get("web")) == "Running"

        await eventually(running)
        deleted = await sim.pods.delete("web")  # graceful: the kubelet has to finish it
        assert isinstance(deleted, Pod)
        assert deleted.metadata.deletion_timestamp is not None

        async def gone() -> bool:
            try:
                await sim.pods.get("web")
            except NotFound:
                return True
            return False

        await eventually(gone)


async def test_pods_spread_and_wait_when_nothing_fits(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=2, node_pods=1) as sim:
        for name in ("a", "b", "c"):
            await sim.pods.create(pod(name))

        async def two_bound_one_unschedulable() -> bool:
            pods = {p.metadata.name: p for p in (await sim.pods.list()).items}
            bound = [p for p in pods.values() if p.spec and p.spec.node_name]
            waiting = [p for p in pods.values() if condition(p, "PodScheduled") == "False"]
            return len(bound) == 2 and len(waiting) == 1

        await eventually(two_bound_one_unschedulable)
        pods = (await sim.pods.list()).items
        nodes = sorted(p.spec.node_name or "" for p in pods if p.spec and p.spec.node_name)
        assert nodes == ["kcm-node-1", "kcm-node-2"]  # one each: spread
        waiting = next(p for p in pods if not (p.spec and p.spec.node_name))
        scheduled = [c for c in (waiting.status.conditions if waiting.status else []) or []]
        message = next(c.message for c in scheduled if c.type == "PodScheduled")
        assert message == "0/2 nodes are available: 2 Too many pods."
        # Capacity frees up: the waiting pod is bound (the kubelet finishes the deletion).
        bound_name = next(p.metadata.name for p in pods if p.spec and p.spec.node_name)
        assert bound_name is not None
        await sim.pods.delete(bound_name)

        async def waiting_bound() -> bool:
            p = await sim.pods.get(waiting.metadata.name or "")
            return bool(p.spec and p.spec.node_name)

        await eventually(waiting_bound)


async def test_requests_selectors_and_other_schedulers(api_server: ApiServer) -> None:
    async with running_sim(api_server, nodes=2, node_cpu="2") as sim:
        await sim.pods.create(pod("huge", cpu="3"))
        await sim.pods.create(pod("picky", node_selector={"kubernetes.io/hostname": "kcm-node-2"}))
        await sim.pods.create(pod("mine", scheduler_name="my-scheduler"))
        await sim.pods.create(pod("elsewhere", node_name="real-node"))

        async def settled() -> bool:
            huge = await sim.pods.get("huge")
            picky = await sim.pods.get("picky")
            return condition(huge, "PodScheduled") == "False" and bool(
                picky.spec and picky.spec.node_name
            )

        await eventually(settled)
        huge = await sim.pods.get("huge")
        msg = [c.message for c in (huge.status.conditions if huge.status else []) or []]
        assert msg == ["0/2 nodes are available: 2 Insufficient cpu."]
        picky = await sim.pods.get("picky")
        assert picky.spec is not None
        assert picky.spec.node_name == "kcm-node-2"
        await sim.clock.advance(10)
        await sim.quiesce()
        mine = await sim.pods.get("mine")
        assert mine.spec is not None
        assert not mine.spec.node_name
        elsewhere = await sim.pods.get("elsewhere")
        assert phase(elsewhere) == "Pending"  # not a simulated node: the kubelet leaves it


async def test_fewer_nodes_on_restart_and_deleted_nodes_stay_deleted(
    api_server: ApiServer,
) -> None:
    async with running_sim(api_server, nodes=3):
        pass
    async with running_sim(api_server, nodes=2) as sim:
        nodes = sim.client.api(Node)
        names = sorted(n.metadata.name or "" for n in (await nodes.list()).items)
        assert names == ["kcm-node-1", "kcm-node-2"]
        await nodes.delete("kcm-node-2")
        await sim.clock.advance(10)

        async def noticed() -> bool:
            return sim.cluster.nodes.registered == ["kcm-node-1"]

        await eventually(noticed)
        await sim.clock.advance(10)
        assert [n.metadata.name for n in (await nodes.list()).items] == ["kcm-node-1"]
