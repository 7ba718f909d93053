"""The token cleaner: deletes bootstrap token Secrets whose ``expiration`` has passed.

kube-controller-manager's ``tokencleaner``, off by default as there (turn it on with
``--controllers=*,tokencleaner``). See docs/controllers.md#tokencleaner.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import TokenCleaner as TokenCleaner

NAME = "tokencleaner"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""One worker."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the cleaner from the manager's client, factory and clock and add it
    (leader-elected)."""
    add_controller(manager, NAME, TokenCleaner, workers=workers)


__all__ = ["DEFAULT_WORKERS", "HELP", "NAME", "TokenCleaner", "add_to_manager"]
