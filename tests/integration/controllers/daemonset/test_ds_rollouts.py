"""DaemonSet updates (§11: scenario 7): RollingUpdate one node at a time within
maxUnavailable, with maxSurge beside the old pod, OnDelete, ControllerRevisions numbered and
cleaned up, and a rollback reusing the old revision."""

from __future__ import annotations

import pytest

from kcm.controllers.daemonset import CONTROLLER_REVISION_HASH_LABEL
from kcm.models.core_v1 import Pod
from tests.integration.controllers.daemonset.ds_harness import Env, daemon_set, node, running

pytestmark = pytest.mark.anyio

IMAGE = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "agent:2"}]}}}}


def hash_of(pod: Pod) -> str:
    return (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL, "")


async def revisions(env: Env) -> dict[str, int]:
    """Revision number by hash."""
    return {
        (r.metadata.labels or {})[CONTROLLER_REVISION_HASH_LABEL]: r.revision or 0
        for r in (await env.revisions.list()).items
    }


async def hashes(env: Env) -> list[str]:
    return sorted(hash_of(p) for p in await env.live_pods())


async def remove_deleted(env: Env) -> None:
    """Play the kubelet: finish the deletions the controller started."""
    for pod in await env.live_pods(include_deleting=True):
        if pod.metadata.deletion_timestamp is not None:
            await env.remove(pod)
    await env.quiesce()


async def bound_and_ready(env: Env) -> None:
    for pod in await env.live_pods():
        if not (pod.spec and pod.spec.node_name):
            await env.bind(pod)
    await env.make_all_ready()


async def test_rolling_update_replaces_one_node_at_a_time() -> None:
    async with running(node("n1"), node("n2"), node("n3")) as env:
        await env.daemon_sets.create(daemon_set(max_unavailable=1))
        await env.quiesce()
        await bound_and_ready(env)
        [old] = await revisions(env)
        await env.daemon_sets.patch("agent", IMAGE)
        await env.quiesce()
        revs = await revisions(env)
        [new] = [h for h in revs if h != old]
        assert revs == {old: 1, new: 2}
        # One old pod deleted (bound: it terminates until its kubelet removes it).
        assert await hashes(env) == [old, old]
        await remove_deleted(env)
        assert await hashes(env) == sorted([new, old, old])
        for _ in range(2):
            await bound_and_ready(env)  # the new pod turns Ready: the next old one goes
            await remove_deleted(env)
        await bound_and_ready(env)
        assert await hashes(env) == [new, new, new]
        ds = await env.ds()
        assert ds.status is not None
        assert (
            ds.status.updated_number_scheduled,
            ds.status.number_available,
            ds.status.observed_generation,
        ) == (3, 3, ds.metadata.generation)


async def test_max_unavailable_percentage_replaces_several_at_once() -> None:
    async with running(*(node(f"n{i}") for i in range(4))) as env:
        await env.daemon_sets.create(daemon_set(max_unavailable="50%"))
        await env.quiesce()
        await env.make_all_ready()
        await env.daemon_sets.patch("agent", IMAGE)
        await env.quiesce()
        assert len(await env.live_pods()) == 4  # unbound pods are removed at once
        assert len(env.events("SuccessfulDelete")) == 2


async def test_surge_creates_beside_the_old_pod_and_deletes_it_once_available() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set(max_unavailable=0, max_surge=1))
        await env.quiesce()
        await bound_and_ready(env)
        [old] = await revisions(env)
        await env.daemon_sets.patch("agent", IMAGE)
        await env.quiesce()
        pods = await env.pods_by_node()
        assert sorted(len(p) for p in pods.values()) == [1, 2]  # one node surges
        [surged] = [n for n, p in pods.items() if len(p) == 2]
        await bound_and_ready(env)  # the new pod becomes available: its old neighbour goes
        pods = await env.pods_by_node()
        assert [hash_of(p) for p in pods[surged]] != [old]
        assert len(pods[surged]) == 1
        await remove_deleted(env)
        await bound_and_ready(env)
        await remove_deleted(env)
        await bound_and_ready(env)
        assert old not in await hashes(env)
        assert len(await env.live_pods()) == 2


async def test_on_delete_waits_for_the_user() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set(strategy="OnDelete"))
        await env.quiesce()
        [old] = await revisions(env)
        await env.daemon_sets.patch("agent", IMAGE)
        await env.quiesce()
        assert await hashes(env) == [old, old]
        victim = (await env.live_pods())[0]
        await env.pods.delete(str(victim.metadata.name))
        await env.quiesce()
        new = [h for h in await revisions(env) if h != old]
        assert sorted(await hashes(env)) == sorted([old, *new])
        ds = await env.ds()
        assert ds.status is not None
        assert ds.status.updated_number_scheduled == 1


async def test_rollback_renumbers_the_old_revision() -> None:
    async with running(node("n1")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        [first] = await revisions(env)
        await env.daemon_sets.patch("agent", IMAGE)
        await env.quiesce()
        back = {
            "spec": {"template": {"spec": {"containers": [{"name": "main", "image": "agent:1"}]}}}
        }
        await env.daemon_sets.patch("agent", back)
        await env.quiesce()
        revs = await revisions(env)
        assert len(revs) == 2
        assert revs[first] == 3
        assert await hashes(env) == [first]


async def test_history_beyond_the_limit_is_deleted_unless_pods_use_it() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set(strategy="OnDelete", revision_history_limit=1))
        await env.quiesce()
        [first] = await revisions(env)
        for image in ("agent:2", "agent:3", "agent:4"):
            change = {
                "spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}
            }
            await env.daemon_sets.patch("agent", change)
            await env.quiesce()
        revs = await revisions(env)
        # The limit allows one old revision: the first stays (the pods still run it), the
        # ones in between went, oldest first.
        assert revs == {first: 1, max(revs, key=revs.__getitem__): 4}
        for pod in await env.live_pods():
            await env.pods.delete(str(pod.metadata.name))
        await env.quiesce()
        change = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "x"}]}}}}
        await env.daemon_sets.patch("agent", change)
        await env.quiesce()
        revs = await revisions(env)
        assert first not in revs
        assert sorted(revs.values()) == [4, 5]
