"""A simulated CSI external-provisioner: creates a PersistentVolume for each claim the PV
binder hands to :data:`SIMULATED_DRIVER`, and deletes the volumes it made once they are
released with reclaim policy Delete.

It plays the external-provisioner sidecar of a CSI driver: a claim annotated
``volume.kubernetes.io/storage-provisioner: simulated.kcm.dev`` (the binder's hand-off), not
bound, of a class with that provisioner, gets a volume ``pvc-<claim uid>`` with the claim's
size, access modes and volume mode, the class's reclaim policy and mount options, a
``claimRef`` to the claim (so the binder binds the two) and ``spec.csi`` of the simulated
driver. Under WaitForFirstConsumer it waits for ``volume.kubernetes.io/selected-node`` (set by
the scheduler) and pins the volume to that node by ``kubernetes.io/hostname``. It also makes
sure the cluster has the default StorageClass :data:`DEFAULT_STORAGE_CLASS`.

``simulated.kcm.dev`` is a DNS subdomain, as a CSI driver name must be (kube-apiserver refuses
a ``spec.csi.driver`` or CSIDriver name with a ``/``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Unpack, final

import anyio
from anyio.abc import TaskStatus

from kcm.client import ApiClient
from kcm.controllerkit import (
    ANN_BETA_STORAGE_PROVISIONER,
    ANN_DYNAMICALLY_PROVISIONED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_PROVISIONER,
    QueueControllerOptions,
    claim_class,
)
from kcm.errors import AlreadyExists, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, ObjectMeta, object_key
from kcm.models.core_v1 import (
    CSIPersistentVolumeSource,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    VolumeNodeAffinity,
)
from kcm.models.storage_v1 import StorageClass
from kcm.record import object_reference
from kcm.runtime import Result

from ._queue_controller import SimulationQueueController

__all__ = [
    "DEFAULT_CLASS_ANNOTATION",
    "DEFAULT_STORAGE_CLASS",
    "SIMULATED_DRIVER",
    "Provisioner",
    "default_storage_class",
    "provisioned_volume",
]

logger = logging.getLogger(__name__)

SIMULATED_DRIVER = "simulated.kcm.dev"
"""The simulated CSI driver and provisioner name (a StorageClass's ``provisioner``, a PV's
``spec.csi.driver``)."""

DEFAULT_STORAGE_CLASS = "standard"
"""The default StorageClass the simulation creates."""

DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
"""``"true"`` on the class the DefaultStorageClass admission plugin gives new claims."""

_HOSTNAME = "kubernetes.io/hostname"


def default_storage_class() -> StorageClass:
    """``standard``: the simulated driver, WaitForFirstConsumer, Delete, expandable, default."""
    return StorageClass(
        metadata=ObjectMeta(
            name=DEFAULT_STORAGE_CLASS, annotations={DEFAULT_CLASS_ANNOTATION: "true"}
        ),
        provisioner=SIMULATED_DRIVER,
        reclaim_policy="Delete",
        volume_binding_mode="WaitForFirstConsumer",
        allow_volume_expansion=True,
    )


def _hostname_of(node: Node | None, name: str) -> str:
    if node is None:
        return name
    return (node.metadata.labels or {}).get(_HOSTNAME) or name


def provisioned_volume(
    claim: PersistentVolumeClaim, storage_class: StorageClass, node: Node | None = None
) -> PersistentVolume:
    """The volume the provisioner makes for ``claim`` (pinned to ``node`` when given)."""
    spec = claim.spec
    assert spec is not None
    requests = (spec.resources.requests if spec.resources else None) or {}
    affinity = None
    if node is not None:
        hostname = _hostname_of(node, node.metadata.name or "")
        affinity = VolumeNodeAffinity(
            required=NodeSelector(
                node_selector_terms=[
                    NodeSelectorTerm(
                        match_expressions=[
                            NodeSelectorRequirement(key=_HOSTNAME, operator="In", values=[hostname])
                        ]
                    )
                ]
            )
        )
    name = f"pvc-{claim.metadata.uid}"
    return PersistentVolume(
        metadata=ObjectMeta(name=name, annotations={ANN_DYNAMICALLY_PROVISIONED: SIMULATED_DRIVER}),
        spec=PersistentVolumeSpec(
            access_modes=spec.access_modes,
            capacity={"storage": requests.get("storage", "0")},
            claim_ref=object_reference(claim),
            csi=CSIPersistentVolumeSource(
                driver=SIMULATED_DRIVER, volume_handle=name, fs_type="ext4"
            ),
            mount_options=storage_class.mount_options,
            node_affinity=affinity,
            persistent_volume_reclaim_policy=storage_class.reclaim_policy or "Delete",
            storage_class_name=storage_class.metadata.name,
            volume_mode=spec.volume_mode,
        ),
    )


def _handed_to_us(claim: PersistentVolumeClaim) -> bool:
    annotations = claim.metadata.annotations or {}
    provisioner = annotations.get(ANN_STORAGE_PROVISIONER) or annotations.get(
        ANN_BETA_STORAGE_PROVISIONER
    )
    return (
        provisioner == SIMULATED_DRIVER
        and not (claim.spec and claim.spec.volume_name)
        and claim.metadata.deletion_timestamp is None
    )


def _ours_to_delete(volume: PersistentVolume) -> bool:
    annotations = volume.metadata.annotations or {}
    return (
        annotations.get(ANN_DYNAMICALLY_PROVISIONED) == SIMULATED_DRIVER
        and (volume.status.phase if volume.status else None) == "Released"
        and (volume.spec.persistent_volume_reclaim_policy if volume.spec else None) == "Delete"
        and volume.metadata.deletion_timestamp is None
    )


@final
class Provisioner(SimulationQueueController):
    """Provisions and deletes volumes of :data:`SIMULATED_DRIVER` (a Runnable; one runtime
    controller ``sim-provisioner``).

    Args:
        client: the API client (volumes created and deleted, the default class created).
        factory: the shared informer factory (claims, volumes, classes, nodes).
        default_class: whether to create :data:`DEFAULT_STORAGE_CLASS` when missing.
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (``clock``: the queue's
            backoff clock; ``registry``: the controller's metrics; ``recorder``: receives
            ``Provisioning``/``ProvisioningSucceeded`` events on claims).
    """

    queue_name = "sim-provisioner"

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        default_class: bool = True,
        **options: Unpack[QueueControllerOptions],
    ) -> None:
        self._default_class = default_class
        super().__init__(client, factory, **options)

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        claims = factory.informer_for(PersistentVolumeClaim)
        volumes = factory.informer_for(PersistentVolume)
        classes = factory.informer_for(StorageClass)
        nodes = factory.informer_for(Node)
        self._claims = self.watch(claims, _Keys(), kind="PersistentVolumeClaim")
        self._volumes = self.watch(volumes, _Keys(), kind="PersistentVolume")
        self._classes = classes.lister()
        self._nodes = nodes.lister()
        self._listers = [classes.add_event_handler(), nodes.add_event_handler()]
        self.controller.wait_for(self._listers, kind="StorageClass and Node")

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Create the default class if asked, then provision until cancelled."""
        try:
            if self._default_class:
                await self.ensure_default_class()
            await super().run(task_status=task_status)
        finally:
            for registration in self._listers:
                registration.remove()

    async def ensure_default_class(self) -> None:
        """Create :data:`DEFAULT_STORAGE_CLASS` unless a class of that name exists."""
        try:
            await self._client.api(StorageClass).create(default_storage_class())
        except AlreadyExists:
            pass

    async def reconcile(self, request: ObjectKey) -> Result:
        """Provision for the claim, or delete the released volume, ``request`` names."""
        if request.namespace:
            claim = self._claims.get_or_none(request.namespace, request.name)
            if claim is not None and _handed_to_us(claim):
                await self._provision(claim)
        else:
            volume = self._volumes.get_or_none(None, request.name)
            if volume is not None and _ours_to_delete(volume):
                try:
                    await self._client.api(PersistentVolume).delete(request.name)
                except NotFound:
                    pass
                logger.info("deleted released volume %s", request.name)
        return Result()

    async def _provision(self, claim: PersistentVolumeClaim) -> None:
        storage_class = self._classes.get_or_none(None, claim_class(claim))
        if storage_class is None or storage_class.provisioner != SIMULATED_DRIVER:
            return
        node = None
        if storage_class.volume_binding_mode == "WaitForFirstConsumer":
            selected = (claim.metadata.annotations or {}).get(ANN_SELECTED_NODE)
            if not selected:
                return  # the scheduler has not picked a node yet
            node = self._nodes.get_or_none(None, selected)
            if node is None:
                return
        volume = provisioned_volume(claim, storage_class, node)
        if self._volumes.get_or_none(None, volume.metadata.name or "") is not None:
            return
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        self._event(
            claim,
            "Normal",
            "Provisioning",
            f'External provisioner is provisioning volume for claim "{key}"',
        )
        try:
            await self._client.api(PersistentVolume).create(volume)
        except AlreadyExists:
            return
        self._event(
            claim,
            "Normal",
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {volume.metadata.name}",
        )

    def _event(self, claim: Any, type: str, reason: str, message: str) -> None:
        if self._recorder is not None:
            self._recorder.event(claim, type, reason, message)


class _Keys:
    """Every claim and volume change, by key."""

    def create_keys(self, obj: Any, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: Any, new: Any) -> Iterable[ObjectKey]:
        return (object_key(new),)

    def delete_keys(self, obj: Any, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()
