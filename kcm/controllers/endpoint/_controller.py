"""The Endpoints controller: one Endpoints object per Service with a selector, listing the
addresses and ports of the pods it selects, as kube-controller-manager's ``endpoint`` (§6).

Watches Services (add/update/delete: sync now), Pods (the Services selecting the pod before
and after a relevant change: sync after the batch period) and Endpoints (a deleted one is
re-created; at start every Endpoints is synced once, so those of vanished Services go).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import anyio
import msgspec
from anyio.abc import TaskStatus
from prometheus_client import CollectorRegistry

from kcm.client import ApiClient
from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.controllerkit import (
    HEADLESS_SERVICE_LABEL,
    LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
    LEADER_ELECTION_ANNOTATION,
    MAX_SYNC_RETRIES,
    ServicePodEvents,
    TriggerTimeTracker,
    format_trigger_time,
    is_namespace_terminating,
    service_ip_set,
    service_selector,
    sync_with_retry_limit,
)
from kcm.errors import KcmError, NotFound
from kcm.informers import SharedInformerFactory
from kcm.models import ObjectKey, object_key
from kcm.models.core_v1 import Endpoints, EndpointSubset, Pod, Service
from kcm.models.meta_v1 import ObjectMeta
from kcm.record import EventRecorder
from kcm.runtime import Controller, Result, enqueue_object
from kcm.workqueue import default_controller_rate_limiter

from ._subsets import (
    OVER_CAPACITY_ANNOTATION,
    capacity_annotation_set_correctly,
    desired_subsets,
    tolerate_unready,
    truncate_subsets,
)

__all__ = ["DEFAULT_WORKERS", "MAX_RETRIES", "EndpointController"]

logger = logging.getLogger(__name__)

DEFAULT_WORKERS = 5
"""``--concurrent-endpoint-syncs``."""
MAX_RETRIES = MAX_SYNC_RETRIES
"""A Service whose sync keeps failing is dropped after this many retries (until its next
event)."""


class _EndpointsEvents:
    """A deleted Endpoints is synced (re-created if its Service wants one); the initial list
    is synced once, so Endpoints whose Service went while no controller ran are deleted
    (``checkLeftoverEndpoints``). Leader-election locks are left alone."""

    def __init__(self, owner: EndpointController) -> None:
        self._owner = owner

    def create_keys(self, obj: Endpoints, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        if not is_in_initial_list:
            return ()
        if LEADER_ELECTION_ANNOTATION in (obj.metadata.annotations or {}):
            return ()
        return (object_key(obj),)

    def update_keys(self, old: Endpoints, new: Endpoints) -> Iterable[ObjectKey]:
        return ()

    def delete_keys(self, obj: Endpoints, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        key = object_key(obj)
        self._owner.forget_write(key)
        return (key,)


def _same_subsets(current: Any, desired: list[EndpointSubset]) -> bool:
    return list(current or ()) == desired  # None and [] are the same (Go: Semantic.DeepEqual)


def _labels_for(service: Service) -> dict[str, str]:
    labels = dict(service.metadata.labels or {})
    if service_ip_set(service):
        labels.pop(HEADLESS_SERVICE_LABEL, None)
    else:
        labels[HEADLESS_SERVICE_LABEL] = ""
    return labels


class EndpointController:
    """Keeps an Endpoints object per selecting Service (kube-controller-manager's
    ``endpoint`` controller).

    Args:
        client: the API client Endpoints are written with.
        factory: where the Service, Pod and Endpoints informers come from; run it alongside.
        recorder: receives ``FailedToCreateEndpoint`` / ``FailedToUpdateEndpoint`` warnings
            (on the Endpoints).
        clock: the work queue's clock (the batch period and retries run on it).
        workers: concurrent Service syncs (``--concurrent-endpoint-syncs``, 5).
        registry: Prometheus registry for the runtime's controller and queue metrics.
        batch_period: seconds a pod change waits before its Services are synced, so that
            several changes make one write (``--endpoint-updates-batch-period``, 0).

    Guarantees:
        * Endpoints of Services without a selector are never written or deleted.
        * Nothing is written when the subsets, the labels and the capacity annotation already
          agree with the Service and its pods.
        * A sync that keeps failing is retried with the default controller backoff and
          dropped after :data:`MAX_RETRIES` failures.
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
        batch_period: float = 0.0,
    ) -> None:
        self._client = client
        self._recorder = recorder
        self.batch_period = batch_period
        self.triggers = TriggerTimeTracker()
        service_informer = factory.informer_for(Service)
        pod_informer = factory.informer_for(Pod)
        endpoints_informer = factory.informer_for(Endpoints)
        self.services = service_informer.lister()
        self.pods = pod_informer.lister()
        self.endpoints = endpoints_informer.lister()
        self._written: dict[ObjectKey, tuple[str, Endpoints]] = {}
        """Per Service: the resourceVersion our last write replaced ("" for a create) and what
        the server returned, until the Endpoints cache shows it."""
        self.controller: Controller[ObjectKey] = Controller(
            "endpoint",
            self,
            max_concurrent_reconciles=workers,
            rate_limiter=default_controller_rate_limiter(clock=clock),
            clock=clock,
            metrics=registry,
        )
        self.controller.watch(service_informer, enqueue_object(), kind="Service")
        pod_events = ServicePodEvents(self.services, self.controller.queue.add_after, batch_period)
        self.controller.watch(pod_informer, pod_events, kind="Pod")
        self.controller.watch(endpoints_informer, _EndpointsEvents(self), kind="Endpoints")

    def __repr__(self) -> str:
        return f"<EndpointController workers={self.controller.max_concurrent_reconciles}>"

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Sync Services until cancelled; ``task_status.started()`` once the caches synced."""
        await self.controller.run(task_status=task_status)

    def forget_write(self, key: ObjectKey) -> None:
        """Drop the record of our last write of ``key``'s Endpoints."""
        self._written.pop(key, None)

    def _current(self, key: ObjectKey) -> Endpoints | None:
        """The Endpoints as of our own last write while the cache does not show it yet (a
        sync right after a write would otherwise create twice or update a stale copy and get
        409; Go's controller just retries), else as cached."""
        cached = self.endpoints.namespace(key.namespace).get_or_none(key.name)
        record = self._written.get(key)
        if record is None:
            return cached
        replaced, written = record
        if (cached is None and not replaced) or (
            cached is not None and cached.metadata.resource_version == replaced
        ):
            return written
        del self._written[key]
        return cached

    async def reconcile(self, request: ObjectKey) -> Result:
        """Sync the Endpoints of one Service key; a failed write is retried with backoff, and
        the key dropped (``TerminalError``) after :data:`MAX_RETRIES` failures in a row."""
        queue = self.controller.queue
        return await sync_with_retry_limit(
            self._sync, request, num_requeues=queue.num_requeues, what="service"
        )

    async def _sync(self, key: ObjectKey) -> None:
        api = self._client.api(Endpoints, key.namespace)
        service = self.services.namespace(key.namespace).get_or_none(key.name)
        if service is None:
            try:
                await api.delete(key.name)
            except NotFound:
                pass
            self.triggers.delete_service(key)
            self.forget_write(key)
            return
        selector = service_selector(service)
        if selector is None:
            return  # its Endpoints are written by hand (and mirrored by endpointslicemirroring)
        pods = self.pods.namespace(key.namespace).list(selector)
        tolerate = tolerate_unready(service)
        # computed even when nothing is written, so the tracker sees every sync
        trigger = self.triggers.compute(service, pods)
        subsets = desired_subsets(service, pods, tolerate_unready=tolerate)
        current = self._current(key)
        labels = dict(service.metadata.labels or {})
        if current is not None:
            current_labels = dict(current.metadata.labels or {})
            current_labels.pop(HEADLESS_SERVICE_LABEL, None)
            if (
                _same_subsets(current.subsets, subsets)
                and current_labels == labels
                and capacity_annotation_set_correctly(current.metadata.annotations, current.subsets)
            ):
                return
        annotations = dict((current.metadata.annotations if current else None) or {})
        if trigger is not None:
            annotations[LAST_CHANGE_TRIGGER_TIME_ANNOTATION] = format_trigger_time(trigger)
        else:
            annotations.pop(LAST_CHANGE_TRIGGER_TIME_ANNOTATION, None)
        subsets, truncated = truncate_subsets(subsets)
        if truncated:
            annotations[OVER_CAPACITY_ANNOTATION] = "truncated"
        else:
            annotations.pop(OVER_CAPACITY_ANNOTATION, None)
        await self._write(service, current, subsets, _labels_for(service), annotations)

    async def _write(
        self,
        service: Service,
        current: Endpoints | None,
        subsets: list[EndpointSubset],
        labels: dict[str, str],
        annotations: dict[str, str],
    ) -> None:
        namespace, name = service.metadata.namespace or "", service.metadata.name or ""
        api = self._client.api(Endpoints, namespace)
        if current is None:
            new = Endpoints(
                metadata=ObjectMeta(
                    name=name,
                    namespace=namespace,
                    labels=labels or None,
                    annotations=annotations or None,
                ),
                subsets=subsets or None,
            )
        else:
            meta = msgspec.structs.replace(
                current.metadata, labels=labels or None, annotations=annotations or None
            )
            new = msgspec.structs.replace(current, metadata=meta, subsets=subsets or None)
        logger.debug(
            "endpoints %s/%s: %d ready, %d not ready",
            namespace,
            name,
            sum(len(s.addresses or ()) for s in subsets),
            sum(len(s.not_ready_addresses or ()) for s in subsets),
        )
        key = ObjectKey(namespace, name)
        self.forget_write(key)
        try:
            if current is None:
                written = await api.create(new)
            else:
                written = await api.update(current, new)
        except KcmError as exc:
            if current is None and is_namespace_terminating(exc):
                return  # every create would fail; the namespace controller cleans up
            if current is None:
                self._recorder.event(
                    new,
                    "Warning",
                    "FailedToCreateEndpoint",
                    f"Failed to create endpoint for service {namespace}/{name}: {exc}",
                )
            else:
                self._recorder.event(
                    new,
                    "Warning",
                    "FailedToUpdateEndpoint",
                    f"Failed to update endpoint {namespace}/{name}: {exc}",
                )
            raise
        if written is not new:  # update() sends nothing when nothing changed
            replaced = current.metadata.resource_version if current is not None else ""
            self._written[key] = (replaced or "", written)
