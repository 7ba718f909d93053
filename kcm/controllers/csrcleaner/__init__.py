"""The CSR cleaner: deletes CertificateSigningRequests that are issued and expired, or have been
approved, denied, failed or pending too long.

kube-controller-manager's ``csrcleaner``. See docs/controllers.md#csrcleaner.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import CSRCleanerController as CSRCleanerController
from ._rules import APPROVED_EXPIRATION as APPROVED_EXPIRATION
from ._rules import DENIED_EXPIRATION as DENIED_EXPIRATION
from ._rules import PENDING_EXPIRATION as PENDING_EXPIRATION
from ._rules import POLLING_INTERVAL as POLLING_INTERVAL
from ._rules import cleanup_reason as cleanup_reason

NAME = "csrcleaner"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One pass at a time."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the cleaner from the manager's client, factory and clock and add it
    (leader-elected)."""
    add_controller(manager, NAME, CSRCleanerController, workers=workers)


__all__ = [
    "APPROVED_EXPIRATION",
    "DEFAULT_WORKERS",
    "DENIED_EXPIRATION",
    "HELP",
    "NAME",
    "PENDING_EXPIRATION",
    "POLLING_INTERVAL",
    "CSRCleanerController",
    "add_to_manager",
    "cleanup_reason",
]
