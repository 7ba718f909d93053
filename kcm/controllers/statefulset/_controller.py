"""The StatefulSet controller's sync (Go's ``StatefulSetController.sync`` and
``defaultStatefulSetControl.UpdateStatefulSet``).

One sync of a StatefulSet key: read the set from the cache; adopt orphaned ControllerRevisions
its selector matches (after a live GET of the set); claim its pods (only those named
``<set>-<n>``; orphans adopted, owned pods that stopped matching released); find or create
the current and update revisions; run one pass over the pods (:mod:`._replicas`); write the
status if it changed; delete history beyond ``revisionHistoryLimit`` (also after a failed
pass). With ``minReadySeconds``, a set whose pods are not all available is looked at again
``minReadySeconds`` + 1 s later.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Unpack, final

import anyio
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import (
    ControllerBase,
    ControllerOptions,
    ControllerRefManager,
    History,
    recheck_deletion_timestamp,
    sort_controller_revisions,
)
from kcm.errors import Conflict, KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key, resource_info_for
from kcm.models.apps_v1 import ControllerRevision, StatefulSet
from kcm.models.core_v1 import PersistentVolumeClaim, Pod
from kcm.runtime import (
    Controller,
    Result,
    enqueue_mapped,
    enqueue_object,
    get_controller_of,
    new_controller_ref,
)
from kcm.selectors import LabelSelector, SelectorParseError
from kcm.workqueue import default_controller_rate_limiter

from ._events import PodEvents
from ._identity import is_member_of
from ._pod_control import StatefulPodControl
from ._replicas import Revisions, update_replicas
from ._revisions import apply_revision, revisions_to_delete, stateful_set_revisions
from ._spec import min_ready_seconds, replicas
from ._status import SetStatus, complete_rolling_update, status_differs, status_patch

__all__ = [
    "DEFAULT_WORKERS",
    "NAME",
    "STALE_CACHE_MAX_WAIT",
    "STALE_CACHE_RECHECK",
    "StatefulSetController",
]

logger = logging.getLogger(__name__)

NAME = "statefulset"
"""kube-controller-manager's name for this controller."""

DEFAULT_WORKERS = 5
"""``--concurrent-statefulset-syncs``."""

_KIND = resource_info_for(StatefulSet)
STALE_CACHE_RECHECK = 1.0
"""Seconds after which a sync skipped for a stale cache runs again even without an event."""
STALE_CACHE_MAX_WAIT = 30.0
"""How long a sync waits for the cache to show the controller's last status write before it
acts on what the cache shows, as kube-controller-manager always does."""
_STATUS_ATTEMPTS = 5
"""client-go's ``retry.DefaultRetry``: a status write is tried five times on conflicts."""


def _no_keys(_: object) -> tuple[ObjectKey, ...]:
    return ()


@final
class StatefulSetController(ControllerBase):
    """kube-controller-manager's ``statefulset`` controller.

    Args:
        client: writes pods, claims, revisions and StatefulSet status.
        factory: the StatefulSet, Pod, PersistentVolumeClaim and ControllerRevision informers.
        recorder: events on the StatefulSet (``SuccessfulCreate``, ``SuccessfulDelete``,
            ``RecreatingFailedPod``, ...).
        clock: the work queue's clock and the "now" of availability.
        workers: concurrent syncs (``--concurrent-statefulset-syncs``, 5).
        registry: Prometheus registry for the controller and work queue metrics.

    Guarantees:
        * A set's pods are ``<set>-<ordinal>`` for ordinals below ``spec.replicas``; each
          pod's claims are created before it and never deleted.
        * With OrderedReady management a pod is created only when every lower ordinal is
          Running, Ready and available, and a pod is removed (scale down or update) only
          when the others are healthy, one at a time, highest ordinal first.
        * Pods other controllers own, and pods whose names are not ``<set>-<n>``, are never
          touched.

    Caveats:
        * No expectations (as in Go): a sync acts on the cache, so a cache that has not yet
          seen a create makes the next sync's create fail with AlreadyExists and retry.
    """

    default_workers = DEFAULT_WORKERS

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        self._superseded: dict[ObjectKey, tuple[str, float]] = {}
        """Per set: the resourceVersion our last status write replaced, and when."""
        set_informer = factory.informer_for(StatefulSet)
        pod_informer = factory.informer_for(Pod)
        claim_informer = factory.informer_for(PersistentVolumeClaim)
        revision_informer = factory.informer_for(ControllerRevision)
        self.sets = set_informer.lister()
        self.pods = pod_informer.lister()
        self.history = History(client, revision_informer.lister(), clock=self.clock)
        self.pod_control = StatefulPodControl(client, claim_informer.lister(), self.recorder)
        self.controller: Controller[ObjectKey] = self.new_controller(
            NAME, self, rate_limiter=default_controller_rate_limiter(clock=self.clock)
        )
        self.controller.watch(set_informer, enqueue_object())
        self.controller.watch(pod_informer, PodEvents(self.sets, self.controller.queue.add_after))
        # Read through listers only (as in Go); watched so that syncs wait for their caches.
        self.controller.watch(claim_informer, enqueue_mapped(_no_keys))
        self.controller.watch(revision_informer, enqueue_mapped(_no_keys))

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync StatefulSets until cancelled; ``task_status.started()`` once the caches have
        synced and the workers run (the factory must run too)."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, key: ObjectKey) -> Result:
        """One sync of a StatefulSet (see the module docstring).

        Raises:
            KcmError, ExceptionGroup: a write failed; the key is retried with backoff.
        """
        sts = self.sets.namespace(key.namespace).get_or_none(key.name)
        if sts is None:
            self._superseded.pop(key, None)
            return Result()
        if self._cache_is_stale(key, sts):
            # The informer event for our status write requeues the key; this is a safety net.
            return Result(requeue_after=STALE_CACHE_RECHECK)
        try:
            selector = LabelSelector.from_model(sts.spec.selector if sts.spec else None)
        except SelectorParseError as exc:
            logger.error("StatefulSet %s has an invalid selector: %s", key, exc)
            return Result()  # not transient: no retry
        await self._adopt_orphan_revisions(sts, selector)
        pods = await self._claim_pods(sts, selector)
        status = await self._update(sts, selector, pods)
        min_ready = min_ready_seconds(sts)
        if min_ready > 0 and status.available_replicas != replicas(sts):
            # Look again once pods may be available. Go waits exactly minReadySeconds and
            # relies on time having moved on since the pod turned Ready (a Ready time is kept
            # in whole seconds); the extra second makes the check conclusive on any clock.
            return Result(requeue_after=float(min_ready) + 1.0)
        return Result()

    def _cache_is_stale(self, key: ObjectKey, sts: StatefulSet) -> bool:
        """The cache still shows the set as it was before this controller's last status write
        (for at most :data:`STALE_CACHE_MAX_WAIT`): counting from it would write a status that
        forgets the last one (its collision count, say)."""
        superseded = self._superseded.get(key)
        if superseded is None:
            return False
        version, at = superseded
        if sts.metadata.resource_version == version and (
            self._clock.monotonic() - at < STALE_CACHE_MAX_WAIT
        ):
            return True
        del self._superseded[key]
        return False

    def _can_adopt(self, sts: StatefulSet) -> Callable[[], Awaitable[None]]:
        """A live GET of the set before adopting anything (``RecheckDeletionTimestamp``)."""
        api = self._client.api(StatefulSet, sts.metadata.namespace)
        return recheck_deletion_timestamp(lambda: api.get(str(sts.metadata.name)), sts.metadata.uid)

    async def _adopt_orphan_revisions(self, sts: StatefulSet, selector: LabelSelector) -> None:
        revisions = self.history.list_controller_revisions(sts, selector)
        orphans = [r for r in revisions if get_controller_of(r) is None]
        if not orphans:
            return
        await self._can_adopt(sts)()
        for revision in orphans:
            await self.history.adopt_controller_revision(sts, _KIND, revision)

    async def _claim_pods(self, sts: StatefulSet, selector: LabelSelector) -> list[Pod]:
        """The namespace's pods ``sts`` owns after adopting and releasing; only pods named
        ``<set>-<n>`` are claimed."""
        namespace = sts.metadata.namespace or ""
        refs = ControllerRefManager(
            self._client.api(Pod, namespace),
            sts,
            _KIND.api_version,
            _KIND.kind,
            selector,
            can_adopt=self._can_adopt(sts),
            filter=partial(is_member_of, sts),
        )
        return await refs.claim(self.pods.namespace(namespace).list())

    async def _update(
        self, sts: StatefulSet, selector: LabelSelector, pods: list[Pod]
    ) -> SetStatus:
        """Revisions, the pass over the pods, the status write, then the history limit
        (``UpdateStatefulSet``)."""
        revisions = sort_controller_revisions(self.history.list_controller_revisions(sts, selector))
        current: ControllerRevision | None = None
        update: ControllerRevision | None = None
        errors: list[Exception] = []
        status: SetStatus | None = None
        try:
            current, update, collision_count = await stateful_set_revisions(
                self.history, sts, revisions
            )
            passed = Revisions(
                current=str(current.metadata.name),
                update=str(update.metadata.name),
                current_set=apply_revision(sts, current),
                update_set=apply_revision(sts, update),
                controller_ref=new_controller_ref(sts, _KIND.api_version, _KIND.kind),
            )
            status = await update_replicas(
                sts, passed, collision_count, pods, self.pod_control, now=self._clock.now()
            )
            complete_rolling_update(sts, status)
            if status_differs(sts, status):
                await self._write_status(sts, status)
        except Exception as exc:
            errors.append(exc)
        try:
            for revision in revisions_to_delete(sts, pods, revisions, current, update):
                with contextlib.suppress(NotFound):  # a stale cache: it is gone already
                    await self.history.delete_controller_revision(revision)
        except KcmError as exc:
            errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise ExceptionGroup(f"syncing StatefulSet {sts.metadata.name}", errors)
        assert status is not None
        return status

    async def _write_status(self, sts: StatefulSet, status: SetStatus) -> None:
        """Replace the set's status (``UpdateStatefulSetStatus``) with a merge patch carrying
        the resourceVersion read, so a write based on a stale read is refused.

        On a conflict the set is read live: if only its spec or metadata moved on, the patch
        is tried again (up to five attempts, as Go's ``RetryOnConflict``); if its status moved
        on, this sync counted from a cache that has not seen the last status write (its
        collision count, say), so the conflict is raised and the next sync counts again.

        Raises:
            Conflict: the status changed since it was read, or five attempts conflicted.
        """
        api = self._client.api(StatefulSet, sts.metadata.namespace)
        version = sts.metadata.resource_version
        for attempt in range(_STATUS_ATTEMPTS):
            try:
                written = await api.patch_status(
                    str(sts.metadata.name), status_patch(version, status)
                )
            except Conflict:
                if attempt == _STATUS_ATTEMPTS - 1:
                    raise
                live = await api.get(str(sts.metadata.name))
                if live.status != sts.status:
                    raise
                version = live.metadata.resource_version
                continue
            if version and written.metadata.resource_version != version:
                # a write that changed nothing keeps the resourceVersion: nothing to wait for
                self._superseded[object_key(sts)] = (version, self._clock.monotonic())
            return
