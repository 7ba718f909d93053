"""The attach/detach controller: a VolumeAttachment for every CSI volume a pod on a node uses,
deleted once no pod there uses it, and the node's ``status.volumesAttached``.

kube-controller-manager's ``attachdetach`` (CSI volumes only: every in-tree attachable plugin
is migrated to CSI in newer Kubernetes). kube keeps a desired and an actual state of the world
and a reconciler loop between them; here one reconcile per node compares the caches directly:

* wanted: the bound CSI PVs (through a claim or a generic ephemeral volume) of the node's
  pods that are not terminated, if the node carries ``volumes.kubernetes.io/controller-managed-
  attach-detach`` and the driver's CSIDriver does not say ``attachRequired: false``;
* attach: create ``csi-<sha256>`` with the driver as attacher (an external attacher sets
  ``status.attached``); an attach not attached within two minutes fails (``FailedAttachVolume``
  on its pods) and starts again (:mod:`._attempts`);
* detach: delete the node's VolumeAttachments of PVs no longer wanted, once their attach in
  flight (if any) has ended, and unless the node still reports the volume in
  ``status.volumesInUse`` (kube waits up to 6 minutes for the kubelet to unmount, then
  detaches anyway);
* multi-attach: a volume whose PV allows one node only (no ReadWriteMany or ReadOnlyMany
  among its access modes) is not attached while another node has a VolumeAttachment of it; its
  pods get one ``FailedAttachVolume`` ``Multi-Attach error ...`` once the other node has it
  attached (or its attach failed), nothing while that node's first attach is in flight
  (:mod:`._multi_attach`);
* report: ``status.volumesAttached`` lists the attached, wanted volumes (kube's unique name,
  ``devicePath`` empty), with a ``SuccessfulAttachVolume`` event on the pods when one is new.

``reconcile_sync_period`` re-checks every node (kube's ``--attach-detach-reconcile-sync-period``
state sync) unless ``disable_reconcile_sync``.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, final

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    POD_PVC_INDEX,
    add_pod_pvc_index,
    csi_unique_volume_name,
    is_pod_terminated,
    run_every,
)
from kcm.errors import AlreadyExists, ConfigError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Node, PersistentVolume, PersistentVolumeClaim, Pod
from kcm.models.meta_v1 import ObjectMeta
from kcm.models.storage_v1 import (
    CSIDriver,
    VolumeAttachment,
    VolumeAttachmentSource,
    VolumeAttachmentSpec,
)
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result, enqueue_mapped
from kcm.workqueue import default_controller_rate_limiter

from ._attempts import AttachAttempt, AttachAttempts
from ._desired import WantedVolume, wanted_volumes
from ._multi_attach import multi_attach_allowed, multi_attach_message

__all__ = ["MAX_WAIT_FOR_UNMOUNT", "AttachDetachController", "InvalidSyncPeriod"]

logger = logging.getLogger(__name__)

MAX_WAIT_FOR_UNMOUNT = 6 * 60.0
"""Seconds a detach waits for the node to stop reporting the volume in use (kube's
``maxWaitForUnmountDuration``)."""

MULTI_ATTACH_RECHECK = 60.0
"""Seconds between checks of a volume waiting for another node to let it go (its
VolumeAttachment's deletion also triggers one)."""

_POD_NODE_INDEX = "attachdetach/spec.nodeName"
_ATTACHMENT_NODE_INDEX = "attachdetach/attachment.spec.nodeName"
_ATTACHMENT_VOLUME_INDEX = "attachdetach/attachment.spec.source.persistentVolumeName"


def _attachment_volume(attachment: VolumeAttachment) -> list[str]:
    source = attachment.spec.source if attachment.spec else None
    return [(source.persistent_volume_name if source else None) or ""]


class InvalidSyncPeriod(ConfigError, ValueError):
    """``--attach-detach-reconcile-sync-period`` below one second: kube-controller-manager
    fails to start, and so does ``kcm``."""


def _attached(attachment: VolumeAttachment | None) -> bool:
    return (
        attachment is not None
        and attachment.status is not None
        and bool(attachment.status.attached)
    )


def _node_keys(*names: str | None) -> list[ObjectKey]:
    return [ObjectKey("", n) for n in dict.fromkeys(names) if n]


@final
class AttachDetachController:
    """Attaches and detaches CSI volumes through VolumeAttachments, per node.

    Args:
        client: the API client (VolumeAttachments, node status).
        factory: pods, nodes, claims, volumes, VolumeAttachments and CSIDrivers.
        recorder: ``SuccessfulAttachVolume`` events on pods.
        clock: the queue's backoff, the unmount wait and the sync period.
        workers: concurrent node syncs.
        registry: a Prometheus registry for the controller and queue metrics.
        reconcile_sync_period: seconds between re-checks of every node (at least 1).
        disable_reconcile_sync: no periodic re-check.

    Raises:
        InvalidSyncPeriod: ``reconcile_sync_period`` below 1 second.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder | None = None,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        reconcile_sync_period: float = 60.0,
        disable_reconcile_sync: bool = False,
    ) -> None:
        if reconcile_sync_period < 1:
            raise InvalidSyncPeriod(
                "duration time must be greater than one second as set via command line option "
                "reconcile-sync-loop-period"
            )
        self._client = client
        self._recorder = recorder
        self._clock = clock
        self._sync_period = reconcile_sync_period
        self._sync_disabled = disable_reconcile_sync
        self._waiting_since: dict[str, float] = {}  # attachment -> when its detach first waited
        self._attempts = AttachAttempts()
        # per node, the attachments whose pods were told they wait (multi-attach)
        self._multi_reported: dict[str, set[str]] = {}
        pods = factory.informer_for(Pod)
        add_pod_pvc_index(pods)
        try:
            pods.add_indexers(
                {_POD_NODE_INDEX: lambda p: [(p.spec.node_name if p.spec else None) or ""]}
            )
        except ValueError:
            pass
        attachments = factory.informer_for(VolumeAttachment)
        try:
            attachments.add_indexers(
                {
                    _ATTACHMENT_NODE_INDEX: lambda a: [
                        (a.spec.node_name if a.spec else None) or ""
                    ],
                    _ATTACHMENT_VOLUME_INDEX: _attachment_volume,
                }
            )
        except ValueError:
            pass
        nodes = factory.informer_for(Node)
        claims = factory.informer_for(PersistentVolumeClaim)
        volumes = factory.informer_for(PersistentVolume)
        drivers = factory.informer_for(CSIDriver)
        self._pods = pods.lister()
        self._attachments = attachments.lister()
        self._nodes = nodes.lister()
        self._claims = claims.lister()
        self._volumes = volumes.lister()
        self._drivers = drivers.lister()
        self.controller: Controller[ObjectKey] = Controller(
            "attachdetach",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(nodes, enqueue_mapped(lambda n: _node_keys(n.metadata.name)))
        self.controller.watch(
            pods, enqueue_mapped(lambda p: _node_keys(p.spec.node_name if p.spec else None))
        )
        self.controller.watch(attachments, enqueue_mapped(self._attachment_nodes))
        self.controller.watch(claims, enqueue_mapped(self._claim_nodes))
        self.controller.watch(volumes, enqueue_mapped(self._volume_nodes))
        self.controller.watch(drivers, enqueue_mapped(lambda _: self._all_nodes()))

    def __repr__(self) -> str:
        return "<AttachDetachController>"

    # -- keys --------------------------------------------------------------------------------

    def _claim_nodes(self, claim: PersistentVolumeClaim) -> list[ObjectKey]:
        key = f"{claim.metadata.namespace}/{claim.metadata.name}"
        return _node_keys(
            *(p.spec.node_name if p.spec else None for p in self._pods.by_index(POD_PVC_INDEX, key))
        )

    def _volume_nodes(self, pv: PersistentVolume) -> list[ObjectKey]:
        ref = pv.spec.claim_ref if pv.spec else None
        if ref is None or not ref.name:
            return []
        key = f"{ref.namespace}/{ref.name}"
        return _node_keys(
            *(p.spec.node_name if p.spec else None for p in self._pods.by_index(POD_PVC_INDEX, key))
        )

    def _attachment_nodes(self, attachment: VolumeAttachment) -> list[ObjectKey]:
        """The attachment's node, and those of the pods using its PV (one may be waiting for
        this attachment to go: multi-attach)."""
        keys = _node_keys(attachment.spec.node_name if attachment.spec else None)
        pv = self._volumes.get_or_none(None, _attachment_volume(attachment)[0])
        return list(dict.fromkeys([*keys, *(self._volume_nodes(pv) if pv else ())]))

    def _all_nodes(self) -> list[ObjectKey]:
        names = [n.metadata.name for n in self._nodes.list()]
        names += [a.spec.node_name if a.spec else None for a in self._attachments.list()]
        return _node_keys(*names)

    # -- running -----------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Attach and detach until cancelled, re-checking every node each sync period."""
        async with anyio.create_task_group() as tg:
            await tg.start(self.controller.run)
            if not self._sync_disabled:
                tg.start_soon(
                    partial(run_every, self._clock, self._sync_period, self._sync, at_once=False)
                )
            task_status.started()

    async def _sync(self) -> None:
        for key in self._all_nodes():
            self.controller.enqueue(key)

    # -- reconcile ---------------------------------------------------------------------------

    def _attach_required(self, driver: str) -> bool:
        found = self._drivers.get_or_none(None, driver)
        return found is None or found.spec is None or found.spec.attach_required is not False

    async def reconcile(self, request: ObjectKey) -> Result:
        """Attach what node ``request.name``'s pods need, detach the rest, report the attached.

        Raises:
            KcmError: a write failed (retried with backoff).
        """
        name = request.name
        node = self._nodes.get_or_none(None, name)
        wanted = wanted_volumes(
            node,
            self._pods.by_index(_POD_NODE_INDEX, name),
            self._claims,
            self._volumes,
            self._attach_required,
        )
        existing = {
            a.metadata.name or "": a
            for a in self._attachments.by_index(_ATTACHMENT_NODE_INDEX, name)
        }
        api: Any = self._client.api(VolumeAttachment)
        now = self._clock.monotonic()
        waits: list[float] = []
        for attachment_name, entry in wanted.items():
            found = existing.get(attachment_name)
            blocked = (
                None if found is not None else self._blocked(name, attachment_name, entry, now)
            )
            if blocked is not None:
                waits.append(blocked)
                continue
            self._multi_reported.get(name, set()).discard(attachment_name)
            if found is None:
                await self._attach(api, name, attachment_name, entry)
            failed, due = self._attempts.wanted(
                attachment_name, entry.volume, entry.pods, attached=_attached(found), now=now
            )
            self._report_failure(failed)
            if due is not None:
                waits.append(due)
        in_use = set((node.status.volumes_in_use if node and node.status else None) or ())
        held: set[str] = set()
        for attachment_name, attachment in existing.items():
            if attachment_name in wanted or attachment.metadata.deletion_timestamp is not None:
                continue
            source = attachment.spec.source if attachment.spec else None
            if source is None or not source.persistent_volume_name:
                continue
            failed, in_flight = self._attempts.unwanted(
                attachment_name, attached=_attached(attachment), now=now
            )
            self._report_failure(failed)
            if in_flight > 0:
                waits.append(in_flight)
                continue
            wait = self._unmount_wait(attachment, in_use, node)
            if wait > 0:
                held.add(attachment_name)
                waits.append(wait)
                continue
            self._waiting_since.pop(attachment_name, None)
            self._attempts.forget(attachment_name)
            try:
                await api.delete(attachment_name)
                logger.info("detaching volume attachment %s from node %s", attachment_name, name)
            except NotFound:
                pass
        reported = self._multi_reported.get(name)
        if reported is not None:
            reported.intersection_update(wanted)
            if not reported:
                del self._multi_reported[name]
        if node is not None:
            await self._report(node, wanted, existing, held)
        return Result(requeue_after=min(waits)) if waits else Result()

    def _blocked(
        self, node: str, attachment_name: str, entry: WantedVolume, now: float
    ) -> float | None:
        """None if the volume may be attached to ``node``; else seconds to check again.

        Only one node may use it and another has it: attached, or attaching after a failed
        attempt (the waiting pods get a ``FailedAttachVolume`` once); or its first attach in
        flight, which kube's executor runs alone (silently, until it ends)."""
        pv = self._volumes.get_or_none(None, entry.volume.pv_name)
        if multi_attach_allowed(pv):
            return None
        known: set[str] = set()
        pending: list[float] = []
        for other in self._attachments.by_index(_ATTACHMENT_VOLUME_INDEX, entry.volume.pv_name):
            other_node = other.spec.node_name if other.spec else None
            if not other_node or other_node == node:
                continue
            in_flight = self._attempts.first_in_flight(other.metadata.name or "", now)
            if in_flight is None or _attached(other):
                known.add(other_node)
            else:
                pending.append(in_flight)
        if not known:
            return min(pending) if pending else None
        reported = self._multi_reported.setdefault(node, set())
        if attachment_name not in reported:
            reported.add(attachment_name)
            users = self._users_on(known, pv)
            if self._recorder is not None:
                for pod in entry.pods:
                    message = multi_attach_message(entry.volume.pv_name, pod, users)
                    self._recorder.event(pod, "Warning", "FailedAttachVolume", message)
        return MULTI_ATTACH_RECHECK

    def _users_on(self, nodes: set[str], pv: PersistentVolume | None) -> list[Pod]:
        """The live pods on ``nodes`` using ``pv``'s claim."""
        ref = pv.spec.claim_ref if pv is not None and pv.spec else None
        if ref is None:
            return []
        return [
            p
            for p in self._pods.by_index(POD_PVC_INDEX, f"{ref.namespace}/{ref.name}")
            if p.spec is not None and p.spec.node_name in nodes and not is_pod_terminated(p)
        ]

    def _report_failure(self, failed: AttachAttempt | None) -> None:
        if failed is None or self._recorder is None:
            return
        for pod in failed.pods:
            self._recorder.event(pod, "Warning", "FailedAttachVolume", failed.failure())

    async def _attach(self, api: Any, node: str, name: str, entry: WantedVolume) -> None:
        volume = entry.volume
        attachment = VolumeAttachment(
            metadata=ObjectMeta(name=name),
            spec=VolumeAttachmentSpec(
                attacher=volume.driver,
                node_name=node,
                source=VolumeAttachmentSource(persistent_volume_name=volume.pv_name),
            ),
        )
        try:
            await api.create(attachment)
            logger.info("attaching volume %s to node %s (%s)", volume.pv_name, node, name)
        except AlreadyExists:
            pass

    def _unique_name(self, attachment: VolumeAttachment) -> str | None:
        """The unique name of the CSI PV ``attachment`` attaches (None: no such PV)."""
        source = attachment.spec.source if attachment.spec else None
        pv = self._volumes.get_or_none(
            None, (source.persistent_volume_name if source else None) or ""
        )
        csi = pv.spec.csi if pv is not None and pv.spec else None
        if csi is None or not csi.driver or not csi.volume_handle:
            return None
        return csi_unique_volume_name(csi.driver, csi.volume_handle)

    def _unmount_wait(
        self, attachment: VolumeAttachment, in_use: set[str], node: Node | None
    ) -> float:
        """Seconds the detach of ``attachment`` must still wait for the node to unmount it
        (0: detach now)."""
        name = attachment.metadata.name or ""
        unique = self._unique_name(attachment)
        if node is None or unique is None or unique not in in_use:
            return 0.0
        now = self._clock.monotonic()
        since = self._waiting_since.setdefault(name, now)
        return max(since + MAX_WAIT_FOR_UNMOUNT - now, 0.0)

    async def _report(
        self,
        node: Node,
        wanted: dict[str, WantedVolume],
        existing: dict[str, VolumeAttachment],
        held: set[str],
    ) -> None:
        """Write ``status.volumesAttached``: attached volumes still wanted or still mounted."""
        reported: dict[str, str] = {}
        for attachment_name, attachment in existing.items():
            attached = attachment.status is not None and attachment.status.attached is True
            if not attached or attachment.metadata.deletion_timestamp is not None:
                continue
            entry = wanted.get(attachment_name)
            if entry is not None:
                reported[entry.volume.unique_name] = attachment_name
            elif attachment_name in held and (unique := self._unique_name(attachment)):
                reported[unique] = attachment_name
        before = [
            v.name or "" for v in (node.status.volumes_attached if node.status else None) or ()
        ]
        after = [n for n in before if n in reported] + sorted(set(reported) - set(before))
        if after == before:
            return
        body = {
            "status": {"volumesAttached": [{"name": n, "devicePath": ""} for n in after] or None}
        }
        try:
            await self._client.api(Node).patch_status(node.metadata.name or "", body)
        except NotFound:
            return
        for unique in set(after) - set(before):
            entry = wanted.get(reported[unique])
            if entry is None or self._recorder is None:
                continue
            for pod in entry.pods:
                self._recorder.event(
                    pod,
                    "Normal",
                    "SuccessfulAttachVolume",
                    f'AttachVolume.Attach succeeded for volume "{entry.volume.pv_name}" ',
                )
