"""The PersistentVolume binder: binds PersistentVolumeClaims to PersistentVolumes, hands claims
of a storage class to its provisioner, and reclaims released volumes.

kube-controller-manager's ``persistentvolume-binder``. See
docs/controllers.md#persistentvolume-binder.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_SYNC_PERIOD as DEFAULT_SYNC_PERIOD
from ._controller import PersistentVolumeBinder as PersistentVolumeBinder
from ._deleters import DeleteDecision as DeleteDecision
from ._deleters import deleter_for as deleter_for
from ._matching import find_best_match as find_best_match
from ._matching import why_volume_does_not_satisfy as why_volume_does_not_satisfy

NAME = "persistentvolume-binder"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One worker: a claim and its volume are bound by one sync at a time."""

EVENT_COMPONENT = "persistentvolume-controller"
"""The events' source, as kube's controller reports."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    sync_period: float = DEFAULT_SYNC_PERIOD,
    enable_dynamic_provisioning: bool = True,
) -> None:
    """Build the binder from the manager's client, factory and clock and add it
    (leader-elected)."""
    add_controller(
        manager,
        NAME,
        PersistentVolumeBinder,
        workers=workers,
        event_source=EVENT_COMPONENT,
        sync_period=sync_period,
        enable_dynamic_provisioning=enable_dynamic_provisioning,
    )


__all__ = [
    "DEFAULT_SYNC_PERIOD",
    "DEFAULT_WORKERS",
    "EVENT_COMPONENT",
    "HELP",
    "NAME",
    "DeleteDecision",
    "PersistentVolumeBinder",
    "add_to_manager",
    "deleter_for",
    "find_best_match",
    "why_volume_does_not_satisfy",
]
