"""The Endpoints controller: an Endpoints object per Service with a selector, listing its pods'
ready and not-ready addresses per port, as kube-controller-manager's ``endpoint`` (§6).

See docs/controllers.md#endpoints.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import MAX_RETRIES as MAX_RETRIES
from ._controller import EndpointController as EndpointController
from ._repack import go_spew as go_spew
from ._repack import repack_subsets as repack_subsets
from ._subsets import MAX_CAPACITY as MAX_CAPACITY
from ._subsets import OVER_CAPACITY_ANNOTATION as OVER_CAPACITY_ANNOTATION
from ._subsets import TOLERATE_UNREADY_ANNOTATION as TOLERATE_UNREADY_ANNOTATION
from ._subsets import desired_subsets as desired_subsets
from ._subsets import truncate_subsets as truncate_subsets

NAME = "endpoint"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""


def add_to_manager(
    manager: Manager, *, workers: int = DEFAULT_WORKERS, batch_period: float = 0.0
) -> None:
    """Build the Endpoints controller from the manager's client, factory, clock and registry
    (events as ``endpoint-controller``) and add it (leader-elected). ``batch_period`` is
    ``--endpoint-updates-batch-period`` in seconds."""
    add_controller(manager, NAME, EndpointController, workers=workers, batch_period=batch_period)


__all__ = [
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_CAPACITY",
    "MAX_RETRIES",
    "NAME",
    "OVER_CAPACITY_ANNOTATION",
    "TOLERATE_UNREADY_ANNOTATION",
    "EndpointController",
    "add_to_manager",
    "desired_subsets",
    "go_spew",
    "repack_subsets",
    "truncate_subsets",
]
