"""The Job controller: runs a Job's pods until enough succeed, or the Job fails.

kube-controller-manager's ``job`` controller (§8; with the finalizer-based
tracking of Kubernetes 1.26+). Each sync of one Job:

1. claims the pods its selector matches (adopting orphans with the tracking finalizer);
2. counts finished pods that still carry the ``batch.kubernetes.io/job-tracking`` finalizer
   and records their UIDs in ``status.uncountedTerminatedPods`` (so a crash between the
   status write and the finalizer removal never loses or double-counts a pod), removes their
   finalizers, then moves them into ``succeeded``/``failed``;
3. decides whether the Job has failed (pod failure policy ``FailJob``, backoff limit,
   active deadline) or succeeded, marking it first with the interim ``FailureTarget`` /
   ``SuccessCriteriaMet`` condition and then, once no pod is left to account for, with
   ``Failed`` / ``Complete``;
4. otherwise (creations and deletions it expects all observed) creates or deletes pods so
   that ``min(parallelism, completions - succeeded)`` are active, or deletes them all while
   ``suspend`` is true. Replacement pods wait out an exponential backoff of 10 s, 20 s,
   40 s, ... (capped at 6 minutes) after consecutive failures, counted from the failed pods'
   own finish times (so a restarted controller waits only what is left), on the injected
   clock.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Unpack

import anyio
from anyio.abc import TaskStatus

from kcm.client import ApiClient, PatchType
from kcm.controllerkit import (
    ControllerBase,
    ControllerOptions,
    UIDTrackingControllerExpectations,
    is_finished,
)
from kcm.controllers import add_controller
from kcm.errors import KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.batch_v1 import Job
from kcm.models.core_v1 import Pod
from kcm.runtime import (
    Controller,
    Manager,
    Result,
    enqueue_object,
    get_controller_of,
)
from kcm.selectors import LabelSelector

from ._backoff import DEFAULT_BACKOFF, MAX_BACKOFF, BackoffRecord
from ._pods import (
    JOB_TRACKING_FINALIZER,
    has_tracking_finalizer,
)
from ._sync import _KIND, _Sync

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_BACKOFF",
    "NAME",
    "JobController",
    "add_to_manager",
]

logger = logging.getLogger(__name__)

NAME = "job"
"""kube-controller-manager's name for this controller."""
HELP = "Runs Jobs' pods to completion: parallelism, indexes, backoff, deadlines, suspend."
DEFAULT_WORKERS = 5
"""``ConcurrentJobSyncs``."""

_ORPHANS = " orphan pods"
"""Name of the per-namespace key that strips the tracking finalizer from orphaned pods (a
space never appears in a Job name, so it cannot collide)."""


def _job_key_of(pod: Pod) -> ObjectKey | None:
    ref = get_controller_of(pod)
    if ref is None or ref.kind != _KIND or not (ref.api_version or "").startswith("batch/"):
        return None
    return ObjectKey(pod.metadata.namespace or "", ref.name or "")


class _PodEvents:
    """Pod informer events: observe expectations, then the owning Job's key (or, for an
    orphan, every Job in its namespace whose selector matches it, to adopt it)."""

    def __init__(self, owner: JobController) -> None:
        self._owner = owner

    def _orphan_keys(self, pod: Pod) -> list[ObjectKey]:
        if get_controller_of(pod) is not None:
            return []  # another kind of controller's pod
        keys: list[ObjectKey] = []
        if has_tracking_finalizer(pod):
            keys.append(ObjectKey(pod.metadata.namespace or "", _ORPHANS))
        if pod.metadata.deletion_timestamp is not None:
            return keys
        labels = pod.metadata.labels or {}
        for job in self._owner.jobs.namespace(pod.metadata.namespace or "").list():
            sel = job.spec.selector if job.spec is not None else None
            if sel is not None and LabelSelector.from_model(sel).matches(labels):
                keys.append(object_key(job))
        return keys

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        key = _job_key_of(obj)
        if key is None:
            return self._orphan_keys(obj)
        if obj.metadata.deletion_timestamp is not None:
            self._owner.expectations.deletion_observed(key, object_key(obj))
        else:
            self._owner.expectations.creation_observed(key)
        return (key,)

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        owner = self._owner
        key = _job_key_of(new)
        old_key = _job_key_of(old)
        if key is not None and new.metadata.deletion_timestamp is not None:
            owner.expectations.deletion_observed(key, object_key(new))
        if not has_tracking_finalizer(new):
            owner.finalizer_removal_observed(
                key or ObjectKey(new.metadata.namespace or "", _ORPHANS), new.metadata.uid
            )
        keys = [k for k in (old_key, key) if k is not None]
        if not keys:
            return self._orphan_keys(new)
        return dict.fromkeys(keys)

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        key = _job_key_of(obj)
        if key is None:
            orphans = ObjectKey(obj.metadata.namespace or "", _ORPHANS)
            self._owner.finalizer_removal_observed(orphans, obj.metadata.uid)
            return ()
        self._owner.expectations.deletion_observed(key, object_key(obj))
        self._owner.finalizer_removal_observed(key, obj.metadata.uid)
        return (key,)


class JobController(ControllerBase):
    """Reconciles Jobs (kube-controller-manager's ``job`` controller).

    Args:
        client: the API client pods and Job status are written with.
        factory: where the Job and Pod informers come from; run it next to :meth:`run`.
        recorder: receives the events (``SuccessfulCreate``, ``Completed``,
            ``BackoffLimitExceeded``, ...), attached to the Job.
        clock: time for backoff, deadlines, condition timestamps and expectation expiry.
        workers: concurrent syncs (``--concurrent-job-syncs``, default 5).
        registry: a prometheus registry for the runtime's controller and queue metrics.

    Guarantees:
        * A finished pod is counted exactly once: its UID goes into
          ``status.uncountedTerminatedPods`` before its tracking finalizer is removed, and is
          moved into ``succeeded``/``failed`` only once the finalizer is gone.
        * No pods are created or deleted for a Job while creations or deletions it issued
          earlier have not been seen by the pod informer (expectations, 5-minute expiry).
        * A Job with a True ``Complete`` or ``Failed`` condition is never changed again.

    Caveats:
        * Pods deleted while the Job is suspended are not counted as failed (Kubernetes
          counts a deleted, unfinished pod as failed in every other case).
        * The terminal condition waits until no pod of the Job is terminating; without a
          kubelet a deleted pod bound to a node terminates only when someone finishes it.
    """

    default_workers = DEFAULT_WORKERS

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        job_informer = factory.informer_for(Job)
        pod_informer = factory.informer_for(Pod)
        self.jobs = job_informer.lister()
        self.pods = pod_informer.lister()
        self.expectations = UIDTrackingControllerExpectations(clock=self.clock)
        self._finalizer_removals: dict[ObjectKey, set[str]] = {}
        self._backoff: dict[ObjectKey, BackoffRecord] = {}
        self._starts: dict[ObjectKey, tuple[str, datetime]] = {}
        self.controller: Controller[ObjectKey] = self.new_controller(NAME, self)
        self.controller.watch(job_informer, enqueue_object())
        self.controller.watch(pod_informer, _PodEvents(self))

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync Jobs until cancelled; ``task_status.started()`` once the caches have synced.

        Raises:
            TimeoutError: the informers did not sync within the runtime's timeout.
        """
        await self.controller.run(task_status=task_status)

    # -- expectations of finalizer removals ----------------------------------------------

    def finalizer_removal_observed(self, key: ObjectKey, uid: str | None) -> None:
        """The pod informer saw ``uid`` without the tracking finalizer (or deleted)."""
        pending = self._finalizer_removals.get(key)
        if pending is not None and uid is not None:
            pending.discard(uid)
            if not pending:
                del self._finalizer_removals[key]

    # -- sync ----------------------------------------------------------------------------

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sync one Job (see the module docstring).

        Raises:
            KcmError: a write failed; the key is retried with backoff.
        """
        key = request
        if key.name == _ORPHANS:
            await self._strip_orphans(key.namespace)
            return Result()
        job = self.jobs.namespace(key.namespace).get_or_none(key.name)
        # Expectations before the pod list (a pod observed in between is then in the list);
        # one list per sync, which the stale-finalizer sweep and the claim share.
        satisfied = self.expectations.satisfied(key)
        pods = self.pods.namespace(key.namespace).list()
        if job is None:
            self.expectations.delete_expectations(key)
            self._finalizer_removals.pop(key, None)
            self._backoff.pop(key, None)
            self._starts.pop(key, None)
            await self._strip_stale_finalizers(key, pods, keep_uid=None)
            return Result()
        if is_finished(job):
            self._starts.pop(key, None)
            await self._strip_stale_finalizers(key, pods, keep_uid=None)
            return Result()
        await self._strip_stale_finalizers(key, pods, keep_uid=job.metadata.uid)
        mode = (job.spec.completion_mode if job.spec else None) or "NonIndexed"
        if mode not in ("NonIndexed", "Indexed"):
            self._recorder.event(
                job,
                "Warning",
                "UnknownCompletionMode",
                f"Skipped Job sync because completion mode {mode!r} is unknown",
            )
            return Result()
        return await _Sync(self, key, job, mode == "Indexed").run(pods, satisfied=satisfied)

    async def _strip_stale_finalizers(
        self, key: ObjectKey, pods: list[Pod], *, keep_uid: str | None
    ) -> None:
        """Remove the tracking finalizer from those of ``pods`` (the namespace's) that belong
        to a Job named ``key`` that is gone, finished or re-created (a different UID): nobody
        else would ever remove it."""
        stale = []
        for pod in pods:
            if not has_tracking_finalizer(pod) or _job_key_of(pod) != key:
                continue
            ref = get_controller_of(pod)
            if keep_uid is None or (ref is not None and ref.uid != keep_uid):
                stale.append(pod)
        if stale:
            await self.remove_finalizers(key, stale)

    async def _strip_orphans(self, namespace: str) -> None:
        """Remove the tracking finalizer from pods that no Job controls any more (orphaned,
        for instance, by a Job deleted with ``propagationPolicy: Orphan``)."""
        orphans = [
            pod
            for pod in self.pods.namespace(namespace).list()
            if has_tracking_finalizer(pod) and get_controller_of(pod) is None
        ]
        if orphans:
            await self.remove_finalizers(ObjectKey(namespace, _ORPHANS), orphans)

    async def remove_finalizers(self, key: ObjectKey, pods: list[Pod]) -> set[str]:
        """Remove the tracking finalizer from ``pods``; returns the UIDs it is gone from.

        Raises:
            KcmError: some removals failed (after trying all of them).
        """
        api = self._client.api(Pod, key.namespace)
        done: set[str] = set()
        errors: list[Exception] = []
        body = {"metadata": {"$deleteFromPrimitiveList/finalizers": [JOB_TRACKING_FINALIZER]}}

        async def remove(pod: Pod) -> None:
            uid = pod.metadata.uid or ""
            self._finalizer_removals.setdefault(key, set()).add(uid)
            try:
                await api.patch(str(pod.metadata.name), body, patch_type=PatchType.STRATEGIC)
            except NotFound:
                pass
            except KcmError as exc:
                self.finalizer_removal_observed(key, uid)
                errors.append(exc)
                return
            done.add(uid)

        async with anyio.create_task_group() as tg:
            for pod in pods:
                tg.start_soon(remove, pod)
        if errors:
            raise errors[0] if len(errors) == 1 else ExceptionGroup("removing finalizers", errors)
        return done

    def expected_finalizer_removals(self, key: ObjectKey) -> frozenset[str]:
        return frozenset(self._finalizer_removals.get(key, ()))

    # -- when the active deadline started counting ----------------------------------------

    def note_start(self, key: ObjectKey, uid: str, at: datetime) -> None:
        """This controller set the Job's ``status.startTime`` to ``at`` (exactly; the API
        server keeps whole seconds)."""
        self._starts[key] = (uid, at)

    def active_since(self, key: ObjectKey, uid: str, stored: datetime) -> datetime:
        """When the Job's active deadline started counting, given its ``status.startTime``
        as stored, so that neither the check nor its requeue ever comes before
        ``start + activeDeadlineSeconds`` as really measured.

        The stored time is cut to the second: the moment this controller noted is used when
        it matches. A whole-second time it did not set (another process set it, or this one
        restarted) may have been cut from anywhere in that second, so the deadline counts from
        the end of that second (at most 1 s late; kube counts from the cut time and can fail
        a Job up to 1 s early).
        """
        noted = self._starts.get(key)
        if (
            noted is not None
            and noted[0] == uid
            and noted[1].replace(microsecond=0) == stored.replace(microsecond=0)
        ):
            return noted[1]
        if stored.microsecond:
            return stored
        return stored + timedelta(seconds=1)

    def backoff_for(self, key: ObjectKey) -> BackoffRecord:
        """The Job's pod-recreate backoff record (empty for a Job not seen failing)."""
        return self._backoff.get(key) or BackoffRecord()

    def save_backoff(self, key: ObjectKey, record: BackoffRecord) -> None:
        self._backoff[key] = record


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build a :class:`JobController` from the manager's client, factory, clock and registry
    (events as ``job-controller``) and add it (leader-gated)."""
    add_controller(manager, NAME, JobController, workers=workers)
