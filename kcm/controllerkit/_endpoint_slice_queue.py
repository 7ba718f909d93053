"""What feeds and paces the queue of an EndpointSlice writer: the slice event handler and the
rate limiter the EndpointSlice and EndpointSlice mirroring controllers share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import final

from kcm.clock import SYSTEM_CLOCK, Clock
from kcm.models import ObjectKey
from kcm.models.discovery_v1 import EndpointSlice
from kcm.workqueue import BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter

from ._endpoint_slice_tracker import EndpointSliceTracker
from ._endpoint_slices import SERVICE_NAME_LABEL, managed_by
from ._stale_slice_syncs import StaleSliceSyncs

__all__ = ["EndpointSliceEvents", "endpoint_slice_rate_limiter"]


def endpoint_slice_rate_limiter(*, clock: Clock = SYSTEM_CLOCK) -> MaxOfRateLimiter:
    """1 s doubling to 100 s per key, and 10 retries per second (burst 100) overall: slice
    syncs can be large, so they back off harder than the default controller limiter."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(1.0, 100.0, clock=clock),
        BucketRateLimiter(10.0, 100, clock=clock),
    )


def _service_name(endpoint_slice: EndpointSlice) -> str | None:
    return (endpoint_slice.metadata.labels or {}).get(SERVICE_NAME_LABEL)


@final
class EndpointSliceEvents:
    """The EndpointSlice handler of a slice writer: a change to one of its slices that it did
    not make itself (a newer generation than it wrote, a deletion it did not expect, a changed
    managed-by or service-name label) calls ``queue_for_slice``, so hand edits are repaired.
    Every event first tells ``stale`` that the cache moved. It maps no keys itself: the caller
    chooses the delay in ``queue_for_slice``.

    Args:
        controller_name: the ``endpointslice.kubernetes.io/managed-by`` value of its slices.
        tracker: the generations it wrote.
        stale: its syncs waiting for the cache.
        queue_for_slice: queues the slice's Service (or Endpoints) key.
    """

    def __init__(
        self,
        controller_name: str,
        tracker: EndpointSliceTracker,
        stale: StaleSliceSyncs,
        queue_for_slice: Callable[[EndpointSlice], None],
    ) -> None:
        self._controller_name = controller_name
        self._tracker = tracker
        self._stale = stale
        self._queue_for_slice = queue_for_slice

    def __repr__(self) -> str:
        return f"<EndpointSliceEvents {self._controller_name}>"

    def _ours(self, endpoint_slice: EndpointSlice) -> bool:
        return managed_by(endpoint_slice) == self._controller_name

    def create_keys(self, obj: EndpointSlice, *, is_in_initial_list: bool) -> Iterable[ObjectKey]:
        self._stale.cache_moved(obj)
        if self._ours(obj) and self._tracker.should_sync(obj):
            self._queue_for_slice(obj)
        return ()

    def update_keys(self, old: EndpointSlice, new: EndpointSlice) -> Iterable[ObjectKey]:
        self._stale.cache_moved(new)
        if _service_name(old) != _service_name(new):
            self._queue_for_slice(new)
            self._queue_for_slice(old)
        elif self._ours(old) != self._ours(new) or (
            self._ours(new) and self._tracker.should_sync(new)
        ):
            self._queue_for_slice(new)
        return ()

    def delete_keys(self, obj: EndpointSlice, *, final_state_unknown: bool) -> Iterable[ObjectKey]:
        self._stale.cache_moved(obj)
        tracker = self._tracker
        if self._ours(obj) and tracker.has(obj) and not tracker.handle_deletion(obj):
            self._queue_for_slice(obj)
        return ()
