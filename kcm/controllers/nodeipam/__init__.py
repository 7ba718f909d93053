"""Node IPAM: gives every Node a pod CIDR from ``--cluster-cidr`` (the range allocator).

kube-controller-manager's ``nodeipam``; it runs only with ``--allocate-node-cidrs``. See
docs/controllers.md#node-ipam.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, ControllerDisabled
from kcm.runtime import Manager

from ._cidr_set import CIDRRangeExhausted as CIDRRangeExhausted
from ._cidr_set import CIDRSet as CIDRSet
from ._controller import NodeIpamController as NodeIpamController
from ._settings import IPAMSettings as IPAMSettings

NAME = "nodeipam"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""Allocations are made one at a time."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    allocate_node_cidrs: bool = False,
    cluster_cidr: str = "",
    service_cluster_ip_range: str = "",
    node_cidr_mask_size: int = 0,
    node_cidr_mask_size_ipv4: int = 0,
    node_cidr_mask_size_ipv6: int = 0,
) -> None:
    """Build the node IPAM controller from the manager and add it (leader-elected).

    Raises:
        ControllerDisabled: ``allocate_node_cidrs`` is false (kube skips the controller).
        ConfigError: the CIDR flags are invalid (kube-controller-manager exits).
    """
    if not allocate_node_cidrs:
        raise ControllerDisabled("--allocate-node-cidrs is false")
    settings = IPAMSettings.from_flags(
        cluster_cidr=cluster_cidr,
        service_cluster_ip_range=service_cluster_ip_range,
        node_cidr_mask_size=node_cidr_mask_size,
        node_cidr_mask_size_ipv4=node_cidr_mask_size_ipv4,
        node_cidr_mask_size_ipv6=node_cidr_mask_size_ipv6,
    )
    manager.add(
        NodeIpamController(
            manager.client,
            manager.factory,
            recorder=manager.event_recorder("cidrAllocator"),
            settings=settings,
            clock=manager.clock,
            workers=workers,
            registry=manager.registry,
        )
    )


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "CIDRRangeExhausted",
    "CIDRSet",
    "IPAMSettings",
    "NodeIpamController",
    "add_to_manager",
]
