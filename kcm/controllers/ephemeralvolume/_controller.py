"""The ephemeral volume controller: each generic ephemeral volume of a pod gets its
PersistentVolumeClaim, ``<pod>-<volume>``, made from the volume's claim template and owned by
the pod (so the garbage collector deletes it with the pod).

kube-controller-manager's ``ephemeral-volume``. A pod that is added (and not being deleted) is
queued if it has an ephemeral volume, and again when one of its claims is deleted. A claim of
that name which the pod does not own is an error: a ``FailedBinding`` warning on the pod, and the
pod is retried with backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry, Counter

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    POD_PVC_INDEX,
    add_pod_pvc_index,
    ephemeral_claim_name,
    ephemeral_claim_refusal,
)
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import PersistentVolumeClaim, Pod, Volume
from kcm.models.meta_v1 import ObjectMeta, OwnerReference
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result
from kcm.workqueue import default_controller_rate_limiter

__all__ = ["ClaimConflict", "EphemeralVolumeController", "claim_for"]

logger = logging.getLogger(__name__)


class ClaimConflict(Exception):
    """A claim with the ephemeral volume's name exists and the pod does not own it."""


def claim_for(pod: Pod, volume: Volume) -> PersistentVolumeClaim:
    """The claim kube creates for ``pod``'s ephemeral ``volume``: the template's labels,
    annotations and spec, named ``<pod>-<volume>``, controlled by the pod."""
    assert volume.ephemeral is not None
    template = volume.ephemeral.volume_claim_template
    meta = template.metadata if template and template.metadata else ObjectMeta()
    owner = OwnerReference(
        api_version="v1",
        kind="Pod",
        name=pod.metadata.name or "",
        uid=pod.metadata.uid or "",
        controller=True,
        block_owner_deletion=True,
    )
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=ephemeral_claim_name(pod, volume),
            namespace=pod.metadata.namespace,
            owner_references=[owner],
            annotations=meta.annotations,
            labels=meta.labels,
        ),
        spec=template.spec if template else None,
    )


def _has_ephemeral(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is None and any(
        v.ephemeral is not None for v in (pod.spec.volumes if pod.spec else None) or ()
    )


class _NewPods:
    def create_keys(self, obj: Pod, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if _has_ephemeral(obj) else ()

    def update_keys(self, old: Pod, new: Pod) -> Iterable[ObjectKey]:
        return ()

    def delete_keys(self, obj: Pod, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


@final
class EphemeralVolumeController:
    """Creates the claims of pods' generic ephemeral volumes.

    Args:
        client: the API client the claims are created with.
        factory: where the Pod and PersistentVolumeClaim informers come from.
        recorder: ``FailedBinding`` warnings on pods whose claim name is taken.
        clock: the queue's backoff clock.
        workers: concurrent syncs (kube-controller-manager's ``--concurrent-ephemeralvolume-
            syncs``, 5).
        registry: a Prometheus registry for the controller, queue and
            ``ephemeral_volume_controller_create_total`` / ``..._create_failures_total``.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 5,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._client = client
        self._recorder = recorder
        pods = factory.informer_for(Pod)
        claims = factory.informer_for(PersistentVolumeClaim)
        add_pod_pvc_index(pods)
        self._pods = pods.lister()
        self._claims = claims.lister()
        self._created: Counter | None = None
        self._failed: Counter | None = None
        if registry is not None:
            self._created = Counter(
                "ephemeral_volume_controller_create",
                "PVC creations by the ephemeral volume controller",
                registry=registry,
            )
            self._failed = Counter(
                "ephemeral_volume_controller_create_failures",
                "Failed PVC creations by the ephemeral volume controller",
                registry=registry,
            )
        self.controller: Controller[ObjectKey] = Controller(
            "ephemeral_volume",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(pods, _NewPods(), kind="Pod")
        self.controller.watch(claims, _DeletedClaims(self), kind="PersistentVolumeClaim")

    def __repr__(self) -> str:
        return "<EphemeralVolumeController>"

    def pods_using(self, pvc: PersistentVolumeClaim) -> list[ObjectKey]:
        """The keys of cached pods with an ephemeral volume that use ``pvc``."""
        key = f"{pvc.metadata.namespace}/{pvc.metadata.name}"
        return [object_key(p) for p in self._pods.by_index(POD_PVC_INDEX, key) if _has_ephemeral(p)]

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Create claims until cancelled (started once the caches have synced)."""
        await self.controller.run(task_status=task_status)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Create the missing claims of pod ``request``'s ephemeral volumes.

        Raises:
            ClaimConflict: a claim of that name belongs to something else (retried).
            KcmError: a create failed (retried).
        """
        pod = self._pods.get_or_none(request.namespace, request.name)
        if pod is None or pod.metadata.deletion_timestamp is not None:
            return Result()
        for volume in (pod.spec.volumes if pod.spec else None) or ():
            if volume.ephemeral is None:
                continue
            try:
                await self._ensure_claim(pod, volume)
            except Exception as exc:
                self._recorder.event(
                    pod, "Warning", "FailedBinding", f"ephemeral volume {volume.name}: {exc}"
                )
                raise
        return Result()

    async def _ensure_claim(self, pod: Pod, volume: Volume) -> None:
        name = ephemeral_claim_name(pod, volume)
        existing = self._claims.get_or_none(pod.metadata.namespace, name)
        if existing is not None:
            refusal = ephemeral_claim_refusal(pod, existing)
            if refusal is not None:
                raise ClaimConflict(refusal)
            return
        if self._created is not None:
            self._created.inc()
        api: Any = self._client.api(PersistentVolumeClaim, pod.metadata.namespace)
        try:
            await api.create(claim_for(pod, volume))
        except Exception as exc:
            if self._failed is not None:
                self._failed.inc()
            raise ClaimConflict(f"create PVC {name}: {exc}") from exc
        logger.info("created PVC %s/%s for pod %s", pod.metadata.namespace, name, pod.metadata.name)


class _DeletedClaims:
    """kube's ``onPVCDelete``: a deleted claim queues the pods that use it."""

    def __init__(self, controller: EphemeralVolumeController) -> None:
        self._controller = controller

    def create_keys(
        self, obj: PersistentVolumeClaim, *, is_in_initial_list: bool
    ) -> Iterable[ObjectKey]:
        return ()

    def update_keys(
        self, old: PersistentVolumeClaim, new: PersistentVolumeClaim
    ) -> Iterable[ObjectKey]:
        return ()

    def delete_keys(
        self, obj: PersistentVolumeClaim, *, final_state_unknown: bool
    ) -> Iterable[ObjectKey]:
        return self._controller.pods_using(obj)
