"""The PersistentVolume binder: binds claims to volumes, asks external provisioners for new
ones, and reclaims volumes whose claim is gone.

kube-controller-manager's ``persistentvolume-binder`` (``pkg/controller/volume/
persistentvolume``). One queue holds both kinds: a key without a namespace is a volume, one
with a namespace a claim; one worker (kube runs one per kind, and the two race only through
the API server). Writes go through optimistic concurrency; the objects written are remembered
until the informer shows them (:class:`_Written`), so the next sync does not act on a stale
cache, as kube's controller keeps its own store of what it wrote. Every claim and volume is
synced again every ``sync_period`` (``--pvclaimbinder-sync-period``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial
from typing import Any, Generic, TypeVar, Unpack, final

import anyio
import msgspec
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    POD_PVC_INDEX,
    ControllerBase,
    ControllerOptions,
    add_pod_pvc_index,
    claim_class,
    is_volume_bound_to_claim,
    run_every,
)
from kcm.errors import NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import (
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimStatus,
    PersistentVolumeSpec,
    PersistentVolumeStatus,
    Pod,
)
from kcm.models.storage_v1 import StorageClass
from kcm.record import object_reference
from kcm.runtime import Controller, Result
from kcm.workqueue import default_controller_rate_limiter

from ._deleters import deleter_for
from ._matching import find_best_match, volume_mode_mismatch, why_volume_does_not_satisfy

__all__ = ["DEFAULT_SYNC_PERIOD", "PersistentVolumeBinder"]

logger = logging.getLogger(__name__)

DEFAULT_SYNC_PERIOD = 15.0
"""``--pvclaimbinder-sync-period``: how often every claim and volume is synced again."""

_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
_TERMINATED = ("Failed", "Succeeded")

T = TypeVar("T", PersistentVolume, PersistentVolumeClaim)


def _rv(obj: Any) -> int:
    try:
        return int(obj.metadata.resource_version or 0)
    except ValueError:
        return 0


class _Written(Generic[T]):
    """The objects this controller wrote, until the informer has caught up with them."""

    def __init__(self) -> None:
        self._objects: dict[ObjectKey, T] = {}

    def remember(self, obj: T) -> T:
        self._objects[object_key(obj)] = obj
        return obj

    def fresh(self, key: ObjectKey, cached: T | None) -> T | None:
        """The newer of the cached object and the one written (None: it is gone)."""
        written = self._objects.get(key)
        if written is None:
            return cached
        if cached is None or _rv(cached) >= _rv(written):
            del self._objects[key]
            return cached
        return written


def _phase(obj: PersistentVolume | PersistentVolumeClaim) -> str | None:
    return obj.status.phase if obj.status else None


def _annotations(obj: Any) -> dict[str, str]:
    return dict(obj.metadata.annotations or {})


def _with_annotations(obj: T, annotations: dict[str, str]) -> T:
    metadata = msgspec.structs.replace(obj.metadata, annotations=annotations or None)
    return msgspec.structs.replace(obj, metadata=metadata)


def _claim_key(ref: ObjectReference) -> ObjectKey:
    return ObjectKey(ref.namespace or "", ref.name or "")


@final
class PersistentVolumeBinder(ControllerBase):
    """Binds PersistentVolumeClaims to PersistentVolumes (see the module docstring).

    Args:
        client: the API client volumes and claims are written with.
        factory: where the PersistentVolume, PersistentVolumeClaim, StorageClass and Pod
            informers come from.
        recorder: the ``persistentvolume-controller`` event sink.
        clock: the resync period and the queue's backoff run on it.
        workers: concurrent syncs (1: claims and volumes of one binding must not race).
        registry: a Prometheus registry for the controller and queue metrics.
        sync_period: ``--pvclaimbinder-sync-period`` in seconds (0 disables the resync).
        enable_dynamic_provisioning: ``--enable-dynamic-provisioning``: whether claims of a
            class with no matching volume are handed to the class's provisioner.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        sync_period: float = DEFAULT_SYNC_PERIOD,
        enable_dynamic_provisioning: bool = True,
        **options: Unpack[ControllerOptions],
    ) -> None:
        super().__init__(client, **options)
        self._sync_period = sync_period
        self._provisioning = enable_dynamic_provisioning
        volumes = factory.informer_for(PersistentVolume)
        claims = factory.informer_for(PersistentVolumeClaim)
        classes = factory.informer_for(StorageClass)
        pods = factory.informer_for(Pod)
        add_pod_pvc_index(pods)
        self._volumes = volumes.lister()
        self._claims = claims.lister()
        self._classes = classes.lister()
        self._pods = pods.lister()
        self._written_volumes: _Written[PersistentVolume] = _Written()
        self._written_claims: _Written[PersistentVolumeClaim] = _Written()
        self.controller: Controller[ObjectKey] = self.new_controller(
            "persistentvolume-binder",
            self,
            rate_limiter=default_controller_rate_limiter(clock=self.clock),
        )
        self.controller.watch(volumes, _VolumeEvents(), kind="PersistentVolume")
        self.controller.watch(claims, _ClaimEvents(), kind="PersistentVolumeClaim")
        self._lister_only = [classes.add_event_handler(), pods.add_event_handler()]
        self.controller.wait_for(self._lister_only, kind="StorageClass and Pod")

    def __repr__(self) -> str:
        return f"<PersistentVolumeBinder sync_period={self._sync_period}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Bind until cancelled; every ``sync_period`` everything is synced again."""
        try:
            async with anyio.create_task_group() as tg:
                await tg.start(self.controller.run)
                if self._sync_period > 0:
                    tg.start_soon(
                        partial(
                            run_every, self._clock, self._sync_period, self._resync, at_once=False
                        )
                    )
                task_status.started()
        finally:
            for registration in self._lister_only:
                registration.remove()

    async def _resync(self) -> None:
        for claim in self._claims.list():
            self.controller.enqueue(object_key(claim))
        for volume in self._volumes.list():
            self.controller.enqueue(object_key(volume))

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sync the volume (no namespace) or claim ``request``.

        Raises:
            KcmError: a write failed (retried with backoff).
        """
        try:
            if request.namespace:
                claim = self._claim(request)
                if claim is not None:
                    await self._sync_claim(claim)
            else:
                volume = self._volume(request.name)
                if volume is not None:
                    await self._sync_volume(volume)
        except NotFound:
            pass  # deleted meanwhile; its deletion is an event of its own
        return Result()

    # -- reading ------------------------------------------------------------------------------

    def _volume(self, name: str) -> PersistentVolume | None:
        key = ObjectKey("", name)
        return self._written_volumes.fresh(key, self._volumes.get_or_none(None, name))

    def _claim(self, key: ObjectKey) -> PersistentVolumeClaim | None:
        return self._written_claims.fresh(key, self._claims.get_or_none(key.namespace, key.name))

    def _all_volumes(self) -> list[PersistentVolume]:
        found = (self._volume(v.metadata.name or "") for v in self._volumes.list())
        return sorted((v for v in found if v is not None), key=lambda v: v.metadata.name or "")

    def _delay_binding(self, claim: PersistentVolumeClaim) -> bool:
        name = claim_class(claim)
        if not name:
            return False
        found = self._classes.get_or_none(None, name)
        if found is None:
            return False
        if found.volume_binding_mode is None:
            raise ValueError(f'VolumeBindingMode not set for StorageClass "{name}"')
        return found.volume_binding_mode == _WAIT_FOR_FIRST_CONSUMER

    # -- claims -------------------------------------------------------------------------------

    async def _sync_claim(self, claim: PersistentVolumeClaim) -> None:
        if ANN_BIND_COMPLETED in _annotations(claim):
            await self._sync_bound_claim(claim)
        else:
            await self._sync_unbound_claim(claim)

    async def _sync_unbound_claim(self, claim: PersistentVolumeClaim) -> None:
        volume_name = claim.spec.volume_name if claim.spec else None
        if not volume_name:
            delay = self._delay_binding(claim)
            volume = find_best_match(claim, self._all_volumes(), delay_binding=delay)
            if volume is not None:
                await self._bind(volume, claim)
                return
            if delay and ANN_SELECTED_NODE not in _annotations(claim):
                self._event_for_unbound_delayed_claim(claim)
            elif claim_class(claim):
                await self._provision(claim)
                return
            else:
                self._recorder.event(
                    claim,
                    "Normal",
                    "FailedBinding",
                    "no persistent volumes available for this claim and no storage class is set",
                )
            await self._set_claim_status(claim, "Pending", None)
            return
        volume = self._volume(volume_name)
        if volume is None:
            await self._set_claim_status(claim, "Pending", None)
            return
        if volume.spec is None or volume.spec.claim_ref is None:
            reason = why_volume_does_not_satisfy(volume, claim)
            if reason is not None:
                message = f'Cannot bind to requested volume "{volume_name}": {reason}'
                self._recorder.event(claim, "Warning", "VolumeMismatch", message)
                await self._set_claim_status(claim, "Pending", None)
            else:
                await self._bind(volume, claim)
            return
        if is_volume_bound_to_claim(volume, claim):
            await self._bind(volume, claim)
            return
        message = f'volume "{volume_name}" already bound to a different claim.'
        self._recorder.event(claim, "Warning", "FailedBinding", message)
        if ANN_BOUND_BY_CONTROLLER not in _annotations(claim):
            await self._set_claim_status(claim, "Pending", None)

    def _event_for_unbound_delayed_claim(self, claim: PersistentVolumeClaim) -> None:
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        waiting = [
            pod.metadata.name or ""
            for pod in self._pods.by_index(POD_PVC_INDEX, key)
            if (pod.status.phase if pod.status else None) not in _TERMINATED
            and not (pod.spec and pod.spec.node_name)
        ]
        if not waiting:
            reason, message = (
                "WaitForFirstConsumer",
                "waiting for first consumer to be created before binding",
            )
        elif len(waiting) == 1:
            reason, message = "WaitForPodScheduled", f"waiting for pod {waiting[0]} to be scheduled"
        else:
            reason = "WaitForPodScheduled"
            message = f"waiting for pods {','.join(waiting)} to be scheduled"
        self._recorder.event(claim, "Normal", reason, message)

    async def _sync_bound_claim(self, claim: PersistentVolumeClaim) -> None:
        volume_name = claim.spec.volume_name if claim.spec else None
        if not volume_name:
            await self._lose_claim(
                claim,
                "ClaimLost",
                "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
            )
            return
        volume = self._volume(volume_name) or await self._live_volume(volume_name)
        if volume is None:
            await self._lose_claim(
                claim,
                "ClaimLost",
                "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
            )
            return
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is None or ref.uid == claim.metadata.uid:
            await self._bind(volume, claim)
            return
        await self._lose_claim(
            claim,
            "ClaimMisbound",
            "Two claims are bound to the same volume, this one is bound incorrectly",
        )

    async def _lose_claim(self, claim: PersistentVolumeClaim, reason: str, message: str) -> None:
        if _phase(claim) == "Lost":
            return
        updated = await self._set_claim_status(claim, "Lost", None)
        self._recorder.event(updated, "Warning", reason, message)

    async def _provision(self, claim: PersistentVolumeClaim) -> None:
        """Hand the claim to its class's (external) provisioner: annotate it and say so."""
        if not self._provisioning:
            return
        name = claim_class(claim)
        found = self._classes.get_or_none(None, name)
        if found is None:
            message = f'storageclass.storage.k8s.io "{name}" not found'
            self._recorder.event(claim, "Warning", "ProvisioningFailed", message)
            return
        provisioner = found.provisioner or ""
        if provisioner.startswith("kubernetes.io/"):
            message = f"no volume plugin matched name: {provisioner}"
            self._recorder.event(claim, "Warning", "ProvisioningFailed", message)
            return
        annotations = _annotations(claim)
        if annotations.get(ANN_STORAGE_PROVISIONER) != provisioner:
            annotations[ANN_BETA_STORAGE_PROVISIONER] = provisioner
            annotations[ANN_STORAGE_PROVISIONER] = provisioner
            claim = await self._update_claim(claim, _with_annotations(claim, annotations))
        message = (
            f'waiting for a volume to be created, either by external provisioner "{provisioner}" '
            "or manually created by system administrator"
        )
        self._recorder.event(claim, "Normal", "ExternalProvisioning", message)

    # -- volumes ------------------------------------------------------------------------------

    async def _sync_volume(self, volume: PersistentVolume) -> None:
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is None or not ref.uid:
            await self._set_volume_phase(volume, "Available")
            return
        claim = await self._claim_of(volume, ref)
        if claim is None:
            if _phase(volume) not in ("Released", "Failed"):
                volume = await self._set_volume_phase(volume, "Released")
            await self._reclaim(volume)
            return
        claim_volume = claim.spec.volume_name if claim.spec else None
        if not claim_volume:
            if volume_mode_mismatch(claim, volume):
                self._recorder.event(
                    volume,
                    "Warning",
                    "VolumeMismatch",
                    "Cannot bind PersistentVolume to requested PersistentVolumeClaim "
                    f'"{claim.metadata.name}" due to incompatible volumeMode.',
                )
                self._recorder.event(
                    claim,
                    "Warning",
                    "VolumeMismatch",
                    f'Cannot bind PersistentVolume "{volume.metadata.name}" to requested '
                    "PersistentVolumeClaim due to incompatible volumeMode.",
                )
                return
            self.controller.enqueue(object_key(claim))  # the claim's sync binds it
            return
        if claim_volume == volume.metadata.name:
            await self._set_volume_phase(volume, "Bound")
            if _phase(claim) != "Bound":
                self.controller.enqueue(object_key(claim))  # e.g. Lost while this was away
            return
        # The claim is bound to another volume.
        provisioned = ANN_DYNAMICALLY_PROVISIONED in _annotations(volume)
        if provisioned and _reclaim_policy(volume) == "Delete":
            if _phase(volume) not in ("Released", "Failed"):
                volume = await self._set_volume_phase(volume, "Released")
            await self._reclaim(volume)
            return
        await self._unbind(volume)

    async def _claim_of(
        self, volume: PersistentVolume, ref: ObjectReference
    ) -> PersistentVolumeClaim | None:
        """The claim ``ref`` names if it is the one with the ref's UID; a claim missing from
        the cache is looked up live unless the volume is already released (it may be new)."""
        key = _claim_key(ref)
        claim = self._claim(key)
        if claim is None and _phase(volume) not in ("Released", "Failed"):
            claim = await self._live_claim(key)
        if claim is not None and claim.metadata.uid != ref.uid:
            claim = await self._live_claim(key)
            if claim is not None and claim.metadata.uid != ref.uid:
                claim = None
        return claim

    async def _live_volume(self, name: str) -> PersistentVolume | None:
        """The volume as the server has it: a volume missing from the cache may be new (its
        watch event behind the claim's), and a claim is not declared Lost on a cache's word."""
        try:
            volume: PersistentVolume = await self._client.api(PersistentVolume).get(name)
        except NotFound:
            return None
        return volume

    async def _live_claim(self, key: ObjectKey) -> PersistentVolumeClaim | None:
        try:
            claim: PersistentVolumeClaim = await self._client.api(
                PersistentVolumeClaim, key.namespace
            ).get(key.name)
        except NotFound:
            return None
        return claim

    async def _reclaim(self, volume: PersistentVolume) -> None:
        policy = _reclaim_policy(volume)
        if policy == "Retain":
            return
        if policy == "Delete":
            await self._delete(volume)
        elif policy == "Recycle":
            await self._fail(
                volume, "VolumeFailedRecycle", "No recycler plugin found for the volume!"
            )
        else:
            await self._fail(
                volume,
                "VolumeUnknownReclaimPolicy",
                "Volume has unrecognized PersistentVolumeReclaimPolicy",
            )

    async def _delete(self, volume: PersistentVolume) -> None:
        """kube's ``deleteVolumeOperation``: re-read the volume, check it is still released,
        and delete it if a deleter exists (or leave it to its external provisioner)."""
        api: Any = self._client.api(PersistentVolume)
        live: PersistentVolume = await api.get(volume.metadata.name)
        if live.metadata.deletion_timestamp is not None or not self._is_released(live):
            return
        decision = deleter_for(live)
        if decision.external:
            return
        if decision.failure is not None:
            await self._fail(
                self._written_volumes.remember(live), "VolumeFailedDelete", decision.failure
            )
            return
        await api.delete(live.metadata.name)

    def _is_released(self, volume: PersistentVolume) -> bool:
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is None or not ref.uid:
            return False
        claim = self._claim(_claim_key(ref))
        if claim is not None and claim.metadata.uid == ref.uid:
            bound_to = claim.spec.volume_name if claim.spec else None
            return bool(bound_to) and bound_to != volume.metadata.name
        return True

    async def _fail(self, volume: PersistentVolume, reason: str, message: str) -> None:
        if _phase(volume) == "Failed":
            return
        updated = await self._set_volume_phase(volume, "Failed", message)
        self._recorder.event(updated, "Warning", reason, message)

    async def _unbind(self, volume: PersistentVolume) -> None:
        """Free a volume whose claim went to another volume: the controller's own binding is
        undone whole, a user's pre-binding keeps the claim's name without its UID."""
        assert volume.spec is not None
        assert volume.spec.claim_ref is not None
        annotations = _annotations(volume)
        if ANN_BOUND_BY_CONTROLLER in annotations:
            del annotations[ANN_BOUND_BY_CONTROLLER]
            spec = msgspec.structs.replace(volume.spec, claim_ref=None)
        else:
            ref = msgspec.structs.replace(volume.spec.claim_ref, uid=None)
            spec = msgspec.structs.replace(volume.spec, claim_ref=ref)
        new = msgspec.structs.replace(_with_annotations(volume, annotations), spec=spec)
        updated = await self._update_volume(volume, new)
        await self._set_volume_phase(updated, "Available")

    # -- binding ------------------------------------------------------------------------------

    async def _bind(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """Point the volume at the claim, mark it Bound, point the claim at the volume, mark
        it Bound: kube's order, each step skipped when already done."""
        volume = await self._bind_volume_to_claim(volume, claim)
        volume = await self._set_volume_phase(volume, "Bound")
        claim = await self._bind_claim_to_volume(claim, volume)
        await self._set_claim_status(claim, "Bound", volume)

    async def _bind_volume_to_claim(
        self, volume: PersistentVolume, claim: PersistentVolumeClaim
    ) -> PersistentVolume:
        spec = volume.spec or PersistentVolumeSpec()
        ref = spec.claim_ref
        annotations = _annotations(volume)
        dirty = False
        if (
            ref is None
            or ref.name != claim.metadata.name
            or ref.namespace != claim.metadata.namespace
            or ref.uid != claim.metadata.uid
        ):
            spec = msgspec.structs.replace(
                spec,
                claim_ref=object_reference(claim),
            )
            dirty = True
        if not is_volume_bound_to_claim(volume, claim) and ANN_BOUND_BY_CONTROLLER not in (
            annotations
        ):
            annotations[ANN_BOUND_BY_CONTROLLER] = "yes"
            dirty = True
        if not dirty:
            return volume
        new = msgspec.structs.replace(_with_annotations(volume, annotations), spec=spec)
        logger.info(
            "claim %s/%s bound to volume %s",
            claim.metadata.namespace,
            claim.metadata.name,
            volume.metadata.name,
        )
        return await self._update_volume(volume, new)

    async def _bind_claim_to_volume(
        self, claim: PersistentVolumeClaim, volume: PersistentVolume
    ) -> PersistentVolumeClaim:
        annotations = _annotations(claim)
        spec = claim.spec
        dirty = False
        if spec is not None and spec.volume_name != volume.metadata.name:
            spec = msgspec.structs.replace(spec, volume_name=volume.metadata.name)
            annotations.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
            dirty = True
        if ANN_BIND_COMPLETED not in annotations:
            annotations[ANN_BIND_COMPLETED] = "yes"
            dirty = True
        if not dirty:
            return claim
        new = msgspec.structs.replace(_with_annotations(claim, annotations), spec=spec)
        return await self._update_claim(claim, new)

    # -- writes -------------------------------------------------------------------------------

    async def _set_volume_phase(
        self, volume: PersistentVolume, phase: str, message: str | None = None
    ) -> PersistentVolume:
        if _phase(volume) == phase:
            return volume
        status = msgspec.structs.replace(
            volume.status or PersistentVolumeStatus(), phase=phase, message=message or None
        )
        api: Any = self._client.api(PersistentVolume)
        updated: PersistentVolume = await api.replace_status(
            msgspec.structs.replace(volume, status=status)
        )
        logger.info("volume %s entered phase %s", volume.metadata.name, phase)
        return self._written_volumes.remember(updated)

    async def _set_claim_status(
        self, claim: PersistentVolumeClaim, phase: str, volume: PersistentVolume | None
    ) -> PersistentVolumeClaim:
        """kube's ``updateClaimStatus``: the phase, and the volume's access modes and
        capacity (cleared without a volume)."""
        current = claim.status or PersistentVolumeClaimStatus()
        status = msgspec.structs.replace(current, phase=phase)
        if volume is None:
            status = msgspec.structs.replace(status, access_modes=None, capacity=None)
        else:
            spec = volume.spec or PersistentVolumeSpec()
            status = msgspec.structs.replace(status, access_modes=spec.access_modes)
            if current.phase != phase:
                capacity = dict(spec.capacity or {})
                if "storage" not in capacity:
                    raise ValueError(
                        f'PersistentVolume "{volume.metadata.name}" is without a storage capacity'
                    )
                if (current.capacity or {}).get("storage") != capacity["storage"]:
                    status = msgspec.structs.replace(status, capacity=spec.capacity)
        if status == current:
            return claim
        api: Any = self._client.api(PersistentVolumeClaim, claim.metadata.namespace)
        updated: PersistentVolumeClaim = await api.replace_status(
            msgspec.structs.replace(claim, status=status)
        )
        logger.info(
            "claim %s/%s entered phase %s", claim.metadata.namespace, claim.metadata.name, phase
        )
        return self._written_claims.remember(updated)

    async def _update_volume(
        self, old: PersistentVolume, new: PersistentVolume
    ) -> PersistentVolume:
        api: Any = self._client.api(PersistentVolume)
        updated: PersistentVolume = await api.update(old, new)
        return self._written_volumes.remember(updated)

    async def _update_claim(
        self, old: PersistentVolumeClaim, new: PersistentVolumeClaim
    ) -> PersistentVolumeClaim:
        api: Any = self._client.api(PersistentVolumeClaim, old.metadata.namespace)
        updated: PersistentVolumeClaim = await api.update(old, new)
        return self._written_claims.remember(updated)


def _reclaim_policy(volume: PersistentVolume) -> str:
    return (volume.spec.persistent_volume_reclaim_policy if volume.spec else None) or "Retain"


class _VolumeEvents:
    """A volume's key on every change; on deletion also its claim's, which may be lost."""

    def create_keys(
        self, obj: PersistentVolume, *, is_in_initial_list: bool
    ) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: PersistentVolume, new: PersistentVolume) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(
        self, obj: PersistentVolume, *, final_state_unknown: bool
    ) -> Iterable[ObjectKey]:
        ref = obj.spec.claim_ref if obj.spec else None
        return (object_key(obj),) if ref is None else (object_key(obj), _claim_key(ref))


class _ClaimEvents:
    """A claim's key on every change; on deletion also its volume's, which is released."""

    def create_keys(
        self, obj: PersistentVolumeClaim, *, is_in_initial_list: bool
    ) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(
        self, old: PersistentVolumeClaim, new: PersistentVolumeClaim
    ) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(
        self, obj: PersistentVolumeClaim, *, final_state_unknown: bool
    ) -> Iterable[ObjectKey]:
        name = obj.spec.volume_name if obj.spec else None
        return (object_key(obj),) if not name else (object_key(obj), ObjectKey("", name))
