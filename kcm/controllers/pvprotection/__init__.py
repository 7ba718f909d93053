"""The PV protection controller: a PersistentVolume keeps its ``kubernetes.io/pv-protection``
finalizer while it is Bound.

kube-controller-manager's ``pv-protection``. See docs/controllers.md#pv-protection.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import PV_PROTECTION_FINALIZER as PV_PROTECTION_FINALIZER
from ._controller import PVProtectionController as PVProtectionController
from ._controller import needs_attention as needs_attention

NAME = "pv-protection"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs one worker."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the controller from the manager's client, factory and clock and add it
    (leader-elected)."""
    add_controller(manager, NAME, PVProtectionController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "PV_PROTECTION_FINALIZER",
    "PVProtectionController",
    "add_to_manager",
    "needs_attention",
]
