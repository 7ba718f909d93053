"""cloud-node-lifecycle: deletes nodes whose cloud instance is gone and taints shut-down
ones (the cloud controller manager's ``cloud-node-lifecycle``, k8s.io/cloud-provider's
``controllers/nodelifecycle``).

Every ``node_monitor_period`` (5 s) each node in the cache is looked at:

* Ready: the ``node.cloudprovider.kubernetes.io/shutdown`` taint is removed if present;
* not Ready (False, Unknown or no condition): if the cloud says its instance does not exist
  the Node is deleted (event ``DeletingNode``); if it exists but is shut down the taint is
  added with effect NoSchedule.

Cloud errors are logged and the node is looked at again on the next pass.
"""

from __future__ import annotations

import logging
from typing import final

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.cloudprovider import TAINT_NODE_SHUTDOWN, CloudProvider
from kcm.controllerkit import cloud_support_refusal, run_every
from kcm.errors import CloudNotImplemented, InstanceNotFound, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models.core_v1 import Node, NodeSpec, ObjectReference, Taint
from kcm.record import EventRecorder

__all__ = ["DEFAULT_NODE_MONITOR_PERIOD", "CloudNodeLifecycleController"]

logger = logging.getLogger(__name__)

DEFAULT_NODE_MONITOR_PERIOD = 5.0
"""``--node-monitor-period``' default, in seconds."""

SHUTDOWN_TAINT = Taint(key=TAINT_NODE_SHUTDOWN, effect="NoSchedule")


def _ready_status(node: Node) -> str:
    for condition in (node.status.conditions if node.status else None) or ():
        if condition.type == "Ready":
            return condition.status or "Unknown"
    return "Unknown"


def _has_shutdown_taint(node: Node) -> bool:
    return any(
        t.key == TAINT_NODE_SHUTDOWN for t in (node.spec.taints if node.spec else None) or ()
    )


@final
class CloudNodeLifecycleController:
    """Deletes nodes gone from the cloud, taints shut-down ones (see the module doc).

    Args:
        client: the API client (Node deletes and taint updates).
        factory: where the Node informer comes from.
        recorder: the ``cloud-node-lifecycle-controller`` event sink.
        cloud: the provider; it must support Instances or InstancesV2.
        clock: the clock the monitor period runs on.
        workers: accepted for the common signature (one pass at a time).
        registry: accepted for the common signature (no metrics of its own).
        cluster_name: accepted for the cloud controllers' common signature.
        node_monitor_period: seconds between passes (``--node-monitor-period``).

    Raises:
        ValueError: the provider supports neither Instances nor InstancesV2.

    Attributes:
        passes: completed passes (tests wait on it).
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        cloud: CloudProvider,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = 1,
        registry: CollectorRegistry | None = None,
        cluster_name: str = "kubernetes",
        node_monitor_period: float = DEFAULT_NODE_MONITOR_PERIOD,
    ) -> None:
        if (refusal := cloud_support_refusal(cloud, "instances")) is not None:
            raise ValueError(refusal)
        self._client = client
        self._cloud = cloud
        self._recorder = recorder
        self._clock = clock
        self._period = node_monitor_period
        self._informer = factory.informer_for(Node)
        self._nodes = self._informer.lister()
        self.passes = 0

    def __repr__(self) -> str:
        return f"<CloudNodeLifecycleController cloud={self._cloud.provider_name}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Wait for the node cache, then run a pass every period until cancelled."""
        await self._informer.wait_for_sync()
        task_status.started()
        await run_every(self._clock, self._period, self.monitor_nodes, at_once=True)

    async def monitor_nodes(self) -> None:
        """One pass over every cached node."""
        for node in self._nodes.list():
            try:
                await self._monitor(node)
            except Exception as exc:
                logger.error("cloud-node-lifecycle: node %s: %s", node.metadata.name, exc)
        self.passes += 1

    async def _monitor(self, node: Node) -> None:
        name = node.metadata.name or ""
        if _ready_status(node) == "True":
            if _has_shutdown_taint(node):
                await self._set_shutdown_taint(node, present=False)
            return
        try:
            exists = await self._exists(node)
        except Exception as exc:
            logger.error("cloud-node-lifecycle: checking if node %s exists: %s", name, exc)
            return
        if not exists:
            logger.info("deleting node since it is no longer present in cloud provider: %s", name)
            ref = ObjectReference(kind="Node", name=name, uid=node.metadata.uid)
            self._recorder.event(
                ref,
                "Normal",
                "DeletingNode",
                f"Deleting node {name} because it does not exist in the cloud provider",
            )
            try:
                await self._client.api(Node).delete(name)
            except NotFound:
                pass
            return
        try:
            shutdown = await self._shutdown(node)
        except Exception as exc:
            logger.error("cloud-node-lifecycle: checking if node %s is shutdown: %s", name, exc)
            return
        if shutdown and not _has_shutdown_taint(node):
            await self._set_shutdown_taint(node, present=True)

    async def _exists(self, node: Node) -> bool:
        v2 = self._cloud.instances_v2()
        if v2 is not None:
            return await v2.instance_exists(node)
        instances = self._cloud.instances()
        if instances is None:
            raise RuntimeError("instances interface not supported in the cloud provider")
        pid = (node.spec.provider_id if node.spec else None) or ""
        if not pid:
            try:
                instance = await instances.instance_id(node.metadata.name or "")
            except InstanceNotFound:
                return False
            if not instance:
                return False
            pid = f"{self._cloud.provider_name}://{instance}"
        return await instances.instance_exists_by_provider_id(pid)

    async def _shutdown(self, node: Node) -> bool:
        v2 = self._cloud.instances_v2()
        if v2 is not None:
            return await v2.instance_shutdown(node)
        instances = self._cloud.instances()
        if instances is None:
            raise RuntimeError("cloud provider does not support instances")
        try:
            return await instances.instance_shutdown_by_provider_id(
                (node.spec.provider_id if node.spec else None) or ""
            )
        except CloudNotImplemented:
            return False

    async def _set_shutdown_taint(self, node: Node, *, present: bool) -> None:
        spec = node.spec or NodeSpec()
        taints = [t for t in spec.taints or () if t.key != TAINT_NODE_SHUTDOWN]
        if present:
            taints.append(SHUTDOWN_TAINT)
        tainted = msgspec.structs.replace(
            node, spec=msgspec.structs.replace(spec, taints=taints or None)
        )
        try:
            await self._client.api(Node).update(node, tainted)
        except NotFound:
            return
