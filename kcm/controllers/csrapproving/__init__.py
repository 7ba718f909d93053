"""The CSR approving controller: kubelet client certificate requests are approved when a
SubjectAccessReview says the requester may create them.

kube-controller-manager's ``csrapproving``. See docs/controllers.md#csrapproving.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import CSRApprovingController as CSRApprovingController
from ._recognizers import RECOGNIZERS as RECOGNIZERS
from ._recognizers import Recognizer as Recognizer
from ._recognizers import is_node_client as is_node_client
from ._recognizers import is_self_node_client as is_self_node_client

NAME = "csrapproving"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""kube-controller-manager runs 5 workers."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the approver from the manager's client, factory, clock and registry and add it
    (leader-elected)."""
    add_controller(manager, NAME, CSRApprovingController, workers=workers)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "NAME",
    "RECOGNIZERS",
    "CSRApprovingController",
    "Recognizer",
    "add_to_manager",
    "is_node_client",
    "is_self_node_client",
]
