"""route: cloud routes for the nodes' pod CIDRs, and each node's NetworkUnavailable
condition. The controller managers' ``route``. See docs/controllers.md#route.
"""

from __future__ import annotations

from kcm.cloudprovider import CloudProvider
from kcm.controllerkit import cloud_support_refusal
from kcm.controllers import CONTROLLERS, ControllerDisabled, add_controller
from kcm.runtime import Manager

from ._controller import (
    DEFAULT_ROUTE_RECONCILIATION_PERIOD as DEFAULT_ROUTE_RECONCILIATION_PERIOD,
)
from ._controller import MAX_CONCURRENT_ROUTE_CREATIONS as MAX_CONCURRENT_ROUTE_CREATIONS
from ._controller import RouteController as RouteController
from ._controller import parse_cluster_cidrs as parse_cluster_cidrs

NAME = "route"
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
    configure_cloud_routes: bool = True,
    allocate_node_cidrs: bool = False,
    cluster_cidr: str = "",
    route_reconciliation_period: float = DEFAULT_ROUTE_RECONCILIATION_PERIOD,
) -> None:
    """Build the route controller and add it (leader-elected).

    Raises:
        ControllerDisabled: no cloud provider, ``--allocate-node-cidrs`` or
            ``--configure-cloud-routes`` off, or a provider without routes (the real
            controller managers' conditions).
        ConfigError: ``--cluster-cidr`` is missing or not a CIDR.
    """
    from kcm.errors import ConfigError

    refusal = cloud_support_refusal(cloud, "routes")
    if cloud is None:  # before the flags, which only matter with a cloud
        raise ControllerDisabled(refusal)
    if not allocate_node_cidrs or not configure_cloud_routes:
        raise ControllerDisabled(
            f"will not configure cloud provider routes for allocate-node-cidrs: "
            f"{str(allocate_node_cidrs).lower()}, configure-cloud-routes: "
            f"{str(configure_cloud_routes).lower()}"
        )
    if refusal is not None:
        raise ControllerDisabled(f"configure-cloud-routes is set, but {refusal}")
    try:
        parse_cluster_cidrs(cluster_cidr)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    add_controller(
        manager,
        NAME,
        RouteController,
        workers=workers,
        cloud=cloud,
        cluster_name=cluster_name,
        cluster_cidr=cluster_cidr,
        route_reconciliation_period=route_reconciliation_period,
    )


__all__ = [
    "DEFAULT_ROUTE_RECONCILIATION_PERIOD",
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_CONCURRENT_ROUTE_CREATIONS",
    "NAME",
    "RouteController",
    "add_to_manager",
    "parse_cluster_cidrs",
]
