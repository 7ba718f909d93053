"""Scenarios shared by the ReplicaSet and ReplicationController integration tests.

Each ``scenario_*`` runs one controller against the embedded API server, the test playing
the kubelet; ``test_rs_scenarios.py`` and ``test_rc_scenarios.py`` run them for their kind.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import msgspec

from kcm.apiserver import ApiServer
from kcm.client import Api, ApiClient
from kcm.controllerkit import BURST_REPLICAS, POD_DELETION_COST_ANNOTATION
from kcm.controllers.replicaset import ReplicaSetController
from kcm.controllers.replicationcontroller import ReplicationControllerController
from kcm.errors import NotFound
from kcm.models import ObjectKey
from kcm.models.apps_v1 import ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import (
    ConfigMap,
    Namespace,
    Pod,
    ReplicationController,
    ReplicationControllerSpec,
)
from kcm.models.meta_v1 import LabelSelector, ObjectMeta
from kcm.runtime import new_controller_ref
from kcm.testing import FakeClock, client_config_for, eventually
from tests.integration.controllers.replicaset.rs_harness import (
    LABELS,
    NS,
    Running,
    bare_pod,
    owned_by,
    running,
    set_phase,
    set_ready,
    template,
)


@dataclass(frozen=True)
class Kind:
    """How a scenario builds and reads one owner kind (``name``: its controller's, as its
    metrics are labelled)."""

    name: str
    model: type[Any]
    api_version: str
    make: Callable[..., Any]

    def owner(
        self,
        name: str,
        replicas: int,
        *,
        labels: dict[str, str] | None = None,
        min_ready: int | None = None,
        annotations: dict[str, str] | None = None,
    ) -> Any:
        labels = labels or dict(LABELS)
        tpl = template(labels, annotations=annotations)
        if self.model is ReplicaSet:
            return ReplicaSet(
                metadata=ObjectMeta(name=name),
                spec=ReplicaSetSpec(
                    replicas=replicas,
                    min_ready_seconds=min_ready,
                    selector=LabelSelector(match_labels=labels),
                    template=tpl,
                ),
            )
        return ReplicationController(
            metadata=ObjectMeta(name=name),
            spec=ReplicationControllerSpec(
                replicas=replicas, min_ready_seconds=min_ready, selector=labels, template=tpl
            ),
        )

    @property
    def kind(self) -> str:
        return str(self.model.__name__)


RS = Kind("replicaset", ReplicaSet, "apps/v1", ReplicaSetController)
# the controller's name labels its metrics: Go's work queue name, replicationmanager
RC = Kind("replicationmanager", ReplicationController, "v1", ReplicationControllerController)


async def owned_pods(pods: Api[Pod], uid: str | None) -> list[Pod]:
    return [
        p
        for p in (await pods.list()).items
        if owned_by(p, uid) and p.metadata.deletion_timestamp is None
    ]


async def wait_owned(pods: Api[Pod], uid: str | None, n: int) -> list[Pod]:
    found: list[Pod] = []

    async def check() -> bool:
        nonlocal found
        found = await owned_pods(pods, uid)
        return len(found) == n

    await eventually(check)
    return found


async def wait_status(api: Api[Any], name: str, **expected: Any) -> Any:
    """Wait until the owner's status has these fields (``replicas=3`` ...)."""
    owner: Any = None

    async def check() -> bool:
        nonlocal owner
        owner = await api.get(name)
        status = owner.status
        if status is None:
            return False
        return all((getattr(status, k) or 0) == v for k, v in expected.items()) and (
            status.observed_generation == owner.metadata.generation
        )

    await eventually(check)
    return owner


async def scale(api: Api[Any], name: str, replicas: int) -> Any:
    return await api.patch(name, {"spec": {"replicas": replicas}})


def _failure(owner: Any) -> Any:
    return next((c for c in (owner.status.conditions or ()) if c.type == "ReplicaFailure"), None)


async def scenario_scale_up_in_slow_start_batches(server: ApiServer, kind: Kind) -> None:
    """7 replicas: exactly 7 creates, in batches of 1, 2 and 4; template labels, annotations,
    controllerRef; SuccessfulCreate events; then Ready pods make ready/available 7; a deleted
    pod is replaced."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        owner = await api.create(kind.owner("web", 7, annotations={"team": "a"}))
        created = await wait_owned(pods, owner.metadata.uid, 7)
        status = await wait_status(api, "web", replicas=7, fully_labeled_replicas=7)
        assert status.status.ready_replicas is None  # 0: omitempty, as Go writes it
        assert rt.tap.pod_creates() == 7
        # Slow start: create i (0-based) is in batch floor(log2(i + 1)), which starts only after
        # every create of the earlier batches (1, then 2, then 4 of them) has completed.
        for create in rt.tap.creates:
            batch = int(math.log2(create.index + 1))
            assert create.completed_before_start >= 2**batch - 1, rt.tap.creates
        ref = new_controller_ref(owner, kind.api_version, kind.kind)
        for pod in created:
            assert pod.metadata.generate_name == "web-"
            assert (pod.metadata.name or "").startswith("web-")
            assert pod.metadata.labels == LABELS
            assert pod.metadata.annotations == {"team": "a"}
            assert pod.metadata.owner_references == (ref,)
            assert pod.status is not None
            assert pod.status.phase == "Pending"
        names = sorted(str(p.metadata.name) for p in created)
        assert (
            sorted(
                e.removeprefix("Normal SuccessfulCreate Created pod: ")
                for e in rt.recorder.events
                if e.startswith("Normal SuccessfulCreate")
            )
            == names
        )
        for pod in created:
            await set_ready(pods, str(pod.metadata.name), at=server.clock.now())
        await wait_status(api, "web", replicas=7, ready_replicas=7, available_replicas=7)
        # A pod goes away (grace 0, as a kubelet would finish it): a replacement is created.
        await pods.delete(str(created[0].metadata.name), grace_period_seconds=0)
        await eventually(lambda: _creates_reached(rt, 8))
        after = await wait_owned(pods, owner.metadata.uid, 7)
        assert created[0].metadata.name not in {p.metadata.name for p in after}
        assert rt.tap.pod_creates() == 8


async def _creates_reached(rt: Running, n: int) -> bool:
    return rt.tap.pod_creates() >= n


async def scenario_scale_down_deletes_lowest_ranked_first(server: ApiServer, kind: Kind) -> None:
    """5 adopted pods of different states; scaling to 2 deletes the unscheduled, the pending
    and the not-ready one; scaling to 1 then deletes the ready pod with deletion cost -100."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        await pods.create(bare_pod("unscheduled"))
        await pods.create(bare_pod("pending", node_name="n1"))
        await pods.create(bare_pod("not-ready", node_name="n1"))
        await set_phase(pods, "not-ready", "Running")
        cheap = bare_pod("ready-cheap", node_name="n1")
        cheap = msgspec.structs.replace(
            cheap,
            metadata=msgspec.structs.replace(
                cheap.metadata, annotations={POD_DELETION_COST_ANNOTATION: "-100"}
            ),
        )
        await pods.create(cheap)
        await pods.create(bare_pod("ready", node_name="n1"))
        for name in ("ready-cheap", "ready"):
            await set_ready(pods, name, at=server.clock.now())
        owner = await api.create(kind.owner("web", 5))
        await wait_owned(pods, owner.metadata.uid, 5)
        await wait_status(api, "web", replicas=5, ready_replicas=2)
        assert rt.tap.pod_creates() == 0  # all five adopted

        await scale(api, "web", 2)
        left = await wait_owned(pods, owner.metadata.uid, 2)
        assert sorted(str(p.metadata.name) for p in left) == ["ready", "ready-cheap"]
        # The server shows a deletion before the controller has recorded its event.
        await rt.quiesce()
        deleted = sorted(
            e.removeprefix("Normal SuccessfulDelete Deleted pod: ")
            for e in rt.recorder.events
            if "SuccessfulDelete" in e
        )
        assert deleted == ["not-ready", "pending", "unscheduled"]
        with anyio.fail_after(5):
            try:  # unscheduled pods go at once; scheduled ones wait for the kubelet
                await pods.get("unscheduled")
                raise AssertionError("the unscheduled pod should be gone")
            except NotFound:
                pass
        assert (await pods.get("pending")).metadata.deletion_timestamp is not None

        await scale(api, "web", 1)
        [last] = await wait_owned(pods, owner.metadata.uid, 1)
        assert last.metadata.name == "ready"
        await wait_status(api, "web", replicas=1, ready_replicas=1)
        assert rt.tap.pod_creates() == 0


async def scenario_scale_down_status_leaves_out_the_deleted_pods(
    server: ApiServer, kind: Kind
) -> None:
    """Scaling 3 Ready pods down to 1: the status written in the sync that deletes the two
    (the first to observe the new generation) already counts 1 replica, 1 available.

    Kubernetes' own controller still counts them there until the deletions are observed; a
    Deployment reading that stale-high availability can scale its old ReplicaSets down past
    maxUnavailable (seen in the rolling-update bounds test).
    """
    async with running(server, kind.make), ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        for name in ("a", "b", "c"):  # on a node: deleted pods stay, terminating
            await pods.create(bare_pod(name, node_name="n1"))
            await set_ready(pods, name, at=server.clock.now())
        owner = await api.create(kind.owner("web", 3))
        await wait_owned(pods, owner.metadata.uid, 3)
        owner = await wait_status(api, "web", replicas=3, available_replicas=3)
        statuses: list[Any] = []
        async with api.watch(resource_version=owner.metadata.resource_version) as events:
            scaled = await scale(api, "web", 1)
            with anyio.fail_after(10):
                async for event in events:
                    status = event.object.status
                    if status is not None and status.observed_generation == (
                        scaled.metadata.generation
                    ):
                        statuses.append(status)
                        break
        [first] = statuses
        assert (first.replicas, first.ready_replicas, first.available_replicas) == (1, 1, 1)
        terminating = [p for p in (await pods.list()).items if p.metadata.deletion_timestamp]
        assert len(terminating) == 2


async def scenario_adopts_orphans_and_releases_mismatches(server: ApiServer, kind: Kind) -> None:
    """An orphan matching the selector is adopted and counted (one fewer create); a pod whose
    labels stop matching is released and replaced."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        await pods.create(bare_pod("orphan"))
        await pods.create(bare_pod("stranger", labels={"app": "db"}))
        owner = await api.create(kind.owner("web", 3))
        owned = await wait_owned(pods, owner.metadata.uid, 3)
        assert "orphan" in {p.metadata.name for p in owned}
        assert rt.tap.pod_creates() == 2
        assert (await pods.get("stranger")).metadata.owner_references is None
        await wait_status(api, "web", replicas=3)

        await pods.patch("orphan", {"metadata": {"labels": {"app": "web-debug"}}})

        async def released() -> bool:
            return not (await pods.get("orphan")).metadata.owner_references

        await eventually(released)
        owned = await wait_owned(pods, owner.metadata.uid, 3)
        assert "orphan" not in {p.metadata.name for p in owned}
        assert rt.tap.pod_creates() == 3  # the replacement
        await wait_status(api, "web", replicas=3, fully_labeled_replicas=3)


async def scenario_ignores_pods_of_other_controllers(server: ApiServer, kind: Kind) -> None:
    """Pods matching the selector but controlled by another owner are never counted, adopted
    or deleted."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        keeper = await client.api(ConfigMap, NS).create(
            ConfigMap(metadata=ObjectMeta(name="keeper"))
        )
        foreign_ref = new_controller_ref(keeper, "example.com/v1", "Keeper")
        pod = bare_pod("foreign")
        foreign = await pods.create(
            msgspec.structs.replace(
                pod,
                metadata=msgspec.structs.replace(pod.metadata, owner_references=[foreign_ref]),
            )
        )
        owner = await api.create(kind.owner("web", 2))
        await wait_owned(pods, owner.metadata.uid, 2)
        await wait_status(api, "web", replicas=2)
        assert rt.tap.pod_creates() == 2
        await scale(api, "web", 0)
        await wait_owned(pods, owner.metadata.uid, 0)
        await wait_status(api, "web", replicas=0)
        now = await pods.get("foreign")
        assert now.metadata.resource_version == foreign.metadata.resource_version
        assert now.metadata.owner_references == (foreign_ref,)
        assert not [e for e in rt.recorder.events if "foreign" in e]


async def scenario_available_replicas_honour_min_ready_seconds(
    server: ApiServer, kind: Kind
) -> None:
    """minReadySeconds=10 on a FakeClock: Ready pods count as available only after 10 s."""
    clock = FakeClock()
    async with (
        running(server, kind.make, clock=clock) as rt,
        ApiClient(client_config_for(server)) as client,
    ):
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        owner = await api.create(kind.owner("web", 2, min_ready=10))
        created = await wait_owned(pods, owner.metadata.uid, 2)
        ready_at = clock.now()
        for pod in created:
            await set_ready(pods, str(pod.metadata.name), at=ready_at)
        await wait_status(api, "web", replicas=2, ready_replicas=2, available_replicas=0)
        await clock.advance(9.5)
        await rt.quiesce()
        current = await api.get("web")
        assert current.status.available_replicas is None  # 0 (omitempty): ready for 9.5 s only
        assert current.status.ready_replicas == 2
        await clock.advance(1.0)
        await rt.quiesce()
        assert (await api.get("web")).status.available_replicas is None  # 0: 10.5 s
        await clock.advance(1.0)  # the requeue after minReadySeconds (+1 s) is due
        await wait_status(api, "web", replicas=2, ready_replicas=2, available_replicas=2)


async def scenario_create_failure_sets_replica_failure_and_retries(
    server: ApiServer, kind: Kind
) -> None:
    """Rejected creates: each sync makes one failing call (slow start), records FailedCreate
    and sets ReplicaFailure/FailedCreate; retries wait for the backoff (FakeClock); once
    creates succeed the pods appear and the condition goes away."""
    clock = FakeClock()
    async with (
        running(server, kind.make, clock=clock) as rt,
        ApiClient(client_config_for(server)) as client,
    ):
        rt.tap.fail_creates = 1_000
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        owner = await api.create(kind.owner("web", 3))

        failed: Any = None

        async def has_failure() -> bool:
            nonlocal failed
            failed = await api.get("web")
            return failed.status is not None and _failure(failed) is not None

        await eventually(has_failure)
        await rt.quiesce()  # the condition's own update event syncs once more
        condition = _failure(failed)
        assert (condition.status, condition.reason) == ("True", "FailedCreate")
        assert "exceeded quota" in (condition.message or "")
        assert failed.status.replicas == 0
        # Slow start: every sync stopped after its first (failing) call, not three calls each.
        attempts = rt.tap.pod_creates()
        assert 1 <= attempts <= 2
        assert all(c.failed and c.completed_before_start == c.index for c in rt.tap.creates)
        failures = [e for e in rt.recorder.events if e.startswith("Warning FailedCreate")]
        assert len(failures) == attempts
        # kube's text: the Status message alone, without "403 Forbidden: " in front
        assert "Error creating: " in failures[0]
        assert "exceeded quota" in failures[0]
        assert "403 Forbidden" not in failures[0]
        await clock.advance(1.0)  # backoff elapses: retried (still failing)
        await rt.quiesce()
        assert rt.tap.pod_creates() > attempts
        rt.tap.fail_creates = 0  # quota freed
        attempts = rt.tap.pod_creates()
        await clock.advance(10.0)
        await wait_owned(pods, owner.metadata.uid, 3)
        await wait_status(api, "web", replicas=3)

        async def condition_gone() -> bool:
            return _failure(await api.get("web")) is None

        await eventually(condition_gone)
        assert rt.tap.pod_creates() == attempts + 3


async def scenario_failed_batch_stops_slow_start(server: ApiServer, kind: Kind) -> None:
    """10 replicas, every create after the first fails: batch 1 (one call) succeeds, batch 2
    (two calls) fails and nothing more is tried in that sync; later syncs try one call each
    until the backoff (FakeClock) holds them; once creates work the other 9 appear."""
    clock = FakeClock()
    async with (
        running(server, kind.make, clock=clock) as rt,
        ApiClient(client_config_for(server)) as client,
    ):
        rt.tap.fail_create_at = set(range(1, 1000))
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        owner = await api.create(kind.owner("web", 10))
        await wait_owned(pods, owner.metadata.uid, 1)
        await wait_status(api, "web", replicas=1)
        await rt.quiesce()
        first, *batch2 = rt.tap.creates[:3]
        assert not first.failed
        assert [c.failed for c in batch2] == [True, True]
        assert [c.completed_before_start for c in batch2] == [1, 1]  # concurrent, after batch 1
        later = rt.tap.creates[3:]
        assert len(later) <= 3  # not 9 per sync
        assert all(c.completed_before_start == c.index for c in later)  # one call per sync
        rt.tap.fail_create_at = set()
        attempts = rt.tap.pod_creates()
        await clock.advance(10.0)
        await wait_owned(pods, owner.metadata.uid, 10)
        await wait_status(api, "web", replicas=10)
        assert rt.tap.pod_creates() == attempts + 9


async def scenario_expectations_stop_double_creates(server: ApiServer, kind: Kind) -> None:
    """The pod informer lags behind the controller's own creates: syncs in between (an owner
    update, explicit enqueues) create nothing more; once the events arrive all is settled."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        gate = anyio.Event()
        rt.tap.pod_watch_gate = gate  # pod watch events are held from now on
        owner = await api.create(kind.owner("web", 3))
        await eventually(lambda: _creates_reached(rt, 3))
        await wait_status(api, "web", replicas=0)  # the cache shows no pods yet
        key = ObjectKey(NS, "web")
        assert rt.controller.expectations.get(key) == (3, 0)
        await rt.quiesce()
        done = rt.reconciles(kind.name)
        await api.patch("web", {"metadata": {"annotations": {"poke": "1"}}})

        async def synced(n: int) -> bool:
            return rt.reconciles(kind.name) >= done + n

        await eventually(lambda: synced(1))
        await rt.quiesce()
        rt.controller.manager.controller.enqueue(key)
        await eventually(lambda: synced(2))
        await rt.quiesce()
        assert rt.tap.pod_creates() == 3  # without expectations: 3 more per sync
        gate.set()
        await wait_owned(pods, owner.metadata.uid, 3)
        await wait_status(api, "web", replicas=3)
        assert rt.controller.expectations.satisfied(key)
        assert rt.tap.pod_creates() == 3


async def scenario_namespace_terminating_is_swallowed(server: ApiServer, kind: Kind) -> None:
    """Creates refused because the namespace is terminating raise no event and no
    ReplicaFailure condition."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        namespaces = client.api(Namespace)
        await namespaces.create(Namespace(metadata=ObjectMeta(name="doomed")))
        api = client.api(kind.model, "doomed")
        await api.create(kind.owner("web", 0))
        await wait_status(api, "web", replicas=0)
        await namespaces.delete("doomed")  # stays Terminating: no namespace controller runs
        updated = await scale(api, "web", 2)
        await eventually(lambda: _creates_reached(rt, 2))
        current = await wait_status(api, "web", replicas=0)
        assert current.metadata.generation == updated.metadata.generation
        assert _failure(current) is None
        assert not [e for e in rt.recorder.events if e.startswith("Warning")]


async def scenario_expectations_expire(server: ApiServer, kind: Kind) -> None:
    """Creates the informer never reports stop blocking the owner after 5 minutes (FakeClock):
    the next sync acts on what the cache shows."""
    clock = FakeClock()
    async with (
        running(server, kind.make, clock=clock) as rt,
        ApiClient(client_config_for(server)) as client,
    ):
        api = client.api(kind.model, NS)
        rt.tap.pod_watch_gate = anyio.Event()  # never opened: the pod events are lost
        await api.create(kind.owner("web", 2))
        await eventually(lambda: _creates_reached(rt, 2))
        await rt.quiesce()
        key = ObjectKey(NS, "web")
        await clock.advance(299.0)
        rt.controller.manager.controller.enqueue(key)
        await rt.quiesce()
        assert rt.tap.pod_creates() == 2
        await clock.advance(2.0)
        assert rt.controller.expectations.satisfied(key)
        rt.controller.manager.controller.enqueue(key)
        await eventually(lambda: _creates_reached(rt, 4))  # the cache still shows no pods


async def scenario_burst_limit_caps_creates_per_sync(server: ApiServer, kind: Kind) -> None:
    """600 replicas: one sync creates at most 500 pods (burstReplicas), in slow-start batches
    of 1, 2, 4 ... 128 and then the 245 left; while the informer has not seen them nothing
    more is created; once it has, the next sync creates the other 100."""
    async with running(server, kind.make) as rt, ApiClient(client_config_for(server)) as client:
        api = client.api(kind.model, NS)
        pods = client.api(Pod, NS)
        gate = anyio.Event()
        rt.tap.pod_watch_gate = gate  # the informer does not see the creates yet
        owner = await api.create(kind.owner("web", 600))
        await eventually(lambda: _creates_reached(rt, BURST_REPLICAS), within=60)
        await wait_status(api, "web", replicas=0)
        await rt.quiesce()
        await api.patch("web", {"metadata": {"annotations": {"poke": "1"}}})  # one more sync
        await rt.quiesce()
        assert rt.tap.pod_creates() == BURST_REPLICAS == 500
        sizes = [1, 2, 4, 8, 16, 32, 64, 128, 245]
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        for batch, (start, size) in enumerate(zip(starts, sizes, strict=True)):
            for create in rt.tap.creates[start : start + size]:
                # every create of a batch starts after all earlier batches completed
                assert create.completed_before_start >= start, (batch, create)
            if batch + 1 < len(sizes):
                # and the next batch waited for this whole batch
                nxt = rt.tap.creates[start + size]
                assert nxt.completed_before_start >= start + size
        gate.set()
        await wait_owned(pods, owner.metadata.uid, 600)
        await wait_status(api, "web", replicas=600)
        assert rt.tap.pod_creates() == 600
