"""ResourceQuota: keeps each quota's status.hard and status.used.

kube-controller-manager's ``resourcequota``. See docs/controllers.md#resourcequota.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_RESYNC_PERIOD as DEFAULT_RESYNC_PERIOD
from ._controller import ResourceQuotaController as ResourceQuotaController
from ._controller import UsageNotReady as UsageNotReady

NAME = "resourcequota"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-resource-quota-syncs``' default: 5 workers per queue."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    resync_period: float = DEFAULT_RESYNC_PERIOD,
) -> None:
    """Build the controller from the manager's client, factory, clock and registry and add it
    (leader-elected). ``resync_period`` is ``--resource-quota-sync-period``."""
    add_controller(
        manager, NAME, ResourceQuotaController, workers=workers, resync_period=resync_period
    )


__all__ = [
    "DEFAULT_RESYNC_PERIOD",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "ResourceQuotaController",
    "UsageNotReady",
    "add_to_manager",
]
