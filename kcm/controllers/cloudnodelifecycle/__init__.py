"""cloud-node-lifecycle: deletes nodes whose cloud instance is gone and taints shut-down
ones. The cloud controller manager's ``cloud-node-lifecycle``. See
docs/controllers.md#cloud-node-lifecycle.
"""

from __future__ import annotations

from kcm.cloudprovider import CloudProvider
from kcm.controllerkit import cloud_support_refusal
from kcm.controllers import CONTROLLERS, ControllerDisabled, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_NODE_MONITOR_PERIOD as DEFAULT_NODE_MONITOR_PERIOD
from ._controller import CloudNodeLifecycleController as CloudNodeLifecycleController

NAME = "cloud-node-lifecycle"
"""The controller managers' name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One pass at a time."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    cloud: CloudProvider | None = None,
    cluster_name: str = "kubernetes",
    node_monitor_period: float = DEFAULT_NODE_MONITOR_PERIOD,
) -> None:
    """Build cloud-node-lifecycle and add it (leader-elected).

    Raises:
        ControllerDisabled: no cloud provider, or one without instances.
    """
    if (refusal := cloud_support_refusal(cloud, "instances")) is not None:
        raise ControllerDisabled(refusal)
    add_controller(
        manager,
        NAME,
        CloudNodeLifecycleController,
        workers=workers,
        cloud=cloud,
        cluster_name=cluster_name,
        node_monitor_period=node_monitor_period,
    )


__all__ = [
    "DEFAULT_NODE_MONITOR_PERIOD",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "CloudNodeLifecycleController",
    "add_to_manager",
]
