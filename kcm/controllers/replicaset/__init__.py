"""The ReplicaSet controller: keeps ``spec.replicas`` pods of each ReplicaSet running.

kube-controller-manager's ``replicaset`` controller (§2): pods are created from
the template in slow-start batches and deleted by rank, orphans matching the selector are
adopted and pods that stop matching are released, expectations keep a slow informer from
causing double creates, and the status reports replicas, fullyLabeledReplicas, readyReplicas,
availableReplicas (minReadySeconds), observedGeneration and a ``ReplicaFailure`` condition.

The machinery is generic over the owner kind (:class:`ReplicaManager`, :class:`ReplicaKind`)
so the ReplicationController controller reuses it. See docs/controllers.md.
"""

from __future__ import annotations

from kcm.controllers import add_controller
from kcm.runtime import Manager

from ._controller import BURST_REPLICAS as BURST_REPLICAS
from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import REPLICA_SET_KIND as REPLICA_SET_KIND
from ._controller import ReplicaKind as ReplicaKind
from ._controller import ReplicaManager as ReplicaManager
from ._controller import ReplicaSetController as ReplicaSetController
from ._controller import is_namespace_terminating as is_namespace_terminating
from ._pods import POD_DELETION_COST_ANNOTATION as POD_DELETION_COST_ANNOTATION
from ._pods import compare_pods_for_deletion as compare_pods_for_deletion
from ._pods import is_pod_active as is_pod_active
from ._pods import is_pod_available as is_pod_available
from ._pods import is_pod_ready as is_pod_ready
from ._pods import pod_deletion_cost as pod_deletion_cost
from ._pods import pod_from_template as pod_from_template
from ._pods import pod_name_prefix as pod_name_prefix
from ._pods import pods_to_delete as pods_to_delete
from ._pods import rank_pods_for_deletion as rank_pods_for_deletion
from ._slow_start import SLOW_START_INITIAL_BATCH_SIZE as SLOW_START_INITIAL_BATCH_SIZE
from ._slow_start import slow_start_batch as slow_start_batch
from ._status import REPLICA_FAILURE as REPLICA_FAILURE
from ._status import calculate_status as calculate_status
from ._status import desired_replicas as desired_replicas

NAME = "replicaset"
"""kube-controller-manager's name for this controller."""

HELP = "Keeps the desired number of pods of each ReplicaSet running."


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the ReplicaSet controller from the manager's client, informer factory, clock and
    metrics registry, with the ``replicaset-controller`` event recorder, and add it
    (leader-elected)."""
    add_controller(manager, NAME, ReplicaSetController, workers=workers)


__all__ = [
    "BURST_REPLICAS",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "POD_DELETION_COST_ANNOTATION",
    "REPLICA_FAILURE",
    "REPLICA_SET_KIND",
    "SLOW_START_INITIAL_BATCH_SIZE",
    "ReplicaKind",
    "ReplicaManager",
    "ReplicaSetController",
    "add_to_manager",
    "calculate_status",
    "compare_pods_for_deletion",
    "desired_replicas",
    "is_namespace_terminating",
    "is_pod_active",
    "is_pod_available",
    "is_pod_ready",
    "pod_deletion_cost",
    "pod_from_template",
    "pod_name_prefix",
    "pods_to_delete",
    "rank_pods_for_deletion",
    "slow_start_batch",
]
