"""The ClusterRole aggregation controller: aggregated ClusterRoles get the rules of the roles
their selectors pick.

kube-controller-manager's ``clusterrole-aggregation`` controller. See
docs/controllers.md#clusterrole-aggregation.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import FIELD_MANAGER as FIELD_MANAGER
from ._controller import ClusterRoleAggregationController as ClusterRoleAggregationController
from ._controller import aggregated_rules as aggregated_rules

NAME = "clusterrole-aggregation"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""Five workers, as kube-controller-manager (which has no flag for it)."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the controller from the manager's client, factory, clock and registry and add
    it (leader-elected)."""
    add_controller(manager, NAME, ClusterRoleAggregationController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "FIELD_MANAGER",
    "HELP",
    "NAME",
    "ClusterRoleAggregationController",
    "add_to_manager",
    "aggregated_rules",
]
