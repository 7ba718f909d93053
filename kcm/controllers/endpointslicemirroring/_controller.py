"""The EndpointSlice mirroring controller: hand-written Endpoints of Services without a
selector, mirrored into EndpointSlices (kube-controller-manager's ``endpointslicemirroring``).

Watches Endpoints (those to mirror: not labelled ``endpointslice.kubernetes.io/skip-mirror:
"true"``, not leader-election locks), Services (a selector appearing or going) and
EndpointSlices managed by ``endpointslicemirroring-controller.k8s.io`` (changes it did not
make itself sync their Endpoints again, after the batch period). An Endpoints object is
mirrored only while a Service of the same name without a selector exists; otherwise its
mirrored slices are deleted.
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
    LEADER_ELECTION_ANNOTATION,
    MANAGED_BY_LABEL,
    MAX_SYNC_RETRIES,
    SERVICE_NAME_LABEL,
    SKIP_MIRROR_LABEL,
    EndpointSliceEvents,
    EndpointSliceTracker,
    StaleSliceSyncs,
    endpoint_slice_rate_limiter,
    service_key_for_slice,
    service_selector,
    sync_with_retry_limit,
)
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import Endpoints, Service
from kcm.models.discovery_v1 import EndpointSlice
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result

from ._desired import CONTROLLER_NAME
from ._reconciler import MirrorReconciler

__all__ = [
    "DEFAULT_MAX_ENDPOINTS_PER_SUBSET",
    "DEFAULT_WORKERS",
    "MAX_RETRIES",
    "EndpointSliceMirroringController",
    "should_mirror",
]

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 5
"""``--mirroring-concurrent-service-endpoint-syncs``."""
DEFAULT_MAX_ENDPOINTS_PER_SUBSET = 1000
"""``--mirroring-max-endpoints-per-subset``."""
MAX_RETRIES = MAX_SYNC_RETRIES
"""An Endpoints object whose sync keeps failing is dropped after this many retries."""


def should_mirror(endpoints: Endpoints) -> bool:
    """Not labelled skip-mirror ``"true"`` and not a leader-election lock (whether a
    selector-less Service of that name exists is checked separately)."""
    labels = endpoints.metadata.labels or {}
    annotations = endpoints.metadata.annotations or {}
    return labels.get(SKIP_MIRROR_LABEL) != "true" and LEADER_ELECTION_ANNOTATION not in annotations


def _without_selector(service: Service) -> bool:
    return service_selector(service) is None


class _EndpointsEvents:
    def create_keys(self, obj: Endpoints, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if should_mirror(obj) else ()

    def update_keys(self, old: Endpoints, new: Endpoints) -> Iterable[ObjectKey]:
        return (object_key(new),) if should_mirror(old) or should_mirror(new) else ()

    def delete_keys(self, obj: Endpoints, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if should_mirror(obj) else ()


class _ServiceEvents:
    def create_keys(self, obj: Service, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if _without_selector(obj) else ()

    def update_keys(self, old: Service, new: Service) -> Iterable[ObjectKey]:
        return (object_key(new),) if _without_selector(old) != _without_selector(new) else ()

    def delete_keys(self, obj: Service, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        return (object_key(obj),) if _without_selector(obj) else ()


class EndpointSliceMirroringController:
    """Mirrors the Endpoints of selector-less Services into EndpointSlices
    (kube-controller-manager's ``endpointslicemirroring`` controller).

    Args:
        client: the API client slices are written with.
        factory: where the Endpoints, EndpointSlice and Service informers come from.
        recorder: receives ``InvalidIPAddress`` / ``TooManyAddressesToMirror`` warnings (on
            the Endpoints).
        clock: the work queue's clock (batching, retries).
        workers: concurrent syncs (``--mirroring-concurrent-service-endpoint-syncs``, 5).
        registry: Prometheus registry for the runtime's controller and queue metrics.
        max_endpoints_per_subset: ``--mirroring-max-endpoints-per-subset`` (1000; 1 to
            1000): addresses of one Endpoints subset beyond it are not mirrored.
        batch_period: seconds a slice change waits before its Endpoints is synced again
            (``--mirroring-endpointslice-updates-batch-period``, 0).

    Guarantees:
        * Only slices labelled ``endpointslice.kubernetes.io/managed-by:
          endpointslicemirroring-controller.k8s.io`` are written or deleted.
        * Endpoints are never written.
        * No sync acts on a slice cache that does not yet show this controller's own writes.

    Raises:
        ValueError: ``max_endpoints_per_subset`` is not between 1 and 1000.
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
        max_endpoints_per_subset: int = DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
        batch_period: float = 0.0,
    ) -> None:
        if not 1 <= max_endpoints_per_subset <= 1000:
            raise ValueError(
                "max_endpoints_per_subset must be between 1 and 1000, "
                f"got {max_endpoints_per_subset}"
            )
        self.batch_period = batch_period
        self.tracker = EndpointSliceTracker()
        self.stale = StaleSliceSyncs(lambda key: self.controller.queue.add(key))
        endpoints_informer = factory.informer_for(Endpoints)
        slice_informer = factory.informer_for(EndpointSlice)
        service_informer = factory.informer_for(Service)
        self.endpoints = endpoints_informer.lister()
        self.slices = slice_informer.lister()
        self.services = service_informer.lister()
        self.reconciler = MirrorReconciler(
            client,
            tracker=self.tracker,
            recorder=recorder,
            max_per_subset=max_endpoints_per_subset,
        )
        self.controller: Controller[ObjectKey] = Controller(
            "endpoint_slice_mirroring",  # Go's work queue name
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=endpoint_slice_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(endpoints_informer, _EndpointsEvents(), kind="Endpoints")
        slice_events = EndpointSliceEvents(
            CONTROLLER_NAME, self.tracker, self.stale, self.queue_for_slice
        )
        self.controller.watch(slice_informer, slice_events, kind="EndpointSlice")
        self.controller.watch(service_informer, _ServiceEvents(), kind="Service")

    def __repr__(self) -> str:
        workers = self.controller.max_concurrent_reconciles
        return f"<EndpointSliceMirroringController workers={workers}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Mirror until cancelled; ``task_status.started()`` once the caches synced."""
        await self.controller.run(task_status=task_status)

    def queue_for_slice(self, endpoint_slice: EndpointSlice) -> None:
        """Sync the slice's Endpoints after the batch period."""
        key = service_key_for_slice(endpoint_slice)
        if key is not None:
            self.controller.queue.add_after(key, self.batch_period)

    async def reconcile(self, request: ObjectKey) -> Result:
        """Mirror one Endpoints key (or clean up after it); failures (a stale slice cache, a
        failed write) are retried with backoff until :data:`MAX_RETRIES`, then dropped."""
        queue = self.controller.queue
        return await sync_with_retry_limit(
            self._sync, request, num_requeues=queue.num_requeues, what="Endpoints"
        )

    def _mirrored(self, key: ObjectKey) -> list[EndpointSlice]:
        return self.slices.namespace(key.namespace).list(
            {SERVICE_NAME_LABEL: key.name, MANAGED_BY_LABEL: CONTROLLER_NAME}
        )

    async def _sync(self, key: ObjectKey) -> None:
        self.stale.starting(key)
        endpoints = self.endpoints.namespace(key.namespace).get_or_none(key.name)
        service = self.services.namespace(key.namespace).get_or_none(key.name)
        if (
            endpoints is None
            or not should_mirror(endpoints)
            or service is None
            or not _without_selector(service)
        ):
            self.tracker.delete_service(key)
            await self.reconciler.delete_all(key.namespace, self._mirrored(key))
            return
        existing = self._mirrored(key)
        if self.tracker.stale_slices(key, existing):
            raise self.stale.stale(key)
        await self.reconciler.reconcile(endpoints, existing)
