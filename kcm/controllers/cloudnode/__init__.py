"""cloud-node: initialises nodes registered with the uninitialized cloud taint (providerID,
instance-type/zone/region labels, addresses) and refreshes their addresses. The cloud
controller manager's ``cloud-node``. See docs/controllers.md#cloud-node.
"""

from __future__ import annotations

from kcm.cloudprovider import CloudProvider
from kcm.controllerkit import cloud_support_refusal
from kcm.controllers import CONTROLLERS, ControllerDisabled, add_controller
from kcm.runtime import Manager

from ._controller import (
    DEFAULT_NODE_STATUS_UPDATE_FREQUENCY as DEFAULT_NODE_STATUS_UPDATE_FREQUENCY,
)
from ._controller import CloudNodeController as CloudNodeController

NAME = "cloud-node"
"""The cloud controller manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One worker, as the real controller."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    cloud: CloudProvider | None = None,
    cluster_name: str = "kubernetes",
    node_status_update_frequency: float = DEFAULT_NODE_STATUS_UPDATE_FREQUENCY,
) -> None:
    """Build cloud-node and add it (leader-elected).

    Raises:
        ControllerDisabled: no cloud provider, or one without instances.
    """
    if (refusal := cloud_support_refusal(cloud, "instances")) is not None:
        raise ControllerDisabled(refusal)
    add_controller(
        manager,
        "cloud-node",
        CloudNodeController,
        workers=workers,
        cloud=cloud,
        cluster_name=cluster_name,
        node_status_update_frequency=node_status_update_frequency,
    )


__all__ = [
    "DEFAULT_NODE_STATUS_UPDATE_FREQUENCY",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "CloudNodeController",
    "add_to_manager",
]
