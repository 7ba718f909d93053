"""The ReplicationController controller: the ReplicaSet controller for core/v1 RCs.

kube-controller-manager's ``replicationcontroller`` controller (§2): the
ReplicaSet controller's behaviour, as both run the kit's
:class:`kcm.controllerkit.ReplicaManager`. See docs/controllers.md.
"""

from __future__ import annotations

from kcm.controllers import add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import REPLICATION_CONTROLLER_KIND as REPLICATION_CONTROLLER_KIND
from ._controller import ReplicationControllerController as ReplicationControllerController

NAME = "replicationcontroller"
"""kube-controller-manager's name for this controller."""

HELP = "Keeps the desired number of pods of each ReplicationController running."


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the ReplicationController controller from the manager's client, informer
    factory, clock and metrics registry, with the ``replicationcontroller-controller`` event
    recorder, and add it (leader-elected)."""
    add_controller(manager, NAME, ReplicationControllerController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "REPLICATION_CONTROLLER_KIND",
    "ReplicationControllerController",
    "add_to_manager",
]
