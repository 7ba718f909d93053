"""The volume expand controller: a bound claim that asks for more storage than it has is
left to its CSI driver's external resizer, with kube's ``ExternalExpanding`` event.

kube-controller-manager's ``persistentvolume-expander``. See
docs/controllers.md#persistentvolume-expander.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import PRE_RESIZE_CAPACITY_ANNOTATION as PRE_RESIZE_CAPACITY_ANNOTATION
from ._controller import ExpandController as ExpandController
from ._controller import NotBoundToClaim as NotBoundToClaim
from ._controller import needs_expansion as needs_expansion

NAME = "persistentvolume-expander"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs ten workers (no flag)."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the controller and add it (leader-elected), with kube's ``volume_expand`` event
    source."""
    add_controller(manager, NAME, ExpandController, workers=workers, event_source="volume_expand")


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "PRE_RESIZE_CAPACITY_ANNOTATION",
    "ExpandController",
    "NotBoundToClaim",
    "add_to_manager",
    "needs_expansion",
]
