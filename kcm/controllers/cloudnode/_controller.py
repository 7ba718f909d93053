"""cloud-node: initialises nodes that kubelet registered with ``--cloud-provider=external``
(the cloud controller manager's ``cloud-node``, k8s.io/cloud-provider's
``controllers/node``).

A Node carrying the ``node.cloudprovider.kubernetes.io/uninitialized`` taint gets, from the
cloud: spec.providerID (if empty), the instance-type/zone/region labels (GA and beta),
status.addresses; then the taint is removed and a ``Synced`` event recorded. A node whose
``alpha.kubernetes.io/provided-node-ip`` is not among the cloud's addresses keeps the taint
(retried). Every ``node_status_update_frequency`` (5 min) the addresses of initialised nodes
are refreshed and GA labels repaired from their beta ones. It never deletes nodes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial
from typing import Any, final

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.cloudprovider import CloudProvider
from kcm.controllerkit import cloud_support_refusal, log_failed_pass, run_every
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, to_dict
from kcm.models.core_v1 import Node, NodeAddress, NodeSpec
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result
from kcm.workqueue import default_controller_rate_limiter

from ._metadata import (
    addresses_changed,
    cloud_labels,
    cloud_taint,
    instance_addresses,
    instance_metadata,
    label_repairs,
    provided_ip_found,
    provider_id,
    with_hostname,
    without_cloud_taint,
)

__all__ = ["DEFAULT_NODE_STATUS_UPDATE_FREQUENCY", "CloudNodeController"]

logger = logging.getLogger(__name__)

DEFAULT_NODE_STATUS_UPDATE_FREQUENCY = 300.0
"""``--node-status-update-frequency``' default: the address refresh period, in seconds."""


class _NodeEvents:
    """Every added or updated node is looked at (only tainted ones are acted on)."""

    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (ObjectKey("", obj.metadata.name or ""),)

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        return (ObjectKey("", new.metadata.name or ""),)

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


@final
class CloudNodeController:
    """Initialises cloud nodes and keeps their addresses (see the module doc).

    Args:
        client: the API client (Node updates and status patches).
        factory: where the Node informer comes from.
        recorder: the ``cloud-node-controller`` event sink.
        cloud: the provider; it must support Instances or InstancesV2.
        clock: the clock retries and the refresh period run on.
        workers: concurrent node syncs (kube: 1).
        registry: a Prometheus registry for the controller and queue metrics.
        cluster_name: accepted for the cloud controllers' common signature.
        node_status_update_frequency: seconds between address refreshes.

    Raises:
        ValueError: the provider supports neither Instances nor InstancesV2.

    Attributes:
        refreshes: completed address refreshes (tests wait on it).
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
        node_status_update_frequency: float = DEFAULT_NODE_STATUS_UPDATE_FREQUENCY,
    ) -> None:
        if (refusal := cloud_support_refusal(cloud, "instances")) is not None:
            raise ValueError(refusal)
        self._client = client
        self._cloud = cloud
        self._recorder = recorder
        self._clock = clock
        self._period = node_status_update_frequency
        self.refreshes = 0
        informer = factory.informer_for(Node)
        self._nodes = informer.lister()
        self._informer = informer
        self.controller: Controller[ObjectKey] = Controller(
            "cloud-node",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(informer, _NodeEvents(), kind="Node")

    def __repr__(self) -> str:
        return f"<CloudNodeController cloud={self._cloud.provider_name}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Initialise nodes and refresh addresses until cancelled."""
        async with anyio.create_task_group() as tg:
            await tg.start(self.controller.run)
            tg.start_soon(self._refresh_loop)
            task_status.started()

    async def reconcile(self, request: ObjectKey) -> Result:
        """Initialise one node if it still carries the uninitialized taint.

        Raises:
            Exception: the cloud or the API server failed; the node keeps its taint and is
                retried with backoff.
        """
        node = self._nodes.get_or_none(None, request.name)
        if node is None or cloud_taint(node) is None:
            return Result()
        name = request.name
        logger.info("cloud-node: initializing node %s with cloud provider", name)
        try:
            pid = await provider_id(self._cloud, node)
        except Exception as exc:
            raise RuntimeError(
                f"failed to get provider ID for node {name} at cloudprovider: {exc}"
            ) from exc
        try:
            meta = await instance_metadata(self._cloud, pid, node)
        except Exception as exc:
            raise RuntimeError(f"failed to get instance metadata for node {name}: {exc}") from exc
        if provided_ip_found(node, meta.node_addresses) is False:
            raise RuntimeError(
                "failed to get node modifiers from cloud provider: failed to find kubelet "
                "node IP from cloud provider"
            )
        spec = node.spec or NodeSpec()
        new_pid = (spec.provider_id or "") or pid or meta.provider_id
        labels = {**(node.metadata.labels or {}), **cloud_labels(meta)}
        initialised = msgspec.structs.replace(
            node,
            metadata=msgspec.structs.replace(node.metadata, labels=labels),
            spec=msgspec.structs.replace(
                spec, provider_id=new_pid or None, taints=without_cloud_taint(node) or None
            ),
        )
        updated = await self._client.api(Node).update(node, initialised)
        await self._update_addresses(updated, meta.node_addresses)
        logger.info("cloud-node: successfully initialized node %s with cloud provider", name)
        self._recorder.event(node, "Normal", "Synced", "Node synced successfully")
        return Result()

    async def _update_addresses(self, node: Node, addresses: Iterable[NodeAddress]) -> None:
        """Write the cloud's addresses to an initialised node's status, if they changed."""
        if cloud_taint(node) is not None:
            return
        cloud = list(addresses)
        if not cloud:
            return
        merged = with_hostname(node, cloud)
        if provided_ip_found(node, merged) is False:
            logger.error(
                "cloud-node: specified Node IP not found in cloudprovider for node %s",
                node.metadata.name,
            )
            return
        current = (node.status.addresses if node.status else None) or ()
        if not addresses_changed(current, merged):
            return
        body: dict[str, Any] = {"status": {"addresses": [to_dict(a) for a in merged]}}
        try:
            await self._client.api(Node).patch_status(node.metadata.name or "", body)
        except Exception as exc:
            logger.error("cloud-node: error patching node with cloud ip addresses: %s", exc)

    # -- periodic refresh ----------------------------------------------------------------

    async def _refresh_loop(self) -> None:
        await self._informer.wait_for_sync()
        await run_every(
            self._clock,
            self._period,
            self.refresh,
            at_once=True,
            on_failure=partial(log_failed_pass, logger, "cloud-node: refreshing node addresses"),
        )

    async def refresh(self) -> None:
        """One refresh: addresses of every initialised node, then the GA labels repaired."""
        for node in self._nodes.list():
            try:
                addresses = await instance_addresses(self._cloud, node)
            except Exception as exc:
                logger.error(
                    "cloud-node: error getting instance metadata for node addresses: %s", exc
                )
                continue
            await self._update_addresses(node, addresses)
        for node in self._nodes.list():
            repairs = label_repairs(node.metadata.labels or {})
            if not repairs:
                continue
            patch = {"metadata": {"labels": repairs}}
            try:
                await self._client.api(Node).patch(node.metadata.name or "", patch)
            except Exception as exc:
                logger.error(
                    "cloud-node: error reconciling node labels for node %s: %s",
                    node.metadata.name,
                    exc,
                )
        self.refreshes += 1
