"""The EndpointSlice controller: discovery.k8s.io/v1 EndpointSlices for every Service with a
selector, per address family, at most ``--max-endpoints-per-slice`` endpoints each,
as kube-controller-manager's ``endpointslice`` does (§7).

See docs/controllers.md#endpointslice.
"""

from __future__ import annotations

from kcm.controllers import CONTROLLERS, add_controller
from kcm.runtime import Manager

from ._controller import DEFAULT_MAX_ENDPOINTS_PER_SLICE as DEFAULT_MAX_ENDPOINTS_PER_SLICE
from ._controller import DEFAULT_WORKERS as DEFAULT_WORKERS
from ._controller import MAX_RETRIES as MAX_RETRIES
from ._controller import EndpointSliceController as EndpointSliceController
from ._endpoints import CONTROLLER_NAME as CONTROLLER_NAME
from ._endpoints import address_types as address_types
from ._endpoints import pod_to_endpoint as pod_to_endpoint
from ._reconciler import NodeNotFound as NodeNotFound
from ._reconciler import SlicePlan as SlicePlan
from ._reconciler import plan_address_type as plan_address_type

NAME = "endpointslice"
"""kube-controller-manager's name for this controller."""

HELP = CONTROLLERS[NAME].help
"""One line for ``kcm --help`` (the registry's)."""


def add_to_manager(
    manager: Manager,
    *,
    workers: int = DEFAULT_WORKERS,
    max_endpoints_per_slice: int = DEFAULT_MAX_ENDPOINTS_PER_SLICE,
    batch_period: float = 0.0,
) -> None:
    """Build the EndpointSlice controller from the manager's client, factory, clock and
    registry (events as ``endpoint-slice-controller``, kube's name) and add it
    (leader-elected)."""
    add_controller(
        manager,
        NAME,
        EndpointSliceController,
        workers=workers,
        event_source="endpoint-slice-controller",
        max_endpoints_per_slice=max_endpoints_per_slice,
        batch_period=batch_period,
    )


__all__ = [
    "CONTROLLER_NAME",
    "DEFAULT_MAX_ENDPOINTS_PER_SLICE",
    "DEFAULT_WORKERS",
    "HELP",
    "MAX_RETRIES",
    "NAME",
    "EndpointSliceController",
    "NodeNotFound",
    "SlicePlan",
    "add_to_manager",
    "address_types",
    "plan_address_type",
    "pod_to_endpoint",
]
