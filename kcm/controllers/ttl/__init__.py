"""TTL: the ``node.alpha.kubernetes.io/ttl`` annotation on every Node, by cluster size.

kube-controller-manager's ``ttl``. See docs/controllers.md#ttl.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import TTL_ANNOTATION as TTL_ANNOTATION
from ._controller import TTL_BOUNDARIES as TTL_BOUNDARIES
from ._controller import TTLController as TTLController
from ._controller import TTLSteps as TTLSteps

NAME = "ttl"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube runs five workers (no flag)."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the TTL controller from the manager and add it (leader-elected)."""
    add_controller(manager, NAME, TTLController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "TTL_ANNOTATION",
    "TTL_BOUNDARIES",
    "TTLController",
    "TTLSteps",
    "add_to_manager",
]
