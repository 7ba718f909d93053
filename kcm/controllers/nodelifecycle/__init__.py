"""Node lifecycle: node health from heartbeats and Leases, condition taints, taint-based
eviction by zone, and the NoExecute taint manager.

kube-controller-manager's ``nodelifecycle`` (as 1.24 with ``TaintBasedEvictions`` always on).
See docs/controllers.md#node-lifecycle.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import NODE_LEASE_NAMESPACE as NODE_LEASE_NAMESPACE
from ._controller import NodeLifecycleController as NodeLifecycleController
from ._health import NodeHealth as NodeHealth
from ._health import assess as assess
from ._taint_manager import EVICTION_REASON as EVICTION_REASON
from ._taint_manager import NoExecuteTaintManager as NoExecuteTaintManager
from ._zones import ZoneState as ZoneState
from ._zones import compute_zone_state as compute_zone_state
from ._zones import zone_key as zone_key

NAME = "nodelifecycle"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One health loop (the taint manager runs its own workers)."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    node_monitor_period: float = 5.0,
    node_monitor_grace_period: float = 40.0,
    node_startup_grace_period: float = 60.0,
    node_eviction_rate: float = 0.1,
    secondary_node_eviction_rate: float = 0.01,
    unhealthy_zone_threshold: float = 0.55,
    large_cluster_size_threshold: int = 50,
) -> None:
    """Build the node lifecycle controller from the manager and add it (leader-elected);
    the keyword arguments are the ``--node-*`` flags of the same names."""
    add_controller(
        manager,
        NAME,
        NodeLifecycleController,
        workers=workers,
        event_source="node-controller",
        taint_recorder=manager.event_recorder("taint-controller"),
        node_monitor_period=node_monitor_period,
        node_monitor_grace_period=node_monitor_grace_period,
        node_startup_grace_period=node_startup_grace_period,
        node_eviction_rate=node_eviction_rate,
        secondary_node_eviction_rate=secondary_node_eviction_rate,
        unhealthy_zone_threshold=unhealthy_zone_threshold,
        large_cluster_size_threshold=large_cluster_size_threshold,
    )


__all__ = [
    "DEFAULT_WORKERS",
    "EVICTION_REASON",
    "HELP",
    "NAME",
    "NODE_LEASE_NAMESPACE",
    "NoExecuteTaintManager",
    "NodeHealth",
    "NodeLifecycleController",
    "ZoneState",
    "add_to_manager",
    "assess",
    "compute_zone_state",
    "zone_key",
]
