"""PodGC: deletes terminated pods above a threshold and pods whose node no longer exists.

kube-controller-manager's ``podgc``. See docs/controllers.md#pod-gc.
"""

from __future__ import annotations

from kcm.runtime import Manager

from ._controller import OUT_OF_SERVICE_TAINT as OUT_OF_SERVICE_TAINT
from ._controller import PodGCController as PodGCController

NAME = "podgc"
"""kube-controller-manager's name for this controller."""

HELP = "Deletes terminated pods above a threshold and pods bound to nodes that are gone."

DEFAULT_WORKERS = 1
"""PodGC runs one pass at a time."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    terminated_pod_threshold: int = 12500,
) -> None:
    """Build PodGC from the manager's client, factory, clock and registry and add it
    (leader-elected). ``terminated_pod_threshold`` is ``--terminated-pod-gc-threshold``."""
    manager.add(
        PodGCController(
            manager.client,
            manager.factory,
            recorder=manager.event_recorder(f"{NAME}-controller"),
            clock=manager.clock,
            workers=workers,
            registry=manager.registry,
            terminated_pod_threshold=terminated_pod_threshold,
        )
    )


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "OUT_OF_SERVICE_TAINT",
    "PodGCController",
    "add_to_manager",
]
