"""The ephemeral volume controller: each generic ephemeral volume of a pod gets a
PersistentVolumeClaim (``<pod>-<volume>``) from its template, owned by the pod.

kube-controller-manager's ``ephemeral-volume``. See docs/controllers.md#ephemeral-volume.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import ClaimConflict as ClaimConflict
from ._controller import EphemeralVolumeController as EphemeralVolumeController
from ._controller import claim_for as claim_for

NAME = "ephemeral-volume"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-ephemeralvolume-syncs``."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the controller from the manager's client, factory, clock and registry and add it
    (leader-elected), with the ``ephemeral_volume`` event source."""
    add_controller(
        manager,
        NAME,
        EphemeralVolumeController,
        workers=workers,
        event_source="ephemeral_volume",
    )


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "ClaimConflict",
    "EphemeralVolumeController",
    "add_to_manager",
    "claim_for",
]
