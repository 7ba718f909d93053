"""The ServiceAccount controller: the ``default`` ServiceAccount in every active namespace.

kube-controller-manager's ``serviceaccount`` controller. See docs/controllers.md#serviceaccount.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_SERVICE_ACCOUNTS as DEFAULT_SERVICE_ACCOUNTS
from ._controller import ServiceAccountsController as ServiceAccountsController

NAME = "serviceaccount"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One worker, as kube-controller-manager (which has no flag for it)."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the ServiceAccount controller from the manager's client, factory, clock and
    registry and add it (leader-elected)."""
    add_controller(manager, NAME, ServiceAccountsController, workers=workers)


__all__ = [
    "DEFAULT_SERVICE_ACCOUNTS",
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "ServiceAccountsController",
    "add_to_manager",
]
