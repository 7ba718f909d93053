"""The ReplicaSet controller: keeps ``spec.replicas`` pods of each ReplicaSet running.

kube-controller-manager's ``replicaset`` controller (§2): pods are created from
the template in slow-start batches and deleted by rank, orphans matching the selector are
adopted and pods that stop matching are released, expectations keep a slow informer from
causing double creates, and the status reports replicas, fullyLabeledReplicas, readyReplicas,
availableReplicas (minReadySeconds), observedGeneration and a ``ReplicaFailure`` condition.

The machinery is the kit's, generic over the owner kind (:class:`kcm.controllerkit.ReplicaManager`,
:class:`kcm.controllerkit.ReplicaKind`); this package supplies :data:`REPLICA_SET_KIND`. See
docs/controllers.md.
"""

from __future__ import annotations

from kcm.controllers import add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import REPLICA_SET_KIND as REPLICA_SET_KIND
from ._controller import ReplicaSetController as ReplicaSetController

NAME = "replicaset"
"""kube-controller-manager's name for this controller."""

HELP = "Keeps the desired number of pods of each ReplicaSet running."


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the ReplicaSet controller from the manager's client, informer factory, clock and
    metrics registry, with the ``replicaset-controller`` event recorder, and add it
    (leader-elected)."""
    add_controller(manager, NAME, ReplicaSetController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "REPLICA_SET_KIND",
    "ReplicaSetController",
    "add_to_manager",
]
