"""The service (load-balancer) controller: a cloud balancer for each ``type: LoadBalancer``
Service. The cloud controller manager's ``service``. See docs/controllers.md#service.
"""

from __future__ import annotations

from kcm.cloudprovider import CloudProvider
from kcm.controllerkit import cloud_support_refusal
from kcm.controllers import CONTROLLERS, ControllerDisabled, add_controller
from kcm.runtime import Manager

from ._controller import MAX_RETRY_DELAY as MAX_RETRY_DELAY
from ._controller import MIN_RETRY_DELAY as MIN_RETRY_DELAY
from ._controller import NODE_SYNC_PERIOD as NODE_SYNC_PERIOD
from ._controller import ServiceController as ServiceController

NAME = "service"
"""The cloud controller manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-service-syncs``' default."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    cloud: CloudProvider | None = None,
    cluster_name: str = "kubernetes",
) -> None:
    """Build the service controller and add it (leader-elected).

    Raises:
        ControllerDisabled: no cloud provider, or one without load balancers.
    """
    if (refusal := cloud_support_refusal(cloud, "load balancers")) is not None:
        raise ControllerDisabled(refusal)
    add_controller(
        manager, NAME, ServiceController, workers=workers, cloud=cloud, cluster_name=cluster_name
    )


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_RETRY_DELAY",
    "MIN_RETRY_DELAY",
    "NAME",
    "NODE_SYNC_PERIOD",
    "ServiceController",
    "add_to_manager",
]
