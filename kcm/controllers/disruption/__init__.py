"""The disruption controller: PodDisruptionBudget status.

kube-controller-manager 1.24's ``disruption`` controller (§16): for each budget, the pods its
selector matches, the pods it expects (the pods, or the scale of their controllers:
ReplicationController, Deployment through its ReplicaSet, ReplicaSet, StatefulSet, or any kind
with a ``/scale`` subresource), the healthy pods (Ready, not being deleted, not just evicted),
``desiredHealthy`` from ``minAvailable`` or ``maxUnavailable`` (integers or percentages,
rounded up), ``disruptionsAllowed``, the ``disruptedPods`` the eviction API records (dropped
after two minutes), ``observedGeneration`` and the DisruptionAllowed condition
(SufficientPods, InsufficientPods, SyncFailed). The eviction API (``pods/<name>/eviction``)
reads and decrements what it writes. See docs/controllers.md.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._budget import DELETION_TIMEOUT as DELETION_TIMEOUT
from ._budget import DISRUPTION_ALLOWED as DISRUPTION_ALLOWED
from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import NAME as NAME
from ._controller import DisruptionController as DisruptionController

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

EVENT_SOURCE = "controllermanager"
"""The component kube-controller-manager's disruption controller writes its events as."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the disruption controller from the manager's client, informer factory, clock and
    metrics registry, with Go's ``controllermanager`` event source, and add it
    (leader-elected)."""
    add_controller(manager, NAME, DisruptionController, workers=workers, event_source=EVENT_SOURCE)


__all__ = [
    "DEFAULT_WORKERS",
    "DELETION_TIMEOUT",
    "DISRUPTION_ALLOWED",
    "EVENT_SOURCE",
    "HELP",
    "NAME",
    "DisruptionController",
    "add_to_manager",
]
