"""The DaemonSet controller's life cycle (§11: scenario 6 and the sync's edges):
failed pods replaced under a per-node backoff, creates in slow-start bursts of at most
``burst_replicas``, create failures, hash collisions, ``minReadySeconds``, and a deleting
DaemonSet left alone."""

from __future__ import annotations

from typing import Any

import pytest

from kcm.controllerkit import compute_template_hash
from kcm.models.apps_v1 import ControllerRevision, DaemonSet
from kcm.models.meta_v1 import ObjectMeta
from tests.integration.controllers.daemonset.ds_harness import (
    NS,
    daemon_set,
    node,
    running,
)

pytestmark = pytest.mark.anyio


async def test_failed_pods_are_replaced_with_a_doubling_backoff() -> None:
    async with running(node("n1")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        [first] = await env.live_pods()
        await env.set_phase(first, "Failed")
        await env.quiesce()
        [second] = await env.live_pods()
        assert second.metadata.name != first.metadata.name
        assert env.events("FailedDaemonPod") == [
            f"Found failed daemon pod {NS}/{first.metadata.name} on node n1, will try to kill it"
        ]
        # Failing again at once: the node is in its 1 s backoff.
        await env.set_phase(second, "Failed")
        await env.quiesce()
        assert [p.metadata.name for p in await env.live_pods()] == [second.metadata.name]
        await env.advance(0.9)
        assert [p.metadata.name for p in await env.live_pods()] == [second.metadata.name]
        await env.advance(0.1)
        [third] = await env.live_pods()
        assert third.metadata.name != second.metadata.name
        # Now 2 s.
        await env.set_phase(third, "Failed")
        await env.quiesce()
        await env.advance(1.9)
        assert [p.metadata.name for p in await env.live_pods()] == [third.metadata.name]
        await env.advance(0.1)
        assert [p.metadata.name for p in await env.live_pods()] != [third.metadata.name]
        assert len(env.events("FailedDaemonPod")) == 3


async def test_creates_are_capped_per_sync_and_slow_started(monkeypatch: Any) -> None:
    async with running(*(node(f"n{i}") for i in range(5)), burst_replicas=2) as env:
        assert env.controller is not None
        batches: list[int] = []
        original = env.controller._create_pods

        async def record(ds: Any, key: Any, nodes: list[str], hash: str) -> list[Exception]:
            batches.append(len(nodes))
            return await original(ds, key, nodes, hash)

        monkeypatch.setattr(env.controller, "_create_pods", record)
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        assert len(await env.live_pods()) == 5
        assert batches == [2, 2, 1]


async def test_a_failed_create_stops_the_slow_start_and_is_retried() -> None:
    async with running(*(node(f"n{i}") for i in range(4))) as env:
        env.fail_pod_creates(1)
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        # The first batch (one create) failed: nothing else was tried in that sync.
        assert await env.live_pods() == []
        [message] = env.events("FailedCreate")
        assert message.startswith("Error creating: ")
        assert "exceeded quota" in message
        await env.advance(1)  # the retry's backoff
        assert len(await env.live_pods()) == 4
        creates = [r for r in env.requests if r[0] == "POST" and r[1].endswith("/pods")]
        assert len(creates) == 5


async def test_a_hash_collision_raises_the_collision_count() -> None:
    async with running(node("n1")) as env:
        # The template as the server stores it, to know the name the controller will want.
        probe = await env.client.api(DaemonSet, "kube-public").create(
            daemon_set().__class__(
                metadata=ObjectMeta(name="agent", namespace="kube-public"),
                spec=daemon_set().spec,
            )
        )
        assert probe.spec is not None
        taken = f"agent-{compute_template_hash(probe.spec.template, None)}"
        await env.revisions.create(
            ControllerRevision(
                metadata=ObjectMeta(name=taken, labels={"other": "owner"}),
                data={"something": "else"},
                revision=1,
            )
        )
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        await env.advance(1)
        ds = await env.ds()
        assert ds.status is not None
        assert ds.status.collision_count == 1
        assert ds.spec is not None
        names = sorted(str(r.metadata.name) for r in (await env.revisions.list()).items)
        assert names == sorted([taken, f"agent-{compute_template_hash(ds.spec.template, 1)}"])
        assert len(await env.live_pods()) == 1


async def test_min_ready_seconds_delays_availability() -> None:
    async with running(node("n1"), node("n2")) as env:
        await env.daemon_sets.create(daemon_set(min_ready_seconds=10))
        await env.quiesce()
        await env.make_all_ready()
        status = (await env.ds()).status
        assert status is not None
        # numberAvailable 0 is left out, as Go's omitempty leaves it (a Go client reads 0)
        assert (status.number_ready, status.number_available) == (2, None)
        await env.advance(10)
        status = (await env.ds()).status
        assert status is not None
        assert (status.number_ready, status.number_available) == (2, None)
        await env.advance(1)  # minReadySeconds + 1 s after turning Ready: looked at again
        status = (await env.ds()).status
        assert status is not None
        assert (status.number_ready, status.number_available, status.number_unavailable) == (
            2,
            2,
            None,
        )


async def test_a_deleting_daemon_set_is_left_alone() -> None:
    async with running(node("n1")) as env:
        await env.daemon_sets.create(daemon_set())
        await env.quiesce()
        await env.daemon_sets.delete("agent", propagation_policy="Foreground")
        await env.quiesce()
        await env.nodes.create(node("n2"))
        await env.quiesce()
        assert len(await env.live_pods()) == 1  # no pod for n2: nothing happens any more


async def test_add_to_manager_runs_it_with_its_worker_count(api_server: Any) -> None:
    import anyio
    import msgspec

    from kcm.client import ApiClient
    from kcm.controllers import daemonset
    from kcm.models.core_v1 import Node
    from kcm.runtime import Manager
    from kcm.testing import client_config_for, eventually

    config = msgspec.structs.replace(client_config_for(api_server), qps=-1)
    async with ApiClient(config) as client, anyio.create_task_group() as tg:
        await client.api(Node).create(node("n1"))
        manager = Manager(client)
        daemonset.add_to_manager(manager)
        with anyio.fail_after(10):
            await tg.start(manager.run)
        await client.api(DaemonSet, NS).create(daemon_set())

        async def scheduled() -> bool:
            status = (await client.api(DaemonSet, NS).get("agent")).status
            return status is not None and status.current_number_scheduled == 1

        await eventually(scheduled)
        workers = manager.registry.get_sample_value(
            "controller_runtime_max_concurrent_reconciles", {"controller": "daemonset"}
        )
        assert workers == daemonset.DEFAULT_WORKERS == 2
        tg.cancel_scope.cancel()
