"""Which EndpointSlice generations a controller wrote, to tell its own writes from others'.

A slice controller writes slices and then sees its writes come back through the informer.
It must neither react to them (its own update is not news) nor act on a cache that does not
show them yet (it would write from stale state and fight itself). Go's
``EndpointSliceTracker`` remembers, per Service, the generation of each slice it wrote (or
that it expects the slice to be deleted): an informer event for a slice at a newer generation
is someone else's change, and a sync whose cached slices are older than the tracked ones
stops with :class:`StaleInformerCache` and is retried.
"""

from __future__ import annotations

from collections.abc import Iterable

from kcm.errors import Conflict
from kcm.models import ObjectKey
from kcm.models.discovery_v1 import EndpointSlice

from ._endpoint_slices import SERVICE_NAME_LABEL

__all__ = ["EndpointSliceTracker", "StaleInformerCache"]

_DELETION_EXPECTED = -1


class StaleInformerCache(Conflict):
    """The EndpointSlice cache is older than this controller's own writes; retry later (a
    :class:`~kcm.errors.Conflict` with the cache rather than the server: the runtime retries
    it and logs it without a traceback)."""

    def __init__(self, message: str = "EndpointSlice informer cache is out of date") -> None:
        super().__init__(message, code=409, reason="Conflict")


def _service_key(endpoint_slice: EndpointSlice) -> ObjectKey:
    labels = endpoint_slice.metadata.labels or {}
    return ObjectKey(endpoint_slice.metadata.namespace or "", labels.get(SERVICE_NAME_LABEL, ""))


def _generation(endpoint_slice: EndpointSlice) -> int:
    return endpoint_slice.metadata.generation or 0


class EndpointSliceTracker:
    """Expected generations of EndpointSlices by Service and slice UID (synchronous: informer
    handlers and syncs call it without awaiting)."""

    def __init__(self) -> None:
        self._by_service: dict[ObjectKey, dict[str, int]] = {}

    def __repr__(self) -> str:
        return f"<EndpointSliceTracker services={len(self._by_service)}>"

    def has(self, endpoint_slice: EndpointSlice) -> bool:
        """The tracker holds a generation (or an expected deletion) for this slice."""
        uids = self._by_service.get(_service_key(endpoint_slice))
        return uids is not None and (endpoint_slice.metadata.uid or "") in uids

    def should_sync(self, endpoint_slice: EndpointSlice) -> bool:
        """An informer event for this slice is news: the slice is untracked, or newer than the
        generation this controller wrote."""
        uids = self._by_service.get(_service_key(endpoint_slice))
        if uids is None:
            return True
        expected = uids.get(endpoint_slice.metadata.uid or "")
        return expected is None or _generation(endpoint_slice) > expected

    def stale_slices(self, service: ObjectKey, endpoint_slices: Iterable[EndpointSlice]) -> bool:
        """The cached ``endpoint_slices`` of ``service`` do not yet show this controller's
        writes: one is older than tracked or expected to be deleted, or a tracked slice is
        missing."""
        uids = self._by_service.get(service)
        if uids is None:
            return False
        provided = set()
        for endpoint_slice in endpoint_slices:
            uid = endpoint_slice.metadata.uid or ""
            provided.add(uid)
            expected = uids.get(uid)
            if expected is not None and (
                expected == _DELETION_EXPECTED or expected > _generation(endpoint_slice)
            ):
                return True
        return any(
            generation != _DELETION_EXPECTED and uid not in provided
            for uid, generation in uids.items()
        )

    def update(self, endpoint_slice: EndpointSlice) -> None:
        """Remember a slice this controller just created or updated (the server's answer)."""
        uids = self._by_service.setdefault(_service_key(endpoint_slice), {})
        uids[endpoint_slice.metadata.uid or ""] = _generation(endpoint_slice)

    def expect_deletion(self, endpoint_slice: EndpointSlice) -> None:
        """Remember that this controller just deleted a slice."""
        uids = self._by_service.setdefault(_service_key(endpoint_slice), {})
        uids[endpoint_slice.metadata.uid or ""] = _DELETION_EXPECTED

    def handle_deletion(self, endpoint_slice: EndpointSlice) -> bool:
        """A slice was deleted: forget it. True if this controller expected that (or did not
        track it), False if someone else deleted a slice it wrote."""
        uids = self._by_service.get(_service_key(endpoint_slice))
        if uids is None:
            return True
        expected = uids.pop(endpoint_slice.metadata.uid or "", None)
        return expected is None or expected == _DELETION_EXPECTED

    def delete_service(self, service: ObjectKey) -> None:
        """Forget everything about a Service."""
        self._by_service.pop(service, None)
