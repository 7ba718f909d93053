"""PodGC: deletes terminated pods above a threshold and pods whose node no longer exists.

kube-controller-manager's ``podgc``. See docs/controllers.md#pod-gc.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_TERMINATED_POD_THRESHOLD as DEFAULT_TERMINATED_POD_THRESHOLD
from ._controller import OUT_OF_SERVICE_TAINT as OUT_OF_SERVICE_TAINT
from ._controller import PodGCController as PodGCController

NAME = "podgc"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""PodGC runs one pass at a time."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    terminated_pod_threshold: int = DEFAULT_TERMINATED_POD_THRESHOLD,
) -> None:
    """Build PodGC from the manager's client, factory, clock and registry and add it
    (leader-elected). ``terminated_pod_threshold`` is ``--terminated-pod-gc-threshold``."""
    add_controller(
        manager,
        NAME,
        PodGCController,
        workers=workers,
        terminated_pod_threshold=terminated_pod_threshold,
    )


__all__ = [
    "DEFAULT_TERMINATED_POD_THRESHOLD",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "OUT_OF_SERVICE_TAINT",
    "PodGCController",
    "add_to_manager",
]
