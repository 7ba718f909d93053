"""The replica manager: keeps ``spec.replicas`` pods running for ReplicaSet-like owners.

kube-controller-manager's ``pkg/controller/replicaset`` (§2), generic over the
owner kind: one :class:`ReplicaManager` serves one kind, described by a :class:`ReplicaKind`.
The ReplicaSet and ReplicationController controllers are thin wrappers; a custom resource of
the same shape (``spec.replicas``, ``spec.minReadySeconds``, ``spec.template`` and a status
with the replica counts) can run on it too.

Each sync of an owner key: read the owner from the cache (gone: forget its expectations);
claim the namespace's active pods (adopt matching orphans, release mismatches); if the
expectations are satisfied and the owner is not being deleted, create (slow start, at most
``burst_replicas``) or delete (ranked) pods; write the status; requeue after
``minReadySeconds`` while ready pods are not yet available.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, final

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import KcmError
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import Pod
from kcm.models.meta_v1 import OwnerReference
from kcm.record import EventRecorder
from kcm.runtime import (
    Controller,
    HasMetadata,
    Request,
    Result,
    get_controller_of,
    new_controller_ref,
)
from kcm.selectors import LabelSelector, SelectorParseError
from kcm.workqueue import default_controller_rate_limiter

from ._controller_ref_manager import ControllerRefManager, recheck_deletion_timestamp
from ._error_text import error_text
from ._expectations import UIDTrackingControllerExpectations
from ._namespaces import is_namespace_terminating
from ._pod_deletion import delete_pods
from ._pod_predicates import is_pod_active
from ._pod_ranking import pods_to_delete
from ._pod_template import pod_from_template
from ._replica_events import OwnerEvents, PodEvents
from ._replica_status import calculate_replica_status, desired_replicas, replica_status_unchanged
from ._slow_start import slow_start_batch

__all__ = ["BURST_REPLICAS", "ReplicaKind", "ReplicaManager"]

logger = logging.getLogger(__name__)

BURST_REPLICAS = 500
"""At most this many pods are created or deleted in one sync (``BurstReplicas``)."""

W = TypeVar("W", bound=HasMetadata)


@final
@dataclass(frozen=True, slots=True)
class ReplicaKind(Generic[W]):
    """How a :class:`ReplicaManager` reads and writes one owner kind.

    The owner model must have ``spec.replicas``, ``spec.min_ready_seconds``,
    ``spec.template`` (a PodTemplateSpec) and a status with ``replicas``,
    ``fully_labeled_replicas``, ``ready_replicas``, ``available_replicas``,
    ``observed_generation`` and ``conditions``.

    Attributes:
        model: the owner's model class (``ReplicaSet``).
        api_version: its ``group/version`` for controller references (``"apps/v1"``).
        kind: its kind (``"ReplicaSet"``).
        selector: the owner's pod selector; may raise ``SelectorParseError``.
        status_type: the status model; condition_type: the status condition model.
    """

    model: type[W]
    api_version: str
    kind: str
    selector: Callable[[W], LabelSelector]
    status_type: type[Any]
    condition_type: type[Any]


@final
class ReplicaManager(Generic[W]):
    """Keeps ``spec.replicas`` active pods for every owner of one kind.

    Args:
        client: API client (pod creates/deletes/patches, owner GETs and status writes).
        factory: shared informer factory (the owner and Pod informers).
        kind: which owner kind (``kcm.controllers.replicaset.REPLICA_SET_KIND``, the
            ReplicationController one, or your own).
        name: the controller name (work queue and metrics).
        recorder: event sink; events go on the owner.
        clock: the work queue's clock and the "now" of availability and conditions.
        workers: concurrent syncs.
        registry: Prometheus registry for the controller and work queue metrics.
        burst_replicas: most pods created or deleted per sync.

    Guarantees:
        * While creates or deletes this manager issued are not yet seen by the Pod informer
          (expectations, 5 minutes at most), it creates and deletes nothing for that owner.
        * Pods controlled by another object are never touched.
        * A create failure stops the slow-start sequence after its batch, records
          ``FailedCreate`` and a ``ReplicaFailure`` condition, and the sync is retried with
          backoff; ``NamespaceTerminating`` failures are dropped silently.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        kind: ReplicaKind[W],
        *,
        name: str,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 5,
        registry: CollectorRegistry | None = None,
        burst_replicas: int = BURST_REPLICAS,
    ) -> None:
        self.kind = kind
        self.name = name
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self._burst = burst_replicas
        self._owner_informer = factory.informer_for(kind.model)
        self._owners = self._owner_informer.lister()
        self._pod_informer = factory.informer_for(Pod)
        self._pods = self._pod_informer.lister()
        self.expectations = UIDTrackingControllerExpectations(clock=clock)
        self.controller: Controller[ObjectKey] = Controller(
            name,
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(self._owner_informer, OwnerEvents(self))
        self.controller.watch(self._pod_informer, PodEvents(self))

    def __repr__(self) -> str:
        return f"<ReplicaManager {self.kind.kind} name={self.name!r}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync owners until cancelled; ``task_status.started()`` once the informers' initial
        lists are queued and the workers run."""
        await self.controller.run(task_status=task_status)

    # -- event helpers (synchronous, on the informers' notification path) -------------------

    def resolve_controller_ref(self, namespace: str, ref: OwnerReference) -> W | None:
        """The owner ``ref`` names, if it is of our kind and still has that UID."""
        if ref.kind != self.kind.kind or not ref.name:
            return None
        owner = self._owners.get_or_none(namespace, ref.name)
        if owner is None or owner.metadata.uid != ref.uid:
            return None
        return owner

    def owners_selecting(self, pod: Pod) -> list[ObjectKey]:
        """Keys of the owners in the pod's namespace whose (non-empty) selector matches it."""
        keys = []
        for owner in self._owners.namespace(pod.metadata.namespace or "").list():
            try:
                selector = self.kind.selector(owner)
            except SelectorParseError:
                continue
            if not selector.empty and selector.matches(pod.metadata.labels):
                keys.append(object_key(owner))
        if len(keys) > 1:
            logger.info(
                "pod %s/%s is selected by more than one %s: %s",
                pod.metadata.namespace,
                pod.metadata.name,
                self.kind.kind,
                [str(k) for k in keys],
            )
        return keys

    # -- sync --------------------------------------------------------------------------------

    async def reconcile(self, request: Request) -> Result:
        """One sync of an owner key (``syncReplicaSet``)."""
        key = request
        owner = self._owners.get_or_none(key.namespace, key.name)
        if owner is None:
            self.expectations.delete_expectations(key)
            return Result()
        needs_sync = self.expectations.satisfied(key)
        try:
            selector = self.kind.selector(owner)
        except SelectorParseError as exc:
            logger.error("%s %s has an invalid selector: %s", self.kind.kind, key, exc)
            return Result()
        pods = await self._claim_active_pods(key, owner, selector)
        manage_error: Exception | None = None
        deleted: set[str] = set()
        if needs_sync and owner.metadata.deletion_timestamp is None:
            manage_error = await self._manage_replicas(key, owner, pods, deleted)
        if deleted:
            # Unlike Kubernetes (which counts them until the deletions are observed), the
            # status leaves out the pods this sync deleted: they are terminating now. A status
            # still counting them as available lets a Deployment, in the moment before the
            # next sync, scale its old ReplicaSets down past maxUnavailable.
            pods = [p for p in pods if p.metadata.uid not in deleted]
        new_status = calculate_replica_status(
            owner,
            pods,
            manage_error,
            now=self._clock.now(),
            status_type=self.kind.status_type,
            condition_type=self.kind.condition_type,
        )
        updated = await self._update_status(owner, new_status)
        if manage_error is not None:
            raise manage_error
        return self._availability_requeue(updated)

    async def _claim_active_pods(
        self, key: ObjectKey, owner: W, selector: LabelSelector
    ) -> list[Pod]:
        """The namespace's active pods the owner claims: its own that still match, and
        matching orphans it adopts (after a live GET of the owner); the rest are released
        or ignored (:class:`ControllerRefManager`)."""
        active = [p for p in self._pods.namespace(key.namespace).list() if is_pod_active(p)]
        owner_api = self._client.api(self.kind.model, key.namespace)
        refs = ControllerRefManager(
            self._client.api(Pod, key.namespace),
            owner,
            self.kind.api_version,
            self.kind.kind,
            selector,
            can_adopt=recheck_deletion_timestamp(
                lambda: owner_api.get(key.name), owner.metadata.uid
            ),
        )
        return await refs.claim(active)

    @staticmethod
    def _availability_requeue(updated: Any) -> Result:
        """Look again after ``minReadySeconds`` while ready pods are not yet available."""
        spec: Any = getattr(updated, "spec", None)
        status: Any = getattr(updated, "status", None)
        min_ready = (spec.min_ready_seconds if spec else 0) or 0
        replicas = desired_replicas(updated)
        if (
            min_ready > 0
            and status is not None
            and (status.ready_replicas or 0) == replicas
            and (status.available_replicas or 0) != replicas
        ):
            # Go requeues after exactly minReadySeconds and relies on time having moved on
            # by the next sync; +1 s (as the pod handler does) makes "available" certain
            # then, on a fake clock too (availability needs Ready + min_ready < now).
            return Result(requeue_after=float(min_ready) + 1.0)
        return Result()

    async def _manage_replicas(
        self, key: ObjectKey, owner: W, pods: list[Pod], deleted: set[str]
    ) -> Exception | None:
        """Create or delete pods towards spec.replicas; the UIDs of pods deleted (or found
        gone) are added to ``deleted``."""
        diff = len(pods) - desired_replicas(owner)
        if diff < 0:
            return await self._create_pods(key, owner, min(-diff, self._burst))
        if diff > 0:
            return await self._delete_pods(key, owner, pods, min(diff, self._burst), deleted)
        return None

    async def _create_pods(self, key: ObjectKey, owner: W, count: int) -> Exception | None:
        spec: Any = getattr(owner, "spec", None)
        template = spec.template if spec else None
        api = self._client.api(Pod, key.namespace)
        ref = new_controller_ref(owner, self.kind.api_version, self.kind.kind)
        self.expectations.expect_creations(key, count)

        async def create() -> None:
            if template is None:
                raise ValueError(f"{self.kind.kind} {key} has no pod template")
            pod = pod_from_template(template, key.name, ref)
            try:
                created = await api.create(pod)
            except KcmError as exc:
                if is_namespace_terminating(exc):
                    return  # every create would fail; the namespace controller cleans up
                why = error_text(exc)
                self._recorder.event(owner, "Warning", "FailedCreate", f"Error creating: {why}")
                raise
            logger.debug("%s %s created pod %s", self.kind.kind, key, created.metadata.name)
            self._recorder.event(
                owner, "Normal", "SuccessfulCreate", f"Created pod: {created.metadata.name}"
            )

        successes, error = await slow_start_batch(count, create)
        skipped = count - successes
        if skipped > 0:
            # The informer will never see these: do not wait for them.
            self.expectations.lower_expectations(key, skipped, 0)
        return error

    async def _delete_pods(
        self, key: ObjectKey, owner: W, pods: list[Pod], count: int, deleted: set[str]
    ) -> Exception | None:
        victims = pods_to_delete(pods, self._related_pods(owner), count, now=self._clock.now())
        self.expectations.expect_deletions(key, [object_key(p) for p in victims])
        result = await delete_pods(
            self._client,
            key.namespace,
            victims,
            owner=owner,
            key=key,
            expectations=self.expectations,
            recorder=self._recorder,
        )
        deleted |= result.deleted
        return result.errors[0] if result.errors else None

    def _related_pods(self, owner: W) -> list[Pod]:
        """Pods of every owner sharing our controller (old and new ReplicaSets of one
        Deployment), for the "doubled up on a node" rank (``getIndirectlyRelatedPods``)."""
        ref = get_controller_of(owner)
        if ref is None:
            return []
        seen: set[str] = set()
        related: list[Pod] = []
        namespace = owner.metadata.namespace or ""
        for sibling in self._owners.namespace(namespace).list():
            sibling_ref = get_controller_of(sibling)
            if sibling_ref is None or sibling_ref.uid != ref.uid:
                continue
            try:
                selector = self.kind.selector(sibling)
            except SelectorParseError:
                continue
            for pod in self._pods.namespace(namespace).list(selector):
                uid = pod.metadata.uid or ""
                if uid not in seen:
                    seen.add(uid)
                    related.append(pod)
        return related

    async def _update_status(self, owner: W, new_status: Any) -> W:
        """Write the status unless nothing changed; one retry after a fresh GET."""
        if replica_status_unchanged(owner, new_status):
            return owner
        new_status = msgspec.structs.replace(
            new_status, observed_generation=owner.metadata.generation
        )
        api = self._client.api(self.kind.model, owner.metadata.namespace)
        current = owner
        for attempt in range(2):
            try:
                return await api.update(
                    current,
                    msgspec.structs.replace(current, status=new_status),  # type: ignore[type-var]
                    subresource="status",
                )
            except KcmError:
                if attempt == 1:
                    raise
                current = await api.get(str(owner.metadata.name))
        raise AssertionError("unreachable")  # pragma: no cover
