"""The simulated CSI driver's node plugin registration: a ``CSINode`` per simulated node.

When a CSI driver's node plugin registers with a kubelet, the kubelet lists the driver in its
node's ``CSINode`` (named after the Node and owned by it). :class:`CSINodeRegistrar` (runtime
controller ``sim-csi-node``) does that for the simulated driver on every simulated node;
:class:`~kcm.simulation.CSIAttacher` runs it.
"""

from __future__ import annotations

from typing import final

from kcm.errors import AlreadyExists
from kcm.informers import SharedInformerFactory
from kcm.models import Node, ObjectKey, ObjectMeta, OwnerReference
from kcm.models.storage_v1 import CSINode, CSINodeDriver, CSINodeSpec
from kcm.runtime import Result, enqueue_object

from ._config import SIMULATED_LABEL
from ._provisioner import SIMULATED_DRIVER
from ._queue_controller import SimulationQueueController

__all__ = ["CSINodeRegistrar"]


@final
class CSINodeRegistrar(SimulationQueueController):
    """Creates the ``CSINode`` listing the simulated driver of each simulated node that has
    none (a Runnable; runtime controller ``sim-csi-node``).

    Args:
        client: the API client (CSINode creates).
        factory: nodes and CSINodes.
        options: :class:`~kcm.controllerkit.QueueControllerOptions` (``clock``: the queue's
            clock; ``registry``: the controller's metrics).
    """

    queue_name = "sim-csi-node"

    def watch_informers(self, factory: SharedInformerFactory) -> None:
        nodes = factory.informer_for(Node)
        self._csi_nodes = factory.informer_for(CSINode).lister()
        self._nodes = self.watch(nodes, enqueue_object())

    async def reconcile(self, request: ObjectKey) -> Result:
        """Register the driver on the simulated node ``request`` names."""
        node = self._nodes.get_or_none(None, request.name)
        if node is None or (node.metadata.labels or {}).get(SIMULATED_LABEL) != "true":
            return Result()
        if self._csi_nodes.get_or_none(None, request.name) is not None:
            return Result()
        csi_node = CSINode(
            metadata=ObjectMeta(
                name=request.name,
                owner_references=[
                    OwnerReference(
                        api_version="v1", kind="Node", name=request.name, uid=node.metadata.uid
                    )
                ],
            ),
            spec=CSINodeSpec(drivers=[CSINodeDriver(name=SIMULATED_DRIVER, node_id=request.name)]),
        )
        try:
            await self._client.api(CSINode).create(csi_node)
        except AlreadyExists:
            pass
        return Result()
