"""The DaemonSet controller: one pod of each DaemonSet on every node that should run it
(kube-controller-manager's ``pkg/controller/daemon``).

One sync of a DaemonSet key (``syncDaemonSet``):

1. gone: forget its expectations; selector ``{}``: Warning ``SelectingAll``, nothing else;
   deleting: nothing (its revisions may already be gone, so no status either);
2. history: the ControllerRevision holding the current template is found (its number raised
   above the others if needed, duplicates merged) or created; its hash labels new pods;
3. expectations not satisfied: only the status (observedGeneration untouched);
4. manage: per node, create the missing pod (pinned by node affinity, slow start, at most
   250), delete Failed pods (per-node backoff 1 s doubling to 15 min, Warning
   ``FailedDaemonPod``), surplus pods, and pods on nodes they may no longer run on;
   unscheduled pods pinned to nodes that no longer exist;
5. RollingUpdate (expectations satisfied): the next old pods to replace, within maxUnavailable
   and maxSurge (OnDelete: nothing);
6. revisions beyond ``revisionHistoryLimit`` that no pod uses are deleted, oldest first;
7. the status counts and observedGeneration.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import final

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient, PatchType
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    ControllerRefManager,
    UIDTrackingControllerExpectations,
    compute_template_hash,
    delete_pods,
    error_text,
    is_namespace_terminating,
    is_pod_available,
    is_pod_ready,
    pod_from_template,
    recheck_deletion_timestamp,
    slow_start_batch,
)
from kcm.errors import AlreadyExists, Conflict, KcmError
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key, resource_info_for
from kcm.models.apps_v1 import ControllerRevision, DaemonSet, DaemonSetStatus
from kcm.models.core_v1 import Node, Pod
from kcm.models.meta_v1 import OwnerReference
from kcm.record import EventRecorder
from kcm.runtime import Controller, Request, Result, new_controller_ref
from kcm.selectors import LabelSelector
from kcm.workqueue import default_controller_rate_limiter

from ._backoff import FailedPodBackoff
from ._events import DaemonSetEvents, NodeEvents, PodEvents, RevisionEvents
from ._placement import node_should_run_daemon_pod, replace_node_name_affinity, target_node_name
from ._pods import (
    CONTROLLER_REVISION_HASH_LABEL,
    daemon_pod_template,
    sort_daemon_pods,
    template_generation,
)
from ._revisions import matches_revision, new_revision
from ._rollout import (
    DEFAULT_REVISION_HISTORY_LIMIT,
    ROLLING_UPDATE,
    allows_surge,
    max_surge_and_unavailable,
    plan_rolling_update,
    with_server_defaults,
)
from ._status import calculate_status, status_unchanged

__all__ = [
    "BURST_REPLICAS",
    "DEFAULT_WORKERS",
    "FAILED_DAEMON_POD",
    "SELECTING_ALL",
    "DaemonSetController",
]

logger = logging.getLogger(__name__)

BURST_REPLICAS = 250
"""At most this many daemon pods are created, and as many deleted, per sync."""
DEFAULT_WORKERS = 2
"""``ConcurrentDaemonSetSyncs`` (``--concurrent-daemonset-syncs``)."""
SELECTING_ALL = "SelectingAll"
FAILED_DAEMON_POD = "FailedDaemonPod"
_BACKOFF_GC_INTERVAL = 60.0

NodePods = dict[str, list[Pod]]


@final
class DaemonSetController:
    """Runs one pod of every DaemonSet on each node that should run it (a Runnable).

    Args:
        client: the API client (pods, ControllerRevisions, DaemonSet status).
        factory: the shared informer factory (DaemonSets, ControllerRevisions, Pods, Nodes);
            run it alongside.
        recorder: event sink; events go on the DaemonSet (``SuccessfulCreate``,
            ``FailedCreate``, ``SuccessfulDelete``, ``FailedDelete``, ``FailedDaemonPod``,
            ``SelectingAll``).
        clock: the work queue's, the backoff's and availability's clock.
        workers: concurrent syncs (``--concurrent-daemonset-syncs``, 2).
        registry: Prometheus registry for the controller and work queue metrics.
        burst_replicas: most pods created, and deleted, per sync (250).

    Guarantees:
        * While creates or deletes it issued are not yet seen by the pod informer
          (expectations, 5 minutes at most) it creates and deletes nothing for that
          DaemonSet, so a slow cache never doubles a daemon.
        * Pods controlled by another object are never touched; matching orphans are adopted
          after a live read of the DaemonSet.
        * A RollingUpdate never takes more than maxUnavailable nodes' pods down at once (old
          pods that are already unavailable excepted), and with maxSurge runs at most two pods
          per node, deleting the old one only once the new one is available.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = DEFAULT_WORKERS,
        registry: CollectorRegistry | None = None,
        burst_replicas: int = BURST_REPLICAS,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self._burst = burst_replicas
        ds_informer = factory.informer_for(DaemonSet)
        revision_informer = factory.informer_for(ControllerRevision)
        pod_informer = factory.informer_for(Pod)
        node_informer = factory.informer_for(Node)
        self._daemon_sets = ds_informer.lister()
        self._revisions = revision_informer.lister()
        self._pods = pod_informer.lister()
        self._nodes = node_informer.lister()
        self.expectations = UIDTrackingControllerExpectations(clock=clock)
        self.failed_pods_backoff = FailedPodBackoff(clock=clock)
        self._last_backoff_gc = clock.monotonic()
        self.controller: Controller[ObjectKey] = Controller(
            "daemonset",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(ds_informer, DaemonSetEvents(self), kind="DaemonSet")
        self.controller.watch(revision_informer, RevisionEvents(self), kind="ControllerRevision")
        self.controller.watch(pod_informer, PodEvents(self), kind="Pod")
        self.controller.watch(node_informer, NodeEvents(self), kind="Node")

    def __repr__(self) -> str:
        return "<DaemonSetController>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync DaemonSets until cancelled; ``task_status.started()`` once the caches synced
        and the workers run."""
        await self.controller.run(task_status=task_status)

    # -- lookups for the event handlers ------------------------------------------------------

    def daemon_sets(self) -> list[DaemonSet]:
        """Every cached DaemonSet."""
        return self._daemon_sets.list()

    def resolve_controller_ref(self, namespace: str, ref: OwnerReference) -> DaemonSet | None:
        """The DaemonSet ``ref`` names, if it is one and still has that UID."""
        if ref.kind != "DaemonSet" or not ref.name:
            return None
        ds = self._daemon_sets.get_or_none(namespace, ref.name)
        return ds if ds is not None and ds.metadata.uid == ref.uid else None

    def daemon_sets_selecting(
        self, namespace: str, labels: Mapping[str, str] | None
    ) -> list[ObjectKey]:
        """Keys of the namespace's DaemonSets whose (non-empty) selector matches ``labels``."""
        keys = []
        for ds in self._daemon_sets.namespace(namespace).list():
            selector = _selector(ds)
            if selector is not None and not selector.empty and selector.matches(labels):
                keys.append(object_key(ds))
        if len(keys) > 1:
            logger.info("more than one DaemonSet selects labels %s: %s", labels, keys)
        return keys

    # -- sync ----------------------------------------------------------------------------------

    async def reconcile(self, request: Request) -> Result:
        """One sync of a DaemonSet key (see the module docstring)."""
        key = request
        self._gc_backoff()
        cached = self._daemon_sets.get_or_none(key.namespace, key.name)
        if cached is None:
            self.expectations.delete_expectations(key)
            return Result()
        nodes = sorted(self._nodes.list(), key=lambda n: n.metadata.name or "")
        selector = cached.spec.selector if cached.spec else None
        if selector is not None and not selector.match_labels and not selector.match_expressions:
            self._recorder.event(
                cached,
                "Warning",
                SELECTING_ALL,
                "This daemon set is selecting all pods. A non-empty selector is required.",
            )
            return Result()
        if cached.metadata.deletion_timestamp is not None:
            return Result()
        ds = with_server_defaults(cached)
        current, old = await self._construct_history(ds)
        hash = (current.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL, "")
        if not self.expectations.satisfied(key):
            await self._update_status(ds, nodes, hash, observed=False)
            return Result()
        await self._manage(ds, nodes, hash)
        if self.expectations.satisfied(key) and _strategy(ds) == ROLLING_UPDATE:
            await self._rolling_update(ds, nodes, hash)
        await self._cleanup_history(ds, old)
        await self._update_status(ds, nodes, hash, observed=True)
        return Result()

    def _gc_backoff(self) -> None:
        now = self._clock.monotonic()
        if now - self._last_backoff_gc >= _BACKOFF_GC_INTERVAL:
            self._last_backoff_gc = now
            self.failed_pods_backoff.gc()

    # -- pods by node --------------------------------------------------------------------------

    async def _daemon_pods(self, ds: DaemonSet) -> list[Pod]:
        """The namespace's pods ``ds`` controls, after adopting matching orphans and releasing
        its pods that stopped matching (``getDaemonPods``)."""
        namespace = ds.metadata.namespace or ""
        manager = ControllerRefManager(
            self._client.api(Pod, namespace),
            ds,
            "apps/v1",
            "DaemonSet",
            _selector(ds) or LabelSelector.nothing(),
            can_adopt=self._recheck(ds),
        )
        return await manager.claim(self._pods.namespace(namespace).list())

    def _recheck(self, ds: DaemonSet) -> Callable[[], Awaitable[None]]:
        api = self._client.api(DaemonSet, ds.metadata.namespace or "")
        name = str(ds.metadata.name)
        return recheck_deletion_timestamp(lambda: api.get(name), ds.metadata.uid)

    async def _node_to_pods(self, ds: DaemonSet) -> NodePods:
        """Claimed pods by the node they are for (``nodeName``, else the node affinity pin);
        pods for no node are left out (``getNodesToDaemonPods``)."""
        out: NodePods = {}
        for pod in await self._daemon_pods(ds):
            node = target_node_name(pod)
            if node is None:
                logger.warning(
                    "pod %s/%s of DaemonSet %s is for no node",
                    pod.metadata.namespace,
                    pod.metadata.name,
                    ds.metadata.name,
                )
                continue
            out.setdefault(node, []).append(pod)
        return out

    # -- manage --------------------------------------------------------------------------------

    async def _manage(self, ds: DaemonSet, nodes: Sequence[Node], hash: str) -> None:
        """Create the missing pods and delete the ones that must go (``manage``)."""
        node_to_pods = await self._node_to_pods(ds)
        create: list[str] = []
        delete: list[Pod] = []
        for node in nodes:
            needs, extra = self._pods_should_be_on_node(node, node_to_pods, ds, hash)
            create += needs
            delete += extra
        existing = {n.metadata.name for n in nodes}
        for node_name, pods in sorted(node_to_pods.items()):
            if node_name not in existing:
                # Pinned to a node that is gone and never bound: podgc will not see them.
                delete += [p for p in pods if not (p.spec and p.spec.node_name)]
        await self._sync_nodes(ds, delete, create, hash)

    def _pods_should_be_on_node(
        self, node: Node, node_to_pods: NodePods, ds: DaemonSet, hash: str
    ) -> tuple[list[str], list[Pod]]:
        """``(nodes needing a pod, pods to delete)`` for one node (``podsShouldBeOnNode``)."""
        name = node.metadata.name or ""
        placement = node_should_run_daemon_pod(node, ds)
        pods = node_to_pods.get(name)
        if placement.should_run and not pods:
            return [name], []
        if not placement.should_continue_running:
            return [], [p for p in pods or () if p.metadata.deletion_timestamp is None]
        delete: list[Pod] = []
        running: list[Pod] = []
        for pod in pods or ():
            if pod.metadata.deletion_timestamp is not None:
                continue
            if (pod.status.phase if pod.status else None) == "Failed":
                if self._failed_pod_may_go(ds, name, pod):
                    delete.append(pod)
            else:
                running.append(pod)
        running = sort_daemon_pods(running)
        if not allows_surge(ds):
            return [], delete + running[1:]  # the oldest stays
        if len(running) <= 1:
            return ([name] if not running and placement.should_run else []), delete
        return [], delete + self._surge_excess(ds, running, hash)

    def _failed_pod_may_go(self, ds: DaemonSet, node: str, pod: Pod) -> bool:
        """Whether a Failed pod may be deleted now; if not, the DaemonSet is looked at again
        when its node's backoff has passed."""
        generation = (ds.status.observed_generation if ds.status else None) or 0
        backoff_key = f"{ds.metadata.uid}/{generation}/{node}"
        if self.failed_pods_backoff.in_backoff(backoff_key):
            delay = self.failed_pods_backoff.get(backoff_key)
            logger.info(
                "deleting failed pod %s/%s on node %s is limited by backoff (%.0f s)",
                pod.metadata.namespace,
                pod.metadata.name,
                node,
                delay,
            )
            self.controller.queue.add_after(object_key(ds), delay)
            return False
        self.failed_pods_backoff.next(backoff_key)
        message = (
            f"Found failed daemon pod {pod.metadata.namespace}/{pod.metadata.name} on node "
            f"{node}, will try to kill it"
        )
        logger.info("%s", message)
        self._recorder.event(ds, "Warning", FAILED_DAEMON_POD, message)
        return True

    def _surge_excess(self, ds: DaemonSet, running: list[Pod], hash: str) -> list[Pod]:
        """With surge, a node keeps its oldest new and oldest old pod; the old one goes once it
        is not ready or the new one is available."""
        oldest_new: Pod | None = None
        oldest_old: Pod | None = None
        delete: list[Pod] = []
        for pod in running:
            if (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL) == hash:
                if oldest_new is None:
                    oldest_new = pod
                    continue
            elif oldest_old is None:
                oldest_old = pod
                continue
            delete.append(pod)
        if oldest_new is not None and oldest_old is not None:
            min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
            if not is_pod_ready(oldest_old) or is_pod_available(
                oldest_new, min_ready, self._clock.now()
            ):
                delete.append(oldest_old)
        return delete

    async def _sync_nodes(
        self, ds: DaemonSet, delete: Sequence[Pod], create: Sequence[str], hash: str
    ) -> None:
        """Delete ``delete`` and create a pod on each node of ``create``, at most the burst of
        each (``syncNodes``); expectations first. Raises the failures (one, or a group)."""
        key = object_key(ds)
        create = list(create)[: self._burst]
        delete = list(delete)[: self._burst]
        self.expectations.expect_deletions(key, [object_key(p) for p in delete])
        self.expectations.raise_expectations(key, len(create), 0)
        errors: list[Exception] = []
        if create:
            errors += await self._create_pods(ds, key, create, hash)
        if delete:
            errors += await self._delete_pods(ds, key, delete)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup(f"syncing DaemonSet {key}", errors)

    async def _create_pods(
        self, ds: DaemonSet, key: ObjectKey, nodes: list[str], hash: str
    ) -> list[Exception]:
        spec_template = ds.spec.template if ds.spec else None
        if spec_template is None:
            raise ValueError(f"DaemonSet {key} has no pod template")
        template = daemon_pod_template(spec_template, template_generation(ds), hash)
        info = resource_info_for(DaemonSet)
        ref = new_controller_ref(ds, info.api_version, info.kind)
        api = self._client.api(Pod, key.namespace)
        todo = iter(nodes)
        attempted = 0
        errors: list[Exception] = []

        async def create() -> None:
            nonlocal attempted
            node = next(todo)
            attempted += 1
            pod = pod_from_template(template, key.name, ref)
            assert pod.spec is not None
            affinity = replace_node_name_affinity(pod.spec.affinity, node)
            pod = msgspec.structs.replace(
                pod, spec=msgspec.structs.replace(pod.spec, affinity=affinity)
            )
            try:
                created = await api.create(pod)
            except Exception as exc:
                if is_namespace_terminating(exc):
                    return  # every create would fail; the namespace controller cleans up
                self._recorder.event(
                    ds, "Warning", "FailedCreate", f"Error creating: {error_text(exc)}"
                )
                self.expectations.creation_observed(key)
                errors.append(exc)
                raise
            self._recorder.event(
                ds, "Normal", "SuccessfulCreate", f"Created pod: {created.metadata.name}"
            )

        await slow_start_batch(len(nodes), create)
        skipped = len(nodes) - attempted
        if skipped:
            # Never attempted after a failing batch: the informer will not see them.
            self.expectations.lower_expectations(key, skipped, 0)
        return errors

    async def _delete_pods(self, ds: DaemonSet, key: ObjectKey, pods: list[Pod]) -> list[Exception]:
        result = await delete_pods(
            self._client,
            key.namespace,
            pods,
            owner=ds,
            key=key,
            expectations=self.expectations,
            recorder=self._recorder,
        )
        return result.errors

    # -- rolling update ------------------------------------------------------------------------

    async def _rolling_update(self, ds: DaemonSet, nodes: Sequence[Node], hash: str) -> None:
        """Replace the next old pods (``rollingUpdate``)."""
        node_to_pods = await self._node_to_pods(ds)
        desired = 0
        for node in nodes:
            if node_should_run_daemon_pod(node, ds).should_run:
                desired += 1
                node_to_pods.setdefault(node.metadata.name or "", [])
        try:
            max_surge, max_unavailable = max_surge_and_unavailable(ds, desired)
        except ValueError as exc:
            raise ValueError(f"couldn't get unavailable numbers: {exc}") from exc
        plan = plan_rolling_update(
            ds,
            node_to_pods,
            max_surge,
            max_unavailable,
            hash,
            template_generation(ds),
            self._clock.now(),
        )
        await self._sync_nodes(ds, plan.pods_to_delete, plan.nodes_to_create, hash)

    # -- history -------------------------------------------------------------------------------

    async def _controlled_revisions(self, ds: DaemonSet) -> list[ControllerRevision]:
        """The namespace's ControllerRevisions ``ds`` controls, after adopting and releasing
        (``controlledHistories``)."""
        namespace = ds.metadata.namespace or ""
        manager = ControllerRefManager(
            self._client.api(ControllerRevision, namespace),
            ds,
            "apps/v1",
            "DaemonSet",
            _selector(ds) or LabelSelector.nothing(),
            can_adopt=self._recheck(ds),
        )
        return await manager.claim(self._revisions.namespace(namespace).list())

    async def _construct_history(
        self, ds: DaemonSet
    ) -> tuple[ControllerRevision, list[ControllerRevision]]:
        """``(current revision, old revisions)``: the current one found (renumbered above the
        others, duplicates merged) or created (``constructHistory``)."""
        api = self._client.api(ControllerRevision, ds.metadata.namespace or "")
        current: list[ControllerRevision] = []
        old: list[ControllerRevision] = []
        for revision in await self._controlled_revisions(ds):
            labels = revision.metadata.labels or {}
            if CONTROLLER_REVISION_HASH_LABEL not in labels:
                # Revisions of old controllers lack the label; the name stands in for the hash.
                labelled = {**labels, CONTROLLER_REVISION_HASH_LABEL: revision.metadata.name or ""}
                revision = await api.update(
                    revision,
                    msgspec.structs.replace(
                        revision,
                        metadata=msgspec.structs.replace(revision.metadata, labels=labelled),
                    ),
                )
            (current if matches_revision(ds, revision) else old).append(revision)
        number = max((r.revision or 0 for r in old), default=0) + 1
        if not current:
            return await self._snapshot(ds, number), old
        cur = await self._dedup_revisions(ds, current)
        if (cur.revision or 0) < number:
            cur = await api.update(cur, msgspec.structs.replace(cur, revision=number))
        return cur, old

    async def _snapshot(self, ds: DaemonSet, number: int) -> ControllerRevision:
        """Create the revision of ``ds``'s template; a name taken by other data raises the
        collision count and fails the sync, whose retry uses the next name (``snapshot``)."""
        collisions = ds.status.collision_count if ds.status else None
        hash = compute_template_hash(ds.spec.template if ds.spec else None, collisions)
        revision = new_revision(ds, hash, number)
        api = self._client.api(ControllerRevision, ds.metadata.namespace or "")
        try:
            return await api.create(revision)
        except AlreadyExists as exc:
            existing = await api.get(str(revision.metadata.name))
            if matches_revision(ds, existing):
                return existing
            ds_api = self._client.api(DaemonSet, ds.metadata.namespace or "")
            live = await ds_api.get(str(ds.metadata.name))
            live_collisions = live.status.collision_count if live.status else None
            if live_collisions != collisions:
                raise Conflict(
                    f"found a stale collision count ({collisions}, expected {live_collisions}) "
                    f"of DaemonSet {ds.metadata.name!r} while processing; will retry until it "
                    "is updated"
                ) from exc
            status = live.status or DaemonSetStatus()
            bumped = msgspec.structs.replace(status, collision_count=(collisions or 0) + 1)
            await ds_api.update(
                live, msgspec.structs.replace(live, status=bumped), subresource="status"
            )
            logger.info(
                "hash collision for DaemonSet %s/%s: collisionCount now %d",
                ds.metadata.namespace,
                ds.metadata.name,
                (collisions or 0) + 1,
            )
            raise

    async def _dedup_revisions(
        self, ds: DaemonSet, current: list[ControllerRevision]
    ) -> ControllerRevision:
        """Keep the highest-numbered of several revisions with the current template; relabel
        pods carrying another one's hash, then delete the others (``dedupCurHistories``)."""
        if len(current) == 1:
            return current[0]
        keep = current[0]
        for revision in current:
            if (revision.revision or 0) >= (keep.revision or 0):
                keep = revision
        keep_hash = (keep.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL, "")
        namespace = ds.metadata.namespace or ""
        pods = self._client.api(Pod, namespace)
        revisions = self._client.api(ControllerRevision, namespace)
        for revision in current:
            if revision.metadata.name == keep.metadata.name:
                continue
            for pod in await self._daemon_pods(ds):
                if (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL) != keep_hash:
                    await pods.patch(
                        str(pod.metadata.name),
                        {"metadata": {"labels": {CONTROLLER_REVISION_HASH_LABEL: keep_hash}}},
                        patch_type=PatchType.MERGE,
                    )
            await revisions.delete(str(revision.metadata.name))
        return keep

    async def _cleanup_history(self, ds: DaemonSet, old: Sequence[ControllerRevision]) -> None:
        """Delete the oldest revisions beyond ``revisionHistoryLimit`` that no pod of ``ds``
        still carries the hash of (``cleanupHistory``)."""
        limit = ds.spec.revision_history_limit if ds.spec else None
        excess = len(old) - (DEFAULT_REVISION_HISTORY_LIMIT if limit is None else limit)
        if excess <= 0:
            return
        live = {
            hash
            for pods in (await self._node_to_pods(ds)).values()
            for pod in pods
            if (hash := (pod.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL))
        }
        api = self._client.api(ControllerRevision, ds.metadata.namespace or "")
        for revision in sorted(old, key=lambda r: r.revision or 0):
            if excess <= 0:
                break
            if (revision.metadata.labels or {}).get(CONTROLLER_REVISION_HASH_LABEL) in live:
                continue
            await api.delete(str(revision.metadata.name))
            excess -= 1

    # -- status --------------------------------------------------------------------------------

    async def _update_status(
        self, ds: DaemonSet, nodes: Sequence[Node], hash: str, *, observed: bool
    ) -> None:
        """Write the status counts (and, after a full sync, observedGeneration) unless they are
        current; one retry after a fresh read. Looks again after ``minReadySeconds`` + 1 s while
        ready pods are not yet available."""
        node_to_pods = await self._node_to_pods(ds)
        now = self._clock.now()
        status = calculate_status(ds, nodes, node_to_pods, hash, template_generation(ds), now)
        if observed:
            status = msgspec.structs.replace(status, observed_generation=ds.metadata.generation)
        if not status_unchanged(ds, status):
            await self._store_status(ds, status)
        min_ready = (ds.spec.min_ready_seconds if ds.spec else None) or 0
        if min_ready > 0 and status.number_ready != status.number_available:
            self.controller.queue.add_after(object_key(ds), float(min_ready) + 1.0)

    async def _store_status(self, ds: DaemonSet, status: DaemonSetStatus) -> None:
        api = self._client.api(DaemonSet, ds.metadata.namespace or "")
        current = ds
        for attempt in range(2):
            base = current.status or DaemonSetStatus()
            counts = {f: getattr(status, f) for f in _STATUS_FIELDS}
            for field in _OMITTED_WHEN_ZERO:  # as Go's omitempty writes them
                counts[field] = counts[field] or None
            new = msgspec.structs.replace(current, status=msgspec.structs.replace(base, **counts))
            try:
                await api.update(current, new, subresource="status")
                return
            except KcmError:
                if attempt == 1:
                    raise
                current = await api.get(str(ds.metadata.name))


_STATUS_FIELDS = (
    "desired_number_scheduled",
    "current_number_scheduled",
    "number_misscheduled",
    "number_ready",
    "updated_number_scheduled",
    "number_available",
    "number_unavailable",
    "observed_generation",
)

_OMITTED_WHEN_ZERO = (
    "updated_number_scheduled",
    "number_available",
    "number_unavailable",
    "observed_generation",
)


def _selector(ds: DaemonSet) -> LabelSelector | None:
    selector = ds.spec.selector if ds.spec else None
    return LabelSelector.from_model(selector) if selector is not None else None


def _strategy(ds: DaemonSet) -> str | None:
    strategy = ds.spec.update_strategy if ds.spec else None
    return strategy.type if strategy else None
