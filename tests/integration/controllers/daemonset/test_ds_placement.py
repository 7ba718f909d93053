"""Where the DaemonSet controller puts pods (§11: scenarios 1-5): one per
fitting node, pinned by node affinity with the daemon tolerations; nodes added, labelled,
tainted and cordoned change the placement as kube-controller-manager's does."""

from __future__ import annotations

import pytest

from kcm.controllers.daemonset import (
    CONTROLLER_REVISION_HASH_LABEL,
    DAEMON_POD_TOLERATIONS,
    target_node_name,
)
from kcm.models.core_v1 import Taint
from tests.integration.controllers.daemonset.ds_harness import (
    NS,
    Env,
    daemon_set,
    node,
    running,
)

pytestmark = pytest.mark.anyio


async def pods_on(env: Env) -> dict[str, int]:
    return {name: len(pods) for name, pods in (await env.pods_by_node()).items()}


async def test_one_pod_per_node_pinned_by_affinity_with_the_daemon_tolerations() -> None:
    async with running(node("n1"), node("n2")) as env:
        ds = await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        pods = await env.live_pods()
        assert sorted(target_node_name(p) or "" for p in pods) == ["n1", "n2"]
        [revision] = (await env.revisions.list()).items
        hash = (revision.metadata.labels or {})[CONTROLLER_REVISION_HASH_LABEL]
        assert revision.metadata.name == f"agent-{hash}"
        assert revision.revision == 1
        for pod in pods:
            assert pod.spec is not None
            assert pod.spec.node_name is None  # the scheduler binds it
            assert list(pod.spec.tolerations or ()) == list(DAEMON_POD_TOLERATIONS)
            assert pod.metadata.generate_name == "agent-"
            assert pod.metadata.labels == {
                "app": "agent",
                CONTROLLER_REVISION_HASH_LABEL: hash,
                "pod-template-generation": "1",  # the server's template generation annotation
            }
            [ref] = pod.metadata.owner_references or ()
            assert (ref.kind, ref.name, ref.uid, ref.controller) == (
                "DaemonSet",
                "agent",
                ds.metadata.uid,
                True,
            )
        status = (await env.ds()).status
        assert status is not None
        assert (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_ready,
            status.number_available,
            status.updated_number_scheduled,
            status.number_misscheduled,
            status.number_unavailable,
            status.observed_generation,
        ) == (2, 2, 0, None, 2, 0, 2, 1)  # numberAvailable 0 is omitted (Go's omitempty)
        created = env.events("SuccessfulCreate")
        assert sorted(created) == sorted(f"Created pod: {p.metadata.name}" for p in pods)


async def test_bound_ready_pods_are_counted() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        for pod in await env.live_pods():
            await env.bind(pod)
        await env.make_all_ready()
        status = (await env.ds()).status
        assert status is not None
        assert (status.number_ready, status.number_available, status.updated_number_scheduled) == (
            2,
            2,
            2,
        )
        assert status.number_unavailable is None  # a zero Go's omitempty leaves out
        assert all(p.spec and p.spec.node_name for p in await env.live_pods())
        assert len(await env.live_pods()) == 2  # binding does not look like a missing pod


async def test_new_nodes_get_a_pod_unless_tainted() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        await env.nodes.create(node("n3"))
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1, "n2": 1, "n3": 1}
        await env.nodes.create(node("n4", taints=[Taint(key="gpu", effect="NoSchedule")]))
        await env.quiesce()
        assert "n4" not in await pods_on(env)
        status = (await env.ds()).status
        assert status is not None
        assert status.desired_number_scheduled == 3


async def test_node_selector_follows_labels() -> None:
    async with running(node("n1", labels={"disk": "ssd"}), node("n2")) as env:
        await env.daemon_sets.create(daemon_set(node_selector={"disk": "ssd"}))
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1}
        await env.nodes.patch("n1", {"metadata": {"labels": {"disk": "hdd"}}})
        await env.quiesce()
        assert await pods_on(env) == {}
        assert len(env.events("SuccessfulDelete")) == 1
        await env.nodes.patch("n2", {"metadata": {"labels": {"disk": "ssd"}}})
        await env.quiesce()
        assert await pods_on(env) == {"n2": 1}
        status = (await env.ds()).status
        assert status is not None
        assert (status.desired_number_scheduled, status.current_number_scheduled) == (1, 1)


async def test_no_execute_taint_removes_the_pod_no_schedule_keeps_it() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        await env.nodes.patch(
            "n1", {"spec": {"taints": [{"key": "maintenance", "effect": "NoSchedule"}]}}
        )
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1, "n2": 1}
        status = (await env.ds()).status
        assert status is not None
        # The pod left on n1 is not counted as desired, but as misscheduled.
        assert (
            status.desired_number_scheduled,
            status.current_number_scheduled,
            status.number_misscheduled,
        ) == (1, 1, 1)
        await env.nodes.patch(
            "n2", {"spec": {"taints": [{"key": "maintenance", "effect": "NoExecute"}]}}
        )
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1}
        await env.nodes.patch("n2", {"spec": {"taints": None}})
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1, "n2": 1}


async def test_cordoned_and_troubled_nodes_keep_and_get_daemon_pods() -> None:
    troubled = [
        Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule"),
        Taint(key="node.kubernetes.io/memory-pressure", effect="NoSchedule"),
        Taint(key="node.kubernetes.io/unreachable", effect="NoExecute"),
    ]
    async with running(node("n1", unschedulable=True, taints=troubled)) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1}


async def test_unbound_pods_of_a_deleted_node_go_at_the_next_sync() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        await env.nodes.delete("n2")
        await env.quiesce()
        # As in Kubernetes, deleting a node wakes no DaemonSet: its pods stay until a sync.
        assert await pods_on(env) == {"n1": 1, "n2": 1}
        await env.daemon_sets.patch("agent", {"metadata": {"annotations": {"touch": "1"}}})
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1}
        status = (await env.ds()).status
        assert status is not None
        assert status.desired_number_scheduled == 1


async def test_heartbeats_do_not_wake_daemon_sets() -> None:
    async with running(node("n1")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        assert env.controller is not None
        before = sum(env.controller.controller.reconcile_counts.values())
        for second in range(3):
            await env.nodes.patch_status(
                "n1",
                {
                    "status": {
                        "conditions": [
                            {
                                "type": "Ready",
                                "status": "True",
                                "lastHeartbeatTime": f"2026-01-01T00:00:0{second}Z",
                            }
                        ]
                    }
                },
            )
        await env.quiesce()
        assert sum(env.controller.controller.reconcile_counts.values()) == before
        await env.nodes.patch("n1", {"metadata": {"labels": {"new": "label"}}})
        await env.quiesce()
        # A label that changes no placement does not wake it either.
        assert sum(env.controller.controller.reconcile_counts.values()) == before


async def test_orphans_are_adopted_not_duplicated() -> None:
    from kcm.controllers.daemonset import replace_node_name_affinity
    from kcm.models.core_v1 import Container, Pod, PodSpec
    from kcm.models.meta_v1 import ObjectMeta

    async with running(node("n1"), node("n2")) as env:
        orphan = Pod(
            metadata=ObjectMeta(name="orphan", labels={"app": "agent"}),
            spec=PodSpec(
                containers=[Container(name="main", image="agent:1")],
                affinity=replace_node_name_affinity(None, "n1"),
            ),
        )
        await env.client.api(type(orphan), NS).create(orphan)
        # OnDelete: an adopted pod of another template is not replaced until deleted.
        ds = await env.daemon_sets.create(daemon_set(strategy="OnDelete"))
        await env.quiesce()
        assert await pods_on(env) == {"n1": 1, "n2": 1}
        adopted = await env.pods.get("orphan")
        [ref] = adopted.metadata.owner_references or ()
        assert ref.uid == ds.metadata.uid
