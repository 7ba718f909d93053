"""The Deployment controller: rolls Deployments out through ReplicaSets.

kube-controller-manager's ``deployment`` controller (§1). Each sync of one
Deployment:

1. reads it from the cache (gone: stop; selector ``{}``: Warning ``SelectingAll``, stop);
2. claims the ReplicaSets its selector matches (adopting orphans, releasing strays);
3. deleting: writes status only; otherwise sets ``Progressing=Unknown`` with reason
   ``DeploymentPaused``/``DeploymentResumed`` when ``spec.paused`` flipped;
4. paused → only scales (proportionally) and cleans up history; a
   ``deprecated.deployment.rollback.to`` annotation → rolls the template back; a changed
   ``spec.replicas`` (a ReplicaSet's desired-replicas annotation differs) → scales;
5. otherwise runs the strategy (:mod:`._rollout` holds the arithmetic): ``RollingUpdate``
   grows the new ReplicaSet within maxSurge and shrinks old ones within maxUnavailable;
   ``Recreate`` scales old ones to 0, waits for their pods to go, then creates the new one;
6. writes the status (counts, ``Available``, ``Progressing`` with the progress deadline) and
   requeues itself for when the deadline could pass.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import Unpack

import anyio
import msgspec
from anyio.abc import TaskStatus
from cachetools import TTLCache

from kcm.client import Api, ApiClient
from kcm.controllerkit import (
    ControllerBase,
    ControllerOptions,
    ControllerRefManager,
    is_namespace_terminating,
    recheck_deletion_timestamp,
)
from kcm.errors import AlreadyExists, ApiError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.apps_v1 import Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec
from kcm.models.core_v1 import Pod, PodTemplateSpec
from kcm.models.meta_v1 import LabelSelector as LabelSelectorModel
from kcm.models.meta_v1 import ObjectMeta
from kcm.runtime import Controller, Result, TerminalError, get_controller_of, new_controller_ref
from kcm.selectors import LabelSelector

from ._rollout import (
    ScaleStep,
    calculate_status,
    cleanup_candidates,
    max_scaled_down,
    new_rs_new_replicas,
    old_pods_running,
    plan_cleanup_unhealthy,
    plan_new_replica_set,
    plan_scale,
    plan_scale_down_old,
    rollout_status,
    stuck_requeue_after,
    with_replicas,
)
from ._util import (
    DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY,
    DEPRECATED_ROLLBACK_TO,
    FAILED_RS_CREATE_REASON,
    FOUND_NEW_RS_REASON,
    NEW_RS_REASON,
    PAUSED_DEPLOY_REASON,
    PROGRESSING,
    RESUMED_DEPLOY_REASON,
    REVISION_ANNOTATION,
    TIMED_OUT_REASON,
    active_replica_sets,
    compute_hash,
    deployment_complete,
    deployment_replicas,
    desired_replicas_annotation,
    equal_ignore_hash,
    find_new_replica_set,
    get_condition,
    has_progress_deadline,
    is_rolling_update,
    labels_with_hash,
    last_revision,
    max_revision,
    max_surge,
    new_condition,
    revision,
    rollback_annotations,
    rs_replicas,
    set_condition,
    set_new_replica_set_annotations,
    set_replicas_annotations,
    status_equal,
)

__all__ = [
    "DEFAULT_WORKERS",
    "MAX_RETRIES",
    "NAME",
    "STALE_CACHE_MAX_WAIT",
    "DeploymentController",
]

logger = logging.getLogger(__name__)

NAME = "deployment"
"""kube-controller-manager's name for this controller."""
DEFAULT_WORKERS = 5
"""``--concurrent-deployment-syncs``."""
STALE_CACHE_RECHECK = 1.0
"""Seconds after which a sync skipped for a stale cache is retried even without an event."""
STALE_CACHE_MAX_WAIT = 30.0
"""Longest a sync waits for the cache to show one of the controller's own writes (per write).
After that it acts on what the cache shows, as kube-controller-manager always does: a stale
update then fails with a Conflict and a repeated create finds the ReplicaSet (AlreadyExists),
both handled."""
MAX_RETRIES = 15
"""A Deployment whose sync failed this many times in a row is dropped from the queue until
its next event (``maxRetries``)."""

_API_VERSION = "apps/v1"
_KIND = "Deployment"
_OWNER_INDEX = "kcm.deployment/controller-uid"
"""ReplicaSet index: ``<namespace>/<controller uid>``, or ``<namespace>/`` for orphans: a sync
reads only the candidates a claim can keep or adopt, not the whole namespace."""


def _owner_index(rs: ReplicaSet) -> list[str]:
    ref = get_controller_of(rs)
    return [f"{rs.metadata.namespace or ''}/{ref.uid if ref is not None else ''}"]


def _selects_everything(selector: LabelSelectorModel | None) -> bool:
    return selector is not None and not selector.match_labels and not selector.match_expressions


def _selector(d: Deployment) -> LabelSelector:
    sel = d.spec.selector if d.spec is not None else None
    return LabelSelector.from_model(sel) if sel is not None else LabelSelector.nothing()


class _DeploymentEvents:
    """Deployment events: the Deployment's own key (add, update and delete)."""

    def create_keys(self, obj: Deployment, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: Deployment, new: Deployment) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(self, obj: Deployment, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)


class _ReplicaSetEvents:
    """ReplicaSet events: the owning Deployment, or for an orphan every Deployment whose
    selector matches it (one of them may adopt it)."""

    def __init__(self, owner: DeploymentController) -> None:
        self._owner = owner

    def create_keys(self, obj: ReplicaSet, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        if obj.metadata.deletion_timestamp is not None:
            return self.delete_keys(obj, final_state_unknown=False)
        key = self._owner.resolve(obj)
        if key is not None:
            return (key,)
        if get_controller_of(obj) is not None:
            return ()
        return self._owner.deployments_matching(obj)

    def update_keys(self, old: ReplicaSet, new: ReplicaSet) -> Iterable[ObjectKey]:
        if old.metadata.resource_version == new.metadata.resource_version:
            return ()
        keys: list[ObjectKey] = []
        old_ref, new_ref = get_controller_of(old), get_controller_of(new)
        ref_changed = old_ref != new_ref
        if ref_changed and old_ref is not None:
            key = self._owner.resolve(old)
            if key is not None:
                keys.append(key)
        if new_ref is not None:
            key = self._owner.resolve(new)
            if key is not None:
                keys.append(key)
        elif ref_changed or old.metadata.labels != new.metadata.labels:
            keys.extend(self._owner.deployments_matching(new))
        return dict.fromkeys(keys)

    def delete_keys(self, obj: ReplicaSet, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        self._owner.forget_replica_set(obj)
        key = self._owner.resolve(obj)
        return () if key is None else (key,)


class _PodEvents:
    """Pod deletions wake a ``Recreate`` Deployment once none of its pods is left."""

    def __init__(self, owner: DeploymentController) -> None:
        self._owner = owner

    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return ()

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        return ()

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return self._owner.deployment_for_deleted_pod(obj)


class DeploymentController(ControllerBase):
    """Reconciles Deployments (kube-controller-manager's ``deployment`` controller).

    Args:
        client: the API client ReplicaSets and Deployment status are written with.
        factory: where the Deployment, ReplicaSet and Pod informers come from; run it next to
            :meth:`run`.
        recorder: receives the events (``ScalingReplicaSet``, ``SelectingAll``,
            ``DeploymentRollback``, ``ReplicaSetCreateError``), attached to the Deployment.
        clock: time for condition timestamps, the progress deadline and requeues.
        workers: concurrent syncs (``--concurrent-deployment-syncs``, default 5).
        registry: a prometheus registry for the runtime's controller and queue metrics.

    Guarantees:
        * A RollingUpdate never makes Σ spec.replicas of the Deployment's ReplicaSets exceed
          replicas + maxSurge, and never scales old ReplicaSets down below
          replicas - maxUnavailable available pods (as reported by the ReplicaSets).
        * Recreate creates (or scales up) the new ReplicaSet only once every old ReplicaSet
          reports 0 pods and no old pod is still running.
        * A sync that keeps failing is retried with backoff and dropped after
          :data:`MAX_RETRIES` failures (until the Deployment's next event).

    Caveats:
        * The ``pod-template-hash`` values differ from Go's (see :func:`compute_hash`).
        * Deployment status follows ReplicaSet status: something (the ReplicaSet controller,
          or a test) must keep it up to date.
    """

    default_workers = DEFAULT_WORKERS

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        d_informer = factory.informer_for(Deployment)
        rs_informer = factory.informer_for(ReplicaSet)
        pod_informer = factory.informer_for(Pod)
        self.deployments = d_informer.lister()
        self.replica_sets = rs_informer.lister()
        self.pods = pod_informer.lister()
        if _OWNER_INDEX not in rs_informer.indexer.indexers():
            rs_informer.add_indexers({_OWNER_INDEX: _owner_index})
        self._written: TTLCache[ObjectKey, dict[tuple[str, str], tuple[str, float]]] = TTLCache(
            maxsize=1_000_000, ttl=STALE_CACHE_MAX_WAIT, timer=self.clock.monotonic
        )
        """Per Deployment: (kind, name) of each object a sync wrote -> (the resourceVersion
        it replaced, "" for a create; when, on the clock)."""
        self.controller: Controller[ObjectKey] = self.new_controller(NAME, self)
        self.controller.watch(d_informer, _DeploymentEvents())
        self.controller.watch(rs_informer, _ReplicaSetEvents(self))
        self.controller.watch(pod_informer, _PodEvents(self))

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync Deployments until cancelled; ``task_status.started()`` once the caches synced.

        Raises:
            TimeoutError: the informers did not sync within the runtime's timeout.
        """
        await self.controller.run(task_status=task_status)

    # -- event mapping (informer thread: cheap, cache only) ----------------------------------

    def _controlling_deployment(self, rs: ReplicaSet) -> Deployment | None:
        """The cached Deployment that controls ``rs`` (kind, name, then UID checked)."""
        ref = get_controller_of(rs)
        if ref is None or ref.kind != _KIND or not ref.name:
            return None
        d = self.deployments.namespace(rs.metadata.namespace or "").get_or_none(ref.name)
        if d is None or d.metadata.uid != ref.uid:
            return None
        return d

    def resolve(self, rs: ReplicaSet) -> ObjectKey | None:
        """The key of the Deployment that controls ``rs`` (kind, name, then UID checked)."""
        d = self._controlling_deployment(rs)
        return None if d is None else object_key(d)

    def deployments_matching(self, rs: ReplicaSet) -> list[ObjectKey]:
        """Keys of the Deployments in ``rs``'s namespace whose non-empty selector matches it."""
        labels = rs.metadata.labels or {}
        keys = []
        for d in self.deployments.namespace(rs.metadata.namespace or "").list():
            sel = d.spec.selector if d.spec is not None else None
            if sel is None or _selects_everything(sel):
                continue
            if LabelSelector.from_model(sel).matches(labels):
                keys.append(object_key(d))
        return keys

    def deployment_for_deleted_pod(self, pod: Pod) -> list[ObjectKey]:
        """The key of a Recreate Deployment that has no pods left after ``pod`` went."""
        ref = get_controller_of(pod)
        if ref is None or ref.kind != "ReplicaSet" or not ref.name:
            return []
        ns = pod.metadata.namespace or ""
        rs = self.replica_sets.namespace(ns).get_or_none(ref.name)
        if rs is None or rs.metadata.uid != ref.uid:
            return []
        d = self._controlling_deployment(rs)
        if d is None or is_rolling_update(d):
            return []
        owned = self.replica_sets.by_index(_OWNER_INDEX, f"{ns}/{d.metadata.uid}")
        if any(self.pod_map(d, owned).values()):
            return []
        return [object_key(d)]

    def pod_map(self, d: Deployment, rss: Iterable[ReplicaSet]) -> dict[str, list[Pod]]:
        """The Deployment's pods (by its selector) grouped by the UID of their ReplicaSet."""
        by_uid: dict[str, list[Pod]] = {rs.metadata.uid or "": [] for rs in rss}
        selector = _selector(d)
        for pod in self.pods.namespace(d.metadata.namespace or "").list():
            ref = get_controller_of(pod)
            if ref is None or ref.uid not in by_uid:
                continue
            if selector.matches(pod.metadata.labels):
                by_uid[ref.uid or ""].append(pod)
        return by_uid

    # -- our own writes ----------------------------------------------------------------------

    def note_written(
        self, key: ObjectKey, kind: str, old: Deployment | ReplicaSet | None, *, name: str = ""
    ) -> None:
        """Remember that a sync of ``key`` replaced ``old`` (or created ``name``), so the next
        sync waits until the informer cache shows the write."""
        pending = self._written.get(key)
        if pending is None:
            pending = {}
        now = self._clock.monotonic()
        if old is not None:
            pending[(kind, old.metadata.name or "")] = (old.metadata.resource_version or "", now)
        else:
            pending[(kind, name)] = ("", now)
        self._written[key] = pending

    def forget_replica_set(self, rs: ReplicaSet) -> None:
        """``rs`` was deleted: no sync waits for the cache to show a write to it any more
        (a ReplicaSet created and deleted before the cache saw it would otherwise hold its
        Deployment until :data:`STALE_CACHE_MAX_WAIT`)."""
        ns, name = rs.metadata.namespace or "", rs.metadata.name or ""
        for key, pending in list(self._written.items()):
            if key.namespace != ns or pending.pop(("ReplicaSet", name), None) is None:
                continue
            if not pending:
                self._written.pop(key, None)

    def cache_is_stale(self, key: ObjectKey, d: Deployment) -> bool:
        """The cache still shows an object this controller has since replaced or created
        (kube-controller-manager would act on it and get a 409 or AlreadyExists). Entries the
        cache has caught up with are dropped, and so are entries older than
        :data:`STALE_CACHE_MAX_WAIT` and those of ReplicaSets deleted since."""
        pending = self._written.get(key)
        if not pending:
            return False
        rs_lister = self.replica_sets.namespace(key.namespace)
        now = self._clock.monotonic()
        for (kind, name), (superseded, at) in list(pending.items()):
            if now - at >= STALE_CACHE_MAX_WAIT:
                del pending[(kind, name)]
                continue
            obj: Deployment | ReplicaSet | None = (
                d if kind == _KIND else rs_lister.get_or_none(name)
            )
            if superseded == "":
                stale = obj is None  # created; not in the cache yet
            else:
                stale = obj is not None and obj.metadata.resource_version == superseded
            if stale:
                return True
            del pending[(kind, name)]
        self._written.pop(key, None)
        return False

    # -- sync --------------------------------------------------------------------------------

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sync one Deployment (see the module docstring).

        Raises:
            KcmError: a write failed; retried with backoff.
            TerminalError: it failed :data:`MAX_RETRIES` times in a row (dropped).
        """
        try:
            return await self._reconcile(request)
        except Exception as exc:
            if is_namespace_terminating(exc):
                return Result()
            if self.controller.queue.num_requeues(request) >= MAX_RETRIES:
                raise TerminalError(
                    f"dropping deployment {request} out of the queue after {MAX_RETRIES} "
                    f"failed syncs: {exc}"
                ) from exc
            raise

    async def _reconcile(self, key: ObjectKey) -> Result:
        d = self.deployments.namespace(key.namespace).get_or_none(key.name)
        if d is None:
            self._written.pop(key, None)
            return Result()
        if self.cache_is_stale(key, d):
            # the informer event for our write requeues the key; this is only a safety net
            return Result(requeue_after=STALE_CACHE_RECHECK)
        sync = _Sync(self, d)
        after = await sync.run()
        if after is None:
            return Result()
        if after <= 0:
            return Result(requeue=True)
        return Result(requeue_after=after)


class _Sync:
    """One sync of one Deployment. ``self.d`` is always the latest copy (the cache's, then
    whatever the last write returned), so consecutive writes carry a fresh resourceVersion."""

    def __init__(self, ctl: DeploymentController, d: Deployment) -> None:
        self.ctl = ctl
        self.d = d
        ns = d.metadata.namespace or ""
        self.name = d.metadata.name or ""
        self.key = ObjectKey(ns, self.name)
        self.d_api: Api[Deployment] = ctl.client.api(Deployment, ns)
        self.rs_api: Api[ReplicaSet] = ctl.client.api(ReplicaSet, ns)
        self.rs_list: list[ReplicaSet] = []
        """The claimed ReplicaSets; our updates replace their entries in place, so a later
        step of the same sync never writes from a stale copy."""

    @property
    def now(self) -> datetime:
        return self.ctl.clock.now()

    def event(self, type_: str, reason: str, message: str) -> None:
        self.ctl.recorder.event(self.d, type_, reason, message)

    # -- writes to the Deployment ----------------------------------------------------------

    async def update_deployment(self, new: Deployment, *, status: bool = False) -> None:
        old = self.d
        self.d = await self.d_api.update(old, new, subresource="status" if status else None)
        if self.d.metadata.resource_version != old.metadata.resource_version:
            self.ctl.note_written(self.key, _KIND, old)

    async def update_replica_set(self, old: ReplicaSet, new: ReplicaSet) -> ReplicaSet:
        updated = await self.rs_api.update(old, new)
        if updated.metadata.resource_version != old.metadata.resource_version:
            self.ctl.note_written(self.key, "ReplicaSet", old)
        for i, rs in enumerate(self.rs_list):
            if rs.metadata.uid == updated.metadata.uid:
                self.rs_list[i] = updated
        return updated

    async def write_status(
        self, status: DeploymentStatus, *, annotations: dict[str, str] | None = None
    ) -> None:
        """Write ``status`` (and ``annotations``, if given) through ``/status``, as kube's
        ``UpdateStatus``: kube-apiserver's Deployment status strategy keeps metadata changes,
        and an annotation written on the main resource would bump ``metadata.generation``.

        A server whose status subresource drops metadata changes (kcm's embedded one, today)
        returns the Deployment without them; the annotations are then written on the main
        resource as well."""
        new = msgspec.structs.replace(self.d, status=status)
        if annotations is not None:
            meta = msgspec.structs.replace(self.d.metadata, annotations=annotations)
            new = msgspec.structs.replace(new, metadata=meta)
        await self.update_deployment(new, status=True)
        if annotations is not None and dict(self.d.metadata.annotations or {}) != annotations:
            meta = msgspec.structs.replace(self.d.metadata, annotations=annotations)
            await self.update_deployment(msgspec.structs.replace(self.d, metadata=meta))

    def status(self) -> DeploymentStatus:
        return self.d.status or DeploymentStatus()

    def revision_annotations(self, value: str | None) -> dict[str, str] | None:
        """``SetDeploymentRevision``: the Deployment's annotations with the new ReplicaSet's
        revision, or None when they already carry it."""
        annotations = dict(self.d.metadata.annotations or {})
        if value is None or annotations.get(REVISION_ANNOTATION) == value:
            return None
        annotations[REVISION_ANNOTATION] = value
        return annotations

    # -- the sync ----------------------------------------------------------------------------

    async def run(self) -> float | None:
        d = self.d
        spec = d.spec
        if spec is None:
            return None
        if _selects_everything(spec.selector):
            self.event(
                "Warning",
                "SelectingAll",
                "This deployment is selecting all pods. A non-empty selector is required.",
            )
            if (self.status().observed_generation or 0) < (d.metadata.generation or 0):
                status = msgspec.structs.replace(
                    self.status(), observed_generation=d.metadata.generation
                )
                await self.write_status(status)
            return None
        rs_list = self.rs_list = await self.claim_replica_sets()
        if d.metadata.deletion_timestamp is not None:
            await self.sync_status_only(rs_list)
            return None
        await self.check_paused_conditions()
        if spec.paused:
            await self.sync(rs_list)
            return None
        if DEPRECATED_ROLLBACK_TO in (self.d.metadata.annotations or {}):
            rollback_to = self.rollback_to()
            if rollback_to is not None:
                await self.rollback(rs_list, rollback_to)
                return None
        if await self.is_scaling_event(rs_list):
            await self.sync(rs_list)
            return None
        if is_rolling_update(self.d):
            return await self.rollout_rolling(rs_list)
        return await self.rollout_recreate(rs_list)

    async def claim_replica_sets(self) -> list[ReplicaSet]:
        d = self.d
        uid = d.metadata.uid
        manager = ControllerRefManager(
            self.rs_api,
            d,
            _API_VERSION,
            _KIND,
            _selector(d),
            can_adopt=recheck_deletion_timestamp(lambda: self.d_api.get(self.name), uid),
        )
        ns = d.metadata.namespace or ""
        # Only ours and orphans: claim ignores what another controller owns anyway.
        candidates = [
            *self.ctl.replica_sets.by_index(_OWNER_INDEX, f"{ns}/{uid}"),
            *self.ctl.replica_sets.by_index(_OWNER_INDEX, f"{ns}/"),
        ]
        return await manager.claim(candidates)

    async def check_paused_conditions(self) -> None:
        d = self.d
        if not has_progress_deadline(d):
            return
        cond = get_condition(self.status().conditions, PROGRESSING)
        if cond is not None and cond.reason == TIMED_OUT_REASON:
            return  # a reported lack of progress is not overwritten by a paused condition
        paused_exists = cond is not None and cond.reason == PAUSED_DEPLOY_REASON
        paused = bool(d.spec and d.spec.paused)
        if paused and not paused_exists:
            new = new_condition(
                PROGRESSING, "Unknown", PAUSED_DEPLOY_REASON, "Deployment is paused", self.now
            )
        elif not paused and paused_exists:
            new = new_condition(
                PROGRESSING, "Unknown", RESUMED_DEPLOY_REASON, "Deployment is resumed", self.now
            )
        else:
            return
        status = self.status()
        await self.write_status(
            msgspec.structs.replace(status, conditions=set_condition(status.conditions, new))
        )

    async def sync_status_only(self, rs_list: list[ReplicaSet]) -> None:
        new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=False)
        await self.sync_status([*old_rss, new_rs], new_rs)

    async def sync(self, rs_list: list[ReplicaSet]) -> None:
        """Scale (paused or a scaling event), clean up when paused, write status."""
        new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=False)
        new_rs, old_rss = await self.scale(new_rs, old_rss)
        if self.d.spec is not None and self.d.spec.paused and self.rollback_to() is None:
            await self.cleanup(old_rss)
        await self.sync_status([*old_rss, new_rs], new_rs)

    async def sync_status(
        self, all_rss: list[ReplicaSet | None], new_rs: ReplicaSet | None
    ) -> None:
        status = calculate_status(all_rss, new_rs, self.d, self.now)
        if not status_equal(self.d.status, status):
            await self.write_status(status)

    async def is_scaling_event(self, rs_list: list[ReplicaSet]) -> bool:
        new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=False)
        replicas = deployment_replicas(self.d)
        for rs in active_replica_sets([*old_rss, new_rs]):
            desired = desired_replicas_annotation(rs)
            if desired is not None and desired != replicas:
                return True
        return False

    # -- ReplicaSets -------------------------------------------------------------------------

    async def get_all_replica_sets(
        self, rs_list: list[ReplicaSet], *, create: bool
    ) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """(the new ReplicaSet or None, every old ReplicaSet), syncing revisions."""
        existing = find_new_replica_set(self.d, rs_list)
        all_old = [
            rs for rs in rs_list if existing is None or rs.metadata.uid != existing.metadata.uid
        ]
        new_rs = await self.get_new_replica_set(existing, all_old, create=create)
        return new_rs, all_old

    async def get_new_replica_set(
        self, existing: ReplicaSet | None, old_rss: list[ReplicaSet], *, create: bool
    ) -> ReplicaSet | None:
        """Sync the revision of ``existing`` (the new ReplicaSet found), or create it."""
        d = self.d
        new_revision = max_revision(old_rss) + 1
        if existing is not None:
            annotations = dict(existing.metadata.annotations or {})
            changed = set_new_replica_set_annotations(d, annotations, new_revision, exists=True)
            spec = existing.spec or ReplicaSetSpec()
            want_mrs = d.spec.min_ready_seconds if d.spec is not None else None
            if changed or (spec.min_ready_seconds or 0) != (want_mrs or 0):
                updated = msgspec.structs.replace(
                    existing,
                    metadata=msgspec.structs.replace(existing.metadata, annotations=annotations),
                    spec=msgspec.structs.replace(spec, min_ready_seconds=want_mrs),
                )
                return await self.update_replica_set(existing, updated)
            d_annotations = self.revision_annotations(
                (existing.metadata.annotations or {}).get(REVISION_ANNOTATION)
            )
            status = self.status()
            found = has_progress_deadline(self.d) and (
                get_condition(status.conditions, PROGRESSING) is None
            )
            if found:
                cond = new_condition(
                    PROGRESSING,
                    "True",
                    FOUND_NEW_RS_REASON,
                    f'Found new replica set "{existing.metadata.name}"',
                    self.now,
                )
                status = msgspec.structs.replace(
                    status, conditions=set_condition(status.conditions, cond)
                )
            if found or d_annotations is not None:
                await self.write_status(status, annotations=d_annotations)
            return existing
        if not create:
            return None
        return await self.create_new_replica_set(old_rss, new_revision)

    async def create_new_replica_set(
        self, old_rss: list[ReplicaSet], new_revision: int
    ) -> ReplicaSet:
        """Create the new ReplicaSet (revision ``new_revision``) at its first size, or take
        over an equal one that already exists under its name; event and ``Progressing``
        condition for a created one."""
        d = self.d
        assert d.spec is not None
        template = d.spec.template or PodTemplateSpec()
        collision_count = self.status().collision_count
        rs = self._new_replica_set(template, compute_hash(template, collision_count))
        replicas = new_rs_new_replicas(d, [*old_rss, rs], rs)
        annotations: dict[str, str] = {}
        set_new_replica_set_annotations(d, annotations, new_revision, exists=False)
        rs = msgspec.structs.replace(
            with_replicas(rs, replicas),
            metadata=msgspec.structs.replace(rs.metadata, annotations=annotations),
        )
        name = str(rs.metadata.name)
        created, already_exists = await self._create_replica_set(rs, template, collision_count)
        if not already_exists and replicas > 0:
            self.event(
                "Normal",
                "ScalingReplicaSet",
                f"Scaled up replica set {name} to {replicas}",
            )
        d_annotations = self.revision_annotations(str(new_revision))
        status = self.status()
        progressing = not already_exists and has_progress_deadline(self.d)
        if progressing:
            cond = new_condition(
                PROGRESSING, "True", NEW_RS_REASON, f'Created new replica set "{name}"', self.now
            )
            status = msgspec.structs.replace(
                status, conditions=set_condition(status.conditions, cond)
            )
        if progressing or d_annotations is not None:
            await self.write_status(status, annotations=d_annotations)
        return created

    def _new_replica_set(self, template: PodTemplateSpec, hash_: str) -> ReplicaSet:
        """The ReplicaSet ``<deployment>-<hash>`` for ``template``, with 0 replicas: the hash
        in its labels, selector and template labels, controlled by the Deployment."""
        d = self.d
        assert d.spec is not None
        tmeta = template.metadata or ObjectMeta()
        labels = labels_with_hash(tmeta.labels, hash_)
        selector = d.spec.selector or LabelSelectorModel()
        rs_selector = msgspec.structs.replace(
            selector,
            match_labels={
                **(selector.match_labels or {}),
                DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: hash_,
            },
        )
        return ReplicaSet(
            metadata=ObjectMeta(
                name=f"{self.name}-{hash_}",
                namespace=d.metadata.namespace,
                owner_references=[new_controller_ref(d, _API_VERSION, _KIND)],
                labels=labels,
            ),
            spec=ReplicaSetSpec(
                replicas=0,
                min_ready_seconds=d.spec.min_ready_seconds,
                selector=rs_selector,
                template=msgspec.structs.replace(
                    template, metadata=msgspec.structs.replace(tmeta, labels=labels)
                ),
            ),
        )

    async def _create_replica_set(
        self, rs: ReplicaSet, template: PodTemplateSpec, collision_count: int | None
    ) -> tuple[ReplicaSet, bool]:
        """Create ``rs``; returns it and whether it already existed.

        Raises:
            AlreadyExists: the name is taken by a ReplicaSet that is not this Deployment's
                with an equal template (a hash collision: collisionCount is raised first, so
                the retry hashes differently).
            ApiError: the create was refused (reported as ``Progressing=False`` and an
                event, unless the namespace is terminating).
        """
        d = self.d
        name = str(rs.metadata.name)
        try:
            created = await self.rs_api.create(rs)
            self.ctl.note_written(self.key, "ReplicaSet", None, name=name)
        except AlreadyExists:
            found = await self.rs_api.get(name)
            ref = get_controller_of(found)
            if not (
                ref is not None
                and ref.uid == d.metadata.uid
                and equal_ignore_hash(template, found.spec.template if found.spec else None)
            ):
                await self._note_hash_collision(name, collision_count)
                raise
            return found, True
        except ApiError as exc:
            if not is_namespace_terminating(exc):
                await self._report_failed_create(name, exc)
            raise
        return created, False

    async def _note_hash_collision(self, name: str, collision_count: int | None) -> None:
        """Bump ``status.collisionCount`` so the retry hashes differently."""
        status = self.status()
        await self.write_status(
            msgspec.structs.replace(status, collision_count=(collision_count or 0) + 1)
        )
        logger.info(
            "deployment %s/%s: hash collision on replica set %s, collisionCount now %d",
            self.d.metadata.namespace,
            self.name,
            name,
            (collision_count or 0) + 1,
        )

    async def _report_failed_create(self, name: str, exc: ApiError) -> None:
        """``Progressing=False/ReplicaSetCreateError`` (best effort) and a Warning event."""
        msg = f'Failed to create new replica set "{name}": {exc}'
        if has_progress_deadline(self.d):
            cond = new_condition(PROGRESSING, "False", FAILED_RS_CREATE_REASON, msg, self.now)
            status = self.status()
            try:
                await self.write_status(
                    msgspec.structs.replace(
                        status, conditions=set_condition(status.conditions, cond)
                    )
                )
            except ApiError:
                pass  # the create error is the one to report
        self.event("Warning", FAILED_RS_CREATE_REASON, msg)

    async def scale_replica_set(self, step: ScaleStep) -> tuple[bool, ReplicaSet]:
        """Set a ReplicaSet's size and its desired/max-replicas annotations (one update);
        event ``ScalingReplicaSet`` when the size changed."""
        rs, new_scale = step.rs, step.replicas
        replicas = deployment_replicas(self.d)
        max_ = replicas + max_surge(self.d)
        size_changed = rs_replicas(rs) != new_scale
        annotations = dict(rs.metadata.annotations or {})
        if not set_replicas_annotations(annotations, replicas, max_) and not size_changed:
            return False, rs
        new = msgspec.structs.replace(
            with_replicas(rs, new_scale),
            metadata=msgspec.structs.replace(rs.metadata, annotations=annotations),
        )
        updated = await self.update_replica_set(rs, new)
        if size_changed:
            self.event(
                "Normal",
                "ScalingReplicaSet",
                f"Scaled {step.direction} replica set {rs.metadata.name} to {new_scale}",
            )
        return size_changed, updated

    async def apply(
        self, steps: list[ScaleStep], rss: list[ReplicaSet]
    ) -> tuple[int, list[ReplicaSet]]:
        """Perform ``steps`` in order (stopping at the first error) and return how many
        changed a size and ``rss`` with the updated copies in place."""
        by_uid = {rs.metadata.uid: i for i, rs in enumerate(rss)}
        out = list(rss)
        scaled = 0
        for step in steps:
            changed, updated = await self.scale_replica_set(step)
            scaled += changed
            i = by_uid.get(step.rs.metadata.uid)
            if i is not None:
                out[i] = updated
        return scaled, out

    async def scale(
        self, new_rs: ReplicaSet | None, old_rss: list[ReplicaSet]
    ) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        steps = plan_scale(self.d, new_rs, old_rss)
        rss = [*old_rss, *([new_rs] if new_rs is not None else [])]
        _, rss = await self.apply(steps, rss)
        if new_rs is not None:
            return rss[-1], rss[:-1]
        return None, rss

    async def cleanup(self, old_rss: list[ReplicaSet]) -> None:
        """Delete old ReplicaSets beyond revisionHistoryLimit (``cleanupDeployment``)."""
        for rs in cleanup_candidates(self.d, old_rss):
            try:
                await self.rs_api.delete(rs.metadata.name or "")
            except NotFound:
                pass

    # -- strategies --------------------------------------------------------------------------

    async def rollout_rolling(self, rs_list: list[ReplicaSet]) -> float | None:
        new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=True)
        assert new_rs is not None
        all_rss: list[ReplicaSet] = [*old_rss, new_rs]
        target = plan_new_replica_set(self.d, all_rss, new_rs)
        if target is not None:
            scaled, new_rs = await self.scale_replica_set(
                ScaleStep(new_rs, target, "up" if target > rs_replicas(new_rs) else "down")
            )
            if scaled:
                return await self.sync_rollout_status([*old_rss, new_rs], new_rs)
        if await self.reconcile_old_replica_sets(all_rss, old_rss, new_rs):
            return await self.sync_rollout_status(all_rss, new_rs)
        if deployment_complete(self.d, self.status()):
            await self.cleanup(old_rss)
        return await self.sync_rollout_status(all_rss, new_rs)

    async def reconcile_old_replica_sets(
        self, all_rss: list[ReplicaSet], old_rss: list[ReplicaSet], new_rs: ReplicaSet
    ) -> bool:
        active_old = active_replica_sets(old_rss)
        if not active_old:
            return False
        budget = max_scaled_down(self.d, all_rss, new_rs)
        if budget <= 0:
            return False
        cleanup = plan_cleanup_unhealthy(active_old, budget)
        _, active_old = await self.apply(cleanup, active_old)
        steps = plan_scale_down_old(self.d, [*active_old, new_rs], active_old)
        await self.apply(steps, active_old)
        total = sum(rs_replicas(s.rs) - s.replicas for s in [*cleanup, *steps])
        return total > 0

    async def rollout_recreate(self, rs_list: list[ReplicaSet]) -> float | None:
        new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=False)
        all_rss: list[ReplicaSet | None] = [*old_rss, new_rs]
        steps = [ScaleStep(rs, 0, "down") for rs in active_replica_sets(old_rss)]
        scaled, _ = await self.apply(steps, list(old_rss))
        if scaled:
            return await self.sync_rollout_status(all_rss, new_rs)
        if old_pods_running(new_rs, old_rss, self.ctl.pod_map(self.d, rs_list)):
            return await self.sync_rollout_status(all_rss, new_rs)
        if new_rs is None:
            new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=True)
            assert new_rs is not None
            all_rss = [*old_rss, new_rs]
        replicas = deployment_replicas(self.d)
        if rs_replicas(new_rs) != replicas:
            await self.scale_replica_set(
                ScaleStep(new_rs, replicas, "up" if replicas > rs_replicas(new_rs) else "down")
            )
        if deployment_complete(self.d, self.status()):
            await self.cleanup(old_rss)
        return await self.sync_rollout_status(all_rss, new_rs)

    async def sync_rollout_status(
        self, all_rss: list[ReplicaSet] | list[ReplicaSet | None], new_rs: ReplicaSet | None
    ) -> float | None:
        """Write the rollout status; returns when to look again for a stuck rollout."""
        now = self.now
        status = rollout_status(list(all_rss), new_rs, self.d, now)
        if status_equal(self.d.status, status):
            return stuck_requeue_after(self.d, status, now)
        await self.write_status(status)
        return None

    # -- rollback (the deprecated annotation) -----------------------------------------------

    def rollback_to(self) -> int | None:
        value = (self.d.metadata.annotations or {}).get(DEPRECATED_ROLLBACK_TO)
        if not value:
            return None
        try:
            return int(value)
        except ValueError:
            return None

    async def rollback(self, rs_list: list[ReplicaSet], to: int) -> None:
        new_rs, old_rss = await self.get_all_replica_sets(rs_list, create=True)
        all_rss = [*old_rss, *([new_rs] if new_rs is not None else [])]
        if to == 0:
            to = last_revision(all_rss)
            if to == 0:
                self.event(
                    "Warning", "DeploymentRollbackRevisionNotFound", "Unable to find last revision."
                )
                await self.clear_rollback_to(None)
                return
        for rs in all_rss:
            if revision(rs) != to:
                continue
            template = self.d.spec.template if self.d.spec is not None else None
            if not equal_ignore_hash(template, rs.spec.template if rs.spec else None):
                await self.clear_rollback_to(rs)
                self.event(
                    "Normal",
                    "DeploymentRollback",
                    f'Rolled back deployment "{self.name}" to revision {to}',
                )
            else:
                self.event(
                    "Warning",
                    "DeploymentRollbackTemplateUnchanged",
                    "The rollback revision contains the same template as current deployment "
                    f'"{self.name}"',
                )
                await self.clear_rollback_to(None)
            return
        self.event(
            "Warning",
            "DeploymentRollbackRevisionNotFound",
            "Unable to find the revision to rollback to.",
        )
        await self.clear_rollback_to(None)

    async def clear_rollback_to(self, rs: ReplicaSet | None) -> None:
        """Remove the rollback annotation; with ``rs``, also take its template (without the
        hash label) and its annotations (``SetFromReplicaSetTemplate``)."""
        d = self.d
        assert d.spec is not None
        spec = d.spec
        if rs is not None and rs.spec is not None and rs.spec.template is not None:
            annotations = rollback_annotations(d, rs)
            tmpl = rs.spec.template
            tmeta = tmpl.metadata or ObjectMeta()
            labels = {
                k: v
                for k, v in (tmeta.labels or {}).items()
                if k != DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY
            }
            tmpl = msgspec.structs.replace(
                tmpl, metadata=msgspec.structs.replace(tmeta, labels=labels or None)
            )
            spec = msgspec.structs.replace(spec, template=tmpl)
        else:
            annotations = dict(d.metadata.annotations or {})
        annotations.pop(DEPRECATED_ROLLBACK_TO, None)
        new = msgspec.structs.replace(
            d,
            metadata=msgspec.structs.replace(d.metadata, annotations=annotations or None),
            spec=spec,
        )
        await self.update_deployment(new)
