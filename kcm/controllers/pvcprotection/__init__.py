"""The PVC protection controller: a PersistentVolumeClaim keeps its
``kubernetes.io/pvc-protection`` finalizer while a pod uses it.

kube-controller-manager's ``pvc-protection``. See docs/controllers.md#pvc-protection.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import PVC_PROTECTION_FINALIZER as PVC_PROTECTION_FINALIZER
from ._controller import PVCProtectionController as PVCProtectionController
from ._controller import needs_attention as needs_attention
from ._usage import pod_is_terminated as pod_is_terminated
from ._usage import pod_uses_claim as pod_uses_claim

NAME = "pvc-protection"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs one worker."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the controller from the manager's client, factory and clock and add it
    (leader-elected)."""
    add_controller(manager, NAME, PVCProtectionController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "PVC_PROTECTION_FINALIZER",
    "PVCProtectionController",
    "add_to_manager",
    "needs_attention",
    "pod_is_terminated",
    "pod_uses_claim",
]
