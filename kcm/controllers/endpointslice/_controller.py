"""The EndpointSlice controller: discovery.k8s.io/v1 EndpointSlices for every Service with a
selector, as kube-controller-manager's ``endpointslice`` (§7).

Watches Services (sync now), Pods (the Services concerned, after the batch period), Nodes
(read for zones and existence) and EndpointSlices: a change to one of its slices that it did
not write itself (a newer generation, a deletion it did not expect, a changed managed-by or
service-name label) syncs the Service again after at least one second, so hand edits are
repaired. Slices of a deleted Service are left to the garbage collector (owner reference).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import anyio
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    MANAGED_BY_LABEL,
    MAX_SYNC_RETRIES,
    SERVICE_NAME_LABEL,
    EndpointSliceEvents,
    EndpointSliceTracker,
    ServicePodEvents,
    StaleSliceSyncs,
    TriggerTimeTracker,
    endpoint_slice_rate_limiter,
    service_key_for_slice,
    service_selector,
    sync_with_retry_limit,
)
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey
from kcm.models.core_v1 import Node, Pod, Service
from kcm.models.discovery_v1 import EndpointSlice
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result, enqueue_object

from ._endpoints import CONTROLLER_NAME
from ._reconciler import SliceReconciler

__all__ = [
    "DEFAULT_MAX_ENDPOINTS_PER_SLICE",
    "DEFAULT_WORKERS",
    "MAX_RETRIES",
    "EndpointSliceController",
]

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 5
"""``--concurrent-service-endpoint-syncs``."""
DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100
"""``--max-endpoints-per-slice``."""
MAX_RETRIES = MAX_SYNC_RETRIES
"""A Service whose sync keeps failing is dropped after this many retries."""
SLICE_CHANGE_MIN_SYNC_DELAY = 1.0
"""A slice change syncs its Service no sooner than this (batches changes to several
slices)."""


class _NodeEvents:
    """Nodes are only read (zones, existence): no node event syncs a Service (kube: only
    with topology hints, which kcm does not implement)."""

    def create_keys(self, obj: Node, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return ()

    def update_keys(self, old: Node, new: Node) -> Iterable[ObjectKey]:
        return ()

    def delete_keys(self, obj: Node, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return ()


class EndpointSliceController:
    """Keeps the EndpointSlices of every Service with a selector (kube-controller-manager's
    ``endpointslice`` controller).

    Args:
        client: the API client slices are written with.
        factory: where the Service, Pod, Node and EndpointSlice informers come from.
        recorder: receives ``FailedToUpdateEndpointSlices`` warnings (on the Service).
        clock: the work queue's clock (batching, the slice-change delay, retries).
        workers: concurrent Service syncs (``--concurrent-service-endpoint-syncs``, 5).
        registry: Prometheus registry for the runtime's controller and queue metrics.
        max_endpoints_per_slice: ``--max-endpoints-per-slice`` (100; 1 to 1000).
        batch_period: seconds a pod change waits before its Services are synced
            (``--endpointslice-updates-batch-period``, 0).

    Guarantees:
        * Only slices labelled ``endpointslice.kubernetes.io/managed-by:
          endpointslice-controller.k8s.io`` and ``kubernetes.io/service-name: <service>`` are
          touched; Services without a selector get none.
        * No sync acts on a slice cache that does not yet show this controller's own writes
          (:class:`~kcm.controllerkit.EndpointSliceTracker`); such a sync fails with
          :class:`~kcm.controllerkit.StaleInformerCache` and runs again as soon as the cache
          moves (kube: after the 1 s backoff).
        * A sync that keeps failing is retried (1 s doubling to 100 s) and dropped after
          :data:`MAX_RETRIES` failures.

    Raises:
        ValueError: ``max_endpoints_per_slice`` is not between 1 and 1000.
    """

    def __init__(
        self,
        client: ApiClient,
        factory: SharedInformerFactory,
        *,
        recorder: EventRecorder,
        clock: Clock = SYSTEM_CLOCK,
        workers: int = DEFAULT_WORKERS,
        registry: CollectorRegistry | None = None,
        max_endpoints_per_slice: int = DEFAULT_MAX_ENDPOINTS_PER_SLICE,
        batch_period: float = 0.0,
    ) -> None:
        if not 1 <= max_endpoints_per_slice <= 1000:
            raise ValueError(
                f"max_endpoints_per_slice must be between 1 and 1000, got {max_endpoints_per_slice}"
            )
        self._recorder = recorder
        self.batch_period = batch_period
        self.tracker = EndpointSliceTracker()
        self.triggers = TriggerTimeTracker()
        self.stale = StaleSliceSyncs(lambda key: self.controller.queue.add(key))
        service_informer = factory.informer_for(Service)
        pod_informer = factory.informer_for(Pod)
        node_informer = factory.informer_for(Node)
        slice_informer = factory.informer_for(EndpointSlice)
        self.services = service_informer.lister()
        self.pods = pod_informer.lister()
        self.nodes = node_informer.lister()
        self.slices = slice_informer.lister()
        self.reconciler = SliceReconciler(
            client,
            get_node=lambda name: self.nodes.get_or_none(None, name) if name else None,
            tracker=self.tracker,
            max_endpoints=max_endpoints_per_slice,
        )
        self.controller: Controller[ObjectKey] = Controller(
            "endpoint_slice",  # Go's work queue name
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=endpoint_slice_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(service_informer, enqueue_object(), kind="Service")
        pod_events = ServicePodEvents(self.services, self.controller.queue.add_after, batch_period)
        self.controller.watch(pod_informer, pod_events, kind="Pod")
        slice_events = EndpointSliceEvents(
            CONTROLLER_NAME, self.tracker, self.stale, self.queue_for_slice
        )
        self.controller.watch(slice_informer, slice_events, kind="EndpointSlice")
        self.controller.watch(node_informer, _NodeEvents(), kind="Node")

    def __repr__(self) -> str:
        return f"<EndpointSliceController workers={self.controller.max_concurrent_reconciles}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync Services until cancelled; ``task_status.started()`` once the caches synced."""
        await self.controller.run(task_status=task_status)

    # -- slice events (synchronous) ------------------------------------------------------------

    def queue_for_slice(self, endpoint_slice: EndpointSlice) -> None:
        """Sync the slice's Service after max(1 s, batch period)."""
        key = service_key_for_slice(endpoint_slice)
        if key is not None:
            delay = max(SLICE_CHANGE_MIN_SYNC_DELAY, self.batch_period)
            self.controller.queue.add_after(key, delay)

    # -- sync ----------------------------------------------------------------------------------

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sync the slices of one Service key. A failure (a failed write, or
        :class:`~kcm.controllerkit.StaleInformerCache` while the slice cache lags our writes)
        is retried with backoff, and dropped as a ``TerminalError`` after :data:`MAX_RETRIES`
        in a row."""
        queue = self.controller.queue
        return await sync_with_retry_limit(
            self._sync, request, num_requeues=queue.num_requeues, what="service"
        )

    async def _sync(self, key: ObjectKey) -> None:
        self.stale.starting(key)
        service = self.services.namespace(key.namespace).get_or_none(key.name)
        if service is None:
            self.triggers.delete_service(key)
            self.tracker.delete_service(key)
            return  # the garbage collector deletes its slices (owner reference)
        selector = service_selector(service)
        if selector is None:
            return  # hand-written Endpoints; endpointslicemirroring mirrors them
        pods = self.pods.namespace(key.namespace).list(selector)
        existing = self.slices.namespace(key.namespace).list(
            {SERVICE_NAME_LABEL: key.name, MANAGED_BY_LABEL: CONTROLLER_NAME}
        )
        if self.tracker.stale_slices(key, existing):
            raise self.stale.stale(key)
        trigger = self.triggers.compute(service, pods)
        try:
            await self.reconciler.reconcile(service, pods, existing, trigger)
        except Exception as exc:
            self._recorder.event(
                service,
                "Warning",
                "FailedToUpdateEndpointSlices",
                f"Error updating Endpoint Slices for Service {key.namespace}/{key.name}: {exc}",
            )
            raise
