"""The EndpointSlice mirroring controller: the hand-written Endpoints of Services without a
selector, mirrored into EndpointSlices managed by ``endpointslicemirroring-controller.k8s.io``,
as kube-controller-manager's ``endpointslicemirroring`` does.

See docs/controllers.md#endpointslice-mirroring.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_MAX_ENDPOINTS_PER_SUBSET as DEFAULT_MAX_ENDPOINTS_PER_SUBSET
from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import MAX_RETRIES as MAX_RETRIES
from ._controller import EndpointSliceMirroringController as EndpointSliceMirroringController
from ._controller import should_mirror as should_mirror
from ._desired import CONTROLLER_NAME as CONTROLLER_NAME
from ._desired import address_type as address_type
from ._reconciler import MirrorPlan as MirrorPlan
from ._reconciler import plan_mirror as plan_mirror

NAME = "endpointslicemirroring"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    max_endpoints_per_subset: int = DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
    batch_period: float = 0.0,
) -> None:
    """Build the mirroring controller from the manager's client, factory, clock and registry
    (events as ``endpoint-slice-mirroring-controller``, kube's name) and add it
    (leader-elected)."""
    add_controller(
        manager,
        NAME,
        EndpointSliceMirroringController,
        workers=workers,
        event_source="endpoint-slice-mirroring-controller",
        max_endpoints_per_subset=max_endpoints_per_subset,
        batch_period=batch_period,
    )


__all__ = [
    "CONTROLLER_NAME",
    "DEFAULT_MAX_ENDPOINTS_PER_SUBSET",
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_RETRIES",
    "NAME",
    "EndpointSliceMirroringController",
    "MirrorPlan",
    "add_to_manager",
    "address_type",
    "plan_mirror",
    "should_mirror",
]
