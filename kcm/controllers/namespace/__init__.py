"""The namespace controller: empties terminating namespaces and removes their finalizer.

kube-controller-manager's ``namespace`` controller: discovery of every namespaced resource
(CRDs included), collection deletes, the ``NamespaceDeletion*`` conditions, then ``/finalize``.
See docs/controllers.md#namespace.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import CONDITION_TYPES as CONDITION_TYPES
from ._controller import FINALIZER_ESTIMATE_SECONDS as FINALIZER_ESTIMATE_SECONDS
from ._controller import NamespaceController as NamespaceController
from ._controller import ResourcesRemainingError as ResourcesRemainingError

NAME = "namespace"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""

DEFAULT_WORKERS = CONTROLLERS[NAME].default_workers
"""``--concurrent-namespace-syncs``."""


def add_to_manager(manager: Manager, *, workers: int = DEFAULT_WORKERS) -> None:
    """Build the namespace controller from the manager's client, factory, clock and registry
    and add it (leader-elected)."""
    add_controller(manager, NAME, NamespaceController, workers=workers)


__all__ = [
    "CONDITION_TYPES",
    "DEFAULT_WORKERS",
    "FINALIZER_ESTIMATE_SECONDS",
    "HELP",
    "NAME",
    "NamespaceController",
    "ResourcesRemainingError",
    "add_to_manager",
]
