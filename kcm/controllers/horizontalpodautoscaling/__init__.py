"""HorizontalPodAutoscaling: scales Deployments, ReplicaSets, StatefulSets and
ReplicationControllers (anything with ``/scale``) by their pods' metrics.

kube-controller-manager's ``horizontalpodautoscaling``. See
docs/controllers.md#horizontal-pod-autoscaling.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import HorizontalController as HorizontalController
from ._normalize import History as History
from ._replicas import PodMetric as PodMetric
from ._replicas import ReplicaCalculator as ReplicaCalculator
from ._replicas import ReplicaError as ReplicaError

NAME = "horizontalpodautoscaling"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-horizontal-pod-autoscaler-syncs`` (kube: 5); kcm reconciles in one loop."""

EVENT_SOURCE = "horizontal-pod-autoscaler"
"""The events' reporting component (kube's)."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    sync_period: float = 15.0,
    downscale_stabilization: float = 300.0,
    tolerance: float = 0.1,
    cpu_initialization_period: float = 300.0,
    initial_readiness_delay: float = 30.0,
) -> None:
    """Build the controller from the manager's client, factory and clock and add it
    (leader-elected); the keyword arguments are the ``--horizontal-pod-autoscaler-*`` flags
    (seconds)."""
    add_controller(
        manager,
        NAME,
        HorizontalController,
        workers=workers,
        event_source=EVENT_SOURCE,
        sync_period=sync_period,
        downscale_stabilization=downscale_stabilization,
        tolerance=tolerance,
        cpu_initialization_period=cpu_initialization_period,
        initial_readiness_delay=initial_readiness_delay,
    )


__all__ = [
    "DEFAULT_WORKERS",
    "EVENT_SOURCE",
    "HELP",
    "NAME",
    "History",
    "HorizontalController",
    "PodMetric",
    "ReplicaCalculator",
    "ReplicaError",
    "add_to_manager",
]
