"""The attach/detach controller: VolumeAttachments for the CSI volumes pods on a node use.

kube-controller-manager's ``attachdetach``. See docs/controllers.md#attachdetach.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import MAX_WAIT_FOR_UNMOUNT as MAX_WAIT_FOR_UNMOUNT
from ._controller import AttachDetachController as AttachDetachController
from ._controller import InvalidSyncPeriod as InvalidSyncPeriod
from ._desired import WantedVolume as WantedVolume
from ._desired import wanted_volumes as wanted_volumes

NAME = "attachdetach"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs one reconciler loop."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    reconcile_sync_period: float = 60.0,
    disable_reconcile_sync: bool = False,
) -> None:
    """Build the controller from the manager's client, factory and clock and add it
    (leader-elected).

    Raises:
        InvalidSyncPeriod: ``reconcile_sync_period`` below one second.
    """
    add_controller(
        manager,
        NAME,
        AttachDetachController,
        workers=workers,
        reconcile_sync_period=reconcile_sync_period,
        disable_reconcile_sync=disable_reconcile_sync,
    )


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_WAIT_FOR_UNMOUNT",
    "NAME",
    "AttachDetachController",
    "InvalidSyncPeriod",
    "WantedVolume",
    "add_to_manager",
    "wanted_volumes",
]
