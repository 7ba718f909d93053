"""The node IPAM controller (range allocator): gives each Node a pod CIDR from the cluster CIDR.

kube-controller-manager's ``nodeipam`` with ``--allocate-node-cidrs`` and the default
``RangeAllocator``: one :class:`CIDRSet` per cluster CIDR (two when dual-stack), the service
ranges and every CIDR already on a Node marked used at start; a Node without
``spec.podCIDRs`` gets the next free subnet of each set, written once as ``spec.podCIDR`` and
``spec.podCIDRs`` (they are immutable). A full range gives the Node a ``CIDRNotAvailable``
event; as in kube it is tried again at the Node's next update (a kubelet's status heartbeat),
not on a timer. A deleted Node's subnets are freed.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.errors import KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import Node, ObjectKey, object_key
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result, TerminalError

from ._cidr_set import CIDRRangeExhausted, CIDRSet, Network
from ._settings import IPAMSettings

__all__ = ["NodeIpamController"]

logger = logging.getLogger(__name__)


def _pod_cidrs(node: Node) -> list[str]:
    spec = node.spec
    cidrs = list((spec.pod_cidrs if spec else None) or ())
    if not cidrs and spec is not None and spec.pod_cidr:
        cidrs = [spec.pod_cidr]
    return cidrs


class _NodeEvents:
    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        return () if _pod_cidrs(new) else (object_key(new),)

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),)


class NodeIpamController:
    """Allocates pod CIDRs to Nodes.

    Args:
        client: the API client Nodes are patched with.
        factory: the shared informer factory (the Node informer).
        recorder: ``CIDRNotAvailable`` / ``CIDRAssignmentFailed`` events (kube's source is
            ``cidrAllocator``).
        settings: the cluster CIDRs, node mask sizes and service ranges.
        clock: the work queue's clock.
        workers: accepted for the common signature; allocations are made one at a time, in
            the order Nodes are seen, as kube's event handler makes them.
        registry: Prometheus registry.

    Attributes:
        sets: one :class:`CIDRSet` per cluster CIDR.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        settings: IPAMSettings,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self._nodes_api = client.api(Node)
        self._recorder = recorder
        self.settings = settings
        self.workers = workers
        self.sets = [
            CIDRSet(cidr, mask)
            for cidr, mask in zip(settings.cluster_cidrs, settings.node_masks, strict=True)
        ]
        for cidr_set in self.sets:
            for service in settings.service_cidrs:
                if service.version == cidr_set.cluster.version and service.overlaps(
                    cidr_set.cluster
                ):
                    cidr_set.occupy(service)
        self._informer = factory.informer_for(Node)
        self.nodes = self._informer.lister()
        self._owned: dict[str, list[Network]] = {}
        self.controller: Controller[ObjectKey] = Controller(
            "nodeipam", self, clock=clock, metrics=registry
        )
        self.controller.watch(self._informer, _NodeEvents(), kind="Node")

    def __repr__(self) -> str:
        return f"<NodeIpamController sets={self.sets!r}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Mark the CIDRs of existing Nodes used, then allocate until cancelled."""
        await self._informer.wait_for_sync()
        for node in sorted(self.nodes.list(), key=lambda n: n.metadata.name or ""):
            self._occupy(node)
        await self.controller.run(task_status=task_status)

    def _occupy(self, node: Node) -> bool:
        name = node.metadata.name or ""
        cidrs = _pod_cidrs(node)
        if not cidrs:
            return False
        if name in self._owned:
            return True
        owned = []
        for text in cidrs:
            try:
                cidr = ipaddress.ip_network(text, strict=False)
            except ValueError:
                logger.warning("node %s has an invalid pod CIDR %r", name, text)
                continue
            for cidr_set in self.sets:
                if cidr.version != cidr_set.cluster.version:
                    continue
                try:
                    cidr_set.occupy(cidr)
                    owned.append(cidr)
                except ValueError as exc:
                    logger.warning(
                        "failed to mark cidr %s as occupied for node %s: %s", cidr, name, exc
                    )
        self._owned[name] = owned
        return True

    def _release(self, name: str) -> None:
        for cidr in self._owned.pop(name, []):
            for cidr_set in self.sets:
                if cidr.version == cidr_set.cluster.version:
                    try:
                        cidr_set.release(cidr)
                    except ValueError:
                        pass

    async def reconcile(self, key: ObjectKey) -> Result:
        """Occupy, allocate or release the Node's pod CIDRs.

        Raises:
            TerminalError: the range is exhausted (tried again at the Node's next update).
            KcmError: the patch failed; retried with backoff.
        """
        node = self.nodes.get_or_none(None, key.name)
        if node is None:
            self._release(key.name)
            return Result()
        if self._occupy(node):
            return Result()
        allocated: list[Network] = []
        try:
            for index, cidr_set in enumerate(self.sets):
                try:
                    allocated.append(cidr_set.allocate_next())
                except CIDRRangeExhausted as exc:
                    self._recorder.event(
                        node,
                        "Normal",
                        "CIDRNotAvailable",
                        f"Node {key.name} status is now: CIDRNotAvailable",
                    )
                    raise TerminalError(  # retried at the node's next update, as kube's
                        f"failed to allocate cidr from cluster cidr at idx:{index}: {exc}"
                    ) from None
            texts = [str(c) for c in allocated]
            try:
                fresh = await self._nodes_api.get(key.name)
            except NotFound:
                raise _Released() from None
            if _pod_cidrs(fresh):
                logger.info(
                    "node %s already has a CIDR allocated %s; releasing the new one",
                    key.name,
                    _pod_cidrs(fresh),
                )
                raise _Released()
            try:
                await self._nodes_api.patch(
                    key.name, {"spec": {"podCIDR": texts[0], "podCIDRs": texts}}
                )
            except NotFound:
                raise _Released() from None
            except KcmError:
                self._recorder.event(
                    node,
                    "Normal",
                    "CIDRAssignmentFailed",
                    f"Node {key.name} status is now: CIDRAssignmentFailed",
                )
                raise
        except _Released:
            self._free(allocated)
            return Result()
        except BaseException:
            self._free(allocated)
            raise
        logger.info("set node %s PodCIDR to %s", key.name, texts)
        self._owned[key.name] = allocated
        return Result()

    def _free(self, allocated: list[Network]) -> None:
        for cidr, cidr_set in zip(allocated, self.sets, strict=False):
            cidr_set.release(cidr)


class _Released(Exception):
    """The allocation is not needed (node gone, or it got CIDRs meanwhile)."""
